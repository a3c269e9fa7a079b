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
"""

from __future__ import annotations

import json
import numbers
import os
import warnings
from collections.abc import Sequence
from typing import Any, Union

import numpy as np

from . import _spmv

__version__: str = _spmv.__version__
__all__ = [
    "Matrix",
    "Operator",
    "SolveResult",
    "PageRankResult",
    "read",
    "generate",
    "formats",
    "gpu_available",
    "cg",
    "bicgstab",
    "pagerank",
    "bench",
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


class Matrix:
    """A sparse matrix on the host, in canonical CSR with float64 values (what every format
    is built from). Make one with :func:`read`, :func:`generate` or :meth:`from_scipy`."""

    def __init__(self, csr: _spmv.Csr) -> None:
        if not isinstance(csr, _spmv.Csr):
            raise TypeError("build a Matrix with spmv.read, spmv.generate or Matrix.from_scipy")
        self._csr = csr

    @classmethod
    def from_scipy(cls, a: Any) -> Matrix:
        """From any scipy.sparse matrix or array (real or integer values). A CSR matrix in
        canonical form (sorted indices, no duplicates) is taken as it is; others are converted
        (duplicates summed)."""
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
        return cls(_spmv.Csr.from_arrays(nrows, ncols, index_array(csr.indptr), index_array(csr.indices), data))

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

    def to_device(self, format: str = "auto", precision: str = "f64", device: str = "auto") -> Operator:
        """The matrix converted to ``format`` (a spec: "auto", "brcp", "sell-c-sigma:c=32,sigma=1024",
        see :func:`formats`) in ``precision`` ("f64", "f32", "f16") on ``device`` ("auto": the GPU
        when there is one, with a warning once when there is none; "gpu"; "cpu")."""
        global _warned_cpu
        _str(format, "format"), _str(precision, "precision"), _str(device, "device")
        if device == "auto" and not _warned_cpu:
            ok, why = gpu_available()
            if not ok:
                warnings.warn(f"spmv: no GPU ({why}); running on the CPU", RuntimeWarning, stacklevel=2)
                _warned_cpu = True
        return Operator(_spmv.to_device(self._csr, format, precision, device))

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
    return Matrix.from_scipy(a)


def _empty_like_device(x: Any, n: int, dtype: np.dtype) -> Any:
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        return x.new_empty((n,))
    if module == "cupy":
        import cupy

        with cupy.cuda.Device(x.device.id):
            return cupy.empty(n, dtype=dtype)
    raise TypeError(
        f"pass y= for CUDA arrays of type {type(x).__name__} (spmv allocates CuPy arrays and PyTorch tensors)"
    )


def _host_vector(v: Any, name: str, dtype: np.dtype) -> np.ndarray:
    """`v` as a contiguous aligned array of `dtype`; a finite value that the conversion would
    turn into ±inf (1e5 in float16) is an error, not a silent infinity."""
    arr = np.asarray(v)
    if arr.dtype.kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, not {arr.dtype}")
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, not of shape {arr.shape}")
    with np.errstate(over="ignore", invalid="ignore"):
        out = np.require(arr, dtype, ["C", "A"])
    if arr.dtype != dtype:
        lost = np.isfinite(arr) & ~np.isfinite(out)
        if lost.any():
            k = int(np.argmax(lost))
            raise ValueError(
                f"{name}[{k}] = {arr[k]} is outside the range of {dtype} (±{np.finfo(dtype).max:g}): "
                "use a wider precision"
            )
    return out


def _to_host(v: Any) -> tuple[Any, str | None]:
    """A host array of a CUDA array (and the library it came from), or v itself."""
    if not hasattr(v, "__cuda_array_interface__"):
        return v, None
    module = type(v).__module__.split(".")[0]
    if module == "torch":
        return v.detach().cpu().numpy(), "torch"
    if module == "cupy":
        import cupy

        return cupy.asnumpy(v), "cupy"
    raise TypeError(f"spmv takes NumPy arrays, CuPy arrays and PyTorch tensors, not {type(v).__name__}")


def _write_back(y: Any, host: np.ndarray) -> Any:
    """Copies a host result into the caller's CUDA array `y` (written in place, as promised)."""
    if type(y).__module__.split(".")[0] == "torch":
        import torch

        y.copy_(torch.from_numpy(host))
    else:
        y.set(host)
    return y


