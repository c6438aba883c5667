"""A two-pass FlashAttention backward (``flash2-2pass-bwd``, derived here, docs/costs.md#flash2-2pass-bwd): the
gradients of FlashAttention-2 Algorithm 2 (Dao 2023, arXiv 2307.08691) computed in two passes that each recompute
S, P, dP and dS, so that dQ is written once instead of read, updated and written once per K/V block.

Inputs in slow memory: Q, K (N×d), V, O, dO (N×d_v) and the logsumexp L (N) the forward saved. Outputs dQ,
dK (N×d), dV (N×d_v). Loop nest in the paper's names, pass 1 with blocks (B_r, B_c), T_c = ⌈N/B_c⌉, pass 2 with
blocks (B_r', B_c'), T_r' = ⌈N/B_r'⌉::

    D = rowsum(dO ∘ O), r rows at a time; write D (N)          # as flash2-bwd (line 4): 2N·d_v reads, N writes
    for j in 1..T_c:                       # pass 1: outer loop over K/V blocks
        load K_j (B_c×d), V_j (B_c×d_v); dK_j ← 0, dV_j ← 0 in fast memory
        for i in 1..⌈N/B_r⌉:               # inner loop over Q blocks
            load Q_i (B_r×d), dO_i (B_r×d_v), L_i, D_i (B_r each)
            P_ij = exp(scale·Q_i K_jᵀ − L_i); dV_j ← dV_j + P_ijᵀ dO_i
            dS_ij = P_ij ∘ (dO_i V_jᵀ − D_i); dK_j ← dK_j + scale·dS_ijᵀ Q_i        # no dQ here
        write dK_j, dV_j
    for i in 1..T_r':                      # pass 2: outer loop over Q blocks
        load Q_i (B_r'×d), dO_i (B_r'×d_v), L_i, D_i (B_r' each); dQ_i ← 0 in fast memory
        for j in 1..⌈N/B_c'⌉:              # inner loop over K/V blocks
            load K_j (B_c'×d), V_j (B_c'×d_v)
            P_ij = exp(scale·Q_i K_jᵀ − L_i); dS_ij = P_ij ∘ (dO_i V_jᵀ − D_i)
            dQ_i ← dQ_i + scale·dS_ij K_j
        write dQ_i                                                                # once

Fast memory in an inner step: pass 1 holds K_j, V_j, dK_j, dV_j (2B_c(d + d_v)), Q_i, dO_i, L_i, D_i
(B_r(d + d_v + 2)) and the tiles S/P, dP/dS (2B_r·B_c); pass 2 holds Q_i, dQ_i, dO_i, L_i, D_i (B_r'(2d + d_v + 2)),
K_j, V_j (B_c'(d + d_v)) and the same two tiles (2B_r'·B_c').

Block rule ("io-optimal" for each pass's resident set, derived here; :class:`~attnio.bounds.blocks.Budget`): a pass's
count depends only on the number of its resident blocks, so that side is made as large as fits with one row of the
other. Pass 1: ``c = ⌊(M − d − d_v − 2)/(2d + 2d_v + 2)⌋``, ``T_c = ⌈N/min(c, N)⌉``, B_c = ⌈N/T_c⌉,
``B_r = min(N, ⌊(M − 2B_c(d + d_v))/(d + d_v + 2 + 2B_c)⌋)``. Pass 2: ``a = ⌊(M − d − d_v)/(2d + d_v + 4)⌋``,
``T_r' = ⌈N/min(a, N)⌉``, B_r' = ⌈N/T_r'⌉, ``B_c' = min(N, ⌊(M − B_r'(2d + d_v + 2))/(d + d_v + 2B_r')⌋)``. Needs
M ≥ 3d + 3d_v + 4 (pass 1 with one row each; pass 2 needs 3d + 2d_v + 4).

Exact count (derived here, docs/costs.md#flash2-2pass-bwd):
reads = 2N·d_v + N(d + d_v) + T_c·N(d + d_v + 2) + N(d + d_v + 2) + T_r'·N(d + d_v),
writes = N + N(d + d_v) + N·d. Leading term (d_v = d; T_c ≈ 4Nd/M, T_r' ≈ 3Nd/M): 8N²d²/M + 6N²d²/M = 14N²d²/M,
against flash2-bwd's 16N²d²/M (its per-K/V-block dQ read and write, 4N²d²/M, replaced by pass 2's K and V
reads, 6N²d²/M, and pass 1 no longer holds dQ_i, which makes its blocks larger).

Worked count, N=4, d=2, M=30: pass 1 c = ⌊(30 − 6)/10⌋ = 2, T_c = 2, B_c = 2, B_r = ⌊(30 − 16)/(6 + 4)⌋ = 1;
pass 2 a = ⌊(30 − 4)/10⌋ = 2, T_r' = 2, B_r' = 2, B_c' = ⌊(30 − 16)/(4 + 4)⌋ = 1.
reads = 16 + 16 + 2·4·6 + 24 + 2·4·4 = 136, writes = 4 + 16 + 8 = 28; peak = pass 1's 6 + 16 + 4 = 26.

>>> from attnio.algorithms.run import run
>>> r = run("flash2-2pass-bwd", N=4, d=2, M=30, seed=0)
>>> r.tiling
Flash2TwoPassBwdTiling(B_r=1, B_c=2, B_r2=2, B_c2=1)
>>> m = r.measurement
>>> (m.reads_words, m.writes_words, m.peak_fast_words)
(136, 28, 26)
"""

from __future__ import annotations

from dataclasses import dataclass

