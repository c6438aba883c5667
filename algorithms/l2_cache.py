"""LRU caches for the L2 replay: a fast one over tiles (runs of lines), a line-by-line one to check it, and
:class:`SectoredLRU`, the replays' cache model: the tile rule with valid and dirty sectors and write-back.

:class:`TileLRU` keeps whole tiles, each a run of ``w`` lines, in least-recently-used order and evicts whole
tiles from the cold end until the lines held are at most the capacity. When every tile is *atomic* (its lines
are always accessed together, one after another, and no line belongs to two tiles) this is exactly a fully
associative LRU of ``capacity`` lines (derived here, docs/dram.md#exactness): every line of a tile then has the
same stack distance, (w − 1) + the lines of the distinct other tiles touched since the tile's last access, so
the tile's lines all hit or all miss, and they hit iff that distance is below the capacity, which is also when
the tile is still held here (tiles more recent than it are never evicted before it).

:class:`LineLRU` is the brute-force reference: one line at a time.

>>> c = TileLRU(4)
>>> [c.access(k, w) for k, w in [("a", 2), ("b", 2), ("a", 2), ("c", 1), ("b", 2)]]
[False, False, True, False, False]
>>> ref = LineLRU(4)
>>> [ref.access_run(r) for r in [(0, 1), (2, 3), (0, 1), (4,), (2, 3)]]
[0, 0, 2, 0, 0]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable, Iterable


class TileLRU:
    """A fully associative LRU of ``capacity`` lines over atomic tiles; ``access`` answers hit (True) or miss."""

    __slots__ = ("capacity", "held", "used")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held: OrderedDict[Hashable, int] = OrderedDict()
        self.used = 0

    def access(self, key: Hashable, lines: int) -> bool:
        held = self.held
        if key in held:
            held.move_to_end(key)
            return True
        held[key] = lines
        self.used += lines
        while self.used > self.capacity:
            self.used -= held.popitem(last=False)[1]
        return False


class LineLRU:
    """Line-by-line LRU of ``capacity`` lines (the reference the tests compare :class:`TileLRU` with)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held: OrderedDict[Hashable, None] = OrderedDict()

    def access(self, line: Hashable) -> bool:
        if line in self.held:
            self.held.move_to_end(line)
            return True
        self.held[line] = None
        if len(self.held) > self.capacity:
            self.held.popitem(last=False)
        return False

    def access_run(self, lines: Iterable[Hashable]) -> int:
        """Access ``lines`` in order; the number that hit."""
        return sum(self.access(x) for x in lines)


class SectoredLRU:
    """The replay's cache model: a fully associative, write-allocate, write-back LRU of ``capacity`` lines over
    atomic blocks (:class:`TileLRU`'s rule: whole blocks evicted from the cold end until at most ``capacity`` lines
    are held), each block with a valid and a dirty sector mask (bit k: the block's k-th sector).

    ``access(key, tensor, lines, mask, writes)`` returns (hit, the sectors of ``mask`` that were not valid, as a
    mask): a read fetches those from DRAM (a sectored L2 fetches only what is requested); a write makes its sectors
    valid and dirty without reading them; a read-modify-write (an atomic) does both. An evicted block's dirty
    sectors are written back, counted in ``written_back[tensor]`` (the tensor of the block's first access);
    :meth:`flush` writes back what is still dirty at the end.

    >>> c = SectoredLRU(4)
    >>> c.access("a", 0, 2, 0b1111, False), c.access("a", 0, 2, 0b11111111, False)
    ((False, 15), (True, 240))
    >>> c.access("o", 1, 2, 0b11, True), c.access("b", 0, 2, 0b1, False), c.written_back.get(1, 0)
    ((False, 3), (False, 1), 0)
    >>> c.access("c", 0, 2, 0b1, False), c.written_back[1]  # "a" went clean, now "o" goes: 2 sectors back
    ((False, 1), 2)
    """

    __slots__ = ("capacity", "held", "used", "written_back")

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held: OrderedDict[Hashable, list] = OrderedDict()  # key -> [lines, valid, dirty, tensor]
        self.used = 0
        self.written_back: dict[int, int] = {}

    def access(self, key: Hashable, tensor: int, lines: int, mask: int, writes: bool) -> tuple[bool, int]:
        held = self.held
        e = held.get(key)
        if e is not None:
            held.move_to_end(key)
            v = e[1]
            if v == mask or v | mask == v:
                new = 0
            else:
                new = mask & ~v
                e[1] = v | mask
            if writes:
                e[2] |= mask
            return True, new
        held[key] = [lines, mask, mask if writes else 0, tensor]
        self.used += lines
        if self.used > self.capacity:
            wb = self.written_back
            while self.used > self.capacity:
                _, (n, _, dirty, t) = held.popitem(last=False)
                self.used -= n
                if dirty:
                    wb[t] = wb.get(t, 0) + dirty.bit_count()
        return False, mask

    def flush(self) -> None:
        """Write back every dirty sector still held (the end of the replay)."""
        wb = self.written_back
        for e in self.held.values():
            if e[2]:
                wb[e[3]] = wb.get(e[3], 0) + e[2].bit_count()
                e[2] = 0
