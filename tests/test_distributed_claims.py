"""The z3 claims of context parallelism (solver/claims/distributed.py): each is proved, a planted mutant of each
(a threshold halved, the Ulysses and hybrid conditions weakened by one K/V head's worth, hybrid made one word
more than the ring) is refuted with a counterexample that
satisfies the hypotheses and breaks the goal, and the claims are in the catalog's list."""

from __future__ import annotations

import pytest
from checks import assert_refuted_with_valid_counterexample

from attnio.bounds import distributed as dist
from attnio.bounds.distributed import HKV, THRESHOLD_BWD, THRESHOLD_FWD, H, P
from attnio.solver.claims import all_claims
from attnio.solver.claims import distributed as cd
from attnio.solver.verify import verify_claim


@pytest.mark.parametrize("claim", [c for c in cd.CLAIMS if c not in cd.LB_CLAIMS], ids=lambda c: c.id)
def test_claim_is_proved_by_z3(claim) -> None:
    """The schedules' claims (DIST-QK's own are proved in tests/test_distributed_bound.py)."""
    v = verify_claim(claim)
    assert v.status == "proved" and v.ok, (v.status, v.reason)


MUTANTS = [
    cd.overlap("fwd", threshold=THRESHOLD_FWD / 2, suffix=".mutant"),
    cd.overlap("bwd", threshold=THRESHOLD_BWD / 2, suffix=".mutant"),
    cd.ulysses_vs_ring("fwd", suffix=".mutant", rhs=H <= P * HKV),
    cd.hybrid_vs_ring(suffix=".mutant", rhs=H <= P * HKV),
    cd.hybrid_between("fwd", suffix=".mutant", hybrid=dist.SCHEDULES["ring"].forward + 1),
]


@pytest.mark.parametrize("claim", MUTANTS, ids=lambda c: c.id)
def test_mutant_is_refuted_with_a_valid_counterexample(claim) -> None:
    assert_refuted_with_valid_counterexample(claim)


def test_claims_are_in_the_catalog_list() -> None:
    ids = {c.id for c in all_claims()}
    assert {c.id for c in cd.CLAIMS} <= ids


def test_ulysses_condition_at_real_sizes() -> None:
    """The proved condition at integer points: Ulysses moves fewer words than the ring iff P ≥ g + 1."""
    for P_, kv, g in ((2, 2, 1), (4, 4, 3), (4, 4, 4), (8, 8, 4), (8, 8, 8)):
        u = dist.per_device("ulysses", P=P_, N=16 * P_, d=4, heads=g * kv, kv_heads=kv)["forward"]
        r = dist.per_device("ring", P=P_, N=16 * P_, d=4, heads=g * kv, kv_heads=kv)["forward"]
        assert (u <= r) == (P_ >= g + 1), (P_, g)
