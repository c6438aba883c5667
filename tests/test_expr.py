"""The expression language: exact evaluation (including floors/ceilings of square roots), structure, printing."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
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
from hypothesis import given
from hypothesis import strategies as st


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
