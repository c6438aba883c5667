"""Exact counts: the machine's measured reads and writes equal each algorithm's closed-form formula, forward
and backward (bounds/costs.py, derived in docs/costs.md), count-only equals real runs, peak fast memory stays
≤ M, and more M never costs more I/O.

Hypothesis draws N, d, d_v and M, with edge sizes (N or d = 1, M at the algorithm's minimum) and sizes that
the block sizes do not divide. The count-only path is cheap, so the formula check runs 200 examples per
algorithm under the ci profile; real runs use small sizes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np
import pytest
from checks import assert_count_equals_formula, assert_real_run_equals_count_and_formula
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from strategies import points

from attnio.algorithms import registry
from attnio.algorithms.run import count, run
from attnio.bounds.costs import BACKWARD_FORMULAS, FORMULAS, backward_cost, cost
from attnio.bounds.expr import evaluate_int, free_symbols

# Every algorithm with a formula. flash1 (as published) runs in audit mode: its peak is checked in
# tests/test_algorithms.py instead of against M.
ALGORITHMS = ["flash2", "flash2-square", "flash1", "flash1-fit", "standard", "square_tiling", "square_tiling-io", "kv_stationary", "split_v"]
# Every backward schedule with a formula (tests/test_backward.py checks their gradients). flash1-bwd (as
# published) runs in audit mode.
BACKWARD = ["flash2-bwd", "flash2-fused-bwd", "flash2-2pass-bwd", "flash2-square-bwd", "flash1-bwd", "flash1-fit-bwd", "standard-bwd",
            "square_tiling-bwd", "square_tiling-io-bwd"]
# (schedule, its formula, fits): both passes; M is drawn up to fits·N(d + d_v), the backward's working sets being larger.
PASSES = [(n, cost, 3) for n in ALGORITHMS] + [(n, backward_cost, 5) for n in BACKWARD]


def test_every_registered_schedule_with_a_cost_formula_is_checked_here_and_the_tables_are_apart() -> None:
    with_formula = {n for n in registry.names() if registry.get(n).cost is not None}
    assert with_formula == set(ALGORITHMS)
    assert set(ALGORITHMS) <= set(FORMULAS)
    with_formula = {n for n in registry.names("backward") if registry.get(n).cost is not None}
    assert with_formula == set(BACKWARD) == set(BACKWARD_FORMULAS)
    assert not set(BACKWARD_FORMULAS) & set(FORMULAS)
    assert not set(registry.names()) & set(registry.names("backward"))


@pytest.mark.parametrize("name,formula,fits", PASSES)
@given(data=st.data())
def test_count_only_counts_equal_the_formula_exactly(name: str, formula: Callable, fits: int, data: st.DataObject) -> None:
    N, d, dv, M = data.draw(points(name, max_N=5000, max_d=300, max_M_factor=400, fits=fits))
    assert_count_equals_formula(name, formula, N, d, dv, M)


@pytest.mark.parametrize("name,formula,fits", [*PASSES, ("auto-bwd", backward_cost, 5)])
@settings(max_examples=25)
@given(data=st.data())
def test_real_run_counts_equal_count_only_counts_and_peak_fits(name: str, formula: Callable, fits: int, data: st.DataObject) -> None:
    N, d, dv, M = data.draw(points(name, max_N=20, max_d=7, max_M_factor=30, fits=fits))
    # check=False for the backward: its gradients are checked against the analytic backward in tests/test_backward.py
    real = run(name, N=N, d=d, dv=dv, M=M, seed=N * 31 + d, check=formula is cost)
    chosen = real.tiling.algorithm if name == "auto-bwd" else name
    assert_real_run_equals_count_and_formula(name, chosen, real.measurement, formula, N, d, dv, M)


def test_real_run_counts_equal_count_only_on_a_larger_non_divisible_case() -> None:
    for name in ALGORITHMS:
        N, d, dv = 67, 13, 13 if name != "split_v" else 29
        M = registry.get(name).tiling_cls.min_M(N, d, dv) * 5 + 3
        real = run(name, N=N, d=d, dv=dv, M=M, seed=1)
        fast = count(name, N=N, d=d, dv=dv, M=M)
        assert real.measurement.io == fast.io, name
        assert real.measurement.per_array == fast.per_array, name


# Monotonicity in M: every formula here is a non-decreasing function of tile counts (T_r, T_c, T, T_v) that
# are ⌈N/x⌉ or ⌈d/x⌉ with x non-decreasing in M, so no ceiling effect can make more M cost more. Hypothesis
# tries to refute it on the measured counts. square_tiling-io is excluded: its rule rounds √M and d_v/√M, so a
# larger M can pick a worse shape (up to ≈ 9 % more words; tests/test_square_tiling_io.py measures it).
# The backward formulas are built the same way (T_c, T, T_d, T_v).
MONOTONE = [(n, fits) for n, _, fits in PASSES if n != "square_tiling-io"]


@pytest.mark.parametrize("name,fits", MONOTONE)
@given(data=st.data())
def test_more_M_never_increases_measured_io(name: str, fits: int, data: st.DataObject) -> None:
    N, d, dv, M = data.draw(points(name, max_N=3000, max_d=200, max_M_factor=200, fits=fits))
    M2 = data.draw(st.one_of(st.integers(M, M + 8), st.integers(M, 4 * M)))
    assume(M2 > M)
    a = count(name, N=N, d=d, dv=dv, M=M).io_words
    b = count(name, N=N, d=d, dv=dv, M=M2).io_words
    assert b <= a, (N, d, dv, M, M2, a, b)


def test_square_tiling_matches_the_saha_ye_worked_number() -> None:
    """N=1024, d=128, M=4096 → 17,958,912 words (computed by hand, independently of the formula)."""
    assert count("square_tiling", N=1024, d=128, M=4096).io_words == 17_958_912
    # Row 3 (the crossover M = d²): 9,504,768.
    assert count("square_tiling", N=1024, d=64, M=4096).io_words == 9_504_768


def test_square_tiling_matches_saha_ye_closed_form_when_B_divides_N_and_d() -> None:
    """4N²d/B + N² + Nd + 2N (derived here from the transfers of Saha–Ye's square tiling)."""
    for N, d, M in [(256, 64, 1024), (512, 32, 256), (96, 48, 2304)]:
        B = int(np.sqrt(M // 4))
        assert N % B == 0 and d % B == 0
        assert count("square_tiling", N=N, d=d, M=M).io_words == 4 * N * N * d // B + N * N + N * d + 2 * N


def test_flash1_matches_saha_ye_worked_numbers_plus_the_initialisation() -> None:
    """The hand count 2Nd + T_c(3Nd + 4N) leaves out the N·d + 2N initialising writes, which the machine counts."""
    for N, d, M, published in [(1024, 64, 16384, 3_342_336), (1024, 128, 4096, 51_118_080), (4096, 128, 65536, 51_904_512)]:
        assert count("flash1", N=N, d=d, M=M).io_words == published + N * d + 2 * N


def test_flash2_matches_the_lower_bound_notes_worked_numbers() -> None:
    """lower-bound-constants.md §5: FA2/AttenIO exact = 2Nd(1 + ⌈N/a⌉)."""
    for N, d, M, published in [(4096, 64, 16384, 18_350_080), (16384, 128, 131072, 142_606_336), (65536, 128, 1048576, 301_989_888)]:
        r = count("flash2", N=N, d=d, M=M)
        assert r.io_words == published + N  # + N writes of the logsumexp L, which FA-2 keeps for backward


def test_kv_stationary_and_split_v_leading_constants() -> None:
    """kv_stationary ≈ 6N²d²/M; split_v ≈ 4N²d·dv/M and beats flash2's N²(d+dv)²/M when dv = 4d."""
    N, d, M = 65536, 64, 65536
    assert 6.0 <= count("kv_stationary", N=N, d=d, M=M).io_words / (N * N * d * d / M) <= 6.4
    dv = 256
    sv = count("split_v", N=N, d=d, dv=dv, M=M).io_words
    f2 = count("flash2", N=N, d=d, dv=dv, M=M).io_words
    assert 1.0 <= sv / (4 * N * N * d * dv / M) <= 1.1
    assert 1.0 <= f2 / (N * N * (d + dv) ** 2 / M) <= 1.1
    assert sv < 0.7 * f2


@given(st.integers(1, 3000), st.integers(1, 200), st.integers(1, 200), st.integers(0, 10**6))
def test_split_v_is_flash2_when_dv_at_most_d(N: int, d: int, dv_: int, extra: int) -> None:
    dv = min(d, dv_)
    M = registry.get("flash2").tiling_cls.min_M(N, d, dv) + extra
    assert cost("split_v", N=N, d=d, dv=dv, M=M) == cost("flash2", N=N, d=d, dv=dv, M=M)


def test_formula_rejects_M_below_the_minimum() -> None:
    from attnio.core.errors import InvalidParameter

    for name in ALGORITHMS:
        lo = registry.get(name).tiling_cls.min_M(10, 8, 8)
        if lo <= 1:
            continue
        with pytest.raises(InvalidParameter):
            cost(name, N=10, d=8, M=lo - 1)
        cost(name, N=10, d=8, M=lo)  # and accepts the minimum itself


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def test_per_array_traffic_matches_the_derivations_line_by_line() -> None:
    """docs/costs.md, array by array, at a point no block size divides (N=101, d=13, dv=13 or 29)."""
    N, d = 101, 13
    io = lambda name, M, dv=d: count(name, N=N, d=d, dv=dv, M=M).per_array  # noqa: E731

    M = 500  # flash1: B_c = ⌈500/52⌉ = 10, T_c = 11
    p, T_c = io("flash1", M), ceil_div(N, ceil_div(M, 4 * d))
    assert (p["K"].reads_words, p["V"].reads_words) == (N * d, N * d)
    assert p["Q"].reads_words == T_c * N * d
    assert (p["O"].reads_words, p["O"].writes_words) == (T_c * N * d, (1 + T_c) * N * d)
    assert (p["ell"].writes_words, p["m"].reads_words) == ((1 + T_c) * N, T_c * N)

    p, B = io("square_tiling", 300), 8  # B = ⌊√75⌋ = 8, T = 13, T_d = 2
    T = ceil_div(N, B)
    assert (p["Q"].reads_words, p["K"].reads_words, p["V"].reads_words) == (T * N * d, T * N * d, T * N * d)
    assert (p["S"].writes_words, p["S"].reads_words) == (N * N, ceil_div(d, B) * N * N)
    assert (p["L"].writes_words, p["L"].reads_words, p["O"].writes_words) == (N, N, N * d)

    p, b = io("standard", 300), 10  # b = ⌊√100⌋ = 10
    T = ceil_div(N, b)
    assert (p["S"].writes_words, p["S"].reads_words, p["P"].writes_words) == (N * N, 2 * N * N, N * N)
    assert (p["P"].reads_words, p["V"].reads_words) == (ceil_div(d, b) * N * N, T * N * d)

    p = io("kv_stationary", 400)  # b = ⌊(400 − 42)/27⌋ = 13 → T_c = 8
    T_c = ceil_div(N, (400 - 3 * d - 3) // (2 * d + 1))
    assert (p["K"].reads_words, p["Q"].reads_words) == (N * d, T_c * N * d)
    assert (p["O"].reads_words, p["O"].writes_words) == ((T_c - 1) * N * d, T_c * N * d)
    assert (p["L"].reads_words, p["L"].writes_words) == ((T_c - 1) * N, T_c * N)

    dv = 29
    p = io("split_v", 400, dv)  # g = 13, G = 3, a = ⌊387/30⌋ = 12 → T_r = 9
    T_r, G = ceil_div(N, (400 - d) // (2 * d + 4)), ceil_div(dv, d)
    assert (p["Q"].reads_words, p["K"].reads_words, p["V"].reads_words) == (N * d, T_r * G * N * d, T_r * N * dv)
    assert (p["O"].writes_words, p["L"].writes_words) == (N * dv, N)


# --- pinned by mutation testing (tools/mutation.sh, docs/mutation.md): behaviour a surviving mutant changed ---

# --- the cost formulas (bounds/costs.py) -------------------------------------------------------------------


EXACT = ["flash2", "flash2-square", "flash1", "flash1-fit", "standard", "square_tiling", "kv_stationary", "split_v"]


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


@st.composite
def _point(draw: st.DrawFn, name: str) -> tuple[int, int, int, int]:
    N = draw(st.integers(1, 400))
    d = draw(st.integers(1, 40))
    dv = draw(st.one_of(st.just(d), st.integers(1, 90)))
    lo = registry.get(name).tiling_cls.min_M(N, d, dv)
    return N, d, dv, draw(st.one_of(st.integers(lo, lo + 50), st.integers(lo, 4 * lo + 2 * N * (d + dv))))


@pytest.mark.parametrize("name", EXACT)
@settings(max_examples=10)
@given(data=st.data())
def test_the_block_sizes_a_formula_states_are_the_ones_its_schedule_uses(name: str, data: st.DataObject) -> None:
    """``CostFormula.blocks`` against the schedule's tiling and the pass counts seen in the per-array reads."""
    N, d, dv, M = data.draw(_point(name))
    b = {k: evaluate_int(v, {"N": N, "d": d, "M": M, "dv": dv}) for k, v in FORMULAS[name].blocks.items()}
    t = registry.get(name).tiling_cls.default(N, d, M, dv)
    p = count(name, N=N, d=d, dv=dv, M=M).per_array
    if name in ("flash2", "flash2-square"):
        assert p["K"].reads_words == b["T_r"] * N * d and p["V"].reads_words == b["T_r"] * N * dv
        assert b["T_r"] == _cdiv(N, t.B_r)
        if name == "flash2":
            assert b["a"] >= t.B_r and _cdiv(N, min(b["a"], N)) == b["T_r"]
        else:
            assert min(b["b"], N) == t.B_r == t.B_c
    elif name in ("flash1", "flash1-fit"):
        assert p["Q"].reads_words == b["T_c"] * N * d and b["T_c"] == _cdiv(N, t.B_c)
        if name == "flash1":
            assert (b["B_c"], b["B_r"]) == (t.B_c, t.B_r)
        else:
            assert b["c"] >= t.B_c and _cdiv(N, min(b["c"], N)) == b["T_c"]
    elif name in ("standard", "square_tiling"):
        side = t.b if name == "standard" else t.B
        assert b["b" if name == "standard" else "B"] == side
        assert (b["T"], b["T_v"]) == (_cdiv(N, side), _cdiv(dv, side))
        assert p["V"].reads_words == b["T"] * N * dv
    elif name == "kv_stationary":
        assert p["Q"].reads_words == b["T_c"] * N * d and b["T_c"] == _cdiv(N, t.b)
        assert b["b"] >= t.b and _cdiv(N, min(b["b"], N)) == b["T_c"]
    else:  # split_v
        assert (b["g"], b["G"]) == (t.g, _cdiv(dv, t.g))
        assert p["V"].reads_words == b["T_r"] * N * dv and p["K"].reads_words == b["T_r"] * b["G"] * N * d
        assert b["a"] >= t.a and b["T_r"] == _cdiv(N, t.a)


@pytest.mark.parametrize("name", EXACT)
@settings(max_examples=10)
@given(N=st.integers(1, 300), d=st.integers(1, 40), dv=st.integers(1, 90), delta=st.integers(-3, 3))
def test_a_formula_is_valid_exactly_from_its_schedules_minimum_M(name: str, N: int, d: int, dv: int, delta: int) -> None:
    from attnio.core.errors import InvalidParameter

    M = max(1, registry.get(name).tiling_cls.min_M(N, d, dv) + delta)
    if delta < 0 and M < registry.get(name).tiling_cls.min_M(N, d, dv):
        with pytest.raises(InvalidParameter, match="M"):
            cost(name, N=N, d=d, M=M, dv=dv)
    else:
        assert cost(name, N=N, d=d, M=M, dv=dv) == count(name, N=N, d=d, M=M, dv=dv).io


@pytest.mark.parametrize("name", EXACT)
def test_the_dv_equal_d_form_of_a_formula_is_the_formula_at_dv_equal_d(name: str) -> None:
    f, g = FORMULAS[name], FORMULAS[name].with_dv_equal_d()
    assert g.algorithm == name and (g.derivation, g.leading) == (f.derivation, f.leading)
    assert "dv" not in {s.name for e in (g.io, *g.valid, *g.blocks.values()) for s in free_symbols(e)}
    for n_, d_, m_ in [(37, 5, 300), (100, 13, 2000), (9, 2, 60)]:
        env, env_dv = {"N": n_, "d": d_, "M": m_}, {"N": n_, "d": d_, "M": m_, "dv": d_}
        assert evaluate_int(g.reads, env) == evaluate_int(f.reads, env_dv)
        assert evaluate_int(g.writes, env) == evaluate_int(f.writes, env_dv)
        assert [r.holds(env) for r in g.valid] == [r.holds(env_dv) for r in f.valid]
        assert {k: evaluate_int(v, env) for k, v in g.blocks.items()} == {k: evaluate_int(v, env_dv) for k, v in f.blocks.items()}


# --- exact working sets: each schedule's stated fast-memory formula is its measured peak -----------------


def _fast_words(name: str, t: object, N: int, d: int, dv: int) -> int:
    cls = t  # the stated working set, read from the tiling itself (a static method)
    if name in ("flash2", "flash2-square", "flash1-fit"):
        return cls.fast_words(t.B_r, t.B_c, d, dv)
    if name == "standard":
        return cls.fast_words(t.b)
    if name == "square_tiling":
        return cls.fast_words(t.B)
    if name == "kv_stationary":  # the first K/V block reads back no partial O_i (r·dv) and L_i (r)
        first = cls.fast_words(min(t.b, N), t.r, d, dv) - t.r * (dv + 1)
        return max(first, cls.fast_words(min(t.b, N - t.b), t.r, d, dv)) if N > t.b else first
    assert name == "split_v"  # its fast_words bounds the peak: m_new is allocated only once K_j is freed
    a, bc, g = t.a, t.B_c, t.g
    assert cls.fast_words(a, bc, g, d) == a * d + a * g + 2 * a + a * bc + max(bc * d, a + bc * g) + min(a, bc * (d - g))
    return a * d + a * g + 2 * a + a * bc + max(bc * d, a + bc * g)


@pytest.mark.parametrize("name", [n for n in EXACT if n != "flash1"])  # flash1's: tests/test_algorithms.py
@settings(max_examples=10)
@given(data=st.data())
def test_peak_fast_memory_is_exactly_the_working_set_each_schedule_states(name: str, data: st.DataObject) -> None:
    if name in ("standard", "square_tiling"):  # the tile side is reached only when N, d, dv are at least b
        M = data.draw(st.integers(4, 600))
        side = registry.get(name).tiling_cls.default(1, 1, M).__dict__.popitem()[1]
        N, d, dv = (data.draw(st.integers(side, side + 30)) for _ in range(3))
    else:
        N, d, dv, M = data.draw(_point(name))
    t = registry.get(name).tiling_cls.default(N, d, M, dv)
    assert count(name, N=N, d=d, dv=dv, M=M).peak_fast_words == _fast_words(name, t, N, d, dv) <= M


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("count_only", [True, False])
def test_the_trace_counts_every_product_of_attention_exactly_once(name: str, count_only: bool) -> None:
    """Work events: N²·d multiply-adds for QKᵀ and N²·d_v for PV, whatever the tiling (a non-divisible case);
    split_v recomputes S once per value-column group, G = ⌈d_v/d⌉ times."""
    N, d, dv = 23, 5, 7 if name != "split_v" else 11
    for mm in (registry.get(name).tiling_cls.min_M(N, d, dv) * 3 + 5, 40 * d * d):  # small and large blocks
        tr = count(name, N=N, d=d, dv=dv, M=mm, trace=True).trace if count_only else run(
            name, N=N, d=d, dv=dv, M=mm, trace=True, seed=0).measurement.trace
        work = {k: sum(e.words * e.weight for e in tr if e.kind == "C" and e.target == k) for k in ("qk", "pv")}
        G = _cdiv(dv, min(d, dv)) if name == "split_v" else 1
        assert work == {"qk": G * N * N * d, "pv": N * N * dv}, mm


@pytest.mark.parametrize("name", [*EXACT, "poly"])
def test_tilings_and_formulas_are_frozen_records(name: str) -> None:
    """A tiling is chosen once per run and a formula once per algorithm: neither can be changed in place."""
    if name == "poly":
        from attnio.algorithms.poly import PolyTiling as cls  # noqa: N813

        t = cls.for_degree("tiled", N=64, d=4, M=400, g=2)
    else:
        t = registry.get(name).tiling_cls.default(50, 4, 400, 4)
        f = FORMULAS[name]
        with pytest.raises(dataclasses.FrozenInstanceError):
            f.reads = f.writes  # type: ignore[misc]
    field = dataclasses.fields(t)[0].name
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(t, field, 1)


def test_an_unknown_algorithm_has_no_formula_and_the_error_lists_those_that_do() -> None:
    from attnio.core.errors import InvalidParameter

    with pytest.raises(InvalidParameter, match="one with a cost formula: .*flash2.*square_tiling"):
        cost("no-such-algorithm", N=4, d=2, M=64)
