"""CuPy wrappers of the attnio CUDA kernels (flash2 forward, square tiling's two phases).

Two builds of one source (``attnio_common.cu`` + ``flash2.cu`` + ``square_tiling.cu``), each a
``cupy.RawModule`` compiled by NVRTC with every template instance named in :data:`NAME_EXPRESSIONS`:

- instrumented (``count_io=True``, ``-DATTNIO_COUNT_IO``): each executed global load/store adds one word to a
  per-thread counter; the kernel adds them to a 2-word uint64 array (reads, writes) at the end;
- timed (``count_io=False``): no counter code at all.

dtypes: ``float32``, ``float16`` and ``bfloat16`` inputs (bfloat16 as ``uint16`` arrays of bit patterns, since
CuPy has no bfloat16 dtype: :func:`to_bfloat16_bits`, :func:`from_bfloat16_bits`); accumulation, softmax
statistics and all of shared memory are float32; O has the input dtype; L (and square tiling's S) are float32.

CuPy is imported lazily: this module imports (and its pure parts run) on machines without a GPU.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from attnio.algorithms.cuda import launch as L
from attnio.algorithms.flash2 import Flash2Tiling
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter, Unsupported

HERE = Path(__file__).resolve().parent
SOURCE_FILES = ("attnio_common.cu", "flash2.cu", "square_tiling.cu")
CUDA_TYPE = {"float32": "float", "float16": "attnio_half", "bfloat16": "attnio_bfloat16"}
KERNELS = ("flash2_fwd", "square_tiling_phase1", "square_tiling_phase2")
NAME_EXPRESSIONS = tuple(f"{k}<{t}>" for k in KERNELS for t in CUDA_TYPE.values())
COUNT_IO_FLAG = "-DATTNIO_COUNT_IO"


def source() -> str:
    """The module's CUDA C++ text: the three files in order, each behind a ``#line`` directive."""
    parts = []
    for name in SOURCE_FILES:
        parts.append(f'#line 1 "{name}"\n' + (HERE / name).read_text())
    return "\n".join(parts)


def compile_options(count_io: bool) -> tuple[str, ...]:
    return ("-std=c++17",) + ((COUNT_IO_FLAG,) if count_io else ())


@functools.cache
def module(count_io: bool) -> Any:
    """The compiled ``cupy.RawModule`` (NVRTC; CuPy caches the binary under ~/.cupy/kernel_cache)."""
    import cupy

    return cupy.RawModule(code=source(), options=compile_options(count_io), name_expressions=NAME_EXPRESSIONS)


def function(kernel: str, dtype: str, count_io: bool) -> Any:
    assert kernel in KERNELS, kernel
    return module(count_io).get_function(f"{kernel}<{CUDA_TYPE[dtype]}>")


@functools.cache
def shared_limit_bytes(device_id: int | None = None) -> int:
    """Dynamic shared memory one block may use on the device after opting in (H100/H200: 232,448)."""
    import cupy

    dev = cupy.cuda.Device(device_id)
    attrs = dev.attributes
    for key in ("MaxSharedMemoryPerBlockOptin", "MaxSharedMemoryPerBlock"):
        if key in attrs:
            return int(attrs[key])
    return int(cupy.cuda.runtime.getDeviceProperties(dev.id)["sharedMemPerBlockOptin"])


# dtypes ---------------------------------------------------------------------------------------------


def to_bfloat16_bits(x: Any) -> Any:
    """float32 CuPy/NumPy array -> uint16 bfloat16 bit patterns (round to nearest even, NaN kept)."""
    xp = _xp(x)
    u = xp.ascontiguousarray(x, dtype=xp.float32).view(xp.uint32)
    nan = (u & 0x7FFFFFFF) > 0x7F800000
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(xp.uint16)
    return xp.where(nan, xp.uint16(0x7FC0), r)


def from_bfloat16_bits(b: Any) -> Any:
    """uint16 bfloat16 bit patterns -> float32 (exact)."""
    xp = _xp(b)
    return (b.astype(xp.uint32) << 16).view(xp.float32)


