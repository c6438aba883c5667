"""The rules of the red-blue pebble game (Hong & Kung 1981; Saha–Ye Definition 2.1) as a replay checker.

A schedule is a sequence of moves ``(op, v)`` with ``op`` one of ``"read"`` (R1: red on a blue vertex),
``"write"`` (R2: blue on a red vertex), ``"compute"`` (R3: red on a vertex whose parents are all red),
``"delete"`` (R4: remove the red pebble) and ``"delete_blue"`` (R4 on a blue pebble). Start: blue pebbles on the
inputs, nothing else. End: every output blue (pebbles left elsewhere are removed by free R4 moves, so they
do not change the cost). At most ``M`` red pebbles at any moment. Cost = number of R1 + R2 moves.

:func:`replay` is deliberately independent of the solvers: every schedule a solver returns is replayed here,
so an upper bound is never taken on the solver's word.

>>> from attnio.solver.pebble.graphs import chain
>>> replay(chain(3), 2, [("read", 0), ("compute", 1), ("delete", 0), ("compute", 2), ("write", 2)])
Replay(reads=1, writes=1, computes=2, max_red=2)
>>> replay(chain(3), 1, [("read", 0), ("compute", 1)])
Traceback (most recent call last):
attnio.solver.pebble.game.IllegalMove: move 1 ('compute', 1): 2 red pebbles > M=1
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from attnio.solver.pebble.graphs import Graph

OPS = ("read", "write", "compute", "delete", "delete_blue")


class IllegalMove(AssertionError):
    """A schedule broke a rule of the game (a solver bug, hence an AssertionError)."""


@dataclass(frozen=True)
class Replay:
    reads: int
    writes: int
    computes: int
    max_red: int

    @property
    def io(self) -> int:
        return self.reads + self.writes


def _move(op: str, v: int, red: set[int], blue: set[int], where: str) -> tuple[int, int]:
    """R1, R2 and R4 (the same in both games): apply the move, return (reads, writes) it costs."""
    if op == "read":
        if v not in blue:
            raise IllegalMove(f"{where}: vertex has no blue pebble")
        red.add(v)
        return 1, 0
    if op == "write":
        if v not in red:
            raise IllegalMove(f"{where}: vertex has no red pebble")
        blue.add(v)
        return 0, 1
    if op == "delete":
        if v not in red:
            raise IllegalMove(f"{where}: no red pebble to delete")
        red.discard(v)
        return 0, 0
    if v not in blue:
        raise IllegalMove(f"{where}: no blue pebble to delete")
    blue.discard(v)
    return 0, 0


def replay(g: Graph, M: int, moves: Iterable[tuple[str, int]], *, recompute: bool = True) -> Replay:
    """Play ``moves`` on ``g`` with ``M`` red pebbles; raise :class:`IllegalMove` on the first illegal move,
    or if the end configuration leaves an output without a blue pebble. With ``recompute=False`` a vertex
    may be computed (R3) at most once."""
    red: set[int] = set()
    blue: set[int] = set(g.inputs)
    computed: set[int] = set()
    reads = writes = computes = 0
    max_red = 0
    for t, (op, v) in enumerate(moves):
        where = f"move {t} {(op, v)!r}"
        if op not in OPS or not 0 <= v < g.n:
            raise IllegalMove(f"{where}: unknown move")
        if op != "compute":
            r, w = _move(op, v, red, blue, where)
            reads, writes = reads + r, writes + w
        else:
            if not g.parents[v]:
                raise IllegalMove(f"{where}: an input cannot be computed")
            missing = [p for p in g.parents[v] if p not in red]
            if missing:
                raise IllegalMove(f"{where}: parents {missing} are not red")
            if not recompute and v in computed:
                raise IllegalMove(f"{where}: recomputation is not allowed")
            computed.add(v)
            red.add(v)
            computes += 1
        if len(red) > M:
            raise IllegalMove(f"{where}: {len(red)} red pebbles > M={M}")
        max_red = max(max_red, len(red))
    unfinished = [g.labels[o] for o in g.outputs if o not in blue]
    if unfinished:
        raise IllegalMove(f"end: outputs {unfinished} have no blue pebble")
    return Replay(reads, writes, computes, max_red)


# ----------------------------------------------------------------------------------------------------------
# the partial-computation red-blue game (PRBP; Papp, Sobczyk & Yzelman, SPAA 2025), one-shot


def aggregable(g: Graph) -> frozenset[int]:
    """The vertices that may be computed in pieces: the sums of a ``tree="flat"`` graph (``params["sums"]``)."""
    return frozenset(g.params.get("sums", ()))


def replay_prbp(g: Graph, M: int, moves: Iterable[tuple[str, object]]) -> Replay:
    """Play ``moves`` under the partial-computation rules (docs/pebbling.md §10); raise :class:`IllegalMove`.

    State: red and blue pebbles, and per vertex the set of in-edges already aggregated. A vertex is
    *complete* when it is an input or every in-edge is aggregated; *started* when some in-edge is.
    Moves: ``("read", v)`` (v blue), ``("write", v)`` (v red), ``("compute", v)`` (v a non-input, not started,
    every parent red and complete: all in-edges at once), ``("aggregate", (u, s))`` (s an aggregable sum,
    edge u→s not yet aggregated, u red and complete, s red or not started: s becomes / stays red; the
    blue copy of s, now stale, is removed), ``("delete", v)``, ``("delete_blue", v)``. Each edge is aggregated
    once (no recomputation). At most ``M`` red pebbles. End: every output complete and blue.

    >>> from attnio.solver.pebble.graphs import reduction_tree
    >>> g = reduction_tree(3, tree="flat")  # root = x0 + x1 + x2, aggregated one summand at a time
    >>> mv = [("read", 0), ("aggregate", (0, 3)), ("delete", 0), ("read", 1), ("aggregate", (1, 3)),
    ...       ("delete", 1), ("read", 2), ("aggregate", (2, 3)), ("write", 3)]
    >>> replay_prbp(g, 2, mv)
    Replay(reads=3, writes=1, computes=3, max_red=2)
    >>> replay(g, 4, [("read", 0), ("read", 1), ("read", 2), ("compute", 3), ("write", 3)]).io  # standard: M = 4
    4
    """
    sums = aggregable(g)
    red: set[int] = set()
    blue: set[int] = set(g.inputs)
    done: list[set[int]] = [set() for _ in range(g.n)]
    reads = writes = computes = 0
    max_red = 0

    def complete(v: int) -> bool:
        return len(done[v]) == len(g.parents[v])

    for t, (op, x) in enumerate(moves):
        where = f"move {t} {(op, x)!r}"
        if op == "aggregate":
            if not (isinstance(x, tuple) and len(x) == 2 and all(isinstance(y, int) and 0 <= y < g.n for y in x)):
                raise IllegalMove(f"{where}: unknown move")
            u, s = x
            if s not in sums or u not in g.parents[s]:
                raise IllegalMove(f"{where}: {g.labels[u]} → {g.labels[s]} is not an edge into an aggregable sum")
            if u in done[s]:
                raise IllegalMove(f"{where}: edge already aggregated")
            if u not in red or not complete(u):
                raise IllegalMove(f"{where}: the summand is not red and complete")
            if s not in red and done[s]:
                raise IllegalMove(f"{where}: the partial sum is not red")
            done[s].add(u)
            red.add(s)
            blue.discard(s)
            computes += 1
        elif op not in OPS or not isinstance(x, int) or not 0 <= x < g.n:
            raise IllegalMove(f"{where}: unknown move")
        elif op == "compute":
            if not g.parents[x]:
                raise IllegalMove(f"{where}: an input cannot be computed")
            if done[x]:
                raise IllegalMove(f"{where}: already started (no recomputation)")
            bad = [p for p in g.parents[x] if p not in red or not complete(p)]
            if bad:
                raise IllegalMove(f"{where}: parents {bad} are not red and complete")
            done[x] = set(g.parents[x])
            red.add(x)
            computes += 1
        else:
            r, w = _move(op, x, red, blue, where)
            reads, writes = reads + r, writes + w
        if len(red) > M:
            raise IllegalMove(f"{where}: {len(red)} red pebbles > M={M}")
        max_red = max(max_red, len(red))
    unfinished = [g.labels[o] for o in g.outputs if o not in blue or not complete(o)]
    if unfinished:
        raise IllegalMove(f"end: outputs {unfinished} are not complete and blue")
    return Replay(reads, writes, computes, max_red)
