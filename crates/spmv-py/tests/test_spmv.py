"""The Python package against scipy: products on the real matrices within the oracle's
rounding bound, the solvers, PageRank, bench, errors as Python exceptions, and (on a GPU
machine with CuPy or PyTorch) CUDA arrays used in place."""

import gzip
import json
import os
import pathlib

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import assert_refused, matrix_set, torch_with_cuda

import spmv

HERE = pathlib.Path(__file__).resolve().parent
GPU, GPU_WHY = spmv.gpu_available()
EPS = {"f64": np.finfo(np.float64).eps, "f32": np.finfo(np.float32).eps, "f16": np.finfo(np.float16).eps}


def within_bound(a, x, y, precision):
    """|y − A·x| ≤ 2·k·eps·(|A|·|x|) + tiny, k the row's length, A·x in f64 by scipy."""
    exact = a @ x.astype(np.float64)
    k = np.diff(a.indptr).astype(np.float64)
    scale = abs(a) @ np.abs(x.astype(np.float64))
    bound = 2.0 * (k + 2.0) * EPS[precision] * scale + 1e-300
    return np.all(np.abs(y.astype(np.float64) - exact) <= bound)


def test_gpu_available_says_why():
    ok, why = spmv.gpu_available()
    assert isinstance(ok, bool) and why


def test_scipy_round_trip_and_canonical_form():
    a = sp.random(200, 150, density=0.05, format="coo", random_state=1)
    m = spmv.Matrix.from_scipy(a)
    assert m.shape == (200, 150) and m.nnz == a.nnz
    assert (m.to_scipy() != a.tocsr()).nnz == 0
    # Unsorted indices and duplicates are put in canonical form (duplicates summed).
    dup = sp.csr_matrix((np.array([1.0, 2.0, 3.0]), np.array([2, 0, 2]), np.array([0, 3])), shape=(1, 3))
    got = spmv.Matrix.from_scipy(dup).to_scipy()
    assert got.nnz == 2 and got[0, 2] == 4.0 and got[0, 0] == 2.0
    # Arrays as well as matrices, integer values.
    assert spmv.Matrix.from_scipy(sp.csr_array(np.eye(3, dtype=np.int32))).nnz == 3


def test_products_match_scipy_on_the_real_matrices():
    rng = np.random.default_rng(7)
    failures = []
    name, paths = matrix_set()
    assert paths, f"no matrices in {name}"
    for path in paths:
        m = spmv.read(str(path))
        a = m.to_scipy()
        x = rng.uniform(-1, 1, a.shape[1])
        for fmt in ["auto", "csr-vector", "sell-c-sigma", "brcp"]:
            op = m.to_device(format=fmt)
            y = op @ x
            if not within_bound(a, x, y, "f64"):
                failures.append(f"{path.name} {fmt}")
    assert not failures, failures


@pytest.mark.parametrize("precision", ["f64", "f32", "f16"])
def test_precisions_alpha_beta_and_in_place_output(precision):
    m = spmv.generate("poisson2d:n=30")
    a = m.to_scipy()
    op = m.to_device(format="csr-vector", precision=precision)
    dtype = op.dtype
    x = np.linspace(-1, 1, 900).astype(dtype)
    y0 = np.full(900, 0.5, dtype=dtype)
    y = op.apply(x, y0, alpha=2.0, beta=-1.0)
    assert y is y0
    exact = 2.0 * (a @ x.astype(np.float64)) - 0.5
    tol = {"f64": 1e-12, "f32": 1e-5, "f16": 2e-2}[precision]
    assert np.max(np.abs(y.astype(np.float64) - exact)) <= tol * np.max(np.abs(exact))
    assert op.shape == (900, 900) and op.nnz == a.nnz and op.precision == precision
    assert "bytes" in op.stats


