"""Explicit-constant lower bounds for the attention backward pass (derived here), and the backward constants
table.

The backward pass (FlashAttention, arXiv 2205.14135, Appendix B.2) computes dP = dO·Vᵀ, dS = P ∘ (dP − D),
dV = PᵀdO, dQ = scale·dS·K, dK = scale·dSᵀ·Q; FlashAttention's backward schedules recompute S = scale·QKᵀ on
chip. The bounds below use the segment technique of B1 (docs/bounds/b1.md), re-derived for the backward in
docs/bounds/backward.md. Every algebraic step is a z3 claim in :mod:`attnio.solver.claims.backward` (B1's own
claims where the algebra is B1's); the combinatorial steps are argued in prose there.

- **BWD-dP** Q ≥ min(N²d²/M, N²/2) − M for every M, d_v = d: every backward that forms each
  dP_ij = Σ_ℓ dO_iℓ·V_jℓ by a sum tree of its d products (B1's argument with (dO, V) in place of (Q, K), kept
  with both endpoints). Applies to every schedule here. (= N²d²/M − M for M ≥ 2d².)
- **BWD-SdP** Q ≥ min(4N²d²/M, N²/2) − M for every M, d_v = d (= 4N²d²/M − M for M ≥ 8d²): every backward
  that recomputes S, each pair's vertices designated in a set Π_ij (S-tree, dP-tree, scale·S_ij, scale·S_ij − L_i,
  P_ij, dP_ij − D_i, (dP_ij − D_i)·P_ij, dS_ij) whose designated parents lead from dS_ij back to both roots S_ij and
  dP_ij (docs/bounds/backward.md#type-2). Applies to flash1-bwd, flash1-fit-bwd, flash2-bwd, flash2-square-bwd; not
  to standard-bwd and square_tiling-bwd, which read the forward's P or S (for those only BWD-dP and the trivial
  bound speak).
- **BWD-trivial** Q ≥ 7Nd (N ≥ 2, d_v = d): read Q, K, V, dO once, write dQ, dK, dV once.
- **BWD-slots** Q ≥ (200/23)·N²d²/M − Nd − M for M ≥ 12d², d_v = d: BWD-SdP's pairs with B3's slot
  accounting (docs/bounds/b3.md) on the dQ = dS·K and dK = dSᵀ·Q accumulation trees, the two product families in
  one segment budget (docs/bounds/backward-slots.md). Applies to the schedules that recompute S.
- **BWD-slots-x** Q ≥ M(200N²d² − 23NMd)/(23M² + 80d⁴) − M for M ≥ 4d², d_v = d: the same with type-2 pairs paid
  by (4/5)d³ per segment, so that no segment budget needs to exceed 12d².
- **BWD-slots-dv** Q ≥ (200/19)·N²d²/M − (3/2)Nd − M for M ≥ 10d², d_v = d: BWD-slots with the dV = PᵀdO
  accumulation charged too, three families in one segment budget (docs/bounds/backward-slots-dv.md). Applies to the
  schedules that recompute S. **BWD-slots-dv-x** Q ≥ M(1200N²d² − 171NMd)/(114M² + 200d⁴) − M for M ≥ 4d²: the same
  with type-2 pairs paid by d³/2 per segment.

Small cache (M ≤ d²; docs/bounds/backward-small.md), the segment count of BS (docs/bounds/bs.md) on the scalar
products instead of whole dot products:

- **BWD-dP-small** Q ≥ (25/18)(1 − M/d²)·N²d/√M − 3M: BS with (dO, V) in place of (Q, K), counting the N²d
  products dO_iℓ·V_jℓ. Applies to every schedule here.
- **BWD-SdP-small** Q ≥ (25/9)(1 − M/d²)·N²d/√M − 3M: the N²d products Q_iℓ·K_jℓ and the N²d products
  dO_iℓ·V_jℓ counted together (four disjoint input faces, one shared budget). Applies to the schedules that
  recompute S.

Small cache, every product family (M ≤ d²; docs/bounds/backward-lift.md), BSPV's lifted Loomis–Whitney count
(docs/bounds/bspv.md) over the families of N²d products, the pair face shared, the dV, dQ, dK slots charged as in B3:

- **BWD-five-small** Q ≥ (125/36)(1 − M/d²)·N²d/√M − 3M: S, dP, dV, dQ, dK. Applies to the schedules that recompute S.
- **BWD-four-small** Q ≥ (25/9)(1 − M/d²)·N²d/√M − 3M: dP, dV, dQ, dK. Applies to every schedule here.

These are kept apart from :func:`attnio.bounds.catalog.all_bounds`, whose lower bounds speak about the forward
pass (reports and checks apply them to every forward algorithm); :data:`BOUNDS` lists them.

>>> from attnio.bounds.expr import evaluate
>>> int(evaluate(BWD_SDP.expr, {"N": 4096, "d": 64, "M": 65536}))
4128768
>>> int(evaluate(BWD_SDP_SMALL.expr, {"N": 4096, "d": 128, "M": 4096}))
69892778
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction

from attnio.bounds.constants import BS_COEFF, bs_bound, bs_form
from attnio.bounds.costs import BACKWARD_FORMULAS
from attnio.bounds.expr import eq, evaluate, minimum, sqrt
from attnio.bounds.symbols import M, N, d, dv
from attnio.bounds.types import ANY_ALGORITHM, CDAG_BACKWARD, Bound
from attnio.core.errors import InvalidParameter

#: the backward schedules here that recompute S = QKᵀ (the notes of the bounds on them)
RECOMPUTING = "flash1-bwd, flash1-fit-bwd, flash2-bwd, flash2-2pass-bwd, flash2-square-bwd (they recompute S)"

BWD_CDAG = (
    "standard backward CDAG (d_v = d): each dO_iℓ·V_jℓ product its own vertex, summed by any tree into dP_ij; "
    "every dP_ij an ancestor of an output (P3); the rest of the graph may be anything (recomputation allowed; no "
    "fast matrix multiplication)"
)
BWD_RECOMPUTE_CDAG = (
    "backward CDAG with S recomputed (d_v = d): the S-tree of (Q_i, K_j) and the dP-tree of (dO_i, V_j) as sum "
    "trees of their d products; for each pair a designated set Π_ij of pair-level vertices, pairwise disjoint and "
    "free of inputs (scale·S_ij, scale·S_ij − L_i, P_ij, dP_ij − D_i, (dP_ij − D_i)·P_ij, dS_ij), each of which has "
    "a parent in Π_ij or is a child of S_ij or dP_ij, dS_ij reaching both roots through Π_ij; every dS_ij an "
    "ancestor of an output (recomputation allowed; no fast matrix multiplication; docs/bounds/backward.md)"
)
# d_v = d, as a relation of every regime below: the dP-trees have d_v products and the input rows have widths
# d, d_v, d, d_v, so the constants are proved for d_v = d only.
DV_EQ_D = eq(dv, d)


def _segment(**fields) -> Bound:
    """A backward lower bound from B1's segment argument (d_v = d, slack −M, docs/bounds/backward.md)."""
    return Bound(
        kind="lower",
        regime=(DV_EQ_D,),
        explicit=True,
        slack=-M,
        status="derived here",
        doc="docs/bounds/backward.md",
        computation="backward",
        cdag=CDAG_BACKWARD,
        **fields,
    )


