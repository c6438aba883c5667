"""Standard attention (the baseline of FlashAttention, Dao et al. 2022, Algorithm 0 and Theorem 2), tiled so
that every step fits M.

The N×N score matrix S = scale·QKᵀ and the probability matrix P = softmax(S) are materialised in slow memory.
Every product is a square-tiled matrix multiplication with tile side b; the softmax is stable (row max
subtracted) and reads S twice per row block. Loop nest (T = ⌈N/b⌉ row and column tiles, T_d = ⌈d/b⌉,
T_v = ⌈d_v/b⌉)::

    # pass 1: S = scale·QKᵀ
    for i in 1..T: for j in 1..T:
        S_ij ← 0 (b×b, fast)
        for k in 1..T_d: load Q[i,k], K[j,k] (b×b each); S_ij += Q[i,k]·K[j,k]ᵀ; free both
        S_ij ← scale·S_ij; write S_ij                       # N² writes in all
    # pass 2: P = softmax(S), row block by row block
    for i in 1..T:
        m_i ← −∞, ℓ_i ← 0 (b each, fast)
        for j in 1..T: load S_ij; m_new = max(m_i, rowmax S_ij);
                       ℓ_i = e^{m_i − m_new}·ℓ_i + rowsum e^{S_ij − m_new}; m_i = m_new   # N² reads
        for j in 1..T: load S_ij; P_ij = e^{S_ij − m_i}/ℓ_i (in place); write P_ij        # N² reads, N² writes
    # pass 3: O = P·V
    for i in 1..T: for j in 1..T_v:
        O_ij ← 0 (b×b, fast)
        for k in 1..T: load P[i,k], V[k,j]; O_ij += P[i,k]·V[k,j]; free both
        write O_ij

Fast memory: passes 1 and 3 hold three tiles (3b²); pass 2 holds one S tile, m_i, ℓ_i and m_new (b² + 3b).
Block rule: ``b = ⌊√(M/3)⌋`` (the largest square tile with 3b² ≤ M); needs M ≥ 4 (at b = 1 pass 2 holds
4 words).

Exact count (derived here, docs/costs.md#standard): each Q word is read once per column tile and each K word
once per row tile (2·T·N·d); S is read twice (2N²); each P word once per value-column tile (T_v·N²); each V
word once per row tile (T·N·d_v). Writes: S and P (2N²), O (N·d_v).
reads = 2·T·N·d + 2N² + T_v·N² + T·N·d_v, writes = 2N² + N·d_v. This is Θ(Nd + N²) (FlashAttention
Thm 2) only once b ≥ d, d_v, i.e. M ≥ 3d²; below that the tiled products cost Θ(N²d/√M).

Worked count, N=4, d=2, M=12: b = ⌊√4⌋ = 2, T = 2, T_v = 1.
reads = 2·2·4·2 + 2·16 + 16 + 2·4·2 = 96, writes = 2·16 + 8 = 40.

>>> from attnio.algorithms.run import run
>>> r = run("standard", N=4, d=2, M=12, seed=0)
>>> (r.tiling, r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words)
(StandardTiling(b=2), 96, 40, 12)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attnio.algorithms.causal import row_tiles
from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.steps import softmax_stats
from attnio.algorithms.tiled import logits, pv
from attnio.algorithms.tilings import Side


@dataclass(frozen=True)
class StandardTiling(Side, name="standard", needs="one S tile of 1 word plus m, ℓ, m_new", phases=((3, 0), (1, 3))):
    """Side b of every square tile: three b×b tiles (passes 1, 3), one tile, m_i, ℓ_i and m_new (pass 2), so
    b = ⌊√(M/3)⌋."""

    b: int


def schedule(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: StandardTiling, scale: float) -> SlowArray:
    """The one-head, unmasked case of :func:`head`."""
    N, dv = Q.shape[0], V.shape[1]
    S = m.slow("S", (N, N))
    P = m.slow("P", (N, N))
    O = m.slow("O", (N, dv), role="output")
    head(m, Q, K, V, O, S, P, t.b, scale)
    return O


def head(
    m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, O: SlowArray, S: SlowArray, P: SlowArray, b: int, scale: float,
    *, q_off: int = 0, kv_off: int = 0, delta: int | None = None,
) -> None:
    """The three passes for one query head (rows [q_off, q_off + N_q) of Q and O) and its K/V head (rows
    [kv_off, kv_off + N_kv) of K and V); S and P (N_q × N_kv) hold one head's scores. ``delta``: bottom-right
    causal mask offset N_kv − N_q (None: no mask); then row tile i computes, stores and reads only the columns
    [0, e_i + δ), the tiles crossing the diagonal masked (−∞ logits)."""
    xp = m.xp

    # pass 1: S = scale·QKᵀ, square tiles, inner dimension d in chunks of b
    for rows, ext in row_tiles(m, *S.shape, b, delta):
        for cols in m.tiles(ext, b):
            Sij = logits(m, Q, K, rows, cols, b, scale, q_off=q_off, kv_off=kv_off, delta=delta)
            m.store(Sij, S, rows, cols)  # S_ij → slow
            m.free(Sij)

    # pass 2: P = softmax(S) per row block: one read of S for (max, sum), one to write P
    for rows, ext in row_tiles(m, *S.shape, b, delta):
        br = rows.stop - rows.start
        mi = m.alloc((br,), what="m_i", fill=-math.inf)
        li = m.alloc((br,), what="ℓ_i")
        for cols in m.tiles(ext, b):
            Sij = m.load(S, rows, cols, what="S_ij")
            mnew = m.alloc((br,), what="m_new", fill=None)
            if m.numeric:
                softmax_stats(Sij.data, mi.data, li.data, mnew.data, xp)
            m.free(Sij, mnew)
        for cols in m.tiles(ext, b):
            Sij = m.load(S, rows, cols, what="S_ij")
            if m.numeric:
                Sij.data -= mi.data[:, None]
                xp.exp(Sij.data, out=Sij.data)
                Sij.data /= li.data[:, None]  # P_ij, in place
            m.store(Sij, P, rows, cols)  # P_ij → slow
            m.free(Sij)
        m.free(mi, li)

    # pass 3: O = P·V, square tiles, inner dimension N_kv in chunks of b
    for rows, ext in row_tiles(m, *S.shape, b, delta):
        pv(m, P, V, O, rows, ext, b, q_off=q_off, kv_off=kv_off)