from attnio.algorithms.flash2_bwd import rowsum_pass
from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.steps import bwd_dS, bwd_probs
from attnio.algorithms.tilings import Positive, check_M
from attnio.bounds import blocks


@dataclass(frozen=True)
class Flash2TwoPassBwdTiling(Positive):
    """Pass 1: B_r query rows per streamed Q block, B_c key/value rows per resident K/V block; pass 2: B_r2 query
    rows per resident Q block, B_c2 key/value rows per streamed K/V block. Each pass by the io-optimal rule of its
    own working set."""

    B_r: int
    B_c: int
    B_r2: int
    B_c2: int
    name = "flash2-2pass-bwd"
    needs = "one row each of K, V, dK, dV, Q, dO, 2 statistics, 2 scores"

    @staticmethod
    def fast_words(t: Flash2TwoPassBwdTiling, N: int, d: int, dv: int, M: int) -> int:
        """The peak: the largest of the D pass's r(2d_v + 1) (r = min(N, ⌊M/(2d_v + 1)⌋), which can exceed the
        others at small M) and the two passes' working sets."""
        rowsum = min(N, M // (2 * dv + 1)) * (2 * dv + 1)
        return max(rowsum, blocks.flash2_2pass_bwd_kv(d, dv).words(t.B_r, t.B_c), blocks.flash2_2pass_bwd_q(d, dv).words(t.B_r2, t.B_c2))

    @classmethod
    def min_M(cls, N: int, d: int, dv: int | None = None) -> int:
        return max(blocks.flash2_2pass_bwd_kv(d, dv).min_M, blocks.flash2_2pass_bwd_q(d, dv).min_M)

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None) -> Flash2TwoPassBwdTiling:
        check_M(M, cls.min_M(N, d, dv), cls.name, cls.needs)
        B_r, B_c = blocks.flash2_2pass_bwd_kv(d, dv).io_optimal(N, M, side="cols")
        B_r2, B_c2 = blocks.flash2_2pass_bwd_q(d, dv).io_optimal(N, M, side="rows")
        return cls(B_r, B_c, B_r2, B_c2)


def _score_tiles(m: Machine, br: int, bc: int) -> tuple:
    """The two B_r×B_c tiles of one step, S/P and dP/dS, in fast memory (no I/O)."""
    return m.alloc((br, bc), what="S_ij", fill=None), m.alloc((br, bc), what="dP_ij", fill=None)


def schedule(m: Machine, ins: dict[str, SlowArray], t: Flash2TwoPassBwdTiling, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    """D, then pass 1 (dK, dV) and pass 2 (dQ), as in the module's loop nest."""
    xp = m.xp
    Q, K, V, O, dO, L = (ins[k] for k in ("Q", "K", "V", "O", "dO", "L"))
    N, d = Q.shape
    Nk, dv = V.shape
    dQ = m.slow("dQ", (N, d), role="output")
    dK = m.slow("dK", (Nk, d), role="output")
    dV = m.slow("dV", (Nk, dv), role="output")
    D = m.slow("D", (N,))
    rowsum_pass(m, O, dO, D)

    for cols in m.tiles(Nk, t.B_c):  # pass 1: K_j, V_j, dK_j, dV_j stay in fast memory over the Q blocks
        bc = cols.stop - cols.start
        Kj = m.load(K, cols, what="K_j")
        Vj = m.load(V, cols, what="V_j")
        dKj = m.alloc((bc, d), what="dK_j")
        dVj = m.alloc((bc, dv), what="dV_j")
        for rows in m.tiles(N, t.B_r):
            br = rows.stop - rows.start
            Qi, dOi, Li, Di = m.load_rows(rows, Q, dO, L, D)  # B_r(d + d_v + 2) reads
            P, dS = _score_tiles(m, br, bc)
            if m.numeric:
                bwd_probs(P.data, Qi.data, Kj.data, Li.data, scale, xp)
                dVj.data += P.data.T @ dOi.data
                bwd_dS(P.data, dS.data, dOi.data, Vj.data, Di.data, scale, xp)
                dKj.data += dS.data.T @ Qi.data
            m.work("qk", br * bc * d)
            m.work("bwd", br * bc * (2 * dv + d))
            m.free(Qi, dOi, Li, Di, P, dS)
        m.free(Kj, Vj)
        m.store(dKj, dK, cols)
        m.store(dVj, dV, cols)
        m.free(dKj, dVj)

    for rows in m.tiles(N, t.B_r2):  # pass 2: Q_i, dO_i, L_i, D_i and the accumulator dQ_i stay over the K/V blocks
        br = rows.stop - rows.start
        Qi, dOi, Li, Di = m.load_rows(rows, Q, dO, L, D)
        dQi = m.alloc((br, d), what="dQ_i")
        for cols in m.tiles(Nk, t.B_c2):
            bc = cols.stop - cols.start
            Kj = m.load(K, cols, what="K_j")
            Vj = m.load(V, cols, what="V_j")
            P, dS = _score_tiles(m, br, bc)
            if m.numeric:
                bwd_probs(P.data, Qi.data, Kj.data, Li.data, scale, xp)
                bwd_dS(P.data, dS.data, dOi.data, Vj.data, Di.data, scale, xp)
                dQi.data += dS.data @ Kj.data
            m.work("qk", br * bc * d)
            m.work("bwd", br * bc * (dv + d))
            m.free(Kj, Vj, P, dS)
        m.store(dQi, dQ, rows)  # written once
        m.free(Qi, dOi, Li, Di, dQi)
    return dQ, dK, dV