BWD_DP = _segment(
    id="backward.bwd-dp",
    statement="Every backward pass that forms dP = dO·Vᵀ by dot-product trees moves at least "
    "min(N²d²/M, N²/2) − M words (d_v = d; recomputation allowed); N²d²/M − M when M ≥ 2d².",
    model=BWD_CDAG,
    expr=minimum(N**2 * d**2 / M, N**2 / 2) - M,
    constant=Fraction(1),
    provenance="derived here: B1 (docs/bounds/b1.md) applied to the dP-trees of the backward",
    notes="Applies to every backward schedule here (standard-bwd and square_tiling-bwd too: they form dP).",
)

BWD_SDP = _segment(
    id="backward.bwd-sdp",
    statement="Every backward pass that recomputes S = QKᵀ moves at least min(4N²d²/M, N²/2) − M words "
    "(S-trees and dP-trees per pair, four input faces Q, dO, K, V; d_v = d; recomputation allowed); "
    "4N²d²/M − M when M ≥ 8d².",
    model=BWD_RECOMPUTE_CDAG,
    expr=minimum(4 * N**2 * d**2 / M, N**2 / 2) - M,
    constant=Fraction(4),
    provenance="derived here: the B1 segment argument with both trees of a pair (docs/bounds/backward.md)",
    notes=f"Applies to {RECOMPUTING}. "
    "flash2-bwd's leading constant is 16: the gap is 4 in leading order.",
)

