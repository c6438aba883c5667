"""FlashAttention backward pass, Algorithm 4 of Dao et al. 2022 (arXiv 2205.14135, Appendix B.4), exactly as
published (``flash1-bwd``, audit mode), and the same loop with the largest blocks that fit M
(``flash1-fit-bwd``). No masking, no dropout (lines 12, 14, 15 and 18 are the identity).

Inputs in slow memory: Q, K (N×d), V, O, dO (N×d_v) and the row statistics ℓ, m (N each) the forward saved.
Outputs dQ, dK (N×d), dV (N×d_v). Loop nest in the paper's names (T_r = ⌈N/B_r⌉, T_c = ⌈N/B_c⌉)::

    dQ ← 0 (N×d), dK ← 0 (N×d), dV ← 0 (N×d_v) in slow memory      # line 5: N(2d + d_v) writes
    for j in 1..T_c:                       # outer loop over K/V blocks (line 6)
        load K_j (B_c×d), V_j (B_c×d_v); d̃K_j ← 0, d̃V_j ← 0 in fast memory          # lines 7-8
        for i in 1..T_r:                   # inner loop over Q blocks (line 9)
            load Q_i, dQ_i (B_r×d), O_i, dO_i (B_r×d_v), ℓ_i, m_i (B_r each)        # line 10
            S_ij = τ·Q_i K_jᵀ; P_ij = diag(ℓ_i)⁻¹ exp(S_ij − m_i) (in place)        # lines 11, 13
            d̃V_j ← d̃V_j + P_ijᵀ dO_i                                                # line 16
            dP_ij = dO_i V_jᵀ; D_i = rowsum(dO_i ∘ O_i)                              # lines 17, 19
            dS_ij = P_ij ∘ (dP_ij − D_i) (in dP's place)                             # line 20
            write dQ_i ← dQ_i + τ·dS_ij K_j                                          # line 21
            d̃K_j ← d̃K_j + τ·dS_ijᵀ Q_i                                              # line 22
        write dK_j ← d̃K_j, dV_j ← d̃V_j                                              # line 24

Fast memory in an inner step, all live after line 20: K_j, V_j, d̃K_j, d̃V_j (2b_c(d + d_v)), Q_i, dQ_i,
O_i, dO_i (2b_r(d + d_v)), ℓ_i, m_i, D_i (3b_r), S/P and dP/dS (2b_r·b_c), with b_c = min(B_c, N),
b_r = min(B_r, N): ``peak = 2(b_c + b_r)(d + d_v) + 2b_r·b_c + 3b_r``.

Block rule ``flash1-bwd`` (published, line 2): ``B_c = ⌈M/(4d)⌉, B_r = min(⌈M/(4d)⌉, d)``. With d_v = d and
M ≤ 4d² the working set is about 2M + M²/(8d²): it never fits M, so it runs in audit mode and reports its
peak (the 4d in the rule budgets the forward's K_j, V_j, Q_i, O_i; the backward holds twice as many blocks).

Block rule ``flash1-fit-bwd``: the count depends only on T_c, so B_c is made as large as fits with B_r = 1:
``c = ⌊(M − 2(d + d_v) − 3)/(2(d + d_v) + 2)⌋``, ``T_c = ⌈N/c⌉``; B_c is shrunk to ⌈N/T_c⌉ and
``B_r = ⌊(M − 2B_c(d + d_v))/(2(d + d_v) + 2B_c + 3)⌋`` (≥ 1, at most N). Needs M ≥ 4(d + d_v) + 5.

Exact count (derived here, docs/costs.md#flash1-bwd): reads = N(d + d_v) + T_c·N(2d + 2d_v + 2) (K, V once;
Q, dQ, O, dO, ℓ, m once per K/V block); writes = N(2d + d_v) + T_c·N·d + N(d + d_v) (the initialisation,
dQ once per K/V block, dK and dV once). Leading term (d_v = d, T_c ≈ 4Nd/M): 20N²d²/M.

Worked count, N=4, d=2, M=16 (flash1-bwd): B_c = ⌈16/8⌉ = 2, B_r = min(2, 2) = 2, T_c = 2.
reads = 16 + 2·4·10 = 96, writes = 24 + 2·8 + 16 = 56, peak = 2·4·4 + 8 + 6 = 46 > M.

>>> from attnio.algorithms.run import run
>>> r = run("flash1-bwd", N=4, d=2, M=16, seed=0)
>>> m = r.measurement
>>> (r.tiling, m.reads_words, m.writes_words, m.peak_fast_words, m.overflowed)
(Flash1BwdTiling(B_r=2, B_c=2), 96, 56, 46, True)

flash1-fit-bwd at N=4, d=2, M=30: c = ⌊(30 − 11)/10⌋ = 1, T_c = 4, B_c = 1, B_r = ⌊22/13⌋ = 1.
reads = 16 + 4·40 = 176, writes = 24 + 32 + 16 = 72.

>>> r = run("flash1-fit-bwd", N=4, d=2, M=30, seed=0)
>>> (r.tiling, r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words <= 30)
(Flash1FitBwdTiling(B_r=1, B_c=1), 176, 72, True)
"""

