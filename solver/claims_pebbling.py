"""z3 checks of the small (segment) forms of B1 and B2 used by the pebbling benchmark (docs/bounds/small-forms.md).

Each claim is one algebraic step of the derivation on that page (``provenance`` names the step):

- (the per-segment maxima F₁(B) = max(B²/(4d²), B) and F₂(B) = max(B²/(8d), d·B), for every segment budget B
  and no regime, are the existing claims ``constants.b1.endpoint`` and ``constants.b2.endpoint``;)
- ``pebbling.b1.small_implies`` / ``pebbling.b2.small_implies``: at R = M, wherever the closed form's regime
  holds (M ≥ 2d², M ≥ 4d²), h·F(2M) ≥ N² (N²d) and Q ≥ M(h − 1) give Q ≥ the closed form: the segment form
  implies (is at least) the catalog bound there;
- ``pebbling.b1.small_form`` / ``pebbling.b2.small_form``: for every R ≥ 1, h·F(M + R) ≥ N² (N²d) and
  Q ≥ R(h − 1) give Q ≥ R·(N²/F − 1) (the form before the ceiling; the ceiling is the integrality of h).

Interface (solver/claims.py): ``CLAIMS``, ids prefixed ``pebbling.``.

>>> from attnio.solver.engine import prove
>>> prove(CLAIMS[0].hyps, CLAIMS[0].goal).status
'proved'
"""

from __future__ import annotations

from attnio.bounds.expr import maximum
from attnio.bounds.symbols import M, N, d, sym
from attnio.solver.claim_types import Implication

B, R, h, Q = (sym(name, integer=False, lo=0, doc=doc) for name, doc in (
    ("pbl_B", "segment budget M + R"), ("pbl_R", "I/Os per segment"), ("pbl_h", "number of segments"),
    ("pbl_Q", "words moved by the whole calculation")))

_BASE = (d >= 1, N >= 1, M >= 1)
_DOC = "docs/bounds/small-forms.md"
F1 = maximum(B * B / (4 * d * d), B)
F2 = maximum(B * B / (8 * d), d * B)


def _claim(id: str, statement: str, hyps, goal, step: str, about: str) -> Implication:
    return Implication(f"pebbling.{id}", "derivation", statement, tuple(hyps), goal, provenance=f"{_DOC}#{step}",
                       about=(about,))


CLAIMS: list[Implication] = [
    _claim("b1.small_form", "[B1 small form] R ≥ 1, h·F₁(M + R) ≥ N², Q ≥ R(h − 1) ⇒ Q ≥ R·(N²/F₁(M + R) − 1)",
           (*_BASE, R >= 1, B >= M + R, B <= M + R, h * F1 >= N**2, Q >= R * (h - 1)),
           Q >= R * (N**2 / F1 - 1), "step-2", "constants.b1"),
    _claim("b2.small_form", "[B2 small form] R ≥ 1, h·F₂(M + R) ≥ N²d, Q ≥ R(h − 1) ⇒ Q ≥ R·(N²d/F₂(M + R) − 1)",
           (*_BASE, R >= 1, B >= M + R, B <= M + R, h * F2 >= N**2 * d, Q >= R * (h - 1)),
           Q >= R * (N**2 * d / F2 - 1), "step-2", "constants.b2"),
    _claim("b1.small_implies", "[B1 small form] M ≥ 2d², R = M: h·F₁(2M) ≥ N², Q ≥ M(h − 1) ⇒ Q ≥ N²d²/M − M",
           (*_BASE, M >= 2 * d**2, B >= 2 * M, B <= 2 * M, h * F1 >= N**2, Q >= M * (h - 1)),
           Q >= N**2 * d**2 / M - M, "step-3", "constants.b1"),
    _claim("b2.small_implies", "[B2 small form] M ≥ 4d², R = M: h·F₂(2M) ≥ N²d, Q ≥ M(h − 1) ⇒ Q ≥ 2N²d²/M − M",
           (*_BASE, M >= 4 * d**2, B >= 2 * M, B <= 2 * M, h * F2 >= N**2 * d, Q >= M * (h - 1)),
           Q >= 2 * N**2 * d**2 / M - M, "step-3", "constants.b2"),
]
