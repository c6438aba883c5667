"""The small-cache backward bounds BWD-dP-small and BWD-SdP-small (bounds/backward.py,
docs/bounds/backward-small.md): their step and consistency claims are proved by z3 and re-proved by cvc5, their
docs page names every step, a wrong constant is refuted, they stay below every exact backward cost they cover on
a grid of small-cache points and on measured counts, and the ratios of docs/bounds/backward-small.md#numbers."""

from __future__ import annotations

import re
from fractions import Fraction
from pathlib import Path

import pytest

from attnio.algorithms.run import count
from attnio.bounds import backward as bb
from attnio.bounds.constants import BS, BS_COEFF
from attnio.bounds.costs import BACKWARD_FORMULAS, backward_cost
from attnio.bounds.expr import evaluate, sqrt
from attnio.bounds.proofs import PROOF_STEPS
from attnio.bounds.symbols import M, N, d
from attnio.core.errors import InvalidParameter
from attnio.solver.claims import backward as cb
from attnio.solver.claims import by_id as claim_by_id
from attnio.solver.claims import constants as cc
from attnio.solver.claims.types import Implication
from attnio.solver.engine import prove
from attnio.solver.verify import verify_claim

ROOT = Path(__file__).resolve().parents[1]
SMALL_CLAIMS = [c for c in cb.CLAIMS if isinstance(c, Implication) and c.id.startswith("backward.small.")]
BS_STEPS = sorted({cid for b in bb.SMALL_CACHE for _, cid in PROOF_STEPS[b] if cid.startswith("constants.bs.")})


def test_the_small_cache_bounds_are_in_the_backward_catalog_with_their_regime_and_model() -> None:
    assert {bb.BWD_DP_SMALL, bb.BWD_SDP_SMALL} <= set(bb.BOUNDS)
    assert bb.SMALL_CACHE == {bb.BWD_DP_SMALL.id, bb.BWD_SDP_SMALL.id}
    for b in (bb.BWD_DP_SMALL, bb.BWD_SDP_SMALL):
        assert b.kind == "lower" and b.computation == "backward" and b.explicit and b.doc == "docs/bounds/backward-small.md"
        assert [str(r) for r in b.regime] == [str(M <= d**2), str(bb.DV_EQ_D)]  # d_v = d: encoded, not prose
    assert bb.BWD_DP_SMALL.constant == BS_COEFF and bb.BWD_SDP_SMALL.constant == 2 * BS_COEFF == Fraction(25, 9)
    assert bb.COVERS[bb.BWD_DP_SMALL.id] == set(BACKWARD_FORMULAS)
    assert bb.COVERS[bb.BWD_SDP_SMALL.id] == bb.RECOMPUTES_S


@pytest.mark.parametrize("point", [(64, 8, 9), (4096, 128, 4096), (1000, 13, 100)])
def test_bwd_dp_small_is_bs_with_dO_and_V_in_place_of_Q_and_K(point) -> None:
    """BWD-dP-small is BS's expression (same N²d products, same faces): equal at every point, not just alike."""
    env = dict(zip("NdM", point, strict=True))
    assert evaluate(bb.BWD_DP_SMALL.expr, env) == evaluate(BS.expr, env)


@pytest.mark.parametrize("claim", SMALL_CLAIMS, ids=lambda c: c.id)
def test_every_small_cache_claim_is_proved_by_z3_and_cvc5(claim: Implication) -> None:
    v = verify_claim(claim, solver="both")
    assert v.status == "proved", (claim.id, v.status, v.reason, v.counterexample)
    assert v.crosscheck == "proved", (claim.id, v.crosscheck)


@pytest.mark.parametrize("claim_id", BS_STEPS)
def test_the_bs_steps_the_small_cache_bounds_reuse_are_proved(claim_id: str) -> None:
    v = verify_claim(claim_by_id(claim_id))
    assert v.status == "proved", (claim_id, v.status, v.reason)


def test_bs_kappa_symbol_reaches_below_one_where_the_proof_uses_it() -> None:
    """κ = 1 − M/d² < 1: the symbol of constants.bs.combine/cubic must range over it (sym's default lo is 1)."""
    assert cc.kap.lo == 0 and cb.kap.lo == 0


def test_the_docs_page_names_each_step_of_both_bounds() -> None:
    page = (ROOT / "docs/bounds/backward-small.md").read_text()
    ids = {c.id for c in cb.CLAIMS} | {c.id for c in cc.CLAIMS}
    for bound_id in sorted(bb.SMALL_CACHE):
        title = {bb.BWD_DP_SMALL.id: "## BWD-dP-small", bb.BWD_SDP_SMALL.id: "## BWD-SdP-small"}[bound_id]
        section = page.split(title, 1)[1].split("\n## ", 1)[0]
        steps = PROOF_STEPS[bound_id]
        assert [n for n, _ in steps] == list(range(1, len(steps) + 1))
        for n, how in steps:
            m = re.search(rf"^{n}\. .*$", section, flags=re.M)
            assert m, (bound_id, n)
            if how == "prose":
                assert "argued in prose" in m.group(0), m.group(0)
            else:
                assert how in ids, how
                assert f"machine-checked: {how}" in m.group(0), m.group(0)