def test_plain_numpy_calls_give_the_general_paths_bits():
    """A NumPy vector of the operator's dtype (y None or such a vector) skips the general
    path's checks and conversions: same bits as that path (reached here through a list), and
    what the fast path does not take still gets the general path's errors."""
    m = spmv.generate("random:rows=300,cols=200,mean=5")
    op = m.to_device(format="csr-vector", device="cpu")
    x, xt = np.linspace(-1, 1, 200), np.linspace(1, 2, 300)
    general = op.apply(x.tolist())
    assert np.array_equal(op @ x, general) and np.array_equal(op.apply(x), general)
    assert np.array_equal(op.T @ xt, op.T.apply(xt.tolist()))
    y, y_general = np.full(300, 0.5), np.full(300, 0.5)
    assert op.apply(x, y, 2.0, -1.0) is y
    op.apply(x.tolist(), y_general, 2.0, -1.0)
    assert np.array_equal(y, y_general)
    with pytest.raises(ValueError, match="x has 199 entries"):
        op.apply(x[:-1])
    with pytest.raises(ValueError, match="beta"):
        op.apply(x, None, 1.0, 0.5)


def test_auto_names_its_choice():
    op = spmv.generate("poisson2d:n=20").to_device()
    assert op.format.startswith("auto(") and op.format.endswith(")")
    assert any(f["name"] == "brcp" for f in spmv.formats())


def test_cg_and_bicgstab():
    m = spmv.generate("poisson2d:n=40")
    a = m.to_scipy()
    x_true = np.sin(np.arange(1600))
    b = a @ x_true
    r = spmv.cg(m, b, tol=1e-10)
    assert r.converged and r.outcome == "converged" and r.true_residual <= 1e-9
    assert np.linalg.norm(r.x - x_true) <= 1e-6 * np.linalg.norm(x_true)
    # From scipy, with Jacobi, on an operator in a given format.
    rj = spmv.cg(m.to_device(format="sell-c-sigma"), b, tol=1e-10, precond="jacobi")
    assert rj.converged and abs(rj.iterations - r.iterations) <= 2
    # BiCGSTAB on a nonsymmetric matrix.
    c = (a + sp.diags([0.3 * np.ones(1599)], [1])).tocsr()
    rb = spmv.bicgstab(c, c @ x_true, tol=1e-10, precond="jacobi")
    assert rb.converged and np.allclose(rb.x, x_true, atol=1e-6)
    # An indefinite matrix: CG says so.
    shifted = (a - 4.0 * sp.identity(1600)).tocsr()
    bad = spmv.cg(shifted, np.ones(1600))
    assert bad.outcome == "breakdown" and "not positive definite" in bad.breakdown and not bad.converged
    assert "breakdown" in repr(bad)


def test_minres_gmres_and_auto():
    a = spmv.generate("poisson2d:n=30").to_scipy()
    n = a.shape[0]
    x_true = np.cos(np.arange(n))
    # Symmetric indefinite: CG breaks down, MINRES solves it; auto finds its way there.
    shifted = (a - 1.3 * sp.identity(n)).tocsr()
    b = shifted @ x_true
    for r in (spmv.minres(shifted, b, tol=1e-10), spmv.minres(shifted, b, tol=1e-10, precond="jacobi")):
        assert r.converged and r.method == "minres" and np.allclose(r.x, x_true, atol=1e-6)
    auto = spmv.solve(shifted, b, tol=1e-10)
    assert auto.converged and auto.method == "minres" and "cg found A indefinite" in auto.method_auto
    assert "minres" in repr(auto)
    # Nonsymmetric: GMRES with restarts, x0 and SciPy's names; auto takes it.
    c = (a + sp.diags([0.4 * np.ones(n - 1)], [1])).tocsr()
    bc = c @ x_true
    for restart in (30, 5):
        r = spmv.gmres(c, bc, rtol=1e-10, maxiter=20_000, restart=restart, M="jacobi")
        assert r.converged and np.allclose(r.x, x_true, atol=1e-6), (restart, r)
    r = spmv.gmres(c, bc, x0=x_true + 1e-3, rtol=1e-10)
    assert r.converged and np.allclose(r.x, x_true, atol=1e-6)
    auto = spmv.solve(c, bc, tol=1e-10)
    assert auto.converged and auto.method == "gmres" and auto.method_auto.startswith("nonsymmetric")
    named = spmv.solve(c, bc, method="bicgstab", tol=1e-10)
    assert named.method == "bicgstab" and named.method_auto is None
    with pytest.raises(ValueError, match="method"):
        spmv.solve(c, bc, method="lsqr")
    with pytest.raises(ValueError, match="restart"):
        spmv.gmres(c, bc, restart=0)
    with pytest.raises(TypeError):
        spmv.gmres(c, bc, method="cg")  # the method is the function's own


