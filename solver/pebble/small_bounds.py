"""Small forms of the explicit lower bounds: what their proofs give before the closed form's relaxation.

The closed forms B1 = N²d²/M − M and B2 = 2N²d²/M − M are ≤ 0 on every instance exact pebbling can solve,
so there they refute nothing. Their proofs (docs/bounds/b1.md, b2.md, steps 1–6) give more, for *every*
segment length R ≥ 1 and every M (the regimes M ≥ 2d², M ≥ 4d² enter only at step 6's simplification):

- segments of R I/Os: Q ≥ R·(h − 1), h the number of segments (step 1);
- one segment computes at most F(M + R) roots (B1) or products (B2), where the segment budget is
  B = M + R and the maximum of the convex per-segment count over x ∈ [0, B] sits at an endpoint:
  F₁(B) = max(B²/(4d²), B) (B1 step 5), F₂(B) = max(B²/(8d), d·B) (B2 step 5);
- every root (product) is computed in some segment, so h ≥ ⌈N²/F₁⌉ (h ≥ ⌈N²d/F₂⌉).

Hence the *segment forms* (derived here, docs/bounds/small-forms.md)::

    b1.segment(N, d, M) = max_{R ≥ 1} R·(⌈N² / F₁(M + R)⌉ − 1)
    b2.segment(N, d, M) = max_{R ≥ 1} R·(⌈N²d / F₂(M + R)⌉ − 1)

(the maximum is over R ≤ N²d·… where the ceiling drops to 1; :func:`segment_form` scans R up to that point).
At R = M each is ≥ its closed form wherever the closed form's regime holds (claims ``pebbling.b1.small_implies``,
``pebbling.b2.small_implies``), and the trivial bound's small form is itself (inputs + outputs).

Which hold in the partial-computation game (PRBP): the trivial bound (any algorithm) and B1 (its property P2
admits partial-sum aggregation, docs/bounds/b1.md); B2's page makes no such statement, so it is not applied
to PRBP rows.

>>> segment_form(8, 1, 4, "b1")  # N = 8, d = 1, M = 4: R = 3, F₁(7) = 49/4, 3·(⌈64·4/49⌉ − 1) = 15
15
>>> evaluate(2, 1, 3)["trivial.small"], evaluate(2, 1, 3)["b1.segment"]
(8, 0)
"""

from __future__ import annotations

from fractions import Fraction
from math import ceil

PRBP_OK = frozenset({"trivial.4Nd", "sy.thm4.8.explicit", "constants.b1", "constants.b3", "constants.bs"})


def holds_in_prbp(bound_id: str) -> bool:
    """Whether a catalog bound's CDAG assumption admits partial-sum aggregation (its page says so: B1, B3,
    BS; the trivial bound and Saha–Ye Thm 4.8 are about any algorithm)."""
    return bound_id in PRBP_OK


def F(kind: str, d: int, B: int) -> Fraction:
    """Most roots (``"b1"``) or products (``"b2"``) computed in one segment of budget B = M + R."""
    if kind == "b1":
        return max(Fraction(B * B, 4 * d * d), Fraction(B))
    if kind == "b2":
        return max(Fraction(B * B, 8 * d), Fraction(d * B))
    raise ValueError(kind)


def segment_form(N: int, d: int, M: int, kind: str, *, planted: Fraction = Fraction(1)) -> int:
    """max over R ≥ 1 of R·(⌈count/F(M + R)⌉ − 1) (module docstring); ``planted`` divides F (a deliberately
    wrong form for the refutation test: planted > 1 claims fewer computations per segment than proved)."""
    count = N * N if kind == "b1" else N * N * d
    best = 0
    R = 1
    while True:
        segs = ceil(Fraction(count) / (F(kind, d, M + R) / planted))
        if segs <= 1:
            break
        best = max(best, R * (segs - 1))
        R += 1
    return best


def evaluate(N: int, d: int, M: int, *, game: str = "recompute") -> dict[str, int]:
    """The small forms that apply to attention (N, d) with M red pebbles in ``game``."""
    out = {"trivial.small": 4 * N * d, "b1.segment": segment_form(N, d, M, "b1")}
    if game != "prbp":
        out["b2.segment"] = segment_form(N, d, M, "b2")
    return out
