"""z3 checks of every algebraic step of the derived lower bounds B1, B2, B3 (docs/bounds/b1.md, b2.md, b3.md),
of their consistency with every exact cost formula, and of the B3 ↔ flash2 gap.

A claim is plain data: hypotheses and a conclusion, written with :mod:`attnio.bounds.expr` relations (and
:mod:`attnio.solver.logic` connectives) over symbols from :func:`bounds.symbols.sym`; the translator
(:mod:`attnio.solver.translator`) turns them into z3 terms. A claim is *proved* when z3 answers ``unsat`` for
``hypotheses ∧ facts ∧ ¬conclusion`` (the translator's facts are true facts about floors, ceilings and square
roots), and every side condition (positive denominators, non-negative square-root arguments) is itself proved
from the hypotheses. ``unknown`` is never a pass.

Four families, gathered by :func:`all_claims` (ids ``constants.*``):

- :data:`STEP_CLAIMS`: the algebraic steps of the proofs (AM–GM and Loomis–Whitney maximisations, endpoint
  analysis, the slot-accounting square expansion, the final rearrangements, the d_k ≠ d_v maximisation). Each
  names the numbered step of its docs page that it checks (``provenance``). The combinatorial steps (segments,
  type-1/type-2 pairs, Loomis–Whitney itself, slot amortisation) are argued in prose there, not here.
- :func:`relax_claims` and :func:`consistency_claims`: each explicit attention bound of
  :mod:`attnio.bounds.constants` (B1, B2, B3) ≤ the exact cost of every algorithm in :data:`bounds.costs.FORMULAS`
  (d_v = d), as a two-link chain per cache size (comment above :data:`LEADING`). Generated from FORMULAS, so
  formulas added later are covered; approximate algorithms are excluded (:data:`NOT_STANDARD_CDAG`).
- :func:`gap_claims`: flash2's count ≤ B3 × an explicit factor that tends to 1, and ≤ 2·B2 × a similar
  factor, on :data:`GAP_REGIME` (docs/constants.md#gap).

Interface (solver/claims/__init__.py): this module exposes ``CLAIMS`` (ids prefixed ``constants.``), gathered by
:func:`solver.claims.all_claims`.

>>> from attnio.solver.claims import by_id
>>> from attnio.solver.verify import verify_claim
>>> verify_claim(by_id("constants.b1.amgm")).status
'proved'
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from attnio.bounds.expr import Expr, Rel, ceil, eq, maximum, sqrt, to_text
from attnio.bounds.symbols import M, N, d, dv, nonneg_real, sym
from attnio.bounds.types import Bound
from attnio.solver.claims.build import BASE as _BASE
from attnio.solver.claims.build import Link, chain, claim, relax, to_cost
from attnio.solver.claims.build import sq as _sq
from attnio.solver.claims.types import Implication
from attnio.solver.logic import Formula

# auxiliary symbols of the proofs (real, non-negative); names prefixed so they clash with nothing else -------
x = nonneg_real("seg_x", "type-2 pairs charged in a segment")
B = nonneg_real("seg_B", "segment budget M + R (red words at the start plus I/Os in the segment)")
T = nonneg_real("seg_T", "face budget of a segment")
R = nonneg_real("seg_R", "I/Os per segment")
I_rows = nonneg_real("seg_I", "|I_t|: rows whose whole Q row is available")
J_cols = nonneg_real("seg_J", "|J_t|: columns whose whole K row is available")
u = nonneg_real("seg_u", "Q face words d·|I_t|")
k = nonneg_real("seg_k", "K face words d·|J_t|")
v = nonneg_real("seg_v", "V face words available with j in J_t")
beta = nonneg_real("seg_beta", "output slots (i, l') touched in the segment")
Y = nonneg_real("seg_Y", "type-1 PV products in a segment")
P4 = nonneg_real("seg_P", "the product u·k·v·β")
h = nonneg_real("seg_h", "number of segments")
Q = nonneg_real("seg_Q", "words moved (I/Os) by the whole computation")
S = nonneg_real("seg_S", "Σ_t T_t², the sum of squared face budgets")
f = nonneg_real("seg_f", "max fresh slots completed inside one segment")
U = nonneg_real("seg_U", "partial-sum (slot) reads and writes in a segment")
w = nonneg_real("seg_w", "z_t + U_t ≥ 0, the slot excess shifted to be non-negative")
Z = nonneg_real("seg_Z", "Σ_t (z_t + U_t)")
SU = nonneg_real("seg_SU", "Σ_t U_t")
r = nonneg_real("seg_r", "d_v/d_k")
p = nonneg_real("seg_p", "u + β")
q = nonneg_real("seg_q", "k + v")
X1 = nonneg_real("seg_X1", "u·β")
X2 = nonneg_real("seg_X2", "k·v")
c = nonneg_real("seg_c", "R/M")
aQ = nonneg_real("seg_aQ", "Q words available in a segment (red at its start or read in it)")
aK = nonneg_real("seg_aK", "K words available in a segment")
rr = nonneg_real("seg_reads", "reads in a segment")
ww = nonneg_real("seg_writes", "writes in a segment")
# κ = 1 − M/d² ∈ [0, 1) where BS uses it: the symbol's domain must reach below 1 (sym's default lo is 1, under which
# bs.combine and bs.cubic were proved only for κ ≥ 1).
kap = sym("seg_kappa", integer=False, lo=0, doc="κ = 1 − (M + R)/(4d²), the share of the pair face not spent on complete pairs")

def _claim(
    id: str,
    bound: str,
    statement: str,
    hyps: Iterable[Formula],
    concl: Formula,
    doc: str,
    kind: str = "derivation",
    about: tuple[str, ...] | None = None,
) -> Implication:
    """An :class:`~solver.claims.Implication` with id ``constants.<id>``; ``provenance`` names the docs step.

    ``about``: the catalog bounds the claim is about; by default the bound its label names (``B1`` ->
    ``constants.b1``, see :data:`LABELS`)."""
    if about is None:
        about = (LABELS[bound],) if bound in LABELS else ()
    return claim(f"constants.{id}", statement, hyps, concl, doc, label=bound, kind=kind, about=about)


# The label of each derived bound in claim statements -> its catalog id.
LABELS = {
    "B1": "constants.b1",
    "B2": "constants.b2",
    "B3": "constants.b3",
    "BS": "constants.bs",
    "BSPV": "constants.bspv",
    "BSPV-near": "constants.bspv-near",
}


# B3 step 13, middle of the chain: the number of segments h after S, f and ΣU are eliminated (R = M).
B3_SEGMENTS: Rel = 16 * N**2 * d**2 <= h * (4 * M**2 + 64 * d**4) + 6 * M * N * d

# B1 ------------------------------------------------------------------------------------------------------
_B1 = "docs/bounds/b1.md"
_B2 = "docs/bounds/b2.md"
_B3 = "docs/bounds/b3.md"
_BS = "docs/bounds/bs.md"

STEP_CLAIMS: list[Implication] = [
    _claim(
        "b1.amgm",
        "B1",
        "AM–GM: d|I| + d|J| ≤ B − x ⇒ |I|·|J| ≤ ((B − x)/(2d))² (type-1 roots in a segment)",
        (d >= 1, x <= B, d * I_rows + d * J_cols <= B - x),
        I_rows * J_cols <= _sq((B - x) / (2 * d)),
        _B1 + "#step-4",
    ),
    _claim(
        "b1.endpoint",
        "B1",
        "convexity in x: max over x ∈ [0, B] of ((B − x)/(2d))² + x is at an endpoint: ≤ max(B²/(4d²), B)",
        (d >= 1, x <= B),
        _sq((B - x) / (2 * d)) + x <= maximum(_sq(B) / (4 * d**2), B),
        _B1 + "#step-5",
    ),
    _claim(
        "b1.segment_max",
        "B1",
        "with R = M (B = 2M) and M ≥ 2d²: ((2M − x)/(2d))² + x ≤ M²/d² for every x ∈ [0, 2M]",
        (*_BASE, M >= 2 * d**2, x <= 2 * M),
        _sq((2 * M - x) / (2 * d)) + x <= M**2 / d**2,
        _B1 + "#step-6",
    ),
    _claim(
        "b1.rearrange",
        "B1",
        "N² roots ≤ h·M²/d² and Q ≥ M(h − 1) ⇒ Q ≥ N²d²/M − M",
        (*_BASE, N**2 <= h * M**2 / d**2, Q >= M * (h - 1)),
        Q >= N**2 * d**2 / M - M,
        _B1 + "#step-7",
    ),
    _claim(
        "b1.best_R",
        "B1",
        "with R = cM the leading constant 4c/(1+c)² ≤ 1: R = M is the best choice",
        (c > 0,),
        4 * c / _sq(1 + c) <= 1,
        _B1 + "#step-8",
    ),
    # B2 --------------------------------------------------------------------------------------------------
    _claim(
        "b2.maximise",
        "B2",
        "u·v/d ≤ T²/(8d) when u + k + v ≤ T and v ≤ k (type-1 PV products in a segment)",
        (d >= 1, u + k + v <= T, v <= k),
        u * v / d <= _sq(T) / (8 * d),
        _B2 + "#step-4",
    ),
    _claim(
        "b2.endpoint",
        "B2",
        "convexity in x: max over x ∈ [0, B] of (B − x)²/(8d) + d·x is ≤ max(B²/(8d), d·B)",
        (d >= 1, x <= B),
        _sq(B - x) / (8 * d) + d * x <= maximum(_sq(B) / (8 * d), d * B),
        _B2 + "#step-5",
    ),
    _claim(
        "b2.segment_max",
        "B2",
        "with R = M and M ≥ 4d²: (2M − x)²/(8d) + d·x ≤ M²/(2d) for every x ∈ [0, 2M]",
        (*_BASE, M >= 4 * d**2, x <= 2 * M),
        _sq(2 * M - x) / (8 * d) + d * x <= M**2 / (2 * d),
        _B2 + "#step-6",
    ),
    _claim(
        "b2.rearrange",
        "B2",
        "N²d products ≤ h·M²/(2d) and Q ≥ M(h − 1) ⇒ Q ≥ 2N²d²/M − M",
        (*_BASE, N**2 * d <= h * M**2 / (2 * d), Q >= M * (h - 1)),
        Q >= 2 * N**2 * d**2 / M - M,
        _B2 + "#step-7",
    ),
    # B3 --------------------------------------------------------------------------------------------------
    _claim(
        "b3.amgm4",
        "B3",
        "four-face AM–GM: u + k + v + β ≤ T ⇒ u·k·v·β ≤ (T/4)⁴",
        (u + k + v + beta <= T,),
        u * k * v * beta <= T**4 / 256,
        _B3 + "#step-6",
    ),
    _claim(
        "b3.lw_to_T2",
        "B3",
        "Loomis–Whitney Y² ≤ (uk/d²)·v·β with u·k·v·β ≤ (T/4)⁴ ⇒ Y ≤ T²/(16d)",
        (d >= 1, _sq(Y) * d**2 <= P4, P4 <= T**4 / 256),
        Y <= _sq(T) / (16 * d),
        _B3 + "#step-7",
    ),
    _claim(
        "b3.type2",
        "B3",
        "type-2 pairs: (T − x)²/(16d) + d·x ≤ T²/(16d) + 4d³ for x ∈ [0, T]",
        (d >= 1, x <= T),
        _sq(T - x) / (16 * d) + d * x <= _sq(T) / (16 * d) + 4 * d**3,
        _B3 + "#step-8",
    ),
    _claim(
        "b3.square_term",
        "B3",
        "per segment, z = w − U ∈ [−U, M + f], 0 ≤ U ≤ R: (M+R+z)² ≤ (M+R)² + (3M+2R+f)·z + (M+R+f)·U",
        (M >= 1, U <= R, w <= M + f + U),
        _sq(M + R + (w - U)) <= _sq(M + R) + (3 * M + 2 * R + f) * (w - U) + (M + R + f) * U,
        _B3 + "#step-11",
    ),
    _claim(
        "b3.sum",
        "B3",
        "Σ_t: S ≤ h(M+R)² + (3M+2R+f)Σz + (M+R+f)ΣU and Σz ≤ Nd − ΣU/2 ⇒ S ≤ h(M+R)² + (3M+2R+f)Nd + (f − M)ΣU/2",
        (
            *_BASE,
            S <= h * _sq(M + R) + (3 * M + 2 * R + f) * (Z - SU) + (M + R + f) * SU,
            Z - SU <= N * d - SU / 2,
        ),
        S <= h * _sq(M + R) + (3 * M + 2 * R + f) * N * d + (f - M) * SU / 2,
        _B3 + "#step-12",
    ),
    # step 13 in two links (cvc5 did not decide the one-step form within its limits): eliminate S, f and ΣU, then
    # solve for Q with the denominator M² + 16d⁴
    _claim(
        "b3.eliminate",
        "B3",
        "R = M: N²d ≤ S/(16d) + 4d³h, S ≤ h(2M)² + (5M + f)Nd + (f − M)ΣU/2, f ≤ M "
        "⇒ 16N²d² ≤ h(4M² + 64d⁴) + 6·NMd (first link of step 13)",
        (
            *_BASE,
            N**2 * d <= S / (16 * d) + 4 * d**3 * h,
            S <= h * _sq(2 * M) + (5 * M + f) * N * d + (f - M) * SU / 2,
            f <= M,
        ),
        B3_SEGMENTS,
        _B3 + "#step-13",
    ),
    _claim(
        "b3.rearrange",
        "B3",
        "16N²d² ≤ h(4M² + 64d⁴) + 6·NMd (constants.b3.eliminate), Q ≥ M(h − 1) "
        "⇒ Q ≥ M(4N²d² − 1.5·NMd)/(M² + 16d⁴) − M",
        (*_BASE, B3_SEGMENTS, Q >= M * (h - 1)),
        Q >= M * (4 * N**2 * d**2 - Fraction(3, 2) * N * M * d) / (M**2 + 16 * d**4) - M,
        _B3 + "#step-13",
    ),
    _claim(
        "b3.best_R",
        "B3",
        "with R = cM the leading constant 16c/(1+c)² ≤ 4: R = M is the best choice",
        (c > 0,),
        16 * c / _sq(1 + c) <= 4,
        _B3 + "#step-14",
    ),
    # BS, the small cache (docs/bounds/bs.md) ----------------------------------------------------------------
    _claim(
        "bs.pairs",
        "BS",
        "complete pairs: d|I| ≤ a_Q, d|J| ≤ a_K, s = a_Q + a_K ≤ M + R ⇒ |I|·|J| ≤ s²/(4d²) ≤ s(M + R)/(4d²)",
        (d >= 1, d * I_rows <= aQ, d * J_cols <= aK, aQ + aK <= M + R),
        I_rows * J_cols <= (aQ + aK) * (M + R) / (4 * d**2),
        _BS + "#step-7",
    ),
    _claim(
        "bs.third",
        "BS",
        "pair face: x + |I||J| + M + w ≤ (2M + R) − κ·s with s = a_Q + a_K, κ = 1 − (M + R)/(4d²), given "
        "s + x ≤ M + r, r + w ≤ R and |I||J| ≤ s(M + R)/(4d²)",
        (d >= 1, M >= 1, aQ + aK + x <= M + rr, rr + ww <= R, X1 <= (aQ + aK) * (M + R) / (4 * d**2)),
        x + X1 + M + ww <= 2 * M + R - (1 - (M + R) / (4 * d**2)) * (aQ + aK),
        _BS + "#step-8",
    ),
    _claim(
        "bs.amgm",
        "BS",
        "AM–GM on the two input faces: a_Q·a_K ≤ (a_Q + a_K)²/4",
        (),
        aQ * aK <= _sq(aQ + aK) / 4,
        _BS + "#step-9",
    ),
    _claim(
        "bs.combine",
        "BS",
        "Loomis–Whitney Y² ≤ a_Q·a_K·F with a_Q·a_K ≤ s²/4 and 0 ≤ F ≤ K − κs ⇒ Y² ≤ (s²/4)(K − κs)",
        (_sq(Y) <= P4 * T, P4 <= _sq(p) / 4, T <= B - kap * p),
        _sq(Y) <= _sq(p) / 4 * (B - kap * p),
        _BS + "#step-9",
    ),
    _claim(
        "bs.cubic",
        "BS",
        "cubic maximum: 0 < κ, Y² ≤ (s²/4)(K − κs) ⇒ 27κ²Y² ≤ K³ (the maximum over s is at s = 2K/(3κ))",
        (kap > 0, _sq(Y) <= _sq(p) / 4 * (B - kap * p)),
        27 * _sq(kap) * _sq(Y) <= B**3,
        _BS + "#step-10",
    ),
    _claim(
        "bs.segment",
        "BS",
        "R = 3M (K = 5M, κ = 1 − M/d²), M ≤ d²: 27κ²Y² ≤ (5M)³ ⇒ κ·Y ≤ (54/25)·M√M (as 125/27 ≤ (54/25)²)",
        (*_BASE, M <= d**2, 27 * _sq(1 - M / d**2) * _sq(Y) <= (5 * M) ** 3),
        (1 - M / d**2) * Y <= Fraction(54, 25) * M * sqrt(M),
        _BS + "#step-11",
    ),
    _claim(
        "bs.rearrange",
        "BS",
        "N²d products: κ·N²d ≤ h·(54/25)·M√M and Q ≥ 3M(h − 1) ⇒ Q ≥ (25/18)(1 − M/d²)N²d/√M − 3M",
        (
            *_BASE,
            M <= d**2,
            (1 - M / d**2) * N**2 * d <= h * Fraction(54, 25) * M * sqrt(M),
            Q >= 3 * M * (h - 1),
        ),
        Q >= Fraction(25, 18) * (1 - M / d**2) * N**2 * d / sqrt(M) - 3 * M,
        _BS + "#step-12",
    ),
    _claim(
        "bs.best_R",
        "BS",
        "with R = cM the leading coefficient 3√3·c/(2 + c)^1.5 is ≤ √2: 27c² ≤ 2(2 + c)³ (equality at c = 4)",
        (c > 0,),
        27 * _sq(c) <= 2 * (2 + c) ** 3,
        _BS + "#step-13",
    ),
    # d_k ≠ d_v (docs/constants.md#dv) --------------------------------------------------------------------
    _claim(
        "dv.narrow.pair",
        "dv",
        "d_v ≤ d_k (r = d_v/d_k ≤ 1): β ≤ r·u ⇒ u·β·(1+r)² ≤ r·(u + β)² (and likewise k·v)",
        (r > 0, r <= 1, beta <= r * u),
        u * beta * _sq(1 + r) <= r * _sq(u + beta),
        "docs/constants.md#step-dv-2",
        about=("constants.dv.narrow",),
    ),
    _claim(
        "dv.narrow.combine",
        "dv",
        "u·β ≤ r(u+β)²/(1+r)², k·v ≤ r(k+v)²/(1+r)², (u+β)(k+v) ≤ T²/4 ⇒ u·k·v·β ≤ r²T⁴/(16(1+r)⁴)",
        (
            r > 0,
            X1 * _sq(1 + r) <= r * _sq(p),
            X2 * _sq(1 + r) <= r * _sq(q),
            4 * p * q <= _sq(T),
        ),
        16 * X1 * X2 * (1 + r) ** 4 <= _sq(r) * T**4,
        "docs/constants.md#step-dv-3",
        about=("constants.dv.narrow",),
    ),
    _claim(
        "dv.narrow.pq",
        "dv",
        "p + q ≤ T ⇒ p·q ≤ T²/4",
        (p + q <= T,),
        4 * p * q <= _sq(T),
        "docs/constants.md#step-dv-3",
        about=("constants.dv.narrow",),
    ),
    _claim(
        "dv.narrow.leading",
        "dv",
        "per-segment max with T = 2M, r = d_v/d: N²·d_v ≤ h·d_v·(2M)²/(4(d + d_v)²) ⇒ h·M ≥ N²(d + d_v)²/M",
        (*_BASE, dv >= 1, N**2 * dv <= h * dv * _sq(2 * M) / (4 * _sq(d + dv))),
        h * M >= N**2 * _sq(d + dv) / M,
        "docs/constants.md#step-dv-4",
        about=("constants.dv.narrow",),
    ),
    _claim(
        "dv.wide.leading",
        "dv",
        "d_v ≥ d_k: per-segment max (2M)²/(16d) (b3.amgm4); N²·d_v ≤ h·M²/(4d) ⇒ h·M ≥ 4N²·d·d_v/M",
        (*_BASE, dv >= 1, N**2 * dv <= h * M**2 / (4 * d)),
        h * M >= 4 * N**2 * d * dv / M,
        "docs/constants.md#step-dv-4",
        about=("constants.dv.wide",),
    ),
]


# consistency and gap -------------------------------------------------------------------------------------

# Cost formulas that are not the standard attention CDAG (approximate or algebraic algorithms): the derived
# bounds do not speak about them. Names are matched exactly; every other formula must satisfy every bound.
NOT_STANDARD_CDAG: frozenset[str] = frozenset()


def _is_standard(name: str) -> bool:
    return name not in NOT_STANDARD_CDAG and not name.startswith(("approx", "poly"))


# The consistency claims are split so that z3 decides each quickly (one claim with the whole B3 rational
# function, or with both cache sizes at once, runs out of budget). The chain, per bound B with leading constant c_B:
#   relax.large:  B ≤ c_B·N²d²/M  on regime(B) ∧ M ≥ 8d²
#   relax.small:  B ≤ N²/2        on regime(B) ∧ M ≤ 8d²
#   X.large:      c_B·N²d²/M ≤ cost_X  on regime(B) ∧ valid(X) ∧ M ≥ 8d²
#   small.X:      N²/2 ≤ cost_X        on valid(X) ∧ M ≤ 8d²   (shared by B1, B2, B3)
# (dropping the −M slack in the middle makes every link a second or less for z3; with it, several took 15 s)
# so B ≤ cost_X on regime(B) ∧ valid(X): docs/constants.md#consistency.
LEADING = {"constants.b1": 1, "constants.b2": 2, "constants.b3": 4}


def _at_dv_d(rels: Iterable[Rel]) -> tuple[Rel, ...]:
    """A regime at d_v = d, as the claims state it (their formulas are ``with_dv_equal_d``): the relation d_v = d
    of B2's and B3's regimes becomes d = d and is dropped, so the claims read over (N, d, M) as before."""
    from attnio.bounds.constants import DV_EQ_D

    return tuple(r for r in rels if r != DV_EQ_D)


def _leading() -> list[tuple[Bound, str, int]]:
    """(bound, short name, leading constant c_B) of each of B1, B2, B3, in the catalog's order."""
    from attnio.bounds.constants import attention_lower_bounds

    return [(b, b.id.removeprefix("constants."), LEADING[b.id]) for b in attention_lower_bounds()]


