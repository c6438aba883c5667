"""The expression language: exact evaluation (including floors/ceilings of square roots), structure, printing."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnio.bounds import expr as ex
from attnio.bounds.expr import (
    Const,
    Rel,
    ceil,
    eq,
    evaluate,
    evaluate_int,
    floor,
    free_symbols,
    maximum,
    minimum,
    sqrt,
    substitute,
    to_json,
    to_text,
)
from attnio.bounds.symbols import M, N, d, sym


@given(st.integers(0, 10**12), st.integers(1, 10**6))
def test_floor_and_ceil_of_sqrt_are_exact_integers(p: int, q: int) -> None:
    x = Fraction(p, q)
    f = evaluate_int(floor(sqrt(M / q)), {"M": p})
    c = evaluate_int(ceil(sqrt(M / q)), {"M": p})
    assert f * f <= x < (f + 1) ** 2
    assert (c - 1) ** 2 < x <= c * c or (x == 0 and c == 0)


@given(st.integers(1, 10**6), st.integers(1, 10**6))
def test_floor_and_ceil_of_quotients_match_integer_arithmetic(a: int, b: int) -> None:
    env = {"N": a, "M": b}
    assert evaluate_int(floor(N / M), env) == a // b
    assert evaluate_int(ceil(N / M), env) == -(-a // b)


def test_worked_number_from_the_notes_flash_attention_algorithm_1() -> None:
    # worked by hand: N=1024, d=64, M=16384 -> 2Nd + T_c(3Nd + 4N) = 3,342,336.
    e = 2 * N * d + ceil(N / ceil(M / (4 * d))) * (3 * N * d + 4 * N)
    assert evaluate_int(e, {"N": 1024, "d": 64, "M": 16384}) == 3_342_336


def test_min_max_and_relations() -> None:
    env = {"N": 10, "d": 3, "M": 9}
    assert evaluate(minimum(N, d, M), env) == 3 and evaluate(maximum(N, d, M), env) == 10
    assert (M <= d**2).holds(env) and not (M < d**2).holds(env) and eq(M, d * d).holds(env)
    assert isinstance(N >= d, Rel) and (N >= d).holds(env)


def test_irrational_sqrt_evaluates_to_float() -> None:
    assert math.isclose(evaluate(sqrt(M), {"M": 2}), math.sqrt(2))


def test_structure_substitution_and_free_symbols() -> None:
    e = N**2 * d / sqrt(M)
    assert free_symbols(e) == {N, d, M}
    at_crossover = substitute(e, {M: d * d})
    assert evaluate(at_crossover, {"N": 7, "d": 5}) == 49
    assert to_json(N + 1) == ["add", ["sym", "N"], ["const", "1"]]


def test_structural_equality_not_string_equality() -> None:
    assert N * d == N * d and N * d != d * N  # structure, order-sensitive; comparisons by proof are the solver's job
    assert hash(N**2) == hash(N**2)


def test_printing_is_readable() -> None:
    assert to_text(N**2 * d**2 / M) == "N^2·d^2/M"
    assert to_text(8 * N**2 * d / sqrt(M) + N**2 - M) == "8·N^2·d/√M + N^2 − M"
    assert str(ceil(N / M)) == "⌈N/M⌉"


def test_bad_constructions_are_rejected() -> None:
    with pytest.raises(TypeError):
        _ = N ** Fraction(1, 2)  # type: ignore[operator]
    with pytest.raises(TypeError):
        _ = N + 0.5  # type: ignore[operator]  (floats are not exact)
    with pytest.raises(ZeroDivisionError):
        _ = N / 0
    with pytest.raises(ZeroDivisionError):
        evaluate(N / M, {"N": 1, "M": 0})
    with pytest.raises(ValueError, match="not an integer"):
        evaluate_int(N / M, {"N": 1, "M": 2})
    with pytest.raises(KeyError):
        evaluate(N, {})


def test_symbol_factory_returns_one_symbol_per_name() -> None:
    assert sym("N") is N
    with pytest.raises(AssertionError):
        sym("N", integer=False)
    assert Const(Fraction(1)) == Const(Fraction(1))


def test_subtracted_sums_keep_their_parentheses() -> None:
    assert to_text(M - (N + d)) == "M − (N + d)"
    assert to_text(M - 2 * (N + d)) == "M − 2·(N + d)"


def test_like_terms_and_repeated_extrema_are_collected() -> None:
    from attnio.bounds.expr import substitute
    from attnio.bounds.symbols import dv

    e = substitute(N * d + N * dv + maximum(d, dv) - minimum(d, dv), {dv: d})
    assert e == 2 * N * d  # N·d + N·d = 2·N·d; max(d, d) − min(d, d) = 0
    assert to_text(N * d + 3 * N * d - M) == "4·N·d − M"
    env = {"N": 7, "d": 3, "M": 5}
    assert evaluate(N * d - N * d + M, env) == 5


# --- pinned by mutation testing (tools/mutation.sh, docs/mutation.md): behaviour a surviving mutant changed ---

# --- the expression language (bounds/expr.py) ---------------------------------------------------------------


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