def test_several_right_hand_sides_are_solved_together():
    a = spmv.generate("poisson2d:n=30").to_scipy()
    n = a.shape[0]
    x_true = np.stack([np.cos(np.arange(n)), np.sin(0.1 * np.arange(n)), np.zeros(n), np.ones(n)], axis=1)
    b = a @ x_true
    op = spmv.Matrix.from_scipy(a).to_device(format="csr-vector", device="cpu")
    r = spmv.cg(op, b, tol=1e-10)
    assert r.x.shape == b.shape and r.converged and len(r.columns) == 4
    assert np.allclose(r.x, x_true, atol=1e-6)
    # Each column has the bits, iterations and residuals of its own solve.
    for j, c in enumerate(r.columns):
        alone = spmv.cg(op, np.ascontiguousarray(b[:, j]), tol=1e-10)
        assert np.array_equal(c.x, alone.x) and c.iterations == alone.iterations, j
        assert (c.residual, c.true_residual, c.outcome) == (alone.residual, alone.true_residual, alone.outcome)
    assert r.columns[2].iterations == 0 and r.iterations == max(c.iterations for c in r.columns)
    # x0 and atol per column; auto on an indefinite matrix goes on to MINRES for every column.
    r0 = spmv.cg(op, b, x0=x_true + 1e-4, tol=1e-10, atol=1e-12)
    assert r0.converged and np.allclose(r0.x, x_true, atol=1e-6)
    shifted = (a - 1.3 * sp.identity(n)).tocsr()
    auto = spmv.solve(shifted, shifted @ x_true, tol=1e-10)
    assert auto.converged and all(c.method == "minres" for c in auto.columns if c.iterations)
    assert np.allclose(auto.x, x_true, atol=1e-6)
    with pytest.raises(ValueError, match="shape"):
        spmv.cg(op, b[:-1])
    with pytest.raises(ValueError, match="x0"):
        spmv.cg(op, b, x0=x_true[:, :2])
    with pytest.raises(ValueError, match="one at a time"):
        spmv.cg(a, b, devices=1)


def test_pagerank_ranks_sum_to_n():
    g = spmv.generate("kron:scale=10")
    r = spmv.pagerank(g, tol=1e-8)
    assert r.converged and abs(r.ranks.sum() - g.shape[0]) <= 1e-6 * g.shape[0]
    assert np.all(r.ranks > 0)


def test_bench_returns_checked_results():
    results = spmv.bench(
        ["poisson2d:n=20", spmv.generate("random:rows=300,mean=5")],
        formats="csr-vector,ell",
        precision="f64,f32",
        reps=2,
        warmup=1,
    )
    assert len(results) == 8
    assert all(r["status"] == "ok" for r in results), [r.get("error") for r in results]
    assert {"matrix", "format", "median_ms", "gflops"} <= set(results[0])