def _like(host: np.ndarray, origin: str | None, template: Any) -> Any:
    if origin == "torch":
        import torch

        return torch.from_numpy(host).to(template.device)
    if origin == "cupy":
        import cupy

        return cupy.asarray(host)
    return host


class Operator:
    """A matrix in one format and precision on the GPU (or the CPU): ``op @ x`` and
    :meth:`apply`. Made by :meth:`Matrix.to_device`."""

    def __init__(self, raw: _spmv.Operator) -> None:
        self._raw = raw

    @property
    def shape(self) -> tuple[int, int]:
        return self._raw.shape

    @property
    def nnz(self) -> int:
        return self._raw.nnz

    @property
    def format(self) -> str:
        """The format's label: the spec, with ``auto``'s choice as ``auto(chosen)``."""
        return self._raw.format

    @property
    def precision(self) -> str:
        return self._raw.precision

    @property
    def dtype(self) -> np.dtype:
        return _DTYPES[self._raw.precision]

    @property
    def on_gpu(self) -> bool:
        return self._raw.on_gpu

    @property
    def backend(self) -> str:
        return self._raw.backend

    @property
    def stats(self) -> dict[str, Any]:
        """The format's storage figures (bytes, stored slots, padding ...)."""
        return self._raw.stats

    def apply(self, x: Any, y: Any = None, alpha: float = 1.0, beta: float = 0.0) -> Any:
        """y = alpha·A·x + beta·y (beta = 0 never reads y). NumPy x gives NumPy y (y, when
        given, must be a contiguous writable array of this dtype: it is written in place);
        CuPy or PyTorch CUDA x gives the same kind, computed in place without copies, after
        the work queued on the caller's stream."""
        nrows, ncols = self.shape
        dtype = self.dtype
        alpha, beta = _real(alpha, "alpha"), _real(beta, "beta")
        if y is None and beta != 0:
            raise ValueError("beta != 0 needs y")
        x_cuda, y_cuda = hasattr(x, "__cuda_array_interface__"), hasattr(y, "__cuda_array_interface__")
        if x_cuda and self.on_gpu:
            if y is None:
                y = _empty_like_device(x, nrows, dtype)
            elif not y_cuda:
                raise TypeError(f"y must be a CUDA array like x, not {type(y).__name__}")
            # Checked in the extension against the driver; an x that overlaps y is copied.
            self._raw.apply_device(x, y, alpha, beta)
            return y
        if x_cuda or y_cuda:
            # CUDA arrays with a CPU operator (or beside NumPy): through the host, the result
            # written into the caller's y when given, else returned as x's kind.
            xh, origin = _to_host(x)
            yh = None if y is None else _to_host(y)[0]
            result = self.apply(xh, yh, alpha, beta)
            return _write_back(y, result) if y_cuda else _like(result, origin, x)
        xs = _host_vector(x, "x", dtype)
        if y is None:
            y = np.empty(nrows, dtype=dtype)
        elif not isinstance(y, np.ndarray):
            raise TypeError(f"y must be a NumPy array like x, not {type(y).__name__}")
        # Lengths, dtype, contiguity and writability of y are checked by the extension; an x
        # that shares memory with y (op.apply(b, b)) is copied first, as NumPy does for out=.
        self._raw.apply_host(xs, y, alpha, beta)
        return y

    def __matmul__(self, x: Any) -> Any:
        return self.apply(x)

    def __repr__(self) -> str:
        shape = f"{self.shape[0]} x {self.shape[1]}"
        return f"spmv.Operator({shape}, nnz {self.nnz}, {self.format}, {self.precision}, {self.backend})"


class SolveResult:
    """What :func:`cg` and :func:`bicgstab` return."""

    x: Any
    outcome: str
    breakdown: str | None
    converged: bool
    iterations: int
    residual: float
    true_residual: float
    ms: float
    iteration_ms: float
    graph: bool

    def __init__(self, x: Any, figures: dict[str, Any]) -> None:
        self.x = x
        for key, value in figures.items():
            setattr(self, key, value)

    def __repr__(self) -> str:
        what = self.outcome if self.breakdown is None else f"breakdown ({self.breakdown})"
        return (
            f"SolveResult({what}, {self.iterations} iterations, residual {self.residual:.3e}, "
            f"true residual {self.true_residual:.3e}, {self.ms:.3f} ms)"
        )


