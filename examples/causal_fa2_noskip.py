"""A causal FlashAttention-2 forward written as a user might: correct, but it masks the blocks above the
diagonal instead of skipping them, so it reads every K/V block for every query block.

Written from the FlashAttention-2 paper (Dao 2023, arXiv 2307.08691, Algorithm 1: the outer loop over query
blocks Q_i, the inner loop over key/value blocks K_j, V_j with the online softmax m, l and the rescaled
accumulator, one division by l at the end). Each program owns one query block of B_r = BLOCK_M rows of one
query head and walks all T_c = ⌈N_kv / B_c⌉ key blocks; the causal mask (bottom-right aligned: row i sees key
j ≤ i + N_kv − N_q) only sets the scores above the diagonal to −∞.

Count it (the counts are exact; the kernel is interpreted on the CPU)::

    attnio kernel examples/causal_fa2_noskip.py:launch --N 128 --d 32 --causal

Reads per query head: Q once, K and V T_r = ⌈N_q / B_r⌉ times each (all T_c blocks, masked or not), O written
once (:func:`formula_bytes`). A kernel that skips the blocks above the diagonal reads K and V only on and below
it. For N = 128, d = 32, fp32, one head, B_r = 32: 4·(128·32 + 4·128·64 + 128·32) = 163,840 bytes.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def _fwd(Q, K, V, O, Nq, Nkv, groups, sm_scale, CAUSAL: tl.constexpr, D: tl.constexpr, DV: tl.constexpr,
         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    i = tl.program_id(0)  # query block
    bh = tl.program_id(1)  # (batch, query head), row-major
    bkv = bh // groups  # its (batch, K/V head): heads h share K/V head h // groups
    rows = i * BLOCK_M + tl.arange(0, BLOCK_M)
    dq = tl.arange(0, D)
    dvv = tl.arange(0, DV)
    q = tl.load(Q + bh * Nq * D + rows[:, None] * D + dq[None, :], mask=rows[:, None] < Nq, other=0.0)
    m = tl.full([BLOCK_M], float("-inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, DV], tl.float32)
    for j0 in range(0, Nkv, BLOCK_N):  # every key block: masked ones are loaded too
        cols = j0 + tl.arange(0, BLOCK_N)
        k = tl.load(K + bkv * Nkv * D + cols[:, None] * D + dq[None, :], mask=cols[:, None] < Nkv, other=0.0)
        v = tl.load(V + bkv * Nkv * DV + cols[:, None] * DV + dvv[None, :], mask=cols[:, None] < Nkv, other=0.0)
        s = tl.dot(q, tl.trans(k)).to(tl.float32) * sm_scale
        keep = cols[None, :] < Nkv
        if CAUSAL:
            keep = keep & (cols[None, :] <= rows[:, None] + (Nkv - Nq))
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v).to(tl.float32)
        m = m_new
    out = acc / l[:, None]
    tl.store(O + bh * Nq * DV + rows[:, None] * DV + dvv[None, :], out.to(O.dtype.element_ty), mask=rows[:, None] < Nq)


def launch(q, k, v, o, causal, sm_scale, BLOCK_M=32, BLOCK_N=32):
    """q (batch, heads, Nq, d), k/v (batch, kv_heads, Nkv, d/dv), o (batch, heads, Nq, dv): contiguous."""
    batch, heads, Nq, d = q.shape
    kv_heads, Nkv, dv = k.shape[1], k.shape[2], v.shape[3]
    grid = (triton.cdiv(Nq, BLOCK_M), batch * heads)
    _fwd[grid](q, k, v, o, Nq, Nkv, heads // kv_heads, sm_scale, CAUSAL=causal, D=d, DV=dv,
               BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N)
    return o


def formula_bytes(w, BLOCK_M=32):
    """The exact bytes this launcher moves on workload ``w`` (derived above; masks and partial blocks included:
    masked lanes are not loaded, so each of the T_r passes reads exactly N_kv rows of K and of V).

    >>> from attnio.core.workload import Workload
    >>> formula_bytes(Workload.build(N=128, d=32, causal=True, gpu="h100"))
    163840
    """
    Tr = -(-w.Nq // BLOCK_M)
    per_head = w.Nq * w.d + Tr * w.Nkv * (w.d + w.dv) + w.Nq * w.dv
    return w.bytes_per_word * w.batch * w.heads * per_head
