"""K/V-stationary attention: hold a block of K and V rows, stream Q, read and write the partial O.

A reference point for the large cache (constant 6; derived here, docs/costs.md#kv_stationary). Partial results are combined as in split-K FlashAttention: each partial output row is kept
normalised, with its logsumexp L, and two partials (O', L'), (O'', L'') merge to
``L = logaddexp(L', L'')``, ``O = e^{L' − L}·O' + e^{L'' − L}·O''``. One statistic per row moves, not two.

Loop nest (T_c = ⌈N/b⌉ K/V blocks of b rows, Q streamed in blocks of r rows)::

    for j in 1..T_c:
        load K_j (b×d), V_j (b×d_v)                       # each K, V word read once
        for i in 1..⌈N/r⌉:
            load Q_i (r×d)                                 # Q read once per K/V block
            S = scale·Q_i K_jᵀ; m = rowmax S; P̃ = e^{S − m} (in place); ℓ = rowsum P̃
            Ô = P̃V_j/ℓ; L̂ = m + log ℓ (in m's buffer)
            if j > 1: load O_i (r×d_v), L_i (r); L_new = logaddexp(L̂, L_i) (in ℓ's buffer);
                      Ô = e^{L̂ − L_new}Ô + e^{L_i − L_new}O_i; L̂ ← L_new
            write Ô → O_i, L̂ → L_i                        # O and L written once per K/V block

Fast memory: K_j, V_j, Q_i, S, Ô, O_i and three r-vectors:
``b(d + d_v) + r·d + r·b + 2r·d_v + 3r ≤ M``.

Block rule: the count depends only on T_c, so b is as large as fits with r = 1:
``b = ⌊(M − d − 2d_v − 3)/(d + d_v + 1)⌋``, ``T_c = ⌈N/b⌉``; then b is shrunk to ⌈N/T_c⌉ and the space freed
goes to ``r = ⌊(M − b(d + d_v))/(d + b + 2d_v + 3)⌋`` (at most N). Needs M ≥ 2d + 3d_v + 4.

Exact count (derived here, docs/costs.md#kv_stationary): reads = N(d + d_v) + T_c·N·d + (T_c − 1)·N(d_v + 1),
writes = T_c·N(d_v + 1). Leading term 6N²d²/M (b ≈ M/2d, three N·d streams per K/V block).

Worked count, N=4, d=2, M=19: b = ⌊10/5⌋ = 2, T_c = 2, r = ⌊(19 − 8)/11⌋ = 1.
reads = 16 + 2·8 + 1·12 = 44, writes = 2·12 = 24.

>>> from attnio.algorithms.run import run
>>> r = run("kv_stationary", N=4, d=2, M=19, seed=0)
>>> (r.tiling, r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words <= 19)
(KVStationaryTiling(b=2, r=1), 44, 24, True)
"""

from __future__ import annotations

from dataclasses import dataclass

from attnio.algorithms.machine import FastBlock, Machine, SlowArray
from attnio.algorithms.tilings import Budgeted
from attnio.bounds import blocks


@dataclass(frozen=True)
class KVStationaryTiling(Budgeted, budget=blocks.kv_stationary, resident="cols", name="kv_stationary",
                         needs="one K/V row, one Q row, two O rows, 3 statistics"):
    """b rows of K and V held per block, r query rows streamed per step."""

    b: int
    r: int

    @classmethod
    def fast_words(cls, b: int, r: int, d: int, dv: int) -> int:
        return cls.budget(d, dv).words(r, b)

    @classmethod
    def from_blocks(cls, B_r: int, B_c: int, d: int, dv: int) -> KVStationaryTiling:
        return cls(b=B_c, r=B_r)


def schedule(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: KVStationaryTiling, scale: float) -> SlowArray:
    N = Q.shape[0]
    O = m.slow("O", (N, V.shape[1]), role="output")
    L = m.slow("L", (N,))
    b0 = min(t.b, N)
    _kv_block(m, Q, K, V, O, L, slice(0, b0), t.r, scale, first=True)
    for sl in m.tiles(N - b0, t.b):  # the remaining K/V blocks also read the partial O and L
        _kv_block(m, Q, K, V, O, L, slice(sl.start + b0, sl.stop + b0), t.r, scale, first=False)
    return O


def _kv_block(
    m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, O: SlowArray, L: SlowArray, cols: slice, r: int, scale: float, *, first: bool
) -> None:
    xp = m.xp
    N, d = Q.shape
    dv = V.shape[1]
    bc = cols.stop - cols.start
    Kj = m.load(K, cols, what="K_j")  # held for the whole stream of Q
    Vj = m.load(V, cols, what="V_j")
    for rows in m.tiles(N, r):
        br = rows.stop - rows.start
        Qi = m.load(Q, rows, what="Q_i")
        S = m.alloc((br, bc), what="S", fill=None)
        mi = m.alloc((br,), what="m", fill=None)
        li = m.alloc((br,), what="ℓ", fill=None)
        Oh = m.alloc((br, dv), what="Ô", fill=None)
        if m.numeric:
            xp.matmul(Qi.data, Kj.data.T, out=S.data)
            S.data *= scale
            S.data.max(axis=1, out=mi.data)
            S.data -= mi.data[:, None]
            xp.exp(S.data, out=S.data)
            S.data.sum(axis=1, out=li.data)
            xp.matmul(S.data, Vj.data, out=Oh.data)
            Oh.data /= li.data[:, None]
            mi.data += xp.log(li.data)  # L̂ = m + log ℓ
        m.work("qk", br * bc * d)
        m.work("pv", br * bc * dv)
        extra: tuple[FastBlock, ...] = ()
        if not first:
            Oi = m.load(O, rows, what="O_i")  # the partial output of the earlier K/V blocks
            Li = m.load(L, rows, what="L_i")
            if m.numeric:
                xp.logaddexp(mi.data, Li.data, out=li.data)  # L_new, in ℓ's buffer
                Oh.data *= xp.exp(mi.data - li.data)[:, None]
                Oh.data += xp.exp(Li.data - li.data)[:, None] * Oi.data
                mi.data[...] = li.data
            extra = (Oi, Li)
        m.store(Oh, O, rows)
        m.store(mi, L, rows)
        m.free(Qi, S, mi, li, Oh, *extra)
    m.free(Kj, Vj)