def as_dtype(x: Any, dtype: str) -> Any:
    """A float array in the storage form the kernels read for ``dtype``."""
    xp = _xp(x)
    if dtype == "float32":
        return xp.ascontiguousarray(x, dtype=xp.float32)
    if dtype == "float16":
        return xp.ascontiguousarray(x, dtype=xp.float16)
    return to_bfloat16_bits(x)


def to_float32(x: Any, dtype: str) -> Any:
    return from_bfloat16_bits(x) if dtype == "bfloat16" else x.astype(_xp(x).float32)


def dtype_of(x: Any, dtype: str | None) -> str:
    name = str(x.dtype)
    if dtype is None:
        if name in ("float32", "float16"):
            return name
        raise InvalidParameter(
            "Q.dtype", name, "float32 or float16 (pass dtype='bfloat16' with uint16 bit patterns)"
        )
    want = {"float32": "float32", "float16": "float16", "bfloat16": "uint16"}
    if dtype not in want:
        raise InvalidParameter("dtype", dtype, "one of float32, float16, bfloat16")
    if name != want[dtype]:
        raise InvalidParameter("Q.dtype", name, f"{want[dtype]} storage for dtype={dtype}")
    return dtype


def _xp(x: Any) -> Any:
    if type(x).__module__.startswith("cupy"):
        import cupy

        return cupy
    return np


# launches -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KernelRun:
    """One forward pass on the GPU: the plan, the output (input dtype), the float32 row logsumexps L and, for
    the instrumented build, the in-kernel word counts (reads, writes)."""

    plan: L.KernelPlan
    O: Any
    stat: Any
    io: IOCount | None


def _check_inputs(Q: Any, K: Any, V: Any) -> tuple[int, int, int]:
    for name, x in (("Q", Q), ("K", K), ("V", V)):
        if getattr(x, "ndim", None) != 2:
            raise InvalidParameter(f"{name}.shape", getattr(x, "shape", None), "a 2-D CuPy array")
        if not type(x).__module__.startswith("cupy"):
            raise InvalidParameter(name, type(x).__name__, "a CuPy array on the GPU")
    N, d = Q.shape
    if K.shape != Q.shape:
        raise InvalidParameter("K.shape", tuple(K.shape), f"equal to Q.shape={tuple(Q.shape)}")
    if V.shape[0] != N:
        raise InvalidParameter("V.shape", tuple(V.shape), f"({N}, dv)")
    if not (Q.dtype == K.dtype == V.dtype):
        raise InvalidParameter("K.dtype/V.dtype", (str(K.dtype), str(V.dtype)), f"equal to Q.dtype={Q.dtype}")
    return N, d, V.shape[1]


def _launch(p: L.KernelPlan, i: int, args: tuple, count_io: bool) -> None:
    ln = p.launches[i]
    fn = function(ln.kernel, p.dtype, count_io)
    L.check_shared_memory(p, shared_limit_bytes())
    if ln.needs_opt_in and fn.max_dynamic_shared_size_bytes < ln.shared_bytes:
        fn.max_dynamic_shared_size_bytes = ln.shared_bytes
    fn(ln.grid, ln.block, args, shared_mem=ln.shared_bytes)


def flash2_args(
    p: L.KernelPlan, Q: Any, K: Any, V: Any, O: Any, Lse: Any, scale: np.float32, ctr: Any
) -> tuple:
    """flash2_fwd(Q, K, V, O, L, N, d, dv, B_r, B_c, scale, io_counter): scalars as the exact C types."""
    t = p.tiling
    ints = (p.N, p.d, p.dv, t.B_r, t.B_c)  # type: ignore[union-attr]
    return (Q, K, V, O, Lse, *(np.int32(x) for x in ints), np.float32(scale), ctr)


def square_phase1_args(
    p: L.KernelPlan, Q: Any, K: Any, S: Any, Lse: Any, scale: np.float32, ctr: Any
) -> tuple:
    """square_tiling_phase1(Q, K, S, L, N, d, B, scale, io_counter)."""
    return (Q, K, S, Lse, np.int32(p.N), np.int32(p.d), np.int32(p.tiling.B), np.float32(scale), ctr)  # type: ignore[union-attr]


