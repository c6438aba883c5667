"""attnio's FlashAttention-2 backward in Triton (Dao 2023, arXiv 2307.08691, Algorithm 2), written here from
the paper to match attnio's ``flash2-bwd`` workload schedule (grouped K/V heads, bottom-right causal mask,
N_q ≠ N_kv, d_v ≠ d) word for word.

Layout (torch tensors, any strides): q (batch, H, N_q, d), k (batch, H_kv, N_kv, d), v (batch, H_kv, N_kv, d_v),
o and do (batch, H, N_q, d_v), lse (batch, H, N_q): the forward's natural-log logsumexp of each row of
scale·QKᵀ (masked entries excluded). Query head h uses K/V head ⌊h/g⌋, g = H/H_kv. Returns dq (like q),
dk (like k), dv (like v): new contiguous tensors or the ones passed in. D (batch, H, N_q) is a slow-memory
scratch tensor of the accumulator type (float64 for float64 inputs, else float32). The two kernels are
module-level ``@triton.jit`` functions like the forward's (``TRITON_INTERPRET=1`` before this module is imported,
to count them on the CPU); it is measured like its siblings (``attnio.triton.kernels.measure``) and registered
like them (``attnio.triton.kernels.registry``).

Two launches, in the paper's names (T_r = ⌈N_q/B_r⌉, T_c = ⌈N_kv/B_c⌉, δ = N_kv − N_q)::

    preprocess, one program per (r rows, query head):               # Algorithm 2, lines 3-4
        load O_i, dO_i (r×d_v); D_i = rowsum(dO_i ∘ O_i); write D_i (r); write dQ_i ← 0 (r×d)
    main, one program per (K/V block j, K/V head):                  # lines 5-18
        load K_j (B_c×d), V_j (B_c×d_v); dK_j ← 0, dV_j ← 0 in registers
        for each query head h of the group (g heads):
            for the Q blocks i of rows [s_j, N_q), s_j = max(0, j·B_c − δ) if causal else 0, B_r rows each:
                load Q_i (B_r×d), dO_i (B_r×d_v), L_i, D_i (B_r each)
                S = scale·Q_i K_jᵀ, −∞ where key > query + δ (causal); P = exp(S − L_i)
                dV_j += Pᵀ dO_i; dS = P ∘ (dO_i V_jᵀ − D_i)
                dQ_i += scale·dS K_j            (atomic add: B_r·d reads and B_r·d writes)
                dK_j += scale·dSᵀ Q_i
        write dK_j, dV_j

The Q blocks start at s_j, the first row that sees key j·B_c: blocks wholly above the diagonal are skipped, as
in attnio's schedule (every visited row sees the block's first key). dQ_i accumulates across K/V blocks in slow
memory with an atomic add, the GPU-safe form of the schedule's "load dQ_i, add, write dQ_i": each active lane
is one read and one write, the schedule's count. Tiles are powers of two (BLOCK_M ≥ B_r, BLOCK_N ≥ B_c,
BLOCK_D ≥ d, BLOCK_DV ≥ d_v, at least 16 each for ``tl.dot``); the lanes past B_r, B_c, d, d_v, N_q or N_kv are
masked and move no data.

Block rule: attnio's ``flash2-bwd`` io-optimal rule for a fast-memory budget M (elements) on N_kv key rows
(``attnio.algorithms.workloads_bwd.bwd_tiling``): c = ⌊(M − 2d − d_v − 2)/(2d + 2d_v + 2)⌋,
T_c = ⌈N_kv/min(c, N_kv)⌉, B_c = ⌈N_kv/T_c⌉, B_r = min(N_q, ⌊(M − 2B_c(d + d_v))/(2d + d_v + 2 + 2B_c)⌋); or
B_r, B_c given explicitly.

Exact count per K/V head (derived here, docs/triton-kernels.md#backward; the same as attnio's grouped
``flash2-bwd`` workload formula, docs/costs.md#workloads), R = the Q rows one query head visits over all K/V
blocks (T_c·N_q without a mask, Σ_j (N_q − max(0, j·B_c − δ)) with one)::

    reads  = g(2N_q·d_v + R(2d + d_v + 2)) + N_kv(d + d_v)
    writes = g(N_q + N_q·d + R·d) + N_kv(d + d_v)

The preprocess moves g(2N_q·d_v) reads and g(N_q + N_q·d) writes of these; the main kernel the rest. The
count depends on B_c only (B_r sets how the visited rows are cut, not how many there are). Whole workload:
batch·H_kv × the per-K/V-head count.

Worked count, causal, N_q = N_kv = 4, d = 2, M = 30 (B_r = 1, B_c = 2, T_c = 2): block 0 visits rows 0..3,
block 1 rows 2..3, R = 6; reads = 16 + 6·8 + 16 = 80, writes = 4 + 8 + 12 + 16 = 40.

>>> exact_count(batch=1, heads=1, kv_heads=1, Nq=4, Nkv=4, d=2, dv=2, causal=True, B_c=2)
IOCount(reads_words=80, writes_words=40)
>>> block_sizes(batch=1, heads=1, kv_heads=1, Nq=4, Nkv=4, d=2, dv=2, causal=True, M=30)
(1, 2)
"""