def _solve(
    method: str,
    a: Any,
    b: Any,
    tol: float,
    max_iter: int,
    precond: str | None,
    check_every: int,
    graph: bool,
    format: str,
    precision: str,
) -> SolveResult:
    if precond not in (None, "none", "jacobi"):
        raise ValueError(f'precond must be None or "jacobi", not {precond!r}')
    tol, max_iter = _real(tol, "tol"), _int(max_iter, "max_iter", 1)
    check_every, graph = _int(check_every, "check_every", 1), _bool(graph, "graph")
    op = a if isinstance(a, Operator) else _as_matrix(a).to_device(format=format, precision=precision)
    n = op.shape[0]
    if op.shape[0] != op.shape[1]:
        raise ValueError(f"{method} needs a square matrix, this one is {op.shape[0]} x {op.shape[1]}")
    bh, origin = _to_host(b)
    bs = _host_vector(bh, "b", op.dtype)
    if bs.shape[0] != n:
        raise ValueError(f"b has {bs.shape[0]} entries, the matrix needs {n}")
    x = np.empty(n, dtype=op.dtype)
    figures = _spmv.solve(op._raw, method, bs, x, precond == "jacobi", tol, max_iter, check_every, graph)
    return SolveResult(_like(x, origin, b), figures)


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


def cg(
    a: Any,
    b: Any,
    *,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    precond: str | None = None,
    check_every: int = 10,
    graph: bool = True,
    format: str = "auto",
    precision: str = "f64",
    devices: Devices | None = None,
    exchange: str = "peer",
) -> SolveResult:
    """Conjugate gradients for a symmetric positive definite A·x = b from x = 0, stopping at
    ‖r‖/‖b‖ ≤ tol. ``a``: an :class:`Operator` (any format, GPU or CPU), a :class:`Matrix` or a
    scipy.sparse matrix (converted to ``format``). ``precond="jacobi"``: the inverse diagonal.
    On the GPU the whole iteration runs on the device as a CUDA graph; the host reads the
    residual every ``check_every`` iterations. The result says converged / not_converged /
    breakdown (what vanished) / non_finite / inaccurate_residual, with the true residual.

    ``devices``: spread A over several GPUs — a count (``2``: devices 0 and 1) or a list of
    ordinals — in row parts of about equal entries, each in ``format`` (``auto`` chooses per
    part), the halo of x moved by ``exchange`` ("peer" copies or "nccl") before each product;
    no preconditioner, f64 or f32 (docs/scale.md)."""
    if devices is not None:
        ordinals = _device_list(devices, exchange)
        if isinstance(a, Operator):
            raise ValueError(
                "devices: pass a Matrix or a scipy.sparse matrix (it is split over the devices), not an Operator"
            )
        if precond not in (None, "none"):
            raise ValueError("devices: the distributed CG has no preconditioner")
        if precision not in ("f64", "f32"):
            raise ValueError(f'devices: the distributed CG runs in "f64" or "f32", not {precision!r}')
        m = _as_matrix(a)
        if m.shape[0] != m.shape[1]:
            raise ValueError(f"cg needs a square matrix, this one is {m.shape[0]} x {m.shape[1]}")
        bh, origin = _to_host(b)
        bs = _host_vector(bh, "b", _DTYPES[precision])
        if bs.shape[0] != m.shape[0]:
            raise ValueError(f"b has {bs.shape[0]} entries, the matrix needs {m.shape[0]}")
        x = np.empty(m.shape[0], dtype=_DTYPES[precision])
        tol, max_iter = _real(tol, "tol"), _int(max_iter, "max_iter", 1)
        figures = _spmv.cg_distributed(
            m._csr, bs, x, _str(format, "format"), precision, ordinals, exchange, tol, max_iter
        )
        return SolveResult(_like(x, origin, b), figures)
    return _solve("cg", a, b, tol, max_iter, precond, check_every, graph, format, precision)


def bicgstab(
    a: Any,
    b: Any,
    *,
    tol: float = 1e-8,
    max_iter: int = 10_000,
    precond: str | None = None,
    check_every: int = 10,
    graph: bool = True,
    format: str = "auto",
    precision: str = "f64",
) -> SolveResult:
    """BiCGSTAB (right-preconditioned) for a general square A·x = b; as :func:`cg`."""
    return _solve("bicgstab", a, b, tol, max_iter, precond, check_every, graph, format, precision)


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
