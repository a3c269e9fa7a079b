"""k right-hand sides solved together (`spmv.cg(op, B)`, B of shape (n, k): the solves in lock
step, one block product per step) against the same k columns solved one after the other
(`spmv.cg(op, B[:, j])`), docs/solve.md "Several right-hand sides".

    PYTHONPATH=lab python3 -m spmvlab.block_solve [SPEC_OR_NAME ...] [--matrices-dir DIR]
        [--device cpu|gpu] [--format F] [--rhs 4,8,16] [--runs 5] [--tol 1e-8]

Each matrix (a generator spec, or a name of DIR's .mtx.gz files; SPD: CG runs) in format F on
the device: B = A·X for k seeded columns, the block solve and the k single solves alternating,
`runs` times each (after one of each to warm up); the medians of their wall times, the ratio
(separately / together) and whether every column took its single solve's iterations, one
line per (matrix, k). Needs NumPy and the spmv wheel."""

import pathlib
import statistics
import time

from . import cli

DEFAULT = ["poisson2d:n=300", "poisson3d:n=40", "bcsstk33", "nasa2910", "gr_30_30"]


def main(argv=None):
    import numpy as np

    import spmv

    ap = cli.parser("block_solve", __doc__)
    ap.add_argument("matrices", nargs="*", default=DEFAULT)
    shared = pathlib.Path(__file__).resolve().parents[2].parent / "shared" / "matrices"
    ap.add_argument("--matrices-dir", default=str(shared), help="the .mtx.gz files (default: ../shared/matrices)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "gpu"])
    ap.add_argument("--format", default="csr-vector")
    ap.add_argument("--rhs", default="4,8,16", help="the k to run, comma-separated")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--tol", type=float, default=1e-8)
    args = ap.parse_args(argv)
    for item in args.matrices:
        path = pathlib.Path(args.matrices_dir) / f"{item}.mtx.gz"
        if ":" not in item and not path.exists():
            print(f"{item}: not found in {args.matrices_dir}")
            continue
        m = spmv.generate(item) if ":" in item else spmv.read(str(path))
        op = m.to_device(format=args.format, precision="f64", device=args.device)
        a = m.to_scipy().tocsr()
        rng = np.random.default_rng(7)
        args.name = item
        for k in [int(v) for v in args.rhs.split(",")]:
            print(line(spmv, np, op, a, rng, k, args))


def line(spmv, np, op, a, rng, k, args):
    """One (matrix, k): B = A·X for seeded X, the block solve and the k single solves timed."""
    b = a @ rng.standard_normal((a.shape[0], k))

    def together():
        return spmv.cg(op, b, tol=args.tol, max_iter=20_000)

    def apart():
        return [spmv.cg(op, np.ascontiguousarray(b[:, j]), tol=args.tol, max_iter=20_000) for j in range(k)]

    block, single = together(), apart()
    same = all(c.iterations == s.iterations for c, s in zip(block.columns, single))
    times = {"together": [], "apart": []}
    for _ in range(args.runs):
        for name, run in (("together", together), ("apart", apart)):
            start = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - start)
    t, s = (1e3 * statistics.median(times[n]) for n in ("together", "apart"))
    its = max(c.iterations for c in block.columns)
    return (
        f"{args.name} ({a.shape[0]} rows, {a.nnz} entries) {op.format} {args.device} k = {k}: "
        f"together {t:.1f} ms, apart {s:.1f} ms, ratio {s / t:.2f}; "
        f"up to {its} iterations, converged {block.converged}, same iterations {same}"
    )


if __name__ == "__main__":
    main()
