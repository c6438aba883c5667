"""Every tightest-constant claim, as one tuple of specs (:data:`SPECS`): the least c with cost ≤ c·shape + extra
over a regime, for each schedule, forward (``tight.*``, built from the catalog bound each tightens) and backward
(``backward.tight.*``). :func:`attnio.solver.claims.build.tight_claims` turns a spec into its claim and the link
claims of the integer tile facts its hypotheses restate; :mod:`attnio.solver.claims.seed` and
:mod:`attnio.solver.claims.backward` build theirs from here.

A spec's text is a template (see :class:`~attnio.solver.claims.build.TightSpec`); ids are spelled here in full.
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.catalog import FA_REGIME, by_id
from attnio.bounds.expr import sqrt
from attnio.bounds.symbols import M, N, d
from attnio.solver.claims.build import TightSpec, TileFacts

UNIT = N**2 * d**2 / M
FORWARD_EXTRA = 4 * N * d  # the trivial bound's size, fixed so that c is well defined
BACKWARD_EXTRA = 12 * N * d  # Nd-size terms: the square-tiled schedules' own reach 10Nd at N ≤ B (d_v = d)

_FORWARD_TEXT = ("Least c with cost({name}) ≤ c·{shape} + 4Nd for all N, d, M with {where} where {name} runs "
                 "(tightens {tightens}; ceilings included: small sizes set c).")
_FORWARD_TILES = " The hypotheses restate integer facts of its tiles, proved by tiles.{id}."
_BACKWARD_TEXT = ("Least c with cost({name}) ≤ c·{shape} + 12Nd for all N, d, M with {where} where {name} runs "
                  "(ceilings included: small sizes set c).")
_BACKWARD_TILES = " The hypotheses restate the tiles' integer facts proved by {id}.tiles.*."
_FA2 = "d ≤ M ≤ Nd (FlashAttention Thm 2)"


# forward: integer facts of the tiles that the real relaxation of the floors and ceilings does not see; they let
# cvc5 re-prove the claims (its integer re-check of the bare forms runs out of resources)
def _standard_tiles(f) -> tuple:
    """standard's tile b = ⌊√(M/3)⌋ is at least d once M ≥ 3d², so T_v = ⌈d/b⌉ = 1."""
    b = f.blocks
    return (d <= b["b"], b["T_v"] <= 1)


def _split_v_tiles(f) -> tuple:
    """split_v's row tile a = ⌊(M − d)/(2d + 4)⌋ ≥ 1 (as M ≥ 3d + 4), T_r = ⌈N/a⌉ with T_r·a ≤ N + a − 1 and
    1 ≤ T_r ≤ N, M − d ≤ (a + 1)(2d + 4) − 1, and G = ⌈d/d⌉ = 1."""
    b = f.blocks
    a, T = b["a"], b["T_r"]
    return (b["G"] <= 1, 1 <= a, T * a <= N + a - 1, M <= (a + 1) * (2 * d + 4) + d - 1, T <= N)


def _square_tiling_tiles(f) -> tuple:
    """square_tiling's tile B = ⌊√(M/4)⌋ ≥ 1 with M ≤ 4(B + 1)² − 1 and 2B ≤ d (as M ≤ d²); T = ⌈N/B⌉ and
    T_v = ⌈d/B⌉ with T·B ≤ N + B − 1, T_v·B ≤ d + B − 1, T ≤ N and T_v ≤ d."""
    b = f.blocks
    B, T, Tv = b["B"], b["T"], b["T_v"]
    return (T * B <= N + B - 1, Tv * B <= d + B - 1, M + 1 <= 4 * (B + 1) ** 2, 2 * B <= d, T <= N, Tv <= d)


def _forward_tiles(cid: str, facts):
    """The one tile-fact link ``tiles.<cid>`` of a forward claim."""
    return lambda f: (TileFacts(f"tiles.{cid}", f"integer facts of its tiles that the hypotheses of {cid} restate.",
                                (), facts(f)),)


def _forward(cid: str, name: str, bound: str, where: str, *, shape=None, extra: tuple = (), large_d: bool = False,
             lo: Fraction | None = None, cleared: bool = False, tiles=None, also: tuple[str, ...] = ()) -> TightSpec:
    """``cid``: cost(name) ≤ c·shape + 4Nd on the regime of the catalog bound ``bound`` (plus ``extra``); the shape
    is the bound's expression unless given (the leading term of a Θ(·) with a lower-order part, which the
    additive 4Nd absorbs). ``large_d``: to 1/64 below 64 (else 1/8 below 256); ``also``: other paper bounds whose
    O side the claim shows on part of their range."""
    b = by_id(bound)
    return TightSpec(cid, name, False, b.expr if shape is None else shape, FORWARD_EXTRA, tuple(b.regime) + extra,
                     where, _FORWARD_TEXT, Fraction(1, 64) if large_d else Fraction(1, 8), Fraction(64) if large_d else Fraction(256),
                     Fraction(0) if lo is None else lo, cleared, about=(b.id, *also), cites=b.provenance,
                     tiles=None if tiles is None else _forward_tiles(cid, tiles), tiles_text=_FORWARD_TILES)


