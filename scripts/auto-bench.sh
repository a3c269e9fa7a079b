#!/usr/bin/env bash
# Issue 14's check (docs/auto.md) and the compression tables (docs/compression.md) from one
# f64 run on the GPU machine, with .device-pack carried (scripts/device-bundle.sh):
#   every registered format, the compressed variants, cuSPARSE, and auto and tune held out
#   (heldout=true: a matrix the model was fitted on is chosen for as if it had not been), on
#   the default set's generated matrices and the shared matrices, with an empty tune cache;
#   in three benches (generated, first and second half of the shared matrices) so that a run
#   cut short keeps what finished (AUTO_TIMEOUT seconds each, default 170);
#   AUTO_PARTS  the benches to run (default "generated shared-1 shared-2"); the others' JSON,
#               if left in $out by an earlier run, still enter the tables; "train-1 train-2":
#               other sizes of the generated families, measured as training data for the
#               model (its neighbours for the default set), not for the check;
# then scripts/auto-check.py and scripts/compression-tables.py, and everything packed into
# $out/auto-bench.tgz (the device tool returns a limited number of files).
set -uo pipefail
. "$(dirname "$0")/device-env.sh"
bin="$bundle/bin"
reps="${BENCH_REPS:-100}"
limit="${AUTO_TIMEOUT:-170}"
export SPMV_CACHE_DIR=$(mktemp -d)
generated=$(sed -n '/^pub const DEFAULT_SPECS: /,/^];/p' crates/spmv/src/io/inputs.rs | grep -o '"[^"]*"' | tr -d '"' | tr '\n' ' ')
registered=$("$bin/spmv" formats | grep -E '^[a-z]' | awk '{print $1}' | grep -v -x -e auto -e tune | paste -sd,)
formats="$registered,csr-vector:values=auto,csr-vector:values=auto,cols=auto,csr5:values=auto,dia:values=auto,dasp:values=auto,auto:heldout=true,tune:heldout=true"
mapfile -t shared < <(ls "$bundle"/matrices/*.mtx.gz)
half=$(( ${#shared[@]} / 2 ))
parts=" ${AUTO_PARTS:-generated shared-1 shared-2} "
run() { # name, then bench inputs
    local name=$1; shift
    [[ $parts == *" ${name#auto-} "* ]] || return 0
    timeout "$limit" "$bin/spmv" bench "$@" --formats "$formats" --precision f64 --reps "$reps" \
        --json "$out/$name.json" > "$out/$name.txt" 2> "$out/$name.err"
    echo "$name: rc=$? $(grep -E '^# (all|FAILED)' "$out/$name.txt")"
}
# shellcheck disable=SC2086
run auto-generated $generated
run auto-shared-1 "${shared[@]:0:$half}"
run auto-shared-2 "${shared[@]:$half}"
run auto-train-1 poisson3d:n=96 poisson3d:n=48,points=27 kron:scale=19 random:rows=1000000,cols=1000000,mean=16 \
    powerlaw:n=1000000,mean=8,exp=2.1 "banded:n=2000000,offsets=-1000;-1;0;1;1000,broken=0.1,scatter=0.001" \
    longrows:n=500000,short=8,count=16,long=100000
run auto-train-2 poisson3d:n=160 poisson3d:n=80,points=27 kron:scale=21 random:rows=3000000,cols=3000000,mean=8 \
    powerlaw:n=2000000,mean=16,exp=2.3 "banded:n=4000000,offsets=-500;-1;0;1;500,broken=0.2,scatter=0.002" \
    longrows:n=2000000,short=4,count=8,long=400000
[[ $parts == *" train-"* ]] && { tar -czf "$out/auto-train.tgz" -C "$out" $(cd "$out" && ls auto-train*); exit 0; }
python3 scripts/benchjson.py --merge "$out"/auto-generated.json "$out"/auto-shared-*.json > "$out/auto.json"
python3 scripts/auto-check.py "$out/auto.json" --auto auto:heldout=true --tune tune:heldout=true > "$out/auto-check.md"
python3 scripts/auto-check.py "$out/auto.json" --auto auto:heldout=true --tune tune:heldout=true --time graph > "$out/auto-check-graph.md"
compression="csr-vector;csr-vector:values=auto;csr-vector:values=auto,cols=auto;csr5;csr5:values=auto;dia;dia:values=auto;merge-csr;sell-c-sigma;dasp;dasp:values=auto;cusparse-alg1;cusparse-alg2"
python3 scripts/compression-tables.py "$out/auto.json" --formats "$compression" > "$out/auto-compression-tables.md"
# The targets over every format of the run.
python3 scripts/compression-tables.py "$out/auto.json" | grep -E '^target' > "$out/auto-targets.txt"
tar -czf "$out/auto-bench.tgz" -C "$out" $(cd "$out" && ls auto*)
echo "==================== summary ===================="
head -12 "$out/auto-check.md"
head -12 "$out/auto-check-graph.md"
grep -E '^\| geomean' "$out/auto-compression-tables.md"
cat "$out/auto-targets.txt"