BWD_TRIVIAL = Bound(
    id="backward.trivial",
    statement="Every exact backward pass moves at least 7Nd words (d_v = d, N ≥ 2): each word of Q, K, V and dO "
    "is read and each word of dQ, dK, dV written at least once.",
    kind="lower",
    model="any exact attention backward pass (inputs start and outputs end in slow memory)",
    regime=(2 <= N, DV_EQ_D),
    expr=7 * N * d,
    explicit=True,
    constant=Fraction(7),
    provenance="derived here",
    status="derived here",
    doc="docs/bounds/backward.md",
    computation="backward",
    cdag=ANY_ALGORITHM,
)

# Small cache (M ≤ d²): BS's segment count on the scalar products (docs/bounds/backward-small.md).
SMALL_DOC = "docs/bounds/backward-small.md"
BWD_SMALL_DP_COEFF = BS_COEFF  # 25/18: BS verbatim, on the dP products
BWD_SMALL_SDP_COEFF = 2 * BS_COEFF  # 25/9: two product families of N²d each, one shared segment budget


def _small(coeff: Fraction, **fields) -> Bound:
    """A small-cache backward bound (M ≤ d², d_v = d) of the BS form with leading coefficient ``coeff``."""
    return bs_bound(coeff, regime=(M <= d**2, DV_EQ_D), doc=SMALL_DOC, computation="backward", cdag=CDAG_BACKWARD, **fields)


BWD_DP_SMALL = _small(
    BWD_SMALL_DP_COEFF,
    id="backward.bwd-dp-small",
    statement="Every backward pass that forms dP = dO·Vᵀ by sum trees of the products dO_iℓ·V_jℓ moves at least "
    "(25/18)(1 − M/d²)·N²d/√M − 3M words when M ≤ d² (d_v = d; recomputation allowed).",
    model=BWD_CDAG,
    provenance="derived here: the BS segment count (docs/bounds/bs.md) on the N²d products dO_iℓ·V_jℓ of the "
    "dP-trees (docs/bounds/backward-small.md)",
    notes="small cache. Applies to every backward schedule here (standard-bwd and square_tiling-bwd too: they form dP).",
)

BWD_SDP_SMALL = _small(
    BWD_SMALL_SDP_COEFF,
    id="backward.bwd-sdp-small",
    statement="Every backward pass that recomputes S = QKᵀ (and forms dP = dO·Vᵀ) by sum trees of scalar products "
    "moves at least (25/9)(1 − M/d²)·N²d/√M − 3M words when M ≤ d² (the 2N²d products Q_iℓ·K_jℓ and "
    "dO_iℓ·V_jℓ; d_v = d; recomputation allowed).",
    model=BWD_RECOMPUTE_CDAG,
    provenance="derived here: the BS segment count (docs/bounds/bs.md) on the S-tree and dP-tree products together, "
    "four input faces sharing one segment budget (docs/bounds/backward-small.md)",
    notes=f"small cache. Applies to {RECOMPUTING}.",
)

# Small cache, the products of every family in one lifted Loomis–Whitney count (docs/bounds/backward-lift.md): BSPV's
# lift (docs/bounds/bspv.md) with five (four) families of N²d products. Q, K and dO words sit on two families' faces
# each, so the faces' budget is twice the available words: the per-segment maximum doubles (κ halves in the count)
# while the work is 5N²d (4N²d), a factor 5/2 (2) over one family.
LIFT_DOC = "docs/bounds/backward-lift.md"
BWD_FIVE_SMALL_COEFF = Fraction(125, 36)  # (5/2)·BS's: 5N²d products, per-segment maximum twice BS's
BWD_FOUR_SMALL_COEFF = Fraction(25, 9)  # 2·BS's: 4N²d products (dP, dV, dQ, dK), the same per-segment maximum
LIFT_CDAG = (
    "backward CDAG (d_v = d) with product vertices for dP = dO·Vᵀ (parents exactly dO_iℓ, V_jℓ), dV = PᵀdO (P_ij, "
    "dO_iℓ among the parents), dQ = dS·K (G_ij, K_jℓ) and dK = dSᵀ·Q (G_ij, Q_iℓ){s}; the dP-{t} summed by any tree "
    "into dP_ij{r}; the dV, dQ and dK products summed by one accumulation tree per output word (one tree parent per "
    "vertex); for each pair a designated set Π_ij holding its trees, P_ij and G_ij (dS_ij or scale·dS_ij), each "
    "other vertex of which is an input (S or P read from slow memory) or has a designated parent in Π_ij that is a "
    "tree's root or lies outside the trees; the input words, "
    "the sets Π_ij pairwise disjoint, the 3Nd accumulation trees pairwise vertex-disjoint; every dP_ij{r} an "
    "ancestor of an output; every output written (recomputation allowed; "
    "no fast matrix multiplication; docs/bounds/backward-lift.md)"
)


