"""The zero-slack searches (solver/pebble/tight.py): their lower bounds against exact optima, their schedules
replayed, and the one-shot solver path that uses them."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_pebble import small_dags

from attnio.solver.pebble.brute import brute_force
from attnio.solver.pebble.game import replay
from attnio.solver.pebble.graphs import Graph, attention, from_edges, matmul, reduction_tree
from attnio.solver.pebble.solve import solve
from attnio.solver.pebble.tight import compulsory, one_reread, one_spill, reread_search, tight_one_shot


def _check_against(g: Graph, M: int, opt: int) -> None:
    """Every answer of the zero-slack searches agrees with the exact one-shot optimum ``opt``."""
    T = compulsory(g)
    t = tight_one_shot(g, M)
    assert t.answer in ("tight", "none")
    assert (t.answer == "tight") == (opt == T)
    assert t.lower <= opt
    if t.answer == "tight":
        assert replay(g, M, t.schedule, recompute=False).io == T
        return
    r = one_reread(g, M)
    assert r.answer in ("found", "none")
    assert (r.answer == "found") == (opt == T + 1)
    # the same question by the one search over (computed set, red inputs): the same answer
    assert reread_search(g, M, 1).answer == r.answer
    if r.answer == "found":
        assert replay(g, M, r.schedule, recompute=False).io == T + 1
        return
    for up in (one_spill(g, M), reread_search(g, M, 2)):  # upper bounds only: never below the optimum
        if up.answer == "found":
            assert replay(g, M, up.schedule, recompute=False).io == up.cost >= opt


@settings(deadline=None)
@given(g=small_dags(), extra=st.integers(0, 2))
def test_zero_slack_answers_agree_with_brute_force_on_random_dags(g, extra):
    assume(g.n > 1)
    M = g.min_M + extra
    _check_against(g, M, brute_force(g, M, recompute=False))


@pytest.mark.parametrize("g,M,opt", [
    (reduction_tree(4), 3, 7), (reduction_tree(4), 4, 5), (matmul(2, 2, 2), 3, 25), (matmul(2, 2, 2), 4, 17),
    (matmul(2, 2, 2), 5, 14), (matmul(2, 2, 2), 6, 13), (matmul(2, 2, 2), 7, 12),
    (attention(2, 1), 3, 24), (attention(2, 1), 4, 15), (attention(2, 1), 5, 11), (attention(2, 1), 6, 10),
    (attention(2, 1), 7, 9), (attention(2, 1), 8, 8), (attention(2, 2), 8, 17), (attention(2, 2), 9, 16),
], ids=lambda x: getattr(x, "name", str(x)))
def test_zero_slack_answers_agree_with_the_known_one_shot_optima(g, M, opt):
    """The optima of docs/pebbling.md §6 and §9 (A*, exhaustive), one-shot game."""
    _check_against(g, M, opt)


def test_the_one_shot_path_certifies_above_the_trivial_bound_and_replays():
    # attention N=2, d=2, M=8: no tight calculation, one with one input read twice: OPT = 17 = 4Nd + 1
    r = solve(attention(2, 2), 8, recompute=False, time_limit_s=60)
    assert (r.status, r.opt, r.lower) == ("optimal", 17, 17)
    assert "no tight calculation" in r.note
    assert replay(attention(2, 2), 8, r.schedule, recompute=False).io == 17
    # the same answer as the plain A* search (exhaustive)
    assert solve(attention(2, 2), 8, recompute=False, tight=False, time_limit_s=60).opt == 17


def test_two_units_of_slack_are_proved_and_met():
    # attention N=3, d=1, M=9 one-shot: neither tight nor one re-read (OPT ≥ 14); two re-reads meet 14
    g = attention(3, 1)
    assert tight_one_shot(g, 9).answer == "none" and one_reread(g, 9).answer == "none"
    r = solve(g, 9, recompute=False, time_limit_s=60)
    assert (r.status, r.opt) == ("optimal", 14)
    assert replay(g, 9, r.schedule, recompute=False).io == 14


def test_one_spill_finds_a_replayable_calculation_on_attention():
    """The spill search's "found" path (split input, merged schedule) runs and its schedule replays at its cost:
    N = 2, d = 2, M = 9 (inputs + outputs 16; one spill costs 18)."""
    g = attention(2, 2)
    up = one_spill(g, 9)
    assert up.answer == "found"
    assert replay(g, 9, up.schedule, recompute=False).io == up.cost >= 16


def test_zero_slack_searches_agree_with_brute_force_where_no_spill_is_tight():
    # a small graph where the optimum is T + 3: the spill search answers unknown (no T + 2 claim), and the
    # zero-slack searches agree with brute force
    g = from_edges("spill", ["x", "y", "a", "b", "c", "e"],
                   [("x", "a"), ("y", "a"), ("a", "b"), ("y", "b"), ("x", "c"), ("b", "c"), ("a", "e"), ("c", "e")])
    M = g.min_M
    opt = brute_force(g, M, recompute=False)
    up = one_spill(g, M)
    if up.answer == "found":
        assert replay(g, M, up.schedule, recompute=False).io == up.cost >= opt
    _check_against(g, M, opt)


def test_a_stopped_zero_slack_search_says_unknown():
    from attnio.solver.pebble.limits import Deadline

    assert tight_one_shot(attention(2, 3), 10, deadline=Deadline(0.0)).answer == "unknown"
    assert one_reread(attention(2, 3), 10, deadline=Deadline(0.0)).answer == "unknown"


def test_a_benchmark_row_below_the_threshold_is_certified_by_the_zero_slack_searches():
    from attnio.solver.pebble.benchmark import Case, run_case

    row = run_case(Case(3, 1, 10, "one-shot", time_limit_s=60).as_dict())
    assert (row["status"], row["opt"], row["trivial"]) == ("optimal", 13, 12)
    assert "no tight calculation" in row["lower_by"] and row["certificate"]["replayed"]
