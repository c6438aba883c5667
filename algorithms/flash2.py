"""FlashAttention-2 forward (Dao 2023, Algorithm 1), with the I/O-optimal block rule.

Loop nest, in the paper's names (T_r = ⌈N/B_r⌉ Q blocks, T_c = ⌈N/B_c⌉ K/V blocks)::

    for i in 1..T_r:                       # outer loop over Q blocks
        load Q_i (B_r×d); O_i ← 0, ℓ_i ← 0, m_i ← −∞ in fast memory
        for j in 1..T_c:                   # inner loop streams K and V
            load K_j (B_c×d); S_ij = scale·Q_i K_jᵀ; free K_j
            m_new = max(m_i, rowmax S_ij); P̃_ij = exp(S_ij − m_new)  (in place)
            α = exp(m_i − m_new) (in m_i's buffer); ℓ_i = α·ℓ_i + rowsum P̃_ij
            load V_j (B_c×d, into K_j's freed space); O_i = α·O_i + P̃_ij V_j; free V_j; m_i ← m_new
        O_i ← O_i / ℓ_i; write O_i; L_i = m_i + log ℓ_i; write L_i (the logsumexp FA-2 keeps for backward)

Fast memory holds Q_i and O_i (B_r·d each), S_ij/P̃_ij (B_r·B_c), three B_r-vectors (m_i, ℓ_i, m_new)
and one B_c×d buffer that holds K_j, then V_j: ``2·B_r·d + B_r·B_c + 3·B_r + B_c·d ≤ M``.

Block rule ("io-optimal", the default). The count depends only on T_r (K and V are read once per Q block,
whatever B_c), so B_r is made as large as fits with B_c = 1: ``a = ⌊(M − d)/(2d + 4)⌋`` (AttenIO,
Lu et al., ASPLOS 2026, Alg. 1), ``T_r = ⌈N/min(a, N)⌉``. Then B_r is shrunk to ``⌈N/T_r⌉`` (same T_r, same
count) and the space this frees goes to B_c = ⌊(M − B_r(2d+3))/(d + B_r)⌋ (≥ 1), which only speeds the
arithmetic. Requires M ≥ 3d + 4 (a ≥ 1).

Exact count (derived here, docs/costs.md): reads = N·d + 2N·d·T_r (Q once; K and V once per Q block);
writes = N·d + N (O and L). Leading term 4N²d²/M in the large-cache regime (FlashAttention Thm 2 gives
Θ(N²d²/M) for the same loop order).

Worked count, N=4, d=2, M=14: a = ⌊12/8⌋ = 1, T_r = 4, B_r = 1, B_c = ⌊(14 − 7)/3⌋ = 2.
reads = 8 + 2·8·4 = 72, writes = 8 + 4 = 12.

>>> from attnio.algorithms.run import run
>>> r = run("flash2", N=4, d=2, M=14, seed=0)
>>> r.tiling
Flash2Tiling(B_r=1, B_c=2)
>>> (r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words <= 14)
(72, 12, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from attnio.algorithms.causal import shift
from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.steps import fa2_accumulate, fa2_finish, fa2_rescale, scores
from attnio.algorithms.tilings import Blocks
from attnio.bounds import blocks


@dataclass(frozen=True)
class Flash2Tiling(Blocks, budget=blocks.flash2, name="flash2",
                   needs="one query row, its output row, one K/V row, one score and 3 statistics"):
    """B_r query rows per Q block, B_c key/value rows per K/V block."""


@dataclass(frozen=True)
class Flash2SquareTiling(Flash2Tiling, rule="square", name="flash2-square"):
    """Block rule "square" (``flash2-square``): B_r = B_c = b, the largest b whose working set fits M.

    With p = d + d_v + max(d, d_v) + 3 the working set is b² + p·b ≤ M, so
    ``b = ⌊(⌊√(p² + 4M)⌋ − p)/2⌋`` (then at most N). Count: reads = N·d + ⌈N/b⌉·N(d + d_v), writes as the
    default rule. In units of N²d²/M (d_v = d) the constant is about 2M/(b·d): ≈ 6 for M ≪ 9d², 11.7 at
    M = 16d², → 2√M/d for M ≫ 9d²; never below the default rule's 4, since b ≤ a (docs/costs.md#flash2).

    Worked count, N=8, d=2, M=40: p = 9, b = ⌊(⌊√241⌋ − 9)/2⌋ = 3, T_r = 3: reads = 16 + 3·32 = 112,
    writes = 16 + 8 = 24 (the default rule: a = 4, T_r = 2, reads 80).

    >>> from attnio.algorithms.run import run
    >>> r = run("flash2-square", N=8, d=2, M=40, seed=0)
    >>> (r.tiling, r.measurement.reads_words, r.measurement.writes_words)
    (Flash2SquareTiling(B_r=3, B_c=3), 112, 24)
    >>> Flash2SquareTiling.default(N=1024, d=64, M=65536)
    Flash2SquareTiling(B_r=176, B_c=176)
    """


def schedule(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: Flash2Tiling, scale: float) -> SlowArray:
    """The one-head, unmasked case: the Q blocks of the one head against all N key rows."""
    N, dv = Q.shape[0], V.shape[1]
    O = m.slow("O", (N, dv), role="output")
    L = m.slow("L", (N,), role="scratch")  # logsumexp per row, FA-2's saved statistic
    for rows in m.tiles(N, t.B_r):  # line 3
        block(m, Q, K, V, O, L, rows, t.B_c, scale)
    return O


def block(
    m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, O: SlowArray, L: SlowArray, rows: slice, B_c: int,
    scale: float, *, q_offs: tuple[int, ...] = (0,), kv_off: int = 0, kv_extent: int | None = None,
    tiles: Iterable[tuple[slice, bool]] | None = None, mask_tile: Callable[..., None] | None = None,
) -> None:
    """One Q block of FA-2 (the body of the outer loop, lines 4–14): query rows ``rows`` of each query head at
    row offset ``q_offs`` (several: a K/V-sharing group, each K/V tile loaded once for all of them) against the
    K/V rows [kv_off, kv_off + kv_extent) (default all of K). ``tiles``: the key rows (of the head) of each K/V
    tile visited, with whether the tile is partial (default: every B_c-tile of the extent, none masked). ``mask_tile(S, rows, cols)``: sets the
    logits of a partial tile's disallowed pairs to −∞; given, a row that sees no key keeps O = 0 and L = −∞."""
    xp = m.xp
    d, dv = Q.shape[1], V.shape[1]
    br = rows.stop - rows.start
    if tiles is None:
        kv_extent = K.shape[0] if kv_extent is None else kv_extent
        B_c = min(B_c, kv_extent)
        tiles = ((cols, False) for cols in m.tiles(kv_extent, B_c))
    masked = mask_tile is not None
    heads = []
    for qo in q_offs:
        Qi = m.load(Q, shift(rows, qo), what="Q_i")  # line 4: stays resident for the whole inner loop
        Oi = m.alloc((br, dv), what="O_i")  # line 5: accumulator, never leaves fast memory until the end
        mi = m.alloc((br,), what="m_i", fill=-math.inf)
        li = m.alloc((br,), what="ℓ_i")
        S = m.alloc((br, B_c), what="S_ij", fill=None)  # one score buffer for the whole inner loop
        mnew = m.alloc((br,), what="m_new", fill=None)
        heads.append((qo, Qi, Oi, mi, li, S, mnew))
    for cols, partial in tiles:  # line 6
        bc = cols.stop - cols.start
        Kj = m.load(K, shift(cols, kv_off), what="K_j")  # line 7
        for _, Qi, Oi, mi, li, S, mnew in heads:
            if m.numeric:  # lines 8–9: S_ij, m_new, P̃_ij, ℓ_i; the α·O_i of line 10
                scores(S.data[:, :bc], Qi.data, Kj.data, scale, xp)
                if partial:
                    mask_tile(S.data[:, :bc], rows, cols)  # type: ignore[misc]
                fa2_rescale(S.data[:, :bc], mi.data, li.data, Oi.data, mnew.data, xp, masked=masked)
            m.work("qk", br * bc * d)
        m.free(Kj)  # K_j's space is reused for V_j
        Vj = m.load(V, shift(cols, kv_off), what="V_j")  # line 7
        for _, _Qi, Oi, mi, _li, S, mnew in heads:
            if m.numeric:  # line 10: O_i += P̃_ij V_j
                fa2_accumulate(Oi.data, S.data[:, :bc], Vj.data, mi.data, mnew.data)
            m.work("pv", br * bc * dv)
        m.free(Vj)
    for qo, Qi, Oi, mi, li, S, mnew in heads:
        m.free(S, mnew)
        if m.numeric:  # lines 12–13: O_i / ℓ_i, L_i = m_i + log ℓ_i
            fa2_finish(Oi.data, mi.data, li.data, xp, masked=masked)
        m.store(Oi, O, shift(rows, qo))  # line 14
        m.store(mi, L, shift(rows, qo))  # line 15
        m.free(Qi, Oi, mi, li)


def empty_block(m: Machine, O: SlowArray, L: SlowArray, rows: slice, dv: int, q_offs: tuple[int, ...]) -> None:
    """A Q block whose tiles are all empty under a mask: nothing is read; its rows see no key, so their output is
    zero (FlexAttention's convention) and their logsumexp −∞, written as any other block's."""
    for qo in q_offs:
        Oi = m.alloc((rows.stop - rows.start, dv), what="O_i")
        Li = m.alloc((rows.stop - rows.start,), what="L_i", fill=-math.inf)
        m.store(Oi, O, shift(rows, qo))
        m.store(Li, L, shift(rows, qo))
        m.free(Oi, Li)