def test_a_wrong_rearrangement_constant_is_refuted() -> None:
    """14/5 > 25/9 (the exact coefficient with 54/25 is 25/9): the −3M slack cannot absorb it."""
    c = next(c for c in SMALL_CLAIMS if c.id == "backward.small.rearrange")
    wrong = Fraction(14, 5) * (1 - M / d**2) * N**2 * d / sqrt(M) - 3 * M
    out = prove(c.hyps, cb.Qs >= wrong)
    assert out.status == "refuted" and not out.spurious, out


def test_a_merge_without_the_shared_budget_is_refuted() -> None:
    """The merge needs both families on one face G: with s_S alone on the right it fails."""
    c = next(c for c in SMALL_CLAIMS if c.id == "backward.small.merge")
    out = prove(c.hyps, 4 * (cb.YS + cb.YP) * (cb.YS + cb.YP) <= cb.sS * cb.sS * cb.G)
    assert out.status == "refuted", out


def test_every_backward_schedule_has_a_small_cache_consistency_chain() -> None:
    assert set(cb.SMALL_LINK) == set(BACKWARD_FORMULAS)
    ids = {c.id for c in SMALL_CLAIMS}
    for b in bb.SMALL_CACHE:
        assert f"backward.small.relax.{b.removeprefix('backward.')}" in ids
    for name in BACKWARD_FORMULAS:
        assert any(i == f"backward.small.consistency.{name}" or i.startswith(f"backward.small.consistency.{name}.") for i in ids), name


def _grid():
    for dd in (2, 5, 16, 64):
        for mm in sorted({5, 7, dd, 4 * dd, dd * dd // 4, dd * dd // 2, dd * dd - 1, dd * dd}):
            if 5 <= mm <= dd * dd:
                for n in (1, 3, 64, 1000):
                    yield n, dd, mm


def test_small_cache_bounds_stay_below_every_covered_exact_cost_on_a_grid() -> None:
    """A numeric spot check next to the z3 chain (the bounds are also ≤ the uncovered schedules' costs)."""
    checked = 0
    for n, dd, mm in _grid():
        env = {"N": n, "d": dd, "M": mm, "dv": dd}
        for b in (bb.BWD_DP_SMALL, bb.BWD_SDP_SMALL):
            lb = evaluate(b.expr, env)
            for name, f in BACKWARD_FORMULAS.items():
                if all(r.holds(env) for r in f.valid):
                    assert backward_cost(name, N=n, d=dd, M=mm).io_words >= lb, (b.id, name, n, dd, mm)
                    checked += 1
    assert checked > 500


def test_measured_costs_over_the_small_cache_bounds_at_the_table_points() -> None:
    """Measured (count-only) = formula, and measured ÷ bound is finite and ≥ 1 at the docs' points; the ratios of
    docs/bounds/backward-small.md#numbers (square_tiling-bwd ÷ BWD-dP-small, flash2-bwd ÷ BWD-SdP-small)."""
    rows = bb.small_cache_table()
    assert [(r.N, r.d, r.M) for r in rows] == list(bb.SMALL_TABLE_POINTS)
    for r in rows:
        for name, bound, ratio in (("square_tiling-bwd", bb.BWD_DP_SMALL, r.ratio_square_tiling_bwd),
                                   ("flash2-bwd", bb.BWD_SDP_SMALL, r.ratio_flash2_bwd)):
            m = count(name, N=r.N, d=r.d, M=r.M)
            assert m.io == backward_cost(name, N=r.N, d=r.d, M=r.M)
            lb = evaluate(bound.expr, {"N": r.N, "d": r.d, "M": r.M})
            assert lb > 0 and 1 <= m.io_words / lb == pytest.approx(ratio)
    table = {(r.N, r.M): r for r in rows}
    assert 15 < table[(4096, 4096)].ratio_square_tiling_bwd < 16 and 24 < table[(4096, 8192)].ratio_square_tiling_bwd < 25
    assert all(17 < r.ratio_flash2_bwd < 18 for r in rows)


def test_small_cache_table_rejects_a_point_outside_the_small_cache() -> None:
    with pytest.raises(InvalidParameter, match="M"):
        bb.small_cache_table(((4096, 64, 8192),))


def test_best_backward_bound_in_the_small_cache_is_a_small_cache_bound() -> None:
    # the charged-once bounds (docs/bounds/backward-once.md) are the largest small-cache bounds where they apply:
    # the cap form above M ≈ 0.21·d², the pure form below it
    assert bb.best_lower_bound(4096, 128, 4096, "square_tiling-bwd")[0] == bb.BWD_FOUR_SMALL_ONCE_CAP.id
    assert bb.best_lower_bound(4096, 128, 4096, "flash2-bwd")[0] == bb.BWD_FIVE_SMALL_ONCE_CAP.id
    assert bb.best_lower_bound(4096, 128, 1024, "flash2-bwd")[0] == bb.BWD_FIVE_SMALL_ONCE.id  # M = d²/16
    assert bb.best_lower_bound(4096, 64, 65536, "flash2-bwd")[0] == bb.BWD_SLOTS_DV.id  # large cache (M = 16d²): not a small-cache bound (the dV face, BWD-slots-dv)