def test_report_draws_bench_results_and_solves(tmp_path):
    results = spmv.bench(["poisson2d:n=20", "kron:scale=8"], formats="csr-vector,ell,auto", reps=2, warmup=1)
    solved = spmv.solve(spmv.generate("poisson2d:n=20"), np.ones(400), method="auto", check_every=1)
    # The residual history: the start, every check, the stop.
    (attempt,) = solved.history
    assert attempt["method"] == "cg" and attempt["residuals"][0] == (0, 1.0)
    assert attempt["residuals"][-1] == (solved.iterations, solved.residual)
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"results": results}))
    page = spmv.report(results, solved, path)
    assert isinstance(page, spmv.Html) and page._repr_html_() == page
    assert page.startswith("<!DOCTYPE html>") and "</html>" in page
    for title in ["Roofline", "Speed relative to the best", "auto and tune against the best", "Convergence"]:
        assert title in page, title
    assert page.count("<svg") == 3  # roofline, auto, convergence (no multi-GPU results)
    with pytest.raises(TypeError, match="argument 1 is a int"):
        spmv.report(3)
    with pytest.raises(ValueError, match="nothing to show"):
        spmv.report([])


def test_errors_are_python_exceptions(tmp_path):
    op = spmv.generate("poisson2d:n=5").to_device(format="csr-scalar")
    with pytest.raises(ValueError, match="x has 3 entries"):
        op @ np.ones(3)
    with pytest.raises(TypeError, match="real numbers"):
        op @ np.ones(25, dtype=complex)
    with pytest.raises(TypeError, match="y holds float32"):
        op.apply(np.ones(25), np.ones(25, dtype=np.float32))
    with pytest.raises(ValueError, match="1-D or 2-D"):
        op @ np.ones((25, 2, 1))
    with pytest.raises(ValueError, match="nope"):
        spmv.generate("poisson2d:n=5").to_device(format="nope")
    with pytest.raises(ValueError, match="precision"):
        spmv.generate("poisson2d:n=5").to_device(precision="f8")
    with pytest.raises(OSError, match="no-such"):
        spmv.read(str(tmp_path / "no-such.mtx"))
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n2 2 1\n1 x 1.0\n")
    with pytest.raises(ValueError, match="line 3"):
        spmv.read(str(bad))
    with pytest.raises(ValueError, match="generator"):
        spmv.generate("poisson2d:n=-1")
    with pytest.raises(TypeError, match="scipy.sparse"):
        spmv.Matrix.from_scipy(np.eye(3))
    with pytest.raises(ValueError, match="square"):
        spmv.cg(sp.random(4, 3, density=0.5, format="csr"), np.ones(4))
    with pytest.raises(ValueError, match="tolerance"):
        spmv.cg(spmv.generate("poisson2d:n=5"), np.ones(25), tol=0)
    with pytest.raises(ValueError, match="f64 and f32"):
        spmv.cg(spmv.generate("poisson2d:n=5").to_device(precision="f16"), np.ones(25))
    with pytest.raises(ValueError, match="device"):
        spmv.generate("poisson2d:n=5").to_device(device="tpu")


def test_gzip_file_reads(tmp_path):
    p = tmp_path / "m.mtx.gz"
    with gzip.open(p, "wt") as f:
        f.write("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 2.0\n3 1 1.0\n")
    a = spmv.read(str(p)).to_scipy().toarray()
    assert a[0, 2] == 1.0 and a[2, 0] == 1.0 and a[0, 0] == 2.0


needs_gpu = pytest.mark.skipif(not GPU, reason=f"no GPU: {GPU_WHY}")


def test_devices_arguments_are_checked():
    m = spmv.generate("poisson2d:n=10")
    for bad in (0, [], [-1], "0,1", True):
        with pytest.raises(ValueError, match="devices"):
            spmv.cg(m, np.ones(100), devices=bad)
    with pytest.raises(ValueError, match="exchange"):
        spmv.cg(m, np.ones(100), devices=1, exchange="mpi")
    with pytest.raises(ValueError, match="not an Operator"):
        spmv.cg(m.to_device(device="cpu"), np.ones(100), devices=1)
    with pytest.raises(ValueError, match="needs a GPU"):
        spmv.pagerank(m, devices=1, device="cpu")
    with pytest.raises(ValueError, match="needs a GPU"):
        spmv.bench(m, devices=1, device="cpu")
    if not GPU:
        with pytest.raises(RuntimeError, match="device 0"):
            spmv.cg(m, np.ones(100), devices=1)


