"""The seed claims: Saha–Ye and FlashAttention identities, regime coverage, every exact cost against every
explicit lower bound, tightest constants and derived crossovers.

Claims about cost formulas are generated from :data:`bounds.costs.FORMULAS` (with dv = d), so a new formula gets
its ``wd.*``, ``trivial.*`` and ``consistency.*`` claims by itself. Each ``tight.*`` claim is built from the
catalog bound it tightens (its spec in :data:`attnio.solver.claims.tight.SPECS`: the bound's shape and regime), and
names that bound and the exact cost in its ``about``; ``crossover.*`` claims are written for named algorithms. Regimes and the Saha–Ye shapes
come from the catalog (:mod:`attnio.bounds.catalog`), where they are defined once.

Id scheme: ``<topic>.<what>[.<algorithm>]``.
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.catalog import (
    CACHE_REGIMES,
    FA_REGIME,
    NOT_IO,
    SMALL,
    SY_LARGE,
    SY_SMALL,
    explicit_io_lower_bounds,
    seed_bounds,
)
from attnio.bounds.expr import Expr, ceil, eq, log2, maximum, minimum, sqrt
from attnio.bounds.symbols import M, N, d, sym
from attnio.solver.claims.build import Link, chain, leading_crossover, links, relax, tight_claims, to_cost
from attnio.solver.claims.tight import SPECS
from attnio.solver.claims.types import Claim, Coverage, Crossover, Implication
from attnio.solver.logic import All, Iff

# A real L ≥ 1 standing for log₂ N in the Thm 4.14 links (sy.log2-ge-1 proves log₂ N ≥ 1 for N ≥ 2).
LOG2_N = sym("log2N", integer=False, lo=1, doc="a real L ≥ 1 in place of log₂ N (claims sy.thm4.14.*; sy.log2-ge-1)")
# The two sides of Saha–Ye Thm 3.1, which most identities about its two shapes are about.
SY31 = ("sy.thm3.1.lower", "sy.thm3.1.upper")


def _formulas() -> dict:
    from attnio.bounds.costs import FORMULAS

    return {name: f.with_dv_equal_d() for name, f in sorted(FORMULAS.items())}


# ------------------------------------------------------------------------------------------------ identities
def saha_ye_claims() -> list[Claim]:
    h = sym("h", doc="number of parts of a 2M-partition (Hong–Kung Lemma 2.8)")
    Bs = sym("Bstar", integer=False, lo=0, doc="B*: QKᵀ entries computed in the best epoch (Saha–Ye Thm 4.4)")
    T = sym("T", doc="number of epochs of at most M I/Os (Saha–Ye Lemma 4.1)")
    P = "Saha & Ye, arXiv 2402.07443"
    rows = [  # (id, kind, description, hypotheses, goal, provenance, about)
        ("sy.meet", "identity",
         "Saha–Ye's two formulas meet at M = d²: N²d/√M = N²d²/M = N² there.",
         (eq(M, d**2),), All((eq(SY_SMALL, SY_LARGE), eq(SY_LARGE, N**2))),
         f"{P}, Thm 3.1", SY31),
        ("sy.min-branch.small", "branch",
         "For M ≤ d², min(N²d/√M, N²d²/M) = N²d/√M (the small-cache branch).",
         SMALL, eq(minimum(SY_SMALL, SY_LARGE), SY_SMALL),
         f"{P}, Thm 3.1", SY31),
        ("sy.min-branch.large", "branch",
         "For M ≥ d², min(N²d/√M, N²d²/M) = N²d²/M (the large-cache branch).",
         (d**2 <= M,), eq(minimum(SY_SMALL, SY_LARGE), SY_LARGE),
         f"{P}, Thm 3.1", SY31),
        ("sy.n2-free-small-cache", "iff",
         "N² ≤ N²d/√M exactly when M ≤ d²: writing all of QKᵀ (N² words) is free with a small cache.",
         (), Iff(N**2 <= SY_SMALL, M <= d**2),
         f"{P}, §3.2 (Thm 3.7 proof)", ("sy.thm3.7",)),
        ("sy.thm4.8-branch", "iff",
         "min(N²d²/M, N²) = N²d²/M exactly when M ≥ d² (Thm 4.8 matches FlashAttention there).",
         (), Iff(eq(minimum(SY_LARGE, N**2), SY_LARGE), d**2 <= M),
         f"{P}, Thm 4.8", ("sy.thm4.8",)),
        ("sy.fa-over-st.leading", "iff",
         "N²d²/M ÷ N²d/√M = d/√M, which exceeds 1 exactly when M < d².",
         (), All((eq(SY_LARGE / SY_SMALL, d / sqrt(M)), Iff(1 < d / sqrt(M), M < d**2))),
         f"{P}, §3 regime map", SY31),
        # Thm 4.14 in two links each (cvc5 does not decide the forms with log₂ N, whose translation brackets log₂
        # on 49 intervals, within its limits): log₂ N ≥ 1 for N ≥ 2, then the statement for every real L ≥ 1
        # (LOG2_N), which gives it at L = log₂ N.
        ("sy.log2-ge-1", "inequality",
         "For N ≥ 2, log₂ N ≥ 1 (the first link of sy.thm4.14.below-fa and sy.thm4.14-branch, which hold for "
         "every real L ≥ 1 in place of log₂ N).",
         (2 <= N,), 1 <= log2(N),
         f"{P}, Thm 4.14", ("sy.thm4.14",)),
        ("sy.thm4.14.below-fa", "inequality",
         "For every real L ≥ 1, N²d²/(M·L²) ≤ FlashAttention's N²d²/M; with sy.log2-ge-1 (log₂ N ≥ 1 for N ≥ 2), "
         "the binary bound's first branch N²d²/(M log² N) is at most N²d²/M: the log² N gap of Thm 4.14 only "
         "ever weakens the bound.",
         (), N**2 * d**2 / (M * LOG2_N**2) <= SY_LARGE,
         f"{P}, Thm 4.14", ("sy.thm4.14",)),
        ("sy.thm4.14-branch", "branch",
         "For every real L ≥ 1 and M ≥ d², min(N²d²/(M·L²), N²) = N²d²/(M·L²); with sy.log2-ge-1, for N ≥ 2 "
         "and M ≥ d², min(N²d²/(M log² N), N²) = N²d²/(M log² N): the large-cache branch.",
         (d**2 <= M,), eq(minimum(N**2 * d**2 / (M * LOG2_N**2), N**2), N**2 * d**2 / (M * LOG2_N**2)),
         f"{P}, Thm 4.14", ("sy.thm4.14",)),
        ("fa.prop3.at-Nd", "identity",
         "At M = Nd, N²d²/M = Nd: FlashAttention Prop 3 only restates the trivial Ω(Nd) there.",
         (eq(M, N * d),), eq(SY_LARGE, N * d),
         "Dao et al. 2205.14135, Prop 3", ("fa.prop3",)),
        # derivation steps of the explicit constants (docs/bounds/saha-ye-*.md)
        ("sy.lemma3.4.step-parts", "derivation",
         "For M ≥ d²: 4M²/d² + 4M ≤ 8M²/d² (trees met by one part of a 2M-partition).",
         (d**2 <= M,), 4 * M**2 / d**2 + 4 * M <= 8 * M**2 / d**2,
         "docs/bounds/saha-ye-lemma3.4-explicit.md", ("sy.lemma3.4", "sy.lemma3.4.explicit", "sy.lemma3.3.explicit")),
        ("sy.lemma3.4.step-io", "derivation",
         "h ≥ N²/(4M²/d² + 4M) parts and M ≥ d² give Q ≥ M(h − 1) ≥ N²d²/(8M) − M.",
         (d**2 <= M, N**2 / (4 * M**2 / d**2 + 4 * M) <= h), N**2 * d**2 / (8 * M) - M <= M * (h - 1),
         "docs/bounds/saha-ye-lemma3.4-explicit.md", ("sy.lemma3.4", "sy.lemma3.4.explicit")),
        ("sy.thm4.8.step-bstar", "derivation",
         "min(d·√(B*/2), B*/4) ≤ 2M implies B* ≤ max(8M²/d², 8M) (Thm 4.4 + Lemma 4.6, log q cancelled).",
         (minimum(d * sqrt(Bs / 2), Bs / 4) <= 2 * M,), Bs <= maximum(8 * M**2 / d**2, 8 * M),
         "docs/bounds/saha-ye-thm4.8-explicit.md", ("sy.thm4.8", "sy.thm4.8.explicit")),
        ("sy.thm4.8.step-io", "derivation",
         "T ≥ N²/B* epochs with 0 < B* ≤ max(8M²/d², 8M) give Q ≥ (T − 1)M ≥ min(N²d²/(8M), N²/8) − M.",
         (0 < Bs, Bs <= maximum(8 * M**2 / d**2, 8 * M), N**2 / Bs <= T), minimum(N**2 * d**2 / (8 * M), N**2 / 8) - M <= (T - 1) * M,
         "docs/bounds/saha-ye-thm4.8-explicit.md", ("sy.thm4.8", "sy.thm4.8.explicit")),
    ]
    return [Implication(id_, kind, text, hyps, goal, provenance=prov, about=about)
            for id_, kind, text, hyps, goal, prov, about in rows]


def coverage_claims() -> list[Claim]:
    return [
        Coverage(
            "coverage.saha-ye",
            "Saha–Ye's regimes small (M < d²), large (d² ≤ M ≤ Nd) and beyond (M > Nd) partition all (N, d, M) "
            "with d ≤ N (for d > N the small and beyond regimes overlap).",
            (d <= N,),
            tuple((name.split()[0], rels) for name, _, rels in CACHE_REGIMES),
            provenance="Saha & Ye §3, docs/model.md",
            about=SY31,
        ),
        Coverage(
            "coverage.flash-thm2",
            "FlashAttention Thm 2's range d ≤ M ≤ Nd and its complements M < d, M > Nd partition all (N, d, M).",
            (),
            (("below", (M < d,)), ("fa", FA_REGIME), ("above", (N * d < M,))),
            provenance="Dao et al. Thm 2, docs/model.md",
            about=("fa.thm2.standard", "fa.thm2.flash"),
        ),
        Coverage(
            "coverage.li-backward",
            "Li et al.'s backward-pass branches (M ≤ d²: (N²d + Nd²)/√M; M > d²: (N²d² + Nd³)/M) partition M ≥ 1.",
            (),
            (("small", (M <= d**2,)), ("large", (d**2 < M,))),
            provenance="Li et al. 2410.09397",
            about=("li.backward.lower", "li.backward.upper"),
        ),
        Implication(
            "li.backward.branch",
            "iff",
            "Li et al.'s two backward formulas: (N²d + Nd²)/√M ≤ (N²d² + Nd³)/M exactly when M ≤ d².",
            (),
            Iff((N**2 * d + N * d**2) / sqrt(M) <= (N**2 * d**2 + N * d**3) / M, M <= d**2),
            provenance="Li et al. 2410.09397",
            about=("li.backward.lower", "li.backward.upper"),
        ),
    ]


def smith_claims() -> list[Claim]:
    # Row streaming for C = A·B with m = n = N, k = d (hold M/(d+1) rows of A, stream B's columns, write C):
    # reads Nd + N²d(d+1)/M, writes N². Leading-order reads vs the reads-only 2mnk/√M.
    reads_lead = N**2 * d * (d + 1) / M
    return [
        Crossover(
            "smith.precondition.crossover",
            "The reads-only 2N²k/√M stays below row streaming's leading-order reads N²k(k+1)/M exactly while "
            "4M/(k+1)² < 1, and row streaming reads no more from 4M/(k+1)² ≥ 1 on (derived along that axis): the "
            "precondition k ≥ 2√M − 1 for reading Smith et al.'s bound as reads-only (m = n = N, k = d).",
            (),
            a=2 * N**2 * d / sqrt(M),
            b=reads_lead,
            axis=4 * M / (d + 1) ** 2,
            lo=Fraction(1, 16),
            hi=Fraction(16),
            precision=Fraction(1, 64),
            a_name="2mnk/√M",
            b_name="row-streaming reads",
            axis_name="4M/(k+1)²",
            provenance="docs/bounds/smith-mm-precondition.md",
            about=("smith.mm", "constants.mm.row-stream"),
        ),
        Implication(
            "smith.total-io-consistent",
            "inequality",
            "Counting the N² writes of C too, row streaming never beats 2mnk/√M in leading order: "
            "N²k(k+1)/M + N² ≥ 2N²k/√M for all k, M (since (√M − k)² + k ≥ 0).",
            (),
            reads_lead + N**2 >= 2 * N**2 * d / sqrt(M),
            provenance="docs/bounds/smith-mm-precondition.md",
            about=("smith.mm", "constants.mm.row-stream"),
        ),
        Implication(
            "smith.cosma-form-fails",
            "iff",
            "COSMA's 2mnk/√M + mn exceeds row streaming's leading order N²k(k+1)/M + N² exactly when "
            "k + 1 < 2√M, so it must not be used for short inner dimensions.",
            (),
            Iff(reads_lead + N**2 < 2 * N**2 * d / sqrt(M) + N**2, (d + 1) ** 2 < 4 * M),
            provenance="docs/bounds/smith-mm-precondition.md",
            about=("constants.cosma.thm1", "constants.mm.row-stream"),
        ),
    ]


def leading_crossover_claims() -> list[Claim]:
    square_tiling = 8 * SY_SMALL + N**2  # its leading count (Saha & Ye §4.2)
    return [
        leading_crossover(
            "crossover.sy.leading",
            "N²d/√M < N²d²/M (square tiling's shape beats FlashAttention's) exactly below M = d²: derived along "
            "M/d².",
            SY_SMALL, SY_LARGE, "N²d/√M", "N²d²/M",
            hi=Fraction(16), provenance="Saha & Ye Thm 3.1",
            about=SY31,
        ),
        *(
            leading_crossover(f"crossover.leading.square_tiling.{fa}", text, square_tiling, c * SY_LARGE,
                              "8N²d/√M + N²", f"{c}N²d²/M", hi=Fraction(4), provenance=prov,
                              about=("exact.square_tiling", f"exact.{fa}"))
            for fa, c, text, prov in (  # FlashAttention's schedule, its leading constant, description, provenance
                ("flash1", 12, "Leading terms with constants: square tiling 8N²d/√M + N² against flash1's 12N²d²/M; "
                 "boundary on M/d² derived (t = √M/d solves 12/t² = 8/t + 1, so M/d² = (√28 − 4)² = 44 − 16√7 ≈ "
                 "1.668).", "Saha & Ye §4.2 (both leading counts)"),
                ("flash2", 4, "Leading terms with constants: square tiling 8N²d/√M + N² against flash2's 4N²d²/M. The "
                 "boundary on M/d² is derived (it is 36 − 16√5 ≈ 0.2229, not 1).",
                 "Saha & Ye §4.2 (square tiling count); docs/costs.md (flash2)"),
            )
        ),
    ]


# --------------------------------------------------------------------------------------------- cost formulas
def formula_claims() -> list[Claim]:
    out: list[Link | Claim] = []
    fs = _formulas()
    # the seed catalog's explicit lower bounds (optional modules check their own, e.g. attnio.solver.claims.constants)
    seed_ids = {b.id for b in seed_bounds()}
    lbs = [b for b in explicit_io_lower_bounds() if b.id in seed_ids and b.id != "trivial.4Nd"]
    for name, f in fs.items():
        out += [
            Link(f"wd.{name}", f"{name}'s cost formula is defined wherever it claims to be valid "
                 f"({'; '.join(map(str, f.valid))}): every denominator > 0 (every floor used as a block count ≥ 1).",
                 f.valid, f.io >= 0, (f"exact.{name}",), kind="well-defined", doc=f.derivation),
            to_cost(f"trivial.{name}", name, f, 4 * N * d,
                    f"{name} never moves fewer than 4Nd words, for any N, d, M where it runs (trivial bound).", base=(),
                    covers=("trivial.4Nd",), goal=f.io >= 4 * N * d, doc="docs/bounds/trivial.md"),
        ]
        for b in lbs:
            if (b.id, name) in VIA_LINKS:
                out += _via_links(b, name, f)
                continue
            out.append(to_cost(f"consistency.{b.id}.{name}", name, f, b.expr,
                               f"{name}'s exact cost ≥ {b.id} ({b.expr}) wherever both apply.", base=tuple(b.regime),
                               covers=(b.id,), goal=f.io >= b.expr, doc=b.provenance))
    # explicit lower ≤ explicit upper bounds of the catalog (other modules may add explicit upper bounds)
    uppers = [
        b
        for b in seed_bounds()
        if b.kind == "upper" and b.explicit and b.id not in NOT_IO and _io_symbols(b.expr)
    ]
    out += [relax(f"consistency.{lb.id}.{ub.id}", lb, ub.expr, f"{lb.id} ≤ {ub.id} wherever both apply.", base=(),
                  extra=tuple(ub.regime), about=(lb.id, ub.id), doc=f"{lb.provenance}; {ub.provenance}")
            for lb in lbs for ub in uppers]
    # tightest constants (solver/claims/tight.py): each built from the catalog bound it tightens
    out += [c for spec in SPECS if not spec.backward for c in tight_claims(spec)]
    # square tiling against FlashAttention, exact costs
    if "square_tiling" in fs and "flash2" in fs:
        st, fb = fs["square_tiling"], fs["flash2"]
        out.append(
            Crossover(
                "crossover.square_tiling.flash2",
                "Where square tiling's exact cost is strictly below flash2's, along M/d², for d ≥ 16 and N ≥ 64d "
                "(realistic heads; lower-order terms do not decide): derived by bisection, both sides proved.",
                (16 <= d, 64 * d <= N) + st.valid + fb.valid,
                a=st.io,
                b=fb.io,
                axis=M / d**2,
                lo=Fraction(1, 8),
                hi=Fraction(1),
                precision=Fraction(1, 16),
                a_name="square_tiling",
                b_name="flash2",
                axis_name="M/d²",
                provenance=f"{st.derivation}; {fb.derivation}",
                about=("exact.square_tiling", "exact.flash2"),
            )
        )
    return chain(out, "")


# Consistency claims that cvc5 does not decide in one piece (nested floors of the block sizes): each goes through
# a middle term, as links (docs/solver.md#second-opinion). lemma3.4.explicit ≤ square_tiling-io: N²d²/(8M) − M ≤ N²
# where M ≥ d² (sy.lemma3.4.explicit.le-n2), N² ≤ cost (it writes S). thm4.8.explicit ≤ split_v: the bound is
# ≤ N²d²/(8M) − M (sy.thm4.8.explicit.le-large), cost ≥ ⌈N/a⌉·Nd (Q read once per block of a rows), 1 ≤ a,
# a·d ≤ M (its tile fits), then sy.explicit.rows: ⌈N/a⌉·Nd ≥ N²d²/M ≥ N²d²/(8M) − M.
VIA_LINKS = {("sy.lemma3.4.explicit", "square_tiling-io"): "n2", ("sy.thm4.8.explicit", "split_v"): "rows"}
ROWS_A = sym("rows_a", integer=False, lo=0, doc="a block of rows (claim sy.explicit.rows, at split_v's a)")
ROWS_Q = sym("rows_Q", integer=False, lo=0, doc="words moved (claim sy.explicit.rows)")


def generic_via_links() -> list[Claim]:
    """The formula-free links of :data:`VIA_LINKS` (each proved once, for every real value of its symbols)."""
    P = "docs/bounds/saha-ye-lemma3.4-explicit.md; docs/bounds/saha-ye-thm4.8-explicit.md"
    return [
        Implication(
            "sy.lemma3.4.explicit.le-n2",
            "inequality",
            "For M ≥ d², N²d²/(8M) − M ≤ N² (the first link of consistency.sy.lemma3.4.explicit.square_tiling-io: "
            "with ….n2, N² ≤ its cost, the bound is ≤ the cost).",
            (d**2 <= M,),
            N**2 * d**2 / (8 * M) - M <= N**2,
            provenance=P,
            about=("sy.lemma3.4.explicit",),
        ),
        Implication(
            "sy.thm4.8.explicit.le-large",
            "inequality",
            "min(N²d²/(8M), N²/8) − M ≤ N²d²/(8M) − M (the first link of consistency.sy.thm4.8.explicit.split_v).",
            (),
            minimum(N**2 * d**2 / (8 * M), N**2 / 8) - M <= N**2 * d**2 / (8 * M) - M,
            provenance=P,
            about=("sy.thm4.8.explicit",),
        ),
        Implication(
            "sy.explicit.rows",
            "inequality",
            "a > 0, a·d ≤ M, Q ≥ ⌈N/a⌉·Nd ⇒ Q ≥ N²d²/(8M) − M (⌈N/a⌉ ≥ N/a ≥ Nd/M; the last link of "
            "consistency.sy.thm4.8.explicit.split_v, at split_v's a).",
            (0 < ROWS_A, ROWS_A * d <= M, ceil(N / ROWS_A) * N * d <= ROWS_Q),
            N**2 * d**2 / (8 * M) - M <= ROWS_Q,
            provenance=P,
            about=("sy.thm4.8.explicit",),
        ),
    ]


def _via_links(b, name: str, f) -> list[Claim]:
    """The formula-side links of ``consistency.<b.id>.<name>`` (:data:`VIA_LINKS`), which with
    :func:`generic_via_links` imply it."""
    cid = f"consistency.{b.id}.{name}"
    if VIA_LINKS[(b.id, name)] == "n2":
        steps: list[tuple] = [
            ("n2", f"{name}'s exact cost ≥ N² (it writes S) wherever {b.id} applies; with sy.lemma3.4.explicit.le-n2: "
             f"its cost ≥ {b.id} ({b.expr}).", (), N**2 <= f.io),
        ]
    else:
        a = f.blocks["a"]
        steps = [
            ("rows", f"{name}'s exact cost ≥ ⌈N/a⌉·Nd (Q read once per block of a rows; d_v = d); with {cid}.tiles, "
             f"sy.explicit.rows and sy.thm4.8.explicit.le-large: its cost ≥ {b.id} ({b.expr}).", (),
             ceil(N / a) * N * d <= f.io),
            ("tiles", f"{name}'s row block fits: 1 ≤ a and a·d ≤ M (a link of {cid}).", (), All((1 <= a, a * d <= M))),
        ]
    return links(cid, tuple(b.regime) + f.valid, steps, (b.id, f"exact.{name}"), kind="consistency",
                 provenance=f"{b.provenance}; {f.derivation}")


def _io_symbols(e: Expr) -> bool:
    from attnio.bounds.expr import free_symbols

    return {s.name for s in free_symbols(e)} <= {"N", "d", "M"}


def trivial_dv_claims() -> list[Claim]:
    """``trivial.dv.<name>``: every exact forward cost ≥ 2Nd + 2N·d_v (trivial.4Nd for every d_v), over the formula with
    d_v free (the ``trivial.<name>`` claims are its d_v = d case, 4Nd)."""
    from attnio.bounds.costs import FORMULAS
    from attnio.bounds.symbols import dv

    return [
        Implication(
            f"trivial.dv.{name}",
            "consistency",
            f"{name} never moves fewer than 2Nd + 2N·d_v words, for any N, d, d_v, M where it runs (trivial bound, any d_v).",
            f.valid,
            f.io >= 2 * N * d + 2 * N * dv,
            provenance="docs/bounds/trivial.md",
            about=("trivial.4Nd", f"exact.{name}"),
        )
        for name, f in sorted(FORMULAS.items())
    ]


def claims() -> list[Claim]:
    return (saha_ye_claims() + coverage_claims() + smith_claims() + leading_crossover_claims() + formula_claims()
            + generic_via_links() + trivial_dv_claims())