def relax_claims() -> list[Implication]:
    """First links: each of B1, B2, B3 ≤ its leading form where M ≥ 8d² and ≤ N²/2 where M ≤ 8d² (their regimes at
    d_v = d, :func:`_at_dv_d`)."""
    return chain([
        Link(f"constants.{short}.relax.{cache}",
             f"[{short.upper()}] {short.upper()} ≤ {text} where {where} (first link of {short.upper()} ≤ every exact cost)",
             (*_BASE, *_at_dv_d(b.regime), side), b.expr <= lead, (b.id,))
        for b, short, cb in _leading()
        for cache, lead, text, where, side in (
            ("large", cb * N**2 * d**2 / M, f"{cb}·N²d²/M", "M ≥ 8d²", M >= 8 * d**2),
            ("small", N**2 / 2, "N²/2", "M ≤ 8d²", M <= 8 * d**2),
        )
    ], "docs/constants.md#consistency", kind="derivation")


# Schedules that write S (N² words) at every M: their large-cache link goes through N²/2 instead of c_B·N²d²/M
# (``consistency.large.half``: 4N²d²/M ≤ N²/2 where M ≥ 8d², then ``consistency.large.le.X``: N²/2 ≤ cost_X).
# For square_tiling-io the direct form 4N²d²/M ≤ cost took z3 about 50 s (its blocks nest floors of √M);
# this way each link takes under a second, and cvc5 re-proves both.
VIA_HALF: frozenset[str] = frozenset({"square_tiling-io"})


