"""Saha–Ye SquareTilingAttention (arXiv 2402.07443, Algorithm 1, Theorem 3.5), made numerically stable.

Every tile is B×B with ``B = ⌊√(M/4)⌋`` (line 1). Loop nest (T = ⌈N/B⌉, T_d = ⌈d/B⌉, T_v = ⌈d_v/B⌉)::

    # Phase 1 (lines 2-14): logits and one logsumexp per row
    for i in 1..T:
        L_i ← −∞ (B, fast)                     # the paper's row-sum vector d^(B)[i] ← 0
        for j in 1..T:
            A_ij ← 0 (B×B, fast)
            for ℓ in 1..T_d: read Q[i,ℓ], K[j,ℓ] (B×B each); A_ij += Q[i,ℓ]·K[j,ℓ]ᵀ; delete both
            A_ij ← scale·A_ij; write A_ij          # the paper writes exp(A_ij): same B² words
            L_i ← logaddexp(L_i, rowlogsumexp A_ij)   # the paper: d[i] += A_ij·1; delete A_ij
        write L_i                                  # the paper writes d^(B)[i]: same B words
    # Phase 2 (lines 15-25): O = softmax(S)·V
    for i in 1..T:
        read L_i                                   # the paper reads d^(B)[i]
        for j in 1..T_v:
            O_ij ← 0 (B×B, fast)
            for k in 1..T: read S[i,k], V[k,j]; P = exp(S[i,k] − L_i) (in place); O_ij += P·V[k,j]; delete both
            write O_ij
        delete L_i

Stability: the paper stores A = exp(QKᵀ) and divides by the row sum in phase 2, which overflows for large
logits. Here slow memory keeps the logits S and one logsumexp L per row (kept online in fast memory, as the
paper keeps the row sum); phase 2 forms exp(S − L) ≤ 1 on load, which is already diag(d)⁻¹A. The same words
move. The row logsumexp of a finished tile is computed in that tile's own (already written) space, so fast
memory holds 3B² + B words in both phases, as in the paper (≤ 4B² ≤ M).

Exact count (derived here, docs/costs.md#square_tiling): reads = 2·T·N·d + N + T_v·N² + T·N·d_v (Q once per
column tile, K once per row tile, L once, S once per value-column tile, V once per row tile); writes =
N² + N + N·d_v. When B divides N and d (d_v = d) this is Saha–Ye's 4N²d/B + N² + Nd + 2N; at N = 1024,
d = 128, M = 4096 it is 17,958,912.

Worked count, N=4, d=2, M=16: B = 2, T = 2, T_v = 1.
reads = 2·2·4·2 + 4 + 16 + 2·4·2 = 68, writes = 16 + 4 + 8 = 28.

>>> from attnio.algorithms.run import run
>>> r = run("square_tiling", N=4, d=2, M=16, seed=0)
>>> r.tiling
SquareTiling(B=2)
>>> (r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words)
(68, 28, 14)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attnio.algorithms.causal import row_tiles
from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.steps import logsumexp_into
from attnio.algorithms.tiled import logits, pv
from attnio.algorithms.tilings import Side


@dataclass(frozen=True)
class SquareTiling(Side, name="square_tiling", needs="B = floor(sqrt(M/4)) >= 1", phases=((3, 1),)):
    """Side B of every tile: two input tiles, one output tile and one B-vector (both phases)."""

    B: int

    @staticmethod
    def side(M: int) -> int:
        """Saha–Ye Algorithm 1, line 1: B = ⌊√(M/4)⌋."""
        return math.isqrt(M // 4)


def schedule(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: SquareTiling, scale: float) -> SlowArray:
    """The one-head, unmasked case of :func:`head`: both phases with B×B tiles."""
    return two_phases(m, Q, K, V, (t.B,) * 3, (t.B,) * 3, scale)


def two_phases(
    m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, tiles1: tuple[int, int, int], tiles2: tuple[int, int, int],
    scale: float, names1: tuple[str, str, str] = ("A_ij", "Q_iℓ", "K_jℓ"),
    names2: tuple[str, str, str] = ("S_ik", "V_kj", "O_ij"),
) -> SlowArray:
    """One unmasked head: the logits S (the paper: A = exp(QKᵀ)), the row logsumexp L (the paper: row sums d)
    and O in slow memory, then :func:`logits_phase` with (a, b, k) = ``tiles1`` and :func:`output_phase` with
    ``tiles2`` (``names``: the fast blocks of each); returns O."""
    N, dv = Q.shape[0], V.shape[1]
    S = m.slow("S", (N, N))
    L = m.slow("L", (N,))
    O = m.slow("O", (N, dv), role="output")
    logits_phase(m, Q, K, S, L, *tiles1, scale, names=names1)
    output_phase(m, S, L, V, O, *tiles2, names=names2)
    return O


def head(
    m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, O: SlowArray, S: SlowArray, L: SlowArray, B: int, scale: float,
    *, q_off: int = 0, kv_off: int = 0, delta: int | None = None,
) -> None:
    """Both phases for one query head (rows [q_off, q_off + N_q) of Q and O) and its K/V head (rows
    [kv_off, kv_off + N_kv) of K and V); S (N_q × N_kv) and L hold one head's logits. ``delta``: bottom-right
    causal mask offset (None: no mask); row tile i then covers only the columns [0, e_i + δ)."""
    logits_phase(m, Q, K, S, L, B, B, B, scale, q_off=q_off, kv_off=kv_off, delta=delta)  # lines 2-14
    output_phase(m, S, L, V, O, B, B, B, q_off=q_off, kv_off=kv_off, delta=delta)  # lines 15-25


def logits_phase(
    m: Machine, Q: SlowArray, K: SlowArray, S: SlowArray, L: SlowArray, a: int, b: int, k: int, scale: float, *,
    q_off: int = 0, kv_off: int = 0, delta: int | None = None, names: tuple[str, str, str] = ("A_ij", "Q_iℓ", "K_jℓ"),
) -> None:
    """Phase 1: a×b logit tiles (the inner dimension d in chunks of k) written to S, and the row logsumexp of
    each row tile of a rows, kept online in fast memory, written to L."""
    for rows, ext in row_tiles(m, *S.shape, a, delta):
        Li = m.alloc((rows.stop - rows.start,), what="L_i", fill=-math.inf)
        for cols in m.tiles(ext, b):
            A = logits(m, Q, K, rows, cols, k, scale, q_off=q_off, kv_off=kv_off, delta=delta, names=names)
            m.store(A, S, rows, cols)  # logits → slow
            if m.numeric:  # row logsumexp of the tile, in the tile's own space
                logsumexp_into(A.data, Li.data, m.xp)
            m.free(A)
        m.store(Li, L, rows)  # one logsumexp per row
        m.free(Li)


def output_phase(
    m: Machine, S: SlowArray, L: SlowArray, V: SlowArray, O: SlowArray, a: int, b: int, k: int, *, q_off: int = 0,
    kv_off: int = 0, delta: int | None = None, names: tuple[str, str, str] = ("S_ik", "V_kj", "O_ij"),
) -> None:
    """Phase 2: O = exp(S − L)·V in a×b output tiles, the inner dimension in chunks of k."""
    for rows, ext in row_tiles(m, *S.shape, a, delta):
        Li = m.load(L, rows, what="L_i")
        pv(m, S, V, O, rows, ext, b, k=k, L_i=Li, q_off=q_off, kv_off=kv_off, names=names)
        m.free(Li)
