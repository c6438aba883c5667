"""z3 claims about approximate attention by the polynomial method (bounds/approx.py). All **derived here**
(docs/approx.md §6); the seed paper (arXiv 2605.23751) is known only by its abstract.

r, the rank of the feature map, is its own positive integer symbol: for the polynomial method r = C(d+g, g),
which is not a polynomial in (d, g), so every claim is proved for *every* r ≥ 1 (and so for every g).

- the three schedules' regimes partition all (N, d, M, r) where poly runs, and each schedule runs in its regime;
- the exact formulas are well defined there; streaming equals the trivial bound 4Nd;
- each lower bound (bounds.approx.BOUNDS) ≤ the exact cost of the schedules in its class, and the algebraic steps
  of the class-restricted bounds (matmul, accumulator, two-phase, output-accumulator: docs/approx.md §5);
- where approximation beats exact attention: streaming always beats flash2; with M ≥ d² and M ≤ Nd/16,
  feature-chunked beats flash2 when r ≤ N/4 and loses when r ≥ 3N (exact formulas, ceilings included); in
  leading terms the boundary is exactly r = 4N/3 (derived along r/N), and the chunked/tiled switch is exactly
  at M = 9d²/16 (an iff); with M < d², the tiled schedule's leading terms
  beat flash2's when r ≤ N/4, and square tiling's (the best exact small-cache algorithm) when r ≤ 3N/2, and
  lose to square tiling's when r ≥ 2N (leading terms only: the exact small-cache formula is beyond the
  solver's budget).
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds import approx as A
from attnio.bounds.costs import FORMULAS
from attnio.bounds.expr import ceil, eq, floor, sqrt, substitute
from attnio.bounds.symbols import M, N, d, sym
from attnio.solver.claims.build import leading_crossover
from attnio.solver.claims.types import Claim, Coverage, Implication
from attnio.solver.logic import All, Any, Iff

r = A.r
P = "derived here, docs/approx.md"
ST, CH, TI = A.FORMULAS["stream"], A.FORMULAS["chunked"], A.FORMULAS["tiled"]
FL = FORMULAS["flash2"].with_dv_equal_d()

DOMAIN = (5 <= M, d + 1 <= M)  # poly runs (the tiled schedule's minimum)
REGIME_STREAM = (A.STREAM_MIN_M <= M,)
REGIME_CHUNKED = (M < A.STREAM_MIN_M, d**2 <= M, A.CHUNKED_MIN_M <= M)
REGIME_TILED = (M < A.STREAM_MIN_M, Any((M < d**2, M < A.CHUNKED_MIN_M)))
LARGE = (d**2 <= M, 16 * M <= N * d)  # large cache, and the cache small against the problem (N ≥ 16M/d)
# reals standing for block sizes and counts in the links of approx.beats.chunked.flash2 (docs/approx.md)
_BLK_A = sym("blk_a", integer=False, lo=0, doc="a row block (approx.beats.chunked.flash2.chunks: flash2's a)")
_BLK_C = sym("blk_c", integer=False, lo=0, doc="a feature chunk (approx.beats.chunked.flash2.chunks: c_max)")
_BLK_T = sym("blk_T", integer=False, lo=0, doc="flash2's row-block count T_r (approx.beats.chunked.flash2)")
_BLK_TF = sym("blk_Tf", integer=False, lo=0, doc="chunked's feature-chunk count T_f (approx.beats.chunked.flash2)")
_BLK_TQ = sym("blk_Tq", integer=False, lo=0, doc="chunked's query-block count T_q (approx.beats.chunked.flash2)")


def _claims() -> list[Claim]:
    out: list[Claim] = [
        Coverage(
            "approx.coverage.regimes",
            "The regimes streaming (M ≥ r(d+2) + 2d), feature-chunked (d² ≤ M < r(d+2) + 2d, M ≥ 3d + 3) and tiled "
            "(the rest: M < d² or M < 3d + 3) partition every (N, d, M, r) with M ≥ max(d + 1, 5).",
            DOMAIN,
            (("stream", REGIME_STREAM), ("chunked", REGIME_CHUNKED), ("tiled", REGIME_TILED)),
            provenance=P,
            about=("approx.poly.stream.exact", "approx.poly.chunked.exact", "approx.poly.tiled.exact"),
        ),
        *[
            Implication(
                f"approx.regime-runs.{name}",
                "well-defined",
                f"The {name} schedule runs in its regime: its validity conditions hold there (within the domain).",
                DOMAIN + regime,
                All(f.valid),
                provenance=P,
                about=(f"approx.poly.{name}.exact",),
            )
            for name, regime, f in (("stream", REGIME_STREAM, ST), ("chunked", REGIME_CHUNKED, CH), ("tiled", REGIME_TILED, TI))
        ],
        Implication(
            "approx.wd.chunked",
            "well-defined",
            "Where the chunked schedule runs (M ≥ 3d + 3), its block counts c_max and b_max are ≥ 1.",
            CH.valid,
            All((1 <= A.chunk_c_max, 1 <= A.chunk_b_max)),
            provenance=P,
            about=("approx.poly.chunked.exact",),
        ),
        Implication(
            "approx.wd.tiled",
            "well-defined",
            "Where the tiled schedule runs (M ≥ max(d + 1, 5)), w = min(d, ⌊√M⌋ − 1), t_B and b_max are ≥ 1.",
            TI.valid,
            All((1 <= A.tiled_w, 1 <= A.tiled_tB, 1 <= A.tiled_b_max)),
            provenance=P,
            about=("approx.poly.tiled.exact",),
        ),
        Implication(
            "approx.stream.equals-trivial",
            "identity",
            "The streaming schedule moves exactly 4Nd words: the trivial lower bound.",
            ST.valid,
            eq(ST.io, 4 * N * d),
            provenance=P,
            about=("approx.poly.stream.exact", "approx.lower.trivial"),
        ),
        *[
            Implication(
                cid,
                "consistency",
                f"approx.lower.trivial (4Nd) ≤ the {name} schedule's exact I/O.",
                f.valid,
                4 * N * d <= f.io,
                provenance=P,
                about=("approx.lower.trivial", f"approx.poly.{name}.exact"),
            )
            for cid, name, f in (("approx.consistency.trivial.chunked", "chunked", CH), ("approx.consistency.trivial.tiled", "tiled", TI))
        ],
        *[
            Implication(
                cid,
                "consistency",
                text,
                f.valid,
                N * r * d / M - r * d <= f.reads,
                provenance=P,
                about=("approx.lower.accumulator", exact),
            )
            for cid, text, f, exact in (
                (
                    "approx.consistency.accumulator.stream",
                    "approx.lower.accumulator (Nrd/M − rd) ≤ the streaming schedule's reads (it is a resident-accumulator algorithm).",
                    ST,
                    "approx.poly.stream.exact",
                ),
            )
        ],
        # chunked as two links: cvc5 ran past its guard on the one-piece form once T_q = ⌈N/⌊(M − 1)/(d + 3)⌋⌉
        # (docs/approx.md §4.2); each link takes about a second.
        Implication(
            "approx.consistency.accumulator.chunked.features",
            "consistency",
            "approx.lower.accumulator ≤ the chunked schedule's reads, link 1 of 2: Nrd/M − rd ≤ 2Nd·T_f "
            "(T_f = ⌈r/c_max⌉ ≥ r(d+2)/M).",
            CH.valid,
            N * r * d / M - r * d <= 2 * N * d * A.chunk_Tf,
            provenance=P,
            about=("approx.lower.accumulator", "approx.poly.chunked.exact"),
        ),
        Implication(
            "approx.consistency.accumulator.chunked",
            "consistency",
            "approx.lower.accumulator ≤ the chunked schedule's reads (a resident-accumulator algorithm), link 2 of 2: "
            "2Nd·T_f ≤ the reads (their other terms are ≥ 0). With link 1 (.features): Nrd/M − rd ≤ the reads.",
            CH.valid,
            2 * N * d * A.chunk_Tf <= CH.reads,
            provenance=P,
            about=("approx.lower.accumulator", "approx.poly.chunked.exact"),
        ),
        # approx.lower.matmul (Nrd/(3√M) − M) ≤ the tiled schedule's exact I/O, proved as a chain of two links
        # through the feature-write term 2·N·r·T_c (T_c = ⌈d/w⌉, w ≤ √M − 1): the one-shot form sometimes ran
        # past z3's wall-clock cap (its portfolio's time slices), the two links take well under a second each.
        Implication(
            "approx.consistency.matmul.tiled.link1",
            "consistency",
            "approx.lower.matmul ≤ the tiled schedule's exact I/O, link 1 of 2: Nrd/(3√M) − M ≤ 2·N·r·⌈d/w⌉ "
            "(w = min(d, ⌊√M⌋ − 1) ≤ √M).",
            TI.valid,
            N * r * d / (3 * sqrt(M)) - M <= 2 * N * r * A.tiled_Tc,
            provenance=P,
            about=("approx.lower.matmul", "approx.poly.tiled.exact"),
        ),
        Implication(
            "approx.consistency.matmul.tiled.link2",
            "consistency",
            "approx.lower.matmul ≤ the tiled schedule's exact I/O, link 2 of 2: 2·N·r·⌈d/w⌉ ≤ the exact I/O (its "
            "other terms are ≥ 0). With link 1: Nrd/(3√M) − M ≤ the tiled schedule's exact I/O.",
            TI.valid,
            2 * N * r * A.tiled_Tc <= TI.io,
            provenance=P,
            about=("approx.lower.matmul", "approx.poly.tiled.exact"),
        ),
        Implication(
            "approx.beats.stream.flash2",
            "inequality",
            "Wherever streaming runs (and flash2 runs), it moves strictly fewer words than flash2.",
            ST.valid + FL.valid,
            ST.io < FL.io,
            provenance=P,
            about=("approx.poly.stream.exact", "exact.flash2"),
        ),
        # chunked < flash2 (large cache, r ≤ N/4) as links (cvc5 did not decide the one-piece form with its
        # six nested floors and ceilings): flash2's row block a (T_r = ⌈N/a⌉ blocks) against chunked's c_max
        # (T_f = ⌈r/c_max⌉ feature chunks) and T_q = ⌈N/b_max⌉ query blocks.
        *(
            Implication(
                f"approx.beats.chunked.flash2.{what}",
                "inequality",
                f"Large cache (d² ≤ M ≤ Nd/16), r ≤ N/4: {text} (a = ⌊(M − d)/(2d + 4)⌋ flash2's row block, "
                "T_r = ⌈N/a⌉; c_max, T_q = ⌈N/b_max⌉ chunked's; a link of approx.beats.chunked.flash2).",
                CH.valid + FL.valid + LARGE + (4 * r <= N,),
                goal,
                provenance=P,
                about=("approx.poly.chunked.exact", "exact.flash2"),
            )
            for what, text, goal in (
                ("tile", "1 ≤ a ≤ c_max", All((1 <= FL.blocks["a"], FL.blocks["a"] <= A.chunk_c_max))),
                ("query-block", "a ≤ b_max = ⌊(M − 1)/(d + 3)⌋", FL.blocks["a"] <= A.chunk_b_max),
                ("rows", "T_r ≥ 2", 2 <= FL.blocks["T_r"]),
            )
        ),
        Implication(
            "approx.beats.chunked.flash2.queries",
            "inequality",
            "0 < a ≤ b gives ⌈N/b⌉ ≤ ⌈N/a⌉; at a = flash2's row block, b = b_max (….tile, ….query-block): T_q ≤ T_r "
            "(a link of approx.beats.chunked.flash2; the one-piece form over the formulas ran past cvc5's guard).",
            (0 < _BLK_A, _BLK_A <= _BLK_C),
            ceil(N / _BLK_C) <= ceil(N / _BLK_A),
            provenance=P,
            about=("approx.poly.chunked.exact", "exact.flash2"),
        ),
        Implication(
            "approx.beats.chunked.flash2.chunks",
            "inequality",
            "0 < a ≤ c and r ≤ N/4 give 4⌈r/c⌉ ≤ ⌈N/a⌉ + 4 (⌈r/c⌉ ≤ r/a + 1 ≤ N/(4a) + 1); at a = flash2's row "
            "block, c = c_max: 4T_f ≤ T_r + 4 (a link of approx.beats.chunked.flash2).",
            (0 < _BLK_A, _BLK_A <= _BLK_C, 4 * r <= N),
            4 * ceil(r / _BLK_C) <= ceil(N / _BLK_A) + 4,
            provenance=P,
            about=("approx.poly.chunked.exact", "exact.flash2"),
        ),
        Implication(
            "approx.beats.chunked.flash2",
            "inequality",
            "Large cache (d² ≤ M ≤ Nd/16): with r ≤ N/4 the chunked schedule moves strictly fewer words than flash2 "
            "(exact formulas, every ceiling and floor included). Stated for reals T, T_f, T_q with 4T_f ≤ T + 4, "
            "T_q ≤ T, T ≥ 2: 2Nd·T_f + 2Nd + T_q·r(d+1) + r(d+1) (chunked's count) < 2Nd + 2Nd·T + N (flash2's); "
            "approx.beats.chunked.flash2.tile, .queries, .rows and .chunks prove those facts at T = T_r, T_f = ⌈r/c_max⌉, "
            "T_q = ⌈N/b_max⌉, where the two sides are the exact costs.",
            (4 * _BLK_TF <= _BLK_T + 4, _BLK_TQ <= _BLK_T, 2 <= _BLK_T, 4 * r <= N),
            2 * N * d * _BLK_TF + 2 * N * d + _BLK_TQ * r * (d + 1) + r * (d + 1) < 2 * N * d + 2 * N * d * _BLK_T + N,
            provenance=P,
            about=("approx.poly.chunked.exact", "exact.flash2"),
        ),
        # flash2 ≤ chunked (large cache, r ≥ 3N) as links, as for approx.beats.chunked.flash2
        Implication(
            "approx.loses.chunked.flash2.tile",
            "inequality",
            "Large cache (d² ≤ M ≤ Nd/16), r ≥ 3N: flash2's row block a = ⌊(M − d)/(2d + 4)⌋ has 1 ≤ a and "
            "c_max = ⌊(M − 2d)/(d + 2)⌋ ≤ 3a (a link of approx.loses.chunked.flash2).",
            CH.valid + FL.valid + LARGE + (3 * N <= r,),
            All((1 <= FL.blocks["a"], A.chunk_c_max <= 3 * FL.blocks["a"])),
            provenance=P,
            about=("approx.poly.chunked.exact", "exact.flash2"),
        ),
        Implication(
            "approx.loses.chunked.flash2.rows",
            "inequality",
            "0 < a, 0 < c ≤ 3a and r ≥ 3N give ⌈N/a⌉ ≤ ⌈r/c⌉ (N/a ≤ 3N/c ≤ r/c); at a = flash2's row block, c = c_max: "
            "T_r ≤ T_f (a link of approx.loses.chunked.flash2).",
            (0 < _BLK_A, 0 < _BLK_C, _BLK_C <= 3 * _BLK_A, 3 * N <= r),
            ceil(N / _BLK_A) <= ceil(r / _BLK_C),
            provenance=P,
            about=("approx.poly.chunked.exact", "exact.flash2"),
        ),
        Implication(
            "approx.loses.chunked.flash2",
            "inequality",
            "Large cache (d² ≤ M ≤ Nd/16): with r ≥ 3N flash2 moves no more words than the chunked schedule "
            "(exact formulas): the approximation stops paying once the rank passes the sequence length by a constant "
            "factor. Stated for reals T, T_f, T_q with T ≤ T_f and T_q ≥ 1: 2Nd + 2Nd·T + N (flash2's count) ≤ "
            "2Nd·T_f + 2Nd + T_q·r(d+1) + r(d+1) (chunked's); ….tile, ….rows and approx.wd.chunked prove those facts at "
            "T = T_r, T_f = ⌈r/c_max⌉, T_q = ⌈N/b_max⌉, where the two sides are the exact costs. (With r ≥ 2N it is "
            "false since chunked's phase 2 holds one column of Y: N = 100, d = 6, M = 37, r = 201.)",
            (_BLK_T <= _BLK_TF, 1 <= _BLK_TQ, 3 * N <= r, 1 <= N, 1 <= d),
            2 * N * d + 2 * N * d * _BLK_T + N <= 2 * N * d * _BLK_TF + 2 * N * d + _BLK_TQ * r * (d + 1) + r * (d + 1),
            provenance=P,
            about=("approx.poly.chunked.exact", "exact.flash2"),
        ),
        leading_crossover(
            "approx.crossover.leading.chunked.flash2",
            "Leading terms: chunked 3Nrd²/M + 2Nd against flash2's 4N²d²/M + 2Nd; the boundary along r/N is derived.",
            3 * N * r * d**2 / M + 2 * N * d, 4 * N**2 * d**2 / M + 2 * N * d, "3Nrd²/M + 2Nd", "4N²d²/M + 2Nd",
            hi=Fraction(16), provenance=P, about=("approx.poly.chunked.exact", "exact.flash2"), axis=r / N, axis_name="r/N",
        ),
        Implication(
            "approx.switch.leading.tiled.chunked",
            "iff",
            "Leading terms of the two approximate schedules: tiled 4Nrd/√M ≤ chunked 3Nrd²/M exactly when "
            "M ≤ 9d²/16 (below exact attention's M = d² split: chunked's phase 2 holds one column of Y).",
            (),
            Iff(4 * N * r * d / sqrt(M) <= 3 * N * r * d**2 / M, 16 * M <= 9 * d**2),
            provenance=P,
            about=("approx.poly.tiled.exact", "approx.poly.chunked.exact"),
        ),
        Implication(
            "approx.branch.tiled-width",
            "branch",
            "Small cache: for M < d² the tiled schedule's tile width min(d, ⌊√M⌋ − 1) is ⌊√M⌋ − 1.",
            (M < d**2,),
            eq(A.tiled_w, floor(sqrt(M)) - 1),
            provenance=P,
            about=("approx.poly.tiled.exact",),
        ),
        Implication(
            "approx.beats.leading.tiled.flash2",
            "inequality",
            "Small cache (M < d²), leading terms only: with r ≤ N/4, tiled's 4Nrd/√M + 2Nr is below flash2's 4N²d²/M.",
            (M < d**2, 4 * r <= N),
            4 * N * r * d / sqrt(M) + 2 * N * r < 4 * N**2 * d**2 / M,
            provenance=P,
            about=("approx.poly.tiled.exact", "exact.flash2"),
        ),
        Implication(
            "approx.beats.leading.tiled.square_tiling",
            "inequality",
            "Small cache (M < d²), leading terms only: with r ≤ 3N/2, tiled's 4Nrd/√M + 2Nr is below square tiling's "
            "8N²d/√M + N² (Saha–Ye's small-cache algorithm, leading terms as in crossover.leading.square_tiling.flash2).",
            (M < d**2, 2 * r <= 3 * N),
            4 * N * r * d / sqrt(M) + 2 * N * r < 8 * N**2 * d / sqrt(M) + N**2,
            provenance=P,
            about=("approx.poly.tiled.exact", "exact.square_tiling"),
        ),
        Implication(
            "approx.loses.leading.tiled.square_tiling",
            "inequality",
            "Small cache (M < d²), leading terms only: with r ≥ 2N, square tiling's 8N²d/√M + N² is at most tiled's "
            "4Nrd/√M + 2Nr: in leading order the boundary lies between r = 3N/2 and r = 2N for every d, M.",
            (M < d**2, 2 * N <= r),
            8 * N**2 * d / sqrt(M) + N**2 <= 4 * N * r * d / sqrt(M) + 2 * N * r,
            provenance=P,
            about=("approx.poly.tiled.exact", "exact.square_tiling"),
        ),
    ]
    return out + derivation_claims() + two_phase_claims() + output_accumulator_claims() + row_resident_claims()


# symbols of the two derivations of docs/approx.md §5.2, §5.3 (segments and I/Os as in solver/claims/constants.py)
_SEG_H = sym("seg_h", integer=False, lo=0, doc="number of segments")
_SEG_Q = sym("seg_Q", integer=False, lo=0, doc="words moved (I/Os) by the whole computation")
_LV = sym("approx_LV", integer=False, lo=0, doc="loads of V words (approx.lower.accumulator)")


_TP = "approx.lower.two-phase"
_TP_EXPR = 4 * N * d + 2 * r * (d + 1) - 2 * M
_SW = sym("approx_W", integer=False, lo=0, doc="values of [S | s] written and read back (approx.lower.two-phase)")
_XC, _XA, _XR = (sym(f"blk_X{k}", integer=False, lo=0, doc=f"the tiled schedule's block count T_{k} (approx.consistency.two-phase.tiled)")
                  for k in ("c", "a", "r"))
_TRIV = sym("approx_T", integer=False, lo=0, doc="reads of Q, K, V words and writes of O words (approx.lower.two-phase)")


def two_phase_claims() -> list[Claim]:
    """approx.lower.two-phase (docs/approx.md §5.4): its summation step, and the bound ≤ the exact cost of each of the
    three schedules, which are all in its class."""
    out: list[Claim] = [
        Implication(
            f"{_TP}.sum",
            "derivation",
            "§5.4, last step: T ≥ 4Nd I/Os of Q, K, V, O words (each input word read, each output word written) and "
            "W ≥ r(d+1) − M values of [S | s] each written once and read once more, io ≥ T + 2W, give "
            "io ≥ 4Nd + 2(r(d+1) − M).",
            (N >= 2, d >= 1, M >= 1, _TRIV >= 4 * N * d, _SW >= r * (d + 1) - M, _SEG_Q >= _TRIV + 2 * _SW),
            _SEG_Q >= _TP_EXPR,
            provenance=P,
            about=(_TP,),
        )
    ]
    for name, f in (("stream", ST), ("chunked", CH)):
        out.append(
            Implication(
                f"approx.consistency.two-phase.{name}",
                "consistency",
                f"approx.lower.two-phase (4Nd + 2(r(d+1) − M)) ≤ the {name} schedule's exact I/O (it is a two-phase "
                "algorithm).",
                f.valid,
                _TP_EXPR <= f.io,
                provenance=P,
                about=(_TP, f"approx.poly.{name}.exact"),
            )
        )
    # tiled, as three links (the one-piece claim ran past the solvers' budget): its count over block counts
    # X_c, X_a, X_r, the formula's block counts T_a, T_r ≥ 1, and the bound below the count for X_a, X_r ≥ 1.
    about = (_TP, "approx.poly.tiled.exact")

    def tiled_io(xc: object, xa: object, xr: object) -> object:
        return 3 * N * d + 2 * N * r * xc + N * d * xa + xr * r * (d + 1) + 2 * N * r + r * (d + 1)  # type: ignore[operator]

    out += [
        Implication(
            "approx.consistency.two-phase.tiled.count", "identity",
            "Link 1: the tiled schedule's exact I/O is 3Nd + 2Nr·X_c + Nd·X_a + X_r·r(d+1) + 2Nr + r(d+1) at its "
            "block counts X_c = T_c, X_a = T_a, X_r = T_r.",
            TI.valid, eq(TI.io, tiled_io(A.tiled_Tc, A.tiled_Ta, A.tiled_Tr)), provenance=P, about=about,
        ),
        Implication(
            "approx.consistency.two-phase.tiled.blocks", "well-defined",
            "Link 2: where the tiled schedule runs, T_a = ⌈r/t_B⌉ ≥ 1 and T_r = ⌈N/b_max⌉ ≥ 1.",
            TI.valid, All((1 <= A.tiled_Ta, 1 <= A.tiled_Tr)), provenance=P, about=about,
        ),
        Implication(
            "approx.consistency.two-phase.tiled", "consistency",
            "Link 3: for X_c ≥ 0, X_a ≥ 1, X_r ≥ 1, 4Nd + 2(r(d+1) − M) ≤ 3Nd + 2Nr·X_c + Nd·X_a + X_r·r(d+1) + 2Nr + "
            "r(d+1); with links 1 and 2, approx.lower.two-phase ≤ the tiled schedule's exact I/O.",
            (N >= 2, d >= 1, M >= 1, _XA >= 1, _XR >= 1), _TP_EXPR <= tiled_io(_XC, _XA, _XR), provenance=P, about=about,
        ),
    ]
    return out


_OA = "approx.lower.output-accumulator"
_OA_WIN = 2 * sqrt(r * d * M) - M  # reads a window needs at least (approx.lower.output-accumulator.window)
_OA_NWIN = floor(N * (d + 1) / (2 * M))  # disjoint windows of 2M accumulator completions
_OA_EXPR = 3 * N * d + r * (d + 1) - M + _OA_NWIN * _OA_WIN
_WI, _WC, _WR, _W2, _WF, _WT, _WG = (sym(f"oa_{k}", integer=False, lo=0, doc=doc) for k, doc in (
    ("I", "query rows of the accumulators living in one window (approx.lower.output-accumulator)"),
    ("C", "columns of the accumulators living in one window (approx.lower.output-accumulator)"),
    ("R", "reads of Q and [S | s] words in one window (approx.lower.output-accumulator)"),
    ("W2", "reads of Q and [S | s] words after [S | s] is complete (approx.lower.output-accumulator)"),
    ("F", "a number of disjoint windows (approx.lower.output-accumulator)"),
    ("T", "reads of K, V words and writes of O words (approx.lower.output-accumulator)"),
    ("G", "F·M − F·(2√(rdM) − M), ≥ 0 for stream (approx.consistency.output-accumulator.stream)")))


def output_accumulator_claims() -> list[Claim]:
    """approx.lower.output-accumulator (docs/approx.md §5.5): the per-window AM–GM step, the summation, and the
    bound ≤ the exact cost of stream and chunked (its class; tiled stores U₁ and is not in it)."""
    about = (_OA,)
    base = (N >= 2, d >= 1, M >= 1, r >= d + 1)
    unit = 2 * N * d * _BLK_TF + 2 * N * d + _BLK_TQ * r * (d + 1) + r * (d + 1)  # chunked's count at T_f, T_q
    return [
        Implication(
            f"{_OA}.window", "derivation",
            "§5.5, one window: M accumulators over |I| rows and |C| columns (|I|·|C| ≥ M) need r·|C| words of [S | s] "
            "and d·|I| words of Q, at most M of them resident when the window opens: reads ≥ r|C| + d|I| − M "
            "≥ 2√(rdM) − M (AM–GM).",
            (*base, _WI >= 1, _WC >= 1, _WI * _WC >= M, _WR >= r * _WC + d * _WI - M),
            _WR >= _OA_WIN, provenance=P, about=about,
        ),
        Implication(
            f"{_OA}.sum", "derivation",
            "§5.5, sum: T ≥ 3Nd (K, V read, O written), W ≥ r(d+1) − M ([S | s] values written, §5.4), "
            "W₂ ≥ ⌊N(d+1)/(2M)⌋·(2√(rdM) − M) (Q and [S | s] reads in the disjoint windows), io ≥ T + W + W₂ "
            "give the bound.",
            (*base, _WT >= 3 * N * d, _SW >= r * (d + 1) - M, _W2 >= _OA_NWIN * _OA_WIN, _SEG_Q >= _WT + _SW + _W2),
            _SEG_Q >= _OA_EXPR, provenance=P, about=about,
        ),
        Implication(
            "approx.consistency.output-accumulator.stream.window", "derivation",
            "Stream, link 1: with M ≥ r(d+2) + 2d (its regime) rd < M, so the window term 2√(rdM) − M is ≤ M.",
            (*base, *ST.valid), _OA_WIN <= M, provenance=P, about=(_OA, "approx.poly.stream.exact"),
        ),
        Implication(
            "approx.consistency.output-accumulator.stream.scaled", "derivation",
            "Stream, link 2: F ≥ 0 and the window term ≤ M (link 1) give G = F·M − F(2√(rdM) − M) ≥ 0.",
            (*base, _WF >= 0, _OA_WIN <= M), _WF * _OA_WIN <= _WF * M, provenance=P,
            about=(_OA, "approx.poly.stream.exact"),
        ),
        Implication(
            "approx.consistency.output-accumulator.stream", "consistency",
            "Stream, link 3: with M ≥ r(d+2) + 2d (its regime), 2M·F ≤ N(d+1) (link .chunked.windows) and any "
            "G ≥ 0: 3Nd + r(d+1) − M + (F·M − G) ≤ 4Nd, the stream schedule's exact I/O (the windows add at most "
            "M·F ≤ N(d+1)/2 ≤ Nd, and r(d+1) − M < 0). At G = F·M − F(2√(rdM) − M) (link 2) the left side is "
            "approx.lower.output-accumulator.",
            (*base, *ST.valid, 2 * M * _WF <= N * (d + 1)),
            3 * N * d + r * (d + 1) - M + _WF * M - _WG <= ST.io, provenance=P, about=(_OA, "approx.poly.stream.exact"),
        ),
        Implication(
            "approx.consistency.output-accumulator.chunked.blocks", "well-defined",
            "Link 1 (chunked): T_f ≥ 1 and T_q·M ≥ N(d+3) (b_max = ⌊(M − 1)/(d + 3)⌋ < M/(d + 3)).",
            CH.valid + base, All((1 <= A.chunk_Tf, N * (d + 3) <= A.chunk_Tq * M)), provenance=P,
            about=(_OA, "approx.poly.chunked.exact"),
        ),
        Implication(
            "approx.consistency.output-accumulator.chunked.windows", "well-defined",
            "Link 2: the window count F = ⌊N(d+1)/(2M)⌋ has 0 ≤ F and 2M·F ≤ N(d+1).",
            base, All((0 <= _OA_NWIN, 2 * M * _OA_NWIN <= N * (d + 1))), provenance=P, about=(_OA,),
        ),
        Implication(
            "approx.consistency.output-accumulator.chunked.count", "identity",
            "Link 3: the chunked schedule's exact I/O is 2Nd·T_f + 2Nd + T_q·r(d+1) + r(d+1) at its T_f, T_q.",
            CH.valid, eq(CH.io, substitute(unit, {_BLK_TF: A.chunk_Tf, _BLK_TQ: A.chunk_Tq})), provenance=P,
            about=(_OA, "approx.poly.chunked.exact"),
        ),
        Implication(
            "approx.consistency.output-accumulator.chunked", "consistency",
            "Link 4: for T_f ≥ 1, T_q·M ≥ N(d+3), 0 ≤ F, 2M·F ≤ N(d+1): 3Nd + r(d+1) − M + F(2√(rdM) − M) ≤ "
            "2Nd·T_f + 2Nd + T_q·r(d+1) + r(d+1) (AM–GM: Nd + Nr(d+1)(d+3)/M ≥ 2N√(rd(d+1)(d+3)/M) ≥ "
            "N(d+1)√(rd/M)); with links 1–3, approx.lower.output-accumulator ≤ the chunked schedule's exact I/O.",
            (*base, _BLK_TF >= 1, _BLK_TQ * M >= N * (d + 3), 2 * M * _WF <= N * (d + 1)),
            3 * N * d + r * (d + 1) - M + _WF * _OA_WIN <= unit, provenance=P,
            about=(_OA, "approx.poly.chunked.exact"),
        ),
    ]


_RR = "approx.lower.row-resident"
_RR_P1 = N * r * d * (d + 1) / M - 2 * r * (d + 1) - M  # I/Os before [S | s] is complete
_RR_P2 = N * r * d * (d + 1) / M - M  # I/Os after
_RR_A1 = 2 * N * d + r * (d + 1) - M  # K, V reads and [S | s] writes before the completion
_RR_A2 = N * d + r * (d + 1) - M  # O writes and [S | s] reads after it
_RR_EXPR = A.RR_PHASE1 + A.RR_PHASE2
_RX, _RY, _RU, _RV, _RK1, _RK2, _RL1, _RL2 = (sym(f"rr_{k}", integer=False, lo=0, doc=doc) for k, doc in (
    ("x", "key (query) words resident when a segment opens (approx.lower.row-resident)"),
    ("y", "key words read in one segment (approx.lower.row-resident)"),
    ("u", "query words resident when a segment opens or read in it (approx.lower.row-resident)"),
    ("v", "[S | s] values resident when a segment opens or read in it (approx.lower.row-resident)"),
    ("k1", "segments of M I/Os up to the completion of [S | s] (approx.lower.row-resident)"),
    ("k2", "segments of M I/Os after the completion of [S | s] (approx.lower.row-resident)"),
    ("L1", "I/Os before the completion of [S | s] (approx.lower.row-resident)"),
    ("L2", "I/Os after the completion of [S | s] (approx.lower.row-resident)")))


def row_resident_claims() -> list[Claim]:
    """approx.lower.row-resident (docs/approx.md §5.6): the two per-segment product counts, the two phase bounds,
    their sum, and the bound ≤ the exact cost of chunked (its class; stream frees Q_i before its products and tiled
    stores U₁, U₂, so neither is in it)."""
    about = (_RR,)
    base = (N >= 1, d >= 1, M >= 1, r >= 1)
    unit = 2 * N * d * _BLK_TF + 2 * N * d + _BLK_TQ * r * (d + 1) + r * (d + 1)  # chunked's count at T_f, T_q
    ch = (_RR, "approx.poly.chunked.exact")
    return [
        Implication(
            f"{_RR}.segment1", "derivation",
            "§5.6, phase 1, one segment: x key words and at most M − x accumulators resident when it opens, y ≤ M key "
            "words read in it: (x + y)·(M − x) ≤ M², so rows × accumulators resident at its start ≤ M²/d.",
            (M >= 1, _RX <= M, _RY <= M), (_RX + _RY) * (M - _RX) <= M**2, provenance=P, about=about,
        ),
        Implication(
            f"{_RR}.segment2", "derivation",
            "§5.6, phase 2, one segment: u query words and v values of [S | s] present in it (resident when it opens "
            "or read in it), u + v ≤ 2M: u·v ≤ M², so rows × values ≤ M²/d.",
            (M >= 1, _RU + _RV <= 2 * M), _RU * _RV <= M**2, provenance=P, about=about,
        ),
        Implication(
            f"{_RR}.phase1", "derivation",
            "§5.6, phase 1: N·r(d+1) terms, at most M²/d per segment with accumulators resident at its start plus "
            "2M/d per accumulator in its creation segment (d·N·r(d+1) ≤ k₁·M² + 2M·r(d+1)), and L₁ ≥ M(k₁ − 1) "
            "give L₁ ≥ Nrd(d+1)/M − 2r(d+1) − M.",
            (*base, d * N * r * (d + 1) <= _RK1 * M**2 + 2 * M * r * (d + 1), _RL1 >= M * (_RK1 - 1)),
            _RL1 >= _RR_P1, provenance=P, about=about,
        ),
        Implication(
            f"{_RR}.phase2", "derivation",
            "§5.6, phase 2: N·r(d+1) products, at most M²/d per segment (d·N·r(d+1) ≤ k₂·M²), and L₂ ≥ M(k₂ − 1) "
            "give L₂ ≥ Nrd(d+1)/M − M.",
            (*base, d * N * r * (d + 1) <= _RK2 * M**2, _RL2 >= M * (_RK2 - 1)),
            _RL2 >= _RR_P2, provenance=P, about=about,
        ),
        Implication(
            f"{_RR}.sum", "derivation",
            "§5.6, sum: the I/Os before and after the completion of [S | s] are disjoint (io ≥ L₁ + L₂); L₁ is at least "
            "the phase-1 segment bound and 2Nd + r(d+1) − M (K, V words read, [S | s] values written before it), L₂ "
            "at least the phase-2 segment bound and Nd + r(d+1) − M (O words written, [S | s] values read after it); "
            "so io ≥ max(…) + max(…), the bound.",
            (*base, _RL1 >= _RR_P1, _RL1 >= _RR_A1, _RL2 >= _RR_P2, _RL2 >= _RR_A2, _SEG_Q >= _RL1 + _RL2),
            _SEG_Q >= _RR_EXPR, provenance=P, about=about,
        ),
        Implication(
            "approx.consistency.row-resident.chunked.features", "well-defined",
            "Link 1 (chunked): T_f·M ≥ r(d+2) (c_max = ⌊(M − 2d)/(d + 2)⌋ ≤ M/(d + 2)), T_f ≥ 1, T_q ≥ 1; link 2 is "
            "approx.consistency.output-accumulator.chunked.blocks (T_q·M ≥ N(d+3)), link 3 "
            "approx.consistency.output-accumulator.chunked.count (the exact I/O at T_f, T_q).",
            CH.valid + base, All((r * (d + 2) <= A.chunk_Tf * M, 1 <= A.chunk_Tf, 1 <= A.chunk_Tq)), provenance=P, about=ch,
        ),
        Implication(
            "approx.consistency.row-resident.chunked", "consistency",
            "Link 4: for T_f·M ≥ r(d+2), T_q·M ≥ Nd (link 2 gives N(d+3)), T_f ≥ 1, T_q ≥ 1: each of the four sums "
            "of a phase-1 and a phase-2 term of the bound is ≤ 2Nd·T_f + 2Nd + T_q·r(d+1) + r(d+1) (2Nd·T_f ≥ "
            "2Nrd(d+2)/M and T_q·r(d+1) ≥ Nrd(d+1)/M, each ≥ Nrd(d+1)/M); with links 1–3, approx.lower.row-resident "
            "≤ the chunked schedule's exact I/O. (Stated with T_q·M ≥ N(d+3) cvc5 ran past its guard; with Nd it "
            "takes under a second.)",
            (*base, _BLK_TF * M >= r * (d + 2), _BLK_TQ * M >= N * d, _BLK_TF >= 1, _BLK_TQ >= 1),
            _RR_EXPR <= unit, provenance=P, about=ch,
        ),
    ]


def derivation_claims() -> list[Claim]:
    """The algebraic steps of the two class-restricted lower bounds (docs/approx.md §5.2, §5.3); their counting
    steps (Loomis–Whitney per segment, the co-residence charge) are argued in prose there."""
    return [
        Implication(
            "approx.lower.matmul.rearrange",
            "derivation",
            "§5.2, last step: N·r·d products, at most (2M)^{3/2} = 2M·√(2M) per segment of M I/Os (h segments: "
            "N·r·d ≤ h·2M·√(2M)), and Q ≥ M(h − 1) give Q ≥ Nrd/(3√M) − M (as 2√2 < 3).",
            (M >= 1, N * r * d <= _SEG_H * 2 * M * sqrt(2 * M), _SEG_Q >= M * (_SEG_H - 1)),
            _SEG_Q >= N * r * d / (3 * sqrt(M)) - M,
            provenance=P,
            about=("approx.lower.matmul",),
        ),
        Implication(
            "approx.lower.accumulator.rearrange",
            "derivation",
            "§5.3, last step: N·r·d triples charged to L_V loads of V words and r·d accumulator creations, at most "
            "M − 1 each (N·r·d ≤ (L_V + r·d)(M − 1)), give L_V ≥ Nrd/M − rd.",
            (M >= 2, N * r * d <= (_LV + r * d) * (M - 1)),
            _LV >= N * r * d / M - r * d,
            provenance=P,
            about=("approx.lower.accumulator",),
        ),
    ]


CLAIMS: list[Claim] = _claims()
