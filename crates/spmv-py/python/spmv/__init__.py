"""spmv: sparse matrix-vector products, CG, BiCGSTAB and PageRank on NVIDIA GPUs (or the
CPU when there is none), in every storage format of the literature, with ``auto`` choosing
the fastest for your matrix.

>>> import numpy as np, scipy.sparse as sp, spmv
>>> a = spmv.Matrix.from_scipy(sp.random(1000, 1000, density=0.01, format="csr"))
>>> op = a.to_device()                       # format "auto", on the GPU when there is one
>>> y = op @ np.ones(1000)                   # NumPy in, NumPy out (CuPy/PyTorch: no copies)
>>> r = spmv.cg(spmv.generate("poisson2d:n=100"), np.ones(10_000), tol=1e-8)
>>> r.converged, r.iterations

Vectors: NumPy arrays (and anything ``numpy.asarray`` takes) are copied to the device and
back; CuPy arrays and PyTorch CUDA tensors (anything with ``__cuda_array_interface__``) are
used in place, ordered on the caller's stream, and the result is the same kind of array.
2-D arrays are blocks of vectors (one product call). An :class:`Operator` follows SciPy's
``LinearOperator`` protocol (``matvec``, ``rmatvec``, ``matmat``, ``rmatmat``, ``.T``, ...):
``scipy.sparse.linalg.cg(op, b)`` works, and ``cupyx.scipy.sparse.linalg.cg(op, b)`` with CuPy.
"""

from __future__ import annotations

import inspect
import json
import math
import numbers
import os
import warnings
from collections.abc import Callable, Sequence
from types import SimpleNamespace
from typing import Any, Generic, TypeVar, Union, overload

import numpy as np

from . import _spmv

__version__: str = _spmv.__version__
__all__ = [
    "Matrix",
    "Operator",
    "TransposedOperator",
    "aslinearoperator",
    "SolveResult",
    "PageRankResult",
    "read",
    "generate",
    "formats",
    "gpu_available",
    "cg",
    "bicgstab",
    "minres",
    "gmres",
    "solve",
    "pagerank",
    "bench",
    "report",
    "Html",
]

_DTYPES = {"f64": np.dtype(np.float64), "f32": np.dtype(np.float32), "f16": np.dtype(np.float16)}
_warned_cpu = False
# Counts go to the extension as 64-bit integers; repetitions and warm-up runs are each timed
# and kept (8 bytes a run), so a million is the most a benchmark takes.
_INT_MAX = 2**63 - 1
_RUNS_MAX = 1_000_000


# Argument checks: every public function checks its arguments here, before the extension
# sees them, so that an error names the parameter and the cause (TypeError for a wrong kind,
# ValueError for a value out of range) and no conversion overflows.
def _int(value: Any, name: str, lo: int, hi: int = _INT_MAX) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, not {type(value).__name__}")
    v = int(value)
    if not lo <= v <= hi:
        raise ValueError(f"{name} must be an integer from {lo} to {hi}, not {v}")
    return v


def _real(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}")
    return float(value)


def _bool(value: Any, name: str) -> bool:
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, not {type(value).__name__}")
    return bool(value)


