"""Tests added after mutation testing (tools/mutation.sh, docs/mutation.md): each one pins down a behaviour
that a surviving mutant changed without any earlier test noticing."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from attnio.algorithms.machine import Machine

from attnio.counts import IOCount
from attnio.errors import SlowMemoryViolation

# --- the machine (algorithms/machine.py) -------------------------------------------------------------------


def _toy_run(**kw: object):
    m = Machine(100, algorithm="toy", **kw)
    X = m.input("X", np.arange(6.0).reshape(3, 2))
    Y = m.slow("Y", (3, 2), role="output")
    b = m.load(X, slice(0, 3))  # 6 reads
    m.store(b, Y)  # 6 writes
    m.free(b)
    return m.finish()


def test_a_measurement_reports_reads_writes_and_their_sum_and_cannot_be_altered() -> None:
    r = _toy_run(trace=True)
    assert (r.reads_words, r.writes_words, r.io_words) == (6, 6, 12)
    assert r.io == IOCount(6, 6)
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.io = IOCount(0, 0)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.trace[0].words = 0  # type: ignore[index,misc]


def test_no_trace_is_kept_unless_asked_for() -> None:
    assert _toy_run().trace is None
    assert [(e.kind, e.words, e.weight) for e in _toy_run(trace=True).trace] == [("R", 6, 1), ("W", 6, 1)]


def test_the_transpose_of_a_slow_array_is_not_a_way_around_load() -> None:
    m = Machine(100, algorithm="toy")
    Q = m.input("Q", np.ones((4, 2)))
    with pytest.raises(SlowMemoryViolation, match="load a block"):
        _ = Q.T


def test_open_ended_slices_are_read_and_unsupported_indices_are_rejected() -> None:
    m = Machine(100, algorithm="toy")
    X = m.input("X", np.arange(8.0).reshape(4, 2))
    np.testing.assert_array_equal(m.load(X, slice(None, 2)).data, np.arange(4.0).reshape(2, 2))
    np.testing.assert_array_equal(m.load(X, slice(3, None), slice(1, None)).data, [[7.0]])
    with pytest.raises(SlowMemoryViolation, match="extent 4"):  # past the end: refused, never clipped
        m.load(X, slice(2, 10))
    assert m.reads_words == 4 + 1
    np.testing.assert_array_equal(m.load(X, slice(0, 1, 1)).data, [[0.0, 1.0]])  # an explicit step 1 is fine
    for bad in (slice(-1, 2), slice(3, 1), slice(0, 4, 2)):
        with pytest.raises(SlowMemoryViolation, match="into X"):
            m.load(X, bad)
    with pytest.raises(SlowMemoryViolation, match="1-D"):
        m.load(m.input("v", np.ones(3)), slice(0, 1), slice(0, 1))


def test_blocks_are_labelled_and_a_store_must_match_the_region_shape_exactly() -> None:
    m = Machine(100, algorithm="toy")
    X = m.input("X", np.ones((4, 3)))
    Y = m.slow("Y", (4, 3), role="output")
    assert m.load(X, slice(0, 1)).what == "X" and m.load(X, slice(0, 1), what="X_i").what == "X_i"
    big, small = m.load(X, slice(0, 2), what="two rows"), m.load(X, slice(0, 1), what="one row")
    with pytest.raises(SlowMemoryViolation, match=r"stores block two rows of shape \(2, 3\) into Y\[0:1, 0:3\]"):
        m.store(big, Y, slice(0, 1))  # region smaller than the block
    with pytest.raises(SlowMemoryViolation, match=r"stores block one row of shape \(1, 3\) into Y\[0:2, 0:3\]"):
        m.store(small, Y, slice(0, 2))  # region larger than the block
    with pytest.raises(SlowMemoryViolation, match="of shape"):
        m.store(small, Y, slice(0, 1), slice(0, 2))  # same rows, fewer columns


@pytest.mark.parametrize("count_only", [False, True])
def test_only_outputs_must_be_complete_scratch_may_stay_partly_unwritten(count_only: bool) -> None:
    m = Machine(100, algorithm="toy", count_only=count_only)
    X = m.input("X", (4, 2) if count_only else np.ones((4, 2)))
    S = m.slow("S", (4, 2))  # scratch
    Y = m.slow("Y", (4, 2), role="output")
    b = m.load(X, slice(0, 4))
    m.store(b, Y)
    m.store(m.load(X, slice(0, 1)), S, slice(0, 1))  # one row of S only
    assert m.finish().writes_words == 8 + 2


def test_an_overflow_names_the_block_that_did_not_fit() -> None:
    from attnio.errors import CapacityExceeded

    m = Machine(5, algorithm="toy")
    X = m.input("X", np.ones((4, 2)))
    m.load(X, slice(0, 2), what="Q_i")  # 4 words
    with pytest.raises(CapacityExceeded, match="while placing K_j \\(2 words\\)") as e:
        m.load(X, slice(0, 1), what="K_j")
    assert (e.value.what, e.value.resident_words, e.value.requested_words, e.value.M) == ("K_j", 4, 2, 5)
    with pytest.raises(CapacityExceeded, match="while placing X \\(2 words\\)"):  # unlabelled: the array's name
        m.load(X, slice(2, 3))


def test_peak_is_zero_when_nothing_was_ever_in_fast_memory_and_exact_after_one_block() -> None:
    m = Machine(100, algorithm="toy")
    m.slow("ell", (7,), init=0.0)  # initialising writes touch no fast memory
    assert m.finish().peak_fast_words == 0
    m = Machine(100, algorithm="toy")
    X = m.input("X", np.ones((5,)))
    m.free(m.load(X, slice(0, 1)))  # one word
    assert m.finish().peak_fast_words == 1


# --- the cost formulas (bounds/costs.py) -------------------------------------------------------------------

from attnio.algorithms import registry  # noqa: E402
from attnio.algorithms.run import count  # noqa: E402
from attnio.bounds.costs import FORMULAS, cost  # noqa: E402
from attnio.bounds.expr import evaluate_int, free_symbols  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

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
    from attnio.errors import InvalidParameter

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


@pytest.mark.parametrize("count_only", [False, True])
def test_every_count_is_an_exact_python_integer(count_only: bool) -> None:
    m = Machine(100, algorithm="toy", count_only=count_only)
    X = m.input("X", (5, 2) if count_only else np.ones((5, 2)))
    Y = m.slow("Y", (5, 2), role="output", init=0.0)
    for rows in m.tiles(5, 2):
        b = m.load(X, rows)
        m.store(b, Y, rows)
        m.free(b)
    r = m.finish()
    counts = [r.reads_words, r.writes_words, r.peak_fast_words, *(c for a in r.per_array.values() for c in (a.reads_words, a.writes_words))]
    assert all(type(c) is int for c in counts), counts
    assert (r.reads_words, r.writes_words, r.peak_fast_words) == (10, 20, 4)


# --- the expression language (bounds/expr.py) ---------------------------------------------------------------

from fractions import Fraction  # noqa: E402

from attnio.bounds import expr as ex  # noqa: E402
from attnio.bounds.symbols import M, N, d  # noqa: E402


def test_printing_of_fractions_powers_quotients_and_relations() -> None:
    t = ex.to_text
    assert (t(M / 4), t(3 * M / 4), t(-N), t(N - 1), t(Fraction(1, 2) + N)) == ("M/4", "3·M/4", "−N", "N − 1", "N + 1/2")
    assert (t((N + d) ** 2), t((N * d) ** 2), t((N / d) ** 2)) == ("(N + d)^2", "(N·d)^2", "(N/d)^2")
    assert (t(N / (d * M)), t(N / (d / M)), t(N / (N + d))) == ("N/(d·M)", "N/(d/M)", "N/(N + d)")
    assert t(N**2 / (d * M) - Fraction(1, 3)) == "N^2/(d·M) − 1/3"
    assert (t(ex.sqrt(N + d)), t(ex.floor(N / M)), t(ex.log2(N))) == ("√(N + d)", "⌊N/M⌋", "log₂(N)")
    assert (t((N**2) ** 3), t(N / d**2), t(N**2 * d)) == ("(N^2)^3", "N/d^2", "N^2·d")
    assert (t(ex.minimum(N, d)), t(ex.maximum(N, d, M))) == ("min(N, d)", "max(N, d, M)")
    assert [str(r) for r in (N <= M, N < M, ex.eq(N, M), N > d, N >= d)] == ["N ≤ M", "N < M", "N = M", "d < N", "d ≤ N"]


def test_log2_is_exact_on_powers_of_two_and_a_float_elsewhere() -> None:
    assert ex.evaluate(ex.log2(N), {"N": 8}) == Fraction(3) and ex.evaluate(ex.log2(N), {"N": 1}) == 0
    assert all(isinstance(ex.evaluate(ex.log2(N), {"N": n}), Fraction) for n in (1, 2, 8, 2**40))
    v = ex.evaluate(ex.log2(N), {"N": 6})
    assert isinstance(v, float) and abs(v - 2.584962500721156) < 1e-12
    assert ex.evaluate(ex.log2(M / 2), {"M": 1}) == -1.0  # 1/2 is not an integer: the float path, still exact


def test_ceilings_of_square_roots_and_of_irrational_values() -> None:
    ev = ex.evaluate
    assert (ev(ex.ceil(ex.sqrt(M)), {"M": 16}), ev(ex.ceil(ex.sqrt(M)), {"M": 17}), ev(ex.floor(ex.sqrt(M)), {"M": 17})) == (4, 5, 4)
    assert (ev(ex.floor(ex.sqrt(M) * N), {"M": 2, "N": 3}), ev(ex.ceil(ex.sqrt(M) * N), {"M": 2, "N": 3})) == (4, 5)
    with pytest.raises(ValueError, match="negative"):
        ev(ex.floor(ex.sqrt(M - 5)), {"M": 2})
    with pytest.raises(ValueError, match="cannot round"):  # √2·√2 = 2.0000000000000004: refused, not guessed
        ev(ex.floor(ex.sqrt(M) * ex.sqrt(M)), {"M": 2})


def test_simplification_of_zero_one_and_constant_divisors() -> None:
    assert N - N == ex.Const(Fraction(0)) and 0 * N == ex.Const(Fraction(0))
    assert ex.mul(1, N) is N and N**1 is N and 2 * N / 2 == N
    assert ex.div(N, 4) == ex.Mul((ex.Const(Fraction(1, 4)), N)) and ex.const("1/8") == ex.Const(Fraction(1, 8))
    with pytest.raises(TypeError):
        ex.as_expr(True)
    with pytest.raises(TypeError):
        ex.as_expr(0.5)  # type: ignore[arg-type]


def test_every_node_kind_compares_and_hashes_by_structure() -> None:
    """Expressions are dictionary keys (like terms are collected through them): equal structure, equal key."""
    for make in (lambda: ex.sqrt(N), lambda: ex.floor(N / M), lambda: ex.ceil(N / M), lambda: ex.minimum(N, d),
                 lambda: ex.maximum(N, d), lambda: ex.log2(N), lambda: N**2, lambda: N / (d + M)):
        a, b = make(), make()
        assert a == b and hash(a) == hash(b) and len({a: 1, b: 2}) == 1, str(a)
        assert a + b == 2 * a  # collected as like terms
    assert ex.minimum(N, d) != ex.minimum(d, N) and ex.floor(N / M) != ex.ceil(N / M)


def test_substitution_and_json_reach_every_node_kind() -> None:
    e = ex.log2(N) + ex.maximum(N, d) + ex.minimum(d, M) + ex.ceil(N / M) + ex.floor(ex.sqrt(M)) + (N + 1) ** 2
    s = ex.substitute(e, {N: M, d: 2})
    assert ex.free_symbols(s) == {M}
    assert ex.evaluate(s, {"M": 16}) == ex.evaluate(e, {"N": 16, "d": 2, "M": 16}) == 4 + 16 + 2 + 1 + 4 + 289
    assert ex.to_json(N**2) == ["pow", ["sym", "N"], 2]
    assert ex.to_json(N <= M) == ["<=", ["sym", "N"], ["sym", "M"]]
    assert ex.to_json(ex.floor(N / M)) == ["floor", ["div", ["sym", "N"], ["sym", "M"]]]
    assert ex.to_json(ex.log2(N)) == ["log2", ["sym", "N"]]
    assert ex.free_symbols(N <= M + d) == {N, M, d}


# --- numerical edge cases of the online softmax ------------------------------------------------------------

from attnio.algorithms.reference import attention  # noqa: E402
from attnio.algorithms.run import run  # noqa: E402

ALL_EXACT = [*EXACT, "auto"]


def _rel_err(out: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(out - ref)) / np.max(np.abs(ref)))


@pytest.mark.parametrize("name", ALL_EXACT)
def test_rows_whose_every_logit_is_far_below_zero(name: str) -> None:
    """Every logit in [−2000, −1000]: e^{S} underflows to 0, so a running max that starts anywhere but −∞
    (e.g. at 0) gives ℓ = 0 and 0/0. The reference subtracts the true row max."""
    N, d = 13, 3
    rng = np.random.default_rng(11)
    Q = np.hstack([rng.uniform(0.5, 1.0, (N, d - 1)), np.ones((N, 1))])
    K = np.hstack([rng.uniform(-1.0, 0.0, (N, d - 1)), np.full((N, 1), -1.0)])
    V = rng.standard_normal((N, d))
    scale = 1000.0
    S = scale * Q @ K.T
    assert S.max() < -1000 and S.min() > -3 * 1000
    M = max(registry.get(name).tiling_cls.min_M(N, d, d), 60)
    r = run(name, inputs=(Q, K, V), M=M, scale=scale)
    assert np.all(np.isfinite(r.output))
    assert _rel_err(r.output, attention(Q, K, V, scale=scale)) <= 1e-10


# --- the translator (solver/translator.py): its facts are true of the true value, and pin it exactly --------

_TRANSLATED = [
    ex.floor(N / M), ex.ceil(N / M), ex.floor(ex.sqrt(M / 4)), ex.floor(ex.sqrt(M)), ex.ceil(ex.sqrt(M) / 2),
    ex.floor((M - d) / (2 * d + 4)), ex.ceil(N / ex.floor((M - d) / (2 * d + 4))), ex.ceil(3 * N / 4),
    ex.floor(Fraction(1, 3) * N), ex.minimum(N, d, M), ex.maximum(N, d, M), N**-2, (N + d) ** 3 / M, ex.log2(M),
    ex.floor(N) + ex.ceil(d) + N**0,
    # arguments that are no ratio p/q (only the plain brackets apply) and arguments that can be negative
    ex.floor(ex.sqrt(N + Fraction(1, 2))), ex.floor(N / 2 + Fraction(1, 2)), ex.floor((M - 20) / 3), ex.ceil((M - 20) / 3),
    ex.sqrt(N / M), ex.sqrt(M) - N,  # square roots below 1 (√(1/16) = 1/4) and exact ones
]
_POINTS = [{"N": 1, "d": 1, "M": 16}, {"N": 7, "d": 2, "M": 64}, {"N": 100, "d": 3, "M": 1024}, {"N": 5, "d": 9, "M": 4}]


@pytest.mark.parametrize("e", _TRANSLATED, ids=str)
def test_the_translation_of_an_expression_is_exactly_its_value_at_integer_points(e: ex.Expr) -> None:
    """In mode "int" (floors and ceilings as integers) the facts admit the true value and no other one; at
    these points √ is rational or under a floor and log₂'s argument is a power of two."""
    import z3
    from attnio.solver.translator import Translator

    for env in _POINTS:
        if env["M"] - env["d"] < 2 * env["d"] + 4 and "2·d + 4" in str(e):
            continue  # the inner floor is 0 there: ⌈N/0⌉ is outside the formula's domain
        value = ex.evaluate(e, env)
        if not isinstance(value, Fraction):
            continue  # an irrational √ (no exact value to pin)
        t = Translator("z3", mode="int")
        term = t.expr(e)
        true = value
        s = z3.Solver(ctx=t.ctx)  # the translator's own context (a fresh one per translator)
        s.add(*t.facts, *(t.vars[k] == v for k, v in env.items() if k in t.vars))
        s.add(*(c for _, c in t.side_conditions))
        assert s.check(term == z3.RealVal(true.numerator, t.ctx) / true.denominator) == z3.sat, (str(e), env)
        assert s.check(term != z3.RealVal(true.numerator, t.ctx) / true.denominator) == z3.unsat, (str(e), env)


