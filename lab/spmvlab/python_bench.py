"""y = A·x from Python on the GPU (docs/python.md): spmv's `op.apply(x, y)` (format auto)
against `cupyx.scipy.sparse.csr_matrix @ x` and a PyTorch sparse CSR tensor `A @ x`, on the
same CuPy/PyTorch vectors, in one process, timed with CUDA events on the caller's stream.

    python_bench [MATRIX_DIR ...] [--default-set] [--precision f64] [--rhs 4,8,16,32] > out.jsonl

Each product: 10 warm-up calls, then 3 rounds of 100 back-to-back calls between two CUDA
events; the median round's mean per call. Results are checked against each other. One JSON
object per matrix on stdout; the geometric means of the time ratios on stderr at the end.
With --rhs, also Y = A·X for blocks of k vectors (X row-major, n × k): spmv's `op.apply(X, Y)`
with auto (and, as csr_vector_ms, with csr-vector: its block kernel reads the matrix once per 8
columns) against CuPy's `A @ X` (cuSPARSE SpMM), PyTorch's CSR @ dense and k times spmv's own
SpMV (auto); the geometric means over the matrices of at least 10^5 entries go to stderr.
Needs CuPy, PyTorch, NumPy and the spmv wheel (`lab/run python` installs it)."""

import json
import pathlib
import statistics
import sys

from . import cli
from .stats import geomean


def timed(cupy, fn, rounds=3, calls=100, warmup=10):
    for _ in range(warmup):
        fn()
    means = []
    for _ in range(rounds):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        for _ in range(calls):
            fn()
        end.record()
        end.synchronize()
        means.append(cupy.cuda.get_elapsed_time(start, end) / calls)
    return statistics.median(means)


def measure(item, precision, rhs=(), min_nnz=0):
    """One matrix (a Path, or a generator spec): the three products timed and checked against
    CuPy's; None for an empty matrix."""
    import cupy
    import cupyx.scipy.sparse as csp
    import numpy as np
    import torch

    import spmv

    dtype = np.float64 if precision == "f64" else np.float32
    tdtype = torch.float64 if precision == "f64" else torch.float32
    name = item.name.replace(".mtx.gz", "") if isinstance(item, pathlib.Path) else item
    m = spmv.read(str(item)) if isinstance(item, pathlib.Path) else spmv.generate(item)
    if m.shape[0] == 0 or m.nnz == 0 or m.nnz < min_nnz:
        return None
    a = m.to_scipy().astype(dtype)
    op = m.to_device(format="auto", precision=precision, device="gpu")
    rng = np.random.default_rng(1)
    x_host = rng.uniform(-1, 1, a.shape[1]).astype(dtype)
    x = cupy.asarray(x_host)
    y = cupy.empty(a.shape[0], dtype=dtype)
    a_cp = csp.csr_matrix(a)
    a_t = torch.sparse_csr_tensor(
        torch.as_tensor(a.indptr, dtype=torch.int64),
        torch.as_tensor(a.indices, dtype=torch.int64),
        torch.as_tensor(a.data, dtype=tdtype),
        size=a.shape,
        device="cuda",
    )
    x_t = torch.as_tensor(x_host, device="cuda")
    ours = timed(cupy, lambda: op.apply(x, y))
    theirs = timed(cupy, lambda: a_cp @ x)
    torch_ms = timed(cupy, lambda: a_t @ x_t)
    y_t = a_t @ x_t
    torch.cuda.synchronize()
    ref = cupy.asnumpy(a_cp @ x)
    scale = np.abs(a) @ np.abs(x_host.astype(np.float64)) + 1e-300
    err = float(np.max(np.abs(cupy.asnumpy(y).astype(np.float64) - ref) / scale))
    err_t = float(np.max(np.abs(y_t.cpu().numpy().astype(np.float64) - ref) / scale))
    blocks = {}
    if rhs:
        op_block = m.to_device(format="csr-vector", precision=precision, device="gpu")
        for k in rhs:
            xb_host = rng.uniform(-1, 1, (a.shape[1], k)).astype(dtype)
            xb = cupy.asarray(xb_host)
            yb = cupy.empty((a.shape[0], k), dtype=dtype)
            xb_t = torch.as_tensor(xb_host, device="cuda")
            block_ms = timed(cupy, lambda xb=xb, yb=yb: op.apply(xb, yb))
            csr_ms = timed(cupy, lambda xb=xb, yb=yb: op_block.apply(xb, yb))
            ref_b = cupy.asnumpy(a_cp @ xb)
            scale_b = np.abs(a) @ np.abs(xb_host.astype(np.float64)) + 1e-300
            blocks[k] = {
                "ours_ms": block_ms,
                "csr_vector_ms": csr_ms,
                "cupy_ms": timed(cupy, lambda xb=xb: a_cp @ xb),
                "torch_ms": timed(cupy, lambda xb_t=xb_t: a_t @ xb_t),
                "k_spmv_ms": k * ours,
                "max_scaled_diff_vs_cupy": float(np.max(np.abs(cupy.asnumpy(yb).astype(np.float64) - ref_b) / scale_b)),
            }
    return {
        "blocks": blocks,
        "matrix": name,
        "rows": a.shape[0],
        "nnz": int(a.nnz),
        "format": op.format,
        "ours_ms": ours,
        "cupy_ms": theirs,
        "torch_ms": torch_ms,
        "cupy_over_ours": theirs / ours,
        "torch_over_ours": torch_ms / ours,
        "max_scaled_diff_vs_cupy": err,
        "torch_scaled_diff": err_t,
    }