def _lift(coeff: Fraction, **fields) -> Bound:
    """A small-cache backward bound of the lifted count (M ≤ d², d_v = d), BS's form with coefficient ``coeff``."""
    return bs_bound(coeff, regime=(M <= d**2, DV_EQ_D), doc=LIFT_DOC, computation="backward", cdag=CDAG_BACKWARD,
                    status="derived here (refereed)", **fields)


BWD_FIVE_SMALL = _lift(
    BWD_FIVE_SMALL_COEFF,
    id="backward.bwd-five-small",
    statement="Every backward pass that recomputes S = QKᵀ and forms dP, dV, dQ and dK by sums of scalar products "
    "moves at least (125/36)(1 − M/d²)·N²d/√M − 3M words when M ≤ d² (the 5N²d products of S, dP, dV, dQ and dK "
    "in one lifted Loomis–Whitney count per segment; d_v = d; recomputation allowed).",
    model=LIFT_CDAG.format(s=", and for S = QKᵀ (parents exactly Q_iℓ, K_jℓ)", t=" and S-products each",
                           r=" and S_ij"),
    provenance="derived here: BSPV's lift (docs/bounds/bspv.md) on the five product families of the backward, "
    "pair face shared, dQ/dK/dV slots charged as in B3 (docs/bounds/backward-lift.md)",
    notes=f"small cache. Applies to {RECOMPUTING}.",
)

BWD_FOUR_SMALL = _lift(
    BWD_FOUR_SMALL_COEFF,
    id="backward.bwd-four-small",
    statement="Every backward pass that forms dP, dV, dQ and dK by sums of scalar products moves at least "
    "(25/9)(1 − M/d²)·N²d/√M − 3M words when M ≤ d² (the 4N²d products of dP, dV, dQ and dK in one lifted "
    "Loomis–Whitney count per segment; S recomputed or read; d_v = d; recomputation allowed).",
    model=LIFT_CDAG.format(s=", and for S = QKᵀ wherever S is recomputed (parents exactly Q_iℓ, K_jℓ)",
                           t=" and S-products each", r=" and S_ij"),
    provenance="derived here: BSPV's lift (docs/bounds/bspv.md) on the four gradient-side product families of the "
    "backward, pair face shared, dQ/dK/dV slots charged as in B3 (docs/bounds/backward-lift.md)",
    notes="small cache. Applies to every backward schedule here (standard-bwd and square_tiling-bwd too: the "
    "S or P words they read belong to the pair sets).",
)

# The same count with the cap A ≤ M + R on the available input words (docs/bounds/backward-lift.md#near): better for
# d²/6 ≤ M ≤ 3d²/4, where the unconstrained maximum of step 12 would need more than M + R input words.
NEAR_SQRT = sqrt(1 + 4 * M / d**2)
NEAR_REGIME = (d**2 <= 6 * M, 4 * M <= 3 * d**2, DV_EQ_D)


def _restated(base: Bound, suffix: str, claim: str, **fields) -> Bound:
    """``base`` with another count: id ``base.id + suffix``, the statement's subject (up to "moves at least")
    followed by ``claim``; ``fields`` give what else changes (the formula, its regime, provenance, notes)."""
    subject = base.statement.split(" moves at least", 1)[0]
    return replace(base, id=base.id + suffix, statement=f"{subject} moves at least {claim}", **fields)


def _near(base: Bound, coeff: Fraction, families: str) -> Bound:
    """BWD-five-small-near / BWD-four-small-near: (3n/4)·N²d/(√M·√(1 + 4M/d²)) − 3M on d²/6 ≤ M ≤ 3d²/4."""
    return _restated(
        base, "-near", f"({coeff})·N²d/(√M·√(1 + 4M/d²)) − 3M words when d²/6 ≤ M ≤ 3d²/4 (the {families} products "
        "in one lifted Loomis–Whitney count, the available input words capped by M + R; d_v = d; recomputation allowed).",
        regime=NEAR_REGIME,
        expr=coeff * N**2 * d / (sqrt(M) * NEAR_SQRT) - 3 * M,
        constant=coeff,
        provenance=base.provenance + ", with the cap on the input words (docs/bounds/backward-lift.md#near)",
        notes=base.notes.replace("small cache.", "small cache, d²/6 ≤ M ≤ 3d²/4."),
    )


