"""FlashAttention-2 forward (Dao 2023, arXiv 2307.08691, Algorithm 1) as a Triton kernel, on attnio's workload
schedules: non-causal and causal (bottom-right aligned, blocks above the diagonal skipped), GQA/MQA with the
query heads of a group sharing each K/V tile (the ``grouped`` schedule), N_q ≠ N_kv.

Layout: q (batch, H, N_q, d), k (batch, H_kv, N_kv, d), v (batch, H_kv, N_kv, d_v), any strides; o (batch, H,
N_q, d_v) in q's element type; lse (batch, H, N_q) float32, L = m + log ℓ of each query row (natural log of
the scaled logits). Query head h uses K/V head ⌊h/g⌋, g = H/H_kv. Causal: query row i sees key rows
j ≤ i + δ, δ = N_kv − N_q ≥ 0.

One program per (unit, Q block i): a unit is one query head (``per-head``) or one K/V head with its g query
heads (``grouped``). Loop nest (paper's names; R = B_r rows of each of the unit's heads)::

    for each unit u (batch·H per-head, batch·H_kv grouped), in parallel:
      for i in 1..T_r (T_r = ⌈N_q/B_r⌉; rows [s_i, e_i), e_i = min(N_q, i·B_r)), in parallel:
        load Q_i (R × d, each head of the unit); O_i ← 0, ℓ_i ← 0, m_i ← −∞
        E_i = e_i + δ if causal else N_kv                    # key rows this block needs
        for j in 1..T_c,i (T_c,i = ⌈E_i/B_c⌉, T_c = ⌈N_kv/B_c⌉ unmasked; rows [(j−1)B_c, min(E_i, j·B_c)), the last masked):
          load K_j; S_ij = scale·Q_i K_jᵀ (−∞ where key > query + δ, or past E_i)
          m_new = max(m_i, rowmax S_ij); P̃_ij = exp(S_ij − m_new); ℓ_i = e^{m_i−m_new}ℓ_i + rowsum P̃_ij
          load V_j; O_i = e^{m_i−m_new}O_i + P̃_ij V_j; m_i = m_new
        write O_i/ℓ_i and L_i = m_i + log ℓ_i

Blocks: B_r and B_c of attnio's io-optimal rule for a fast-memory budget of M words (the workload schedule's
``tiling("flash2", w, schedule)``: a = ⌊(M − max(d, d_v))/(d + d_v + 4)⌋ rows, ⌊a/g⌋ positions per head in a
grouped block, T_r = ⌈N_q/⌊a/g⌋⌉, B_r = ⌈N_q/T_r⌉), or given. Tiles are the next powers of two, masked.

Exact count (words; every lane of a tile that is not masked moves one word; derived here, equal to
bounds/costs.py ``WORKLOAD_FORMULAS[("flash2", schedule, causal)]`` when B_r comes from M). Per unit:

    reads  = g·N_q·d + (d + d_v)·Σ_i E_i       Σ_i E_i = T_r·N_kv, or causal B_r·T_r(T_r−1)/2 + N_q + T_r·δ
    writes = g·N_q·(d_v + 1)                    O and one logsumexp per row

with g = 1 per-head; the workload moves units × that. B_c does not enter: the K/V tiles of a block cover
[0, E_i) once, whatever their size. Bytes: words × element size (q's for Q, K, V, O; 4 for lse).

Worked count: N_q = N_kv = 4, d = d_v = 2, causal, B_r = 1 (T_r = 4): K/V rows 1 + 2 + 3 + 4 = 10, reads =
8 + 10·4 = 48, writes = 12, as attnio's flash2 schedule at M = 14. MQA, 4 query heads on one K/V head,
N_q = 2, N_kv = 8, d = 2, M = 40 (a = 4): per-head B_r = 2, reads 4·(4 + 1·32) = 144; grouped ⌊a/g⌋ = 1,
T_r = 2, reads 16 + 2·32 = 80 (K/V read twice, not four times).

>>> from attnio.core.workload import Workload
>>> traffic(Workload.build(N=4, d=2, M=14, causal=True), B_r=1)
IOCount(reads_words=48, writes_words=12)
>>> w = Workload.build(heads=4, kv_heads=1, Nq=2, Nkv=8, d=2, M=40)
>>> [(blocks(w, s)[0], traffic(w, blocks(w, s)[0], s).reads_words) for s in ("per-head", "grouped")]
[(2, 144), (1, 80)]
"""

