"""The exact red-blue pebbling solver (solver/pebble): hand-known optima, brute force, the rules, the sandwich.

Expected values here are worked by hand (docstrings of each test) or computed by the independent brute force
of solver/pebble/brute.py, never copied from the solver under test.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.cli import main as cli_main
from attnio.core.errors import InvalidParameter
from attnio.solver.pebble.brute import brute_force
from attnio.solver.pebble.game import IllegalMove, replay
from attnio.solver.pebble.graphs import Graph, attention, chain, from_edges, matmul, reduction_tree
from attnio.solver.pebble.sandwich import attention_row, sandwich_rows
from attnio.solver.pebble.solve import best_greedy, solve

# ---------------------------------------------------------------------------------------------- graphs


@pytest.mark.parametrize("N,d", [(1, 1), (2, 1), (2, 2), (3, 2), (4, 3)])
def test_attention_vertex_count_matches_the_hand_formula(N, d):
    g = attention(N, d)
    hand = 3 * N * d + N * N * d + N * N * (d - 1) + N * N + N * (N - 1) + N * N * d + N * d * (N - 1) + N * d
    assert g.n == hand
    assert len(g.inputs) == 3 * N * d and len(g.outputs) == N * d
    assert g.trivial_io == 4 * N * d


@pytest.mark.parametrize("tree", ["balanced", "chain"])
def test_attention_graph_wiring_follows_saha_ye(tree):
    g = attention(3, 3, tree=tree)
    idx = {lab: v for v, lab in enumerate(g.labels)}
    # a product of layer L1 has exactly the parents Q[i,l], K[j,l]
    assert set(g.parents[idx["QK[2,0,1]"]]) == {idx["Q[2,1]"], idx["K[0,1]"]}
    # exp has one parent: the root of the (i, j) summation tree; that tree's leaves are the d products (i, j, ·)
    (root,) = g.parents[idx["A[1,2]"]]
    leaves, stack = set(), [root]
    while stack:
        v = stack.pop()
        if g.labels[v].startswith("QK["):
            leaves.add(g.labels[v])
        else:
            stack.extend(g.parents[v])
    assert leaves == {f"QK[1,2,{l}]" for l in range(3)}
    # L2 product A[i,k]·V[k,c]; outputs divide by the row sum D[i]
    assert set(g.parents[idx["AV[0,2,1]"]]) == {idx["A[0,2]"], idx["V[2,1]"]}
    assert idx["D[0]"] in g.parents[idx["O[0,1]"]]
    assert g.max_indegree == 2


def test_chain_tree_is_a_left_fold():
    g = reduction_tree(4, tree="chain")
    assert g.parents[-1] == (g.n - 2, 3) and g.min_M == 3


# ---------------------------------------------------------------------------------------------- the rules


def test_replay_rejects_each_illegal_move():
    g = reduction_tree(2)  # x0, x1 -> root
    with pytest.raises(IllegalMove, match="no blue pebble"):
        replay(g, 3, [("read", 2)])
    with pytest.raises(IllegalMove, match="not red"):
        replay(g, 3, [("read", 0), ("compute", 2)])
    with pytest.raises(IllegalMove, match="red pebbles > M=2"):
        replay(g, 2, [("read", 0), ("read", 1), ("compute", 2)])
    with pytest.raises(IllegalMove, match="recomputation"):
        replay(g, 3, [("read", 0), ("read", 1), ("compute", 2), ("delete", 2), ("compute", 2)], recompute=False)
    with pytest.raises(IllegalMove, match="no blue pebble"):
        replay(g, 3, [("read", 0), ("read", 1), ("compute", 2)])  # ends without writing the output
    assert replay(g, 3, [("read", 0), ("read", 1), ("compute", 2), ("write", 2)]).io == 3


# ---------------------------------------------------------------------------------------------- hand-known optima


@pytest.mark.parametrize("n", [2, 3, 6])
@pytest.mark.parametrize("M", [2, 3])
def test_chain_costs_one_read_and_one_write(n, M):
    """Read v0, compute along the chain keeping two red pebbles, write the last vertex: 2."""
    for recompute in (True, False):
        assert solve(chain(n), M, recompute=recompute).opt == 2
    assert solve(chain(3), 1).status == "infeasible"


def test_balanced_tree_of_four_leaves_by_hand():
    """M ≥ 4: read a, b, add, drop a, b; read c, d, add; add the two sums; write: 4 reads + 1 write = 5.
    M = 3: after a+b three pebbles cannot hold a+b, c, d and c+d, so a+b is written and read back (or c+d):
    5 + 2 = 7 (recomputing a+b would need a, b and c+d at once plus the sum: 4)."""
    g = reduction_tree(4)
    assert solve(g, 3).opt == 7
    assert solve(g, 4).opt == 5
    assert solve(g, 2).status == "infeasible"


@pytest.mark.parametrize("leaves", [3, 5, 8])
def test_chain_tree_needs_no_spill_with_three_pebbles(leaves):
    """A left fold keeps one running sum: read each leaf once, write the root: leaves + 1, already at M = 3."""
    assert solve(reduction_tree(leaves, tree="chain"), 3).opt == leaves + 1


def test_dot_product_of_length_two_by_hand():
    """C = a0·b0 + a1·b1 (matmul 1×2·2×1). M = 4: p0 (keep), p1, add: 4 reads + 1 write = 5. M = 3: p0 must
    leave fast memory while a1, b1, p1 are placed (4 > 3), and cannot be recomputed later next to p1 (a0, b0,
    p1, p0 = 4), so one product is written and read back: 7."""
    g = matmul(1, 2, 1)
    assert (solve(g, 3).opt, solve(g, 4).opt, solve(g, 7).opt) == (7, 5, 5)


def test_two_by_two_outer_product_by_hand():
    """C = a·bᵀ, 2×1·1×2: each output needs its two inputs and itself (3 pebbles). With M = 3 two inputs stay
    red between outputs, and the four outputs form the cycle a0-b0-a1-b1 (K_{2,2}), so one input is read twice:
    4 + 1 reads + 4 writes = 9. With M = 4: a0, b0, b1 and the
    output: read a0, b0, b1 (C00, C01), drop a0, read a1 (C10, C11): 8 = trivial."""
    g = matmul(2, 1, 2)
    assert solve(g, 3).opt == 9
    assert solve(g, 4).opt == 8


def test_recomputation_strictly_helps_on_a_known_graph():
    """v0 → v1 → v3 → v5, v0 → v2 → v4, v1 → v2, v0 → v5 (outputs v4, v5), M = 3. With recomputation:
    read v0, v1, v2, drop v1, v4 (write), drop v2, v4, recompute v1, v3, drop v1, v5 (write): 3 = trivial.
    One-shot, v1 must be written (or v3 ...) once more: 4."""
    g = from_edges(
        "recompute-helps",
        [f"v{i}" for i in range(6)],
        [("v0", "v1"), ("v0", "v2"), ("v1", "v2"), ("v1", "v3"), ("v2", "v4"), ("v0", "v5"), ("v3", "v5")],
    )
    assert brute_force(g, 3) == 3 and brute_force(g, 3, recompute=False) == 4
    assert solve(g, 3).opt == 3
    assert solve(g, 3, recompute=False).opt == 4


def test_matmul_two_by_two_reaches_the_trivial_bound_with_enough_pebbles():
    g = matmul(2, 2, 2)
    assert solve(g, g.n).opt == g.trivial_io == 12


# ---------------------------------------------------------------------------------------------- brute force


@st.composite
def small_dags(draw) -> Graph:
    n = draw(st.integers(2, 7))
    edges = []
    for v in range(1, n):
        ps = draw(st.lists(st.integers(0, v - 1), max_size=min(3, v), unique=True))
        edges += [(f"v{p}", f"v{v}") for p in ps]
    return from_edges("random", [f"v{v}" for v in range(n)], edges)


@settings(deadline=None)
@given(g=small_dags(), extra=st.integers(0, 2), recompute=st.booleans())
def test_exact_solver_agrees_with_brute_force_on_random_dags(g, extra, recompute):
    M = g.min_M + extra
    r = solve(g, M, recompute=recompute)
    assert r.status == "optimal"
    assert r.opt == brute_force(g, M, recompute=recompute)
    assert replay(g, M, r.schedule, recompute=recompute).io == r.opt


@pytest.mark.parametrize(
    "g", [matmul(1, 2, 1), matmul(2, 1, 2), reduction_tree(4), reduction_tree(5, tree="chain"), chain(5)], ids=lambda g: g.name
)
def test_exact_solver_agrees_with_brute_force_on_named_graphs(g):
    for M in range(g.min_M, g.min_M + 2):
        for recompute in (True, False):
            assert solve(g, M, recompute=recompute).opt == brute_force(g, M, recompute=recompute)


def test_brute_force_refuses_large_graphs():
    with pytest.raises(InvalidParameter, match="at most"):
        brute_force(matmul(2, 2, 2), 5)


# ---------------------------------------------------------------------------------------------- what is proved


def test_a_stopped_search_reports_bounds_that_hold_and_never_optimal():
    g = matmul(2, 2, 2)
    exact = solve(g, 5)
    assert exact.status == "optimal"
    stopped = solve(g, 5, max_states=50)
    assert stopped.status == "bounds" and stopped.opt is None
    assert g.trivial_io <= stopped.lower <= exact.opt <= stopped.upper
    assert replay(g, 5, stopped.schedule).io == stopped.upper
    assert "not proved optimal" in stopped.proved


def test_a_schedule_meeting_the_trivial_bound_is_reported_optimal_without_search():
    """Attention N=3, d=1 (51 vertices), M = 16: the greedy schedule reads each input once and writes each
    output once (12 = 4Nd), which no calculation can beat, so OPT is proved without search."""
    g = attention(3, 1)
    r = solve(g, 16, time_limit_s=20)
    assert r.status == "optimal" and r.opt == g.trivial_io == 12
    assert r.states == 0 and "meets the lower bound" in r.note
    assert replay(g, 16, r.schedule).io == 12


def test_optimum_does_not_increase_with_M_and_stays_below_greedy():
    g = matmul(1, 3, 2)
    opts = [solve(g, M).opt for M in range(g.min_M, g.min_M + 4)]
    assert opts == sorted(opts, reverse=True)
    for M, o in zip(range(g.min_M, g.min_M + 4), opts, strict=True):
        assert g.trivial_io <= o <= best_greedy(g, M)[0]
        assert solve(g, M, recompute=False).opt >= o


def test_sat_engines_are_optimal_only_within_their_horizon():
    from attnio.solver.pebble.sat import solve_sat

    g = reduction_tree(4)
    z = solve_sat(g, 3, horizon=12, engine="z3")
    assert z.status == "optimal within horizon" and z.upper == solve(g, 3).opt and z.opt is None
    assert "at most 12 steps" in z.proved
    short = solve_sat(g, 4, horizon=3, engine="z3")  # 4 leaves, 3 adds and a write need more than 3 steps
    assert short.status == "bounds" and short.upper is None
    pytest.importorskip("ortools")
    c = solve_sat(g, 3, horizon=12, engine="cpsat", time_limit_s=20)
    assert c.upper == 7 and c.status in ("optimal within horizon", "bounds")


# ---------------------------------------------------------------------------------------------- the sandwich


def _check(rows):
    for row in rows:
        assert not row["violations"], row["violations"]
        assert row["opt_lower"] <= row["opt_upper"]


def test_sandwich_attention_N2_d1_with_enough_pebbles():
    """Covered here (fast): attention N=2, d=1, M ∈ {8, 9} (OPT = trivial 4Nd = 8 from M = 8 on)."""
    rows = [attention_row(2, 1, M, time_limit_s=30).as_dict() for M in (8, 9)]
    _check(rows)
    assert all(r["status"] == "optimal" and r["opt"] == 8 for r in rows)
    assert "trivial.4Nd" in rows[0]["lower_bounds"]
    assert rows[0]["costs"], "some attnio algorithm runs at N=2, d=1, M=8"


def test_sandwich_matmul_2x2x2_every_M():
    rows = sandwich_rows(attention_sizes=(), matmul_sizes=((2, 2, 2),), time_limit_s=30)
    _check(rows)
    assert [r["instance"]["M"] for r in rows][0] == 3
    assert rows[-1]["opt_upper"] == 12


@pytest.mark.slow
def test_sandwich_attention_N2_d1_small_M():
    """Attention N=2, d=1 at M = 3 and 6 with 5 s each: a row whose search stops checks bounds only
    (proving M = 3..6 takes 25 s to minutes: benchmarks/bench_pebble.py)."""
    rows = [attention_row(2, 1, M, time_limit_s=5).as_dict() for M in (3, 6)]
    _check(rows)


@pytest.mark.slow
def test_sandwich_larger_attention_instances_bounds_only():
    """N=2, d=2 and N=3, d=1 (46 and 51 vertices), 2 s each: bounds only; the checks that can fail still run."""
    rows = [attention_row(N, d, M, time_limit_s=2).as_dict() for N, d in ((2, 2), (3, 1)) for M in (3, 12)]
    _check(rows)


# ---------------------------------------------------------------------------------------------- symmetry


@pytest.mark.parametrize("g", [attention(2, 1), attention(2, 3), attention(3, 1, tree="chain"), matmul(2, 2, 2), matmul(2, 3, 2)], ids=lambda g: g.name)
def test_every_kept_permutation_is_an_automorphism(g):
    from attnio.solver.pebble.symmetry import automorphisms

    perms = automorphisms(g)
    assert len(perms) == len(set(perms)) and perms[0] == tuple(range(g.n))
    for pi in perms:
        assert sorted(pi) == list(range(g.n))
        for v in range(g.n):
            assert {pi[p] for p in g.parents[v]} == set(g.parents[pi[v]])
    # closed under composition (a group), so orbits are well defined
    S = set(perms)
    for a in perms[:6]:
        for b in perms[:6]:
            assert tuple(a[b[v]] for v in range(g.n)) in S


@pytest.mark.parametrize(
    "g,M", [(matmul(2, 2, 2), 5), (attention(2, 1), 8), (matmul(2, 1, 2), 3)], ids=["matmul222-M5", "attention21-M8", "matmul212-M3"]
)
def test_symmetry_reduction_does_not_change_the_optimum(g, M):
    for recompute in (True, False):
        a = solve(g, M, recompute=recompute, symmetry=True)
        b = solve(g, M, recompute=recompute, symmetry=False)
        assert a.opt == b.opt is not None
        assert replay(g, M, a.schedule, recompute=recompute).io == a.opt


# ---------------------------------------------------------------------------------------------- CLI


def test_cli_pebble_json(capsys):
    assert cli_main(["pebble", "--N", "2", "--d", "1", "--M", "9", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "optimal" and out["opt"] == 8 and out["vertices"] == 24
    assert out["schedule_moves"] > 0


def test_cli_pebble_matmul_and_bad_input(capsys):
    assert cli_main(["pebble", "--N", "1", "--d", "2", "--M", "3", "--graph", "matmul", "--n", "1", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["opt"] == 7
    assert cli_main(["pebble", "--N", "0", "--d", "1", "--M", "3"]) == 2
    assert "N=0 is invalid" in capsys.readouterr().err
    for opt in ("--m", "--k", "--n"):  # 0 was read as 'not given' (the default N or d) and the run went ahead
        assert cli_main(["pebble", "--N", "1", "--d", "2", "--M", "3", "--graph", "matmul", opt, "0"]) == 2
        assert f"{opt[2:]}=0 is invalid" in capsys.readouterr().err


# Instances at and around the CLI's size limit (MAX_VERTICES = 20,000 vertices), the medium graph that used to
# ignore the limit for minutes, and the SAT encodings at their largest horizon.
LIMIT_CASES = [
    ["--N", "46", "--d", "2", "--M", "13"],  # 19,872 vertices: the largest accepted attention graph with d = 2
    ["--N", "1", "--d", "2857", "--M", "4"],  # 17,143 vertices, one row
    ["--N", "32", "--d", "2", "--M", "13"],
    ["--N", "4", "--d", "2", "--M", "8"],  # small graph, many automorphisms (symmetry tables)
    ["--N", "4", "--d", "2", "--M", "8", "--no-recompute"],
    ["--graph", "matmul", "--N", "21", "--d", "21", "--M", "5"],
    ["--N", "2", "--d", "2", "--M", "5", "--engine", "z3", "--horizon", "1085"],  # (T + 1)·46 <= 50,000 cells
]


class _RacingClock:
    """A clock each reading of which is 2 s after the last: a 1 s deadline has passed at its next reading. It starts
    at the real clock's reading, since the CLI takes its start time from the real clock: a clock starting at 0 would
    pass a deadline set at the machine's uptime + 1 s only after uptime/2 readings (hours of z3 on a machine that
    has been up for hours)."""

    def __init__(self) -> None:
        import time

        self.t = time.perf_counter()

    def perf_counter(self) -> float:
        self.t += 2.0
        return self.t


@pytest.mark.parametrize("argv", LIMIT_CASES, ids=lambda a: " ".join(a))
def test_cli_pebble_time_limit_stops_every_phase_at_its_first_check(argv, capsys, monkeypatch):
    """--time-limit 1 covers building the graph, the automorphisms, the greedy schedule and every search loop.

    No wall clock: the deadline's clock is replaced by one that passes 2 s per reading, so every phase stops at
    its first check and the answer is the bounds proved so far, never "optimal" (a loop that ignored the limit
    would run its whole search: minutes on these instances, which CI's job timeout reports). How long a real 1 s limit takes on the wall clock is a benchmark's question, not a test's."""
    from attnio.solver.pebble import limits

    monkeypatch.setattr(limits, "time", _RacingClock())
    rc = cli_main(["pebble", *argv, "--time-limit", "1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["status"] == "bounds", out
    assert out["lower"] is not None and (out["upper"] is None or out["lower"] <= out["upper"])


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["--N", "47", "--d", "2", "--M", "13"], "at most 20000 vertices"),
        (["--N", "10000000000", "--d", "1000000000", "--M", "13"], "at most 20000 vertices"),
        (["--graph", "matmul", "--N", "22", "--d", "22", "--M", "5"], "at most 20000 vertices"),
        (["--N", "2", "--d", "2", "--M", "5", "--engine", "z3", "--horizon", "1087"], "horizon + 1)·vertices <= 50000"),
        (["--N", "2", "--d", "1", "--M", "5", "--time-limit", "nan"], "time_limit=nan"),
        (["--N", "2", "--d", "1", "--M", "5", "--time-limit", "0"], "time_limit=0.0"),
        (["--N", "2", "--d", "1", "--M", "5", "--max-states", "0"], "max_states=0"),
    ],
)
def test_cli_pebble_refuses_instances_beyond_its_limits_before_building(argv, fragment, capsys):
    assert cli_main(["pebble", *argv]) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1, err
