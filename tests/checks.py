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
