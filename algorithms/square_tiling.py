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

from attnio.algorithms.machine import Machine, SlowArray

from attnio.errors import InvalidParameter
from attnio.validate import check_int


@dataclass(frozen=True)
class SquareTiling:
    """Side B of every tile."""

    B: int

    def __post_init__(self) -> None:
        check_int("B", self.B, min=1)

    @staticmethod
    def fast_words(B: int) -> int:
        """Two input tiles, one output tile and one B-vector (both phases)."""
        return 3 * B * B + B

    @staticmethod
    def min_M(N: int, d: int, dv: int | None = None) -> int:
        return 4  # B = ⌊√(M/4)⌋ ≥ 1

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None) -> SquareTiling:
        """Saha–Ye Algorithm 1, line 1: B = ⌊√(M/4)⌋."""
        if M < 4:
            raise InvalidParameter("M", M, "M >= 4 for square_tiling (B = floor(sqrt(M/4)) >= 1)")
        return cls(math.isqrt(M // 4))


def schedule(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: SquareTiling, scale: float) -> SlowArray:
    xp = m.xp
    N, d = Q.shape
    dv = V.shape[1]
    B = t.B
    S = m.slow("S", (N, N))  # logits (the paper: A = exp(QKᵀ))
    L = m.slow("L", (N,))  # row logsumexp (the paper: row sums d)
    O = m.slow("O", (N, dv), role="output")

    # Phase 1
    for rows in m.tiles(N, B):
        Li = m.alloc((rows.stop - rows.start,), what="L_i", fill=-math.inf)
        for cols in m.tiles(N, B):
            A = m.alloc((rows.stop - rows.start, cols.stop - cols.start), what="A_ij")
            for ks in m.tiles(d, B):
                Qil = m.load(Q, rows, ks, what="Q_iℓ")
                Kjl = m.load(K, cols, ks, what="K_jℓ")
                if m.numeric:
                    A.data += Qil.data @ Kjl.data.T
                m.work("qk", A.words * (ks.stop - ks.start))
                m.free(Qil, Kjl)
            if m.numeric:
                A.data *= scale
            m.store(A, S, rows, cols)  # logits → slow
            if m.numeric:  # row logsumexp of the tile, in the tile's own space
                mx = A.data.max(axis=1)
                A.data -= mx[:, None]
                xp.exp(A.data, out=A.data)
                xp.logaddexp(Li.data, mx + xp.log(A.data.sum(axis=1)), out=Li.data)
            m.free(A)
        m.store(Li, L, rows)  # one logsumexp per row
        m.free(Li)

    # Phase 2
    for rows in m.tiles(N, B):
        Li = m.load(L, rows, what="L_i")
        for vcols in m.tiles(dv, B):
            Oij = m.alloc((rows.stop - rows.start, vcols.stop - vcols.start), what="O_ij")
            for ks in m.tiles(N, B):
                Sik = m.load(S, rows, ks, what="S_ik")
                Vkj = m.load(V, ks, vcols, what="V_kj")
                if m.numeric:
                    Sik.data -= Li.data[:, None]
                    xp.exp(Sik.data, out=Sik.data)  # exp(S − L) = diag(d)⁻¹A, in place
                    Oij.data += Sik.data @ Vkj.data
                m.work("pv", Oij.words * (ks.stop - ks.start))
                m.free(Sik, Vkj)
            m.store(Oij, O, rows, vcols)
            m.free(Oij)
        m.free(Li)
    return O