from __future__ import annotations

import math
from typing import Any

from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_int
from attnio.core.workload import Workload
from attnio.triton.kernels._common import (
    check_shape,
    dot_in_fp32,
    require_interpreted,
    require_triton,
    tile,
)

triton, tl = require_triton(__name__)

#: the element types the kernels take (torch names); float64 accumulates in float64, the others in float32
DTYPES = ("float64", "float32", "float16", "bfloat16")


def exact_count(*, batch: int, heads: int, kv_heads: int, Nq: int, Nkv: int, d: int, dv: int, causal: bool,
                B_c: int) -> IOCount:
    """Words the preprocess and main launches move together (module docstring; derived in
    docs/triton-kernels.md#backward)."""
    g = heads // kv_heads
    T_c = -(-Nkv // B_c)
    delta = Nkv - Nq
    R = sum(Nq - max(0, j * B_c - delta) for j in range(T_c)) if causal else T_c * Nq
    kv = Nkv * (d + dv)
    reads = g * (2 * Nq * dv + R * (2 * d + dv + 2)) + kv
    writes = g * (Nq + Nq * d + R * d) + kv
    units = batch * kv_heads
    return IOCount(reads_words=units * reads, writes_words=units * writes)


def preprocess_count(*, batch: int, heads: int, Nq: int, d: int, dv: int) -> IOCount:
    """Words of the preprocess launch alone: O and dO read, D and the zeroed dQ written."""
    return IOCount(reads_words=batch * heads * 2 * Nq * dv, writes_words=batch * heads * Nq * (1 + d))


def block_sizes(*, batch: int, heads: int, kv_heads: int, Nq: int, Nkv: int, d: int, dv: int, causal: bool,
                M: int) -> tuple[int, int]:
    """(B_r, B_c) of attnio's io-optimal ``flash2-bwd`` rule for M elements of fast memory."""
    from attnio.algorithms.workloads_bwd import bwd_tiling

    w = Workload.build(batch=batch, heads=heads, kv_heads=kv_heads, Nq=Nq, Nkv=Nkv, d=d, dv=dv, causal=causal, M=M)
    t = bwd_tiling("flash2-bwd", w)
    return t.B_r, t.B_c


@triton.jit
def fa2_bwd_preprocess(O, dO, D, dQ,
                       stride_oz, stride_oh, stride_om, stride_ok, stride_doz, stride_doh, stride_dom, stride_dok,
                       stride_dqz, stride_dqh, stride_dqm, stride_dqk,
                       H, Nq, d, dv,
                       BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr, ACC: tl.constexpr):
    pid = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    rmask = rows < Nq
    cv = tl.arange(0, BLOCK_DV)
    mv = rmask[:, None] & (cv < dv)[None, :]
    o = tl.load(O + b * stride_oz + h * stride_oh + rows[:, None] * stride_om + cv[None, :] * stride_ok, mask=mv, other=0.0)
    do = tl.load(dO + b * stride_doz + h * stride_doh + rows[:, None] * stride_dom + cv[None, :] * stride_dok, mask=mv,
                 other=0.0)
    Dr = tl.sum(o.to(ACC) * do.to(ACC), axis=1)
    tl.store(D + bh * Nq + rows, Dr, mask=rmask)
    cq = tl.arange(0, BLOCK_D)
    zero = tl.zeros((BLOCK_R, BLOCK_D), dtype=dQ.dtype.element_ty)
    tl.store(dQ + b * stride_dqz + h * stride_dqh + rows[:, None] * stride_dqm + cq[None, :] * stride_dqk, zero,
             mask=rmask[:, None] & (cq < d)[None, :])


@triton.jit
def fa2_bwd_main(Q, K, V, dO, L, D, dQ, dK, dV,
                 stride_qz, stride_qh, stride_qm, stride_qk, stride_kz, stride_kh, stride_kn, stride_kk,
                 stride_vz, stride_vh, stride_vn, stride_vk, stride_doz, stride_doh, stride_dom, stride_dok,
                 stride_lz, stride_lh, stride_lm,
                 stride_dqz, stride_dqh, stride_dqm, stride_dqk, stride_dkz, stride_dkh, stride_dkn, stride_dkk,
                 stride_dvz, stride_dvh, stride_dvn, stride_dvk,
                 scale, H, H_kv, g, Nq, Nkv, d, dv, B_r, B_c, delta,
                 CAUSAL: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                 BLOCK_D: tl.constexpr, BLOCK_DV: tl.constexpr, ACC: tl.constexpr, DOT_F32: tl.constexpr):
    j = tl.program_id(0)
    bk = tl.program_id(1)
    b = bk // H_kv
    kh = bk % H_kv
    c0 = j * B_c
    on = tl.arange(0, BLOCK_N)
    cols = c0 + on
    cmask = (on < B_c) & (cols < Nkv)
    od = tl.arange(0, BLOCK_D)
    dmask = od < d
    ov = tl.arange(0, BLOCK_DV)
    vmask = ov < dv
    kmask = cmask[:, None] & dmask[None, :]
    vvmask = cmask[:, None] & vmask[None, :]
    k = tl.load(K + b * stride_kz + kh * stride_kh + cols[:, None] * stride_kn + od[None, :] * stride_kk, mask=kmask,
                other=0.0)
    v = tl.load(V + b * stride_vz + kh * stride_vh + cols[:, None] * stride_vn + ov[None, :] * stride_vk, mask=vvmask,
                other=0.0)
    if DOT_F32:
        k = k.to(tl.float32)
        v = v.to(tl.float32)
    dk = tl.zeros((BLOCK_N, BLOCK_D), dtype=ACC)
    dv_acc = tl.zeros((BLOCK_N, BLOCK_DV), dtype=ACC)
    start = 0
    if CAUSAL:
        start = tl.maximum(c0 - delta, 0)
    om = tl.arange(0, BLOCK_M)
    for hh in range(0, g):
        h = kh * g + hh
        bh = b * H + h
        for r0 in range(start, Nq, B_r):
            rows = r0 + om
            rmask = (om < B_r) & (rows < Nq)
            qmask = rmask[:, None] & dmask[None, :]
            q = tl.load(Q + b * stride_qz + h * stride_qh + rows[:, None] * stride_qm + od[None, :] * stride_qk,
                        mask=qmask, other=0.0)
            do = tl.load(dO + b * stride_doz + h * stride_doh + rows[:, None] * stride_dom + ov[None, :] * stride_dok,
                         mask=rmask[:, None] & vmask[None, :], other=0.0)
            if DOT_F32:
                q = q.to(tl.float32)
                do = do.to(tl.float32)
            lse = tl.load(L + b * stride_lz + h * stride_lh + rows * stride_lm, mask=rmask, other=0.0)
            Di = tl.load(D + bh * Nq + rows, mask=rmask, other=0.0)
            s = tl.dot(q, tl.trans(k), out_dtype=ACC) * scale
            valid = rmask[:, None] & cmask[None, :]
            if CAUSAL:
                valid = valid & (cols[None, :] <= rows[:, None] + delta)
            p = tl.exp(tl.where(valid, s, float("-inf")) - lse.to(ACC)[:, None])
            dv_acc += tl.dot(tl.trans(p.to(q.dtype)), do, out_dtype=ACC)
            dp = tl.dot(do, tl.trans(v), out_dtype=ACC)
            ds = p * (dp - Di.to(ACC)[:, None]) * scale
            dq = tl.dot(ds.to(q.dtype), k, out_dtype=ACC)
            tl.atomic_add(dQ + b * stride_dqz + h * stride_dqh + rows[:, None] * stride_dqm + od[None, :] * stride_dqk,
                          dq.to(dQ.dtype.element_ty), mask=qmask, sem="relaxed")
            dk += tl.dot(tl.trans(ds.to(q.dtype)), q, out_dtype=ACC)
    tl.store(dK + b * stride_dkz + kh * stride_dkh + cols[:, None] * stride_dkn + od[None, :] * stride_dkk,
             dk.to(dK.dtype.element_ty), mask=kmask)
    tl.store(dV + b * stride_dvz + kh * stride_dvh + cols[:, None] * stride_dvn + ov[None, :] * stride_dvk,
             dv_acc.to(dV.dtype.element_ty), mask=vvmask)


def fa2_backward(q: Any, k: Any, v: Any, o: Any, do: Any, lse: Any, *, causal: bool = False,
                 scale: float | None = None, M: int | None = None, B_r: int | None = None,
                 B_c: int | None = None, dq: Any = None, dk: Any = None, dv: Any = None) -> tuple[Any, Any, Any]:
    """dq, dk, dv of attention by the two launches of the module docstring (written into ``dq``, ``dk``,
    ``dv`` when given: shapes of q, k, v, any strides; else new contiguous tensors).

    Blocks: exactly one of ``M`` (fast-memory elements: attnio's io-optimal ``flash2-bwd`` rule) or both
    ``B_r`` and ``B_c``. ``scale`` defaults to 1/√d. CPU tensors need ``TRITON_INTERPRET=1`` set before this
    module is imported. dq accumulates in slow memory by atomic adds, in q's dtype (float16 rounds once per K/V
    block), except bfloat16: dq is float32 (the interpreter has no bfloat16 atomic add). In the interpreter
    bfloat16 tiles enter ``tl.dot`` as float32 (``_common.dot_in_fp32``).
    """
    import torch

    given = {"dq": dq, "dk": dk, "dv": dv}  # dv is the width d_v below
    if q.dim() != 4:
        raise InvalidParameter("q.dim()", q.dim(), "4: (batch, heads, N_q, d)")
    batch, H, Nq, d = q.shape
    if k.dim() != 4:
        raise InvalidParameter("k.dim()", k.dim(), "4: (batch, kv_heads, N_kv, d)")
    H_kv, Nkv = k.shape[1], k.shape[2]
    dv = v.shape[-1]
    check_shape("k", k, (batch, H_kv, Nkv, d))
    check_shape("v", v, (batch, H_kv, Nkv, dv))
    check_shape("o", o, (batch, H, Nq, dv))
    check_shape("do", do, (batch, H, Nq, dv))
    check_shape("lse", lse, (batch, H, Nq))
    if H % H_kv:
        raise InvalidParameter("kv_heads", H_kv, f"a divisor of heads={H}")
    if causal and Nq > Nkv:
        raise InvalidParameter("N_q", Nq, f"N_q <= N_kv={Nkv} for a causal mask (bottom-right aligned)")
    for name, t in (("k", k), ("v", v), ("o", o), ("do", do)):
        if t.dtype != q.dtype:
            raise InvalidParameter(f"{name}.dtype", t.dtype, f"q's dtype {q.dtype}")
    dtype = str(q.dtype).removeprefix("torch.")
    if dtype not in DTYPES:
        raise InvalidParameter("q.dtype", q.dtype, ", ".join(DTYPES))
    require_interpreted(fa2_bwd_main, q)
    if M is not None:
        if B_r is not None or B_c is not None:
            raise InvalidParameter("M", M, "None when B_r and B_c are given (one block choice)")
        B_r, B_c = block_sizes(batch=batch, heads=H, kv_heads=H_kv, Nq=Nq, Nkv=Nkv, d=d, dv=dv, causal=causal, M=M)
    elif B_r is None or B_c is None:
        raise InvalidParameter("B_r, B_c", (B_r, B_c), "both given (>= 1), or M given instead")
    check_int("B_r", B_r, min=1)
    check_int("B_c", B_c, min=1)
    f64 = q.dtype == torch.float64
    acc = tl.float64 if f64 else tl.float32
    # Triton's interpreter has no bfloat16 atomic add: bfloat16 dq accumulates (and is returned) in float32
    outs = []
    for name, like, dt in (("dq", q, torch.float32 if q.dtype == torch.bfloat16 else q.dtype), ("dk", k, k.dtype),
                           ("dv", v, v.dtype)):
        t = given[name]
        if t is None:
            t = torch.empty(like.shape, dtype=dt, device=q.device)
        elif tuple(t.shape) != tuple(like.shape) or t.dtype != dt or t.device != q.device:
            raise InvalidParameter(f"{name}", f"{tuple(t.shape)} {t.dtype} {t.device}",
                                   f"{tuple(like.shape)} {dt} on {q.device}")
        outs.append(t)
    dq, dk, dvt = outs
    D = torch.empty((batch, H, Nq), dtype=torch.float64 if f64 else torch.float32, device=q.device)
    sc = 1.0 / math.sqrt(d) if scale is None else float(scale)
    BD, BDV = tile(d), tile(dv)
    BR = tile(min(Nq, 64))
    fa2_bwd_preprocess[(-(-Nq // BR), batch * H)](o, do, D, dq, *o.stride(), *do.stride(), *dq.stride(), H, Nq, d, dv,
                                                  BLOCK_R=BR, BLOCK_D=BD, BLOCK_DV=BDV, ACC=acc)
    fa2_bwd_main[(-(-Nkv // B_c), batch * H_kv)](
        q, k, v, do, lse, D, dq, dk, dvt,
        *q.stride(), *k.stride(), *v.stride(), *do.stride(), *lse.stride(), *dq.stride(), *dk.stride(), *dvt.stride(),
        sc, H, H_kv, H // H_kv, Nq, Nkv, d, dv, B_r, B_c, Nkv - Nq,
        CAUSAL=bool(causal), BLOCK_M=tile(B_r), BLOCK_N=tile(B_c), BLOCK_D=BD, BLOCK_DV=BDV, ACC=acc,
        DOT_F32=dot_in_fp32(q),
    )
    return dq, dk, dvt


def check_launch(q: Any, k: Any, v: Any, o: Any, do: Any, lse: Any, dq: Any, dk: Any, dv: Any, causal: bool,
                 workload: Workload) -> None:
    """:func:`fa2_backward` in :func:`attnio.triton.check`'s launcher convention (it passes zeroed dq, dk, dv
    of the workload's dtype to write into; blocks by attnio's rule for ``workload.M``). bfloat16: the kernel's
    dq is float32 (module docstring), copied into the bfloat16 ``dq`` by torch after the launches."""
    if q.dtype == getattr(dq, "dtype", None) and str(q.dtype) == "torch.bfloat16":
        dq32, _, _ = fa2_backward(q, k, v, o, do, lse, causal=causal, M=workload.M, dk=dk, dv=dv)
        dq.copy_(dq32)
        return
    fa2_backward(q, k, v, o, do, lse, causal=causal, M=workload.M, dq=dq, dk=dk, dv=dv)


def buffers(w: Workload, like: Any) -> dict[str, Any]:
    """Outputs for the workload: dq (like q; float32 for bfloat16, module docstring), dk, dv (like k and v)."""
    import torch

    dq_type = torch.float32 if like.dtype == torch.bfloat16 else like.dtype
    return {
        "dq": torch.empty((w.batch, w.heads, w.Nq, w.d), dtype=dq_type, device=like.device),
        "dk": torch.empty((w.batch, w.kv_heads, w.Nkv, w.d), dtype=like.dtype, device=like.device),
        "dv": torch.empty((w.batch, w.kv_heads, w.Nkv, w.dv), dtype=like.dtype, device=like.device),
    }
