"""The derivations of the class-restricted approximate lower bounds (docs/approx.md §5.2, §5.3): their last
steps are proved by z3 and re-proved by cvc5, and tightened variants are refuted with a valid counterexample."""

from __future__ import annotations

from dataclasses import replace

import pytest
from checks import assert_refuted_with_valid_counterexample, without_hypothesis

from attnio.bounds.expr import sqrt
from attnio.bounds.symbols import M, N, d
from attnio.solver.claims import all_claims
from attnio.solver.claims import approx as ca
from attnio.solver.verify import verify_claim

DERIVATIONS = ca.derivation_claims()
TWO_PHASE = ca.two_phase_claims()
OUTPUT_ACC = ca.output_accumulator_claims()
ROW_RES = ca.row_resident_claims()


@pytest.mark.parametrize("claim", DERIVATIONS + TWO_PHASE + OUTPUT_ACC + ROW_RES, ids=lambda c: c.id)
def test_derivation_step_is_proved_by_z3_and_by_cvc5(claim) -> None:
    pytest.importorskip("cvc5")
    v = verify_claim(claim, solver="both")
    assert v.status == "proved" and v.crosscheck == "proved", (v.status, v.crosscheck, v.reason)


def test_every_approximate_lower_bound_has_a_derivation_claim_in_the_catalog() -> None:
    ids = {c.id for c in all_claims()}
    about = {b for c in DERIVATIONS for b in c.about}
    assert {c.id for c in DERIVATIONS + TWO_PHASE} <= ids
    assert about == {"approx.lower.matmul", "approx.lower.accumulator"}
    # approx.lower.two-phase: its step and one consistency claim per schedule (all three are in its class)
    assert {c.id for c in TWO_PHASE if c.kind == "consistency"} >= {
        f"approx.consistency.two-phase.{s}" for s in ("stream", "chunked", "tiled")}
    assert all("approx.lower.two-phase" in c.about for c in TWO_PHASE)
    # approx.lower.output-accumulator: its two steps, and consistency with the two schedules of its class
    assert {c.id for c in OUTPUT_ACC} <= ids and all("approx.lower.output-accumulator" in c.about for c in OUTPUT_ACC)
    assert {f"approx.consistency.output-accumulator.{s}" for s in ("stream", "chunked")} <= {c.id for c in OUTPUT_ACC}
    # approx.lower.row-resident: its five steps and the chunked links, all in the catalog and about the bound
    assert {c.id for c in ROW_RES} <= ids and all("approx.lower.row-resident" in c.about for c in ROW_RES)
    assert {f"approx.lower.row-resident.{k}" for k in ("segment1", "segment2", "phase1", "phase2", "sum")} <= {
        c.id for c in ROW_RES}


def _mutant(claim_id: str, goal) -> object:
    c = next(c for c in DERIVATIONS + TWO_PHASE + OUTPUT_ACC + ROW_RES if c.id == claim_id)
    return replace(c, id=c.id + ".mutant", goal=goal)


def _dropped(claim_id: str, hyp: str) -> object:
    return without_hypothesis(next(c for c in OUTPUT_ACC if c.id == claim_id), hyp)


r = ca.r
MUTANTS = [
    # 1/(2√2) ≈ 0.354 is what the segment count gives: 1/2 is more than it
    _mutant("approx.lower.matmul.rearrange", ca._SEG_Q >= N * r * d / (2 * sqrt(M)) - M),
    # the r·d creations are charged in full: half of them is not enough
    _mutant("approx.lower.accumulator.rearrange", ca._LV >= N * r * d / M - r * d / 2),
    # two-phase: the stream schedule keeps [S | s] resident with M ≥ r(d+2) + 2d, so −M in place of −2M is false
    _mutant("approx.consistency.two-phase.stream", 4 * N * d + 2 * r * (d + 1) - M <= 4 * N * d),
    # output-accumulator: the Q reads are counted in the windows, so 3Nd cannot be 4Nd on top of them
    _mutant("approx.lower.output-accumulator.sum", ca._SEG_Q >= N * d + next(
        c for c in OUTPUT_ACC if c.id == "approx.lower.output-accumulator.sum").goal.lhs),
    # chunked's consistency needs its query blocks (T_q·M ≥ N(d+3)): without them the windows' reads are unpaid
    _dropped("approx.consistency.output-accumulator.chunked", "N·(d + 3) ≤ blk_Tq·M"),
    # row-resident: a segment can form M²/d products (x = 0, y = M), so M²/(2d) is not an upper bound
    _mutant("approx.lower.row-resident.segment1", (ca._RX + ca._RY) * (M - ca._RX) <= M**2 / 2),
    # ... nor is it for phase 2 (u = v = M)
    _mutant("approx.lower.row-resident.segment2", ca._RU * ca._RV <= M**2 / 2),
    # the products of accumulators created inside a segment are charged: dropping the −2r(d+1) is not derivable
    _mutant("approx.lower.row-resident.phase1", ca._RL1 >= N * r * d * (d + 1) / M - M),
    # twice the phase-2 term is not derivable from M²/d products per segment
    _mutant("approx.lower.row-resident.phase2", ca._RL2 >= 2 * N * r * d * (d + 1) / M - M),
]


@pytest.mark.parametrize("claim", MUTANTS, ids=lambda c: c.id + str(MUTANTS.index(c)))
def test_tightened_step_is_refuted_with_a_valid_counterexample(claim) -> None:
    assert_refuted_with_valid_counterexample(claim)


def test_every_schedule_of_a_bounds_class_has_a_consistency_claim() -> None:
    """docs/approx.md §5: for each approximate lower bound and each poly schedule in its class, some catalog claim is
    about both (the bound ≤ that schedule's exact count)."""
    from attnio.bounds import approx

    about = [set(c.about) for c in all_claims()]
    for bid, schedules in approx.CLASS_SCHEDULES.items():
        for s in schedules:
            assert any({bid, f"approx.poly.{s}.exact"} <= a for a in about), (bid, s)


def test_the_two_class_bounds_are_refereed_and_the_accumulator_class_requires_products_formed_while_resident():
    """A fresh referee found two-phase sound and output-accumulator sound once its class (a) requires each product
    to be formed while its accumulator is resident; the catalog's status and class string say so."""
    from attnio.bounds import approx

    by_id = {b.id: b for b in approx.BOUNDS}
    assert {by_id[i].status for i in ("approx.lower.two-phase", "approx.lower.output-accumulator")} == {
        "derived here (refereed)"
    }
    assert "products formed while the accumulator is resident" in by_id["approx.lower.output-accumulator"].model
