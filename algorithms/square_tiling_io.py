"""Square tiling with a tile rule derived here for the small cache (``square_tiling-io``).

The same two phases as Saha–Ye's SquareTilingAttention (arXiv 2402.07443, Algorithm 1; ``square_tiling``):
phase 1 writes the logits S = QKᵀ and one logsumexp L per row, phase 2 computes O = exp(S − L)·V. What
changes is the tile shape. The paper takes B×B tiles with B = ⌊√(M/4)⌋ for every operand, so three B×B
tiles and a B-vector use only about 3M/4 of fast memory and every word is read ≈ N/B = 2N/√M times. Here
each phase holds one output tile of a×b words and *streams* the inner dimension (d in phase 1, N in phase 2)
in chunks of k columns (k = 1 is enough; any leftover space widens k, which changes no count):

    # Phase 1: logits and logsumexp (T_a = ⌈N/a₁⌉ row tiles, T_b = ⌈N/b₁⌉ column tiles)
    for i in 1..T_a:
        L_i ← −∞ (a₁, fast)
        for j in 1..T_b:
            S_ij ← 0 (a₁×b₁, fast)
            for ℓ in chunks of k₁ of 1..d: read Q[i, ℓ] (a₁×k₁), K[j, ℓ] (b₁×k₁); S_ij += Q·Kᵀ; free both
            S_ij ← scale·S_ij; write S_ij; L_i ← logaddexp(L_i, rowlse S_ij) (in S_ij's space); free S_ij
        write L_i
    # Phase 2: O = exp(S − L)·V (T₂ = ⌈N/a₂⌉ row tiles, G = ⌈d_v/b₂⌉ value-column tiles)
    for i in 1..T₂:
        read L_i (a₂)
        for g in 1..G:
            O_ig ← 0 (a₂×b₂, fast)
            for k in chunks of k₂ of 1..N: read S[i, k] (a₂×k₂), V[k, g] (k₂×b₂); P = exp(S − L_i); O += P·V
            write O_ig
        free L_i

Working set: phase 1 a₁b₁ + a₁ + (a₁ + b₁)k₁ ≤ M, phase 2 a₂b₂ + a₂ + (a₂ + b₂)k₂ ≤ M (with k = 1:
ab + 2a + b ≤ M). Exact count (docs/costs.md#square_tiling-io): reads = N·d·(T_a + T_b) + N + G·N² + T₂·N·d_v,
writes = N² + N + N·d_v.

Tile rule (derived here, docs/costs.md#square_tiling-io). Phase 1 pays N·d per row tile and per column tile,
phase 2 pays N² per value-column tile and N·d_v per row tile, and the working set is ≈ a·b: in the
real-valued relaxation both phases are minimised by a ≈ b ≈ √M, and phase 2 by G ≈ d_v/√M groups. With
q = ⌊√M⌋:

- phase 1: b₁⁰ = ⌈N/G₁⁰⌉ columns with G₁⁰ = max(⌈N/q⌉, ⌈N/⌊(M − 2)/3⌋⌉) (as many column tiles as q-wide ones,
  balanced; the second term only matters for M < 13), a₁⁰ the most rows that fit
  with k₁ = 1, a₁ = ⌈N/⌈N/a₁⁰⌉⌉ (same row-tile count, balanced), b₁ the most columns that fit with this a₁;
- phase 2: G⁰ = max(round(d_v/q), ⌈d_v/⌊(M − 2)/3⌋⌉) value-column groups (the second term keeps a₂ ≥ 1 at
  tiny M), b₂⁰ = ⌈d_v/G⁰⌉, then a₂ and b₂ as in phase 1.

It is *not* proved optimal with ceilings: tests/test_square_tiling_io.py compares it with an exhaustive search
over all tile shapes of the family; at N = 4096, d = 128 and M = 256…4096 it is within 1 % of the best shape,
for 64 ≤ M ≤ d²/4 and N ≥ 4√M within 10 %; at tiny M or N below a few √M it loses more (≈ 20 %).

Worked count, N=4, d=2, M=16: q = 4; phase 1: b₁⁰ = 4, a₁⁰ = ⌊12/6⌋ = 2, a₁ = 2, b₁ = ⌊12/3⌋ = 4: T_a = 2,
T_b = 1; phase 2: G⁰ = max(⌊8/8⌋, ⌈2/4⌉) = 1, b₂⁰ = 2, a₂⁰ = min(4, ⌊14/4⌋) = 3, T₂ = 2, a₂ = 2, b₂ = 2, G = 1.
reads = 4·2·(2 + 1) + 4 + 16 + 2·4·2 = 60, writes = 16 + 4 + 8 = 28 (the paper's rule: 68 + 28).

>>> from attnio.algorithms.run import run
>>> r = run("square_tiling-io", N=4, d=2, M=16, seed=0)
>>> r.tiling
SquareTilingIO(a1=2, b1=4, k1=1, a2=2, b2=2, k2=2)
>>> (r.measurement.reads_words, r.measurement.writes_words, r.measurement.peak_fast_words <= 16)
(60, 28, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.square_tiling import two_phases
from attnio.algorithms.tilings import Positive, check_M


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _phase_tiles(n: int, N: int, M: int, groups0: int) -> tuple[int, int]:
    """(a, b) for one phase: ``groups0`` tiles over the extent n of b, then the most rows a (≤ N) that fit with
    k = 1, balanced over the same number of row tiles, then the most columns b (≤ n) that fit with that a."""
    b0 = _cdiv(n, groups0)
    a0 = min(N, (M - b0) // (b0 + 2))
    a = _cdiv(N, _cdiv(N, a0))
    b = min(n, (M - 2 * a) // (a + 1))
    return a, b


@dataclass(frozen=True)
class SquareTilingIO(Positive):
    """Phase 1: a1×b1 logit tiles, d streamed k1 columns at a time; phase 2: a2×b2 output tiles, N streamed
    k2 at a time."""

    a1: int
    b1: int
    k1: int
    a2: int
    b2: int
    k2: int

    @staticmethod
    def fast_words(a: int, b: int, k: int) -> int:
        """One phase: the output tile, the a-vector L_i and one chunk of each streamed operand."""
        return a * b + a + (a + b) * k

    @staticmethod
    def min_M(N: int, d: int, dv: int | None = None) -> int:
        return 6  # q = ⌊√M⌋ ≥ 2 and a₁⁰ ≥ 1 (docs/costs.md#square_tiling-io)

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None) -> SquareTilingIO:
        """The tile rule above."""
        dv = d if dv is None else dv
        check_M(M, 6, "square_tiling-io", "a 1×2 tile, its row statistic and one chunk")
        q = math.isqrt(M)
        cap = (M - 2) // 3  # b⁰ ≤ cap keeps a⁰ ≥ 1
        a1, b1 = _phase_tiles(N, N, M, max(_cdiv(N, q), _cdiv(N, cap)))
        g0 = max(1, (2 * dv + q) // (2 * q), _cdiv(dv, cap))
        a2, b2 = _phase_tiles(dv, N, M, g0)
        k1 = min(d, (M - a1 * b1 - a1) // (a1 + b1))
        k2 = min(N, (M - a2 * b2 - a2) // (a2 + b2))
        t = cls(a1, b1, k1, a2, b2, k2)
        assert cls.fast_words(a1, b1, k1) <= M and cls.fast_words(a2, b2, k2) <= M, (N, d, dv, M, t)
        return t


def schedule(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: SquareTilingIO, scale: float) -> SlowArray:
    """``square_tiling``'s two phases with this module's tiles."""
    return two_phases(m, Q, K, V, (t.a1, t.b1, t.k1), (t.a2, t.b2, t.k2), scale, ("S_ij", "Q_iℓ", "K_jℓ"),
                      ("S_ik", "V_kg", "O_ig"))