def _str(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, not {type(value).__name__}")
    return value


def gpu_available() -> tuple[bool, str]:
    """(True, "NVIDIA H200 (sm_90)") when products can run on a GPU, else (False, why not)."""
    return _spmv.gpu_available()


def formats() -> list[dict[str, Any]]:
    """Every storage format: name, description, whether it is deterministic on the GPU, and
    its parameters (key, default, doc). A format spec is ``name`` or ``name:key=value,...``."""
    return [
        {
            "name": n,
            "description": d,
            "deterministic": det,
            "params": [{"key": k, "default": v, "doc": doc} for k, v, doc in p],
        }
        for n, d, det, p in _spmv.formats()
    ]


def _precision_of(dtype: np.dtype) -> str:
    """The precision that keeps a scipy matrix's values as they are: float32 → "f32",
    float16 → "f16", anything else (float64, integers, bool) → "f64"."""
    return {"f": "f32", "e": "f16"}.get(np.dtype(dtype).char, "f64")


class Matrix:
    """A sparse matrix on the host, in canonical CSR with float64 values (what every format
    is built from). Make one with :func:`read`, :func:`generate` or :meth:`from_scipy`.
    ``default_precision`` is the precision :meth:`to_device` and the solvers use unless told
    otherwise: that of the scipy matrix it came from ("f32" for float32, "f16" for float16),
    else "f64"."""

    def __init__(self, csr: _spmv.Csr, default_precision: str = "f64") -> None:
        if not isinstance(csr, _spmv.Csr):
            raise TypeError("build a Matrix with spmv.read, spmv.generate or Matrix.from_scipy")
        if default_precision not in _DTYPES:
            raise ValueError(f'default_precision must be "f64", "f32" or "f16", not {default_precision!r}')
        self._csr = csr
        self._precision = default_precision

    @classmethod
    def from_scipy(cls, a: Any) -> Matrix:
        """From any scipy.sparse matrix or array (``csr_matrix``, ``csr_array``, ``coo_array``,
        ``csc_array`` ...; real or integer values). A CSR matrix in canonical form (sorted
        indices, no duplicates) is taken as it is; others are converted (duplicates summed).
        The values are kept in float64; ``default_precision`` remembers a float32 ("f32") or
        float16 ("f16") matrix, so that its operator computes in that precision."""
        import scipy.sparse as sp

        if not sp.issparse(a):
            raise TypeError(f"from_scipy takes a scipy.sparse matrix or array, not {type(a).__name__}")
        if a.dtype.kind not in "fiub":
            raise TypeError(f"spmv matrices hold real values; this one is {a.dtype}")
        csr = a.tocsr()
        if not csr.has_canonical_format:
            csr = csr.copy()
            csr.sum_duplicates()
        nrows, ncols = csr.shape

        # int32 and int64 indices go as they are: the extension checks every one of them
        # (a negative index is an error, never taken modulo 2^32).
        def index_array(v: np.ndarray) -> np.ndarray:
            return np.require(v, v.dtype if v.dtype in (np.int32, np.int64) else np.int64, ["C", "A"])

        with np.errstate(over="ignore", invalid="ignore"):
            data = np.require(csr.data, np.float64, ["C", "A"])
        raw = _spmv.Csr.from_arrays(nrows, ncols, index_array(csr.indptr), index_array(csr.indices), data)
        return cls(raw, _precision_of(a.dtype))

    def to_scipy(self) -> Any:
        """The matrix as a ``scipy.sparse.csr_matrix`` (float64, int32 indices)."""
        import scipy.sparse as sp

        indptr, indices, data = self._csr.to_bytes()
        # int32 indices, or int64 where a column index needs them (the extension decides).
        width = len(indices) // self.nnz if self.nnz else 4
        return sp.csr_matrix(
            (
                np.frombuffer(data, np.float64).copy(),
                np.frombuffer(indices, np.int64 if width == 8 else np.int32).copy(),
                np.frombuffer(indptr, np.int64).copy(),
            ),
            shape=self.shape,
        )

    @property
    def shape(self) -> tuple[int, int]:
        return self._csr.shape

    @property
    def nnz(self) -> int:
        return self._csr.nnz

    @property
    def default_precision(self) -> str:
        """The precision :meth:`to_device` uses when none is given: "f32" or "f16" for a
        float32 or float16 scipy matrix, else "f64"."""
        return self._precision

    def to_device(self, format: str = "auto", precision: str | None = None, device: str = "auto") -> Operator:
        """The matrix converted to ``format`` (a spec: "auto", "brcp", "sell-c-sigma:c=32,sigma=1024",
        see :func:`formats`) in ``precision`` ("f64", "f32", "f16"; None: :attr:`default_precision`,
        which follows the scipy matrix's dtype) on ``device`` ("auto": the GPU when there is one,
        with a warning once when there is none; "gpu"; "cpu")."""
        return self._on_device(format, precision, device, graph=False)

    def _on_device(self, format: str, precision: str | None, device: str, graph: bool) -> Operator:
        """:meth:`to_device`; ``graph``: its products will be replayed as CUDA graphs (a
        solve's iterations), the timing ``auto`` then ranks by."""
        global _warned_cpu
        if precision is None:
            precision = self._precision
        _str(format, "format"), _str(precision, "precision"), _str(device, "device")
        if device == "auto" and not _warned_cpu:
            ok, why = gpu_available()
            if not ok:
                warnings.warn(f"spmv: no GPU ({why}); running on the CPU", RuntimeWarning, stacklevel=2)
                _warned_cpu = True
        return Operator(_spmv.to_device(self._csr, format, precision, device, graph))

    def __repr__(self) -> str:
        return f"spmv.Matrix({self.shape[0]} x {self.shape[1]}, nnz {self.nnz})"


def read(path: Any) -> Matrix:
    """Reads a Matrix Market file (.mtx or .mtx.gz, plain or gzipped): a file name (str,
    bytes or os.PathLike) or a file object open for reading; errors name the line."""
    if hasattr(path, "read"):
        text = path.read()
        if isinstance(text, str):
            text = text.encode()
        if not isinstance(text, (bytes, bytearray, memoryview)):
            raise TypeError(f"path: the file object's read() gave {type(text).__name__}, not bytes or str")
        return Matrix(_spmv.read_bytes(text))
    if not isinstance(path, (str, bytes, os.PathLike)):
        kind = type(path).__name__
        raise TypeError(f"path must be a file name (str, bytes, os.PathLike) or a file object, not {kind}")
    return Matrix(_spmv.read(os.fsdecode(path)))


def generate(spec: str) -> Matrix:
    """A generated matrix, e.g. "poisson3d:n=64", "kron:scale=16", "random:rows=1000,mean=8"."""
    return Matrix(_spmv.generate(_str(spec, "spec")))


def _as_matrix(a: Any) -> Matrix:
    if isinstance(a, Matrix):
        return a
    if isinstance(a, (Operator, TransposedOperator)):
        raise TypeError(
            "pass a Matrix or a scipy.sparse matrix here: an spmv.Operator holds the matrix in its "
            "format only (use the Matrix it came from)"
        )
    return Matrix.from_scipy(a)


def aslinearoperator(a: Any, format: str = "auto", precision: str | None = None, device: str = "auto") -> Operator:
    """``a`` as an :class:`Operator`: an Operator as it is; a :class:`Matrix` or any
    scipy.sparse matrix or array converted by :meth:`Matrix.to_device` (``precision`` None:
    that of the scipy matrix, float32 → "f32", float16 → "f16", else "f64")."""
    if isinstance(a, Operator):
        return a
    return _as_matrix(a).to_device(format=format, precision=precision, device=device)


def _library(v: Any) -> str:
    return type(v).__module__.split(".")[0]


def _shape(v: Any) -> tuple[int, ...]:
    """An array's shape, without converting it (CUDA arrays stay where they are)."""
    cai = _interface(v)
    if cai is not None:
        return _cai_shape(cai)
    shape = getattr(v, "shape", None)
    return tuple(int(d) for d in shape) if shape is not None else np.shape(v)


def _itemsize(typestr: str) -> int:
    """Bytes per element of a ``__cuda_array_interface__`` typestr (the float ones without
    building a NumPy dtype: this runs on every product)."""
    return _ITEMSIZE.get(typestr) or np.dtype(typestr).itemsize


_ITEMSIZE = {"<f8": 8, "<f4": 4, "<f2": 2}


def _cai_shape(cai: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(d) for d in cai["shape"])


def _interface(v: Any) -> dict[str, Any] | None:
    """A CUDA array's ``__cuda_array_interface__`` (``None`` for anything else), read once per
    product: CuPy and PyTorch build the dict anew on every access, at a few µs each."""
    return getattr(v, "__cuda_array_interface__", None)


def _cuda_layouts(cai: dict[str, Any]) -> tuple[bool, bool]:
    """Whether a 2-D CUDA array is C-contiguous and whether it is F-contiguous (from its
    ``__cuda_array_interface__``)."""
    rows, cols = (int(d) for d in cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        return True, rows <= 1 or cols <= 1
    item = _itemsize(cai["typestr"])
    s0, s1 = (int(s) for s in strides)
    c = (cols <= 1 or s1 == item) and (rows <= 1 or s0 == item * cols)
    f = (rows <= 1 or s0 == item) and (cols <= 1 or s1 == item * rows)
    return c, f


class _Flat:
    """A contiguous 2-D CUDA array seen as the 1-D array of its entries in memory order (its
    ``__cuda_array_interface__`` with one dimension and no strides, nothing copied): what the
    extension takes for a block. Keeps the array alive."""

    def __init__(self, v: Any, cai: dict[str, Any]) -> None:
        self._array = v
        cai = dict(cai)
        cai["shape"] = (math.prod(int(d) for d in cai["shape"]),)
        cai["strides"] = None
        self.__cuda_array_interface__ = cai


def _cuda_empty(template: Any, shape: tuple[int, ...], dtype: np.dtype, order: str = "C") -> Any:
    """A new CUDA array of the template's library on its device."""
    module = _library(template)
    if module == "torch":
        if order == "F" and len(shape) == 2:
            return template.new_empty((shape[1], shape[0])).t()
        return template.new_empty(shape)
    if module == "cupy":
        import cupy

        with cupy.cuda.Device(template.device.id):
            return cupy.empty(shape, dtype=dtype, order=order)
    raise TypeError(
        f"pass y= for CUDA arrays of type {type(template).__name__} (spmv allocates CuPy arrays and PyTorch tensors)"
    )


def _cuda_copy(v: Any, order: str) -> Any:
    """A copy of a 2-D CUDA array in C or F order, made by its library on its stream."""
    module = _library(v)
    if module == "torch":
        return v.t().contiguous().t() if order == "F" else v.contiguous()
    if module == "cupy":
        import cupy

        with cupy.cuda.Device(v.device.id):
            return cupy.array(v, order=order, copy=True)
    raise TypeError(
        f"{type(v).__name__}: a CUDA array that is not contiguous in the order needed is copied by its "
        "library, and spmv knows CuPy's and PyTorch's; pass a C- or F-contiguous array"
    )


# Kept for the 1-D products (its error message is part of the API).
def _empty_like_device(x: Any, n: int, dtype: np.dtype) -> Any:
    return _cuda_empty(x, (n,), dtype)


def _host_array(v: Any, name: str, dtype: np.dtype, order: str = "C") -> np.ndarray:
    """`v` as an aligned array of `dtype`, contiguous in `order`; a finite value that the
    conversion would turn into ±inf (1e5 in float16) is an error, not a silent infinity."""
    arr = np.asarray(v)
    if arr.dtype.kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, not {arr.dtype}")
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.require(arr, dtype, [order, "A"])
    if arr.dtype != dtype:
        lost = np.isfinite(arr) & ~np.isfinite(out)
        if lost.any():
            at = np.unravel_index(int(np.argmax(lost)), arr.shape)
            where = ", ".join(str(int(i)) for i in at)
            raise ValueError(
                f"{name}[{where}] = {arr[at]} is outside the range of {dtype} (±{np.finfo(dtype).max:g}): "
                "use a wider precision"
            )
    return out


def _host_vector(v: Any, name: str, dtype: np.dtype) -> np.ndarray:
    """`v` as a contiguous aligned 1-D array of `dtype` (see :func:`_host_array`)."""
    arr = np.asarray(v)
    if arr.dtype.kind in "fiub" and arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, not of shape {arr.shape}")
    return _host_array(arr, name, dtype)


def _to_host(v: Any) -> tuple[Any, str | None]:
    """A host array of a CUDA array (and the library it came from), or v itself."""
    if not hasattr(v, "__cuda_array_interface__"):
        return v, None
    module = _library(v)
    if module == "torch":
        return v.detach().cpu().numpy(), "torch"
    if module == "cupy":
        import cupy

        return cupy.asnumpy(v, order="A"), "cupy"
    raise TypeError(f"spmv takes NumPy arrays, CuPy arrays and PyTorch tensors, not {type(v).__name__}")


def _write_back(y: Any, host: np.ndarray) -> Any:
    """Copies a host result into the caller's CUDA array `y` (written in place, as promised)."""
    if _library(y) == "torch":
        import torch

        y.copy_(torch.from_numpy(host))
    else:
        import cupy

        with cupy.cuda.Device(y.device.id):
            y[...] = cupy.asarray(host)
    return y


def _like(host: np.ndarray, origin: str | None, template: Any) -> Any:
    if origin == "torch":
        import torch

        return torch.from_numpy(host).to(template.device)
    if origin == "cupy":
        import cupy

        with cupy.cuda.Device(template.device.id):
            return cupy.asarray(host, order="A")
    return host


_V = TypeVar("_V")


class _PassedOn(Generic[_V]):
    """A read-only attribute whose value is the attribute of the same name of the object held
    in ``holder`` (``op.nnz`` is ``op._raw.nnz``): declared once a line, typed by ``_V``."""

    def __init__(self, holder: str, doc: str | None = None) -> None:
        self._holder = holder
        self.__doc__ = doc

    def __set_name__(self, owner: type, name: str) -> None:
        self._name = name

    @overload
    def __get__(self, obj: None, owner: type) -> _PassedOn[_V]: ...

    @overload
    def __get__(self, obj: object, owner: type) -> _V: ...

    def __get__(self, obj: object, owner: type) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self._holder), self._name)

    def __set__(self, obj: object, value: Any) -> None:
        raise AttributeError(f"can't set attribute '{self._name}'")


