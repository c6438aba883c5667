"""What attnio's Triton kernels share: Triton's import (:func:`require_triton`), tile padding, the
interpreter's bf16 ``tl.dot`` workaround (:func:`dot_in_fp32`), and the workload of a call. Imports neither
Triton nor torch.

The kernels are module-level ``@triton.jit`` functions, as in Triton's tutorials: ``triton.jit`` picks the
interpreter or the GPU compiler from ``TRITON_INTERPRET`` when it is applied, so ``TRITON_INTERPRET=1`` must be set
before a kernel module (or Triton itself) is imported to count the kernels on the CPU; a kernel compiled for the
GPU launched on CPU tensors is an error saying so (:func:`require_interpreted`).

Tiles are powers of two (Triton's rule) and at least 16 on a side (the smallest ``tl.dot`` of a GPU); a block
of another size is a masked tile, and masked lanes move no data, so padding never changes a count.
"""

from __future__ import annotations

import os
from typing import Any

from attnio.core.errors import InvalidParameter, Unsupported
from attnio.core.workload import Workload

#: element type of a torch tensor → attnio's dtype name (words × bytes per word = bytes)
DTYPE_NAMES = {"torch.float32": "fp32", "torch.float16": "fp16", "torch.bfloat16": "bf16"}
MIN_TILE = 16
#: what to install for the kernel modules
EXTRA = "pip install -e '.[triton]'"


def require_triton(module: str) -> tuple[Any, Any]:
    """``(triton, triton.language)`` for the kernel module ``module``, or an ImportError naming the extra."""
    try:
        import triton
        import triton.language as tl
    except ImportError as e:
        raise ImportError(f"{module} needs Triton and torch: {EXTRA}") from e
    return triton, tl


def interpreting() -> bool:
    """Whether ``TRITON_INTERPRET`` is on now (read from the environment: no Triton import)."""
    return os.environ.get("TRITON_INTERPRET", "").strip().lower() in ("1", "true", "on", "yes")


def require_interpreted(kernel: Any, x: Any) -> None:
    """Unsupported when ``x`` is a CPU tensor but ``kernel`` was compiled for the GPU (its module was imported
    before ``TRITON_INTERPRET=1`` was set)."""
    from attnio.triton.hooks import is_interpreted

    if x.device.type == "cpu" and not is_interpreted(kernel):
        raise Unsupported(f"CPU tensors run only in Triton's interpreter: set TRITON_INTERPRET=1 before "
                          f"{kernel.fn.__module__} (and Triton) is imported")


def dot_in_fp32(x: Any) -> bool:
    """True where ``tl.dot`` must see fp32 operands: bf16 under Triton 3.9's interpreter, whose dot multiplies
    the raw 16-bit patterns of bf16 tiles (numpy has no bf16). Loads and stores keep the tensors' own type, so
    counts do not change; on a GPU the dot takes bf16. The one place this workaround is decided."""
    return interpreting() and str(x.dtype) == "torch.bfloat16"


def check_shape(name: str, x: Any, want: tuple[int, ...]) -> None:
    """InvalidParameter naming ``name``.shape unless ``x`` has the shape ``want``."""
    if tuple(x.shape) != tuple(want):
        raise InvalidParameter(f"{name}.shape", tuple(x.shape), f"{tuple(want)}")


def pow2(n: int) -> int:
    """The least power of two ≥ n ≥ 1."""
    return 1 << (n - 1).bit_length()


def tile(n: int) -> int:
    """The power-of-two tile side that holds a block of ``n`` (≥ :data:`MIN_TILE`).

    >>> [tile(n) for n in (1, 16, 17, 40)]
    [16, 16, 32, 64]
    """
    return max(MIN_TILE, pow2(n))


def workload_of(q: Any, k: Any, v: Any, *, causal: bool, M: int) -> Workload:
    """The :class:`Workload` of tensors laid out (batch, heads, N, width): q (batch, H, N_q, d), k (batch, H_kv,
    N_kv, d), v (batch, H_kv, N_kv, d_v); InvalidParameter naming the tensor whose shape or type does not fit."""
    for name, x in (("q", q), ("k", k), ("v", v)):
        if x.dim() != 4:
            raise InvalidParameter(f"{name}.shape", tuple(x.shape), "4 dimensions (batch, heads, N, width)")
        if str(x.dtype) not in DTYPE_NAMES:
            raise InvalidParameter(f"{name}.dtype", str(x.dtype), "one of " + ", ".join(DTYPE_NAMES))
        if x.dtype != q.dtype:
            raise InvalidParameter(f"{name}.dtype", str(x.dtype), f"q's element type {q.dtype}")
    B, H, Nq, d = q.shape
    if k.shape[0] != B or k.shape[3] != d:
        raise InvalidParameter("k.shape", tuple(k.shape), f"(batch={B}, H_kv, N_kv, d={d})")
    if tuple(v.shape[:3]) != tuple(k.shape[:3]):
        raise InvalidParameter("v.shape", tuple(v.shape), f"({B}, {k.shape[1]}, {k.shape[2]}, d_v) like k")
    return Workload.build(batch=B, heads=H, kv_heads=k.shape[1], Nq=Nq, Nkv=k.shape[2], d=d, dv=v.shape[3],
                          causal=causal, dtype=DTYPE_NAMES[str(q.dtype)], M=M)


def check_out(name: str, x: Any, new: Any) -> Any:
    """A caller's output tensor ``x``, checked against ``new`` (a fresh one of the right shape, type and
    device), or ``new`` when ``x`` is None."""
    if x is None:
        return new
    if tuple(x.shape) != tuple(new.shape) or x.dtype != new.dtype or x.device != new.device:
        raise InvalidParameter(name, f"{tuple(x.shape)} {x.dtype} on {x.device}", f"shape {tuple(new.shape)}, {new.dtype}, on {new.device}")
    return x
