"""CuPy's conjugate gradients on the same problems as `spmv solve` (docs/solve.md): the peer
that `lab/run solve` sets our GPU CG against, on the same GPU in the same session.

    solve_cupy run --tol 1e-8 --max-iter 20000 MATRIX... > cupy.jsonl
        A MATRIX is a .mtx/.mtx.gz file or poisson2d:n=K / poisson3d:n=K (the 5- and 7-point
        Laplacians of spmv's generators, same ordering). b is all ones and x0 = 0, as `spmv
        solve --rhs ones`; the stop is ‖r‖ ≤ tol·‖b‖ (atol = 0). Each problem runs once
        untimed (warm-up: kernel compilation, cuSPARSE setup), then is timed three times
        (median) from the call to the returned x, synchronised; the iteration count comes from
        a fourth run with a callback. One JSON object per line on stdout. Needs NumPy, SciPy
        and CuPy.
    solve_cupy compare CUPY.jsonl DIR
        the table of docs/solve.md from run's output and the `spmv solve --json` files
        DIR/ours-LABEL.json (LABEL: the matrix's name, ':' and '=' as '_'): iterations, time
        and time per iteration of both, and the geometric mean of ours / CuPy over the
        problems both solved."""

import inspect
import json
import os
import re
import statistics
import time

from . import cli
from .stats import geomean


def stem(name):
    """A problem's name: the file's name without .mtx(.gz), or the generator spec."""
    return os.path.basename(name).replace(".mtx.gz", "").replace(".mtx", "")


def label(name):
    """A problem's name as `lab/run solve` names its files: ':' and '=' as '_'."""
    return stem(name).replace(":", "_").replace("=", "_")


def laplacian(dims):
    """The 5-/7-point Laplacian on a grid with x fastest: 2·len(dims) on the diagonal, -1 for
    each neighbour."""
    import numpy as np
    import scipy.sparse as sp

    def line(n):
        return sp.diags([-np.ones(n - 1), np.zeros(n), -np.ones(n - 1)], [-1, 0, 1])

    a = None
    for axis, n in enumerate(dims):
        term = line(n)
        for other in dims[:axis]:
            term = sp.kron(term, sp.identity(other))
        for other in dims[axis + 1 :]:
            term = sp.kron(sp.identity(other), term)
        a = term if a is None else a + term
    size = int(np.prod(dims))
    return (a + 2.0 * len(dims) * sp.identity(size)).tocsr()


def load(name):
    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    m = re.fullmatch(r"poisson([23])d:n=(\d+)", name)
    if m:
        return laplacian([int(m.group(2))] * int(m.group(1)))
    return sp.csr_matrix(scipy.io.mmread(name), dtype=np.float64)


def run(args):
    import cupy as cp
    import cupyx.scipy.sparse as csp
    from cupyx.scipy.sparse.linalg import cg

    tol_key = "rtol" if "rtol" in inspect.signature(cg).parameters else "tol"

    def solve(a, b, callback=None):
        kwargs = {tol_key: args.tol, "atol": 0.0, "maxiter": args.max_iter}
        if callback is not None:
            kwargs["callback"] = callback
        x, info = cg(a, b, **kwargs)
        cp.cuda.Device().synchronize()
        return x, info

    for name in args.matrices:
        print(json.dumps(time_problem(cp, csp, solve, name)), flush=True)


def time_problem(cp, csp, solve, name):
    """One problem: a warm-up solve, three timed (median), one counting the iterations."""
    a_host = load(name)
    a = csp.csr_matrix(a_host)
    b = cp.ones(a_host.shape[0], dtype=cp.float64)
    solve(a, b)
    times = []
    for _ in range(3):
        start = time.perf_counter()
        x, info = solve(a, b)
        times.append((time.perf_counter() - start) * 1e3)
    count = [0]

    def counter(_xk):
        count[0] += 1

    solve(a, b, counter)
    r = b - a @ x
    return {
        "matrix": stem(name),
        "rows": a_host.shape[0],
        "nnz": int(a_host.nnz),
        "iterations": count[0],
        "info": int(info),
        "converged": int(info) == 0,
        "ms": statistics.median(times),
        "true_residual": float(cp.linalg.norm(r) / cp.linalg.norm(b)),
        "cupy": cp.__version__,
    }


def compare(cupy_jsonl, folder):
    with open(cupy_jsonl) as f:
        cupy = {label(r["matrix"]): r for r in map(json.loads, f)}
    print(
        f"{'matrix':<18} {'rows':>9} {'it ours':>8} {'it cupy':>8} {'ms ours':>9} {'ms cupy':>9} {'ours/cupy':>9} "
        f"{'us/it ours':>10} {'us/it cupy':>10}"
    )
    ratios = []
    for name in sorted(os.listdir(folder)):
        key = name[len("ours-") : -len(".json")]
        if not (name.startswith("ours-") and name.endswith(".json")) or key not in cupy:
            continue
        with open(os.path.join(folder, name)) as f:
            o = json.load(f)
        c = cupy[key]
        both = o["outcome"] == "converged" and c["converged"]
        ratio = o["solve_ms"] / c["ms"]
        if both:
            ratios.append(ratio)
        print(
            f"{key:<18} {o['rows']:>9} {o['iterations']:>8} {c['iterations']:>8} {o['solve_ms']:>9.2f} "
            f"{c['ms']:>9.2f} {ratio:>9.3f} {1e3 * o['ms_per_iteration']:>10.1f} "
            f"{1e3 * c['ms'] / max(c['iterations'], 1):>10.1f}{'' if both else '  (not both converged)'}"
        )
    if ratios:
        print(f"geometric mean of ours/cupy over {len(ratios)} problems both converged: {geomean(ratios):.3f}")


def main(argv=None):
    ap, sub, _ = cli.solver_comparison(
        "solve_cupy", __doc__, run, "CuPy's CG on the problems, JSON lines on stdout", max_iter=20000
    )
    c = sub.add_parser("compare", help="the table of ours against CuPy from a folder of results")
    c.add_argument("cupy_jsonl")
    c.add_argument("folder")
    c.set_defaults(go=lambda args: compare(args.cupy_jsonl, args.folder))
    args = ap.parse_args(argv)
    args.go(args)


if __name__ == "__main__":
    main()
