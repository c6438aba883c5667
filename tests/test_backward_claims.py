"""The backward claims (solver/claims_backward.py): every algebraic step and consistency link is proved by z3 (the
BWD-SdP steps also by cvc5), no claim's regime is empty (each is evaluated at a witness point), the docs page names
each machine-checked step, the tightest constants of flash2-bwd and of the training step are proved, the leading
crossover is derived, and the exact costs cross where the leading terms say (measured)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from attnio.algorithms.run_backward import count_backward
from attnio.bounds import backward as bb
from attnio.bounds.backward import PROOF_STEPS, backward_constants_table
from attnio.bounds.expr import Rel, free_symbols
from attnio.solver.claim_types import Crossover, Implication, Tightest
from attnio.solver.claims import all_claims
from attnio.solver.claims_backward import CLAIMS
from attnio.solver.engine import prove
from attnio.solver.verify import verify_claim

ROOT = Path(__file__).resolve().parents[1]
IMPLICATIONS = [c for c in CLAIMS if isinstance(c, Implication)]

# Points for the witness check: the main symbols and the proofs' auxiliary ones.
_AUX = {"bwd_x": 0, "bwd_I": 1, "bwd_J": 1, "bwd_h": 10**12, "bwd_c": 1}
# the small-cache proofs' auxiliary symbols (bwds_*): all 0 except these (bwds_Q is set in _env)
_AUX_SMALL = {"bwds_h": 10**12, "bwds_tile": 1, "bwds_io": 10**15}
_SMALL_SYMS = {s.name for c in IMPLICATIONS for r in (*c.hyps, c.goal) for s in free_symbols(r) if s.name.startswith("bwds_")}
WITNESSES = [
    {"N": 4096, "d": 8, "M": 16384, "dv": 8},  # M ≥ 8d²
    {"N": 4096, "d": 64, "M": 4096, "dv": 64},  # M ≤ 8d²
    {"N": 4096, "d": 64, "M": 65536, "dv": 64},
    {"N": 4096, "d": 128, "M": 256, "dv": 128},  # M ≤ min(4d, d²): flash1-bwd's one-row small-cache link
]


def _env(w: dict) -> dict:
    env = dict(w, **_AUX)
    env["bwd_B"] = 2 * w["M"]
    env["bwd_Q"] = w["M"] * (_AUX["bwd_h"] - 1)
    env.update({n: 0 for n in _SMALL_SYMS})
    env.update(_AUX_SMALL)
    env["bwds_Q"] = 3 * w["M"] * (_AUX_SMALL["bwds_h"] - 1)
    return env


def _holds_somewhere(hyps) -> dict | None:
    for w in WITNESSES:
        env = _env(w)
        if all(h.holds(env) for h in hyps):
            return env
    return None


def test_backward_claims_are_in_the_aggregate_with_unique_ids() -> None:
    ids = [c.id for c in all_claims()]
    assert len(ids) == len(set(ids))
    assert {c.id for c in CLAIMS} <= set(ids)
    assert all(c.id.startswith("backward.") for c in CLAIMS)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_every_backward_claim_has_a_non_empty_regime(claim) -> None:
    hyps = claim.hyps if not isinstance(claim, Crossover) else claim.hyps
    assert all(isinstance(h, Rel) for h in hyps), claim.id
    env = _holds_somewhere(hyps)
    assert env is not None, f"{claim.id}: no witness point satisfies the hypotheses"
    if isinstance(claim, Implication):  # and the conclusion holds there (a numeric spot check of the proof)
        assert claim.goal.holds(env), claim.id


@pytest.mark.parametrize("claim", IMPLICATIONS, ids=lambda c: c.id)
def test_every_backward_step_and_consistency_link_is_proved(claim: Implication) -> None:
    v = verify_claim(claim)
    assert v.status == "proved", (claim.id, v.status, v.reason, v.counterexample)


@pytest.mark.parametrize("claim", [c for c in IMPLICATIONS if c.id.startswith("backward.sdp.")], ids=lambda c: c.id)
def test_cvc5_proves_the_bwd_sdp_steps_too(claim: Implication) -> None:
    pytest.importorskip("cvc5")
    assert prove(claim.hyps, claim.goal, backend="cvc5").status == "proved", claim.id


def test_the_docs_page_names_each_machine_checked_step() -> None:
    text = (ROOT / "docs/bounds/backward.md").read_text()
    ids = {c.id for c in CLAIMS} | {"constants.b1.amgm", "constants.b1.endpoint"}
    for bound_id, steps in PROOF_STEPS.items():
        if bound_id in bb.SMALL_CACHE:  # docs/bounds/backward-small.md: tests/test_backward_small.py
            continue
        for n, claim_id in steps:
            if claim_id == "prose":
                continue
            assert claim_id in ids, claim_id
            assert re.search(rf"^{n}\. .*machine-checked: {re.escape(claim_id)}", text, re.M), (bound_id, n, claim_id)


@pytest.mark.parametrize("claim_id", ["backward.tight.flash1-bwd.large-d", "backward.tight.training.flash2"])
def test_tightest_backward_constants_are_proved_with_the_step_below_refuted(claim_id: str) -> None:
    claim = next(c for c in CLAIMS if c.id == claim_id)
    assert isinstance(claim, Tightest)
    v = verify_claim(claim)
    assert v.status == "proved", (v.status, v.reason)
    assert v.counterexample is not None  # c − precision refuted at a valid integer point


def test_leading_crossover_of_the_backward_is_derived_near_M_equal_d_squared() -> None:
    claim = next(c for c in CLAIMS if isinstance(c, Crossover))
    v = verify_claim(claim)
    assert v.status == "proved", v.reason
    lo, hi = (float(eval(x)) for x in re.findall(r"M/d² [≤≥] (\d+/\d+)", v.constant))  # noqa: S307  (digits only)
    assert 0.9 < lo <= hi < 1.1, v.constant


@pytest.mark.parametrize("d", [16, 64, 128])
def test_exact_backward_costs_cross_where_the_leading_terms_say(d: int) -> None:
    """Measured (count-only): square_tiling-bwd < flash2-bwd at M/d² ≤ 1/2, > at M/d² ≥ 2 (N = 256d)."""
    N = 256 * d
    for r in (0.5, 0.25):
        M = max(int(r * d * d), 7 * d + 4)
        if M > r * d * d:
            continue
        assert count_backward("square_tiling-bwd", N=N, d=d, M=M).io_words < count_backward("flash2-bwd", N=N, d=d, M=M).io_words
    for r in (2, 4):
        M = r * d * d
        assert count_backward("square_tiling-bwd", N=N, d=d, M=M).io_words > count_backward("flash2-bwd", N=N, d=d, M=M).io_words


def test_backward_constants_table_at_the_forward_points() -> None:
    rows = backward_constants_table()
    assert len(rows) == 6
    for r in rows:
        assert r.best_schedule == "flash2-bwd"  # flash1-bwd (overflows M) is excluded
        assert r.ratio_flash2_bwd >= 1 and r.ratio_best >= 1  # no bound above a schedule's exact count
        assert 16 <= r.flash2_bwd_constant <= 19
    big = [r for r in rows if r.M >= 8 * r.d**2]
    assert big and all(r.best_bound == bb.BWD_SDP.id and r.ratio_flash2_bwd < 5 for r in big)


def test_overflowing_backward_schedules_are_those_run_in_audit_mode() -> None:
    from attnio.algorithms import registry_backward

    assert bb.OVERFLOWS == {n for n in registry_backward.names() if registry_backward.get(n).audit}
    assert bb.RECOMPUTES_S == {n for n in registry_backward.names() if registry_backward.get(n).recomputes_S}
