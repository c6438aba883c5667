"""The open list and search tree of the pebbling A* searches (:mod:`attnio.solver.pebble.solve`,
:mod:`attnio.solver.pebble.prbp`).

States are canonical configurations (one per orbit, :mod:`attnio.solver.pebble.symmetry`). An entry of the open
list is ``(f, −g, tie, state)``: least f first, among equal f the deepest (largest g), then in push order. A state
is kept with the least g it was pushed with (``best``); an entry pushed before a cheaper one of the same state is
stale and skipped when it comes up. ``came`` records for each state the state it was generated from, the move (in
that state's frame) and σ, the index of the automorphism that took the result to its representative, so that the
path to a goal is mapped back to real moves (:func:`attnio.solver.pebble.symmetry.real_frames`).

>>> fr = Frontier("start", 2)
>>> fr.push("a", 1, 1, ("start", "move", 0)); fr.push("b", 1, 2, ("start", "other", 0))
>>> fr.pop(), fr.pop(), fr.path("a")   # f = 2 for both: the deeper first
(('a', 1), ('start', 0), [('move', 0)])
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Hashable
from typing import Any

from attnio.solver.pebble.limits import Deadline

NEVER = 1 << 60  # the g of a state never pushed


class Frontier:
    """An A* open list from ``start`` (heuristic ``h0``), its best-g table and its search tree."""

    def __init__(self, start: Hashable, h0: int) -> None:
        self.best: dict[Any, int] = {start: 0}
        self.came: dict[Any, tuple | None] = {start: None}
        self._tie = itertools.count()
        self.heap: list[tuple[int, int, int, Any]] = [(h0, 0, next(self._tie), start)]
        self._top: tuple[int, int, Any] | None = None
        self.expanded = 0
        self.stopped: str | None = None  # "states" or "time" once a limit ended the search

    def push(self, s: Hashable, g: int, h: int, came: tuple) -> None:
        """Open ``s`` at cost ``g`` with heuristic ``h``, reached by ``came`` = (state, move, σ)."""
        self.best[s] = g
        self.came[s] = came
        heapq.heappush(self.heap, (g + h, -g, next(self._tie), s))

    def pop(self) -> tuple[Any, int] | None:
        """The next state to expand and its g (stale entries skipped), or None when the open list is empty."""
        while self.heap:
            f, negg, _, s = heapq.heappop(self.heap)
            if self.best.get(s, NEVER) < -negg:
                continue
            self._top = (f, negg, s)
            return s, -negg
        return None

    def expand(self, max_states: int, dl: Deadline) -> bool:
        """Count an expansion of the state last popped. Past ``max_states`` expansions or the deadline it goes back
        on the list (the least f there stays a lower bound), ``stopped`` says which, and the answer is False."""
        self.expanded += 1
        if self.expanded > max_states or dl.expired():
            self.put_back()
            self.stopped = "states" if self.expanded > max_states else "time"
            return False
        return True

    def put_back(self) -> None:
        """Return the state last popped to the open list, as it was."""
        assert self._top is not None
        f, negg, s = self._top
        heapq.heappush(self.heap, (f, negg, next(self._tie), s))

    def least_f(self, default: int) -> int:
        """The least f on the open list (``default`` when it is empty)."""
        return self.heap[0][0] if self.heap else default

    def path(self, s: Hashable) -> list[tuple[Any, int]]:
        """(move, σ) of each step from the start to ``s``, in order."""
        steps = []
        while (came := self.came[s]) is not None:
            s, move, sigma = came
            steps.append((move, sigma))
        steps.reverse()
        return steps
