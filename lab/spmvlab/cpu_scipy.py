"""y = A·x on the CPU from Python (docs/auto.md, "On the CPU"): spmv's `op.apply(x, y)` with
format auto on device "cpu" against SciPy's `csr_matrix @ x`, in one process, timed in
alternating rounds so that both see the same machine.

    PYTHONPATH=lab python3 -m spmvlab.cpu_scipy MATRIX_DIR ... [--min-nnz 50000] > out.jsonl

Each matrix: read by spmv (the operator, auto's choice included in the setup) and by
scipy.io.mmread; 3 warm-up products each; then 25 rounds, each one call of at least 1 ms of
one library's products followed by the other's (the first alternating); per round the ratio of
SciPy's time to spmv's, and the median of those ratios. Results are checked against each
other. One JSON object per matrix on stdout; the geometric mean on stderr. Needs NumPy, SciPy
and the spmv wheel (`bash scripts/python-test.sh` installs it in target/py-venv)."""

import json
import pathlib
import statistics
import sys
import time

from . import cli
from .stats import geomean

ROUNDS = 25
ROUND_S = 1e-3


def per_call(fn, calls):
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def measure(path, min_nnz):
    import numpy as np
    import scipy.io
    import scipy.sparse

    import spmv

    m = spmv.read(str(path))
    if m.nnz < min_nnz:
        return None
    start = time.perf_counter()
    op = m.to_device(format="auto", device="cpu")
    setup_s = time.perf_counter() - start
    a = scipy.sparse.csr_matrix(scipy.io.mmread(str(path)), dtype=np.float64)
    x = np.random.default_rng(1).uniform(-1.0, 1.0, a.shape[1])
    y = np.empty(a.shape[0])
    ours = lambda: op.apply(x, y)  # noqa: E731
    theirs = lambda: a @ x  # noqa: E731
    calls = []
    for fn in (ours, theirs):
        for _ in range(3):
            fn()
        calls.append(max(1, int(ROUND_S / max(per_call(fn, 1), 1e-7)) + 1))
    np.testing.assert_allclose(y, theirs(), rtol=1e-10, atol=1e-10 * float(np.abs(a).sum()))
    ratios, ours_s, theirs_s = [], [], []
    for r in range(ROUNDS):
        pair = [(0, ours), (1, theirs)]
        times = {}
        for i, fn in pair if r % 2 == 0 else pair[::-1]:
            times[i] = per_call(fn, calls[i])
        ours_s.append(times[0])
        theirs_s.append(times[1])
        ratios.append(times[1] / times[0])
    return {
        "matrix": path.name.removesuffix(".gz").removesuffix(".mtx"),
        "nnz": m.nnz,
        "format": op.format,
        "setup_ms": setup_s * 1e3,
        "ours_us": statistics.median(ours_s) * 1e6,
        "scipy_us": statistics.median(theirs_s) * 1e6,
        "scipy_over_ours": statistics.median(ratios),
    }


def main(argv=None):
    ap = cli.parser("cpu_scipy", __doc__)
    ap.add_argument("inputs", nargs="+", help="folders of .mtx.gz files, or files")
    ap.add_argument("--min-nnz", type=int, default=0, help="skip matrices with fewer entries")
    args = ap.parse_args(argv)
    paths = []
    for item in map(pathlib.Path, args.inputs):
        paths += sorted(item.glob("*.mtx.gz")) if item.is_dir() else [item]
    ratios = []
    for path in paths:
        result = measure(path, args.min_nnz)
        if result:
            ratios.append(result["scipy_over_ours"])
            print(json.dumps(result), flush=True)
    if ratios:
        print(
            f"{len(ratios)} matrices: SciPy's time / spmv's (auto on the CPU), geometric mean "
            f"{geomean(ratios):.3f}, range {min(ratios):.2f}-{max(ratios):.2f}",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