BWD_FIVE_SMALL_NEAR = _near(BWD_FIVE_SMALL, Fraction(15, 4), "5N²d")
BWD_FOUR_SMALL_NEAR = _near(BWD_FOUR_SMALL, Fraction(3), "4N²d")

# Small cache, every word charged once (docs/bounds/backward-once.md): the lifted count of backward-lift.md with one
# Loomis–Whitney inequality per family on the shared pair face, each available word counted once in the budget and
# the families that share a word combined by the largest eigenvalue c of a bilinear form (φ/2 ≤ 81/100 with the S
# family, √2/2 ≤ 17/24 without): the per-segment maximum is 2c times BS's, not 2 times.
ONCE_DOC = "docs/bounds/backward-once.md"
BWD_FIVE_ONCE_COEFF = Fraction(3125, 729)  # 25·5/(36·(81/100))
BWD_FOUR_ONCE_COEFF = Fraction(200, 51)  # 25·4/(36·(17/24))
ONCE_W = 16 + 9 * M / d**2


ONCE_COUNT = "one Loomis–Whitney count per family on a shared pair face, each available word charged once"


def _once(base: Bound, coeff: Fraction, notes: str) -> Bound:
    """``base``, a lifted small-cache bound, with each word charged once (M ≤ d², d_v = d): BS's form with
    coefficient ``coeff``, the same statement but for the coefficient and the count."""
    return replace(
        base,
        id=base.id + "-once",
        statement=base.statement.replace(f"({base.constant})", f"({coeff})").replace(
            " in one lifted Loomis–Whitney count per segment", ", " + ONCE_COUNT),
        expr=bs_form(coeff),
        constant=coeff,
        doc=ONCE_DOC,
        provenance=f"derived here: BWD-{base.id.removeprefix('backward.bwd-')}'s lift ({LIFT_DOC}) with the double "
        f"charge of its input faces removed, per-family Loomis–Whitney combined by a bilinear form ({ONCE_DOC})",
        notes=notes,
    )


BWD_FIVE_SMALL_ONCE = _once(BWD_FIVE_SMALL, BWD_FIVE_ONCE_COEFF, BWD_FIVE_SMALL.notes + " 3125/729 ≈ 4.29 = (125/36)·1.235.")
BWD_FOUR_SMALL_ONCE = _once(
    BWD_FOUR_SMALL, BWD_FOUR_ONCE_COEFF,
    "small cache. Applies to every backward schedule here (those that read S or P too). 200/51 ≈ 3.92 = (25/9)·1.412.",
)


def _once_cap(base: Bound, coeff: int, families: str) -> Bound:
    """The cap form of a charged-once bound: coeff·N²d/(√M·(16 + 9M/d²)^(3/2)) − 2M for M ≤ d² (R = 2M)."""
    return _restated(
        base, "-cap", f"{coeff}·N²d/(√M·(16 + 9M/d²)^(3/2)) − 2M words when M ≤ d² (the {families} products, "
        f"{ONCE_COUNT}, the available input words capped by M + R, R = 2M; d_v = d; recomputation allowed).",
        expr=coeff * N**2 * d / (sqrt(M) * ONCE_W * sqrt(ONCE_W)) - 2 * M,
        constant=Fraction(coeff, 64),
        slack=-2 * M,
        provenance=base.provenance + ", with the cap on the input words (docs/bounds/backward-once.md#cap)",
        notes=base.notes.split(" (", 1)[0].replace("small cache.", "small cache, no (1 − M/d²) loss.")
        + f" Leading constant {coeff}/64 as M/d² → 0.",
    )


BWD_FIVE_SMALL_ONCE_CAP = _once_cap(BWD_FIVE_SMALL_ONCE, 256, "5N²d")
BWD_FOUR_SMALL_ONCE_CAP = _once_cap(BWD_FOUR_SMALL_ONCE, 234, "4N²d")

# Large cache, two slot faces (docs/bounds/backward-slots.md): B3's slot accounting on the dQ and dK accumulations.
SLOTS_DOC = "docs/bounds/backward-slots.md"
BWD_SLOTS_COEFF = Fraction(200, 23)  # 1/(2c) with c = 23/400 ≥ √(27/8192), the per-segment constant
BWD_SLOTS_CDAG = (
    BWD_RECOMPUTE_CDAG.removesuffix("; docs/bounds/backward.md)")
    + "); besides, each product dS_ij·K_jℓ and dS_ij·Q_iℓ its own vertex, summed by one tree per output word "
    "dQ_iℓ (resp. dK_jℓ) with one tree parent per vertex; inputs, the sets Π_ij and the 2Nd accumulation trees "
    "pairwise disjoint (docs/bounds/backward-slots.md)"
)

