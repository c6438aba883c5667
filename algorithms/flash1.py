"""FlashAttention forward, Algorithm 1 of Dao et al. 2022, exactly as published (``flash1``), and the same loop
with the largest blocks that fit M (``flash1-fit``).

Loop nest, in the paper's names (T_r = ⌈N/B_r⌉ Q/O blocks, T_c = ⌈N/B_c⌉ K/V blocks)::

    O ← 0 (N×d_v), ℓ ← 0 (N), m ← −∞ (N) in slow memory      # N·d_v + 2N writes (line 2)
    for j in 1..T_c:                       # outer loop over K/V blocks (line 5)
        load K_j (B_c×d), V_j (B_c×d_v)                       # line 6
        for i in 1..T_r:                   # inner loop over Q/O blocks (line 7)
            load Q_i (B_r×d), O_i (B_r×d_v), ℓ_i, m_i (B_r each)  # line 8
            S_ij = scale·Q_i K_jᵀ (B_r×B_c)                    # line 9
            m̃_ij = rowmax S_ij; P̃_ij = exp(S_ij − m̃_ij) (in place); ℓ̃_ij = rowsum P̃_ij   # line 10
            m_new = max(m_i, m̃_ij); ℓ_new = e^{m_i − m_new}ℓ_i + e^{m̃_ij − m_new}ℓ̃_ij     # line 11
            O_i ← diag(ℓ_new)⁻¹(diag(ℓ_i)e^{m_i − m_new}O_i + e^{m̃_ij − m_new}P̃_ij V_j); write O_i  # line 12
            write ℓ_i ← ℓ_new, m_i ← m_new                      # line 13

Fast memory during an inner step: K_j, V_j, Q_i, O_i, S_ij/P̃_ij and six B_r-vectors (ℓ_i, m_i, m̃_ij, ℓ̃_ij,
m_new, ℓ_new), all live at once after line 11: with b_c = min(B_c, N), b_r = min(B_r, N),
``peak = (b_c + b_r)(d + d_v) + b_r·b_c + 6·b_r`` (the P̃V product accumulates into O_i in place).

Block rule ``flash1`` (published): ``B_c = ⌈M/(4d)⌉, B_r = min(⌈M/(4d)⌉, d)``. With d_v = d its working set
is about M + M²/(16d²) while M ≤ 4d² (K_j, V_j, Q_i, O_i: M; S_ij: (M/4d)²), 1.25·M at M = 4d², and
3M/4 + 2d² above (B_r = d): it exceeds M for M up to about 8d², so it runs in audit mode and reports its peak.

Block rule ``flash1-fit``: the count depends only on T_c, so B_c is made as large as fits with B_r = 1:
``c = ⌊(M − d − d_v − 6)/(d + d_v + 1)⌋``, ``T_c = ⌈N/c⌉``; then B_c is shrunk to ⌈N/T_c⌉ (same T_c) and the
space freed goes to ``B_r = ⌊(M − B_c(d + d_v))/(d + d_v + B_c + 6)⌋`` (≥ 1, at most N). Needs
M ≥ 2(d + d_v) + 7.

Exact count (derived here, docs/costs.md#flash1): reads = N(d + d_v) + T_c·N(d + d_v + 2) (K, V once; Q, O,
ℓ, m once per K/V block); writes = (1 + T_c)·N(d_v + 2) (the initialisation, then O, ℓ, m once per K/V
block). Without the initialisation and with d_v = d this is Saha–Ye's 2Nd + T_c(3Nd + 4N); leading term
12N²d²/M.

Worked count, N=4, d=2, M=16 (flash1): B_c = ⌈16/8⌉ = 2, B_r = min(2, 2) = 2, T_c = 2.
reads = 16 + 2·4·6 = 64, writes = 3·4·4 = 48, peak = 4·4 + 4 + 12 = 32 > M.

>>> from attnio.algorithms.run import run
>>> r = run("flash1", N=4, d=2, M=16, seed=0)
>>> r.tiling
Flash1Tiling(B_r=2, B_c=2)
>>> m = r.measurement
>>> (m.reads_words, m.writes_words, m.peak_fast_words, m.overflowed)
(64, 48, 32, True)

flash1-fit at the same size: c = ⌊(16 − 10)/5⌋ = 1, T_c = 4, B_c = 1, B_r = ⌊12/11⌋ = 1.
reads = 16 + 4·4·6 = 112, writes = 5·4·4 = 80.

>>> r = run("flash1-fit", N=4, d=2, M=16, seed=0)
>>> (r.tiling, r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words <= 16)
(Flash1FitTiling(B_r=1, B_c=1), 112, 80, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attnio.algorithms.causal import each, mask_if_crossing, q_blocks, shift
from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.steps import fa1_update, scores
from attnio.algorithms.tilings import Blocks
from attnio.bounds import blocks


@dataclass(frozen=True)
class Flash1Tiling(Blocks, budget=blocks.flash1_fit, resident="cols", rule="published", name="flash1"):
    """B_r query rows per Q/O block, B_c key/value rows per K/V block; the published rule. The budget is the
    working set after line 11: K_j, V_j, Q_i, O_i, S_ij and 6 vectors."""


@dataclass(frozen=True)
class Flash1FitTiling(Flash1Tiling, rule="io-optimal", name="flash1-fit",
                      needs="one row of K, V, Q, O, one score, 6 statistics"):
    """The same loop, with the largest blocks whose working set fits M."""


#: The working set of ``flash1`` as published (blocks capped at N), for the audit-mode test.
peak_fast_words = Flash1Tiling.capped_peak


def schedule(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: Flash1Tiling, scale: float) -> SlowArray:
    """The one-head, unmasked case of :func:`heads`."""
    N, dv = Q.shape[0], V.shape[1]
    O, ell, mx = statistics(m, N, dv)
    kv_loop(m, Q, K, V, O, ell, mx, t.B_r, t.B_c, scale)
    return O


def statistics(m: Machine, rows: int, dv: int) -> tuple[SlowArray, SlowArray, SlowArray]:
    """Line 2: O ← 0, ℓ ← 0, m ← −∞ in slow memory (rows·d_v + 2·rows initialising writes)."""
    O = m.slow("O", (rows, dv), role="output", init=0.0)
    ell = m.slow("ell", (rows,), init=0.0)
    mx = m.slow("m", (rows,), init=-math.inf)
    return O, ell, mx


def kv_loop(
    m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, O: SlowArray, ell: SlowArray, mx: SlowArray,
    B_r: int, B_c: int, scale: float, *, q_off: int = 0, kv_off: int = 0, Nq: int | None = None,
    Nkv: int | None = None, delta: int | None = None,
) -> None:
    """Lines 5–15 for one query head (rows [q_off, q_off + N_q) of Q, O, ℓ, m) against one K/V head (rows
    [kv_off, kv_off + N_kv) of K, V). ``delta``: bottom-right causal mask offset N_kv − N_q (None: no mask);
    then K/V block j (key rows [c_j, c_j + B_c)) visits only the query rows i ≥ c_j − δ that see its first key."""
    xp = m.xp
    Nq = Q.shape[0] if Nq is None else Nq
    Nkv = K.shape[0] if Nkv is None else Nkv
    d, dv = Q.shape[1], V.shape[1]
    for cols in (m.tiles if delta is None else each)(Nkv, B_c):  # line 5 (causal: the Q range depends on j)
        bc = cols.stop - cols.start
        Kj = m.load(K, shift(cols, kv_off), what="K_j")  # line 6
        Vj = m.load(V, shift(cols, kv_off), what="V_j")
        for rows, R in q_blocks(m, Nq, B_r, cols, delta, q_off):  # line 7
            br = rows.stop - rows.start
            Qi, Oi, li, mi = m.load_rows(R, Q, O, ell, mx)  # line 8
            S = m.alloc((br, bc), what="S_ij", fill=None)  # line 9
            mt = m.alloc((br,), what="m̃_ij", fill=None)  # line 10
            lt = m.alloc((br,), what="ℓ̃_ij", fill=None)
            mnew = m.alloc((br,), what="m_new", fill=None)  # line 11
            lnew = m.alloc((br,), what="ℓ_new", fill=None)
            if m.numeric:  # lines 9–12
                scores(S.data, Qi.data, Kj.data, scale, xp)
                mask_if_crossing(S.data, rows, cols, delta)
                fa1_update(S.data, Vj.data, Oi.data, li.data, mi.data, mt.data, lt.data, mnew.data, lnew.data, xp)
            m.work("qk", br * bc * d)
            m.work("pv", br * bc * dv)
            m.store(Oi, O, R)  # line 12
            m.store(lnew, ell, R)  # line 13
            m.store(mnew, mx, R)
            m.free(Qi, Oi, li, mi, S, mt, lt, mnew, lnew)
        m.free(Kj, Vj)
