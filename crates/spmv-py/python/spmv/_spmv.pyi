# Type stubs of the extension module under the package `spmv` (src/lib.rs). Host arrays are
# any objects with the buffer protocol (NumPy), CUDA arrays objects with
# __cuda_array_interface__; the extension checks them. Use the package's functions, not these.
from typing import Any

__version__: str

def gpu_available() -> tuple[bool, str]: ...
def formats() -> list[tuple[str, str, bool, list[tuple[str, str, str]]]]: ...
def read(path: str) -> Csr: ...
def read_bytes(data: Any) -> Csr: ...
def generate(spec: str) -> Csr: ...
def to_device(a: Csr, format: str, precision: str, device: str) -> Operator: ...

# `args`: an object with the attributes method ("auto", "cg", "bicgstab", "minres" or
# "gmres"), jacobi, tol, max_iter, check_every, graph and restart.
def solve(op: Operator, b: Any, x: Any, args: Any) -> dict[str, Any]: ...
def solve_distributed(a: Csr, b: Any, x: Any, args: Any, parts: tuple[str, str, list[int], str]) -> dict[str, Any]: ...
def pagerank(
    a: Csr,
    ranks: Any,
    format: str,
    device: str,
    alpha: float,
    tol: float,
    max_iter: int,
    weighted: bool,
    devices: list[int] | None,
    exchange: str,
) -> dict[str, Any]: ...
def bench(
    matrices: list[Csr],
    names: list[str],
    formats_list: str,
    precisions: str,
    device: str,
    reps: int,
    warmup: int,
    devices: list[int] | None,
    exchange: str,
) -> str: ...

class Csr:
    @staticmethod
    def from_arrays(nrows: int, ncols: int, indptr: Any, indices: Any, data: Any) -> Csr: ...
    @property
    def shape(self) -> tuple[int, int]: ...
    @property
    def nnz(self) -> int: ...
    def to_bytes(self) -> tuple[bytes, bytes, bytes]: ...

class Operator:
    @property
    def shape(self) -> tuple[int, int]: ...
    @property
    def nnz(self) -> int: ...
    @property
    def format(self) -> str: ...
    @property
    def precision(self) -> str: ...
    @property
    def on_gpu(self) -> bool: ...
    @property
    def backend(self) -> str: ...
    @property
    def stats(self) -> dict[str, Any]: ...
    def apply(
        self,
        x: Any,
        y: Any,
        alpha: float,
        beta: float,
        transpose: bool = False,
        k: int | None = None,
        col_major: bool = False,
        cuda: bool = False,
    ) -> None: ...

def default_specs() -> list[str]: ...
