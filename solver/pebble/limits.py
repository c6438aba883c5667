"""Limits of the pebbling tools: the largest instance they accept, and a deadline every loop checks.

The exact search is exponential: it proves optimality for graphs of a few dozen vertices
(benchmarks/bench_pebble.py) and reports bounds beyond. :data:`MAX_VERTICES` bounds the graphs that are built
at all, checked from the vertex-count formula *before* building (:func:`attnio.solver.pebble.graphs.attention`
and ``matmul``), so a huge N or d is refused at once instead of filling memory. :data:`MAX_SAT_CELLS` bounds
the time-indexed encodings (``(horizon + 1) · vertices`` cells, five Boolean variables each).

A :class:`Deadline` is checked inside every loop whose length grows with the graph: graph construction,
the automorphism search and its tables, the greedy schedule, the bitmask compilation, each A* expansion and
each generated state, and the SAT encodings. A phase that runs out raises :class:`TimeLimitReached`; the
solvers catch it and report the bounds proved so far, never "optimal".

>>> d = Deadline(None)
>>> d.expired(), d.remaining()
(False, None)
>>> Deadline(0.0, start=0.0).expired()
True
"""

from __future__ import annotations

import time

MAX_VERTICES = 20_000
MAX_SAT_CELLS = 50_000


class TimeLimitReached(Exception):
    """A phase of a pebbling solver ran past its deadline (caught by the solvers; never reaches the user)."""


class Deadline:
    """An absolute point on :func:`time.perf_counter`'s clock (None: no limit)."""

    __slots__ = ("at",)

    def __init__(self, seconds: float | None, start: float | None = None) -> None:
        self.at = None if seconds is None else (time.perf_counter() if start is None else start) + seconds

    def expired(self) -> bool:
        return self.at is not None and time.perf_counter() > self.at

    def check(self) -> None:
        if self.at is not None and time.perf_counter() > self.at:
            raise TimeLimitReached

    def remaining(self) -> float | None:
        return None if self.at is None else max(0.0, self.at - time.perf_counter())

    def within(self, seconds: float | None) -> Deadline:
        """The earlier of this deadline and ``seconds`` from now."""
        d = Deadline(seconds)
        if d.at is None or (self.at is not None and self.at < d.at):
            d.at = self.at
        return d


NO_DEADLINE = Deadline(None)