def consistency_claims() -> list[Implication]:
    """Second links: every exact cost ≥ the relaxed bounds (see the chain above), with d_v = d."""
    from attnio.bounds.costs import FORMULAS

    large, small = M >= 8 * d**2, M <= 8 * d**2
    out: list[Link] = [
        Link("constants.consistency.large.half",
             f"{max(LEADING.values())}·N²d²/M ≤ N²/2 where M ≥ 8d² (the middle link for the schedules that write S: "
             "c_B·N²d²/M ≤ N²/2 ≤ their cost, every c_B ≤ 4)",
             (*_BASE, large), max(LEADING.values()) * N**2 * d**2 / M <= N**2 / 2, tuple(LEADING)),
    ]
    for name in sorted(FORMULAS):
        if not _is_standard(name):
            continue
        fm = FORMULAS[name].with_dv_equal_d()
        out.append(to_cost(f"constants.consistency.small.le.{name}", name, fm, N**2 / 2,
                           f"N²/2 ≤ exact cost of {name} where M ≤ 8d² (d_v = d)", extra=(small,)))
        if name in VIA_HALF:
            out.append(to_cost(f"constants.consistency.large.le.{name}", name, fm, N**2 / 2,
                               f"N²/2 ≤ exact cost of {name} where M ≥ 8d² (d_v = d; it writes S; with "
                               "consistency.large.half and the relax.large links: B1, B2, B3 ≤ it)",
                               extra=(large,), covers=tuple(LEADING)))
            continue
        out += [to_cost(f"constants.consistency.{short}.le.{name}.large", name, fm, cb * N**2 * d**2 / M,
                        f"{cb}·N²d²/M ≤ exact cost of {name} on the regime of {short.upper()} where M ≥ 8d² (d_v = d)",
                        base=(*_BASE, *_at_dv_d(b.regime)), extra=(large,), covers=(b.id,))
                for b, short, cb in _leading()]
    return chain(out, "docs/constants.md#consistency", label="consistency")