class _Products:
    """SciPy's ``LinearOperator`` protocol over one product, ``_run(x, y, alpha, beta,
    transpose)``: ``shape``, ``dtype``, ``matvec``, ``rmatvec``, ``matmat``, ``rmatmat``,
    ``dot``, ``@`` (1-D and 2-D), ``.T`` and ``.H`` (the same: the values are real). Arrays
    come back as the caller's kind (NumPy, CuPy, PyTorch)."""

    ndim = 2

    @property
    def shape(self) -> tuple[int, int]:
        raise NotImplementedError

    @property
    def dtype(self) -> np.dtype:
        raise NotImplementedError

    def _run(self, x: Any, y: Any, alpha: Any, beta: Any, transpose: bool) -> Any:
        raise NotImplementedError

    def apply(self, x: Any, y: Any = None, alpha: float = 1.0, beta: float = 0.0) -> Any:
        """y = alpha·A·x + beta·y (beta = 0 never reads y), x one vector (1-D) or a block of
        k vectors (2-D, n × k: one call to the extension). NumPy x gives NumPy y (y, when
        given, must be a writable array of this dtype, contiguous — C or F order for a block —
        and is written in place); CuPy or PyTorch CUDA x gives the same kind, computed in
        place without copies, after the work queued on the caller's stream. A 2-D result has
        x's order (F for an F-ordered x, else C) or, when given, y's."""
        return self._run(x, y, alpha, beta, False)

    def matvec(self, x: Any) -> Any:
        """A·x for x of shape (n,) or (n, 1), as SciPy's ``LinearOperator.matvec``."""
        return self._vector_product("matvec", x, False)

    def rmatvec(self, x: Any) -> Any:
        """Aᴴ·x = Aᵀ·x for x of shape (m,) or (m, 1), as SciPy's ``LinearOperator.rmatvec``."""
        return self._vector_product("rmatvec", x, True)

    def _vector_product(self, method: str, x: Any, transpose: bool) -> Any:
        """``matvec`` or ``rmatvec``: x of shape (need,) or (need, 1), need = op(A)'s columns."""
        m, n = self.shape
        what = f"the transpose of the {m} x {n} operator" if transpose else f"the {m} x {n} operator"
        need = m if transpose else n
        shape = _shape(x)
        if shape not in ((need,), (need, 1)):
            raise ValueError(f"{method}: x has shape {shape}, {what} needs ({need},) or ({need}, 1)")
        return self._run(x, None, 1.0, 0.0, transpose)

    def matmat(self, x: Any) -> Any:
        """A·X for a 2-D X of shape (n, k): one block product."""
        return self._block_product("matmat", x, False)

    def rmatmat(self, x: Any) -> Any:
        """Aᴴ·X = Aᵀ·X for a 2-D X of shape (m, k)."""
        return self._block_product("rmatmat", x, True)

    def _block_product(self, method: str, x: Any, transpose: bool) -> Any:
        """``matmat`` or ``rmatmat``: any 2-D X (its shape is checked by the product)."""
        shape = _shape(x)
        if len(shape) != 2:
            raise ValueError(f"{method}: X must be 2-D, not of shape {shape}")
        return self._run(x, None, 1.0, 0.0, transpose)

    def dot(self, x: Any) -> Any:
        """A·x for a 1-D or 2-D x (``self @ x``)."""
        if isinstance(x, numbers.Number):
            raise TypeError("dot takes a 1-D or 2-D array; spmv operators are not scaled by numbers")
        return self._run(x, None, 1.0, 0.0, False)

    def __matmul__(self, x: Any) -> Any:
        if isinstance(x, numbers.Number):
            return NotImplemented
        return self._run(x, None, 1.0, 0.0, False)

    def transpose(self) -> TransposedOperator | Operator:
        """Aᵀ, without a copy: a view whose products are this operator's transposed ones."""
        raise NotImplementedError

    def adjoint(self) -> TransposedOperator | Operator:
        """Aᴴ, which is Aᵀ (the values are real)."""
        return self.transpose()

    @property
    def T(self) -> TransposedOperator | Operator:
        return self.transpose()

    @property
    def H(self) -> TransposedOperator | Operator:
        return self.transpose()


