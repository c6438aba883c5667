"""The self-test's kernels (:mod:`attnio.triton.selftest`): module-level ``@triton.jit`` functions, so this
module imports Triton (``pip install -e '.[triton]'``) and must be imported with ``TRITON_INTERPRET=1`` set."""

from __future__ import annotations

try:
    import triton
    import triton.language as tl
except ImportError as e:
    raise ImportError(f"{__name__} needs Triton and torch: pip install -e '.[triton]'") from e


@triton.jit
def copy_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m), mask=m)


@triton.jit
def add_kernel(x_ptr, acc_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    tl.atomic_add(acc_ptr + offs % 4, tl.load(x_ptr + offs, mask=m), mask=m)


@triton.jit
def cas_kernel(lock_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_cas(lock_ptr + offs, tl.zeros([BLOCK], tl.int32), tl.full([BLOCK], 1, tl.int32))
