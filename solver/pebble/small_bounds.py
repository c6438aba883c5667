"""Small forms of the explicit lower bounds: what their proofs give before the closed form's relaxation.

The closed forms (B1 = N²d²/M − M, B2, B3, BS, Saha–Ye's explicit Lemma 3.4 and Thm 4.8, the backward bounds)
are ≤ 0 on every instance exact pebbling can solve, so there they refute nothing. Each proof cuts the I/O
sequence into h segments of R I/Os (Q ≥ R·(h − 1)) and bounds what one segment can compute; the closed form
fixes R (M or 3M) and relaxes the count. The proofs hold for *every* R ≥ 1 and every M (the regimes enter only
at the last simplification), so each gives a *segment form* (derived here, docs/bounds/small-forms.md)::

    form(N, d, M) = max_{R ≥ 1} R·(h_min(R) − 1),  h_min(R) the least integer number of segments the count allows

with, for a segment budget B = M + R (the words red at its start or read in it):

    form                    counted (each in some segment)  most per segment, F(B)                         proof
    b1.segment              N² roots S_ij                   max(B²/(4d²), B)                               b1.md 1–5
    b2.segment              N²d products A_ij·V_jℓ          max(B²/(8d), d·B)                              b2.md 1–5
    sy.lemma3.4.segment     N² QKᵀ trees                    B²/d² + 2B (one part of a B-partition)         SY L3.3
    sy.thm4.8.segment       N² entries of QKᵀ               max(2B²/d², 4B) (Lemma 4.6, B words sent)      SY T4.8
    bs.segment              N²d products Q_iℓ·K_jℓ          F² = max_{0≤s≤B} (s²/4)(M + B − κs),           bs.md 1–9
                                                            κ = 1 − B/(4d²)
    b3.segment              16N²d² − (3M + 2R)Nd            (M + R)² + 64d⁴ (amortised over segments)      b3.md 1–12
    bwd-dp.segment          N² roots dP_ij                  as b1.segment                                  backward.md
    bwd-sdp.segment         N² pairs (dS_ij)                max(B²/(16d²), B)                              backward.md
    bwd-dp-small.segment    N²d products dO_iℓ·V_jℓ         as bs.segment                                  backward-small.md
    bwd-sdp-small.segment   2N²d products (both families)   as bs.segment (one shared budget)              backward-small.md
    b1/b2/b3.causal.segment as b1/b2/b3 with the P = N(N + 1)/2 pairs j ≤ i in place of N² (B1_P, B2_P, B3_P)

h_min = ⌈count/F⌉ (h_min = least h with h²·F² ≥ count² where F is a square root); R is scanned up to the first
R where h_min ≤ 1 (F grows with R, so no larger R gives more). Each form is at least its closed form wherever
that applies (R = M, or R = 3M for BS: claims ``pebbling.*.small_implies``). The trivial bounds' small forms
are themselves: 4Nd (forward), 4Nd − d (causal: workloads.trivial.causal at N_q = N_kv = N) and 7Nd (backward;
in the CDAG every Q, K, V, dO word is an ancestor of an output, so N ≥ 2 is not needed).

Which hold in the partial-computation game (PRBP): those whose bound's CDAG assumption admits partial-sum
aggregation (:data:`PRBP_OK`: B1, B3, BS, the trivial bound, Saha–Ye Thm 4.8 which is about any algorithm).

>>> segment_form(8, 1, 4, "b1")  # N = 8, d = 1, M = 4: R = 3, F₁(7) = 49/4, 3·(⌈64·4/49⌉ − 1) = 15
15
>>> evaluate(2, 1, 3)["trivial.small"], evaluate(2, 1, 3)["b1.segment"]
(8, 0)
>>> segment_form(3, 1, 4, "b3")  # R = 1: ⌈(144 − 15·3)/(25 + 64)⌉ = 2, so 1·(2 − 1)
1
>>> verdict(5, {"status": "optimal", "lower": 7, "upper": 7}), verdict(8, {"status": "optimal", "lower": 7, "upper": 7})
('confirms', 'refuted')
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import ceil, isqrt
from typing import Any

PRBP_OK = frozenset({"trivial.4Nd", "sy.thm4.8.explicit", "constants.b1", "constants.b3", "constants.bs"})


def holds_in_prbp(bound_id: str) -> bool:
    """Whether a catalog bound's CDAG assumption admits partial-sum aggregation (its page says so: B1, B3,
    BS; the trivial bound and Saha–Ye Thm 4.8 are about any algorithm)."""
    return bound_id in PRBP_OK


@dataclass(frozen=True)
class Form:
    """One small form: its key in a benchmark row, the catalog bound it is the small form of, the pass it speaks
    about, and its segment kind (:func:`segment_form`) or ``"trivial"``."""

    id: str
    bound: str
    computation: str
    kind: str


# form id, the catalog bound it is the small form of, the pass, the segment kind (or "trivial")
_FORM_TABLE = """
trivial.small           trivial.4Nd              forward   trivial
b1.segment              constants.b1             forward   b1
b2.segment              constants.b2             forward   b2
b3.segment              constants.b3             forward   b3
bs.segment              constants.bs             forward   bs
sy.lemma3.4.segment     sy.lemma3.4.explicit     forward   sy3.4
sy.thm4.8.segment       sy.thm4.8.explicit       forward   sy4.8
bwd.trivial.small       backward.trivial         backward  trivial
bwd-dp.segment          backward.bwd-dp          backward  b1
bwd-sdp.segment         backward.bwd-sdp         backward  bwd-sdp
bwd-dp-small.segment    backward.bwd-dp-small    backward  bs
bwd-sdp-small.segment   backward.bwd-sdp-small   backward  bwd-sdp-small
trivial.causal.small    workloads.trivial.causal causal    trivial
b1.causal.segment       workloads.b1.causal      causal    b1c
b2.causal.segment       workloads.b2.causal      causal    b2c
b3.causal.segment       workloads.b3.causal      causal    b3c
"""
FORMS: tuple[Form, ...] = tuple(Form(*line.split()) for line in _FORM_TABLE.strip().splitlines())
KINDS = ("b1", "b2", "b3", "bs", "sy3.4", "sy4.8", "bwd-sdp", "bwd-sdp-small", "b1c", "b2c", "b3c")
_CAUSAL_OF = {"b1c": "b1", "b2c": "b2", "b3c": "b3"}  # the causal kinds: the same F, the count over the P pairs j ≤ i
_SQRT_KINDS = frozenset({"bs", "bwd-sdp-small"})  # F is the square root of a rational


def F(kind: str, d: int, B: int, M: int | None = None) -> Fraction:
    """Most roots, products or pairs (per ``kind``) computed in one segment of budget B = M + R; for the square-root
    kinds (``"bs"``, ``"bwd-sdp-small"``) the *square* of that number (M is then needed: K = 2M + R = M + B)."""
    kind = _CAUSAL_OF.get(kind, kind)
    if kind == "b1":
        return max(Fraction(B * B, 4 * d * d), Fraction(B))
    if kind == "b2":
        return max(Fraction(B * B, 8 * d), Fraction(d * B))
    if kind == "sy3.4":
        return Fraction(B * B, d * d) + 2 * B
    if kind == "sy4.8":
        return max(Fraction(2 * B * B, d * d), Fraction(4 * B))
    if kind == "bwd-sdp":
        return max(Fraction(B * B, 16 * d * d), Fraction(B))
    if kind in _SQRT_KINDS:
        assert M is not None
        return bs_square(d, M, B - M)
    raise ValueError(kind)


def bs_square(d: int, M: int, R: int) -> Fraction:
    """max over s ∈ [0, B] of (s²/4)(K − κs), B = M + R, K = 2M + R, κ = 1 − B/(4d²): the square of the most
    products one segment completes (BS steps 3–9 for any R; the cubic rises up to s = 2K/(3κ) when κ > 0, on the
    whole range when κ ≤ 0).

    >>> bs_square(2, 1, 3)  # B = 4, K = 5, κ = 3/4: 3κB = 9 < 2K = 10, so s = B: 4·(5 − 3) = 8
    Fraction(8, 1)
    """
    B, K = M + R, Fraction(2 * M + R)
    kappa = 1 - Fraction(B, 4 * d * d)
    if kappa > 0 and 3 * kappa * B >= 2 * K:
        return K**3 / (27 * kappa**2)
    return Fraction(B * B, 4) * (K - kappa * B)


def pairs(N: int, causal: bool = False) -> int:
    """The (query, key) pairs the graph computes: N², or N(N + 1)/2 under the causal mask (keys j ≤ i)."""
    return N * (N + 1) // 2 if causal else N * N


def _count(kind: str, N: int, d: int) -> int:
    P = pairs(N, kind in _CAUSAL_OF)
    return {"b1": P, "b1c": P, "sy3.4": P, "sy4.8": P, "bwd-sdp": P, "b2": P * d, "b2c": P * d, "bs": P * d,
            "bwd-sdp-small": 2 * P * d}[kind]


def least_segments(kind: str, N: int, d: int, M: int, R: int, *, planted: Fraction = Fraction(1)) -> int:
    """h_min(R): the least integer h ≥ 1 that the segment count allows (module docstring); ``planted`` divides the
    per-segment maximum (a deliberately wrong form: planted > 1 claims fewer computations per segment than proved)."""
    if kind in ("b3", "b3c"):  # B3 (B3_P under the mask): 16·P·d² − (3M + 2R)·L, L = Nd output slots
        num = 16 * pairs(N, kind == "b3c") * d * d - (3 * M + 2 * R) * N * d
        den = Fraction((M + R) ** 2 + 64 * d**4) / planted
        return max(1, ceil(num / den))
    count = _count(kind, N, d)
    if kind in _SQRT_KINDS:  # least h with h²·G ≥ count², G = F²/planted²
        G = F(kind, d, M + R, M) / (planted * planted)
        h = max(1, isqrt(int(count * count / G)))
        while h > 1 and (h - 1) ** 2 * G >= count * count:
            h -= 1
        while h * h * G < count * count:
            h += 1
        return h
    return max(1, ceil(Fraction(count) / (F(kind, d, M + R) / planted)))


def segment_form(N: int, d: int, M: int, kind: str, *, planted: Fraction = Fraction(1)) -> int:
    """max over R ≥ 1 of R·(h_min(R) − 1) (module docstring). h_min falls as R grows, so the scan stops at the
    first R with h_min = 1."""
    if kind not in KINDS:
        raise ValueError(kind)
    best, R = 0, 1
    while True:
        h = least_segments(kind, N, d, M, R, planted=planted)
        if h <= 1:
            return best
        best = max(best, R * (h - 1))
        R += 1


def value(form: Form, N: int, d: int, M: int, *, planted: Fraction = Fraction(1)) -> int:
    """The form's value at (N, d, M); ``planted`` as in :func:`least_segments` (segment forms only)."""
    if form.kind == "trivial":
        assert planted == 1, "a trivial form has no per-segment count to plant"
        return {"forward": 4 * N * d, "causal": 4 * N * d - d, "backward": 7 * N * d}[form.computation]
    return segment_form(N, d, M, form.kind, planted=planted)


