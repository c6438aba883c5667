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
        if op == "read":
            if v not in blue:
                raise IllegalMove(f"{where}: vertex has no blue pebble")
            red.add(v)
            reads += 1
        elif op == "write":
            if v not in red:
                raise IllegalMove(f"{where}: vertex has no red pebble")
            blue.add(v)
            writes += 1
        elif op == "compute":
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
        elif op == "delete":
            if v not in red:
                raise IllegalMove(f"{where}: no red pebble to delete")
            red.discard(v)
        else:
            if v not in blue:
                raise IllegalMove(f"{where}: no blue pebble to delete")
            blue.discard(v)
        if len(red) > M:
            raise IllegalMove(f"{where}: {len(red)} red pebbles > M={M}")
        max_red = max(max_red, len(red))
    unfinished = [g.labels[o] for o in g.outputs if o not in blue]
    if unfinished:
        raise IllegalMove(f"end: outputs {unfinished} have no blue pebble")
    return Replay(reads, writes, computes, max_red)
