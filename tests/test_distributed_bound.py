"""DIST-QK, the lower bound on the words the busiest of P processors receives (docs/bounds/distributed.md):

- every machine-checked step and every consistency claim proved by z3 (solver tier) and re-proved by cvc5 (cvc5
  tier); a mutant (the first branch's constant 2 raised to 5/2) refuted with a counterexample satisfying the
  hypotheses;
- the counting of steps 2–7 checked exhaustively on tiny instances (d = 1): every set of pairs one processor may be
  assigned (A ≥ N²/P) and every initial share of at most 2Nd/P rows; this checks the counting inequality the prose
  reduces to, not the prose reduction itself (the tracing of steps 2–3);
- the bound ≤ every schedule's exact words per device (forward and backward) at Hypothesis points drawing every
  parameter (P, N, d, d_v, batch, heads, kv-heads, the hybrid group size), in exact arithmetic;
- the page names every step claim of the step table, in its order, and the CLI's ``lower_bound`` field.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from checks import assert_refuted_with_valid_counterexample
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.bounds import distributed as dist
from attnio.bounds.catalog import all_bounds, by_id
from attnio.bounds.expr import sqrt
from attnio.bounds.proofs import PROOF_STEPS, proof_status
from attnio.bounds.symbols import N, d
from attnio.core.errors import InvalidParameter
from attnio.solver.claims import all_claims
from attnio.solver.claims import distributed as cd
from attnio.solver.verify import verify_claim

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs/bounds/distributed.md"
STEP_IDS = [c for _, c in PROOF_STEPS[dist.LB_ID] if c != "prose"]


# the claims -------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("claim", cd.LB_CLAIMS, ids=lambda c: c.id)
def test_step_and_consistency_claims_are_proved_by_z3(claim) -> None:
    v = verify_claim(claim)
    assert v.status == "proved" and v.ok, (v.status, v.reason)


@pytest.mark.parametrize("claim", cd.LB_CLAIMS, ids=lambda c: c.id)
def test_step_and_consistency_claims_are_reproved_by_cvc5(claim) -> None:
    v = verify_claim(claim, solver="both")
    assert v.status == "proved" and v.ok, (v.status, v.reason)
    assert v.crosscheck == "proved", (v.crosscheck, v.details)


MUTANT_BOUND = dist.minimum(Fraction(5, 2) * N * d / sqrt(dist.P) - 2 * N * d / dist.P, dist.LB_PAIRS)


def test_a_larger_constant_is_refuted_against_attention2d() -> None:
    claim = cd.lb_le("attention2d", bound=MUTANT_BOUND, suffix=".mutant")
    assert_refuted_with_valid_counterexample(claim)


def test_the_claims_are_in_the_catalog_and_about_the_bound() -> None:
    claims = {c.id: c for c in all_claims()}
    for c in cd.LB_CLAIMS:
        assert dist.LB_ID in claims[c.id].about, c.id
    assert set(STEP_IDS) <= set(claims)
    assert proof_status(dist.LB_ID) == "5 of 9 steps machine-checkable, 4 prose"


def test_the_bound_is_found_by_id_but_kept_out_of_the_two_level_catalog() -> None:
    b = by_id(dist.LB_ID)
    assert (b.kind, b.status, b.provenance, b.explicit, b.doc) == ("lower", "derived here (refereed)", "derived here", True,
                                                                   "docs/bounds/distributed.md")
    assert {s.name for r in b.regime for s in _syms(r)} == {"cp_P", "N", "d", "dv"}
    assert dist.LB_ID not in {x.id for x in all_bounds()}


def _syms(r):
    from attnio.bounds.expr import free_symbols

    return free_symbols(r)


# the counting, exhaustively on tiny instances ------------------------------------------------------------------------


def least_received(n: int, P: int) -> int:
    """The least number of words a processor must receive (d = 1) over every set S of pairs with |S| ≥ n²/P and every
    initial share of at most q = 2n/P rows of Q and K: choose the final available rows T (Q rows 0..n−1, K rows
    n..2n−1), pay max(0, |T| − q) received rows plus one received tree word per pair of S outside I_T × J_T.
    Enumerated with bitmasks (numpy): S over all subsets of the n² pairs, T over all subsets of the 2n rows."""
    q = Fraction(2 * n, P)
    pairs = [(i, j) for i in range(n) for j in range(n)]
    subsets = np.arange(1 << (n * n), dtype=np.int64)
    pop = np.zeros(1 << (n * n), dtype=np.int64)
    for k in range(n * n):
        pop += (subsets >> k) & 1
    chosen = subsets[pop * P >= n * n]  # |S| ≥ n²/P
    best = None
    for T in range(1 << (2 * n)):
        mask = sum(1 << k for k, (i, j) in enumerate(pairs) if T >> i & 1 and T >> (n + j) & 1)
        outside = pop[chosen & ~mask].min()  # pairs of S outside I_T × J_T (popcount of a subset of the pairs)
        cost = max(0, bin(T).count("1") - q) + int(outside)
        best = cost if best is None else min(best, cost)
    return best  # type: ignore[return-value]


@pytest.mark.parametrize(("n", "P"), [(2, 2), (3, 2), (4, 2), (4, 4)])
def test_least_received_is_at_least_the_bound_on_tiny_instances(n: int, P: int) -> None:
    least = least_received(n, P)
    assert least >= dist.lower_bound(P=P, N=n, d=1), (n, P, least)


def test_the_counting_is_tight_at_n4_p4() -> None:
    """The enumeration is not vacuous, and the page's tightness remark holds: at N = 4, P = 4, d = 1 the least
    receive over every assignment and share is exactly L = 2·4/2 − 2·4/4 = 2 (a larger constant would exceed it)."""
    assert least_received(4, 4) == dist.lower_bound(P=4, N=4, d=1) == 2


# the bound below every schedule, every parameter drawn --------------------------------------------------------------


def at_most(words: int, *, P: int, n_: int, d_: int) -> bool:
    """L(P, N, d) ≤ words, exactly: the second branch in Fractions; the first as (2Nd)² ≤ P·(words + 2Nd/P)²."""
    second = Fraction(n_ * n_, P) - Fraction(n_ * n_, P * P)
    w1 = words + Fraction(2 * n_ * d_, P)
    return second <= words or (w1 >= 0 and (2 * n_ * d_) ** 2 <= P * w1 * w1)


@settings(max_examples=300, deadline=None)
@given(P=st.integers(2, 64), rows=st.integers(1, 64), d_=st.integers(1, 256), dv=st.integers(1, 256),
       batch=st.integers(1, 4), kv=st.integers(1, 16), g=st.integers(1, 8), intra=st.integers(2, 32),
       schedule=st.sampled_from(sorted(dist.SCHEDULES)))
def test_the_bound_is_below_every_schedule(P, rows, d_, dv, batch, kv, g, intra, schedule) -> None:
    n_ = 2 * P * rows  # a multiple of 2P: every layout splits it
    heads = kv * g
    try:
        w = dist.per_device(schedule, P=P, N=n_, d=d_, dv=dv, heads=heads, kv_heads=kv, batch=batch,
                            intra=intra if schedule == "hybrid" else None)
    except InvalidParameter:
        return  # this schedule does not run here (Ulysses' P | H_kv, hybrid's groups, Attention2D's square P)
    for p, words in w.items():
        assert at_most(words, P=P, n_=n_, d_=d_), (schedule, p, words, P, n_, d_)


def test_at_most_is_exact_at_the_attainment() -> None:
    """Attention2D's Q and K words equal the first branch: the exact comparison accepts them and refuses one less."""
    P, n_, d_ = 16, 64, 8
    qk = 2 * (4 - 1) * (n_ // P) * d_  # (√P − 1)(nd + nd)
    assert at_most(qk, P=P, n_=n_, d_=d_) and not at_most(qk - 1, P=P, n_=n_, d_=d_)


# the page and the CLI ----------------------------------------------------------------------------------------------


def test_the_page_names_every_step_in_order() -> None:
    text = PAGE.read_text()
    proof = text[text.index("## Proof"):text.index("## Attainment")]
    numbers = [int(m) for m in re.findall(r"^(\d+)\. \*\*", proof, flags=re.M)]
    assert numbers == sorted({n for n, _ in PROOF_STEPS[dist.LB_ID]})
    positions = [proof.index(f"`{c}`") for c in STEP_IDS]
    assert positions == sorted(positions)
    for n, c in PROOF_STEPS[dist.LB_ID]:
        block = re.search(rf"^{n}\. \*\*.*?(?=^\d+\. \*\*|\Z)", proof, flags=re.M | re.S).group(0)  # type: ignore[union-attr]
        assert ("argued in prose" in block) if c == "prose" else (f"`{c}`" in block), (n, c)
    for c in cd.LB_CLAIMS:
        assert f"`{c.id}`" in text or f"`.{c.id.rsplit('.', 1)[1]}`" in text, c.id


def test_the_cli_json_carries_the_bound_and_the_ratio(capsys) -> None:
    from attnio.cli import main

    assert main(["distributed", "--schedule", "attention2d", "--P", "4", "--N", "64", "--d", "4", "--json",
                 "--simulate", "no"]) == 0
    lb = json.loads(capsys.readouterr().out)["lower_bound"]
    L = dist.lower_bound(P=4, N=64, d=4)
    assert lb["id"] == dist.LB_ID and lb["words"] == L == 2 * 64 * 4 / 2 - 2 * 64 * 4 / 4
    words = dist.per_device("attention2d", P=4, N=64, d=4, heads=1, kv_heads=1)["forward"]
    assert lb["ratio"]["forward"] == words / L
    # no bound under a causal mask: DIST-QK needs every S_ij (a referee's counterexample at N = 6, P = 2, d = 1)
    assert main(["distributed", "--schedule", "ring", "--P", "2", "--N", "6", "--d", "1", "--causal", "--json",
                 "--simulate", "no"]) == 0
    assert json.loads(capsys.readouterr().out)["lower_bound"] is None


def test_the_report_section_divides_every_schedule_by_the_bound() -> None:
    """The report's "Across devices" table: every one-head schedule at or above DIST-QK, Attention2D within
    (2d + 2d_v + 1)/(2d) of it (its Q and K all-gathers meet the bound's first term), a dash where P is not square."""
    from attnio.reports.section_distributed import POINTS, SCHEDULES, rows

    for (n, dd, dv, P), row in zip(POINTS, rows(), strict=True):
        ratios = dict(zip(SCHEDULES, row[5:], strict=True))
        for s, r in ratios.items():
            if r == "—":
                assert s == "attention2d" and int(P**0.5) ** 2 != P
                continue
            assert float(r) >= 1, (s, n, dd, dv, P)
        if ratios["attention2d"] != "—":
            assert float(ratios["attention2d"]) <= (2 * dd + 2 * dv + 1) / (2 * dd) + 1e-3