from __future__ import annotations

from dataclasses import dataclass

from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.steps import bwd_tile, scores
from attnio.algorithms.tilings import Blocks
from attnio.bounds import blocks


@dataclass(frozen=True)
class Flash1BwdTiling(Blocks, budget=blocks.flash1_fit_bwd, resident="cols", rule="published", name="flash1-bwd"):
    """B_r query rows per Q block, B_c key/value rows per K/V block; the published rule. The budget: the words
    resident after line 20."""


@dataclass(frozen=True)
class Flash1FitBwdTiling(Flash1BwdTiling, rule="io-optimal", name="flash1-fit-bwd",
                         needs="one row each of K, V, dK, dV, Q, dQ, O, dO, 3 statistics, 2 scores"):
    """The same loop, with the largest blocks whose working set fits M."""


#: The working set of ``flash1-bwd`` as published (blocks capped at N), for the audit-mode test.
peak_fast_words = Flash1BwdTiling.capped_peak


def schedule(m: Machine, ins: dict[str, SlowArray], t: Flash1BwdTiling, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    xp = m.xp
    Q, K, V, O, dO, ell, mx = (ins[k] for k in ("Q", "K", "V", "O", "dO", "ell", "m"))
    N, d = Q.shape
    dv = V.shape[1]
    dQ = m.slow("dQ", (N, d), role="output", init=0.0)  # line 5
    dK = m.slow("dK", (N, d), role="output", init=0.0)
    dV = m.slow("dV", (N, dv), role="output", init=0.0)
    for cols in m.tiles(N, t.B_c):  # line 6
        bc = cols.stop - cols.start
        Kj = m.load(K, cols, what="K_j")  # line 7
        Vj = m.load(V, cols, what="V_j")
        dKj = m.alloc((bc, d), what="d̃K_j")  # line 8
        dVj = m.alloc((bc, dv), what="d̃V_j")
        for rows in m.tiles(N, t.B_r):  # line 9
            br = rows.stop - rows.start
            Qi, Oi, dOi, dQi, li, mi = m.load_rows(rows, Q, O, dO, dQ, ell, mx)  # line 10
            P = m.alloc((br, bc), what="S_ij", fill=None)
            dS = m.alloc((br, bc), what="dP_ij", fill=None)
            Di = m.alloc((br,), what="D_i", fill=None)
            if m.numeric:
                scores(P.data, Qi.data, Kj.data, scale, xp)  # line 11
                P.data -= mi.data[:, None]
                xp.exp(P.data, out=P.data)
                P.data /= li.data[:, None]  # line 13: P_ij
                xp.einsum("ij,ij->i", dOi.data, Oi.data, out=Di.data)  # line 19: D_i
                bwd_tile(P.data, dS.data, Qi.data, Kj.data, Vj.data, dOi.data, Di.data, dQi.data, dKj.data, dVj.data, scale, xp)  # lines 16–22
            m.work("qk", br * bc * d)
            m.work("bwd", br * bc * (2 * dv + 2 * d))
            m.store(dQi, dQ, rows)  # line 21: write
            m.free(Qi, Oi, dOi, dQi, li, mi, P, dS, Di)
        m.store(dKj, dK, cols)  # line 24
        m.store(dVj, dV, cols)
        m.free(Kj, Vj, dKj, dVj)
    return dQ, dK, dV