@needs_gpu
def test_several_parts_equal_one_gpu():
    # Parts on the devices there are (with one GPU, three parts share it), both exchanges.
    count = int(os.environ.get("SPMV_TEST_DEVICES", "1"))
    parts = [i % count for i in range(3)]
    m = spmv.generate("poisson3d:n=20")
    b = np.ones(m.shape[0])
    one = spmv.cg(m, b, tol=1e-10, format="csr-vector")
    for exchange in ("peer", "nccl"):
        r = spmv.cg(m, b, tol=1e-10, format="csr-vector", devices=parts, exchange=exchange)
        assert r.converged and abs(r.iterations - one.iterations) <= 2, (exchange, r)
        assert np.allclose(r.x, one.x, rtol=1e-8, atol=1e-10)
        assert len(r.part_formats) == 3 and r.halo_bytes > 0
        assert [p["name"] for p in r.setup][:3] == ["partition", "peer access", "renumber"], r.setup
        r32 = spmv.cg(m, b, tol=1e-5, precision="f32", devices=parts, exchange=exchange)
        assert r32.converged and r32.x.dtype == np.float32
        rb = spmv.bicgstab(m, b, tol=1e-10, precond="jacobi", devices=parts, exchange=exchange)
        assert rb.converged and np.allclose(rb.x, one.x, rtol=1e-7, atol=1e-9), (exchange, rb)
    g = spmv.generate("kron:scale=10")
    pr1 = spmv.pagerank(g, tol=1e-10)
    pr = spmv.pagerank(g, tol=1e-10, devices=parts)
    assert pr.converged and np.allclose(pr.ranks, pr1.ranks, atol=1e-8) and "parts" in pr.backend
    results = spmv.bench("poisson3d:n=16", formats="csr-vector,auto", devices=parts, reps=3, warmup=1)
    assert all(r["status"] == "ok" and r["devices"] == parts and r["halo_bytes"] > 0 for r in results), results


@needs_gpu
def test_cupy_arrays_are_used_in_place():
    cupy = pytest.importorskip("cupy")
    m = spmv.generate("poisson3d:n=20")
    a = m.to_scipy()
    op = m.to_device(device="gpu")
    x = cupy.asarray(np.random.default_rng(3).uniform(-1, 1, a.shape[1]))
    y0 = cupy.empty(a.shape[0])
    y = op.apply(x, y0)
    assert y is y0 and y.data.ptr == y0.data.ptr
    assert within_bound(a, cupy.asnumpy(x), cupy.asnumpy(y), "f64")
    y2 = op @ x
    assert isinstance(y2, cupy.ndarray) and bool(cupy.all(y2 == y))
    # On a non-default stream: ordered after the caller's work.
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        x2 = x * 2.0
        y3 = op @ x2
        s.synchronize()
    assert bool(cupy.allclose(y3, 2.0 * y))
    with pytest.raises(TypeError, match="float32"):
        op @ x.astype(cupy.float32)
    r = spmv.cg(op, cupy.ones(a.shape[0]))
    assert r.converged and isinstance(r.x, cupy.ndarray)


@needs_gpu
def test_torch_tensors_are_used_in_place():
    torch = torch_with_cuda()
    m = spmv.generate("poisson2d:n=50")
    a = m.to_scipy()
    op = m.to_device(device="gpu", precision="f32")
    x = torch.linspace(-1, 1, a.shape[1], device="cuda", dtype=torch.float32)
    y0 = torch.empty(a.shape[0], device="cuda", dtype=torch.float32)
    y = op.apply(x, y0)
    assert y is y0 and y.data_ptr() == y0.data_ptr()
    assert within_bound(a, x.cpu().numpy(), y.cpu().numpy(), "f32")
    assert (op @ x).device.type == "cuda"