class Operator(_Products):
    """A matrix in one format and precision on the GPU (or the CPU): ``op @ x``,
    :meth:`apply` and SciPy's ``LinearOperator`` protocol (``matvec``, ``rmatvec``, ``matmat``,
    ``rmatmat``, ``dot``, ``.T``, ``.H``), so that ``scipy.sparse.linalg.aslinearoperator(op)``
    and SciPy's (or, with CuPy arrays, ``cupyx.scipy``'s) solvers take it. Made by
    :meth:`Matrix.to_device` or :func:`aslinearoperator`."""

    def __init__(self, raw: _spmv.Operator) -> None:
        self._raw = raw
        # Read on every product (the fast path of _product): kept rather than asked of the
        # extension each time.
        self._dtype = _DTYPES[raw.precision]
        self._shape = tuple(raw.shape)

    # The extension's operator's figures, as they are.
    shape = _PassedOn[tuple[int, int]]("_raw")
    nnz = _PassedOn[int]("_raw")
    format = _PassedOn[str]("_raw", "The format's label: the spec, with ``auto``'s choice as ``auto(chosen)``.")
    precision = _PassedOn[str]("_raw")
    on_gpu = _PassedOn[bool]("_raw")
    backend = _PassedOn[str]("_raw")
    stats = _PassedOn[dict[str, Any]]("_raw", "The format's storage figures (bytes, stored slots, padding ...).")

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def transpose_path(self) -> str:
        """How ``Aᵀ`` products run on the GPU where the format has no transposed kernel of its
        own: ``"auto"`` (the default: a kept copy where the GPU has room, else one-off),
        ``"copy"`` (Aᵀ built on the first product in the format ``auto`` picks for it, and
        kept) or ``"one-off"`` (Aᵀ transposed and uploaded for each product, nothing kept).
        Settable on a GPU operator."""
        return self._raw.transpose_path

    @transpose_path.setter
    def transpose_path(self, path: str) -> None:
        self._raw.set_transpose_path(path)

    def transpose(self) -> TransposedOperator:
        return TransposedOperator(self)

    def _run(self, x: Any, y: Any, alpha: Any, beta: Any, transpose: bool) -> Any:
        return self._product(x, y, alpha, beta, transpose)

    def _product(self, x: Any, y: Any, alpha: Any, beta: Any, transpose: bool) -> Any:
        """y = alpha·op(A)·x + beta·y, op(A) = Aᵀ when `transpose`; x 1-D or 2-D."""
        plain = self._plain_vector_y(x, y, alpha, beta, transpose)
        if plain is not None:
            self._raw.apply(x, plain, alpha, beta, transpose)
            return plain
        alpha, beta = _real(alpha, "alpha"), _real(beta, "beta")
        if y is None and beta != 0:
            raise ValueError("beta != 0 needs y")
        x_cai, y_cai = _interface(x), _interface(y)
        x_cuda, y_cuda = x_cai is not None, y_cai is not None
        if x_cuda and self.on_gpu:
            if y is not None and not y_cuda:
                raise TypeError(f"y must be a CUDA array like x, not {type(y).__name__}")
            return self._product_cuda(x, x_cai, y, y_cai, alpha, beta, transpose)
        if x_cuda or y_cuda:
            # CUDA arrays with a CPU operator (or beside NumPy): through the host, the result
            # written into the caller's y when given, else returned as x's kind.
            xh, origin = _to_host(x)
            yh = None if y is None else _to_host(y)[0]
            result = self._product(xh, yh, alpha, beta, transpose)
            return _write_back(y, result) if y_cuda else _like(result, origin, x)
        return self._product_host(x, y, alpha, beta, transpose)

    def _plain_vector_y(self, x: Any, y: Any, alpha: Any, beta: Any, transpose: bool) -> np.ndarray | None:
        """The y to write when the call is the common one that needs no conversion — x a 1-D
        NumPy array of this operator's dtype, contiguous and aligned, of op(A)'s columns; y
        None (a new array; beta 0) or such an array of op(A)'s rows, writable; alpha and beta
        Python floats — else None, and the general path checks and converts (and names what
        is wrong). The general path's checks cost about 14 µs a call, as much as a product of
        10^4 entries on the CPU."""
        dtype = self._dtype
        if not (type(x) is np.ndarray and type(alpha) is float and type(beta) is float):
            return None
        flags = x.flags
        if x.ndim != 1 or x.dtype != dtype or not (flags.c_contiguous and flags.aligned):
            return None
        m, n = self._shape
        rows, cols = (n, m) if transpose else (m, n)
        if x.shape[0] != cols:
            return None
        if y is None:
            return np.empty(rows, dtype=dtype) if beta == 0.0 else None
        if type(y) is not np.ndarray or y.shape != (rows,) or y.dtype != dtype:
            return None
        flags = y.flags
        return y if flags.c_contiguous and flags.aligned and flags.writeable else None

    def _shapes(self, x_shape: tuple[int, ...], y_shape: tuple[int, ...] | None, transpose: bool) -> tuple[int, int]:
        """Checks x's shape (and y's, unless None) against op(A); returns (rows of y, k: 0 for
        a vector)."""
        m, n = self.shape
        rows, cols = (n, m) if transpose else (m, n)
        what = f"the transpose of the {m} x {n} operator" if transpose else f"the {m} x {n} operator"
        if len(x_shape) not in (1, 2):
            raise ValueError(f"x must be 1-D or 2-D, not of shape {x_shape}")
        if x_shape[0] != cols:
            if len(x_shape) == 1:
                raise ValueError(f"x has {x_shape[0]} entries (shape {x_shape}), {what} needs {cols}")
            raise ValueError(f"x has shape {x_shape}, {what} needs ({cols}, k)")
        want = (rows,) if len(x_shape) == 1 else (rows, x_shape[1])
        if y_shape is not None and y_shape != want:
            raise ValueError(f"y has shape {y_shape}, {what} with x of shape {x_shape} needs {want}")
        return rows, (0 if len(x_shape) == 1 else x_shape[1])

    def _product_host(self, x: Any, y: Any, alpha: float, beta: float, transpose: bool) -> Any:
        dtype = self.dtype
        arr = np.asarray(x)
        if arr.dtype.kind not in "fiub":
            raise TypeError(f"x must hold real numbers, not {arr.dtype}")
        if y is not None and not isinstance(y, np.ndarray):
            raise TypeError(f"y must be a NumPy array like x, not {type(y).__name__}")
        rows, k = self._shapes(arr.shape, None if y is None else _shape(y), transpose)
        if arr.ndim == 1:
            xs = _host_array(arr, "x", dtype)
            if y is None:
                y = np.empty(rows, dtype=dtype)
            # Lengths, dtype, contiguity and writability of y are checked by the extension; an
            # x that shares memory with y (op.apply(b, b)) is copied first, as NumPy does for out=.
            self._raw.apply(xs, y, alpha, beta, transpose)
            return y
        x_f = arr.flags.f_contiguous and not arr.flags.c_contiguous
        if y is None:
            order = "F" if x_f else "C"
            y = np.empty((rows, k), dtype=dtype, order=order)
        elif y.flags.c_contiguous and y.flags.f_contiguous:
            order = "F" if x_f else "C"
        elif y.flags.c_contiguous or y.flags.f_contiguous:
            order = "C" if y.flags.c_contiguous else "F"
        else:
            raise ValueError("y must be C- or F-contiguous (it is written in place)")
        if k == 0:
            return y
        # C order is a row-major block, F order a column-major one: both go as they are (the
        # flat views share the arrays' memory), x converted or copied only when it must be.
        xs = _host_array(arr, "x", dtype, order)
        flat_x, flat_y = xs.reshape(-1, order=order), y.reshape(-1, order=order)
        self._raw.apply(flat_x, flat_y, alpha, beta, transpose, k, order == "F")
        return y

    def _product_cuda(
        self,
        x: Any,
        x_cai: dict[str, Any],
        y: Any,
        y_cai: dict[str, Any] | None,
        alpha: float,
        beta: float,
        transpose: bool,
    ) -> Any:
        dtype = self.dtype
        x_shape = _cai_shape(x_cai)
        rows, k = self._shapes(x_shape, None if y_cai is None else _cai_shape(y_cai), transpose)
        known = _library(x) in ("cupy", "torch")
        if len(x_shape) == 1:
            if known and not _cuda_layouts_1d(x_cai):
                x = x.contiguous() if _library(x) == "torch" else x.copy()
            if y is None:
                y = _empty_like_device(x, rows, dtype)
            # Checked in the extension against the driver; an x that overlaps y is copied.
            self._raw.apply(x, y, alpha, beta, transpose, cuda=True)
            return y
        x_c, x_f = _cuda_layouts(x_cai)
        if y_cai is not None:
            y_c, y_f = _cuda_layouts(y_cai)
            if not (y_c or y_f):
                raise ValueError("y must be C- or F-contiguous (it is written in place)")
            order = "C" if y_c and not (y_f and x_f and not x_c) else "F"
        else:
            order = "F" if x_f and not x_c else "C"
        if k == 0:
            return y if y is not None else _cuda_empty(x, (rows, k), dtype, order)
        # y's order (or x's for a new y, made in it) runs: x goes through a copy only when its
        # order differs.
        if not (x_f if order == "F" else x_c):
            x = _cuda_copy(x, order)
            x_cai = x.__cuda_array_interface__
        if y_cai is None:
            y = _cuda_empty(x, (rows, k), dtype, order)
            y_cai = y.__cuda_array_interface__
        self._raw.apply(_Flat(x, x_cai), _Flat(y, y_cai), alpha, beta, transpose, k, order == "F", cuda=True)
        return y

    def __repr__(self) -> str:
        shape = f"{self.shape[0]} x {self.shape[1]}"
        return f"spmv.Operator({shape}, nnz {self.nnz}, {self.format}, {self.precision}, {self.backend})"