# Schedules whose count is ≥ 4N²d²/M everywhere (FlashAttention-style loops): their BS link goes through it.
VIA_LARGE: frozenset[str] = frozenset({"flash1-fit", "flash2", "flash2-square", "kv_stationary", "split_v"})


# Schedules whose BS link goes through a block-count form (cvc5 does not re-prove the direct form with √M against
# their relaxed count within its limits): name -> (middle expression, id of the first link, without "constants.").
VIA_BLOCKS: dict[str, tuple[Expr, str]] = {"flash1": (12 * N**2 * d**2 / (M + 4 * d - 1), "bs.via_flash1")}


def small_cache_consistency_claims() -> list[Implication]:
    """BS ≤ the exact cost of every standard-CDAG formula (d_v = d) where M ≤ d² and the formula runs, as a chain
    (docs/bounds/bs.md#consistency): ``bs.relax`` (BS ≤ (25/18)·N²d/√M), then one link per formula
    ((25/18)·N²d/√M ≤ cost). For ``square_tiling-io`` the link goes through its phase-2 tiles a₂, b₂ (z3 does
    not decide the direct form): cost ≥ ⌈d/b₂⌉·N² + ⌈N/a₂⌉·Nd (``phase2``), hence ≥ N²d/b₂ + N²d/a₂
    (``bs.ceil_split``; cvc5 decides the two, not the one-step form), a₂·b₂ ≤ M, and N²d/b + N²d/a ≥ 2N²d/√M
    when ab ≤ M.
    Links that read a formula's blocks assume its denominators positive, which its ``wd.<name>`` claim proves."""
    from attnio.bounds.constants import BS, BS_COEFF, BSPV, BSPV_NEAR
    from attnio.bounds.costs import FORMULAS

    shared = (BS.id, BSPV.id, BSPV_NEAR.id)  # second links that BSPV's chains use too (docs/bounds/bspv.md)
    lead = BS_COEFF * N**2 * d / sqrt(M)
    bs = (*_BASE, *BS.regime)
    out: list[Link] = [
        relax("constants.bs.relax", BS, lead, "[BS] BS ≤ (25/18)·N²d/√M where M ≤ d² (first link of BS ≤ every exact cost)",
              kind="derivation"),
        Link("constants.bs.tiles_amgm",
             "[BS] a, b ≥ 1, a·b ≤ M, io ≥ N²d/b + N²d/a ⇒ io ≥ (25/18)·N²d/√M (AM–GM: N²d/a + N²d/b ≥ 2N²d/√(ab))",
             (*_BASE, I_rows >= 1, J_cols >= 1, I_rows * J_cols <= M, Q >= N**2 * d / J_cols + N**2 * d / I_rows),
             lead <= Q, (BS.id,), kind="derivation"),
        Link("constants.bs.ceil_split",
             "[BS] a, b > 0, io ≥ ⌈d/b⌉·N² + ⌈N/a⌉·Nd ⇒ io ≥ N²d/b + N²d/a (⌈x⌉ ≥ x; the middle link of "
             "square_tiling-io's chain, at a = a₂, b = b₂)",
             (*_BASE, I_rows > 0, J_cols > 0, Q >= ceil(d / J_cols) * N**2 + ceil(N / I_rows) * N * d),
             N**2 * d / J_cols + N**2 * d / I_rows <= Q, (BS.id,), kind="derivation"),
        Link("constants.bs.via_large",
             "[BS] (25/18)·N²d/√M ≤ 4N²d²/M where M ≤ d² (the link for the FlashAttention-style schedules, whose counts "
             "are ≥ 4N²d²/M at every M)", bs, lead <= 4 * N**2 * d**2 / M, (BS.id,), kind="derivation"),
    ]
    out += [Link(f"constants.{link}",
                 f"[BS] (25/18)·N²d/√M ≤ {to_text(mid)} where M ≤ d² (the link for {name}, whose count is ≥ that: "
                 "3Nd words per block of its outer loop, N/⌈M/(4d)⌉ ≥ 4Nd/(M + 4d − 1) blocks)", bs, lead <= mid, (BS.id,),
                 kind="derivation")
            for name, (mid, link) in sorted(VIA_BLOCKS.items()) if name in FORMULAS]
    for name in sorted(FORMULAS):
        if not _is_standard(name):
            continue
        fm = FORMULAS[name].with_dv_equal_d()
        if name == "square_tiling-io":
            out += [
                to_cost(f"constants.consistency.bs.{name}.phase2", name, fm,
                        fm.blocks["G"] * N**2 + fm.blocks["T_2"] * N * d,
                        f"[consistency] {name}: cost ≥ ⌈d/b₂⌉·N² + ⌈N/a₂⌉·Nd (S read ⌈d/b₂⌉ times, V ⌈N/a₂⌉ times; "
                        "d_v = d; with bs.ceil_split: cost ≥ N²d/b₂ + N²d/a₂)", base=bs, covers=(BS.id,)),
                to_cost(f"constants.consistency.bs.{name}.tiles", name, fm, 0,
                        f"[consistency] {name}: its phase-2 tile fits, a₂·b₂ ≤ M (with bs.tiles_amgm: cost ≥ "
                        "(25/18)·N²d/√M)", base=bs, covers=shared, goal=fm.blocks["a2"] * fm.blocks["b2"] <= M),
            ]
            continue
        via = name in VIA_LARGE  # one nonlinear step fewer for z3: robust whatever claims ran before
        if name in VIA_BLOCKS:
            mid, link = VIA_BLOCKS[name]
            what = f"{to_text(mid)} ≤ exact cost of {name} where M ≤ d² (d_v = d; with bs.{link} and bs.relax: BS ≤ it)"
        elif via:
            mid = 4 * N**2 * d**2 / M
            what = f"4N²d²/M ≤ exact cost of {name} where M ≤ d² (d_v = d; with bs.via_large and bs.relax: BS ≤ it)"
        else:
            mid = lead
            what = f"(25/18)·N²d/√M ≤ exact cost of {name} where M ≤ d² (d_v = d; with bs.relax: BS ≤ it)"
        out.append(to_cost(f"constants.consistency.bs.le.{name}", name, fm, mid, f"[consistency] {what}", base=bs,
                           covers=shared if via or name in VIA_BLOCKS else (BS.id,)))
    return chain(out, "docs/bounds/bs.md#consistency")


