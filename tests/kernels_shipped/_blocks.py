"""Block sizes and the plumbing every kernel of this package shares, imported relatively by the kernels and the
launchers (the package-relative import under test): a query block's rows and columns, a grouped head's K/V head,
a tile's pointers, the online softmax's empty state and one key block of its update (Dao 2023, arXiv 2307.08691,
Algorithm 1, lines 8–10). Each kernel keeps its own loop (which keys a block reads, through which pointers, with
which mask)."""

import triton
import triton.language as tl

BLOCK_M = 16
BLOCK_N = 16


@triton.jit
def query_block(i, BLOCK_M: tl.constexpr, D: tl.constexpr, DV: tl.constexpr):
    """Query block ``i``'s rows, and the columns of a Q row (``D``) and of an output row (``DV``)."""
    return i * BLOCK_M + tl.arange(0, BLOCK_M), tl.arange(0, D), tl.arange(0, DV)


@triton.jit
def kv_head(bh, H, groups):
    """For program axis ``bh = b·H + h`` over grouped heads: the sequence b, the K/V heads per sequence and h's K/V head."""
    return bh // H, H // groups, (bh % H) // groups


@triton.jit
def tile(base, rows, cols, width):
    """Pointers to the ``rows`` × ``cols`` tile of the row-major matrix of row length ``width`` at ``base``."""
    return base + rows[:, None] * width + cols[None, :]


@triton.jit
def empty_state(BLOCK_M: tl.constexpr, DV: tl.constexpr):
    """The running maximum (−inf), running sum (0) and output accumulator (0) of ``BLOCK_M`` query rows."""
    return (tl.full([BLOCK_M], float("-inf"), tl.float32), tl.zeros([BLOCK_M], tl.float32),
            tl.zeros([BLOCK_M, DV], tl.float32))


@triton.jit
def online_softmax_step(q, k, v, live, sm_scale, m, l, acc):
    """One key block: scores of the ``live`` columns (the others −inf), the maximum and sum rescaled, P·V added."""
    sc = tl.dot(q, tl.trans(k)) * sm_scale
    sc = tl.where(live, sc, float("-inf"))
    m_new = tl.maximum(m, tl.max(sc, 1))
    p = tl.exp(sc - m_new[:, None])
    alpha = tl.exp(m - m_new)
    l = l * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None] + tl.dot(p, v)
    return m_new, l, acc
