"""Assertions shared by the count tests of every pass."""

from __future__ import annotations

from collections.abc import Callable

from attnio.algorithms import registry
from attnio.algorithms.run import count


def assert_count_equals_formula(name: str, formula: Callable, N: int, d: int, dv: int, M: int) -> None:
    """The count-only run of ``name`` moves exactly the words ``formula(name, …)`` gives (reads and writes apart),
    and, unless the schedule runs in audit mode, its peak fits in M."""
    measured = count(name, N=N, d=d, M=M, dv=dv)
    predicted = formula(name, N=N, d=d, M=M, dv=dv)
    assert (measured.reads_words, measured.writes_words) == (predicted.reads_words, predicted.writes_words), (N, d, dv, M)
    if not registry.get(name).audit:
        assert measured.peak_fast_words <= M and not measured.overflowed


def assert_real_run_equals_count_and_formula(name: str, chosen: str, real, formula: Callable, N: int, d: int, dv: int, M: int) -> None:
    """A real run's measurement ``real`` of ``name`` equals its count-only run (per array, in total and at peak)
    and moves exactly the words ``formula(chosen, …)`` gives, ``chosen`` being the schedule that ran (``name``
    itself, or the one ``auto`` picked); unless that schedule runs in audit mode, its peak fits in M."""
    fast = count(name, N=N, d=d, dv=dv, M=M)
    assert real.per_array == fast.per_array, (N, d, dv, M)
    assert real.io == fast.io
    assert real.peak_fast_words == fast.peak_fast_words
    predicted = formula(chosen, N=N, d=d, M=M, dv=dv)
    assert (real.reads_words, real.writes_words) == (predicted.reads_words, predicted.writes_words), (N, d, dv, M)
    if not registry.get(chosen).audit:
        assert real.peak_fast_words <= M and not real.overflowed