# Gap factor between the optimal flash2 count and B3 (docs/constants.md#gap): each factor → 1 in the limit
# d → ∞, M/d² → ∞, M/(Nd) → 0.
GAP_C2 = Fraction(7, 4)  # tightest on the grid 1/4: 3/2 is refuted (tests/test_constants.py)
GAP_REGIME: tuple[Rel, ...] = (d >= 2, M >= 4 * d**2, 4 * M <= N * d, N >= 4 * d)
# flash2's count without ceilings: 2Nd + N + 2Nd·(N/a + 1) with a ≥ (M − 3d − 4)/(2d + 4).
FLASH2_UPPER: Expr = 4 * N * d + N + 4 * N**2 * d * (d + 2) / (M - 3 * d - 4)


# The gap claims with their denominators cleared by hand (cvc5 does not decide the forms with divisions within its
# limits; docs/constants.md#gap): K = 4Nd²(M − 3d − 4) > 0 on the gap regime, FLASH2_UPPER·K ≤ GAP_L,
# B3·(1 + 16d⁴/M²)·M = GAP_E3, 2·B2·M = GAP_E2, robust_gap_factor()·K = M(d + 2)(4Nd + 7M).
GAP_K: Expr = 4 * N * d**2 * (M - 3 * d - 4)
GAP_L: Expr = (4 * N * d + N) * GAP_K + 16 * N**3 * d**3 * (d + 2)
GAP_E3: Expr = 4 * N**2 * d**2 - Fraction(3, 2) * N * M * d - M**2 - 16 * d**4
GAP_E2: Expr = 4 * N**2 * d**2 - 2 * M**2