BWD_SLOTS = Bound(
    id="backward.bwd-slots",
    statement="Every backward pass that recomputes S = QKᵀ and accumulates dQ = dS·K and dK = dSᵀ·Q by sum trees "
    "of scalar products moves at least (200/23)·N²d²/M − Nd − M words when M ≥ 12d² (d_v = d; "
    "recomputation allowed): pairs (Q, dO, K, V faces) and the dQ and dK slot faces in one segment budget.",
    kind="lower",
    model=BWD_SLOTS_CDAG,
    regime=(12 * d**2 <= M, DV_EQ_D),
    expr=BWD_SLOTS_COEFF * N**2 * d**2 / M - N * d - M,
    explicit=True,
    constant=BWD_SLOTS_COEFF,
    slack=-N * d - M,
    provenance="derived here: B3's slot accounting (docs/bounds/b3.md) on the dQ and dK accumulation trees of the "
    "backward, with BWD-SdP's pair sets (docs/bounds/backward-slots.md)",
    status="derived here (refereed)",
    doc=SLOTS_DOC,
    computation="backward",
    cdag=CDAG_BACKWARD,
    notes=f"Applies to {RECOMPUTING}. "
    "flash2-bwd's leading constant is 16 (gap 16·23/200 = 1.84 in leading order), flash2-2pass-bwd's 14 (1.61).",
)

def _every_budget(base: Bound, coeffs: tuple[int, int, int, int], pay: str, least: int, steps: str) -> Bound:
    """``base`` (whose regime is M ≥ least·d²) for every segment budget, M ≥ 4d²: with (a, b, c, e) = ``coeffs`` it
    moves at least M(a·N²d² − b·NMd)/(c·M² + e·d⁴) − M words, the type-2 pairs paid by ``pay`` per segment;
    ``steps``: the steps of base's derivation that do it (docs: base's own, section ``#<id>-x``)."""
    a, b, c, e = coeffs
    name = "BWD-" + base.id.removeprefix("backward.bwd-")
    x = _restated(
        base, "-x", f"M({a}N²d² − {b}NMd)/({c}M² + {e}d⁴) − M words when M ≥ 4d² (d_v = d; recomputation allowed): "
        f"{name} with the type-2 pairs paid by {pay} per segment instead of M ≥ {least}d².",
        regime=(4 * d**2 <= M, DV_EQ_D),
        expr=M * (a * N**2 * d**2 - b * N * M * d) / (c * M**2 + e * d**4) - M,
        slack=None,
        provenance=f"derived here: {name} ({base.doc}) with {steps} for every segment budget ({base.doc}#"
        f"{base.id.removeprefix('backward.')}-x)",
    )
    possessive = name + ("'" if name.endswith("s") else "'s")
    return replace(x, notes=f"Applies to {RECOMPUTING}. Leading constant {base.constant} as M/d² grows; its leading term "
                   f"below {possessive} by the factor {c}M²/({c}M² + {e}d⁴); the only one of the two below {least}d².")


BWD_SLOTS_X = _every_budget(BWD_SLOTS, (200, 23, 23, 80), "(4/5)d³", 12, "its steps 9, 11, 12 and 16")

# Large cache, three slot faces (docs/bounds/backward-slots-dv.md): BWD-slots with the dV = PᵀdO accumulation charged.
SLOTS_DV_DOC = "docs/bounds/backward-slots-dv.md"
BWD_SLOTS_DV_COEFF = Fraction(200, 19)  # 3/(4c) with c = 57/800, the per-segment constant of the three families
BWD_SLOTS_DV_CDAG = BWD_SLOTS_CDAG.removesuffix(" (docs/bounds/backward-slots.md)") + (
    "; besides, each product P_ij·dO_iℓ its own vertex with a vertex of Π_ij whose designated ancestors contain "
    "S_ij among its parents, summed by one tree per output word dV_jℓ; the 3Nd accumulation trees pairwise "
    "disjoint and disjoint from the inputs and the sets Π_ij (docs/bounds/backward-slots-dv.md)"
)