from __future__ import annotations

from typing import Any

from attnio.algorithms.reference import default_scale
from attnio.algorithms.workloads import tiling
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int
from attnio.core.workload import Workload
from attnio.triton.kernels._common import (
    MIN_TILE,
    check_out,
    dot_in_fp32,
    pow2,
    require_interpreted,
    require_triton,
    tile,
    workload_of,
)

triton, tl = require_triton(__name__)

SCHEDULES = ("grouped", "per-head")


@triton.jit
def _fa2_fwd(
    Q, K, V, O, L,
    stride_qz, stride_qh, stride_qm, stride_qk, stride_kz, stride_kh, stride_kn, stride_kk,
    stride_vz, stride_vh, stride_vn, stride_vk, stride_oz, stride_oh, stride_om, stride_ok, stride_lz, stride_lh, stride_lm,
    H, NQ, NKV, D, DV, B_R, B_C, scale,
    GROUP: tl.constexpr, HEADS: tl.constexpr, CAUSAL: tl.constexpr,
    BLOCK_H: tl.constexpr, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr,
    DOT_F32: tl.constexpr,
):
    i = tl.program_id(0)
    u = tl.program_id(1)
    units = H // HEADS
    b = u // units
    h0 = (u % units) * HEADS  # first query head of the unit
    hk = h0 // GROUP  # its K/V head
    delta = NKV - NQ
    # rows of the block: BLOCK_H heads × BLOCK_R positions, row r = head (r // BLOCK_R), position r % BLOCK_R
    r = tl.arange(0, BLOCK_H * BLOCK_R).to(tl.int64)  # 64-bit offsets (no int32 overflow checks in the interpreter)
    hh = r // BLOCK_R
    p = r % BLOCK_R
    pos = i * B_R + p
    row_ok = (hh < HEADS) & (p < B_R) & (pos < NQ)
    dq = tl.arange(0, BLOCK_D).to(tl.int64)
    dvc = tl.arange(0, BLOCK_DV).to(tl.int64)
    q_rows = Q + b * stride_qz + (h0 + hh) * stride_qh + pos * stride_qm
    q = tl.load(q_rows[:, None] + dq[None, :] * stride_qk, mask=row_ok[:, None] & (dq[None, :] < D), other=0.0)
    if DOT_F32:
        q = q.to(tl.float32)
    m_i = tl.full([BLOCK_H * BLOCK_R], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H * BLOCK_R], tl.float32)
    acc = tl.zeros([BLOCK_H * BLOCK_R, BLOCK_DV], tl.float32)
    if CAUSAL:
        ext = tl.minimum(NQ, (i + 1) * B_R) + delta  # key rows [0, e_i + δ): blocks above the diagonal skipped
    else:
        ext = NKV
    c = tl.arange(0, BLOCK_C).to(tl.int64)
    k_base = K + b * stride_kz + hk * stride_kh
    v_base = V + b * stride_vz + hk * stride_vh
    for start in range(0, ext, B_C):
        cols = start + c
        col_ok = (c < B_C) & (cols < ext)
        kt = tl.load(k_base + cols[:, None] * stride_kn + dq[None, :] * stride_kk, mask=col_ok[:, None] & (dq[None, :] < D), other=0.0)
        if DOT_F32:
            kt = kt.to(tl.float32)
        s = tl.dot(q, tl.trans(kt)) * scale
        keep = col_ok[None, :]
        if CAUSAL:
            keep = keep & (cols[None, :] <= pos[:, None] + delta)
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))  # key 0 is in every first tile: finite for every row
        alpha = tl.exp(m_i - m_new)
        pt = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(pt, 1)
        vt = tl.load(v_base + cols[:, None] * stride_vn + dvc[None, :] * stride_vk, mask=col_ok[:, None] & (dvc[None, :] < DV), other=0.0)
        if DOT_F32:
            vt = vt.to(tl.float32)
        acc = acc * alpha[:, None] + tl.dot(pt.to(vt.dtype), vt)
        m_i = m_new
    acc = acc / l_i[:, None]
    o_rows = O + b * stride_oz + (h0 + hh) * stride_oh + pos * stride_om
    tl.store(o_rows[:, None] + dvc[None, :] * stride_ok, acc.to(O.dtype.element_ty), mask=row_ok[:, None] & (dvc[None, :] < DV))
    tl.store(L + b * stride_lz + (h0 + hh) * stride_lh + pos * stride_lm, m_i + tl.log(l_i), mask=row_ok)


