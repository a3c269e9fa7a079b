"""Issue 31, item 5: spmv.Operator follows SciPy's LinearOperator protocol (shape, dtype,
matvec, rmatvec, matmat, rmatmat, .T, .H, dot, @ with 1-D and 2-D arrays), so that SciPy's
aslinearoperator and solvers (and, with CuPy arrays, cupyx.scipy's) take it; blocks go to the
extension in one call; scipy sparse arrays are taken like matrices; a float32 matrix gives a
float32 operator; the solvers take SciPy's argument names (x0, rtol, atol, maxiter, M,
callback). CuPy and PyTorch parts run on a GPU machine and are skipped elsewhere."""

import ctypes
import inspect

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from conftest import assert_refused, torch_with_cuda

import spmv

GPU, GPU_WHY = spmv.gpu_available()
needs_gpu = pytest.mark.skipif(not GPU, reason=f"no GPU: {GPU_WHY}")
TOL = {np.dtype(np.float64): 1e-12, np.dtype(np.float32): 2e-5}


def close(got, want, dtype):
    """|got − want| ≤ tol·max|want| (the relative tolerance of the dtype)."""
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    assert np.max(np.abs(got - want), initial=0.0) <= TOL[np.dtype(dtype)] * scale


def rect(seed=3, m=37, n=29):
    return sp.random(m, n, density=0.2, format="csr", random_state=seed) + sp.eye(m, n, format="csr")


def spd(n=30):
    """poisson2d:n=n as scipy (symmetric positive definite)."""
    return spmv.generate(f"poisson2d:n={n}").to_scipy()


def cpu_op(a, precision=None, format="auto"):
    return spmv.Matrix.from_scipy(a).to_device(format=format, precision=precision, device="cpu")


def test_protocol_attributes():
    op = cpu_op(rect())
    assert op.shape == (37, 29) and op.ndim == 2
    assert isinstance(op.dtype, np.dtype) and op.dtype == np.float64
    t = op.T
    assert t.shape == (29, 37) and t.dtype == op.dtype and t.T is op
    assert op.H.shape == (29, 37) and op.adjoint().shape == (29, 37) and op.transpose().T is op
    assert "spmv.Operator" in repr(t) and repr(t).endswith(".T")


def test_aslinearoperator_takes_the_operator():
    a = rect()
    op = cpu_op(a)
    lin = spla.aslinearoperator(op)
    assert lin.shape == op.shape and lin.dtype == np.float64
    x = np.random.default_rng(1).uniform(-1, 1, 29)
    y = np.random.default_rng(2).uniform(-1, 1, 37)
    close(lin.matvec(x), a @ x, np.float64)
    close(lin.rmatvec(y), a.T @ y, np.float64)
    close(lin @ x, a @ x, np.float64)
    x2 = np.random.default_rng(3).uniform(-1, 1, (29, 3))
    close(lin.matmat(x2), a @ x2, np.float64)
    close(lin.T @ y, a.T @ y, np.float64)
    # And the transposed view, its own way.
    lt = spla.aslinearoperator(op.T)
    close(lt.matvec(y), a.T @ y, np.float64)
    close(lt.rmatvec(x), a @ x, np.float64)


