#!/usr/bin/env bash
# Builds, here, everything a GPU run needs and puts it in .device-bundle/ (git-ignored, so
# it travels only when named in the device tool's `carry`):
#   bin/spmv            the release CLI (and bin/brcp_errors, an example program;
#                       bin/spmv-old, the previous CLI, when SPMV_OLD names it)
#   tests/<name>        the test binaries with GPU tests (cargo test --release --no-run)
#   matrices/           the real matrices of ../shared/matrices (the device has no ../shared)
#   bin/anchors/        ../shared/anchors/*.tsv and the real matrices they list
# Then, on the device: scripts/device-run.sh (tests + benchmark, summary last).
# Binaries are stripped so the bundle stays well inside the 64 MiB a call may carry.
set -euo pipefail
cd "$(dirname "$0")/.."
out=.device-bundle
rm -rf "$out"
mkdir -p "$out/bin" "$out/tests" "$out/matrices"

cargo build --release -p spmv-cli
cp target/release/spmv "$out/bin/"
# The previous binary, for a same-run comparison (SPMV_OLD=path/to/old/spmv).
if [ -n "${SPMV_OLD:-}" ]; then cp "$SPMV_OLD" "$out/bin/spmv-old"; fi
# Example programs that device runs use (the BRCP paper's error experiment).
cargo build --release -p spmv --example brcp_errors
cp target/release/examples/brcp_errors "$out/bin/"
cargo test --workspace --release --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    try: msg = json.loads(line)
    except ValueError: continue
    if msg.get("reason") == "compiler-artifact" and msg.get("executable") and msg["profile"]["test"]:
        # Unit tests of a lib or bin are named after the crate target plus its kind
        # (spmv-lib, spmv-bin); integration tests keep their file name (gpu, cli ...).
        target = msg["target"]
        kind = target["kind"][0]
        name = target["name"] if kind == "test" else target["name"] + "-" + kind
        print(msg["executable"], name)
' | while read -r exe name; do
    # Test binaries without GPU tests run in CI; leaving them out keeps the bundle small.
    case "$name" in cli | gen | mtx | pagerank_cli | hostile | kernels_sass | spmv-bin | diagonal_cpu | formats_cpu | spmv_fuzz-lib) continue ;; esac
    cp "$exe" "$out/tests/$name"
done
strip "$out"/bin/* "$out"/tests/*
shared="${SPMV_SHARED:-../shared}/matrices"
cp "$shared"/*.mtx.gz "$out/matrices/"
# The anchors (other codes' figures) and their real matrices, for scripts/dasp-bench.sh.
anchors="${SPMV_SHARED:-../shared}/anchors"
mkdir -p "$out/bin/anchors/matrices"
cp "$anchors"/*.tsv "$out/bin/anchors/"
grep -v '^#' "$anchors/h200-f64-anchors.tsv" | cut -f1 | grep -v -e ':' -e '^matrix$' |
    while read -r m; do cp "$shared/$m.mtx.gz" "$out/bin/anchors/matrices/"; done
du -sh "$out" "$out"/*
# The device tool carries at most 64 MiB: the tests, the CLI and the matrices go packed
# (xz, about a quarter of the size) in .device-pack/, which scripts/device-env.sh unpacks.
# Carry .device-pack alone, or the unpacked folders that fit.
mkdir -p .device-pack
tar -cf - -C "$out" tests bin/spmv matrices | xz -T0 -6 > .device-pack/bundle.tar.xz
du -sh .device-pack/bundle.tar.xz
