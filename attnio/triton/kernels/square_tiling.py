"""Square tiling for the small cache (Saha & Ye 2024, arXiv 2402.07443, Algorithm 1, made numerically stable as
attnio's ``square_tiling`` schedule is) as one Triton kernel launched once per phase: for M < d², where a row block of
FlashAttention cannot hold a full row of Q, every tile is B × B, the inner dimension d is streamed in chunks of
B, and the logits S go to slow memory once.

Layout: q (batch, H, N_q, d), k (batch, H_kv, N_kv, d), v (batch, H_kv, N_kv, d_v), any strides; o (batch, H,
N_q, d_v) in q's element type; scratch s (batch, H, N_q, N_kv) float32 (the logits, scaled and masked) and lse
(batch, H, N_q) float32 (one logsumexp per row). Query head h reads K/V head ⌊h/g⌋ (per-head schedule: each
query head reads its group's K/V itself). Causal: bottom-right aligned, query i sees keys j ≤ i + δ,
δ = N_kv − N_q ≥ 0; row tile i needs only the key columns [0, E_i), E_i = e_i + δ (N_kv without a mask).

Loop nest (paper's names; T_r = ⌈N_q/B⌉ row tiles [s_i, e_i), T_d = ⌈d/B⌉, T_v = ⌈d_v/B⌉), one program per
(query head, row tile i) in each phase (one kernel, two launches: ``PHASE`` 1 and 2)::

    # phase 1
    L_i ← −∞
    for j in 1..⌈E_i/B⌉ (key columns [(j−1)B, min(E_i, jB))):
        A_ij ← 0
        for l in 1..T_d: load Q[i, l], K[j, l] (B × B each); A_ij += Q[i, l]·K[j, l]ᵀ
        A_ij ← scale·A_ij (−∞ where key > query + δ); write S[i, j] = A_ij
        L_i ← logaddexp(L_i, rowlogsumexp A_ij)
    write L_i
    # phase 2
    load L_i
    for c in 1..T_v:
        O_ic ← 0
        for j in 1..⌈E_i/B⌉: load S[i, j], V[j, c]; O_ic += exp(S[i, j] − L_i)·V[j, c]
        write O_ic

Block rule: B = ⌊√(M/4)⌋ (attnio's ``tiling("square_tiling", w)``: four B × B tiles fit in M), or given; the
tile is the next power of two, masked to B.

Exact count: bounds/costs.py ``WORKLOAD_FORMULAS[("square_tiling", "per-head", causal)]`` (docs/costs.md#workloads)
at M = 4B² (which gives back B), per query head: reads = Q·(column tiles) + (d + d_v)·Σ_i E_i + N_q + T_v·ΣS,
writes = ΣS + N_q + N_q·d_v, ΣS = Σ_i rows_i·E_i (N_q·N_kv without a mask); the kernel moves exactly that.
Bytes: words × element size (q's for Q, K, V, O; 4 for s and lse).

Worked count: N = 4, d = 2, M = 16 (B = 2, T_r = 2, T_v = 1), one head: reads = 2·2·4·2 + 4 + 16 + 2·4·2 = 68,
writes = 16 + 4 + 8 = 28, as attnio's square_tiling schedule.

>>> from attnio.core.workload import Workload
>>> traffic(Workload.build(N=4, d=2, M=16), B=2)
IOCount(reads_words=68, writes_words=28)
"""

from __future__ import annotations

import dataclasses
from typing import Any

from attnio.algorithms.reference import default_scale
from attnio.algorithms.workloads import tiling
from attnio.bounds.costs import workload_cost
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_int
from attnio.core.workload import Workload
from attnio.triton.kernels._common import (
    check_out,
    dot_in_fp32,
    require_interpreted,
    require_triton,
    tile,
    workload_of,
)

triton, tl = require_triton(__name__)


