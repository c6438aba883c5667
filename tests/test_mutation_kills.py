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
