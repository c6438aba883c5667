"""The two-level memory machine: slow memory of named arrays, fast memory of at most M words.

Rules (docs/model.md):

- Inputs (Q, K, V) start in slow memory; the output must end there, every word of it written.
- An algorithm reaches slow data only through :meth:`Machine.load` (slow -> fast, one read per word) and
  changes it only through :meth:`Machine.store` (fast -> slow, one write per word). Creating a slow array
  with an initial value costs one write per word (:meth:`Machine.slow` with ``init``).
- Everything of array size in fast memory counts against M: loaded blocks, accumulators, statistics
  vectors (:meth:`Machine.alloc`). Loop indices and scalars are free. Every load and allocation is checked:
  exceeding M raises :class:`~attnio.core.errors.CapacityExceeded`, unless the machine is in *audit* mode, where
  the overflow is recorded and the peak reported (for algorithms as published that do not fit).
- A slow array cannot be read, indexed or used in arithmetic directly: doing so raises
  :class:`~attnio.core.errors.SlowMemoryViolation`.

Count-only mode runs the same schedule with shape-only blocks and no arithmetic. Because every schedule here
is data-oblivious, the tiles of a loop that have the same shape move the same words: :meth:`Machine.tiles`
then yields one representative tile per shape (the full tiles, then the remainder) and multiplies every
count inside by the number of tiles it stands for. A test checks count-only counts against real runs.

A tiny example: load a 2×3 block, accumulate into a 2×3 buffer, store it.

>>> import numpy as np
>>> m = Machine(12, algorithm="demo")
>>> X = m.input("X", np.ones((4, 3)))
>>> Y = m.slow("Y", (4, 3), role="output")
>>> for rows in m.tiles(4, 2):
...     x = m.load(X, rows, what="X_i")          # 6 reads
...     acc = m.alloc((2, 3), what="acc")         # 6 words, no I/O
...     acc.data += 2 * x.data
...     m.store(acc, Y, rows)                     # 6 writes
...     m.free(x, acc)
>>> r = m.finish()
>>> (r.io.reads_words, r.io.writes_words, r.peak_fast_words)
(12, 12, 12)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

from attnio.core.counts import IOCount
from attnio.core.errors import CapacityExceeded, InvalidParameter, SlowMemoryViolation

Index = slice | None


@dataclass(frozen=True)
class Event:
    """One trace event. ``kind`` is ``"R"`` (read), ``"W"`` (write), ``"I"`` (initialising writes) or
    ``"C"`` (work: ``target`` names the kind of operation, ``words`` counts them). ``weight`` is the number of
    identical events this one stands for (1 outside count-only mode)."""

    kind: str
    target: str
    words: int
    weight: int = 1


@dataclass(frozen=True)
class Measurement:
    """What the machine measured for one run."""

    algorithm: str
    M: int
    io: IOCount
    peak_fast_words: int
    per_array: dict[str, IOCount]
    overflowed: bool
    count_only: bool
    trace: tuple[Event, ...] | None = None

    @property
    def reads_words(self) -> int:
        return self.io.reads_words

    @property
    def writes_words(self) -> int:
        return self.io.writes_words

    @property
    def io_words(self) -> int:
        return self.io.io_words


class SlowArray:
    """A named array in slow memory. Only the machine touches its contents."""

    __slots__ = ("name", "shape", "role", "_data", "_written", "reads_words", "writes_words")

    def __init__(self, name: str, shape: tuple[int, ...], role: str, data: Any, written: Any) -> None:
        self.name = name
        self.shape = shape
        self.role = role
        self._data = data
        self._written = written
        self.reads_words = 0
        self.writes_words = 0

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def __repr__(self) -> str:
        return f"SlowArray({self.name!r}, shape={self.shape}, role={self.role!r})"

    def _forbidden(self, *args: object, **kwargs: object) -> Any:
        raise SlowMemoryViolation(
            f"slow array {self.name!r} was used directly; load a block into fast memory with Machine.load first"
        )

    __getitem__ = __setitem__ = __array__ = __iter__ = __len__ = _forbidden
    __matmul__ = __rmatmul__ = __mul__ = __rmul__ = __add__ = __radd__ = __sub__ = __rsub__ = _forbidden
    __truediv__ = __rtruediv__ = __neg__ = __float__ = _forbidden
    __array_ufunc__ = None  # NumPy ufuncs on a SlowArray raise TypeError instead of reading it

    @property
    def T(self) -> Any:
        return self._forbidden()


class FastBlock:
    """An array-size value resident in fast memory. ``data`` is ``None`` in count-only mode."""

    __slots__ = ("what", "shape", "words", "data", "live")

    def __init__(self, what: str, shape: tuple[int, ...], words: int, data: Any) -> None:
        self.what = what
        self.shape = shape
        self.words = words
        self.data = data
        self.live = True

    def __repr__(self) -> str:
        return f"FastBlock({self.what!r}, shape={self.shape}, live={self.live})"


@dataclass
class Machine:
    """A two-level memory machine with fast-memory capacity ``M`` words.

    ``algorithm`` names the schedule in error messages. ``xp`` is the array module for arithmetic (NumPy or
    CuPy). ``count_only`` drops arithmetic and compresses equal-shape tiles. ``audit`` records overflow
    instead of raising. ``trace`` keeps every event.
    """

    M: int
    algorithm: str
    xp: ModuleType = np
    dtype: Any = np.float64
    count_only: bool = False
    audit: bool = False
    trace: bool = False
    resident_words: int = field(default=0, init=False)
    peak_fast_words: int = field(default=0, init=False)
    reads_words: int = field(default=0, init=False)
    writes_words: int = field(default=0, init=False)
    overflowed: bool = field(default=False, init=False)
    _weight: int = field(default=1, init=False, repr=False)
    _arrays: dict[str, SlowArray] = field(default_factory=dict, init=False, repr=False)
    _events: list[Event] = field(default_factory=list, init=False, repr=False)

    def __post_init__(self) -> None:
        #: True when blocks carry data and arithmetic runs (a plain attribute: it is read in every loop body).
        self.numeric = not self.count_only

    # slow memory ---------------------------------------------------------------------------------

    def input(self, name: str, array: Any) -> SlowArray:
        """Place an input array in slow memory (free: inputs start there). In count-only mode ``array`` is a
        shape tuple."""
        if self.count_only:
            shape = tuple(int(s) for s in array)
            return self._add(SlowArray(name, shape, "input", None, None))
        shape = tuple(int(s) for s in array.shape)
        data = self.xp.asarray(array, dtype=self.dtype)
        return self._add(SlowArray(name, shape, "input", data, None))

    def slow(self, name: str, shape: tuple[int, ...], *, role: str = "scratch", init: float | None = None) -> SlowArray:
        """Create a slow array. With ``init`` every word is written once (counted); without, it holds
        nothing yet and reading a word before it is stored is an error."""
        if role not in ("scratch", "output"):
            raise SlowMemoryViolation(f"{self.algorithm}: slow array {name!r} has role {role!r}; valid roles are 'scratch' and 'output'")
        shape = tuple(int(s) for s in shape)
        data = written = None
        if self.numeric:
            data = self.xp.zeros(shape, dtype=self.dtype)
            written = np.zeros(shape, dtype=bool)
        arr = self._add(SlowArray(name, shape, role, data, written))
        if init is not None:
            words = arr.size * self._weight
            self.writes_words += words
            arr.writes_words += words
            if self.numeric:
                data[...] = init
                written[...] = True
            if self.trace:
                self._events.append(Event("I", name, arr.size, self._weight))
        return arr

    def _add(self, arr: SlowArray) -> SlowArray:
        if arr.name in self._arrays:
            raise SlowMemoryViolation(f"{self.algorithm}: slow array {arr.name!r} created twice")
        self._arrays[arr.name] = arr
        return arr

    # fast memory ---------------------------------------------------------------------------------

    def load(self, arr: SlowArray, rows: Index = None, cols: Index = None, *, what: str | None = None) -> FastBlock:
        """Read ``arr[rows, cols]`` into fast memory: one read per word."""
        idx, shape = _region(arr, rows, cols)
        words = math.prod(shape)
        new = self.resident_words + words  # _place, inlined: this is the hot path of every schedule
        if new > self.M or new > self.peak_fast_words:
            self._place(words, what or arr.name)
        else:
            self.resident_words = new
        w = self._weight
        self.reads_words += words * w
        arr.reads_words += words * w
        if self.trace:
            self._events.append(Event("R", arr.name, words, w))
        data = None
        if self.numeric:
            if arr._written is not None and not arr._written[idx].all():
                raise SlowMemoryViolation(
                    f"{self.algorithm}: reads {arr.name}{_fmt(idx)} before every word of it was written"
                )
            data = arr._data[idx].copy()
        return FastBlock(what or arr.name, shape, words, data)

    def load_rows(self, rows: slice, *arrays: SlowArray) -> list[FastBlock]:
        """Read the rows ``rows`` of each of ``arrays`` in turn (block i of array A is named ``A_i``)."""
        return [self.load(a, rows, what=f"{a.name}_i") for a in arrays]

    def alloc(self, shape: tuple[int, ...], *, what: str, fill: float | None = 0.0) -> FastBlock:
        """Create a block in fast memory (no I/O): an accumulator, a tile of scores, a statistics vector."""
        shape = tuple(int(s) for s in shape)
        words = math.prod(shape)
        self._place(words, what)
        data = None
        if self.numeric:
            data = self.xp.empty(shape, dtype=self.dtype) if fill is None else self.xp.full(shape, fill, dtype=self.dtype)
        return FastBlock(what, shape, words, data)

    def store(self, block: FastBlock, arr: SlowArray, rows: Index = None, cols: Index = None) -> None:
        """Write a fast block to ``arr[rows, cols]``: one write per word. The block stays resident."""
        if not block.live:
            raise SlowMemoryViolation(f"{self.algorithm}: stores block {block.what}, which was freed")
        if arr.role == "input":
            raise SlowMemoryViolation(f"{self.algorithm}: stores into input array {arr.name}")
        idx, shape = _region(arr, rows, cols)
        if shape != block.shape:
            raise SlowMemoryViolation(
                f"{self.algorithm}: stores block {block.what} of shape {block.shape} into {arr.name}{_fmt(idx)} of shape {shape}"
            )
        words = block.words
        w = self._weight
        self.writes_words += words * w
        arr.writes_words += words * w
        if self.trace:
            self._events.append(Event("W", arr.name, words, w))
        if self.numeric:
            arr._data[idx] = block.data
            arr._written[idx] = True

    def free(self, *blocks: FastBlock) -> None:
        """Drop blocks from fast memory (no I/O)."""
        for b in blocks:
            if not b.live:
                raise SlowMemoryViolation(f"{self.algorithm}: block {b.what} freed twice")
            b.live = False
            self.resident_words -= b.words

    def _place(self, words: int, what: str) -> None:
        new = self.resident_words + words
        if new > self.M:
            if not self.audit:
                raise CapacityExceeded(self.algorithm, self.resident_words, words, self.M, what)
            self.overflowed = True
        self.resident_words = new
        if new > self.peak_fast_words:
            self.peak_fast_words = new

    # loops ---------------------------------------------------------------------------------------

    def tiles(self, extent: int, size: int) -> Iterator[slice]:
        """The tiles ``[0:size), [size:2·size), …`` of ``range(extent)``; the last may be shorter.

        In count-only mode one representative per tile shape is yielded, and every count made inside the loop
        body is multiplied by the number of tiles that shape stands for.
        """
        if size < 1 or extent < 0:
            raise InvalidParameter("tiles(extent, size)", (extent, size), "extent >= 0 and size >= 1")
        full, rem = divmod(extent, size)
        if self.numeric:
            for t in range(full + (rem > 0)):
                yield slice(t * size, min(extent, (t + 1) * size))
            return
        groups = ([(slice(0, size), full)] if full else []) + ([(slice(full * size, extent), 1)] if rem else [])
        for sl, mult in groups:
            self._weight *= mult
            try:
                yield sl
            finally:
                self._weight //= mult

    def work(self, kind: str, amount: int) -> None:
        """Record ``amount`` operations of ``kind`` (e.g. ``"qk"`` dot products, ``"pv"`` products) in the trace."""
        if self.trace:
            self._events.append(Event("C", kind, amount, self._weight))

    # result ----------------------------------------------------------------------------------------

    def output_data(self, arr: SlowArray) -> Any:
        """The contents of a finished output array (numeric mode), for checking against a reference."""
        if not isinstance(arr, SlowArray) or arr.role != "output" or not self.numeric:
            raise SlowMemoryViolation(
                f"{self.algorithm}: the schedule's result {arr!r} is not an output slow array of a numeric run"
            )
        return arr._data

    def finish(self) -> Measurement:
        """Check that every output word was written, and return the counts."""
        for arr in self._arrays.values():
            if arr.role != "output":
                continue
            if self.numeric:
                if not arr._written.all():
                    missing = int((~arr._written).sum())
                    raise SlowMemoryViolation(f"{self.algorithm}: {missing} words of output {arr.name} were never written")
            elif arr.writes_words < arr.size:
                raise SlowMemoryViolation(f"{self.algorithm}: output {arr.name} got {arr.writes_words} writes < {arr.size} words")
        per = {a.name: IOCount(a.reads_words, a.writes_words) for a in self._arrays.values()}
        assert sum(c.reads_words for c in per.values()) == self.reads_words
        assert sum(c.writes_words for c in per.values()) == self.writes_words
        return Measurement(
            algorithm=self.algorithm,
            M=self.M,
            io=IOCount(self.reads_words, self.writes_words),
            peak_fast_words=self.peak_fast_words,
            per_array=per,
            overflowed=self.overflowed,
            count_only=self.count_only,
            trace=tuple(self._events) if self.trace else None,
        )


def _region(arr: SlowArray, rows: Index, cols: Index) -> tuple[tuple[slice, ...], tuple[int, ...]]:
    """Normalise ``arr[rows, cols]`` to explicit in-bounds slices and their shape (hot path: kept lean)."""
    shape = arr.shape
    if len(shape) == 1:
        if cols is not None:
            raise SlowMemoryViolation(f"array {arr.name} is 1-D; no column index")
        a = _bounds(arr, rows, shape[0])
        return (slice(*a),), (a[1] - a[0],)
    a = _bounds(arr, rows, shape[0])
    b = _bounds(arr, cols, shape[1])
    return (slice(*a), slice(*b)), (a[1] - a[0], b[1] - b[0])


def _bounds(arr: SlowArray, s: Index, n: int) -> tuple[int, int]:
    """``s`` as ``(start, stop)`` with ``0 <= start < stop <= n``: never clipped, never empty (a clipped
    index would count words that do not exist; an empty block moves nothing and hides a schedule's bug)."""
    if s is None:
        return 0, n
    start = 0 if s.start is None else s.start
    stop = n if s.stop is None else s.stop
    if s.step not in (None, 1) or start < 0 or stop > n or stop <= start:
        raise SlowMemoryViolation(
            f"index {s.start}:{s.stop}" + ("" if s.step is None else f":{s.step}")
            + f" into {arr.name} (extent {n}): valid is a non-empty start:stop with 0 <= start < stop <= {n}, step 1"
        )
    return start, stop


def _fmt(idx: tuple[slice, ...]) -> str:
    return "[" + ", ".join(f"{s.start}:{s.stop}" for s in idx) + "]"