@triton.jit
def _span(start, t, B, end):
    """One tile side: the indices ``start + t`` and which of them are live (``t < B`` of the padded lanes, and
    below ``end``)."""
    idx = start + t
    return idx, (t < B) & (idx < end)


@triton.jit
def _square_tiling(
    Q, K, V, S, L, O,
    stride_qz, stride_qh, stride_qm, stride_qk, stride_kz, stride_kh, stride_kn, stride_kk,
    stride_vz, stride_vh, stride_vn, stride_vk, stride_sz, stride_sh, stride_sm, stride_sn,
    stride_lz, stride_lh, stride_lm, stride_oz, stride_oh, stride_om, stride_ok,
    H, NQ, NKV, D, DV, B, scale,
    PHASE: tl.constexpr, GROUP: tl.constexpr, CAUSAL: tl.constexpr, BLOCK: tl.constexpr, DOT_F32: tl.constexpr,
):
    i = tl.program_id(0)
    hq = tl.program_id(1)
    b = hq // H
    h = hq % H
    hk = h // GROUP
    delta = NKV - NQ
    t = tl.arange(0, BLOCK).to(tl.int64)  # 64-bit offsets (and no int32 overflow checks in the interpreter)
    rows = i * B + t
    row_ok = (t < B) & (rows < NQ)
    if CAUSAL:
        ext = tl.minimum(NQ, (i + 1) * B) + delta  # key columns [0, e_i + δ)
    else:
        ext = NKV
    s_rows = S + b * stride_sz + h * stride_sh + rows * stride_sm
    l_rows = L + b * stride_lz + h * stride_lh + rows * stride_lm
    if PHASE == 1:  # logits S_ij, one logsumexp L_i per row
        q_rows = Q + b * stride_qz + h * stride_qh + rows * stride_qm
        k_base = K + b * stride_kz + hk * stride_kh
        lse = tl.full([BLOCK], float("-inf"), tl.float32)
        for c0 in range(0, ext, B):
            cols, col_ok = _span(c0, t, B, ext)
            a = tl.zeros([BLOCK, BLOCK], tl.float32)
            for k0 in range(0, D, B):
                ks, k_ok = _span(k0, t, B, D)
                qt = tl.load(q_rows[:, None] + ks[None, :] * stride_qk, mask=row_ok[:, None] & k_ok[None, :], other=0.0)
                kt = tl.load(k_base + cols[:, None] * stride_kn + ks[None, :] * stride_kk, mask=col_ok[:, None] & k_ok[None, :], other=0.0)
                if DOT_F32:
                    qt = qt.to(tl.float32)
                    kt = kt.to(tl.float32)
                a += tl.dot(qt, tl.trans(kt))
            a = a * scale
            if CAUSAL:
                a = tl.where(cols[None, :] > rows[:, None] + delta, float("-inf"), a)
            tl.store(s_rows[:, None] + cols[None, :] * stride_sn, a, mask=row_ok[:, None] & col_ok[None, :])
            a = tl.where(col_ok[None, :], a, float("-inf"))
            mx = tl.max(a, 1)
            mx = tl.where(mx == float("-inf"), 0.0, mx)  # a row wholly masked in this tile adds nothing
            sm = tl.sum(tl.exp(a - mx[:, None]), 1)
            part = tl.where(sm > 0, mx + tl.log(tl.where(sm > 0, sm, 1.0)), float("-inf"))
            top = tl.maximum(lse, part)  # key 0 lies in the first tile: finite from then on
            lse = top + tl.log(tl.exp(lse - top) + tl.exp(part - top))
        tl.store(l_rows, lse, mask=row_ok)
    else:  # O_ic = Σ_j exp(S_ij − L_i)·V_jc
        v_base = V + b * stride_vz + hk * stride_vh
        o_rows = O + b * stride_oz + h * stride_oh + rows * stride_om
        lse = tl.load(l_rows, mask=row_ok, other=0.0)
        for v0 in range(0, DV, B):
            vc, vc_ok = _span(v0, t, B, DV)
            acc = tl.zeros([BLOCK, BLOCK], tl.float32)
            for c0 in range(0, ext, B):
                cols, col_ok = _span(c0, t, B, ext)
                st = tl.load(s_rows[:, None] + cols[None, :] * stride_sn, mask=row_ok[:, None] & col_ok[None, :], other=float("-inf"))
                vt = tl.load(v_base + cols[:, None] * stride_vn + vc[None, :] * stride_vk, mask=col_ok[:, None] & vc_ok[None, :], other=0.0)
                if DOT_F32:
                    vt = vt.to(tl.float32)
                pt = tl.exp(st - lse[:, None])
                acc += tl.dot(pt.to(vt.dtype), vt)
            tl.store(o_rows[:, None] + vc[None, :] * stride_ok, acc.to(O.dtype.element_ty), mask=row_ok[:, None] & vc_ok[None, :])


