"""FlashAttention-2 backward pass (Dao 2023, arXiv 2307.08691, Algorithm 2), with an I/O-optimal block rule
derived here (``flash2-bwd``) and square blocks for comparison (``flash2-square-bwd``).

Inputs in slow memory: Q, K (N×d), V, O, dO (N×d_v) and the logsumexp L (N) the forward saved. Outputs dQ,
dK (N×d), dV (N×d_v). Loop nest in the paper's names (T_r = ⌈N/B_r⌉, T_c = ⌈N/B_c⌉)::

    dQ ← 0 (N×d) in slow memory                                     # line 3: N·d writes
    D = rowsum(dO ∘ O), r rows at a time; write D (N)               # line 4: 2N·d_v reads, N writes
    for j in 1..T_c:                       # outer loop over K/V blocks (line 5)
        load K_j (B_c×d), V_j (B_c×d_v); dK_j ← 0, dV_j ← 0 in fast memory        # lines 6-7
        for i in 1..T_r:                   # inner loop over Q blocks (line 8)
            load Q_i (B_r×d), dO_i (B_r×d_v), dQ_i (B_r×d), L_i, D_i (B_r each)  # lines 9, 15
            S_ij = scale·Q_i K_jᵀ; P_ij = exp(S_ij − L_i) (in place)               # lines 10-11
            dV_j ← dV_j + P_ijᵀ dO_i                                               # line 12
            dP_ij = dO_i V_jᵀ; dS_ij = P_ij ∘ (dP_ij − D_i) (in dP's place)         # lines 13-14
            dQ_i ← dQ_i + scale·dS_ij K_j; write dQ_i                              # line 15
            dK_j ← dK_j + scale·dS_ijᵀ Q_i                                         # line 16
        write dK_j, dV_j                                                           # line 18

Line 9 of the paper also lists O_i; no later line uses it (D was precomputed at line 4), so it is not
loaded. The D pass holds r = min(N, ⌊M/(2d_v + 1)⌋) rows of O and dO and r values of D (any r gives the same
count).

Fast memory in an inner step: K_j, V_j, dK_j, dV_j (2B_c(d + d_v)), Q_i, dQ_i, dO_i, L_i, D_i
(B_r(2d + d_v + 2)) and the two score tiles S/P and dP/dS (2B_r·B_c):
``2B_c(d + d_v) + B_r(2d + d_v + 2) + 2B_r·B_c ≤ M``.

Block rule ``flash2-bwd`` ("io-optimal", derived here, docs/costs.md#flash2-bwd). The count depends only on
T_c, so B_c is made as large as fits with B_r = 1: ``c = ⌊(M − 2d − d_v − 2)/(2d + 2d_v + 2)⌋``,
``T_c = ⌈N/min(c, N)⌉``; B_c is shrunk to ⌈N/T_c⌉ (same T_c) and the space freed goes to
``B_r = ⌊(M − 2B_c(d + d_v))/(2d + d_v + 2 + 2B_c)⌋`` (≥ 1, at most N). No block sizes for this loop nest
have a smaller T_c, so none moves fewer words. Needs M ≥ 4d + 3d_v + 4.

Block rule ``flash2-square-bwd``: B_r = B_c = b, the largest with 2b² + p·b ≤ M, p = 4d + 3d_v + 2:
``b = ⌊(⌊√(p² + 8M)⌋ − p)/4⌋`` (then at most N).

Exact count (derived here, docs/costs.md#flash2-bwd):
reads = 2N·d_v + N(d + d_v) + T_c·N(2d + d_v + 2), writes = N + N·d + T_c·N·d + N(d + d_v).
Leading term (d_v = d, T_c ≈ 4Nd/M): 16N²d²/M.

Worked count, N=4, d=2, M=30 (flash2-bwd): c = ⌊(30 − 8)/10⌋ = 2, T_c = 2, B_c = 2,
B_r = ⌊(30 − 16)/(8 + 4)⌋ = 1. reads = 16 + 16 + 2·4·8 = 96, writes = 4 + 8 + 2·8 + 16 = 44;
peak = 16 + 8 + 4 = 28.

>>> from attnio.algorithms.run import run
>>> r = run("flash2-bwd", N=4, d=2, M=30, seed=0)
>>> r.tiling
Flash2BwdTiling(B_r=1, B_c=2)
>>> m = r.measurement
>>> (m.reads_words, m.writes_words, m.peak_fast_words)
(96, 44, 28)

flash2-square-bwd at the same point: p = 16, b = ⌊(⌊√496⌋ − 16)/4⌋ = ⌊6/4⌋ = 1, T_c = 4:
reads = 32 + 4·32 = 160, writes = 12 + 32 + 16 = 60.

>>> r = run("flash2-square-bwd", N=4, d=2, M=30, seed=0)
>>> (r.tiling, r.measurement.reads_words, r.measurement.writes_words)
(Flash2SquareBwdTiling(B_r=1, B_c=1), 160, 60)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attnio.algorithms.causal import each, mask_tile, q_range, shift
from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.steps import bwd_tile, scores
from attnio.algorithms.tilings import Blocks
from attnio.bounds import blocks


@dataclass(frozen=True)
class Flash2BwdTiling(Blocks, budget=blocks.flash2_bwd, resident="cols", name="flash2-bwd",
                      needs="one row each of K, V, dK, dV, Q, dQ, dO, 2 statistics, 2 scores"):
    """B_r query rows per Q block, B_c key/value rows per K/V block; the io-optimal rule."""


@dataclass(frozen=True)
class Flash2SquareBwdTiling(Flash2BwdTiling, rule="square", name="flash2-square-bwd"):
    """Square blocks B_r = B_c = b, the largest whose working set fits M."""


def rowsum_pass(m: Machine, O: SlowArray, dO: SlowArray, D: SlowArray) -> None:
    """D = rowsum(dO ∘ O), r = min(N, ⌊M/(2d_v + 1)⌋) rows at a time: 2N·d_v reads, N writes."""
    N, dv = O.shape
    r = max(1, min(N, m.M // (2 * dv + 1)))
    for rows in m.tiles(N, r):
        Oi = m.load(O, rows, what="O_i")
        dOi = m.load(dO, rows, what="dO_i")
        Di = m.alloc((rows.stop - rows.start,), what="D_i", fill=None)
        if m.numeric:
            m.xp.einsum("ij,ij->i", dOi.data, Oi.data, out=Di.data)
        m.store(Di, D, rows)
        m.free(Oi, dOi, Di)


def schedule(m: Machine, ins: dict[str, SlowArray], t: Flash2BwdTiling, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    """The one-head, unmasked case of :func:`kv_loop`."""
    a = outputs(m, ins, ins["Q"].shape[0], ins["K"].shape[0])
    kv_loop(m, a, t.B_r, t.B_c, scale)
    return a["dQ"], a["dK"], a["dV"]


def outputs(m: Machine, ins: dict[str, SlowArray], q_rows: int, kv_rows: int) -> dict[str, SlowArray]:
    """Lines 3–4: dQ ← 0 (written), dK, dV, and D = rowsum(dO ∘ O) for every query row; ``ins`` with them."""
    d, dv = ins["Q"].shape[1], ins["V"].shape[1]
    a = dict(ins)
    a["dQ"] = m.slow("dQ", (q_rows, d), role="output", init=0.0)  # line 3
    a["dK"] = m.slow("dK", (kv_rows, d), role="output")
    a["dV"] = m.slow("dV", (kv_rows, dv), role="output")
    a["D"] = m.slow("D", (q_rows,))
    rowsum_pass(m, a["O"], a["dO"], a["D"])  # line 4
    return a


def kv_loop(
    m: Machine, a: dict[str, SlowArray], B_r: int, B_c: int, scale: float, *, q_offs: tuple[int, ...] = (0,),
    kv_off: int = 0, Nq: int | None = None, Nkv: int | None = None, mask: Any = None,
    visit: tuple[Any, Any] | None = None, combine: bool = False, fused: bool = False,
) -> None:
    """Lines 5–19 for one K/V head (rows [kv_off, kv_off + N_kv) of K, V, dK, dV) and the query heads at row
    offsets ``q_offs`` (several: a group whose dK_j, dV_j accumulate in fast memory). ``mask`` (an
    ``attnio.bounds.masks`` mask; None: none) with ``visit`` = (first, rows) per K/V block
    (:meth:`~attnio.bounds.masks.Mask.kv_block_range`): K/V block j visits only the query rows
    [first_j, first_j + rows_j), the ones that need one of its keys, and the tiles the mask does not wholly allow
    are masked (a row with no key at all, L = −∞, gets P = 0). ``combine``: add the partial dK, dV already in slow
    memory before writing (heads after a group's first, one at a time). ``fused`` (``flash2-fused-bwd``,
    :mod:`attnio.algorithms.flash2_fused_bwd`; no mask or a causal one, so K/V block 0 visits every query row):
    at K/V block 0 each Q block forms D_i from O_i and dO_i (:func:`first_visit`) and starts dQ_i at zero in fast
    memory, instead of reading D_i and dQ_i (no D pass, no dQ initialisation in slow memory)."""
    xp = m.xp
    Q, K, V, dO, L, D, dQ, dK, dV = (a[k] for k in ("Q", "K", "V", "dO", "L", "D", "dQ", "dK", "dV"))
    Nq = Q.shape[0] if Nq is None else Nq
    Nkv = K.shape[0] if Nkv is None else Nkv
    d, dv = Q.shape[1], V.shape[1]
    O = a.get("O")
    revisit = Nkv > B_c  # a later K/V block reads D_i back (fused)
    cols_iter = (m.tiles if mask is None else each)(Nkv, B_c)
    if fused and mask is None:  # block 0 on its own, then one representative per later tile shape
        cols_iter = _first_then_tiles(m, Nkv, B_c)
    for cols in cols_iter:  # line 5 (masked: the Q range depends on j)
        bc = cols.stop - cols.start
        C = shift(cols, kv_off)
        Kj = m.load(K, C, what="K_j")  # line 6
        Vj = m.load(V, C, what="V_j")
        dKj = m.alloc((bc, d), what="dK_j")  # line 7
        dVj = m.alloc((bc, dv), what="dV_j")
        for qo in q_offs:
            j = cols.start // B_c
            first, count = (0, Nq) if visit is None else (int(visit[0][j]), int(visit[1][j]))
            for rows, R in q_range(m, first, count, B_r, qo):  # line 8
                br = rows.stop - rows.start
                if fused and cols.start == 0:  # the row's first visit: D_i from O_i, dQ_i from zero
                    dOi = m.load(dO, R, what="dO_i")
                    Di = first_visit(m, O, dOi, R, 2 * d + 1 + 2 * bc)
                    if revisit:
                        m.store(Di, D, R)
                    Qi = m.load(Q, R, what="Q_i")
                    dQi = m.alloc((br, d), what="dQ_i", fill=0.0)
                    Li = m.load(L, R, what="L_i")
                else:
                    Qi, dOi, dQi, Li, Di = m.load_rows(R, Q, dO, dQ, L, D)  # line 9
                P = m.alloc((br, bc), what="S_ij", fill=None)
                dS = m.alloc((br, bc), what="dP_ij", fill=None)
                if m.numeric:  # lines 10–16
                    scores(P.data, Qi.data, Kj.data, scale, xp)  # line 10
                    if mask is not None and not mask_tile(P.data, rows, cols, mask, Nq, Nkv):
                        P.data -= xp.where(xp.isneginf(Li.data), xp.inf, Li.data)[:, None]  # no key: P = 0
                    else:
                        P.data -= Li.data[:, None]
                    xp.exp(P.data, out=P.data)  # line 11: P_ij = exp(S_ij − L_i)
                    bwd_tile(P.data, dS.data, Qi.data, Kj.data, Vj.data, dOi.data, Di.data, dQi.data, dKj.data, dVj.data, scale, xp)
                m.work("qk", br * bc * d)
                m.work("bwd", br * bc * (2 * dv + 2 * d))
                m.store(dQi, dQ, R)  # line 15: write back
                m.free(Qi, dOi, dQi, Li, Di, P, dS)
        m.free(Kj, Vj)
        if combine:  # add the partial sums of the group's earlier heads (read, add, write back)
            pK = m.load(dK, C, what="dK_j (partial)")
            pV = m.load(dV, C, what="dV_j (partial)")
            if m.numeric:
                dKj.data += pK.data
                dVj.data += pV.data
            m.free(pK, pV)
        m.store(dKj, dK, C)  # line 18
        m.store(dVj, dV, C)
        m.free(dKj, dVj)


def _first_then_tiles(m: Machine, N: int, B_c: int) -> Any:
    """K/V block 0, then the tiles of [B_c, N) (one representative per shape in count-only mode)."""
    yield slice(0, min(B_c, N))
    if N > B_c:
        for t in m.tiles(N - B_c, B_c):
            yield shift(t, B_c)


def first_visit(m: Machine, O: SlowArray, dOi: Any, R: slice, width: int) -> Any:
    """D_i = rowsum(dO_i ∘ O_i) with dO_i resident, O_i read in column chunks of ``width`` (the fast words per
    row the step's Q_i, dQ_i, L_i and score tiles leave free: 2d + 1 + 2B_c), so the peak stays the inner
    step's; N·d_v reads of O in all, D_i left resident."""
    br, dv = dOi.shape
    Di = m.alloc((br,), what="D_i", fill=0.0)
    for cs in m.tiles(dv, max(1, min(dv, width))):
        Oc = m.load(O, R, cs, what="O_i")
        if m.numeric:
            Di.data += m.xp.einsum("ij,ij->i", dOi.data[:, cs], Oc.data)
        m.free(Oc)
    return Di
