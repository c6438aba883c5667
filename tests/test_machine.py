"""The machine itself: exact counting, capacity enforcement, and that it catches illegal schedules."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from attnio.algorithms.machine import Machine
from attnio.core.counts import IOCount
from attnio.core.errors import CapacityExceeded, InvalidParameter, SlowMemoryViolation


def _machine(M: int = 100, **kw: object) -> Machine:
    return Machine(M, algorithm="toy", **kw)


def test_load_and_store_count_one_word_each() -> None:
    m = _machine()
    X = m.input("X", np.arange(12.0).reshape(4, 3))
    Y = m.slow("Y", (4, 3), role="output")
    b = m.load(X, slice(0, 4))  # 12 reads
    m.store(b, Y, slice(0, 4))  # 12 writes
    m.store(b, Y, slice(0, 4))  # 12 more writes: a second store of the same words counts again
    r = m.finish()
    assert (r.reads_words, r.writes_words) == (12, 24)
    assert r.per_array["X"].reads_words == 12 and r.per_array["Y"].writes_words == 24
    np.testing.assert_array_equal(m.output_data(Y), np.arange(12.0).reshape(4, 3))


def test_initialising_a_slow_array_is_writes() -> None:
    m = _machine()
    m.slow("ell", (7,), init=0.0)
    assert m.finish().writes_words == 7


def test_toy_algorithm_that_touches_slow_memory_without_loading_is_caught() -> None:
    m = _machine()
    Q = m.input("Q", np.ones((4, 2)))
    with pytest.raises(SlowMemoryViolation, match="load a block"):
        _ = Q[0:2] @ np.ones((2, 2))
    with pytest.raises(SlowMemoryViolation):
        _ = Q * 2
    with pytest.raises((SlowMemoryViolation, TypeError)):
        np.exp(Q)


def test_toy_algorithm_that_exceeds_M_is_caught() -> None:
    m = _machine(M=10)
    X = m.input("X", np.ones((4, 3)))
    a = m.load(X, slice(0, 2))  # 6 words resident
    with pytest.raises(CapacityExceeded, match=r"toy: .*6 words already resident \+ 6 > M=10"):
        m.load(X, slice(2, 4))
    m.free(a)
    with pytest.raises(CapacityExceeded):
        m.alloc((11,), what="acc")


def test_audit_mode_records_the_peak_instead_of_raising() -> None:
    m = _machine(M=10, audit=True)
    X = m.input("X", np.ones((4, 3)))
    m.load(X, slice(0, 2))
    m.load(X, slice(2, 4))
    r = m.finish()
    assert r.overflowed and r.peak_fast_words == 12


def test_output_must_end_in_slow_memory() -> None:
    m = _machine()
    X = m.input("X", np.ones((4, 3)))
    Y = m.slow("Y", (4, 3), role="output")
    b = m.load(X, slice(0, 2))
    m.store(b, Y, slice(0, 2))
    with pytest.raises(SlowMemoryViolation, match="6 words of output Y were never written"):
        m.finish()


def test_reading_scratch_before_writing_it_is_caught() -> None:
    m = _machine()
    S = m.slow("S", (2, 2))
    with pytest.raises(SlowMemoryViolation, match="before every word"):
        m.load(S, slice(0, 1))


def test_storing_into_an_input_or_with_a_wrong_shape_is_caught() -> None:
    m = _machine()
    X = m.input("X", np.ones((4, 3)))
    Y = m.slow("Y", (4, 3), role="output")
    b = m.load(X, slice(0, 1))
    with pytest.raises(SlowMemoryViolation, match="input"):
        m.store(b, X, slice(0, 1))
    with pytest.raises(SlowMemoryViolation, match="shape"):
        m.store(b, Y, slice(0, 2))


@pytest.mark.parametrize("extent,size", [(10, 3), (9, 3), (2, 5), (1, 1), (0, 4)])
def test_count_only_tiles_stand_for_the_same_words(extent: int, size: int) -> None:
    def words(count_only: bool) -> tuple[int, int]:
        m = _machine(M=1000, count_only=count_only)
        X = m.input("X", (extent, 2) if count_only else np.ones((extent, 2)))
        for r in m.tiles(extent, size):
            for c in m.tiles(extent, size):
                a = m.load(X, r)
                b = m.load(X, c)
                m.free(a, b)
        out = m.finish()
        return out.reads_words, out.peak_fast_words

    assert words(True) == words(False)


def test_trace_records_every_transfer_and_work() -> None:
    m = _machine(trace=True)
    X = m.input("X", np.ones((2, 2)))
    b = m.load(X, slice(0, 1))
    m.work("qk", 5)
    m.free(b)
    ev = m.finish().trace
    assert [(e.kind, e.target, e.words) for e in ev] == [("R", "X", 2), ("C", "qk", 5)]


@pytest.mark.parametrize(
    "rows, cols",
    [(slice(2, 10), None), (slice(0, 5), None), (None, slice(1, 4)), (slice(3, 3), None), (slice(3, 1), None),
     (slice(-1, 2), None), (slice(0, 4, 2), None)],
    ids=["rows-past-end", "rows-one-past", "cols-past-end", "empty", "reversed", "negative", "strided"],
)
@pytest.mark.parametrize("count_only", [False, True], ids=["numeric", "count-only"])
def test_out_of_range_or_empty_blocks_raise_instead_of_clipping(rows: slice | None, cols: slice | None, count_only: bool) -> None:
    m = _machine(count_only=count_only)
    X = m.input("X", (4, 3) if count_only else np.ones((4, 3)))
    Y = m.slow("Y", (4, 3), role="output")
    with pytest.raises(SlowMemoryViolation, match=r"into X \(extent \d\)"):
        m.load(X, rows, cols)
    b = m.alloc((2, 3), what="acc")
    with pytest.raises(SlowMemoryViolation, match=r"into Y \(extent \d\)"):
        m.store(b, Y, rows, cols)
    # nothing was counted for the refused moves
    assert (m.reads_words, m.writes_words) == (0, 0)


def test_user_reachable_machine_misuse_raises_attnio_errors_not_asserts() -> None:
    """These hold under ``python -O`` too (asserts are stripped there): each is an AttnioError."""
    m = _machine()
    X = m.input("X", np.ones((4, 3)))
    Y = m.slow("Y", (4, 3), role="output")
    with pytest.raises(SlowMemoryViolation, match="created twice"):
        m.slow("Y", (4, 3), role="output")
    with pytest.raises(SlowMemoryViolation, match="valid roles"):
        m.slow("Z", (4, 3), role="input")
    b = m.load(X, slice(0, 2))
    m.free(b)
    with pytest.raises(SlowMemoryViolation, match="freed twice"):
        m.free(b)
    with pytest.raises(SlowMemoryViolation, match="which was freed"):
        m.store(b, Y, slice(0, 2))
    with pytest.raises(InvalidParameter, match="size >= 1"):
        list(m.tiles(4, 0))
    with pytest.raises(SlowMemoryViolation, match="not an output"):
        m.output_data(X)


def test_machine_misuse_is_an_error_under_python_O() -> None:
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from attnio.algorithms.machine import Machine\n"
        "from attnio.core.errors import SlowMemoryViolation\n"
        "m = Machine(100, algorithm='toy')\n"
        "X = m.input('X', np.ones((4, 3)))\n"
        "b = m.load(X, slice(0, 2))\n"
        "m.free(b)\n"
        "try:\n    m.free(b)\nexcept SlowMemoryViolation:\n    print('raised')\n"
    )
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "raised", out.stderr


# --- pinned by mutation testing (tools/mutation.sh, docs/mutation.md): behaviour a surviving mutant changed ---

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
    from attnio.core.errors import CapacityExceeded

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
