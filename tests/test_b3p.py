"""B3_P (docs/bounds/b3p.md): its step claims are proved by z3 and re-proved by cvc5, tightened variants are
refuted with a valid counterexample, its step list matches its page, and at P = N², L = Nd it is B3."""

from __future__ import annotations

import re
from dataclasses import replace
from fractions import Fraction
from pathlib import Path

import pytest
from checks import assert_refuted_with_valid_counterexample, without_hypothesis

from attnio.bounds.constants import B3
from attnio.bounds.expr import evaluate
from attnio.bounds.proofs import PROOF_STEPS
from attnio.bounds.workloads import B3_CAUSAL, B3_RECT, best_lower_bound, workload_value
from attnio.core.workload import Workload
from attnio.solver.claims import all_claims
from attnio.solver.claims import b3p as v3
from attnio.solver.verify import verify_claim

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("claim", v3.CLAIMS, ids=lambda c: c.id)
def test_step_claim_is_proved_by_z3_and_by_cvc5(claim) -> None:
    pytest.importorskip("cvc5")
    v = verify_claim(claim, solver="both")  # z3 decides, cvc5 re-proves every obligation z3 proved
    assert v.status == "proved" and v.crosscheck == "proved", (v.status, v.crosscheck, v.reason)


def _mutant(claim_id: str, goal) -> object:
    c = next(c for c in v3.CLAIMS if c.id == claim_id)
    return replace(c, id=c.id + ".mutant", goal=goal)


def _scaled(claim_id: str, k: Fraction) -> object:
    """The claim with its smaller side (a ≥ b is stored as b ≤ a) multiplied by k > 1: a stronger claim."""
    c = next(c for c in v3.CLAIMS if c.id == claim_id)
    return _mutant(claim_id, c.goal.rhs >= k * c.goal.lhs)


def _dropped(claim_id: str, hyp: str) -> object:
    return without_hypothesis(next(c for c in v3.CLAIMS if c.id == claim_id), hyp)


MUTANTS = [
    # the slot term 1.5·M·L is needed: 1·M·L claims more than steps 12–13 give
    _mutant("workloads.b3p.rearrange",
            v3.Q >= v3.M * (4 * v3.Pp * v3.d**2 - v3.M * v3.Ls) / (v3.M**2 + 16 * v3.d**4) - v3.M),
    # the leading constant is 4, not 4.1
    _mutant("workloads.b3p.rearrange",
            v3.Q >= v3.M * (Fraction(41, 10) * v3.Pp * v3.d**2 - Fraction(3, 2) * v3.M * v3.Ls) / (v3.M**2 + 16 * v3.d**4) - v3.M),
    # 5·M·L in place of 6·M·L needs f = 0, which the claim does not assume (f ≤ M)
    _mutant("workloads.b3p.eliminate",
            16 * v3.Pp * v3.d**2 <= v3.h * (4 * v3.M**2 + 64 * v3.d**4) + 5 * v3.M * v3.Ls),
    # causal flash2: the K/V traffic is ≥ 4g·P·d²/M, not 5g·P·d²/M (the Q blocks may be as large as M allows)
    _scaled("workloads.b3p.consistency.causal.flash2.kv", Fraction(5, 4)),
    # causal flash1-fit: the K/V block's capacity c(2d + 1) ≤ M is needed (without it one block holds every key)
    _dropped("workloads.b3p.consistency.causal.flash1-fit", "wl_c·(2·d + 1) ≤ M"),
]


@pytest.mark.parametrize("claim", MUTANTS, ids=lambda c: c.id + str(MUTANTS.index(c)))
def test_tightened_step_is_refuted_with_a_valid_counterexample(claim) -> None:
    assert_refuted_with_valid_counterexample(claim)


def test_the_step_claims_are_in_the_catalog_of_claims_and_match_the_page() -> None:
    ids = {c.id for c in all_claims()}
    page = (ROOT / B3_RECT.doc).read_text()
    numbers = [n for n, _ in PROOF_STEPS[B3_RECT.id]]
    assert numbers == sorted(numbers) and sorted(set(numbers)) == list(range(1, 14))
    for n, how in PROOF_STEPS[B3_RECT.id]:
        line = re.search(rf"^{n}\. .*(?:\n {{3,}}.*)*", page, flags=re.M)
        assert line, n
        if how == "prose":
            assert "argued in prose" in line.group(0), n
        else:
            assert how in ids and f"claim {how}" in line.group(0), (n, how)
    assert {c.id for c in v3.CLAIMS} <= ids


@pytest.mark.parametrize("N,d,M", [(4096, 64, 16384), (65536, 128, 262144), (16384, 128, 131072), (7, 3, 5)])
def test_at_one_head_without_a_mask_it_is_B3(N: int, d: int, M: int) -> None:
    assert evaluate(B3_RECT.expr, {"Nq": N, "Nkv": N, "d": d, "dv": d, "M": M}) == evaluate(B3.expr, {"N": N, "d": d, "M": M})


def test_refereed_and_used_by_best_lower_bound() -> None:
    """B3_P is refereed (docs/bounds/b3p.md#referee), so best_lower_bound takes it where it is the largest."""
    for causal in (False, True):
        w = Workload.build(heads=32, kv_heads=8, N=4096, d=128, gpu="h100", dtype="bf16", causal=causal)
        b = B3_CAUSAL if causal else B3_RECT
        assert b.status == "derived here (refereed)"
        assert best_lower_bound(w) == (b.id, workload_value(b, w))  # the largest bound there