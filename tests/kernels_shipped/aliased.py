"""A FlashAttention-2 forward (Dao 2023, arXiv 2307.08691, Algorithm 1) written here in a convention shipped
kernel files use: module-level aliases of ``triton.language`` builtins (``exp2 = tl.exp2``, ``tl_max = tl.max``,
bound at import, before Triton's interpreter patches ``triton.language``), one imported by name. Program
(query block i of 16 rows, query head): reads its Q block, every K and V row of its K/V head in blocks of 16
(masked past N_kv), writes its O block; base-2 softmax.

Launcher ``attention(q, k, v, o, sm_scale)``: q (batch, heads, N_q, d), k (batch, kv_heads, N_kv, d), v (...,
d_v), o (batch, heads, N_q, d_v), contiguous; d and d_v powers of two.
"""

from __future__ import annotations

import triton
import triton.language as tl
from triton.language.math import log2  # an alias imported by name

exp2 = tl.exp2
tl_max = tl.max
LOG2E = 1.4426950408889634


@triton.jit
def _attn_aliased(Q, K, V, O, Nq, Nkv, groups, sm_scale, D: tl.constexpr, DV: tl.constexpr, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    bh = tl.program_id(1)
    rows = i * BLOCK + tl.arange(0, BLOCK)
    dq = tl.arange(0, D)
    dvv = tl.arange(0, DV)
    q = tl.load(Q + bh * Nq * D + rows[:, None] * D + dq[None, :], mask=rows[:, None] < Nq, other=0.0)
    m = tl.full([BLOCK], float("-inf"), tl.float32)
    s = tl.zeros([BLOCK], tl.float32)
    acc = tl.zeros([BLOCK, DV], tl.float32)
    kv = bh // groups
    for j in range(0, Nkv, BLOCK):
        cols = j + tl.arange(0, BLOCK)
        k = tl.load(K + kv * Nkv * D + cols[:, None] * D + dq[None, :], mask=cols[:, None] < Nkv, other=0.0)
        v = tl.load(V + kv * Nkv * DV + cols[:, None] * DV + dvv[None, :], mask=cols[:, None] < Nkv, other=0.0)
        x = tl.dot(q, tl.trans(k)) * (sm_scale * LOG2E)
        x = tl.where((cols < Nkv)[None, :], x, float("-inf"))
        m_new = tl.maximum(m, tl_max(x, 1))
        p = exp2(x - m_new[:, None])
        alpha = exp2(m - m_new)
        s = s * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p, v)
        m = m_new
    out = acc / exp2(log2(s))[:, None]
    tl.store(O + bh * Nq * DV + rows[:, None] * DV + dvv[None, :], out, mask=rows[:, None] < Nq)


def attention(q, k, v, o, sm_scale):
    B, H, Nq, d = q.shape
    _attn_aliased[(triton.cdiv(Nq, 16), B * H)](q, k, v, o, Nq, k.shape[2], H // k.shape[1], sm_scale, D=d,
                                                 DV=v.shape[3], BLOCK=16)