def square_phase2_args(p: L.KernelPlan, S: Any, Lse: Any, V: Any, O: Any, ctr: Any) -> tuple:
    """square_tiling_phase2(S, L, V, O, N, dv, B, io_counter)."""
    return (S, Lse, V, O, np.int32(p.N), np.int32(p.dv), np.int32(p.tiling.B), ctr)  # type: ignore[union-attr]


def _empty_out(N: int, dv: int, dtype: str, poison: bool) -> Any:
    import cupy

    store = {"float32": cupy.float32, "float16": cupy.float16, "bfloat16": cupy.uint16}[dtype]
    O = cupy.empty((N, dv), dtype=store)
    if poison:  # all-ones bits: NaN in float32, float16 and bfloat16
        O.view(cupy.uint8).fill(0xFF)
    return O


def _scratch(shape: tuple[int, ...], poison: bool) -> Any:
    """A float32 array in global memory (L, S), NaN throughout when ``poison``."""
    import cupy

    return cupy.full(shape, np.nan, dtype=cupy.float32) if poison else cupy.empty(shape, dtype=cupy.float32)


def forward(
    algorithm: str, Q: Any, K: Any, V: Any, *, M: int, tiling: Flash2Tiling | None = None, scale: float | None = None,
    dtype: str | None = None, count_io: bool = False, threads: int = L.DEFAULT_THREADS, poison: bool = False,
) -> KernelRun:
    """One forward pass on the GPU. ``flash2``: the fused FlashAttention-2 forward with the model's blocks for
    ``M`` (or ``tiling``). ``square_tiling``: Saha–Ye square tiling, stable form (``tiling`` is not used):
    Phase 1 writes the logits S = scale·QKᵀ and row logsumexps L to global memory; Phase 2 reads them back tile
    by tile and forms O = exp(S − L)·V."""
    import cupy

    if algorithm not in ("flash2", "square_tiling"):
        raise InvalidParameter("algorithm", algorithm, "flash2 or square_tiling")
    N, d, dv = _check_inputs(Q, K, V)
    dt = dtype_of(Q, dtype)
    if algorithm == "flash2":
        p = L.flash2_plan(N, d, M, dv=dv, dtype=dt, tiling=tiling, threads=threads)
    else:
        p = L.square_tiling_plan(N, d, M, dv=dv, dtype=dt, threads=threads)
        if N * N * 4 > 64 * 2**30:
            raise Unsupported(f"square_tiling materialises the logits S: N²·4 = {N * N * 4} bytes > 64 GiB")
    s = np.float32(1.0 / np.sqrt(d) if scale is None else scale)
    Q, K, V = (cupy.ascontiguousarray(x) for x in (Q, K, V))
    O = _empty_out(N, dv, dt, poison)
    Lse = _scratch((N,), poison)
    ctr = cupy.zeros(2, dtype=cupy.uint64)
    if algorithm == "flash2":
        _launch(p, 0, flash2_args(p, Q, K, V, O, Lse, s, ctr), count_io)
    else:
        S = _scratch((N, N), poison)
        _launch(p, 0, square_phase1_args(p, Q, K, S, Lse, s, ctr), count_io)
        _launch(p, 1, square_phase2_args(p, S, Lse, V, O, ctr), count_io)
    io = IOCount(*(int(v) for v in ctr.get())) if count_io else None
    return KernelRun(p, O, Lse, io)


def standard_attention(Q: Any, K: Any, V: Any, scale: float | None = None) -> Any:
    """Unfused attention in CuPy (matmul, row softmax, matmul): the baseline the kernels are timed against.
    Works in the input's dtype (cuBLAS for the products), as a framework's plain attention would."""
    import cupy

    s = 1.0 / float(np.sqrt(Q.shape[1])) if scale is None else float(scale)
    S = Q @ K.T
    S *= S.dtype.type(s)
    S -= S.max(axis=1, keepdims=True)
    cupy.exp(S, out=S)
    S /= S.sum(axis=1, keepdims=True)
    return S @ V