def gap_factor() -> Expr:
    """(1 + 2/d)·(1 + 16d⁴/M²)·M/(M − 3d − 4)·(1 + GAP_C2·M/(Nd))."""
    return (1 + 2 / d) * (1 + 16 * d**4 / M**2) * (M / (M - 3 * d - 4)) * (1 + GAP_C2 * M / (N * d))


def robust_gap_factor() -> Expr:
    """(1 + 2/d)·M/(M − 3d − 4)·(1 + GAP_C2·M/(Nd)): flash2 ≤ 2·B2·this."""
    return (1 + 2 / d) * (M / (M - 3 * d - 4)) * (1 + GAP_C2 * M / (N * d))


def gap_claims() -> list[Implication]:
    from attnio.bounds.constants import B2, B3
    from attnio.bounds.costs import FORMULAS

    if "flash2" not in FORMULAS:
        return []
    fm = FORMULAS["flash2"].with_dv_equal_d()
    doc = "docs/constants.md#gap"
    hyps = (*_BASE, *GAP_REGIME)
    return [
        _claim(
            "gap.flash2.upper",
            "gap",
            "flash2's exact count ≤ 4Nd + N + 4N²d(d+2)/(M − 3d − 4) on the gap regime (ceilings removed soundly)",
            (*hyps, *fm.valid),
            fm.io <= FLASH2_UPPER,
            doc,
            kind="inequality",
            about=("exact.flash2", "constants.b3", "constants.b2"),
        ),
        _claim(
            "gap.flash2.cleared",
            "gap",
            "the flash2 upper form with its denominator cleared: (4Nd + N + 4N²d(d+2)/(M − 3d − 4))·K ≤ L with "
            "K = 4Nd²(M − 3d − 4) (first link of gap.flash2.le.B3 and gap.flash2.le.2B2)",
            hyps,
            FLASH2_UPPER * GAP_K <= GAP_L,
            doc,
            kind="inequality",
            about=("exact.flash2", "constants.b3", "constants.b2"),
        ),
        _claim(
            "gap.factor.cleared",
            "gap",
            f"(1 + 2/d)·M/(M − 3d − 4)·(1 + ({GAP_C2})·M/(Nd))·K = M(d + 2)(4Nd + 7M), K = 4Nd²(M − 3d − 4) "
            "(the robust gap factor with its denominators cleared)",
            hyps,
            eq(robust_gap_factor() * GAP_K, M * (d + 2) * (4 * N * d + 4 * GAP_C2 * M)),
            doc,
            kind="identity",
            about=("exact.flash2", "constants.b3", "constants.b2"),
        ),
        _claim(
            "gap.B3.cleared",
            "gap",
            "B3·(1 + 16d⁴/M²)·M = 4N²d² − 1.5·NMd − M² − 16d⁴ (B3 with its denominators cleared)",
            hyps,
            eq(B3.expr * (1 + 16 * d**4 / M**2) * M, GAP_E3),
            doc,
            kind="identity",
            about=("constants.b3",),
        ),
        _claim(
            "gap.B2.cleared",
            "gap",
            "2·B2·M = 4N²d² − 2M² (B2 with its denominator cleared)",
            hyps,
            eq(2 * B2.expr * M, GAP_E2),
            doc,
            kind="identity",
            about=("constants.b2",),
        ),
        _claim(
            "gap.flash2.le.B3",
            "gap",
            f"L ≤ (4N²d² − 1.5·NMd − M² − 16d⁴)(d + 2)(4Nd + 7M) for d ≥ 2, 4d² ≤ M ≤ Nd/4, N ≥ 4d: with "
            "gap.flash2.cleared, gap.factor.cleared, gap.B3.cleared and K > 0, 4Nd + N + 4N²d(d+2)/(M − 3d − 4) ≤ "
            f"B3·(1 + 2/d)(1 + 16d⁴/M²)·M/(M − 3d − 4)·(1 + ({GAP_C2})·M/(Nd)) (with gap.flash2.upper: flash2 ≤ B3 × "
            "that factor)",
            hyps,
            GAP_L <= GAP_E3 * (d + 2) * (4 * N * d + 4 * GAP_C2 * M),
            doc,
            kind="inequality",
            about=("constants.b3", "exact.flash2"),
        ),
        _claim(
            "gap.flash2.le.2B2",
            "gap",
            "L ≤ (4N²d² − 2M²)(d + 2)(4Nd + 7M) on the same regime: with gap.flash2.cleared, gap.factor.cleared, "
            f"gap.B2.cleared and K > 0, 4Nd + N + 4N²d(d+2)/(M − 3d − 4) ≤ 2·B2·(1 + 2/d)·M/(M − 3d − 4)·(1 + "
            f"({GAP_C2})·M/(Nd)): the robust gap is at most 2(1 + o(1))",
            hyps,
            GAP_L <= GAP_E2 * (d + 2) * (4 * N * d + 4 * GAP_C2 * M),
            doc,
            kind="inequality",
            about=("constants.b2", "exact.flash2"),
        ),
    ]


def all_claims() -> list[Implication]:
    return [*STEP_CLAIMS, *relax_claims(), *consistency_claims(), *small_cache_consistency_claims(), *gap_claims()]


CLAIMS: list[Implication] = all_claims()
