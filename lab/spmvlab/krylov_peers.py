"""spmv's MINRES, GMRES and `method="auto"` against CuPy's solvers on the GPU, or SciPy's on
the CPU (issue 32, docs/solve.md), both through Python in the same process.

    krylov_peers run [--host] [--tol 1e-8] [--max-iter 10000] [--max-nnz N] MATRIX... > peers.jsonl
        For each square MATRIX (.mtx/.mtx.gz; b = ones, x0 = 0, stop at ‖r‖ ≤ tol·‖b‖):
        the peer's cg and minres (symmetric A only) and gmres(restart=30), at most
        --max-iter iterations (Arnoldi steps for GMRES); spmv's minres (symmetric) and gmres
        (Jacobi off, the operator in `auto`'s format, built beforehand as the peer's matrix
        is), and spmv.solve(method="auto"). The peer is CuPy on the GPU, or with --host SciPy
        on the CPU against spmv's CPU backend. Each solve runs once untimed (compilation,
        setup; on the GPU only), then once timed from the call to the returned x, synchronised. "converged":
        the true residual ‖b − A·x‖/‖b‖ ≤ 10·tol (the same test for both). One JSON object per
        line (the peer's solves under `cupy_*` or `scipy_*`), written as it goes.
    krylov_peers table PEERS.jsonl
        ours/peer time to solution for MINRES and GMRES(30) over the problems both solved
        (geometric means), and where `auto` did not converge although one of the peer's did."""

import inspect
import json
import math
import statistics
import time

from . import cli
from .stats import geomean


def tol_key(solver):
    """The peer's name of the relative tolerance: rtol in newer releases, tol before."""
    return "rtol" if "rtol" in inspect.signature(solver).parameters else "tol"


def run(args):
    for name in args.matrices:
        row = measure(name, args)
        if row is not None:
            print(json.dumps(row), flush=True)


PEERS = ("cupy", "scipy")
RESTART = 30


def measure(name, args):
    """One matrix: both sides' solves (None for a matrix that is not square or too large)."""
    import numpy as np
    import scipy.io
    import scipy.sparse as sp

    import spmv

    a_host = sp.csr_matrix(scipy.io.mmread(name), dtype=np.float64)
    n = a_host.shape[0]
    if a_host.shape[0] != a_host.shape[1] or a_host.nnz > args.max_nnz:
        return None
    symmetric = (a_host != a_host.T).nnz == 0
    bh = np.ones(n)
    if args.host:
        import scipy.sparse.linalg as peer

        xp, a, b, sync = np, a_host, bh, lambda: None
        # SciPy's gmres counts maxiter in restart cycles.
        gmres_maxiter = math.ceil(args.max_iter / RESTART)
    else:
        import cupy as cp
        import cupyx.scipy.sparse as csp
        import cupyx.scipy.sparse.linalg as peer

        xp, a, b = cp, csp.csr_matrix(a_host), cp.ones(n, dtype=cp.float64)
        sync = cp.cuda.Device().synchronize
        # CuPy's gmres counts maxiter in Arnoldi steps (a whole cycle at a time), as ours does.
        gmres_maxiter = args.max_iter
    bnorm = float(xp.linalg.norm(b))

    def timed(solve):
        if not args.host:
            solve()  # warm-up: kernels compiled, graphs captured
        sync()
        start = time.perf_counter()
        x = solve()
        sync()
        ms = (time.perf_counter() - start) * 1e3
        r = float(xp.linalg.norm(b - a @ xp.asarray(x)) / bnorm)
        return {"ms": ms, "true_residual": r, "converged": bool(r <= 10 * args.tol)}

    row = {"matrix": name.rsplit("/", 1)[-1].replace(".mtx.gz", ""), "rows": n, "nnz": int(a_host.nnz)}
    row["symmetric"] = bool(symmetric)
    peer_name = "scipy" if args.host else "cupy"

    def tol(solver):
        return {tol_key(solver): args.tol}

    peers = {"gmres": lambda: peer.gmres(a, b, atol=0.0, restart=RESTART, maxiter=gmres_maxiter, **tol(peer.gmres))[0]}
    if symmetric:
        peers["cg"] = lambda: peer.cg(a, b, atol=0.0, maxiter=args.max_iter, **tol(peer.cg))[0]
        peers["minres"] = lambda: peer.minres(a, b, maxiter=args.max_iter, **tol(peer.minres))[0]
    for method, solve in peers.items():
        try:
            row[f"{peer_name}_{method}"] = timed(solve)
        except Exception as e:  # a peer's failure is a result, not the end of the run
            row[f"{peer_name}_{method}"] = {"error": str(e)[:200]}
    op = spmv.Matrix.from_scipy(a_host).to_device(device="cpu" if args.host else "gpu")
    row["format"] = op.format
    ours = {"auto": spmv.solve, "gmres": spmv.gmres}
    if symmetric:
        ours["minres"] = spmv.minres
    for method, solver in ours.items():
        last = []

        def x_of(solver=solver, last=last):
            last.append(solver(op, bh, tol=args.tol, max_iter=args.max_iter))
            return last[-1].x

        try:
            figures = timed(x_of)
            r = last[-1]
            # The library's own clock (solve_ms: setup, iterations, the final residual) and its
            # time per iteration, beside the wall time from Python.
            figures.update(method=r.method, method_auto=r.method_auto, iterations=r.iterations)
            figures.update(solve_ms=r.ms, iteration_ms=r.iteration_ms, graph=r.graph)
            row[f"ours_{method}"] = figures
        except Exception as e:
            row[f"ours_{method}"] = {"error": str(e)[:200]}
    return row