# Issue 30: no silent wrong answer, no crash, every argument error naming its parameter.


def _alias_matrix():
    return sp.random(30, 30, density=0.3, format="csr", random_state=5)


def _alias_formats():
    return [f["name"] for f in spmv.formats()] + ["auto"]


@pytest.mark.parametrize("precision", ["f64", "f32"])
def test_aliased_x_and_y_give_the_product_of_x(precision):
    a = _alias_matrix()
    m = spmv.Matrix.from_scipy(a)
    failures = []
    for fmt in _alias_formats():
        try:
            op = m.to_device(format=fmt, precision=precision, device="cpu")
        except ValueError:
            continue  # a format that declines this matrix
        dtype = op.dtype
        x0 = np.linspace(-1, 1, 30).astype(dtype)
        b = x0.copy()
        got = op.apply(b, b)  # y is x
        if got is not b or not within_bound(a, x0, b, precision):
            failures.append(f"{fmt}: y is x")
        buf = np.concatenate([x0, [7.0]]).astype(dtype)
        op.apply(buf[:30], buf[1:])  # y overlaps x, shifted by one
        if not within_bound(a, x0, buf[1:], precision):
            failures.append(f"{fmt}: y overlaps x")
        b = x0.copy()
        op.apply(b, b, alpha=2.0, beta=-1.0)  # y = 2·A·x − x
        exact = 2.0 * (a @ x0.astype(np.float64)) - x0
        if np.max(np.abs(b - exact)) > 1e-4 * max(1.0, np.max(np.abs(exact))):
            failures.append(f"{fmt}: alpha, beta")
    assert not failures, failures


def test_raw_layer_takes_arrays_not_addresses():
    # A raw address used to be dereferenced (a segfault): run in a child so that today's
    # crash fails this test instead of ending the run.
    import subprocess
    import sys

    code = """
import numpy as np, spmv
from spmv import _spmv
def refused(f, *a):
    try:
        f(*a)
    except (TypeError, ValueError):
        return
    raise SystemExit(f"accepted {a!r}")
refused(_spmv.Csr.from_arrays, 3, 3, 8, 8, 8, 5)
op = spmv.generate("poisson2d:n=3").to_device(format="csr-scalar", device="cpu")._raw
refused(op.apply, 8, 9, 8, 9, 1.0, 0.0)
refused(op.apply, np.ones(9), np.ones(9)[::2], 1.0, 0.0)
refused(op.apply, np.ones(9), np.ones(9, np.float32), 1.0, 0.0)
refused(op.apply, np.ones(9), np.ones(9).view(np.int64), 1.0, 0.0)
refused(op.apply, np.ones(9), np.ones(12)[:8], 1.0, 0.0)
ro = np.ones(9)
ro.flags.writeable = False
refused(op.apply, np.ones(9), ro, 1.0, 0.0)
refused(op.apply, np.frombuffer(b"x" + np.ones(9).tobytes(), np.float64, offset=1), np.ones(9), 1.0, 0.0)
refused(_spmv.Csr.from_arrays, 2, 2, np.array([0, 1, 5]), np.array([0]), np.array([1.0]))
refused(_spmv.Csr.from_arrays, 2**64 - 1, 2, np.array([0]), np.array([], np.int32), np.array([]))
print("ok")
"""
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "ok" in run.stdout, (run.returncode, run.stdout, run.stderr)


