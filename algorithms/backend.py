"""NumPy by default; CuPy when the inputs are CuPy arrays. Counts never depend on the backend."""

from __future__ import annotations

import functools
import os
from types import ModuleType

import numpy as np


@functools.cache
def gpu_available() -> bool:
    """True when CuPy imports *and* a CUDA device answers (CuPy imports fine on CPU-only machines)."""
    if os.environ.get("ATTNIO_FORCE_CPU"):
        return False
    try:
        import cupy

        return bool(cupy.cuda.is_available())
    except Exception:  # ImportError, CUDARuntimeError, missing libcuda ...
        return False


def namespace(*arrays: object) -> ModuleType:
    """The array module of the arrays: ``numpy`` or ``cupy``; mixing them is an error."""
    mods = {type(a).__module__.split(".")[0] for a in arrays if a is not None}
    if mods <= {"numpy"}:
        return np
    if mods == {"cupy"}:
        import cupy

        return cupy
    raise TypeError(f"arrays come from different or unsupported libraries: {sorted(mods)}")


def get_backend(name: str) -> ModuleType:
    if name == "numpy":
        return np
    if name == "cupy":
        if not gpu_available():
            from attnio.core.errors import Unsupported

            raise Unsupported("backend='cupy' needs CuPy and a CUDA device; none is available here")
        import cupy

        return cupy
    raise AssertionError(name)


def to_numpy(x: object) -> np.ndarray:
    return x.get() if type(x).__module__.startswith("cupy") else np.asarray(x)  # type: ignore[attr-defined]
