#!/usr/bin/env python3
"""CuPy's conjugate gradients on the same problems as `spmv solve` (docs/solve.md): the peer
that scripts/solve-bench.sh sets our GPU CG against, on the same GPU in the same session.

    python3 scripts/solve-cupy.py --tol 1e-8 --max-iter 20000 MATRIX... > cupy.jsonl

A MATRIX is a .mtx/.mtx.gz file or poisson2d:n=K / poisson3d:n=K (the 5- and 7-point
Laplacians of spmv's generators, same ordering). b is all ones and x0 = 0, as `spmv solve
--rhs ones`; the stop is ‖r‖ ≤ tol·‖b‖ (atol = 0). Each problem runs once untimed (warm-up:
kernel compilation, cuSPARSE setup), then is timed three times (median) from the call to
the returned x, synchronised; the iteration count comes from a fourth run with a callback.
One JSON object per line on stdout.
"""

import argparse
import inspect
import json
import os
import re
import statistics
import sys
import time

import numpy as np
import scipy.io
import scipy.sparse as sp


def laplacian(dims):
    """The 5-/7-point Laplacian on a grid with x fastest: 2·len(dims) on the diagonal, -1
    for each neighbour."""
    def line(n):
        return sp.diags([-np.ones(n - 1), np.zeros(n), -np.ones(n - 1)], [-1, 0, 1])
    a = None
    for axis, n in enumerate(dims):
        term = line(n)
        for other in dims[:axis]:
            term = sp.kron(term, sp.identity(other))
        for other in dims[axis + 1:]:
            term = sp.kron(sp.identity(other), term)
        a = term if a is None else a + term
    size = int(np.prod(dims))
    return (a + 2.0 * len(dims) * sp.identity(size)).tocsr()


def load(name):
    m = re.fullmatch(r"poisson([23])d:n=(\d+)", name)
    if m:
        return laplacian([int(m.group(2))] * int(m.group(1)))
    return sp.csr_matrix(scipy.io.mmread(name), dtype=np.float64)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--max-iter", type=int, default=20000)
    ap.add_argument("matrices", nargs="+")
    args = ap.parse_args()

    import cupy as cp
    import cupyx.scipy.sparse as csp
    from cupyx.scipy.sparse.linalg import cg

    params = inspect.signature(cg).parameters
    tol_key = "rtol" if "rtol" in params else "tol"

    def solve(a, b, callback=None):
        kwargs = {tol_key: args.tol, "atol": 0.0, "maxiter": args.max_iter}
        if callback is not None:
            kwargs["callback"] = callback
        x, info = cg(a, b, **kwargs)
        cp.cuda.Device().synchronize()
        return x, info

    for name in args.matrices:
        label = os.path.basename(name).replace(".mtx.gz", "").replace(".mtx", "")
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
        true_residual = float(cp.linalg.norm(r) / cp.linalg.norm(b))
        print(json.dumps({
            "matrix": label,
            "rows": a_host.shape[0],
            "nnz": int(a_host.nnz),
            "iterations": count[0],
            "info": int(info),
            "converged": int(info) == 0,
            "ms": statistics.median(times),
            "true_residual": true_residual,
            "cupy": cp.__version__,
        }), flush=True)


if __name__ == "__main__":
    sys.exit(main())
