"""The machine itself: exact counting, capacity enforcement, and that it catches illegal schedules."""

from __future__ import annotations

import numpy as np
import pytest
from attnio.algorithms.machine import Machine

from attnio.errors import CapacityExceeded, InvalidParameter, SlowMemoryViolation


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
        "from attnio.errors import SlowMemoryViolation\n"
        "m = Machine(100, algorithm='toy')\n"
        "X = m.input('X', np.ones((4, 3)))\n"
        "b = m.load(X, slice(0, 2))\n"
        "m.free(b)\n"
        "try:\n    m.free(b)\nexcept SlowMemoryViolation:\n    print('raised')\n"
    )
    out = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "raised", out.stderr