def forward_specs() -> tuple[TightSpec, ...]:
    """``tight.<name>`` on the regime of the bound it tightens, and ``tight.<name>.large-d`` (the published loop and
    the io-optimal one for realistic heads: the same bound on d ≥ 64, M ≥ 4d², to 1/64). ``cleared``: the steps
    multiply out the shape's denominator M (the same relation without the division, which cvc5 re-proves)."""
    large = (64 <= d, 4 * d**2 <= M)
    realistic = "d ≥ 64 and 4d² ≤ M ≤ Nd (realistic heads)"
    return (
        _forward("tight.flash1", "flash1", "fa.thm2.flash", _FA2, cleared=True),
        _forward("tight.flash1-fit", "flash1-fit", "fa.thm2.flash", _FA2),
        _forward("tight.flash2", "flash2", "fa.thm2.flash", _FA2, also=("sy.thm3.1.upper",)),  # its large-cache half
        _forward("tight.kv_stationary", "kv_stationary", "fa.prop3", "d ≤ M ≤ Nd (FlashAttention Prop 3)", cleared=True),
        _forward("tight.split_v", "split_v", "fa.prop3", "d ≤ M ≤ Nd (FlashAttention Prop 3)", cleared=True,
                 tiles=_split_v_tiles),
        # search floor (refuted at an integer point, so the least c is unchanged): in the cleared form z3 takes
        # ~20 s to refute c = 16 and well under a second at 65/4
        _forward("tight.square_tiling", "square_tiling", "sy.thm3.5", "4 ≤ M ≤ d² (Saha–Ye Thm 3.5, small cache)",
                 cleared=True, lo=Fraction(65, 4), tiles=_square_tiling_tiles, also=("sy.thm3.1.upper",)),  # small-cache half
        _forward("tight.standard", "standard", "fa.thm2.standard",
                 "3d² ≤ M ≤ Nd (tiles as wide as d: FlashAttention Thm 2's Θ(Nd + N²))", shape=N**2,
                 extra=(3 * d**2 <= M,), tiles=_standard_tiles),
        _forward("tight.flash1.large-d", "flash1", "fa.thm2.flash", realistic, extra=large, large_d=True),
        _forward("tight.flash2.large-d", "flash2", "fa.thm2.flash", realistic, extra=large, large_d=True),
    )


# backward ----------------------------------------------------------------------------------------------------
def _standard_bwd_tiles(f) -> tuple[TileFacts, ...]:
    """standard-bwd's tile b = ⌊√(M/3)⌋ is at least d once M ≥ 3d², so T_d = ⌈d/b⌉ = 1 (over the reals the floor and
    the ceiling only give b > d − 1 and T_d < 2)."""
    return (TileFacts("backward.tight.standard-bwd.tiles", "its tile b = ⌊√(M/3)⌋ is at least d, so T_d = ⌈d/b⌉ = 1 "
                      "(integer facts the hypotheses of backward.tight.standard-bwd restate)", (),
                      (d <= f.blocks["b"], f.blocks["T_d"] <= 1)),)


def _square_tiling_bwd_tiles(f) -> tuple[TileFacts, ...]:
    """square_tiling-bwd's tile B = ⌊(⌊√(3M + 1)⌋ − 1)/3⌋ in d²/4 ≤ M ≤ d², d ≥ 64: integer facts, in groups, each
    proved by its own claim (one claim with all of them took z3 ~9 s and cvc5 did not decide it)."""
    b, t, td = f.blocks["B"], f.blocks["T"], f.blocks["T_d"]
    cid = "backward.tight.square_tiling-bwd"
    return tuple(
        TileFacts(f"{cid}.tiles.{suffix}", f"{text} (integer facts the hypotheses of {cid} restate)", extra, facts)
        for suffix, text, extra, facts in (
            ("fit", "B ≥ 1 and 3B² + 2B ≤ M < 3(B + 1)² + 2(B + 1) (B is the largest such integer)",
             (), (1 <= b, 3 * b**2 + 2 * b <= M, M < 3 * b**2 + 8 * b + 5)),
            ("ceil", "its ceilings are integer: T·B ≤ N + B − 1, T_d·B ≤ d + B − 1", (), (t * b <= N + b - 1, td * b <= d + b - 1)),
            ("td", "2 ≤ T_d and d ≤ 4B", (), (2 <= td, d <= 4 * b)),
            ("td4", "d ≤ 4B gives T_d ≤ 4", (d <= 4 * b,), (td <= 4,)),
        )
    )