BWD_SLOTS_DV = replace(
    BWD_SLOTS,
    id="backward.bwd-slots-dv",
    statement="Every backward pass that recomputes S = QKᵀ and accumulates dQ = dS·K, dK = dSᵀ·Q and dV = PᵀdO (from the "
    "recomputed P) by sum trees of scalar products moves at least (200/19)·N²d²/M − (3/2)Nd − M words when M ≥ 10d² (d_v = d; "
    "recomputation allowed): pairs (Q, dO, K, V faces) and the dQ, dK and dV slot faces in one segment budget.",
    model=BWD_SLOTS_DV_CDAG,
    regime=(10 * d**2 <= M, DV_EQ_D),
    expr=BWD_SLOTS_DV_COEFF * N**2 * d**2 / M - Fraction(3, 2) * N * d - M,
    constant=BWD_SLOTS_DV_COEFF,
    slack=-Fraction(3, 2) * N * d - M,
    provenance="derived here: BWD-slots (docs/bounds/backward-slots.md) with the dV slot face, three families of "
    "N²d products in one segment budget (docs/bounds/backward-slots-dv.md)",
    status="derived here (refereed)",
    doc=SLOTS_DV_DOC,
    notes=f"Applies to {RECOMPUTING}. "
    "flash2-bwd's leading constant is 16 (gap 16·19/200 = 1.52 in leading order), flash2-2pass-bwd's 14 (1.33).",
)

BWD_SLOTS_DV_X = _every_budget(BWD_SLOTS_DV, (1200, 171, 114, 200), "d³/2", 10, "its per-segment step")

BOUNDS: list[Bound] = [
    BWD_DP, BWD_SDP, BWD_TRIVIAL, BWD_DP_SMALL, BWD_SDP_SMALL, BWD_SLOTS, BWD_SLOTS_X, BWD_FIVE_SMALL, BWD_FOUR_SMALL,
    BWD_FIVE_SMALL_NEAR, BWD_FOUR_SMALL_NEAR, BWD_SLOTS_DV, BWD_SLOTS_DV_X, BWD_FIVE_SMALL_ONCE, BWD_FOUR_SMALL_ONCE,
    BWD_FIVE_SMALL_ONCE_CAP, BWD_FOUR_SMALL_ONCE_CAP,
]
# The small-cache bounds: their consistency chain goes through (25/9)·N²d/√M (solver/claims/backward.py).
SMALL_CACHE = frozenset({BWD_DP_SMALL.id, BWD_SDP_SMALL.id})
# The lifted small-cache bounds (docs/bounds/backward-lift.md): BWD-four-small's chain is the (25/9) one above,
# BWD-five-small's goes through (125/36)·N²d/√M.
LIFT_SMALL = frozenset({BWD_FIVE_SMALL.id, BWD_FOUR_SMALL.id, BWD_FIVE_SMALL_NEAR.id, BWD_FOUR_SMALL_NEAR.id})
# The charged-once small-cache bounds (docs/bounds/backward-once.md), their chains in solver/claims/backward.py.
ONCE_SMALL = frozenset({BWD_FIVE_SMALL_ONCE.id, BWD_FOUR_SMALL_ONCE.id, BWD_FIVE_SMALL_ONCE_CAP.id,
                        BWD_FOUR_SMALL_ONCE_CAP.id})

# Which backward schedules each bound's model covers (standard-bwd and square_tiling-bwd read P or S).
RECOMPUTES_S = frozenset({"flash1-bwd", "flash1-fit-bwd", "flash2-bwd", "flash2-2pass-bwd", "flash2-square-bwd", "flash2-fused-bwd"})
COVERS: dict[str, frozenset[str]] = {
    BWD_DP.id: frozenset(BACKWARD_FORMULAS),
    BWD_SDP.id: RECOMPUTES_S,
    BWD_TRIVIAL.id: frozenset(BACKWARD_FORMULAS),
    BWD_DP_SMALL.id: frozenset(BACKWARD_FORMULAS),
    BWD_SDP_SMALL.id: RECOMPUTES_S,
    BWD_SLOTS.id: RECOMPUTES_S,
    BWD_SLOTS_X.id: RECOMPUTES_S,
    BWD_FIVE_SMALL.id: RECOMPUTES_S,
    BWD_FOUR_SMALL.id: frozenset(BACKWARD_FORMULAS),
    BWD_FIVE_SMALL_NEAR.id: RECOMPUTES_S,
    BWD_FOUR_SMALL_NEAR.id: frozenset(BACKWARD_FORMULAS),
    BWD_SLOTS_DV.id: RECOMPUTES_S,
    BWD_SLOTS_DV_X.id: RECOMPUTES_S,
    BWD_FIVE_SMALL_ONCE.id: RECOMPUTES_S,
    BWD_FOUR_SMALL_ONCE.id: frozenset(BACKWARD_FORMULAS),
    BWD_FIVE_SMALL_ONCE_CAP.id: RECOMPUTES_S,
    BWD_FOUR_SMALL_ONCE_CAP.id: frozenset(BACKWARD_FORMULAS),
}
# Backward schedules whose working set exceeds M (run in audit mode): not candidates for "best schedule".
OVERFLOWS = frozenset({"flash1-bwd"})