def peer_of(rows):
    """The peer whose solves the rows hold ("cupy" or "scipy")."""
    for name in PEERS:
        if any(key.startswith(name + "_") for r in rows for key in r):
            return name
    return PEERS[0]


def table(path):
    with open(path) as f:
        # A peer's library may print to stdout too (LAPACK's "On entry to DLASCL …").
        rows = [json.loads(line) for line in f if line.startswith("{")]
    peer = peer_of(rows)
    shown = {"cupy": "CuPy", "scipy": "SciPy"}[peer]
    for method in ("minres", "gmres"):
        ratios = []
        for r in rows:
            o, c = r.get(f"ours_{method}", {}), r.get(f"{peer}_{method}", {})
            if o.get("converged") and c.get("converged"):
                ratios.append(o["ms"] / c["ms"])
        if ratios:
            print(
                f"{method}: ours/{shown} time to solution, geometric mean over {len(ratios)} problems both solved: "
                f"{geomean(ratios):.3f} (median {statistics.median(ratios):.3f}, worst {max(ratios):.3f})"
            )
    exceptions = []
    for r in rows:
        peers = [m for m in ("cg", "minres", "gmres") if r.get(f"{peer}_{m}", {}).get("converged")]
        auto = r.get("ours_auto", {})
        if peers and not auto.get("converged"):
            exceptions.append(
                f"{r['matrix']} ({r['rows']} rows, symmetric {r['symmetric']}): "
                f"{shown}'s {', '.join(peers)} converged; "
                f"auto ({auto.get('method_auto', auto.get('error'))}) true residual {auto.get('true_residual')}"
            )
    solved = sum(1 for r in rows if r.get("ours_auto", {}).get("converged"))
    peer_solved = sum(
        1 for r in rows if any(r.get(f"{peer}_{m}", {}).get("converged") for m in ("cg", "minres", "gmres"))
    )
    print(f"auto converged on {solved} of {len(rows)} square matrices; ", end="")
    print(f"{shown} (any of cg/minres/gmres) on {peer_solved}")
    print(f"where one of {shown}'s converged and auto did not: {len(exceptions)}")
    for e in exceptions:
        print("  " + e)


def main(argv=None):
    ap, sub, r = cli.solver_comparison(
        "krylov_peers", __doc__, run, "both sides on the problems, JSON lines on stdout", max_iter=10000
    )
    r.add_argument("--max-nnz", type=int, default=5_000_000)
    r.add_argument("--host", action="store_true", help="SciPy on the CPU against spmv's CPU backend")
    t = sub.add_parser("table", help="the ratios and auto's exceptions from run's output")
    t.add_argument("peers_jsonl")
    t.set_defaults(go=lambda args: table(args.peers_jsonl))
    args = ap.parse_args(argv)
    args.go(args)


if __name__ == "__main__":
    main()