def test_precision_range_is_checked():
    big = sp.csr_matrix(np.array([[1e5, 1.0], [0.0, 2.0]]))
    with pytest.raises(ValueError, match="f16"):
        spmv.Matrix.from_scipy(big).to_device(precision="f16")
    huge = sp.csr_matrix(np.array([[1e300, 1.0], [0.0, 2.0]]))
    with pytest.raises(ValueError, match="f32"):
        spmv.Matrix.from_scipy(huge).to_device(precision="f32")
    assert spmv.Matrix.from_scipy(big).to_device(precision="f32") is not None
    op = spmv.Matrix.from_scipy(sp.identity(3, format="csr")).to_device(precision="f16", device="cpu")
    with pytest.raises(ValueError, match=r"x\[1\] = 100000"):
        op @ np.array([1.0, 1e5, 2.0])
    with pytest.raises(ValueError, match=r"b\[0\]"):
        spmv.cg(spmv.generate("poisson2d:n=3").to_device(precision="f32"), np.full(9, 1e300))
    assert np.all(op @ np.array([1.0, np.inf, 2.0]) == np.array([1.0, np.inf, 2.0], np.float16))


def test_scipy_indices_keep_their_values():
    wide = sp.csr_matrix((np.array([1.0, 2.0]), np.array([5, 2**31 + 5]), np.array([0, 2])), shape=(1, 2**32))
    back = spmv.Matrix.from_scipy(wide).to_scipy()
    assert list(back.indices) == [5, 2**31 + 5] and back.shape == (1, 2**32)
    minus = sp.csr_matrix((np.array([1.0]), np.array([-1]), np.array([0, 1])), shape=(1, 2**32))
    with pytest.raises(ValueError, match="-1"):
        spmv.Matrix.from_scipy(minus)
    small = sp.csr_matrix((np.array([1.0]), np.array([-1], np.int32), np.array([0, 1, 1, 1], np.int32)), shape=(3, 3))
    with pytest.raises(ValueError, match="-1") as e:
        spmv.Matrix.from_scipy(small)
    assert "4294967295" not in str(e.value)
    with pytest.raises(ValueError, match="not finite"):
        spmv.Matrix.from_scipy(sp.csr_matrix(np.array([[np.nan, 1.0]])))


def test_argument_errors_name_the_parameter():
    m = spmv.generate("poisson2d:n=4")
    op = m.to_device(device="cpu")
    b = np.ones(16)
    cases = [
        (ValueError, "max_iter", lambda: spmv.cg(m, b, max_iter=-1)),
        (ValueError, "max_iter", lambda: spmv.bicgstab(m, b, max_iter=2**64)),
        (ValueError, "check_every", lambda: spmv.cg(m, b, check_every=0)),
        (TypeError, "tol", lambda: spmv.cg(m, b, tol="small")),
        (TypeError, "max_iter", lambda: spmv.cg(m, b, max_iter=2.5)),
        (TypeError, "graph", lambda: spmv.cg(m, b, graph="yes")),
        (ValueError, "max_iter", lambda: spmv.cg(m, b, devices=1, max_iter=-1)),
        (ValueError, "reps", lambda: spmv.bench(m, reps=10**12, device="cpu")),
        (ValueError, "reps", lambda: spmv.bench(m, reps=0, device="cpu")),
        (ValueError, "warmup", lambda: spmv.bench(m, warmup=-1, device="cpu")),
        (TypeError, "formats", lambda: spmv.bench(m, formats=3, device="cpu")),
        (TypeError, "names", lambda: spmv.bench(m, names=[1], device="cpu")),
        (ValueError, "max_iter", lambda: spmv.pagerank(m, max_iter=-1)),
        (TypeError, "alpha", lambda: spmv.pagerank(m, alpha="x")),
        (TypeError, "weighted", lambda: spmv.pagerank(m, weighted=None)),
        (ValueError, "devices", lambda: spmv.cg(m, b, devices=[0.5])),
        (ValueError, "devices", lambda: spmv.cg(m, b, devices=10**12)),
        (TypeError, "alpha", lambda: op.apply(b, alpha=1j)),
        (TypeError, "beta", lambda: op.apply(b, np.ones(16), beta="1")),
        (TypeError, "format", lambda: m.to_device(format=3)),
        (TypeError, "precision", lambda: m.to_device(precision=3)),
        (TypeError, "spec", lambda: spmv.generate(3)),
        (TypeError, "path", lambda: spmv.read(3)),
        (ValueError, "y", lambda: op.apply(b, np.ones(32)[::2])),
        (ValueError, "y", lambda: op.apply(b, np.ones(15))),
        (TypeError, "y holds float32", lambda: op.apply(b, np.ones(16, np.float32))),
    ]
    assert_refused(cases)
    ro = np.ones(16)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="y"):
        op.apply(b, ro)


