"""SciPy's own CG around spmv's CPU operator against SciPy's CG on the `csr_matrix`
(docs/auto.md, "On the CPU"): the loop a SciPy user runs, where each product follows
single-threaded NumPy work.

    PYTHONPATH=lab python3 -m spmvlab.cpu_cg [SPEC_OR_NAME ...] [--matrices-dir DIR]

Each matrix (a generator spec, or a name of DIR's .mtx.gz files): `scipy.sparse.linalg.cg`
with rtol 1e-30 and 100 iterations on `aslinearoperator(op)` (op: format auto on device
"cpu") and on the csr_matrix, alternating, 5 solves each; the medians per iteration and
SciPy's time over ours (ratio), one line per matrix. Needs NumPy, SciPy and the spmv wheel."""

import pathlib
import statistics
import time

from . import cli

DEFAULT = ["poisson2d:n=120", "poisson2d:n=200", "poisson3d:n=40", "pesa", "cti", "t60k", "cvxbqp1", "bcsstk33"]
ITERATIONS = 100


def main(argv=None):
    import numpy as np
    import scipy.sparse.linalg as sla

    import spmv

    ap = cli.parser("cpu_cg", __doc__)
    ap.add_argument("matrices", nargs="*", default=DEFAULT)
    shared = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "matrices"
    ap.add_argument("--matrices-dir", default=str(shared), help="the .mtx.gz files (default: ../shared/matrices)")
    args = ap.parse_args(argv)
    for item in args.matrices:
        m = spmv.generate(item) if ":" in item else spmv.read(str(pathlib.Path(args.matrices_dir) / f"{item}.mtx.gz"))
        a = m.to_scipy().tocsr()
        op = m.to_device(format="auto", device="cpu")
        ours_op, b = sla.aslinearoperator(op), np.ones(a.shape[0])
        ours, theirs = [], []
        for _ in range(5):
            ours.append(per_iteration(sla, ours_op, b))
            theirs.append(per_iteration(sla, a, b))
        o, t = statistics.median(ours), statistics.median(theirs)
        print(f"{item} ({a.nnz}) {op.format}: per CG iteration ours {o:.0f} us, scipy {t:.0f} us, ratio {t / o:.2f}")


def per_iteration(sla, matrix, b):
    """Microseconds per iteration of SciPy's CG on `matrix` for ITERATIONS iterations."""
    start = time.perf_counter()
    sla.cg(matrix, b, rtol=1e-30, maxiter=ITERATIONS)
    return (time.perf_counter() - start) / ITERATIONS * 1e6


if __name__ == "__main__":
    main()