def block(w: Workload) -> int:
    """B = ⌊√(M/4)⌋ at the workload's M (InvalidParameter when M < 4)."""
    return tiling("square_tiling", w).B_r


def traffic(w: Workload, B: int) -> IOCount:
    """The kernels' exact global traffic in words (both phases, whole workload) with tiles of side B: attnio's
    workload formula at M = 4B², the fast memory whose rule gives B."""
    return workload_cost("square_tiling", dataclasses.replace(w, M=4 * check_int("B", B, min=1) ** 2))


def buffers(w: Workload, like: Any) -> dict[str, Any]:
    """Empty outputs for the workload: o (batch, H, N_q, d_v) in ``like``'s element type; lse (batch, H, N_q)
    and the logits s (batch, H, N_q, N_kv), fp32."""
    import torch

    f32 = {"dtype": torch.float32, "device": like.device}
    return {
        "o": torch.empty((w.batch, w.heads, w.Nq, w.dv), dtype=like.dtype, device=like.device),
        "lse": torch.empty((w.batch, w.heads, w.Nq), **f32),
        "s": torch.empty((w.batch, w.heads, w.Nq, w.Nkv), **f32),
    }


def square_tiling_forward(
    q: Any, k: Any, v: Any, *, causal: bool = False, M: int | None = None, B: int | None = None,
    scale: float | None = None, o: Any = None, lse: Any = None, s: Any = None,
) -> tuple[Any, Any, Any]:
    """Launch both phases on torch tensors (module docstring for layouts); returns (o, lse, s).

    Blocks: exactly one of ``M`` (fast-memory words: B = ⌊√(M/4)⌋) and ``B``. ``o``, ``lse`` and the scratch
    ``s`` may be given (written in place), e.g. to name them when counting.
    """
    if (M is None) == (B is None):
        raise InvalidParameter("M", M, "exactly one of M (fast-memory words) and B (tile side)")
    w = workload_of(q, k, v, causal=causal, M=M if M is not None else 4)
    B = block(w) if B is None else check_int("B", B, min=1)
    new = buffers(w, q)
    o, lse, s = (check_out(n, x, new[n]) for n, x in (("o", o), ("lse", lse), ("s", s)))
    grid = (-(-w.Nq // B), w.batch * w.heads)
    args = (q, k, v, s, lse, o, *q.stride(), *k.stride(), *v.stride(), *s.stride(), *lse.stride(), *o.stride(),
            w.heads, w.Nq, w.Nkv, w.d, w.dv, B, default_scale(w.d, scale))
    meta = {"GROUP": w.groups, "CAUSAL": bool(causal), "BLOCK": tile(B), "DOT_F32": dot_in_fp32(q)}
    require_interpreted(_square_tiling, q)
    for phase in (1, 2):  # two launches: phase 2 reads S and L after phase 1 has written them
        _square_tiling[grid](*args, PHASE=phase, **meta)
    return o, lse, s
