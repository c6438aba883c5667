"""Launchers for tests/test_triton_scale.py: attnio's kernels with explicit blocks, and a kernel written here to
break the laws attnio.triton.scale checks (``TRITON_INTERPRET=1`` before import).

``_probe`` (q (batch, heads, N, d) contiguous): program (i, u) copies query block i of head u into o; MODE adds
one access the laws forbid: 1, the last unit reads one more word (units not offset-only); 2, program i reads
i² more words (not piecewise affine in i); 3, program 2 reads one more word (off the line its neighbours fit).
"""

from __future__ import annotations

import triton
import triton.language as tl

from attnio.triton.kernels.fa2_bwd import fa2_backward
from attnio.triton.kernels.square_tiling import square_tiling_forward


@triton.jit
def _probe(Q, O, N, D: tl.constexpr, MODE: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    u = tl.program_id(1)
    base = u * N * D
    rows = i * BLOCK + tl.arange(0, BLOCK)
    cols = tl.arange(0, D)
    m = rows[:, None] < N
    x = tl.load(Q + base + rows[:, None] * D + cols[None, :], mask=m, other=0.0)
    if MODE == 1:
        if u == tl.num_programs(1) - 1:
            x += tl.load(Q + base)
    if MODE == 2:
        j = tl.arange(0, 2048)
        x += tl.sum(tl.load(Q + base + j, mask=j < i * i, other=0.0))
    if MODE == 3:
        if i == 2:
            x += tl.load(Q + base)
    tl.store(O + base + rows[:, None] * D + cols[None, :], x, mask=m)


def probe(mode: int):
    """A launcher of ``_probe`` with MODE ``mode`` (blocks of 16 rows, one program per (block, query head))."""

    def launch(q, k, v, o):
        B, H, N, d = q.shape
        _probe[(triton.cdiv(N, 16), B * H)](q, o, N, D=d, MODE=mode, BLOCK=16)

    return launch


def backward(B_r: int, B_c: int):
    """attnio's FA-2 backward with blocks (B_r, B_c) as a launcher."""

    def launch(q, k, v, o, do, lse, dq, dk, dv, causal):
        fa2_backward(q, k, v, o, do, lse, causal=causal, B_r=B_r, B_c=B_c, dq=dq, dk=dk, dv=dv)

    return launch


def square(B: int):
    """attnio's square-tiling forward (two launches, S in slow memory) with tile side B as a launcher."""

    def launch(q, k, v, o, lse, causal):
        square_tiling_forward(q, k, v, causal=causal, B=B, o=o, lse=lse)

    return launch


#: module-level launchers for ``attnio kernel tests/scale_kernels.py:NAME --fast``
probe_plain = probe(0)
probe_last_unit_reads_more = probe(1)