def test_scipy_solvers_on_an_operator():
    a = spd(20)
    n = a.shape[0]
    b = np.sin(np.arange(n) + 1.0)
    op = cpu_op(a)
    want = spla.spsolve(a.tocsc(), b)
    x, info = spla.cg(op, b, rtol=1e-12, atol=0.0, maxiter=5000)
    assert info == 0 and np.allclose(x, want, rtol=0, atol=1e-9 * np.max(np.abs(want)))
    x, info = spla.gmres(op, b, rtol=1e-12, atol=0.0, restart=200, maxiter=50)
    assert info == 0 and np.allclose(x, want, rtol=0, atol=1e-8 * np.max(np.abs(want)))
    # lsqr uses rmatvec: a rectangular least-squares problem.
    r = rect(5, 60, 25)
    br = np.cos(np.arange(60.0))
    got = spla.lsqr(cpu_op(r), br, atol=1e-14, btol=1e-14, iter_lim=2000)[0]
    ref = np.linalg.lstsq(r.toarray(), br, rcond=None)[0]
    assert np.allclose(got, ref, rtol=0, atol=1e-8 * np.max(np.abs(ref)))
    # On the transposed view as well (A symmetric: the same system).
    x, info = spla.cg(op.T, b, rtol=1e-12, atol=0.0, maxiter=5000)
    assert info == 0 and np.allclose(x, want, rtol=0, atol=1e-9 * np.max(np.abs(want)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("k", [1, 2, 3, 8])
@pytest.mark.parametrize("order", ["C", "F"])
def test_blocks_in_both_orders(dtype, k, order):
    a = rect(7).astype(dtype)
    op = cpu_op(a)
    assert op.dtype == dtype
    rng = np.random.default_rng(k)
    x = np.asarray(rng.uniform(-1, 1, (29, k)), dtype=dtype, order=order)
    y = op @ x
    assert y.dtype == dtype and y.shape == (37, k)
    # The caller's layout comes back (a one-column block is both C and F).
    assert y.flags.c_contiguous if order == "C" else y.flags.f_contiguous
    close(y, a.astype(np.float64) @ x.astype(np.float64), dtype)
    close(op.matmat(x), a.astype(np.float64) @ x.astype(np.float64), dtype)
    close(op.dot(x), a.astype(np.float64) @ x.astype(np.float64), dtype)
    # Transposed: op.T @ Y, rmatmat, in the same order.
    yt = np.asarray(rng.uniform(-1, 1, (37, k)), dtype=dtype, order=order)
    want = a.T.astype(np.float64) @ yt.astype(np.float64)
    got = op.T @ yt
    assert got.shape == (29, k) and got.dtype == dtype
    assert got.flags.c_contiguous if order == "C" else got.flags.f_contiguous
    close(got, want, dtype)
    close(op.rmatmat(yt), want, dtype)
    close(op.H.matmat(yt), want, dtype)
    # alpha, beta and a given y (written in place, in its own order).
    y0 = np.asarray(rng.uniform(-1, 1, (37, k)), dtype=dtype, order=order)
    out = y0.copy(order="K")
    assert op.apply(x, out, alpha=2.0, beta=-0.5) is out
    close(out, 2.0 * (a.astype(np.float64) @ x.astype(np.float64)) - 0.5 * y0, dtype)
    out_t = np.zeros((29, k), dtype=dtype, order="F" if order == "C" else "C")  # the other order
    assert op.T.apply(yt, out_t, beta=1.0) is out_t
    close(out_t, want, dtype)


def test_blocks_with_other_strides_and_the_gpu_path_on_the_host():
    a = rect(9)
    op = cpu_op(a)
    base = np.random.default_rng(4).uniform(-1, 1, (29, 10))
    x = base[:, ::3]  # neither C nor F: copied to C order
    assert not x.flags.c_contiguous and not x.flags.f_contiguous
    y = op @ x
    assert y.flags.c_contiguous
    close(y, a @ x, np.float64)
    # Integer blocks are converted, lists too.
    close(op @ np.ones((29, 2), dtype=np.int32), a @ np.ones((29, 2)), np.float64)
    close(op @ ([[1.0]] * 29), a @ np.ones((29, 1)), np.float64)
    # A block of 0 vectors.
    assert (op @ np.ones((29, 0))).shape == (37, 0)


@pytest.mark.parametrize("order", ["C", "F"])
def test_aliased_blocks_give_the_product_of_x(order):
    a = spd(6)  # 36 x 36, symmetric: Aᵀ = A
    op = cpu_op(a, format="csr-vector")
    x0 = np.asarray(np.random.default_rng(5).uniform(-1, 1, (36, 4)), order=order)
    for view in (op, op.T):
        b = x0.copy(order="K")
        assert view.apply(b, b) is b  # Y is X
        close(b, a @ x0, np.float64)
        b = x0.copy(order="K")
        view.apply(b, b, alpha=2.0, beta=-1.0)
        close(b, 2.0 * (a @ x0) - x0, np.float64)


def test_a_block_is_one_call_to_the_extension(monkeypatch):
    op = cpu_op(rect())
    calls = []
    raw = op._raw

    class Spy:
        def __getattr__(self, name):
            return getattr(raw, name)

        def apply(self, *args):
            calls.append(args[4:])
            return raw.apply(*args)

    monkeypatch.setattr(op, "_raw", Spy())
    op @ np.ones((29, 8))
    op @ np.ones((29, 8), order="F")
    op.T @ np.ones((37, 5))
    assert calls == [(False, 8, False), (False, 8, True), (True, 5, False)], calls


def test_vectors_matvec_rmatvec_and_column_vectors():
    a = rect(11)
    op = cpu_op(a)
    x = np.linspace(-1, 1, 29)
    y = np.linspace(-2, 1, 37)
    close(op.matvec(x), a @ x, np.float64)
    assert op.matvec(x).shape == (37,)
    col = op.matvec(x.reshape(29, 1))
    assert col.shape == (37, 1)
    close(col[:, 0], a @ x, np.float64)
    close(op.rmatvec(y), a.T @ y, np.float64)
    assert op.rmatvec(y.reshape(37, 1)).shape == (29, 1)
    close(op.T @ y, a.T @ y, np.float64)
    close(op.H @ y, a.T @ y, np.float64)
    close(op.T.matvec(y), a.T @ y, np.float64)
    close(op.T.rmatvec(x), a @ x, np.float64)
    close(op.dot(x), a @ x, np.float64)
    out = np.full(29, 1.0)
    assert op.T.apply(y, out, alpha=3.0, beta=2.0) is out
    close(out, 3.0 * (a.T @ y) + 2.0, np.float64)


def test_wrong_shapes_name_the_shapes():
    op = cpu_op(rect())  # 37 x 29
    cases = [
        (lambda: op @ np.ones((30, 2)), r"\(30, 2\).*37 x 29"),
        (lambda: op @ np.ones(30), "30 entries"),
        (lambda: op.T @ np.ones(29), r"29 entries.*transpose of the 37 x 29"),
        (lambda: op.T @ np.ones((29, 4)), r"\(29, 4\).*transpose"),
        (lambda: op.matvec(np.ones((29, 2))), r"matvec: x has shape \(29, 2\)"),
        (lambda: op.rmatvec(np.ones(29)), r"rmatvec: x has shape \(29,\)"),
        (lambda: op.matmat(np.ones(29)), r"matmat: X must be 2-D, not of shape \(29,\)"),
        (lambda: op.rmatmat(np.ones((37, 2, 1))), r"rmatmat: X must be 2-D"),
        (lambda: op @ np.ones((29, 2, 1)), "1-D or 2-D"),
        (lambda: op.apply(np.ones((29, 3)), np.ones((37, 2))), r"y has shape \(37, 2\).*\(37, 3\)"),
        (lambda: op.apply(np.ones((29, 3)), np.ones((37, 6))[:, ::2]), "C- or F-contiguous"),
    ]
    for call, pattern in cases:
        with pytest.raises(ValueError, match=pattern):
            call()
    with pytest.raises(TypeError):
        op @ 2.0
    with pytest.raises(TypeError, match="dot"):
        op.dot(2.0)
    with pytest.raises(TypeError, match="float32"):
        op.apply(np.ones((29, 3)), np.ones((37, 3), dtype=np.float32))
    with pytest.raises(TypeError, match="real numbers"):
        op @ np.ones((29, 2), dtype=complex)


@pytest.mark.parametrize("kind", ["csr_array", "coo_array", "csc_array", "bsr_array", "dok_array", "lil_array"])
def test_scipy_sparse_arrays_are_taken(kind):
    a = rect(13)
    arr = getattr(sp, kind)(a)
    x = np.linspace(-1, 1, 29)
    close(spmv.Matrix.from_scipy(arr).to_device(device="cpu") @ x, a @ x, np.float64)
    close(spmv.aslinearoperator(arr, device="cpu") @ x, a @ x, np.float64)
    s = getattr(sp, kind)(spd(10))
    b = np.ones(100)
    r = spmv.cg(s, b, tol=1e-10)
    assert r.converged and np.allclose(spd(10) @ r.x, b, atol=1e-8)
    assert spmv.bicgstab(s, b, tol=1e-10).converged


def test_precision_follows_the_matrix_dtype():
    a = rect(17)
    assert spmv.Matrix.from_scipy(a.astype(np.float32)).default_precision == "f32"
    assert spmv.Matrix.from_scipy(a).default_precision == "f64"
    assert spmv.Matrix.from_scipy(sp.csr_array(np.eye(3, dtype=np.int64))).default_precision == "f64"
    assert spmv.generate("poisson2d:n=3").default_precision == "f64"
    op32 = cpu_op(a.astype(np.float32))
    assert op32.precision == "f32" and op32.dtype == np.float32
    assert (op32 @ np.ones(29)).dtype == np.float32
    assert (op32 @ np.ones((29, 3))).dtype == np.float32
    # scipy.sparse holds no float16; a Matrix told "f16" gives f16 operators.
    half = spmv.Matrix(spmv.Matrix.from_scipy(a)._csr, "f16")
    assert half.to_device(device="cpu").dtype == np.float16
    # Told otherwise, it is.
    assert cpu_op(a.astype(np.float32), precision="f64").dtype == np.float64
    assert spmv.aslinearoperator(sp.csr_array(a.astype(np.float32)), device="cpu").dtype == np.float32
    # The solvers follow it too (float16 runs in f32: the solvers run in f64 and f32).
    s = spd(10)
    r = spmv.cg(s.astype(np.float32), np.ones(100, np.float32), tol=1e-5)
    assert r.converged and r.x.dtype == np.float32
    r = spmv.cg(spmv.Matrix(spmv.Matrix.from_scipy(s)._csr, "f16"), np.ones(100), tol=1e-4)
    assert r.converged and r.x.dtype == np.float32
    assert spmv.cg(s.astype(np.float32), np.ones(100), tol=1e-10, precision="f64").x.dtype == np.float64


def test_cg_takes_scipys_arguments():
    a = spd(30)
    n = a.shape[0]
    x_true = np.sin(np.arange(n) * 0.1)
    b = a @ x_true
    base = spmv.cg(a, b, tol=1e-10)
    # rtol and maxiter are tol and max_iter.
    r = spmv.cg(a, b, rtol=1e-10, maxiter=10_000)
    assert r.converged and r.iterations == base.iterations and np.array_equal(r.x, base.x)
    short = spmv.cg(a, b, maxiter=5)
    assert short.outcome == "not_converged" and short.iterations == 5
    # x0: the answer itself stops after one iteration (on b − A·x0, rounding's residue);
    # a nearby start needs fewer iterations than 0.
    r = spmv.cg(a, b, x0=x_true, tol=1e-10)
    assert r.converged and r.iterations <= 1 and np.allclose(r.x, x_true, rtol=0, atol=1e-12)
    zero = spmv.cg(a, np.zeros(n), x0=np.zeros(n))
    assert zero.converged and zero.iterations == 0 and not np.any(zero.x)
    near = x_true + 1e-6 * np.cos(np.arange(n))
    r = spmv.cg(a, b, near, tol=1e-10)
    assert r.converged and r.iterations < base.iterations
    assert np.linalg.norm(b - a @ r.x) <= 2e-10 * np.linalg.norm(b)
    assert np.allclose(r.x, x_true, atol=1e-7)
    assert r.true_residual <= 2e-10  # relative to ‖b‖, not to ‖b − A·x0‖
    # atol: the absolute floor ‖r‖ ≤ max(rtol·‖b‖, atol).
    bnorm = np.linalg.norm(b)
    r = spmv.cg(a, b, rtol=1e-14, atol=1e-4 * bnorm)
    assert r.converged and r.iterations < base.iterations
    assert np.linalg.norm(b - a @ r.x) <= 2e-4 * bnorm
    assert r.true_residual <= 2e-4
    r = spmv.cg(a, b, rtol=0, atol=1e-6 * bnorm)
    assert r.converged and np.linalg.norm(b - a @ r.x) <= 2e-6 * bnorm
    # M: Jacobi by name, as precond.
    rm = spmv.cg(a, b, tol=1e-10, M="jacobi")
    rp = spmv.cg(a, b, tol=1e-10, precond="jacobi")
    assert rm.iterations == rp.iterations and np.array_equal(rm.x, rp.x)
    # callback: once, at the end, with x.
    seen = []
    r = spmv.cg(a, b, tol=1e-10, callback=seen.append)
    assert len(seen) == 1 and seen[0] is r.x
    # BiCGSTAB takes them too, and SciPy's positional x0.
    c = (a + sp.diags([0.3 * np.ones(n - 1)], [1])).tocsr()
    rb = spmv.bicgstab(c, c @ x_true, x_true + 1e-3, rtol=1e-10, maxiter=5000, M="jacobi", callback=seen.append)
    assert rb.converged and np.allclose(rb.x, x_true, atol=1e-7) and seen[-1] is rb.x
    # On an Operator, with x0 as well.
    op = cpu_op(a)
    r = spmv.cg(op, b, near, rtol=1e-10)
    assert r.converged and np.allclose(r.x, x_true, atol=1e-7)


def test_solver_argument_errors_name_the_argument():
    a = spd(5)
    b = np.ones(25)
    cases = [
        (ValueError, "tol", lambda: spmv.cg(a, b, tol=1e-6, rtol=1e-8)),
        (ValueError, "max_iter", lambda: spmv.cg(a, b, max_iter=5, maxiter=6)),
        (ValueError, "maxiter", lambda: spmv.cg(a, b, maxiter=0)),
        (TypeError, "maxiter", lambda: spmv.cg(a, b, maxiter=2.5)),
        (TypeError, "rtol", lambda: spmv.cg(a, b, rtol="x")),
        (ValueError, "rtol", lambda: spmv.cg(a, b, rtol=-1.0)),
        (ValueError, "atol", lambda: spmv.cg(a, b, atol=-1.0)),
        (TypeError, "atol", lambda: spmv.cg(a, b, atol=None)),
        (TypeError, "Jacobi", lambda: spmv.cg(a, b, M=sp.identity(25))),
        (TypeError, "Jacobi", lambda: spmv.bicgstab(a, b, M=spla.aslinearoperator(sp.identity(25)))),
        (ValueError, "M", lambda: spmv.cg(a, b, M="ilu")),
        (ValueError, "precond", lambda: spmv.cg(a, b, M="jacobi", precond="none")),
        (TypeError, "callback", lambda: spmv.cg(a, b, callback=3)),
        (ValueError, "x0", lambda: spmv.cg(a, b, np.ones(24))),
        (ValueError, "x0", lambda: spmv.cg(a, b, np.ones((25, 2)))),
        (ValueError, "tolerance", lambda: spmv.cg(a, b, rtol=0)),
        (ValueError, "max_iter", lambda: spmv.cg(a, b, devices=1, maxiter=3, max_iter=4)),
        (TypeError, "Operator", lambda: spmv.cg(cpu_op(a).T, b)),
    ]
    assert_refused(cases)


class HostAsCuda:
    """A NumPy array presented through ``__cuda_array_interface__`` only (a CUDA array of a
    library spmv does not know), for the CUDA path's layout logic without a GPU."""

    def __init__(self, arr):
        self.arr = arr
        strides = None if arr.flags.c_contiguous else arr.strides
        self.__cuda_array_interface__ = {
            "shape": arr.shape,
            "typestr": arr.dtype.str,
            "data": (arr.ctypes.data, False),
            "strides": strides,
            "version": 3,
        }


class StandInDevice:
    """The extension's operator with its CUDA product done on the host by scipy on the memory the
    arrays' interfaces describe (1-D, no strides: what the extension takes), recording calls."""

    def __init__(self, raw, a):
        self.raw, self.a, self.calls = raw, a, []
        self.on_gpu = True

    def __getattr__(self, name):
        return getattr(self.raw, name)

    @staticmethod
    def _memory(v):
        cai = v.__cuda_array_interface__
        assert len(cai["shape"]) == 1 and cai["strides"] is None, cai
        n = cai["shape"][0]
        return np.frombuffer((ctypes.c_double * n).from_address(cai["data"][0]), dtype=np.float64)

    def apply(self, x, y, alpha, beta, transpose=False, k=None, col_major=False, cuda=False):
        assert cuda, "a CUDA array goes to the CUDA product"
        self.calls.append((transpose, k, col_major))
        a = self.a.T if transpose else self.a
        xs, ys = self._memory(x), self._memory(y)
        if k is None:
            ys[:] = alpha * (a @ xs) + (beta * ys if beta else 0.0)
            return
        order = "F" if col_major else "C"
        xb, yb = xs.reshape(-1, k, order=order), ys.reshape(-1, k, order=order)
        yb[...] = alpha * (a @ xb) + (beta * yb if beta else 0.0)


def test_the_cuda_path_passes_blocks_flat_in_their_layout(monkeypatch):
    a = rect(29)
    op = cpu_op(a)
    dev = StandInDevice(op._raw, a)
    monkeypatch.setattr(op, "_raw", dev)
    rng = np.random.default_rng(8)
    for k, order, transpose, flag in [
        (3, "C", False, False),
        (3, "F", False, True),
        (3, "F", True, True),
        (3, "C", True, False),
        (1, "C", True, False),
        (1, "F", False, False),
    ]:
        view = op.T if transpose else op
        rows, cols = view.shape
        x = np.asarray(rng.uniform(-1, 1, (cols, k)), order=order)
        y = np.asarray(np.ones((rows, k)), order=order)
        out = HostAsCuda(y)
        dev.calls.clear()
        assert view.apply(HostAsCuda(x), out, alpha=2.0, beta=1.0) is out
        assert dev.calls == [(transpose, k, flag)], (k, order, transpose, dev.calls)
        close(y, 2.0 * ((a.T if transpose else a) @ x) + 1.0, np.float64)
    y = np.zeros(37)
    op.apply(HostAsCuda(np.ones(29)), HostAsCuda(y))
    close(y, a @ np.ones(29), np.float64)
    assert dev.calls[-1] == (False, None, False)
    y = np.zeros(29)
    op.T.apply(HostAsCuda(np.ones(37)), HostAsCuda(y))
    close(y, a.T @ np.ones(37), np.float64)
    assert dev.calls[-1] == (True, None, False)
    # A block in neither order needs a copy, which only CuPy and PyTorch can make; no y to
    # write into, neither; wrong shapes name them.
    with pytest.raises(TypeError, match="copied by its library"):
        op.T.apply(HostAsCuda(np.ones((37, 4))[:, ::2]), HostAsCuda(np.ones((29, 2))))
    with pytest.raises(TypeError, match="pass y="):
        op @ HostAsCuda(np.ones((29, 2)))
    with pytest.raises(ValueError, match=r"\(28, 2\)"):
        op.apply(HostAsCuda(np.ones((28, 2))), HostAsCuda(np.ones((37, 2))))
    with pytest.raises(ValueError, match="contiguous"):
        op.apply(HostAsCuda(np.ones((29, 2))), HostAsCuda(np.ones((37, 4))[:, ::2]))


# With a GPU: CuPy arrays and PyTorch CUDA tensors in, the same kind out.


def _gpu_op(a, precision=None):
    return spmv.Matrix.from_scipy(a).to_device(device="gpu", precision=precision)


@needs_gpu
@pytest.mark.parametrize("on_gpu", [True, False])
def test_cupy_vectors_and_blocks(on_gpu):
    cupy = pytest.importorskip("cupy")
    a = rect(19)
    m = spmv.Matrix.from_scipy(a)
    op = m.to_device(device="gpu" if on_gpu else "cpu")
    x = np.linspace(-1, 1, 29)
    y = op @ cupy.asarray(x)
    assert isinstance(y, cupy.ndarray) and y.shape == (37,)
    close(cupy.asnumpy(y), a @ x, np.float64)
    yt = op.T @ cupy.asarray(np.linspace(-1, 2, 37))
    assert isinstance(yt, cupy.ndarray)
    close(cupy.asnumpy(yt), a.T @ np.linspace(-1, 2, 37), np.float64)
    for k in (1, 2, 3, 8):
        for order in ("C", "F"):
            xh = np.asarray(np.random.default_rng(k).uniform(-1, 1, (29, k)), order=order)
            xd = cupy.asarray(xh, order=order)
            yd = op @ xd
            assert isinstance(yd, cupy.ndarray) and yd.shape == (37, k)
            assert yd.flags.c_contiguous if order == "C" else yd.flags.f_contiguous
            close(cupy.asnumpy(yd), a @ xh, np.float64)
            wh = np.asarray(np.random.default_rng(k + 9).uniform(-1, 1, (37, k)), order=order)
            td = op.rmatmat(cupy.asarray(wh, order=order))
            assert isinstance(td, cupy.ndarray) and td.shape == (29, k)
            assert td.flags.c_contiguous if order == "C" else td.flags.f_contiguous
            close(cupy.asnumpy(td), a.T @ wh, np.float64)
            # In place, alpha and beta, a y in the other order.
            out = cupy.ones((37, k), order="F" if order == "C" else "C")
            assert op.apply(xd, out, alpha=2.0, beta=1.0) is out
            close(cupy.asnumpy(out), 2.0 * (a @ xh) + 1.0, np.float64)
            out_t = cupy.ones((29, k), order=order)
            assert op.T.apply(cupy.asarray(wh, order=order), out_t, beta=-1.0) is out_t
            close(cupy.asnumpy(out_t), a.T @ wh - 1.0, np.float64)
    # Aᵀ through each path: the same products; a CPU operator has no path to set.
    wh = np.random.default_rng(5).uniform(-1, 1, (37, 4))
    if on_gpu:
        assert op.transpose_path == "auto"
        for path in ("one-off", "copy", "auto"):
            op.transpose_path = path
            assert op.transpose_path == path
            close(cupy.asnumpy(op.rmatmat(cupy.asarray(wh))), a.T @ wh, np.float64)
        with pytest.raises(ValueError, match="expected auto, copy or one-off"):
            op.transpose_path = "scatter"
    else:
        with pytest.raises(ValueError, match="keeps Aᵀ in CSR"):
            op.transpose_path = "copy"
    # Other strides: copied.
    big = cupy.asarray(np.random.default_rng(2).uniform(-1, 1, (29, 9)))
    close(cupy.asnumpy(op @ big[:, ::3]), a @ cupy.asnumpy(big[:, ::3]), np.float64)
    close(cupy.asnumpy(op @ big[:, 1]), a @ cupy.asnumpy(big[:, 1]), np.float64)
    with pytest.raises(ValueError, match=r"\(30, 2\)"):
        op @ cupy.ones((30, 2))


@needs_gpu
def test_cupyx_solvers_take_the_operator():
    cupy = pytest.importorskip("cupy")
    cla = pytest.importorskip("cupyx.scipy.sparse.linalg")
    a = spd(20)
    op = _gpu_op(a)
    b = np.sin(np.arange(a.shape[0]) + 1.0)
    want = spla.spsolve(a.tocsc(), b)
    lin = cla.aslinearoperator(op)
    assert lin.shape == op.shape and lin.dtype == np.float64

    def tol(solver):  # CuPy's solvers name the tolerance tol, as SciPy's did (rtol now)
        return "rtol" if "rtol" in inspect.signature(solver).parameters else "tol"

    x, info = cla.cg(op, cupy.asarray(b), maxiter=5000, **{tol(cla.cg): 1e-12})
    assert info == 0 and isinstance(x, cupy.ndarray)
    assert np.allclose(cupy.asnumpy(x), want, atol=1e-8 * np.max(np.abs(want)))
    x, info = cla.gmres(op, cupy.asarray(b), restart=200, maxiter=50, **{tol(cla.gmres): 1e-12})
    assert info == 0 and np.allclose(cupy.asnumpy(x), want, atol=1e-7 * np.max(np.abs(want)))
    r = spmv.cg(op, cupy.asarray(b), x0=cupy.asarray(want * 0.5), rtol=1e-10, callback=lambda x: None)
    assert r.converged and isinstance(r.x, cupy.ndarray)


@needs_gpu
def test_torch_tensors_in_torch_out():
    torch = torch_with_cuda()
    a = rect(23)
    op = _gpu_op(a, precision="f32")
    a32 = a.astype(np.float32)
    x = torch.linspace(-1, 1, 29, device="cuda", dtype=torch.float32)
    y = op @ x
    assert isinstance(y, torch.Tensor) and y.device.type == "cuda" and y.shape == (37,)
    close(y.cpu().numpy(), a32 @ x.cpu().numpy(), np.float32)
    yt = op.rmatvec(torch.ones(37, device="cuda", dtype=torch.float32))
    assert isinstance(yt, torch.Tensor) and yt.shape == (29,)
    close(yt.cpu().numpy(), a32.T @ np.ones(37, np.float32), np.float32)
    for k in (1, 3, 8):
        xc = torch.rand(29, k, device="cuda", dtype=torch.float32)
        xf = xc.t().contiguous().t()  # F order
        for xb in (xc, xf):
            yb = op @ xb
            assert isinstance(yb, torch.Tensor) and yb.shape == (37, k)
            assert yb.is_contiguous() == xb.is_contiguous()
            close(yb.cpu().numpy(), a32 @ xb.cpu().numpy(), np.float32)
            w = torch.rand(37, k, device="cuda", dtype=torch.float32)
            tb = op.T @ w
            assert tb.shape == (29, k)
            close(tb.cpu().numpy(), a32.T @ w.cpu().numpy(), np.float32)