def forms_for(computation: str = "forward", game: str = "recompute") -> tuple[Form, ...]:
    """The forms that speak about ``computation`` in ``game`` (PRBP: only those of :data:`PRBP_OK`'s bounds)."""
    return tuple(f for f in FORMS if f.computation == computation and (game != "prbp" or holds_in_prbp(f.bound)))


def evaluate(N: int, d: int, M: int, *, game: str = "recompute", computation: str = "forward") -> dict[str, int]:
    """The small forms that apply to attention (N, d) with M red pebbles in ``game``, by form id; ``computation``
    is ``"forward"``, ``"backward"`` or ``"causal"`` (the forward graph under the causal mask)."""
    return {f.id: value(f, N, d, M) for f in forms_for(computation, game)}


def verdict(v: float, row: dict[str, Any]) -> str:
    """What a benchmark row says about a lower bound of value v: ``"confirms"`` (v ≤ the proved lower side, so
    v ≤ OPT), ``"refuted"`` (v > the replayed upper side, so v > OPT: the bound is wrong), else ``"open"``."""
    lower, upper = row.get("lower"), row.get("upper")
    if lower is not None and v <= lower:
        return "confirms"
    if upper is not None and v > upper:
        return "refuted"
    return "open"


def bspv_square(d: int, M: int, R: int) -> Fraction:
    """The square of the most products (both families) one segment of R I/Os completes in BSPV's count
    (docs/bounds/bspv.md steps 3–10 and bspv-cap.md steps 8–11, both for any R): with s = F₁ + F₂ ≤ 2M + R
    (step 6: the available Q, K, V words and type-2 slots ≤ M + r, the open slots ≤ M + w),
    |Z_t|² ≤ (s²/4)·F₃ where F₃ ≤ K − κs (BSPV step 9, K = 2M + R, κ = 1 − (M + R)/(4d²), either sign) and
    F₃ ≤ K′ − s (BSPV-cap step 9, K′ = K + (M + R)²/(4d²)). Each cubic's maximum over s ∈ [0, 2M + R] is taken
    exactly, and the smaller of the two kept (both hold for the same segment).

    >>> bspv_square(5, 3, 1)  # K = 7: BSPV's κ = 24/25 gives K³/(27κ²) ≈ 13.78; the cap's K′ = 7.16 gives K′³/27 ≈ 13.59
    Fraction(5735339, 421875)
    """
    B, K = M + R, Fraction(2 * M + R)
    top = K  # s ≤ 2M + R

    def cubic_max(Kc: Fraction, kappa: Fraction) -> Fraction:
        if kappa > 0 and 2 * Kc / (3 * kappa) <= top:
            return Kc**3 / (27 * kappa**2)
        return top * top / 4 * (Kc - kappa * top)  # rising on the whole range: the end s = 2M + R

    g_kappa = cubic_max(K, 1 - Fraction(B, 4 * d * d))
    g_cap = cubic_max(K + Fraction(B * B, 4 * d * d), Fraction(1))
    return min(g_kappa, g_cap)


def bspv_segment(N: int, d: int, M: int, dv: int | None = None) -> int:
    """BSPV's small form (derived here, docs/bounds/small-forms.md#bspv): max over R ≥ 1 of R·(h − 1), h the least
    integer with h²·G ≥ (N²(d + d_v))², G = :func:`bspv_square` (the products of both families, Σ_t |Z_t| =
    N²(d + d_v), BSPV step 13). Valid at every M for the standard attention CDAG (P1)–(P6), recomputation allowed.

    >>> bspv_segment(3, 5, 3), bspv_segment(3, 5, 4), 4 * 3 * 5  # above the trivial 4Nd = 60 only at M = 3
    (63, 52, 60)
    """
    dv = d if dv is None else dv
    count = N * N * (d + dv)
    best, R = 0, 1
    while True:
        G = bspv_square(d, M, R)
        h = max(1, isqrt(int(count * count / G)))
        while h > 1 and (h - 1) ** 2 * G >= count * count:
            h -= 1
        while h * h * G < count * count:
            h += 1
        if h <= 1:
            return best
        best = max(best, R * (h - 1))
        R += 1