def main(argv=None):
    import spmv

    ap = cli.parser("python_bench", __doc__)
    ap.add_argument("matrix_dirs", nargs="*")
    ap.add_argument("--default-set", action="store_true")
    ap.add_argument("--precision", default="f64", choices=["f64", "f32"])
    ap.add_argument("--rhs", default="", help="block sizes k, e.g. 4,8,16,32")
    ap.add_argument("--min-nnz", type=int, default=0, help="skip matrices with fewer entries")
    args = ap.parse_args(argv)
    rhs = [int(k) for k in args.rhs.split(",") if k]
    block_ratios = {k: {"peer": [], "k_spmv": [], "csr": []} for k in rhs}
    inputs = [p for d in args.matrix_dirs for p in sorted(pathlib.Path(d).glob("*.mtx.gz"))]
    if args.default_set:
        inputs += spmv._spmv.default_specs()
    ratios_cupy, ratios_torch = [], []
    for item in inputs:
        result = measure(item, args.precision, rhs, args.min_nnz)
        if result:
            ratios_cupy.append(result["cupy_over_ours"])
            ratios_torch.append(result["torch_over_ours"])
            for k, b in result["blocks"].items():
                if result["nnz"] >= 100_000:
                    block_ratios[k]["peer"].append(min(b["cupy_ms"], b["torch_ms"]) / b["ours_ms"])
                    block_ratios[k]["k_spmv"].append(b["k_spmv_ms"] / b["ours_ms"])
                    block_ratios[k]["csr"].append(min(b["cupy_ms"], b["torch_ms"]) / b["csr_vector_ms"])
            print(json.dumps(result), flush=True)
    print(
        f"{len(ratios_cupy)} matrices, {args.precision}: geometric mean of CuPy time / spmv time "
        f"{geomean(ratios_cupy):.3f}, PyTorch time / spmv time {geomean(ratios_torch):.3f}",
        file=sys.stderr,
    )
    for k, r in block_ratios.items():
        if r["peer"]:
            print(
                f"A·X, k = {k}, {len(r['peer'])} matrices of >= 1e5 entries: geometric mean of the faster of "
                f"CuPy and PyTorch / spmv {geomean(r['peer']):.3f}, (k x spmv SpMV) / spmv {geomean(r['k_spmv']):.3f}, "
                f"worst {min(r['k_spmv']):.3f}; with csr-vector: the faster peer / spmv {geomean(r['csr']):.3f}",
                file=sys.stderr,
            )


if __name__ == "__main__":
    main()
