"""z3 claims of the small-cache bounds BSPV and BSPV-near (docs/bounds/bspv.md): their own proof steps and their
consistency with every exact cost formula.

The steps BSPV shares with BS word for word (AM–GM on two faces, the Loomis–Whitney combination, the cubic
maximum, the per-segment maximum at R = 3M, the choice of R) are BS's claims (``constants.bs.*``); the step tables
of :mod:`attnio.bounds.proofs` (``PROOF_STEPS``) list them under BSPV too, which is where a claim's ``about``
comes from. The claims here are the steps that differ: the complete pairs and the pair face with the slots and
the V words in the budget (steps 8, 9), the rearrangement over N²(d + d_v) products, any d_v (step 13), and the near form's
segments of M I/Os (steps 12, 13).

Consistency (docs/bounds/bspv.md#consistency), a chain per formula as for BS: ``bspv.relax`` (BSPV ≤
(25/9)·N²d/√M) and ``bspv-near.relax`` (BSPV-near ≤ the same), then (25/9)·N²d/√M ≤ cost, through BS's second
links where the middle form is the same (4N²d²/M for the FlashAttention-style loops, the block count for flash1),
through both phases of square_tiling-io, and directly for the rest.

Interface (solver/claims/__init__.py): this module exposes ``CLAIMS`` (ids prefixed ``constants.``).

>>> from attnio.solver.claims import by_id
>>> from attnio.solver.verify import verify_claim
>>> verify_claim(by_id("constants.bspv.rearrange")).status
'proved'
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.constants import DV_EQ_D, HALF_PRODUCTS
from attnio.bounds.expr import ceil, eq, sqrt, to_text
from attnio.bounds.symbols import M, N, d, dv, nonneg_real
from attnio.solver.claims.build import BASE as _BASE
from attnio.solver.claims.build import Link, chain, relax, to_cost
from attnio.solver.claims.build import sq as _sq
from attnio.solver.claims.constants import (
    VIA_BLOCKS,
    VIA_LARGE,
    I_rows,
    J_cols,
    Q,
    R,
    Y,
    _is_standard,
    aK,
    aQ,
    h,
    rr,
    ww,
    x,
)
from attnio.solver.claims.constants import _claim as _base_claim
from attnio.solver.claims.types import Implication

DOC = "docs/bounds/bspv.md"

aV = nonneg_real("seg_aV", "V words available in a segment (red at its start or read in it)")
y = nonneg_real("seg_y", "type-2 slots of a segment (a vertex of the slot's accumulation tree red at its start or read)")
o1 = nonneg_real("seg_o1", "open pairs of a segment (an S-tree vertex red at its end or written in it)")
o2 = nonneg_real("seg_o2", "open slots of a segment (an accumulation-tree vertex red at its end or written in it)")
s = nonneg_real("seg_s", "a_Q + a_K + a_V + y + o2, the two lifted input faces together")
c_pairs = nonneg_real("seg_cpairs", "|I_t|·|J_t|, the pairs whose Q and K rows are wholly available")
a1, b1 = nonneg_real("seg_a1", "square_tiling-io's phase-1 Q tile rows"), nonneg_real("seg_b1", "its K tile rows")
a2, b2 = nonneg_real("seg_a2", "square_tiling-io's phase-2 P tile rows"), nonneg_real("seg_b2", "its V tile columns")

COEFF = Fraction(25, 9)
LEAD = COEFF * N**2 * d / sqrt(M)  # the middle of every consistency chain
KAPPA = 1 - M / d**2  # κ at R = 3M
KAPPA_NEAR = 1 - M / (2 * d**2)  # κ at R = M
# A segment's budget (steps 9 of BSPV and BSPV-cap): what it reads or finds red (a_Q + a_K + a_V + x + y) is at most
# M + r, what it writes or leaves red (o₁ + o₂) at most M + w, with r + w ≤ R I/Os; s sums the lifted input faces.
_SEGMENT = (d >= 1, M >= 1, aQ + aK + aV + x + y <= M + rr, o1 + o2 <= M + ww, rr + ww <= R, eq(s, aQ + aK + aV + y + o2))


def _claim(id_: str, label: str, statement: str, hyps, concl, doc: str = DOC, **kw) -> Implication:
    return _base_claim(id_, label, statement, hyps, concl, doc, **kw)


STEP_CLAIMS: list[Implication] = [
    _claim(
        "bspv.pairs",
        "BSPV",
        "complete pairs: d|I| ≤ a_Q, d|J| ≤ a_K, a_Q + a_K ≤ M + R and a_Q + a_K ≤ s ⇒ |I|·|J| ≤ s(M + R)/(4d²)",
        (d >= 1, d * I_rows <= aQ, d * J_cols <= aK, aQ + aK <= M + R, aQ + aK <= s),
        I_rows * J_cols <= s * (M + R) / (4 * d**2),
        DOC + "#step-8",
    ),
    _claim(
        "bspv.third",
        "BSPV",
        "pair face: x + |I||J| + o₁ ≤ (2M + R) − κ·s with s = a_Q + a_K + a_V + y + o₂, κ = 1 − (M + R)/(4d²), given "
        "a_Q + a_K + a_V + x + y ≤ M + r, o₁ + o₂ ≤ M + w, r + w ≤ R and |I||J| ≤ s(M + R)/(4d²)",
        (*_SEGMENT, c_pairs <= s * (M + R) / (4 * d**2)),
        x + c_pairs + o1 <= 2 * M + R - (1 - (M + R) / (4 * d**2)) * s,
        DOC + "#step-9",
    ),
    _claim(
        "bspv.rearrange",
        "BSPV",
        "N²(d + d_v) products: κ·N²(d + d_v) ≤ h·(54/25)·M√M and Q ≥ 3M(h − 1) ⇒ Q ≥ (25/18)(1 − M/d²)N²(d + d_v)/√M "
        "− 3M (any d_v ≥ 1; (25/9)(1 − M/d²)N²d/√M − 3M at d_v = d)",
        (*_BASE, dv >= 1, M <= d**2, KAPPA * N**2 * (d + dv) <= h * Fraction(54, 25) * M * sqrt(M), Q >= 3 * M * (h - 1)),
        Q >= COEFF * KAPPA * HALF_PRODUCTS / sqrt(M) - 3 * M,
        DOC + "#step-13",
    ),
    _claim(
        "bspv-near.segment",
        "BSPV-near",
        "R = M (K = 3M, κ = 1 − M/(2d²)), M ≤ 2d²: 27κ²Y² ≤ (3M)³ ⇒ κ·Y ≤ M√M",
        (*_BASE, M <= 2 * d**2, 27 * _sq(KAPPA_NEAR) * _sq(Y) <= (3 * M) ** 3),
        KAPPA_NEAR * Y <= M * sqrt(M),
        DOC + "#step-12",
    ),
    _claim(
        "bspv-near.rearrange",
        "BSPV-near",
        "N²(d + d_v) products: (1 − M/(2d²))·N²(d + d_v) ≤ h·M√M and Q ≥ M(h − 1) ⇒ Q ≥ (1 − M/(2d²))·N²(d + d_v)/√M "
        "− M (any d_v ≥ 1; (2 − M/d²)N²d/√M − M at d_v = d)",
        (*_BASE, dv >= 1, M <= 2 * d**2, KAPPA_NEAR * N**2 * (d + dv) <= h * M * sqrt(M), Q >= M * (h - 1)),
        Q >= (2 - M / d**2) * HALF_PRODUCTS / sqrt(M) - M,
        DOC + "#step-13",
    ),
    _claim(
        "bspv.crossover",
        "BSPV",
        "(25/9)(1 − M/d²) ≥ 2 − M/d² exactly when M ≤ (7/16)d²: BSPV's leading coefficient is the larger below, "
        "BSPV-near's above",
        (*_BASE, 16 * M <= 7 * d**2),
        2 - M / d**2 <= COEFF * KAPPA,
        DOC + "#step-14",
    ),
]


def consistency_claims() -> list[Implication]:
    """BSPV and BSPV-near ≤ the exact cost of every standard-CDAG formula (d_v = d) where M ≤ d², as chains
    (docs/bounds/bspv.md#consistency)."""
    from attnio.bounds.constants import BSPV, BSPV_NEAR
    from attnio.bounds.costs import FORMULAS

    reg = (*_BASE, *BSPV.regime)
    both = (BSPV.id, BSPV_NEAR.id)  # the links after the first serve both chains
    first = "derivation"
    out: list[Link] = [
        relax("constants.bspv.relax", BSPV, LEAD,
              "[BSPV] BSPV ≤ (25/9)·N²d/√M where M ≤ d² and d_v = d (first link of BSPV ≤ every exact cost at "
              "d_v = d)", extra=(DV_EQ_D,), kind=first),
        relax("constants.bspv-near.relax", BSPV_NEAR, LEAD, "[BSPV-near] BSPV-near ≤ (25/9)·N²d/√M where M ≤ d² and "
              "d_v = d (first link of BSPV-near ≤ every exact cost at d_v = d; 2 − M/d² ≤ 25/9)", extra=(DV_EQ_D,),
              kind=first),
        Link("constants.bspv.via_large",
             "[BSPV] (25/9)·N²d/√M ≤ 4N²d²/M where M ≤ d² (then BS's links consistency.bs.le.X for the "
             "FlashAttention-style schedules, whose counts are ≥ 4N²d²/M at every M)",
             reg, LEAD <= 4 * N**2 * d**2 / M, both, kind=first),
        Link("constants.bspv.ceil_split4",
             "[BSPV] a₁, b₁, a₂, b₂ > 0, io ≥ ⌈N/a₁⌉·Nd + ⌈N/b₁⌉·Nd + ⌈d/b₂⌉·N² + ⌈N/a₂⌉·Nd ⇒ io ≥ N²d/a₁ + N²d/b₁ + "
             "N²d/b₂ + N²d/a₂ (⌈x⌉ ≥ x; square_tiling-io's two phases)",
             (*_BASE, a1 > 0, b1 > 0, a2 > 0, b2 > 0,
              Q >= ceil(N / a1) * N * d + ceil(N / b1) * N * d + ceil(d / b2) * N**2 + ceil(N / a2) * N * d),
             N**2 * d / a1 + N**2 * d / b1 + N**2 * d / b2 + N**2 * d / a2 <= Q, both, kind=first),
        Link("constants.bspv.tiles_amgm4",
             "[BSPV] a₁, b₁, a₂, b₂ ≥ 1, a₁b₁ ≤ M, a₂b₂ ≤ M, io ≥ N²d/a₁ + N²d/b₁ + N²d/b₂ + N²d/a₂ ⇒ io ≥ "
             "(25/9)·N²d/√M (AM–GM per phase: N²d/a + N²d/b ≥ 2N²d/√(ab))",
             (*_BASE, a1 >= 1, b1 >= 1, a2 >= 1, b2 >= 1, a1 * b1 <= M, a2 * b2 <= M,
              Q >= N**2 * d / a1 + N**2 * d / b1 + N**2 * d / b2 + N**2 * d / a2),
             LEAD <= Q, both, kind=first),
    ]
    out += [Link("constants." + link.replace("bs.", "bspv.", 1),
                 f"[BSPV] (25/9)·N²d/√M ≤ {to_text(mid)} where M ≤ d² (then BS's link consistency.bs.le.{name}: "
                 f"{name}'s count is ≥ that)", reg, LEAD <= mid, both, kind=first)
            for name, (mid, link) in sorted(VIA_BLOCKS.items()) if name in FORMULAS]
    for name in sorted(FORMULAS):
        if not _is_standard(name) or name in VIA_LARGE or name in VIA_BLOCKS:
            continue  # these link through BS's second links (consistency.bs.le.<name>), with bspv.via_large/_flash1
        fm = FORMULAS[name].with_dv_equal_d()
        if name == "square_tiling-io":
            bl = fm.blocks
            out += [
                to_cost(f"constants.consistency.bspv.{name}.phases", name, fm,
                        (bl["T_a"] + bl["T_b"] + bl["T_2"]) * N * d + bl["G"] * N**2,
                        f"[consistency] {name}: cost ≥ ⌈N/a₁⌉·Nd + ⌈N/b₁⌉·Nd + ⌈d/b₂⌉·N² + ⌈N/a₂⌉·Nd (Q and K read per "
                        "phase-1 tile, S and V per phase-2 tile; d_v = d; with bspv.ceil_split4)", base=reg, covers=both),
                to_cost(f"constants.consistency.bspv.{name}.tiles", name, fm, 0,
                        f"[consistency] {name}: its phase-1 tile fits, a₁·b₁ ≤ M (a₂·b₂ ≤ M is "
                        f"consistency.bs.{name}.tiles; with bspv.tiles_amgm4: cost ≥ (25/9)·N²d/√M)", base=reg,
                        covers=both, goal=bl["a1"] * bl["b1"] <= M),
            ]
            continue
        out.append(to_cost(f"constants.consistency.bspv.le.{name}", name, fm, LEAD,
                           f"[consistency] (25/9)·N²d/√M ≤ exact cost of {name} where M ≤ d² (d_v = d; with bspv.relax: "
                           "BSPV ≤ it)", base=reg, covers=both))
    return chain(out, DOC + "#consistency")


CLAIMS: list[Implication] = [*STEP_CLAIMS, *consistency_claims()]


# BSPV-cap (docs/bounds/bspv-cap.md): BSPV's count with the cap a_Q + a_K ≤ M + R kept on the complete pairs (no κ),
# value width d_v, segments of R = cM I/Os. Steps 8, 9, 12 and 13 are new; 10 and 11 are BS's combine and cubic at
# κ = 1, K = K′. Consistency at every M, d_v free: two first links (√2·N²(d + d_v)/√M, and (2/3)·N²d(d + d_v)/M for
# the FlashAttention-style loops), then one link per formula (square_tiling-io through its four phase terms).
from attnio.bounds.expr import minimum  # noqa: E402
from attnio.bounds.symbols import dv  # noqa: E402
from attnio.solver.claims.constants import c as c_ratio  # noqa: E402

CAP_DOC = "docs/bounds/bspv-cap.md"
cap_T = nonneg_real("seg_capT", "√(K′³/27), BSPV-cap's per-segment maximum of |Z_t|")
P1 = nonneg_real("seg_P1", "square_tiling-io's phase-1 words ⌈N/a₁⌉·Nd + ⌈N/b₁⌉·Nd")
P2 = nonneg_real("seg_P2", "square_tiling-io's phase-2 words ⌈d_v/b₂⌉·N² + ⌈N/a₂⌉·Nd_v")
CAP_G = 2 + c_ratio + (1 + c_ratio) ** 2 * M / (4 * d**2)  # K′/M at R = cM
CAP_SEG = M * sqrt(M) * CAP_G * sqrt(CAP_G / 27)  # √(K′³/27) at R = cM
CAP_LEAD_SQRT = sqrt(2) * N**2 * (d + dv) / sqrt(M)  # first link for the tiled schedules
CAP_LEAD_FLASH = Fraction(2, 3) * N**2 * d * (d + dv) / M  # first link for the FlashAttention-style loops


def _cap(id_: str, statement: str, hyps, concl, step: str = "", **kw) -> Implication:
    kw.setdefault("about", ("constants.bspv-cap",))
    return _base_claim(id_, "BSPV-cap", statement, hyps, concl, CAP_DOC + step, **kw)


CAP_STEP_CLAIMS: list[Implication] = [
    _cap(
        "bspv-cap.pairs",
        "complete pairs with the cap: d|I| ≤ a_Q, d|J| ≤ a_K, a_Q + a_K ≤ M + R ⇒ |I|·|J| ≤ (M + R)²/(4d²)",
        (d >= 1, d * I_rows <= aQ, d * J_cols <= aK, aQ + aK <= M + R),
        I_rows * J_cols <= _sq(M + R) / (4 * d**2),
        "#step-8",
    ),
    _cap(
        "bspv-cap.third",
        "pair face with the cap: x + |I||J| + o₁ ≤ K′ − s with s = a_Q + a_K + a_V + y + o₂, K′ = 2M + R + "
        "(M + R)²/(4d²), given a_Q + a_K + a_V + x + y ≤ M + r, o₁ + o₂ ≤ M + w, r + w ≤ R and |I||J| ≤ (M + R)²/(4d²)",
        (*_SEGMENT, c_pairs <= _sq(M + R) / (4 * d**2)),
        x + c_pairs + o1 <= 2 * M + R + _sq(M + R) / (4 * d**2) - s,
        "#step-9",
    ),
    _cap(
        "bspv-cap.segment",
        "R = cM (c > 0, K′ = g·M, g = 2 + c + (1 + c)²M/(4d²)): 27Y² ≤ K′³ ⇒ Y ≤ M√M·g·√(g/27)",
        (*_BASE, c_ratio > 0, 27 * _sq(Y) <= (M * CAP_G) ** 3),
        Y <= CAP_SEG,
        "#step-12",
    ),
    _cap(
        "bspv-cap.rearrange",
        "N²(d + d_v) products, T = √(K′³/27) the per-segment maximum (step 12): N²(d + d_v) ≤ h·T and Q ≥ R(h − 1) "
        "⇒ Q ≥ R·N²(d + d_v)/T − R (at R = cM, T = M√M·g·√(g/27): c·N²(d + d_v)/(√M·g·√(g/27)) − cM)",
        (*_BASE, R > 0, cap_T > 0, N**2 * (d + dv) <= h * cap_T, Q >= R * (h - 1)),
        Q >= R * N**2 * (d + dv) / cap_T - R,
        "#step-13",
    ),
]


# The FlashAttention-style loops (every count ≥ N²(d + d_v)²/M: K and V read once per block of fewer than M/(d + d_v)
# query rows) link through CAP_LEAD_FLASH; the tiled schedules through CAP_LEAD_SQRT. flash1 is not in the chain:
# its working set exceeds M (registry audit mode), so no pebbling bound speaks about its count, and at M = 1,
# d_v = 1 this bound is above it (tests/test_bspv_cap.py).
CAP_VIA_FLASH: frozenset[str] = frozenset({"flash1-fit", "flash2", "flash2-square", "kv_stationary", "split_v"})
# Loops whose direct link z3 does not decide quickly: name -> (its block of query rows, the ceiling ⌈N/block⌉ in
# its count). Their link goes through the block: count ≥ ⌈N/a⌉·N(d + d_v) (``….blocks``), a·(d + d_v) ≤ M
# (``….fits``), and bspv-cap.via_blocks.
CAP_VIA_BLOCKS: dict[str, tuple[str, str]] = {
    "flash2": ("a", "T_r"),
    "flash1-fit": ("c", "T_c"),
    "kv_stationary": ("b", "T_c"),
    "split_v": ("a", "T_r"),
}
CAP_NOT_COVERED: dict[str, str] = {"flash1": "working set exceeds M (audit mode): not a pebbling of M red pebbles"}


# The links of BSPV-cap's chains that no one formula owns: (id, statement, hypotheses beside _BASE, conclusion).
_CAP_LINKS = (
    ("bspv-cap.via_blocks",
     "a > 0, a·(d + d_v) ≤ M, io ≥ ⌈N/a⌉·N(d + d_v) ⇒ io ≥ (2/3)·N²d(d + d_v)/M (⌈x⌉ ≥ x: K and V read once "
     "per block of a query rows)",
     (a1 > 0, a1 * (d + dv) <= M, Q >= ceil(N / a1) * N * (d + dv)),
     CAP_LEAD_FLASH <= Q),
    ("bspv-cap.via_blocks_split_v",
     "a > 0, g = min(d, d_v), a·(d + g) ≤ M, io ≥ ⌈N/a⌉·(⌈d_v/g⌉·Nd + Nd_v) ⇒ io ≥ (2/3)·N²d(d + d_v)/M "
     "(split_v: K read ⌈d_v/g⌉ times and V once per block of a query rows)",
     (a1 > 0, a1 * (d + minimum(d, dv)) <= M, Q >= ceil(N / a1) * (ceil(dv / minimum(d, dv)) * N * d + N * dv)),
     CAP_LEAD_FLASH <= Q),
    ("bspv-cap.ceil_split.qk",
     "a₁, b₁ > 0 ⇒ ⌈N/a₁⌉·Nd + ⌈N/b₁⌉·Nd ≥ N²d/a₁ + N²d/b₁ (⌈x⌉ ≥ x; square_tiling-io's phase 1)",
     (a1 > 0, b1 > 0),
     N**2 * d / a1 + N**2 * d / b1 <= ceil(N / a1) * N * d + ceil(N / b1) * N * d),
    ("bspv-cap.ceil_split.pv",
     "a₂, b₂ > 0 ⇒ ⌈d_v/b₂⌉·N² + ⌈N/a₂⌉·Nd_v ≥ N²d_v/b₂ + N²d_v/a₂ (⌈x⌉ ≥ x; square_tiling-io's phase 2)",
     (a2 > 0, b2 > 0),
     N**2 * dv / b2 + N**2 * dv / a2 <= ceil(dv / b2) * N**2 + ceil(N / a2) * N * dv),
    ("bspv-cap.tiles_amgm.qk",
     "a₁, b₁ ≥ 1, a₁b₁ ≤ M, P₁ ≥ N²d/a₁ + N²d/b₁ ⇒ P₁ ≥ 2N²d/√M (AM–GM)",
     (a1 >= 1, b1 >= 1, a1 * b1 <= M, P1 >= N**2 * d / a1 + N**2 * d / b1),
     2 * N**2 * d / sqrt(M) <= P1),
    ("bspv-cap.tiles_amgm.pv",
     "a₂, b₂ ≥ 1, a₂b₂ ≤ M, P₂ ≥ N²d_v/b₂ + N²d_v/a₂ ⇒ P₂ ≥ 2N²d_v/√M (AM–GM)",
     (a2 >= 1, b2 >= 1, a2 * b2 <= M, P2 >= N**2 * dv / b2 + N**2 * dv / a2),
     2 * N**2 * dv / sqrt(M) <= P2),
    ("bspv-cap.phases_sum",
     "io ≥ P₁ + P₂, P₁ ≥ 2N²d/√M, P₂ ≥ 2N²d_v/√M ⇒ io ≥ √2·N²(d + d_v)/√M (square_tiling-io: 2 ≥ √2)",
     (Q >= P1 + P2, P1 >= 2 * N**2 * d / sqrt(M), P2 >= 2 * N**2 * dv / sqrt(M)),
     CAP_LEAD_SQRT <= Q),
)


def cap_consistency_claims() -> list[Implication]:
    """BSPV-cap ≤ the exact cost of every standard-CDAG formula but flash1 (d_v free, every M where the formula
    runs), as chains (docs/bounds/bspv-cap.md#consistency)."""
    from attnio.bounds.constants import BSPV_CAP, BSPV_CAP_CS, bspv_cap_form
    from attnio.bounds.costs import FORMULAS

    doc = "#consistency"
    reg = (*_BASE, *BSPV_CAP.regime)
    out: list[Implication] = [
        *(
            _cap(
                f"bspv-cap.relax_{what}.c{cv}",
                f"BSPV-cap's branch c = {cv} ≤ {to_text(lead)} at every M ({why}; the encoded bound is the max of the "
                "branches c ∈ {1, 2, 4}, each of which is ≤ it; first link for the " + whom + ")",
                reg,
                bspv_cap_form(cv) <= lead,
                doc,
            )
            for what, lead, why, whom in (
                ("sqrt", CAP_LEAD_SQRT, "g ≥ 2 + c and 27c² ≤ 2(2 + c)³", "tiled schedules"),
                ("flash", CAP_LEAD_FLASH, "c²·27·μ ≤ (4/9)·g³, μ = M/d²", "FlashAttention-style loops"),
            )
            for cv in BSPV_CAP_CS
        ),
        *(_cap(id_, text, (*_BASE, *hyps), goal, doc) for id_, text, hyps, goal in _CAP_LINKS),
    ]
    for name in sorted(FORMULAS):
        if not _is_standard(name) or name in CAP_NOT_COVERED:
            continue
        fm = FORMULAS[name]

        def link(id_: str, statement: str, goal, name: str = name, fm=fm) -> Implication:
            """``consistency.bspv-cap.<id_>``: ``goal`` wherever the formula runs, in BSPV-cap's regime."""
            return _cap(f"consistency.bspv-cap.{id_}", statement, (*reg, *fm.valid), goal, doc,
                        kind="consistency", about=("constants.bspv-cap", f"exact.{name}"))

        if name == "square_tiling-io":
            bl = fm.blocks
            out += [
                link(f"{name}.phases",
                     f"{name}: cost ≥ ⌈N/a₁⌉·Nd + ⌈N/b₁⌉·Nd + ⌈d_v/b₂⌉·N² + ⌈N/a₂⌉·Nd_v (Q and K read per phase-1 "
                     "tile, S and V per phase-2 tile; then bspv-cap.ceil_split.*, tiles_amgm.*, phases_sum)",
                     (bl["T_a"] + bl["T_b"]) * N * d + bl["T_2"] * N * dv + bl["G"] * N**2 <= fm.io),
                link(f"{name}.tiles1", f"{name}: its phase-1 tile fits, a₁·b₁ ≤ M, at every M where it runs",
                     bl["a1"] * bl["b1"] <= M),
                link(f"{name}.tiles2",
                     f"{name}: its phase-2 tile fits, a₂·b₂ ≤ M, at every M where it runs, d_v free (with "
                     "bspv-cap.tiles_amgm.pv)",
                     bl["a2"] * bl["b2"] <= M),
            ]
        elif name in CAP_VIA_BLOCKS:
            blk, ceil_key = (fm.blocks[k] for k in CAP_VIA_BLOCKS[name])
            split = name == "split_v"  # K read ⌈d_v/g⌉ times per block, g = min(d, d_v) (bspv-cap.via_blocks_split_v)
            width = d + minimum(d, dv) if split else d + dv
            per_block = fm.blocks["G"] * N * d + N * dv if split else N * (d + dv)
            out += [
                link(f"{name}.blocks",
                     f"{name}: cost ≥ ⌈N/a⌉·{to_text(per_block)}, a = {to_text(blk)} (K and V read once per block; "
                     "with bspv-cap.via_blocks" + ("_split_v" if split else "") + " and bspv-cap.relax_flash.c*)",
                     ceil_key * per_block <= fm.io),
                link(f"{name}.fits", f"{name}: its block fits, a·({to_text(width)}) ≤ M, a = {to_text(blk)}", blk * width <= M),
                link(f"{name}.positive", f"{name}: its block is positive, a = {to_text(blk)} ≥ 1 where it runs", blk >= 1),
            ]
        else:
            lead, via = (CAP_LEAD_FLASH, "relax_flash") if name in CAP_VIA_FLASH else (CAP_LEAD_SQRT, "relax_sqrt")
            out.append(link(f"le.{name}", f"{to_text(lead)} ≤ exact cost of {name} at every M where it runs, d_v free (with "
                            f"bspv-cap.{via}.c*: BSPV-cap ≤ it)", lead <= fm.io))
    return out


CLAIMS.extend([*CAP_STEP_CLAIMS, *cap_consistency_claims()])