# The bounds whose model covers every backward schedule (those that read P or S too): what holds for a backward of
# no named schedule (a cell where none fits, a user's kernel that may read S or P).
COVERS_EVERY = frozenset(i for i, cov in COVERS.items() if cov == frozenset(BACKWARD_FORMULAS))


def best_lower_bound(N_: int, d_: int, M_: int, schedule: str | None = None) -> tuple[str, Fraction]:
    """The largest backward lower bound at (N, d, M) (d_v = d) whose regime holds and whose model covers
    ``schedule`` (:data:`COVERS`); ``None``: no schedule named, so only the bounds that cover every backward
    schedule (:data:`COVERS_EVERY`: not those that assume S recomputed).

    >>> best_lower_bound(4096, 64, 65536, "flash2-bwd")[0], best_lower_bound(4096, 64, 65536)[0]
    ('backward.bwd-slots-dv', 'backward.trivial')
    """
    env = {"N": N_, "d": d_, "M": M_, "dv": d_}
    vals = {
        b.id: evaluate(b.expr, env)
        for b in BOUNDS
        if all(r.holds(env) for r in b.regime) and (b.id in COVERS_EVERY if schedule is None else schedule in COVERS[b.id])
    }
    if not vals:
        return "none", Fraction(0)
    best = max(vals, key=lambda i: vals[i])
    return best, vals[best]


@dataclass(frozen=True)
class SmallCacheRow:
    N: int
    d: int
    M: int
    dp_small_constant: float  # BWD-dP-small ÷ (N²d/√M)
    sdp_small_constant: float  # BWD-SdP-small ÷ (N²d/√M)
    square_tiling_bwd_constant: float  # its exact cost ÷ (N²d/√M)
    ratio_square_tiling_bwd: float  # its exact cost ÷ BWD-dP-small (the small-cache bound that covers it)
    flash2_bwd_constant: float
    ratio_flash2_bwd: float  # its exact cost ÷ BWD-SdP-small

    def as_dict(self) -> dict[str, object]:
        return dict(vars(self))


SMALL_TABLE_POINTS = ((4096, 128, 4096), (16384, 128, 4096), (4096, 128, 8192), (16384, 128, 8192))


def small_cache_table(points: tuple[tuple[int, int, int], ...] = SMALL_TABLE_POINTS) -> list[SmallCacheRow]:
    """Small-cache points (M ≤ d², d_v = d): square_tiling-bwd against BWD-dP-small and flash2-bwd against
    BWD-SdP-small, in units of N²d/√M (docs/bounds/backward-small.md#numbers).

    >>> row = small_cache_table(((4096, 128, 4096),))[0]
    >>> round(row.sdp_small_constant, 3), 15 < row.ratio_square_tiling_bwd < 16
    (2.083, True)
    """
    rows = []
    for n, dd, mm in points:
        env = {"N": n, "d": dd, "M": mm, "dv": dd}
        if not all(r.holds(env) for r in BWD_DP_SMALL.regime):
            raise InvalidParameter("M", mm, f"M ≤ d² (the small cache) at N={n}, d={dd}")
        unit = n * n * dd / mm**0.5
        dp, sdp = float(evaluate(BWD_DP_SMALL.expr, env)), float(evaluate(BWD_SDP_SMALL.expr, env))
        st = int(evaluate(BACKWARD_FORMULAS["square_tiling-bwd"].with_dv_equal_d().io, env))
        f2 = int(evaluate(BACKWARD_FORMULAS["flash2-bwd"].with_dv_equal_d().io, env))
        rows.append(SmallCacheRow(N=n, d=dd, M=mm, dp_small_constant=dp / unit, sdp_small_constant=sdp / unit,
                                  square_tiling_bwd_constant=st / unit, ratio_square_tiling_bwd=st / dp,
                                  flash2_bwd_constant=f2 / unit, ratio_flash2_bwd=f2 / sdp))
    return rows
