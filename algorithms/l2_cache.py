"""LRU caches for the L2 replay: a fast one over tiles (runs of lines) and a line-by-line one to check it.

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