def _leading(name: str, shape, regime: tuple, where: str, about: tuple[str, ...], tiles=None) -> TightSpec:
    """``backward.tight.<name>``: cost ≤ c·shape + 12Nd on ``regime``, tightening the paper bounds ``about``."""
    return TightSpec(f"backward.tight.{name}", name, True, shape, BACKWARD_EXTRA, regime, where, _BACKWARD_TEXT,
                     Fraction(1, 8), Fraction(512), about=about, tiles=tiles, tiles_text=_BACKWARD_TILES)


def backward_specs() -> tuple[TightSpec, ...]:
    """Each backward schedule against the O side of FlashAttention Thm 5; flash1-bwd and flash2-bwd for realistic heads
    (d ≥ 64, 8d² ≤ M ≤ Nd; flash2-bwd's steps cleared of M: decided in milliseconds, while as a quotient z3 ran
    past its guard at c = 33/2); and the square-root-tiled schedules, each where its shape is the leading term
    (steps cleared of the shape's denominator)."""
    thm5 = ("fa.thm5.flash-backward",)
    large = "Least c with cost({name}) ≤ c·N²d²/M + 12Nd for d ≥ 64 and 8d² ≤ M ≤ Nd (realistic heads, large cache): " \
            "close to the leading constant."
    sqrt_text = ("Least c (to {precision}) with cost({name}) ≤ c·{shape} + {extra} for all N, d, M with {where} (exact "
                 "cost: floors of square roots and ceilings included).")
    cites = "docs/costs.md#backward-constants"
    return (
        _leading("flash2-bwd", UNIT, FA_REGIME, "d ≤ M ≤ Nd", (*thm5, "li.backward.upper")),  # Li: its M ≥ d² half
        _leading("flash1-bwd", UNIT, FA_REGIME, "d ≤ M ≤ Nd (FlashAttention Thm 5)", thm5),
        _leading("flash1-fit-bwd", UNIT, FA_REGIME, "d ≤ M ≤ Nd", thm5),
        _leading("standard-bwd", N**2, (3 * d**2 <= M,), "M ≥ 3d² (tiles as wide as d: FlashAttention Thm 5's "
                 "Θ(Nd + N²))", ("fa.thm5.standard-backward",), tiles=_standard_bwd_tiles),
        *(TightSpec(f"backward.tight.{name}.large-d", name, True, UNIT, BACKWARD_EXTRA, (64 <= d, 8 * d**2 <= M, M <= N * d),
                    "", large, Fraction(1, 64), Fraction(64), cleared=name == "flash2-bwd") for name in ("flash1-bwd", "flash2-bwd")),
        # 2b² + (7d + 2)b ≤ M: b ≈ M/(7d) while M ≪ 49d² (cost ≈ 28N²d²/M), ≈ 0.91d at M = 8d² (cost ≈ 35N²d²/M)
        TightSpec("backward.tight.flash2-square-bwd", "flash2-square-bwd", True, UNIT, BACKWARD_EXTRA,
                  (64 <= d, d**2 <= M, M <= 8 * d**2, M <= N * d),
                  "d ≥ 64, d² ≤ M ≤ 8d², M ≤ Nd (the N²d²/M regime of its square blocks; the constant is set near M = 8d²)",
                  sqrt_text, Fraction(1, 2), Fraction(64), cleared=True, cites_after=cites),
        # small cache: cost ≈ 8N²d/B + 3⌈d/B⌉N² + 2N² with B ≈ √(M/3), i.e. 8√3·N²d/√M + 5N² (the 3N² is the slack
        # of the ceiling ⌈d/B⌉ < d/B + 1): the shape is N²d/√M, not N²d²/M, with 5N² in the additive term
        TightSpec("backward.tight.square_tiling-bwd", "square_tiling-bwd", True, N**2 * d / sqrt(M),
                  5 * N**2 + BACKWARD_EXTRA, (64 <= d, d**2 <= 4 * M, M <= d**2),
                  "d ≥ 64, d²/4 ≤ M ≤ d² (small cache: the shape is N²d/√M, leading constant 8√3 ≈ 13.86, plus 5N²)",
                  sqrt_text, Fraction(1), Fraction(64), cleared=True, about=("li.backward.upper",),  # Li: its M ≤ d² half
                  cites_after=cites, tiles=_square_tiling_bwd_tiles, tiles_text=_BACKWARD_TILES),
    )


SPECS: tuple[TightSpec, ...] = forward_specs() + backward_specs()