def test_real_mode_floor_and_ceil_brackets_are_sound_and_tight_for_ratios() -> None:
    """Over the reals ⌊N/M⌋ is only bracketed; with integer N, M the bracket (N − M + 1)/M ≤ c ≤ N/M holds
    for the true floor and excludes anything a whole step away."""
    import z3
    from attnio.solver.translator import Translator

    for n, m in [(7, 2), (8, 2), (1, 5), (100, 7), (5, 1)]:
        # the exact real interval the facts allow: ⌊n/m⌋ ∈ [max((n − m + 1)/m, 0, 1 if n ≥ m), n/m] and
        # ⌈n/m⌉ ∈ [max(n/m, 1), (n + m − 1)/m]
        x = Fraction(n, m)
        for e, true, lo, hi in [(ex.floor(N / M), n // m, max(Fraction(n - m + 1, m), Fraction(int(n >= m))), x),
                                (ex.ceil(N / M), -(-n // m), max(x, Fraction(1)), Fraction(n + m - 1, m))]:
            t = Translator("z3")
            c = t.expr(e)
            s = z3.Solver(ctx=t.ctx)  # the translator's own context (a fresh one per translator)
            s.add(*t.facts, t.vars["N"] == n, t.vars["M"] == m)
            q = lambda v: z3.RealVal(v.numerator, t.ctx) / v.denominator  # noqa: E731
            assert s.check(c == true) == z3.sat and s.check(c == q(lo)) == z3.sat and s.check(c == q(hi)) == z3.sat
            eps = Fraction(1, 1000)
            assert s.check(c < q(lo - eps)) == z3.unsat and s.check(c > q(hi + eps)) == z3.unsat, (str(e), n, m)


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("count_only", [True, False])
def test_the_trace_counts_every_product_of_attention_exactly_once(name: str, count_only: bool) -> None:
    """Work events: N²·d multiply-adds for QKᵀ and N²·d_v for PV, whatever the tiling (a non-divisible case);
    split_v recomputes S once per value-column group, G = ⌈d_v/d⌉ times."""
    N, d, dv = 23, 5, 7 if name != "split_v" else 11
    for mm in (registry.get(name).tiling_cls.min_M(N, d, dv) * 3 + 5, 40 * d * d):  # small and large blocks
        tr = count(name, N=N, d=d, dv=dv, M=mm, trace=True).trace if count_only else run(name, N=N, d=d, dv=dv, M=mm, trace=True, seed=0).measurement.trace
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


def test_min_and_max_of_nothing_are_rejected_and_of_one_thing_are_that_thing() -> None:
    for f in (ex.minimum, ex.maximum):
        assert f(N) is N and f(N, N) is N
        with pytest.raises(IndexError):
            f()


def test_negative_products_and_constants_print_one_minus_sign_in_front() -> None:
    """Regression: −3·N printed as "(-3)·N" and −3N/2 as "-3·N/2" (a hyphen, unlike every other minus)."""
    t = ex.to_text
    assert (t(-3 * N), t(Fraction(-3, 2) * N), t(-N * d), t(Fraction(-1, 2) * N)) == ("−3·N", "−3·N/2", "−N·d", "−N/2")
    assert (t(ex.Const(Fraction(-3))), t(ex.Const(Fraction(-3, 4))), t(-(N + d))) == ("−3", "−3/4", "−(N + d)")
    assert (t(ex.Const(Fraction(-1))), t(ex.Const(Fraction(0))), t(ex.Const(Fraction(1)))) == ("−1", "0", "1")
    assert (t(-N + M), t(-2 * N + M), t((-3 * N) ** 2)) == ("−N + M", "−2·N + M", "(−3·N)^2")
    assert (t(-3 / M), t(Fraction(1, 2) / M)) == ("(−3)/M", "(1/2)/M")  # a signed or fractional numerator is wrapped
    assert (t(N * (d / M)), t(N * (d + M)), t(N * d**2)) == ("N·d/M", "N·(d + M)", "N·d^2")  # factors of a product


def test_real_mode_floor_of_zero_is_zero_and_log2_between_powers_of_two_is_chord_and_tangent() -> None:
    import z3
    from attnio.solver.translator import INV_LN2_UPPER, LOG_RANGE, Translator

    t = Translator("z3")
    c = t.expr(ex.floor((M - 16) / 4))
    s = z3.Solver(ctx=t.ctx)  # the translator's own context (a fresh one per translator)
    s.add(*t.facts, t.vars["M"] == 16)
    assert s.check(c == 0) == z3.sat and s.check(c < 0) == z3.unsat  # ⌊0⌋ = 0 even over the reals
    for n in (3, 6, 100):
        t = Translator("z3")
        L = t.expr(ex.log2(N))
        s = z3.Solver(ctx=t.ctx)  # the translator's own context (a fresh one per translator)
        s.add(*t.facts, t.vars["N"] == n)
        k = n.bit_length() - 1
        chord = k + Fraction(n - 2**k, 2**k)  # from below: the chord on [2^k, 2^(k+1)]
        tangent = min(j + Fraction(n - 2**j, 2**j) * INV_LN2_UPPER for j in range(LOG_RANGE + 1))  # from above
        q = lambda v: z3.RealVal(v.numerator, t.ctx) / v.denominator  # noqa: E731
        assert s.check(L == q(chord)) == z3.sat and s.check(L < q(chord)) == z3.unsat, n
        assert s.check(L == q(tangent)) == z3.sat and s.check(L > q(tangent)) == z3.unsat, n


def test_log2_is_pinned_exactly_at_every_power_of_two_of_its_range() -> None:
    import z3
    from attnio.solver.translator import LOG_RANGE, Translator

    for k in (0, 1, 10, LOG_RANGE):
        t = Translator("z3")
        L = t.expr(ex.log2(N))
        s = z3.Solver(ctx=t.ctx)  # the translator's own context (a fresh one per translator)
        s.add(*t.facts, t.vars["N"] == 2**k)
        assert s.check(L == k) == z3.sat and s.check(L != k) == z3.unsat, k


def test_which_expressions_the_translator_treats_as_integers_and_as_ratios() -> None:
    from attnio.solver.translator import as_ratio, is_integer_valued

    for e in (N, 3 * N + 2, N**2 * d, ex.floor(N / M), ex.ceil(ex.sqrt(M)), ex.minimum(N, ex.floor(M / 2)), ex.maximum(N, d)):
        assert is_integer_valued(e), str(e)
    for e in (N / M, ex.sqrt(N), Fraction(1, 2) * N, ex.log2(N), ex.minimum(N, M / 2), N + Fraction(1, 3)):
        assert not is_integer_valued(e), str(e)
    assert as_ratio(N / ex.floor(M / 4)) == (N, ex.floor(M / 4))
    assert as_ratio(3 * N / 4) == (3 * N, ex.Const(Fraction(4))) and as_ratio(N * d / 2) == (N * d, ex.Const(Fraction(2)))
    assert as_ratio(N) == (N, ex.Const(Fraction(1))) and as_ratio(ex.sqrt(N)) is None and as_ratio(N / ex.sqrt(M)) is None


# --- poly (algorithms/poly.py) --------------------------------------------------------------------------------


@pytest.mark.parametrize("schedule", ["stream", "chunked", "tiled"])
@pytest.mark.parametrize("d,g", [(2, 1), (3, 2), (5, 2), (6, 1)])
def test_each_poly_schedule_runs_from_exactly_its_minimum_M(schedule: str, d: int, g: int) -> None:
    from attnio.algorithms.poly import PolyTiling
    from attnio.algorithms.poly_features import rank

    from attnio.errors import InvalidParameter

    r = rank(d, g)
    need = {"stream": r * (d + 2) + 2 * d, "chunked": 3 * d + 3, "tiled": max(d + 1, 5)}[schedule]  # module docstring
    assert PolyTiling.min_M(40, d) == max(d + 1, 5)  # the least of the three: tiled's
    with pytest.raises(InvalidParameter, match=f"M >= {need} for poly schedule {schedule}"):
        PolyTiling.for_degree(schedule, N=40, d=d, M=need - 1, g=g)
    t = PolyTiling.for_degree(schedule, N=40, d=d, M=need, g=g)
    res = run("poly", N=40, d=d, M=need, tiling=t, count_only=True).measurement
    assert res.peak_fast_words <= need and not res.overflowed


def test_random_inputs_in_beta_mode_are_scaled_onto_the_logit_promise() -> None:
    """β given: uniform inputs are shrunk so that scale·max‖q‖·max‖k‖ = β (up to 1e-12), not below it."""
    import math

    from attnio.algorithms.poly import PolyTiling

    N, d = 16, 4
    t = PolyTiling.build("stream", N=N, d=d, M=2000, eps=1e-3, B=1.0, beta=0.5)
    assert t.beta_from == "beta"
    Q, K, V = t.prepare_inputs(None, None, None, 3, N, d, np)
    prod = np.linalg.norm(Q, axis=1).max() * np.linalg.norm(K, axis=1).max() / math.sqrt(d)
    assert 0.5 * (1 - 1e-9) <= prod <= 0.5
    assert np.abs(V).max() <= 1.0 and np.abs(V).max() > 0.5  # V is not rescaled


@pytest.mark.parametrize("schedule", ["stream", "chunked"])
def test_poly_work_events_count_the_products_of_both_factors(schedule: str) -> None:
    """U₂ᵀV: N·r·d multiply-adds; U₁[S | s]: N·r·(d + 1); stream also counts the N·r features of K."""
    from attnio.algorithms.poly import PolyTiling

    N, d, g = 37, 3, 2
    t = PolyTiling.for_degree(schedule, N=N, d=d, M=400, g=g)
    tr = run("poly", N=N, d=d, M=400, tiling=t, count_only=True, trace=True).measurement.trace
    work = {k: sum(e.words * e.weight for e in tr if e.kind == "C" and e.target == k) for k in ("sv", "ys", "features")}
    r = t.r
    assert work == {"sv": N * r * d, "ys": N * r * (d + 1), "features": N * r if schedule == "stream" else 0}


def test_the_rounding_check_refuses_exactly_when_the_bound_exceeds_half_of_eps() -> None:
    import dataclasses as dc

    from attnio.algorithms.poly import PolyTiling
    from attnio.algorithms.poly_features import Budget

    from attnio.errors import Unsupported

    N, d = 64, 4
    t = PolyTiling.build("tiled", N=N, d=d, M=400, eps=1e-6, B=1.0)
    bound = Budget(t.eps, t.B, t.beta, t.beta_from, 0.0, t.g, t.delta, t.h).rounding_bound(N, t.r)
    dc.replace(t, eps=2 * bound * 1.001).rounding_check(N, d)  # ε/2 just above the bound: runs
    with pytest.raises(Unsupported, match="float64"):
        dc.replace(t, eps=2 * bound * 0.999).rounding_check(N, d)  # ε/2 just below it: refused


def test_an_unknown_algorithm_has_no_formula_and_the_error_lists_those_that_do() -> None:
    from attnio.errors import InvalidParameter

    with pytest.raises(InvalidParameter, match="one with a cost formula: .*flash2.*square_tiling"):
        cost("no-such-algorithm", N=4, d=2, M=64)