def _cuda_layouts_1d(cai: dict[str, Any]) -> bool:
    """Whether a 1-D CUDA array is contiguous (from its ``__cuda_array_interface__``)."""
    strides = cai.get("strides")
    return strides is None or int(cai["shape"][0]) <= 1 or int(strides[0]) == _itemsize(cai["typestr"])


class TransposedOperator(_Products):
    """Aᵀ of an :class:`Operator` (``op.T``, ``op.H``), without a copy: its products are the
    operator's transposed ones (``matvec`` is the operator's ``rmatvec`` and so on; the first
    one builds Aᵀ as a matrix of its own, kept by the operator: docs/python.md). ``.T`` gives the
    operator back."""

    def __init__(self, base: Operator) -> None:
        if not isinstance(base, Operator):
            raise TypeError(f"TransposedOperator takes an spmv.Operator, not {type(base).__name__}")
        self._base = base

    @property
    def shape(self) -> tuple[int, int]:
        m, n = self._base.shape
        return n, m

    # The operator's figures that Aᵀ shares.
    dtype = _PassedOn[np.dtype]("_base")
    nnz = _PassedOn[int]("_base")
    precision = _PassedOn[str]("_base")
    on_gpu = _PassedOn[bool]("_base")

    def transpose(self) -> Operator:
        return self._base

    def _run(self, x: Any, y: Any, alpha: Any, beta: Any, transpose: bool) -> Any:
        return self._base._product(x, y, alpha, beta, not transpose)

    def __repr__(self) -> str:
        return f"{self._base!r}.T"


class SolveResult:
    """What the solvers (:func:`solve`, :func:`cg`, :func:`minres`, :func:`bicgstab`,
    :func:`gmres`) return: x, the method that gave it (with ``method="auto"``, ``method_auto``
    says what it saw and did) and the figures."""

    x: Any
    method: str
    method_auto: str | None
    outcome: str
    breakdown: str | None
    converged: bool
    iterations: int
    residual: float
    true_residual: float
    ms: float
    iteration_ms: float
    graph: bool
    columns: list[SolveResult] | None = None
    """With several right-hand sides (b of shape (n, k)): each column's result; the figures
    above are then the worst column's."""
    history: list[dict[str, Any]]
    """Each method run (``method="auto"`` may run two): ``{"method": "cg", "residuals":
    [(iteration, ‖r‖/‖b‖), ...]}``, the recurrence's residual where the solver read it (the
    start, every ``check_every`` iterations, the stop)."""
    tol: float

    def __init__(self, x: Any, figures: dict[str, Any]) -> None:
        self.x = x
        for key, value in figures.items():
            setattr(self, key, value)

    def __repr__(self) -> str:
        what = self.outcome if self.breakdown is None else f"breakdown ({self.breakdown})"
        return (
            f"SolveResult({self.method}: {what}, {self.iterations} iterations, residual {self.residual:.3e}, "
            f"true residual {self.true_residual:.3e}, {self.ms:.3f} ms)"
        )


# The solvers' defaults (SciPy's cg has rtol=1e-5 and maxiter=10·n; spmv keeps its own).
_TOL = 1e-8
_MAX_ITER = 10_000


def _same_setting(a: Any, a_name: str, b: Any, b_name: str, default: Any) -> Any:
    """One setting given under either of two names (``tol``/``rtol``, ``max_iter``/``maxiter``)."""
    if a is not None and b is not None and a != b:
        raise ValueError(f"{a_name} = {a!r} and {b_name} = {b!r}: they are one setting, give one of them")
    if a is not None:
        return a
    return default if b is None else b


