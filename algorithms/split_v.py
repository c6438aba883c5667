"""Split-V attention for d_v > d_k: FlashAttention-2's loop, with the O accumulator held for only g value
columns at a time and S recomputed for each column group (derived here: docs/costs.md#split_v).

Loop nest (d = d_k; T_r = ⌈N/a⌉ Q blocks of a rows; G = ⌈d_v/g⌉ value-column groups; K/V streamed in
blocks of B_c rows)::

    for i in 1..T_r:
        load Q_i (a×d)                                  # stays resident across all column groups
        for c in 1..G:                                  # value columns [c·g, (c+1)·g)
            O_ic ← 0 (a×g), ℓ_i ← 0, m_i ← −∞ in fast memory
            for j in 1..⌈N/B_c⌉:
                load K_j (B_c×d); S_ij = scale·Q_i K_jᵀ (recomputed for every group); free K_j
                online softmax as in FA-2 (m_new, P̃_ij in place, α, ℓ_i)
                load V_j[:, group c] (B_c×g, into K_j's space); O_ic = α·O_ic + P̃_ij V_jc; free V_jc
            write O_ic / ℓ_i
            if c = 1: write L_i = m_i + log ℓ_i         # the logsumexp, once per row
        free Q_i

Fast memory: ``a·d + a·g + a·B_c + 3a + B_c·max(d, g) ≤ M``.

Block rule: g = min(d_k, d_v) (the fraction λ = d_k/d_v of the value columns that minimises the leading
term N²(d_k + λd_v)²/(λM)); then as FA-2's io-optimal rule with the accumulator g wide:
``a = ⌊(M − d)/(d + g + 4)⌋``, ``T_r = ⌈N/a⌉``, a shrunk to ⌈N/T_r⌉, and
``B_c = ⌊(M − a(d + g + 3))/(d + a)⌋`` (at most N). Needs M ≥ 2d + g + 4. With d_v ≤ d_k, G = 1 and this is
``flash2``.

Exact count (derived here, docs/costs.md#split_v): reads = N·d + T_r·(G·N·d + N·d_v) (Q once; K once per
(Q block, group); V once per Q block, a group at a time); writes = N·d_v + N. Leading term
4N²·d_k·d_v/M when g = d_k divides d_v, against FA-2's N²(d_k + d_v)²/M.

Worked count, N=4, d=2, d_v=4, M=18: g = 2, G = 2, a = ⌊16/8⌋ = 2, T_r = 2, B_c = ⌊(18 − 14)/4⌋ = 1.
reads = 8 + 2·(2·8 + 16) = 72, writes = 16 + 4 = 20 (flash2 at the same point reads 104).

>>> from attnio.algorithms.run import run
>>> r = run("split_v", N=4, d=2, dv=4, M=18, seed=0)
>>> r.tiling
SplitVTiling(a=2, B_c=1, g=2)
>>> (r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words <= 18)
(72, 20, True)
"""

from __future__ import annotations

from dataclasses import dataclass

from attnio.algorithms.machine import FastBlock, Machine, SlowArray
from attnio.algorithms.tilings import Budgeted
from attnio.bounds import blocks


@dataclass(frozen=True)
class SplitVTiling(Budgeted, budget=blocks.split_v, name="split_v",
                   needs="one query row, g output columns, one K/V row, one score, 3 statistics"):
    """a query rows per Q block, B_c key/value rows per K/V block, g = min(d, d_v) value columns per group."""

    a: int
    B_c: int
    g: int

    @staticmethod
    def fast_words(a: int, B_c: int, g: int, d: int) -> int:
        """Q_i, O_ic, S_ij, m_i, ℓ_i, m_new and the K_j / V_jc buffer: FA-2's working set, g columns wide."""
        return blocks.flash2(d, g).words(a, B_c)

    @classmethod
    def from_blocks(cls, B_r: int, B_c: int, d: int, dv: int) -> SplitVTiling:
        return cls(B_r, B_c, min(d, dv))


def schedule(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: SplitVTiling, scale: float) -> SlowArray:
    N = Q.shape[0]
    dv = V.shape[1]
    O = m.slow("O", (N, dv), role="output")
    L = m.slow("L", (N,))
    g0 = min(t.g, dv)
    for rows in m.tiles(N, t.a):
        Qi = m.load(Q, rows, what="Q_i")  # resident across the column groups
        _group(m, Qi, K, V, O, L, rows, slice(0, g0), t.B_c, scale, write_L=True)
        for sl in m.tiles(dv - g0, t.g):
            _group(m, Qi, K, V, O, L, rows, slice(sl.start + g0, sl.stop + g0), t.B_c, scale, write_L=False)
        m.free(Qi)
    return O


def _group(
    m: Machine, Qi: FastBlock, K: SlowArray, V: SlowArray, O: SlowArray, L: SlowArray, rows: slice, vcols: slice, B_c: int, scale: float, *, write_L: bool
) -> None:
    xp = m.xp
    N, d = K.shape
    br = rows.stop - rows.start
    gw = vcols.stop - vcols.start
    Oi = m.alloc((br, gw), what="O_ic")
    mi = m.alloc((br,), what="m_i", fill=-float("inf"))
    li = m.alloc((br,), what="ℓ_i")
    for cols in m.tiles(N, B_c):
        bc = cols.stop - cols.start
        Kj = m.load(K, cols, what="K_j")
        S = m.alloc((br, bc), what="S_ij", fill=None)
        if m.numeric:
            xp.matmul(Qi.data, Kj.data.T, out=S.data)
            S.data *= scale
        m.work("qk", br * bc * d)
        m.free(Kj)
        mnew = m.alloc((br,), what="m_new", fill=None)
        if m.numeric:
            xp.maximum(mi.data, S.data.max(axis=1), out=mnew.data)
            S.data -= mnew.data[:, None]
            xp.exp(S.data, out=S.data)
            mi.data -= mnew.data
            xp.exp(mi.data, out=mi.data)  # α
            li.data *= mi.data
            li.data += S.data.sum(axis=1)
            Oi.data *= mi.data[:, None]
        Vj = m.load(V, cols, vcols, what="V_jc")
        if m.numeric:
            Oi.data += S.data @ Vj.data
            mi.data[...] = mnew.data
        m.work("pv", br * bc * gw)
        m.free(Vj, S, mnew)
    if m.numeric:
        Oi.data /= li.data[:, None]
        mi.data += xp.log(li.data)
    m.store(Oi, O, rows, vcols)
    if write_L:
        m.store(mi, L, rows)
    m.free(Oi, mi, li)