def test_read_takes_file_objects_bytes_and_paths(tmp_path):
    text = "%%MatrixMarket matrix coordinate real general\n2 2 1\n2 1 3.0\n"
    p = tmp_path / "m.mtx"
    p.write_text(text)
    for source in (p, str(p), bytes(p), str(p).encode()):
        assert spmv.read(source).to_scipy()[1, 0] == 3.0
    with open(p, "rb") as f:
        assert spmv.read(f).nnz == 1
    with open(p) as f:
        assert spmv.read(f).nnz == 1
    gz = tmp_path / "m.mtx.gz"
    with gzip.open(gz, "wt") as f:
        f.write(text)
    with open(gz, "rb") as f:
        assert spmv.read(f).nnz == 1


@needs_gpu
def test_cuda_aliasing_and_made_up_arrays():
    cupy = pytest.importorskip("cupy")
    a = _alias_matrix()
    m = spmv.Matrix.from_scipy(a)
    x0 = np.linspace(-1, 1, 30)
    failures = []
    for fmt in _alias_formats():
        try:
            op = m.to_device(format=fmt, device="gpu")
        except ValueError:
            continue
        b = cupy.asarray(x0)
        if op.apply(b, b) is not b or not within_bound(a, x0, cupy.asnumpy(b), "f64"):
            failures.append(f"{fmt}: y is x")
        buf = cupy.asarray(np.concatenate([x0, [7.0]]))
        op.apply(buf[:30], buf[1:])
        if not within_bound(a, x0, cupy.asnumpy(buf[1:]), "f64"):
            failures.append(f"{fmt}: y overlaps x")
    assert not failures, failures

    op = m.to_device(format="csr-vector", device="gpu")
    real = cupy.ones(30)

    class Fake:
        def __init__(self, **changes):
            cai = dict(real.__cuda_array_interface__)
            cai.update(changes)
            self.__cuda_array_interface__ = cai

    host = np.ones(30)
    small = cupy.cuda.runtime.malloc(240)  # 30 float64, alone in its allocation
    for fake in (
        Fake(data=(8, False)),  # not an allocation
        Fake(data=(host.ctypes.data, False)),  # host memory
        Fake(data=(small + 8, False)),  # runs 8 bytes past the allocation's end
        Fake(strides=(16,)),
        Fake(shape=(30, 1)),
        Fake(stream=0),
        Fake(data="nonsense"),
    ):
        with pytest.raises((ValueError, TypeError)):
            op.apply(fake, cupy.empty(30))
        with pytest.raises((ValueError, TypeError)):
            op.apply(cupy.ones(30), fake)
    cupy.cuda.runtime.free(small)
    # A CPU operator with a CuPy y writes the caller's y.
    y = cupy.zeros(30)
    cpu = m.to_device(format="csr-vector", device="cpu")
    assert cpu.apply(cupy.asarray(x0), y) is y and within_bound(a, x0, cupy.asnumpy(y), "f64")


@needs_gpu
def test_torch_aliasing():
    torch = torch_with_cuda()
    a = _alias_matrix()
    op = spmv.Matrix.from_scipy(a).to_device(format="auto", device="gpu")
    x0 = np.linspace(-1, 1, 30)
    t = torch.tensor(x0, device="cuda")
    assert op.apply(t, t) is t and within_bound(a, x0, t.cpu().numpy(), "f64")
    buf = torch.tensor(np.concatenate([x0, [7.0]]), device="cuda")
    op.apply(buf[:30], buf[1:])
    assert within_bound(a, x0, buf[1:].cpu().numpy(), "f64")