class _Krylov:
    """The solvers' arguments, checked (each error names its parameter)."""

    def __init__(
        self,
        tol: Any,
        rtol: Any,
        atol: Any,
        max_iter: Any,
        maxiter: Any,
        precond: Any,
        M: Any,
        callback: Any,
        check_every: Any,
        graph: Any,
        restart: Any,
    ) -> None:
        tol = None if tol is None else _real(tol, "tol")
        rtol = None if rtol is None else _real(rtol, "rtol")
        self.rtol = _same_setting(tol, "tol", rtol, "rtol", _TOL)
        name = "tol" if rtol is None else "rtol"
        if not (self.rtol >= 0 and np.isfinite(self.rtol)):
            raise ValueError(f"{name} = {self.rtol}: the tolerance must be a positive finite number")
        self.atol = _real(atol, "atol")
        if not (self.atol >= 0 and np.isfinite(self.atol)):
            raise ValueError(f"atol = {self.atol}: the absolute tolerance must be a finite number ≥ 0")
        max_iter = None if max_iter is None else _int(max_iter, "max_iter", 1)
        maxiter = None if maxiter is None else _int(maxiter, "maxiter", 1)
        self.max_iter = _same_setting(max_iter, "max_iter", maxiter, "maxiter", _MAX_ITER)
        if precond not in (None, "none", "jacobi"):
            raise ValueError(f'precond must be None or "jacobi", not {precond!r}')
        self.jacobi = precond == "jacobi"
        if M is not None:
            if not isinstance(M, str):
                raise TypeError(
                    f'M: spmv\'s solvers have one preconditioner, Jacobi (M="jacobi"), not a {type(M).__name__}; '
                    "for another, run scipy.sparse.linalg.cg(op, b, M=M) on an spmv.Operator"
                )
            if M not in ("none", "jacobi"):
                raise ValueError(f'M must be None or "jacobi", not {M!r}')
            if precond is not None and (precond == "jacobi") != (M == "jacobi"):
                raise ValueError(f"M = {M!r} and precond = {precond!r}: they are one setting, give one of them")
            self.jacobi = M == "jacobi"
        if callback is not None and not callable(callback):
            raise TypeError(f"callback must be callable, not {type(callback).__name__}")
        self.callback = callback
        self.check_every, self.graph = _int(check_every, "check_every", 1), _bool(graph, "graph")
        self.restart = _int(restart, "restart", 1, 256)

    def request(self, method: str, tol: float) -> SimpleNamespace:
        """What the extension's solvers take: the method and the settings, tol relative to
        the system's right-hand side."""
        return SimpleNamespace(
            method=method,
            jacobi=self.jacobi,
            tol=tol,
            max_iter=self.max_iter,
            check_every=self.check_every,
            graph=self.graph,
            restart=self.restart,
        )

    def system(
        self, apply: Any, b: np.ndarray, x0: Any, dtype: np.dtype
    ) -> tuple[np.ndarray, float, float, np.ndarray | None]:
        """The system the solver (which starts from 0) runs: A·d = b − A·x0, with the
        tolerance relative to its right-hand side that stops it at ‖r‖ ≤ max(rtol·‖b‖, atol).
        Returns (right-hand side, relative tolerance, ‖rhs‖/‖b‖ (what turns residuals relative
        to the rhs into residuals relative to b), x0 or None)."""
        n = b.shape[0]
        x0h = None
        rhs = b
        if x0 is not None:
            x0h = _host_vector(_to_host(x0)[0], "x0", dtype)
            if x0h.shape[0] != n:
                raise ValueError(f"x0 has shape {x0h.shape}, the matrix needs ({n},)")
            if np.any(x0h):
                r0 = b.astype(np.float64) - np.asarray(apply(x0h), dtype=np.float64)
                rhs = _host_array(r0, "b - A·x0", dtype)
        if self.atol == 0 and rhs is b:
            return rhs, self.rtol, 1.0, x0h
        bnorm = float(np.linalg.norm(b.astype(np.float64)))
        rnorm = float(np.linalg.norm(rhs.astype(np.float64)))
        target = max(self.rtol * bnorm, self.atol)
        if rnorm == 0:  # x0 solves it (or b = 0): the solver answers at once
            tol = self.rtol if self.rtol > 0 else 1.0
        else:
            tol = target / rnorm
        return rhs, tol, (rnorm / bnorm if bnorm > 0 else 1.0), x0h

    def result(self, x: np.ndarray, figures: dict[str, Any], scale: float, x0: Any, origin: Any, b: Any) -> SolveResult:
        if scale != 1.0:
            for key in ("residual", "true_residual"):
                figures[key] = figures[key] * scale
        if x0 is not None:
            x += x0
        out = _like(x, origin, b)
        if self.callback is not None:
            self.callback(out)
        return SolveResult(out, figures)


def _solver_precision(m: Matrix, precision: str | None) -> str:
    """The precision a solver runs in: as given, else the matrix's (f16 → f32: the solvers run
    in f64 and f32)."""
    if precision is not None:
        return _str(precision, "precision")
    return "f32" if m.default_precision == "f16" else m.default_precision


def _solve(
    method: str,
    a: Any,
    b: Any,
    x0: Any,
    args: _Krylov,
    format: str,
    precision: str | None,
) -> SolveResult:
    if isinstance(a, Operator):
        op = a
    else:
        m = _as_matrix(a)
        # The solve replays its iterations as CUDA graphs on a GPU: auto ranks by graph times.
        op = m._on_device(format, _solver_precision(m, precision), "auto", args.graph)
    n = op.shape[0]
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"{method} needs a square matrix, this one is {op.shape[0]} x {op.shape[1]}")
    bh, origin = _to_host(b)
    if np.ndim(bh) == 2:
        return _solve_block(method, op, bh, origin, b, x0, args)
    bs = _host_vector(bh, "b", op.dtype)
    if bs.shape[0] != n:
        raise ValueError(f"b has {bs.shape[0]} entries, the matrix needs {n}")
    rhs, tol, scale, x0h = args.system(op.apply, bs, x0, op.dtype)
    x = np.empty(n, dtype=op.dtype)
    figures = _spmv.solve(op._raw, rhs, x, args.request(method, tol))
    return args.result(x, figures, scale, x0h, origin, b)


def _solve_block(method: str, op: Operator, bh: Any, origin: str | None, b: Any, x0: Any, args: _Krylov) -> SolveResult:
    """b of shape (n, k): the k columns solved together, in lock step with one block product
    per step, each to its own ‖r‖ ≤ max(rtol·‖b_j‖, atol) from its column of x0. x has b's
    shape; ``columns`` holds each column's result, and the figures are the worst column's
    (converged only if every column did)."""
    n = op.shape[0]
    bs = _host_array(bh, "b", op.dtype)
    if bs.shape[0] != n or bs.shape[1] == 0:
        raise ValueError(f"b has shape {bs.shape}, the matrix needs ({n},) or ({n}, k) with k ≥ 1")
    k = bs.shape[1]
    x0s = None
    if x0 is not None:
        x0s = _host_array(_to_host(x0)[0], "x0", op.dtype)
        if x0s.shape != bs.shape:
            raise ValueError(f"x0 has shape {x0s.shape}, b has {bs.shape}")
    # Column j of the solvers' blocks is row j of a C-ordered (k, n) array, passed flat: one
    # transposing copy of b (k strided column copies and a stack: 297-416 ms against 107-257
    # for b of 10^6 x 16 on the 2-core VM).
    bt = np.ascontiguousarray(bs.T)
    rows = list(bt)
    x0t = None if x0s is None else np.ascontiguousarray(x0s.T)
    systems = [args.system(op.apply, rows[j], None if x0t is None else x0t[j], op.dtype) for j in range(k)]
    if all(system[0] is rows[j] for j, system in enumerate(systems)):
        rhs = bt  # no x0 moved a right-hand side
    else:
        rhs = np.ascontiguousarray(np.stack([system[0] for system in systems]))
    xt = np.empty((k, n), dtype=op.dtype)
    request = args.request(method, args.rtol)
    figures = _spmv.solve_block(op._raw, rhs.reshape(-1), xt.reshape(-1), request, [t[1] for t in systems])
    columns = []
    for j, ((_, _, scale, x0h), f) in enumerate(zip(systems, figures)):
        if scale != 1.0:
            f["residual"] *= scale
            f["true_residual"] *= scale
        if x0h is not None:
            xt[j] += x0h
        columns.append(SolveResult(xt[j], f))
    out = _like(np.ascontiguousarray(xt.T), origin, b)
    if args.callback is not None:
        args.callback(out)
    worst = next((c for c in columns if not c.converged), max(columns, key=lambda c: c.iterations))
    figures = {key: getattr(worst, key) for key in figures[0]}
    figures["method"] = ", ".join(dict.fromkeys(c.method for c in columns))
    figures["converged"] = all(c.converged for c in columns)
    figures["iterations"] = max(c.iterations for c in columns)
    for key in ("residual", "true_residual", "ms"):
        figures[key] = max(getattr(c, key) for c in columns)
    figures["tol"] = args.rtol
    figures["columns"] = columns
    return SolveResult(out, figures)


