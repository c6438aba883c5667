"""z3 checks of the small (segment) forms of B1 and B2 used by the pebbling benchmark (docs/bounds/small-forms.md).

Each claim is one algebraic step of the derivation on that page (``provenance`` names the step):

- (the per-segment maxima F₁(B) = max(B²/(4d²), B) and F₂(B) = max(B²/(8d), d·B), for every segment budget B
  and no regime, are the existing claims ``constants.b1.endpoint`` and ``constants.b2.endpoint``;)
- ``pebbling.b1.small_implies`` / ``pebbling.b2.small_implies``: at R = M, wherever the closed form's regime
  holds (M ≥ 2d², M ≥ 4d²), h·F(2M) ≥ N² (N²d) and Q ≥ M(h − 1) give Q ≥ the closed form: the segment form
  implies (is at least) the catalog bound there;
- ``pebbling.b1.small_form`` / ``pebbling.b2.small_form``: for every R ≥ 1, h·F(M + R) ≥ N² (N²d) and
  Q ≥ R(h − 1) give Q ≥ R·(N²/F − 1) (the form before the ceiling; the ceiling is the integrality of h);
- the same pair for Saha–Ye Lemma 3.4 (``sy.lemma3.4.small_*``, F = B²/d² + 2B), Saha–Ye Thm 4.8
  (``sy.thm4.8.small_bstar``: Lemma 4.6 with B words sent gives F = max(2B²/d², 4B); ``small_form``,
  ``small_implies``), BWD-dP (``bwd-dp.small_*``, B1's F) and BWD-SdP (``bwd-sdp.small_*``, F = max(B²/(16d²), B));
- BS and the backward small-cache bounds: ``pebbling.bs.small_rising`` (where the cubic of BS step 9 rises over
  the whole range s ≤ B its maximum is at s = B; elsewhere it is ``constants.bs.cubic``), ``pebbling.bs.small_form``
  (h·F ≥ c products, F² ≤ G, Q ≥ R(h − 1) ⇒ (Q + R)²·G ≥ R²c²: the square-root form of the count, for c = N²d and
  c = 2N²d), ``pebbling.bs.small_implies`` / ``pebbling.bwd-sdp-small.small_implies`` (R = 3M: at least the closed
  forms);
- B3: ``pebbling.b3.small_form`` (steps 8 and 12 for any R, f = 0: Q ≥ R·((16N²d² − (3M + 2R)Nd)/((M + R)² + 64d⁴)
  − 1)), ``pebbling.b3.small_implies`` (R = M: at least the closed form);
- the causal graph: ``pebbling.b1.causal.*``, ``b2.causal.*``, ``b3.causal.*``, the same with the P = N(N + 1)/2
  pairs j ≤ i in place of N² (the workload bounds B1_P, B2_P, B3_P at one head, N_q = N_kv = N).

Interface (solver/claims/__init__.py): ``CLAIMS``, ids prefixed ``pebbling.``.

>>> from attnio.solver.engine import prove
>>> prove(CLAIMS[0].hyps, CLAIMS[0].goal).status
'proved'
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.expr import maximum, minimum, sqrt
from attnio.bounds.symbols import M, N, d, sym
from attnio.solver.claims.build import BASE as _BASE
from attnio.solver.claims.build import claim
from attnio.solver.claims.types import Implication

B, R, h, Q = (sym(name, integer=False, lo=0, doc=doc) for name, doc in (
    ("pbl_B", "segment budget M + R"), ("pbl_R", "I/Os per segment"), ("pbl_h", "number of segments"),
    ("pbl_Q", "words moved by the whole calculation")))
Bs, s, Fs, G, c, S = (sym(name, integer=False, lo=0, doc=doc) for name, doc in (
    ("pbl_Bstar", "most entries of QKᵀ one epoch computes (Saha–Ye Thm 4.4)"),
    ("pbl_s", "available input words of the product faces in a segment"),
    ("pbl_F", "most products one segment completes"), ("pbl_G", "an upper bound on F²"),
    ("pbl_c", "products counted (each useful instance in one segment)"), ("pbl_S", "Σ_t T_t² (B3 step 12)")))

_DOC = "docs/bounds/small-forms.md"
F1 = maximum(B * B / (4 * d * d), B)
F2 = maximum(B * B / (8 * d), d * B)
F_SY34 = B * B / (d * d) + 2 * B
F_SY48 = maximum(2 * B * B / (d * d), 4 * B)
F_SDP = maximum(B * B / (16 * d * d), B)
_SEG = (R >= 1, B >= M + R, B <= M + R)  # B = M + R
_DOUBLE = (B >= 2 * M, B <= 2 * M)  # R = M: B = 2M
_P = N * (N + 1) / 2  # the causal graph's pairs j ≤ i (one head, N_q = N_kv = N)
K, KAPPA = M + B, 1 - B / (4 * d * d)  # BS: K = 2M + R, κ = 1 − (M + R)/(4d²) (any sign)


def _claim(id: str, statement: str, hyps, goal, step: str, *about: str) -> Implication:
    return claim(f"pebbling.{id}", statement, hyps, goal, f"{_DOC}#{step}", about=about)


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
    # Saha–Ye Lemma 3.4: one part of a B-partition meets at most B²/d² + 2B trees (Lemma 3.3's count with B for 2M)
    _claim("sy.lemma3.4.small_form", "[SY L3.4 small form] R ≥ 1, h·(B²/d² + 2B) ≥ N², Q ≥ R(h − 1) ⇒ "
           "Q ≥ R·(N²/(B²/d² + 2B) − 1)", (*_BASE, *_SEG, h * F_SY34 >= N**2, Q >= R * (h - 1)),
           Q >= R * (N**2 / F_SY34 - 1), "sy-lemma34", "sy.lemma3.4.explicit"),
    _claim("sy.lemma3.4.small_implies", "[SY L3.4 small form] M ≥ d², R = M: h·(4M²/d² + 4M) ≥ N², Q ≥ M(h − 1) ⇒ "
           "Q ≥ N²d²/(8M) − M", (*_BASE, M >= d**2, *_DOUBLE, h * F_SY34 >= N**2, Q >= M * (h - 1)),
           Q >= N**2 * d**2 / (8 * M) - M, "sy-lemma34", "sy.lemma3.4.explicit"),
    # Saha–Ye Thm 4.8: an epoch of R I/Os is simulated from B = M + R words (the cache at its start and its reads)
    _claim("sy.thm4.8.small_bstar", "[SY T4.8 small form] min(d·√(B*/2), B*/4) ≤ B ⇒ B* ≤ max(2B²/d², 4B)",
           (*_BASE, minimum(d * sqrt(Bs / 2), Bs / 4) <= B), Bs <= F_SY48, "sy-thm48", "sy.thm4.8.explicit"),
    _claim("sy.thm4.8.small_form", "[SY T4.8 small form] R ≥ 1, h·max(2B²/d², 4B) ≥ N², Q ≥ R(h − 1) ⇒ "
           "Q ≥ R·(N²/max(2B²/d², 4B) − 1)", (*_BASE, *_SEG, h * F_SY48 >= N**2, Q >= R * (h - 1)),
           Q >= R * (N**2 / F_SY48 - 1), "sy-thm48", "sy.thm4.8.explicit"),
    _claim("sy.thm4.8.small_implies", "[SY T4.8 small form] R = M: h·max(8M²/d², 8M) ≥ N², Q ≥ M(h − 1) ⇒ "
           "Q ≥ min(N²d²/(8M), N²/8) − M", (*_BASE, *_DOUBLE, h * F_SY48 >= N**2, Q >= M * (h - 1)),
           Q >= minimum(N**2 * d**2 / (8 * M), N**2 / 8) - M, "sy-thm48", "sy.thm4.8.explicit"),
    # BS (and the backward small-cache bounds, whose per-segment count is BS's): the cubic's maximum over s ≤ B
    _claim("bs.small_rising", "[BS small form] 0 ≤ s ≤ B = M + R, 3κB ≤ 2K ⇒ s²(K − κs) ≤ B²(K − κB) "
           "(K = 2M + R, κ = 1 − B/(4d²), any sign: the cubic of BS step 9 is largest at s = B)",
           (*_BASE, *_SEG, s <= B, 3 * KAPPA * B <= 2 * K),
           s * s * (K - KAPPA * s) <= B * B * (K - KAPPA * B), "bs", "constants.bs"),
    _claim("bs.small_form", "[BS small form] R ≥ 1, F² ≤ G, h·F ≥ c, Q ≥ R(h − 1) ⇒ (Q + R)²·G ≥ R²c²",
           (R >= 1, Fs * Fs <= G, h * Fs >= c, Q >= R * (h - 1)), (Q + R) * (Q + R) * G >= R * R * c * c,
           "bs", "constants.bs", "backward.bwd-dp-small", "backward.bwd-sdp-small"),
    _claim("bs.small_implies", "[BS small form] M < d², R = 3M: G ≤ (5M)³/(27κ²), (Q + 3M)²G ≥ 9M²(N²d)² ⇒ "
           "Q ≥ (25/18)(1 − M/d²)N²d/√M − 3M",
           (*_BASE, M < d**2, G * 27 * (1 - M / d**2) ** 2 <= 125 * M**3,
            (Q + 3 * M) ** 2 * G >= 9 * M**2 * (N**2 * d) ** 2),
           Q >= Fraction(25, 18) * (1 - M / d**2) * N**2 * d / sqrt(M) - 3 * M, "bs", "constants.bs",
           "backward.bwd-dp-small"),
    _claim("bwd-sdp-small.small_implies", "[BWD-SdP-small small form] M < d², R = 3M: G ≤ (5M)³/(27κ²), "
           "(Q + 3M)²G ≥ 9M²(2N²d)² ⇒ Q ≥ (25/9)(1 − M/d²)N²d/√M − 3M",
           (*_BASE, M < d**2, G * 27 * (1 - M / d**2) ** 2 <= 125 * M**3,
            (Q + 3 * M) ** 2 * G >= 9 * M**2 * (2 * N**2 * d) ** 2),
           Q >= Fraction(25, 9) * (1 - M / d**2) * N**2 * d / sqrt(M) - 3 * M, "bs", "backward.bwd-sdp-small"),
    # B3: steps 8 (constants.b3.type2) and 12 (constants.b3.sum, f = 0) hold for every R
    _claim("b3.small_form", "[B3 small form] R ≥ 1, N²d ≤ S/(16d) + 4d³h, S ≤ h(M + R)² + (3M + 2R)Nd, "
           "Q ≥ R(h − 1) ⇒ Q ≥ R·((16N²d² − (3M + 2R)Nd)/((M + R)² + 64d⁴) − 1)",
           (*_BASE, R >= 1, N**2 * d <= S / (16 * d) + 4 * d**3 * h, S <= h * (M + R) ** 2 + (3 * M + 2 * R) * N * d,
            Q >= R * (h - 1)),
           Q >= R * ((16 * N**2 * d**2 - (3 * M + 2 * R) * N * d) / ((M + R) ** 2 + 64 * d**4) - 1),
           "b3", "constants.b3"),
    _claim("b3.small_implies", "[B3 small form] R = M: Q ≥ M·((16N²d² − 5MNd)/(4M² + 64d⁴) − 1) ⇒ "
           "Q ≥ M(4N²d² − 1.5·NMd)/(M² + 16d⁴) − M",
           (*_BASE, Q >= M * ((16 * N**2 * d**2 - 5 * M * N * d) / (4 * M**2 + 64 * d**4) - 1)),
           Q >= M * (4 * N**2 * d**2 - Fraction(3, 2) * N * M * d) / (M**2 + 16 * d**4) - M, "b3", "constants.b3"),
    # the backward bounds with dot-product counts: BWD-dP is B1's count on the dP-trees, BWD-SdP counts pairs
    _claim("bwd-dp.small_form", "[BWD-dP small form] R ≥ 1, h·F₁(M + R) ≥ N², Q ≥ R(h − 1) ⇒ Q ≥ R·(N²/F₁ − 1)",
           (*_BASE, *_SEG, h * F1 >= N**2, Q >= R * (h - 1)), Q >= R * (N**2 / F1 - 1), "backward",
           "backward.bwd-dp"),
    _claim("bwd-dp.small_implies", "[BWD-dP small form] R = M: h·max(M²/d², 2M) ≥ N², Q ≥ M(h − 1) ⇒ "
           "Q ≥ min(N²d²/M, N²/2) − M", (*_BASE, *_DOUBLE, h * F1 >= N**2, Q >= M * (h - 1)),
           Q >= minimum(N**2 * d**2 / M, N**2 / 2) - M, "backward", "backward.bwd-dp"),
    _claim("bwd-sdp.small_form", "[BWD-SdP small form] R ≥ 1, h·max(B²/(16d²), B) ≥ N², Q ≥ R(h − 1) ⇒ "
           "Q ≥ R·(N²/max(B²/(16d²), B) − 1)", (*_BASE, *_SEG, h * F_SDP >= N**2, Q >= R * (h - 1)),
           Q >= R * (N**2 / F_SDP - 1), "backward", "backward.bwd-sdp"),
    _claim("bwd-sdp.small_implies", "[BWD-SdP small form] R = M: h·max(M²/(4d²), 2M) ≥ N², Q ≥ M(h − 1) ⇒ "
           "Q ≥ min(4N²d²/M, N²/2) − M", (*_BASE, *_DOUBLE, h * F_SDP >= N**2, Q >= M * (h - 1)),
           Q >= minimum(4 * N**2 * d**2 / M, N**2 / 2) - M, "backward", "backward.bwd-sdp"),
    # the causal graph (one head, N_q = N_kv = N): B1_P, B2_P, B3_P's small forms, the P = N(N + 1)/2 pairs j ≤ i
    _claim("b1.causal.small_form", "[B1_P small form, causal] R ≥ 1, h·F₁(M + R) ≥ P, Q ≥ R(h − 1) ⇒ "
           "Q ≥ R·(P/F₁ − 1), P = N(N + 1)/2", (*_BASE, *_SEG, h * F1 >= _P, Q >= R * (h - 1)),
           Q >= R * (_P / F1 - 1), "causal", "workloads.b1.causal"),
    _claim("b1.causal.small_implies", "[B1_P small form, causal] M ≥ 2d², R = M: h·F₁(2M) ≥ P, Q ≥ M(h − 1) ⇒ "
           "Q ≥ P·d²/M − M", (*_BASE, M >= 2 * d**2, *_DOUBLE, h * F1 >= _P, Q >= M * (h - 1)),
           Q >= _P * d**2 / M - M, "causal", "workloads.b1.causal"),
    _claim("b2.causal.small_form", "[B2_P small form, causal] R ≥ 1, h·F₂(M + R) ≥ P·d, Q ≥ R(h − 1) ⇒ "
           "Q ≥ R·(P·d/F₂ − 1)", (*_BASE, *_SEG, h * F2 >= _P * d, Q >= R * (h - 1)),
           Q >= R * (_P * d / F2 - 1), "causal", "workloads.b2.causal"),
    _claim("b2.causal.small_implies", "[B2_P small form, causal] M ≥ 4d², R = M: h·F₂(2M) ≥ P·d, Q ≥ M(h − 1) ⇒ "
           "Q ≥ 2P·d²/M − M", (*_BASE, M >= 4 * d**2, *_DOUBLE, h * F2 >= _P * d, Q >= M * (h - 1)),
           Q >= 2 * _P * d**2 / M - M, "causal", "workloads.b2.causal"),
    _claim("b3.causal.small_form", "[B3_P small form, causal] R ≥ 1, P·d ≤ S/(16d) + 4d³h, S ≤ h(M + R)² + (3M + 2R)L, "
           "Q ≥ R(h − 1) ⇒ Q ≥ R·((16P·d² − (3M + 2R)L)/((M + R)² + 64d⁴) − 1), L = Nd",
           (*_BASE, R >= 1, _P * d <= S / (16 * d) + 4 * d**3 * h, S <= h * (M + R) ** 2 + (3 * M + 2 * R) * N * d,
            Q >= R * (h - 1)),
           Q >= R * ((16 * _P * d**2 - (3 * M + 2 * R) * N * d) / ((M + R) ** 2 + 64 * d**4) - 1),
           "causal", "workloads.b3.causal"),
    _claim("b3.causal.small_implies", "[B3_P small form, causal] R = M: Q ≥ M·((16P·d² − 5M·L)/(4M² + 64d⁴) − 1) ⇒ "
           "Q ≥ M(4P·d² − 1.5·M·L)/(M² + 16d⁴) − M, L = Nd",
           (*_BASE, Q >= M * ((16 * _P * d**2 - 5 * M * N * d) / (4 * M**2 + 64 * d**4) - 1)),
           Q >= M * (4 * _P * d**2 - Fraction(3, 2) * M * N * d) / (M**2 + 16 * d**4) - M, "causal",
           "workloads.b3.causal"),
]