def blocks(w: Workload, schedule: str = "grouped") -> tuple[int, int]:
    """(B_r, B_c) of attnio's io-optimal rule at the workload's M (InvalidParameter when M is too small)."""
    check_choice("schedule", schedule, SCHEDULES)
    t = tiling("flash2", w, schedule)
    return t.B_r, t.B_c


def traffic(w: Workload, B_r: int, schedule: str = "grouped") -> IOCount:
    """The kernel's exact global traffic in words over the whole workload with B_r positions per Q block
    (module docstring); with B_r from M it equals ``workload_cost("flash2", w, schedule)``."""
    check_choice("schedule", schedule, SCHEDULES)
    g = w.groups if schedule == "grouped" else 1
    Nq, Nkv, d, dv = w.Nq, w.Nkv, w.d, w.dv
    T_r = -(-Nq // B_r)
    kv_rows = B_r * T_r * (T_r - 1) // 2 + Nq + T_r * (Nkv - Nq) if w.causal else T_r * Nkv
    units = w.kv_heads_total if schedule == "grouped" else w.query_heads_total
    return IOCount(units * (g * Nq * d + kv_rows * (d + dv)), units * g * Nq * (dv + 1))


def buffers(w: Workload, like: Any) -> dict[str, Any]:
    """Empty outputs for the workload: o (batch, H, N_q, d_v) in ``like``'s element type, lse (batch, H, N_q) fp32."""
    import torch

    return {
        "o": torch.empty((w.batch, w.heads, w.Nq, w.dv), dtype=like.dtype, device=like.device),
        "lse": torch.empty((w.batch, w.heads, w.Nq), dtype=torch.float32, device=like.device),
    }


def fa2_forward(
    q: Any, k: Any, v: Any, *, causal: bool = False, M: int | None = None, block: tuple[int, int] | None = None,
    schedule: str = "grouped", scale: float | None = None, o: Any = None, lse: Any = None,
) -> tuple[Any, Any]:
    """Launch the FA-2 forward on torch tensors (module docstring for layouts); returns (o, lse).

    Blocks: exactly one of ``M`` (fast-memory words: attnio's io-optimal rule, :func:`blocks`) and ``block``
    = (B_r, B_c). ``o`` and ``lse`` may be given (written in place, e.g. to name them when counting). Under
    ``TRITON_INTERPRET=1`` it runs on CPU tensors; otherwise on the GPU that holds them.
    """
    check_choice("schedule", schedule, SCHEDULES)
    if (M is None) == (block is None):
        raise InvalidParameter("M", M, "exactly one of M (fast-memory words) and block=(B_r, B_c)")
    w = workload_of(q, k, v, causal=causal, M=M if M is not None else 1)
    if block is None:
        B_r, B_c = blocks(w, schedule)
    else:
        B_r, B_c = (check_int(n, x, min=1) for n, x in zip(("B_r", "B_c"), block, strict=True))
    g = w.groups
    heads = g if schedule == "grouped" else 1
    new = buffers(w, q)
    o = check_out("o", o, new["o"])
    lse = check_out("lse", lse, new["lse"])
    grid = (-(-w.Nq // B_r), w.batch * w.heads // heads)
    require_interpreted(_fa2_fwd, q)
    _fa2_fwd[grid](
        q, k, v, o, lse, *q.stride(), *k.stride(), *v.stride(), *o.stride(), *lse.stride(),
        w.heads, w.Nq, w.Nkv, w.d, w.dv, B_r, B_c, default_scale(w.d, scale),
        GROUP=g, HEADS=heads, CAUSAL=bool(causal), BLOCK_H=pow2(heads), BLOCK_R=max(pow2(B_r), -(-MIN_TILE // pow2(heads))),
        BLOCK_C=tile(B_c), BLOCK_D=tile(w.d), BLOCK_DV=tile(w.dv), DOT_F32=dot_in_fp32(q),
    )
    return o, lse