Devices = Union[int, Sequence[int]]


def _device_list(devices: Devices, exchange: str) -> list[int]:
    """``devices`` as ordinals: a count (the first N devices) or a list (one part each; an
    ordinal may repeat, putting several parts on one GPU)."""
    if exchange not in ("peer", "nccl"):
        raise ValueError(f'exchange must be "peer" or "nccl", not {exchange!r}')
    if isinstance(devices, (bool, str)) or not isinstance(devices, (numbers.Integral, Sequence)):
        raise ValueError(f"devices must be a count or a list of device ordinals, not {devices!r}")
    if isinstance(devices, numbers.Integral):
        if devices < 1:
            raise ValueError(f"devices must name at least one device, not {devices!r}")
        return list(range(_int(devices, "devices", 1, 4096)))
    if not devices:
        raise ValueError(f"devices must name at least one device (ordinals ≥ 0), not {devices!r}")
    ordinals = []
    for d in devices:
        try:
            ordinals.append(_int(d, "devices", 0, 2**31 - 1))
        except (TypeError, ValueError) as e:
            raise ValueError(f"devices must name devices by ordinals ≥ 0, not {devices!r} ({e})") from None
    return ordinals


_METHODS = ("auto", "cg", "bicgstab", "minres", "gmres")


def _krylov(method: str | None, doc: str) -> Callable[..., SolveResult]:
    """The solver ``method`` ("cg", "bicgstab", "minres" or "gmres"; None: :func:`solve`, whose
    ``method`` argument names it), documented by ``doc``: one signature and one body for
    every Krylov method."""

    def solver(
        a: Any,
        b: Any,
        x0: Any = None,
        *,
        method: str | None = None,
        tol: float | None = None,
        rtol: float | None = None,
        atol: float = 0.0,
        max_iter: int | None = None,
        maxiter: int | None = None,
        M: Any = None,
        callback: Callable[[Any], Any] | None = None,
        precond: str | None = None,
        check_every: int = 10,
        graph: bool = True,
        format: str = "auto",
        precision: str | None = None,
        devices: Devices | None = None,
        exchange: str = "peer",
        restart: int = 30,
    ) -> SolveResult:
        if fixed is not None:
            if method is not None:
                raise TypeError(f"{fixed}() got an unexpected keyword argument 'method' (spmv.solve takes one)")
            method = fixed
        elif method is None:
            method = "auto"
        elif method not in _METHODS:
            raise ValueError(f"method must be one of {', '.join(map(repr, _METHODS))}, not {method!r}")
        args = _Krylov(tol, rtol, atol, max_iter, maxiter, precond, M, callback, check_every, graph, restart)
        if devices is None:
            return _solve(method, a, b, x0, args, format, precision)
        ordinals = _device_list(devices, exchange)
        if isinstance(a, (Operator, TransposedOperator)):
            raise ValueError(
                "devices: pass a Matrix or a scipy.sparse matrix (it is split over the devices), not an Operator"
            )
        m = _as_matrix(a)
        precision = _solver_precision(m, precision)
        if precision not in ("f64", "f32"):
            raise ValueError(f'devices: the distributed solvers run in "f64" or "f32", not {precision!r}')
        if m.shape[0] != m.shape[1]:
            raise ValueError(f"{method} needs a square matrix, this one is {m.shape[0]} x {m.shape[1]}")
        dtype = _DTYPES[precision]
        bh, origin = _to_host(b)
        if np.ndim(bh) == 2:
            raise ValueError(
                f"devices: b of shape {np.shape(bh)}: several right-hand sides are solved together "
                "on one GPU or the CPU (leave devices out), over several GPUs one at a time"
            )
        bs = _host_vector(bh, "b", dtype)
        if bs.shape[0] != m.shape[0]:
            raise ValueError(f"b has {bs.shape[0]} entries, the matrix needs {m.shape[0]}")

        def apply(v: np.ndarray) -> np.ndarray:  # A·x0, in f64 on the CPU
            return m.to_device(format="csr-vector", precision="f64", device="cpu") @ v

        rhs, tol_rel, scale, x0h = args.system(apply, bs, x0, dtype)
        x = np.empty(m.shape[0], dtype=dtype)
        parts = (_str(format, "format"), precision, ordinals, exchange)
        figures = _spmv.solve_distributed(m._csr, rhs, x, args.request(method, tol_rel), parts)
        return args.result(x, figures, scale, x0h, origin, b)

    fixed = method
    if fixed is not None:
        # The method is the function's own: no `method` argument.
        params = [p for p in inspect.signature(solver).parameters.values() if p.name != "method"]
        solver.__signature__ = inspect.signature(solver).replace(parameters=params)  # type: ignore[attr-defined]
    solver.__name__ = solver.__qualname__ = fixed or "solve"
    solver.__doc__ = doc
    return solver


cg = _krylov(
    "cg",
    """Conjugate gradients for a symmetric positive definite A·x = b, stopping at
    ‖r‖ ≤ max(tol·‖b‖, atol). ``a``: an :class:`Operator` (any format, GPU or CPU), a
    :class:`Matrix` or a scipy.sparse matrix or array (converted to ``format`` in ``precision``;
    None: the matrix's own, float32 → "f32", else "f64"). ``precond="jacobi"``: the inverse
    diagonal. On the GPU the whole iteration runs on the device as a CUDA graph; the host reads
    the residual every ``check_every`` iterations. The result says converged / not_converged /
    breakdown (what vanished) / non_finite / inaccurate_residual, with the true residual.

    SciPy's names are taken too: ``rtol`` is ``tol`` (default 1e-8), ``maxiter`` is
    ``max_iter`` (default 10,000), ``M`` is ``precond`` (None or "jacobi"; another
    preconditioner is a TypeError: spmv runs Jacobi only). ``x0``: the initial guess — the
    solver starts from 0, so it solves A·d = b − A·x0 and returns x0 + d (residuals still
    relative to ‖b‖). ``atol``: an absolute floor, turned into the relative tolerance it
    amounts to. ``callback``: called once, at the end, with the solution x (the solver runs
    on the device without returning to Python between iterations).

    ``b`` of shape (n, k): k right-hand sides solved together, x of the same shape — the k
    solves run in lock step, each product one block product A·X (the matrix read once per
    block of columns), each column with its own iterations, stop and result
    (``result.columns[j]``; ``x0`` of b's shape; ``atol`` per column), on one GPU or the CPU.

    ``devices``: spread A over several GPUs — a count (``2``: devices 0 and 1) or a list of
    ordinals — in row parts of about equal entries, each in ``format`` (``auto`` chooses per
    part), the halo of x moved by ``exchange`` ("peer" copies or "nccl") before each product;
    f64 or f32 (docs/scale.md).""",
)

bicgstab = _krylov(
    "bicgstab",
    """BiCGSTAB (right-preconditioned) for a general square A·x = b; as :func:`cg` (SciPy's
    argument names, ``precond``, ``devices`` too).""",
)

