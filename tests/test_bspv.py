"""The small-cache bounds BSPV and BSPV-near (docs/bounds/bspv.md): their proof steps and consistency chains proved
by z3 and again by cvc5, tightened mutants refuted, both bounds below every forward schedule's exact count on a
grid, the chains cover every exact formula, and the small-cache ratio table.

Claims: solver/claims/bspv.py (BS's shared steps are tested in tests/test_constants.py); bounds:
bounds/constants.py.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnio.algorithms import registry
from attnio.bounds import constants
from attnio.bounds.constants import BS, BSPV, BSPV_NEAR, SMALL_CACHE, SMALL_TABLE_POINTS, small_cache_table
from attnio.bounds.costs import FORMULAS
from attnio.bounds.expr import evaluate, sqrt
from attnio.bounds.symbols import M, N, d
from attnio.solver.claims import all_claims
from attnio.solver.claims import bspv as cb
from attnio.solver.claims import by_id as claim_by_id
from attnio.solver.claims import constants as cc
from attnio.solver.claims.types import Implication
from attnio.solver.verify import verify_claim

AUDIT = frozenset(n for n in registry.names() if registry.get(n).audit)


@pytest.mark.parametrize("claim", cb.CLAIMS, ids=lambda c: c.id)
def test_claim_proved_by_z3(claim: Implication) -> None:
    out = verify_claim(claim)
    assert out.status == "proved", (claim.id, out)


@pytest.mark.parametrize("claim", cb.CLAIMS, ids=lambda c: c.id)
def test_claim_second_opinion_cvc5(claim: Implication) -> None:
    pytest.importorskip("cvc5")
    out = verify_claim(claim, "cvc5")
    assert out.status == "proved", (claim.id, out)


def _mutate(claim_id: str, goal) -> Implication:
    c = claim_by_id(claim_id)
    return replace(c, id=c.id + ".mutant", goal=goal)


MUTANTS = {
    # BSPV with 26/9 > 25/9 = 2·(25/54)·3: the per-segment maximum (54/25)M√M cannot give it
    "rearrange@26/9": _mutate(
        "constants.bspv.rearrange", cb.Q >= Fraction(26, 9) * cb.KAPPA * N**2 * d / sqrt(M) - 3 * M
    ),
    # BSPV-near with 21/10 in place of 2
    "near.rearrange@21/10": _mutate(
        "constants.bspv-near.rearrange", cb.Q >= (Fraction(21, 10) - M / d**2) * N**2 * d / sqrt(M) - M
    ),
    # the pair face without the complete-pair loss (κ = 1): complete pairs are not free of the budget
    "third@kappa=1": _mutate("constants.bspv.third", cb.x + cb.c_pairs + cb.o1 <= 2 * M + cb.R - cb.s),
    # BSPV-near's per-segment maximum with 19/20 M√M
    "near.segment@19/20": _mutate("constants.bspv-near.segment", cb.KAPPA_NEAR * cb.Y <= Fraction(19, 20) * M * sqrt(M)),
    # the crossover at d²/2 instead of (7/16)d²: BSPV-near is the larger there
    "crossover@1/2": replace(
        claim_by_id("constants.bspv.crossover"),
        id="constants.bspv.crossover.mutant",
        hyps=(d >= 1, N >= 1, M >= 1, 2 * M <= d**2),
    ),
    # square tiling's two phases with 41/10 > 4 (each phase gives 2N²d/√M at best)
    "tiles_amgm4@41/10": _mutate("constants.bspv.tiles_amgm4", Fraction(41, 10) * N**2 * d / sqrt(M) <= cb.Q),
}


@pytest.mark.parametrize("name", sorted(MUTANTS))
def test_tightened_step_is_refuted_with_a_counterexample(name: str) -> None:
    out = verify_claim(MUTANTS[name])
    assert out.status == "refuted" and not out.spurious, (name, out)


def test_claims_name_their_bounds() -> None:
    claims = {c.id: c for c in all_claims()}
    for cid in ("constants.bspv.pairs", "constants.bspv.third", "constants.bs.amgm", "constants.bs.combine",
                "constants.bs.cubic", "constants.bspv.crossover"):
        assert {BSPV.id, BSPV_NEAR.id} <= set(claims[cid].about), cid
    assert BSPV.id in claims["constants.bspv.rearrange"].about
    assert BSPV_NEAR.id in claims["constants.bspv-near.rearrange"].about
    assert {BS.id, BSPV.id} <= set(claims["constants.bs.segment"].about)


def test_consistency_chains_cover_every_exact_formula() -> None:
    ids = {c.id for c in all_claims()}
    for n in FORMULAS:
        if not cc._is_standard(n):
            continue
        if n in cc.VIA_LARGE:
            chain = {"constants.bspv.via_large", f"constants.consistency.bs.le.{n}"}
        elif n in cc.VIA_BLOCKS:
            chain = {"constants." + cc.VIA_BLOCKS[n][1].replace("bs.", "bspv.", 1), f"constants.consistency.bs.le.{n}"}
        elif n == "square_tiling-io":
            chain = {f"constants.consistency.bspv.{n}.{k}" for k in ("phases", "tiles")} | {
                "constants.bspv.ceil_split4", "constants.bspv.tiles_amgm4", f"constants.consistency.bs.{n}.tiles"}
        else:
            chain = {f"constants.consistency.bspv.le.{n}"}
        assert chain | {"constants.bspv.relax", "constants.bspv-near.relax"} <= ids, n


@given(st.integers(1, 1 << 16), st.integers(1, 256), st.floats(0.0, 1.0))
def test_both_bounds_below_every_forward_schedule_on_a_grid(n: int, dd: int, f: float) -> None:
    mm = max(1, round(f * dd * dd))
    env = {"N": n, "d": dd, "M": mm, "dv": dd}
    for b in (BSPV, BSPV_NEAR):
        assert all(r.holds(env) for r in b.regime)
        lb = evaluate(b.expr, env)
        for name, fm in FORMULAS.items():
            fd = fm.with_dv_equal_d()
            if name in AUDIT or not cc._is_standard(name) or not all(r.holds(env) for r in fd.valid):
                continue
            assert lb <= evaluate(fd.io, env), (b.id, name, env)


def test_bspv_is_the_stated_closed_form_and_twice_bs_plus_3m() -> None:
    """BSPV's expression against its statement written out here ((25/18)(1 − M/d²)·N²(d + d_v)/√M − 3M, which is
    (25/9)(1 − M/d²)·N²d/√M − 3M at d_v = d), not via bs_form; and BSPV-near's, (1 − M/(2d²))·N²(d + d_v)/√M − M."""
    for n, dd, mm in SMALL_TABLE_POINTS:
        env = {"N": n, "d": dd, "M": mm, "dv": dd}
        stated = 25 / 9 * (1 - mm / dd**2) * n**2 * dd / mm**0.5 - 3 * mm
        assert evaluate(BSPV.expr, env) == pytest.approx(stated, rel=1e-12)
        assert evaluate(BSPV.expr, env) == pytest.approx(2 * evaluate(BS.expr, env) + 3 * mm, rel=1e-12)
        for v in (1, 3, dd // 2, 2 * dd + 1):
            env = {"N": n, "d": dd, "M": mm, "dv": v}
            stated = 25 / 18 * (1 - mm / dd**2) * n**2 * (dd + v) / mm**0.5 - 3 * mm
            assert evaluate(BSPV.expr, env) == pytest.approx(stated, rel=1e-12)
            near = (1 - mm / (2 * dd**2)) * n**2 * (dd + v) / mm**0.5 - mm
            assert evaluate(BSPV_NEAR.expr, env) == pytest.approx(near, rel=1e-12)


def test_small_cache_ratio_table() -> None:
    rows = small_cache_table(bounds=SMALL_CACHE)
    assert [r.bound for r in rows] == ["constants.bspv"] * len(SMALL_TABLE_POINTS)
    io = [r.ratios["square_tiling-io"] for r in rows]
    assert all(1 < x <= 2.5 for x in io), io  # the goal at M ≤ d²/4 (BS alone: 3.36–4.46)
    old = [r.ratios["square_tiling-io"] for r in small_cache_table()]
    assert all(o > 1.9 * x for o, x in zip(old, io, strict=True)), (old, io)


def test_near_form_takes_over_near_d_squared() -> None:
    assert constants.best_small_cache_bound(4096, 128, 7 * 128 * 128 // 16 - 64)[0] == BSPV.id
    assert constants.best_small_cache_bound(4096, 128, 7 * 128 * 128 // 16 + 64)[0] == BSPV_NEAR.id
    _, at_d2 = constants.best_small_cache_bound(4096, 128, 128 * 128)
    assert at_d2 == 4096**2 - 128 * 128  # (2 − 1)·N²d/d − M
    assert evaluate(BS.expr, {"N": 4096, "d": 128, "M": 128 * 128}) < 0


# Per-segment lemma (steps 7–12) on measured traces: the forward schedules compute every product once, so every
# computed QKᵀ or PV product is its useful instance. Segments of 3M I/O words are three consecutive windows of
# algorithms/segments.py (work belongs to the segment of the next I/O word, as in step 1). A window above the
# limit would refute the lemma for that schedule; none is expected anywhere near (the maximum is ≈ 0.53).
SEGMENT_POINTS = ((64, 16, 64), (96, 32, 64), (128, 24, 144), (64, 16, 200))


@pytest.mark.parametrize("point", SEGMENT_POINTS, ids=str)
def test_per_segment_lemma_holds_on_every_schedule_trace(point: tuple[int, int, int]) -> None:
    from attnio.algorithms import segments
    from attnio.algorithms.run import run

    n, dd, mm = point
    env = {"N": n, "d": dd, "M": mm, "dv": dd}
    ran = 0
    for name in registry.names():
        if name in AUDIT or name not in FORMULAS or not all(r.holds(env) for r in FORMULAS[name].with_dv_equal_d().valid):
            continue
        ws = segments.windows(run(name, N=n, d=dd, M=mm, seed=0, trace=True, check=False).measurement)
        work = [w.work.get("qk", 0) + w.work.get("pv", 0) for w in ws]
        assert sum(work) == 2 * n * n * dd, name  # every product once: the trace is the proof's Z, segment by segment
        for i in range(0, len(work), 3):  # BSPV, R = 3M: κ·|Z_t| ≤ (54/25)·M√M
            assert (1 - Fraction(mm, dd * dd)) * sum(work[i : i + 3]) <= Fraction(54, 25) * mm * mm**0.5, (name, i)
        for i, z in enumerate(work):  # BSPV-near, R = M: κ·|Z_t| ≤ M√M
            assert (1 - Fraction(mm, 2 * dd * dd)) * z <= mm * mm**0.5, (name, i)
        ran += 1
    assert ran >= 3, point


def test_ratio_script_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    import runpy
    from pathlib import Path

    runpy.run_path(str(Path(__file__).resolve().parent.parent / "tools" / "small_cache_ratios.py"), run_name="__main__")
    lines = capsys.readouterr().out.splitlines()
    rows = [ln.split(" | ") for ln in lines[2:]]
    assert len(rows) == len(SMALL_TABLE_POINTS) + 5
    assert [r[6] for r in rows[: len(SMALL_TABLE_POINTS)]] == ["BSPV"] * len(SMALL_TABLE_POINTS)
    assert all(float(r[-1].rstrip(" |")) <= 2.5 for r in rows[: len(SMALL_TABLE_POINTS)])


def test_bspv_and_bspv_near_are_refereed_and_say_so_in_their_page():
    """Both were read by a fresh referee (sound, wording fixes applied): the catalog's status and the page agree."""
    from pathlib import Path

    assert [b.status for b in (BSPV, BSPV_NEAR)] == ["derived here (refereed)"] * 2
    assert "**derived here (refereed)**" in (Path(__file__).parents[1] / BSPV.doc).read_text()
