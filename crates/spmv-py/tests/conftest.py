"""What the tests share: the real matrices they sweep (named at the end of the run), the sweep
of refused arguments and PyTorch with CUDA."""

import os
import pathlib

import pytest

HERE = pathlib.Path(__file__).resolve().parent


def matrix_set():
    """The real matrices to sweep, chosen as the Rust tests choose them: $SPMV_MATRICES, else
    ../shared/matrices beside the checkout, else the repository's data/matrices (and its
    small/). Returns the set's name and its files."""
    env = os.environ.get("SPMV_MATRICES")
    if env:
        return f"$SPMV_MATRICES ({env})", sorted(pathlib.Path(env).glob("*.mtx.gz"))
    shared = HERE.parents[3] / "shared" / "matrices"
    if shared.is_dir():
        return f"the shared set ({shared})", sorted(shared.glob("*.mtx.gz"))
    data = HERE.parents[2] / "data" / "matrices"
    return "the repository's (data/matrices)", sorted([*data.glob("*.mtx.gz"), *data.glob("small/*.mtx.gz")])


def assert_refused(cases):
    """Each case ``(kind, name, call)``: ``call()`` must raise ``kind`` with ``name`` in its
    message. Every case runs; the assertion lists all that were accepted or refused wrongly."""
    wrong = []
    for kind, name, call in cases:
        try:
            call()
            wrong.append(f"{name}: accepted")
        except kind as e:
            if name not in str(e):
                wrong.append(f"{name}: {e}")
        except Exception as e:  # noqa: BLE001 - the wrong kind is what is reported
            wrong.append(f"{name}: {type(e).__name__}: {e}")
    assert not wrong, wrong


def torch_with_cuda():
    """PyTorch, for a test of CUDA tensors: skipped where PyTorch or its CUDA is missing."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch without CUDA")
    return torch


def pytest_terminal_summary(terminalreporter):
    name, paths = matrix_set()
    terminalreporter.write_line(f"real matrices: {len(paths)} from {name}")