minres = _krylov(
    "minres",
    """MINRES for a symmetric A·x = b, definite or indefinite (where :func:`cg` stops with
    "not positive definite"); as :func:`cg`. Its preconditioner must be positive definite:
    ``precond="jacobi"`` is |diag(A)|⁻¹ here.""",
)

gmres = _krylov(
    "gmres",
    """Restarted GMRES(``restart``, default 30) for a general square A·x = b, right
    preconditioned, the Arnoldi basis orthogonalised twice (CGS2) on the device; each cycle
    ends with the true residual b − A·x. ``iterations`` counts Arnoldi steps (``max_iter``
    bounds them). Otherwise as :func:`cg`.""",
)

solve = _krylov(
    None,
    """A·x = b by ``method``: "cg", "minres", "bicgstab", "gmres", or "auto" (the default):
    CG for a symmetric A with a positive diagonal (MINRES if CG finds A indefinite), MINRES
    for another symmetric A, GMRES for a nonsymmetric A (BiCGSTAB if GMRES does not
    converge); the result's ``method`` and ``method_auto`` say what ran and why. Arguments as
    :func:`cg` (``restart`` as :func:`gmres`).""",
)


class PageRankResult:
    """What :func:`pagerank` returns: the ranks (mean 1) and the run's figures."""

    ranks: np.ndarray
    iterations: int
    converged: bool
    residual: float
    ms: float
    backend: str

    def __init__(self, ranks: np.ndarray, figures: dict[str, Any]) -> None:
        self.ranks = ranks
        for key, value in figures.items():
            setattr(self, key, value)

    def __repr__(self) -> str:
        run = f"{self.iterations} iterations, converged {self.converged}, {self.ms:.3f} ms"
        return f"PageRankResult({self.ranks.shape[0]} nodes, {run})"


def pagerank(
    a: Any,
    *,
    alpha: float = 0.85,
    tol: float = 1e-5,
    max_iter: int = 1000,
    weighted: bool = False,
    format: str = "csr-vector",
    device: str = "auto",
    devices: Devices | None = None,
    exchange: str = "peer",
) -> PageRankResult:
    """PageRank of the graph whose adjacency matrix is ``a`` (row = source, column = target;
    a :class:`Matrix` or scipy.sparse), by power iteration with dangling nodes redistributed,
    until max |r_k+1 − r_k| ≤ tol. ``weighted``: edges weighted by their values.
    ``devices``/``exchange``: over several GPUs, as in :func:`cg`."""
    m = _as_matrix(a)
    alpha, tol, max_iter = _real(alpha, "alpha"), _real(tol, "tol"), _int(max_iter, "max_iter", 1)
    weighted, format, device = _bool(weighted, "weighted"), _str(format, "format"), _str(device, "device")
    ordinals = None
    if devices is not None:
        ordinals = _device_list(devices, exchange)
        if device == "cpu":
            raise ValueError('devices needs a GPU, not device="cpu"')
    ranks = np.empty(m.shape[0], dtype=np.float64)
    figures = _spmv.pagerank(m._csr, ranks, format, device, alpha, tol, max_iter, weighted, ordinals, exchange)
    return PageRankResult(ranks, figures)


def bench(
    matrices: Any | Sequence[Any],
    *,
    formats: str = "auto,cusparse-alg1",
    precision: str = "f64",
    device: str = "auto",
    reps: int = 100,
    warmup: int = 10,
    names: Sequence[str] | None = None,
    devices: Devices | None = None,
    exchange: str = "peer",
) -> list[dict[str, Any]]:
    """``spmv bench`` from Python: each matrix (a :class:`Matrix`, scipy.sparse, a path or a
    generator spec) in each format (a comma-separated list of specs, or "all") and precision
    ("f64,f32"), checked against the exact product; one dict per result (times in ms: median,
    min, back-to-back mean; GFLOPS, GB/s, error, the format auto chose ...).
    ``devices``/``exchange``: every format over several GPUs, as ``spmv bench --devices``
    (each result adds the devices, the halo's bytes and the exchange's time)."""
    formats, precision, device = _str(formats, "formats"), _str(precision, "precision"), _str(device, "device")
    reps, warmup = _int(reps, "reps", 1, _RUNS_MAX), _int(warmup, "warmup", 0, _RUNS_MAX)
    ordinals = None
    if devices is not None:
        ordinals = _device_list(devices, exchange)
        if device == "cpu":
            raise ValueError('devices needs a GPU, not device="cpu"')
    if isinstance(matrices, (str, Matrix)) or not isinstance(matrices, Sequence):
        matrices = [matrices]
    loaded, labels = [], []
    for i, m in enumerate(matrices):
        if isinstance(m, str):
            mat = read(m) if m.endswith((".mtx", ".mtx.gz")) else generate(m)
            label = m.rsplit("/", 1)[-1].replace(".mtx.gz", "").replace(".mtx", "")
        else:
            mat = _as_matrix(m)
            label = f"matrix{i}"
        loaded.append(mat._csr)
        labels.append(label)
    if names is not None:
        if isinstance(names, str) or not all(isinstance(n, str) for n in names):
            raise TypeError("names must be a list of str, one per matrix")
        if len(names) != len(loaded):
            raise ValueError(f"names: {len(names)} names for {len(loaded)} matrices")
        labels = list(names)
    report = json.loads(_spmv.bench(loaded, labels, formats, precision, device, reps, warmup, ordinals, exchange))
    return report["results"]


class Html(str):
    """An HTML page as text; Jupyter displays it (``_repr_html_``), ``open(...).write`` saves it."""

    def _repr_html_(self) -> str:
        return str(self)


def report(*results: Any) -> Html:
    """The report page of benchmark runs and solves, as ``spmv report`` writes it: one
    self-contained HTML page (inline SVG, no network) with the roofline, the heat map of each
    format against the per-matrix best, auto and tune against the best, scaling over GPUs and
    the solves' residual histories. Each argument: what :func:`bench` returned (a list of
    result dicts), a :class:`SolveResult`, a parsed JSON dict of ``spmv bench --json`` or
    ``spmv solve --json``, or the path of such a file."""
    if not results:
        raise TypeError("report() needs at least one bench result list, SolveResult or JSON file")
    sources: list[tuple[str, Any]] = []
    for i, r in enumerate(results):
        if isinstance(r, SolveResult):
            name = f"solve {i + 1}"
            solve = {"matrix": name, "format": "operator", "tol": r.tol, "outcome": r.outcome, "history": r.history}
            sources.append((name, solve))
        elif isinstance(r, (str, os.PathLike)):
            with open(r, encoding="utf-8") as f:
                sources.append((os.fspath(r), json.load(f)))
        elif isinstance(r, (dict, list)):
            sources.append((f"results {i + 1}", r))
        else:
            kinds = "bench results, a SolveResult, a dict or a JSON file's path"
            raise TypeError(f"report: argument {i + 1} is a {type(r).__name__}: give {kinds}")
    return Html(_spmv.report_html(json.dumps(_jsonable(sources), allow_nan=False)))


def _jsonable(v: Any) -> Any:
    """``v`` as JSON takes it: NaN and infinities as null (as spmv's own JSON writes them),
    NumPy scalars as Python numbers."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if v is None or isinstance(v, (str, int, bool)):
        return v
    raise TypeError(f"report: a {type(v).__name__} is not JSON")
