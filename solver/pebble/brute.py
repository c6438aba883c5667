"""Brute force: 0-1 breadth-first search over *every* configuration of the red-blue pebble game.

No reduction of :mod:`attnio.solver.pebble.solve` is used here: a state is the full (red set, blue set[, computed
set]) and every rule R1–R4 is tried in every state, including deleting blue pebbles (inputs' too) and writing
or reading values that are never used again. It is exponential (4^n configurations, 8^n one-shot) and meant
for graphs of at most ~8 vertices, as an independent check of the exact solver.

>>> from attnio.solver.pebble.graphs import reduction_tree
>>> brute_force(reduction_tree(4), 3)
7
>>> brute_force(reduction_tree(4), 2) is None  # infeasible: an adder needs 3 red pebbles
True
"""

from __future__ import annotations

from collections import deque

from attnio.core.errors import InvalidParameter
from attnio.solver.pebble.graphs import Graph

MAX_VERTICES = 10


def brute_force(g: Graph, M: int, *, recompute: bool = True) -> int | None:
    """Least number of R1 + R2 moves of a complete calculation with at most ``M`` red pebbles, or None if
    there is none."""
    if g.n > MAX_VERTICES:
        raise InvalidParameter("graph", g.name, f"at most {MAX_VERTICES} vertices for brute force")
    n = g.n
    par = [sum(1 << p for p in ps) for ps in g.parents]
    IN = sum(1 << v for v in g.inputs)
    OUT = sum(1 << v for v in g.outputs)
    start = (0, IN, 0)
    dist = {start: 0}
    dq: deque[tuple[int, tuple[int, int, int]]] = deque([(0, start)])
    while dq:
        cost, s = dq.popleft()
        if dist.get(s, 1 << 60) < cost:
            continue
        R, B, C = s
        if OUT & B == OUT:
            return cost
        k = R.bit_count()
        succ: list[tuple[int, tuple[int, int, int]]] = []
        for v in range(n):
            bit = 1 << v
            if R & bit:
                succ.append((0, (R & ~bit, B, C)))  # R4 on the red pebble
                if not B & bit:
                    succ.append((1, (R, B | bit, C)))  # R2
            else:
                if k < M and B & bit:
                    succ.append((1, (R | bit, B, C)))  # R1
                if k < M and par[v] and (par[v] & R) == par[v] and (recompute or not C & bit):
                    succ.append((0, (R | bit, B, C | bit if not recompute else 0)))  # R3
            if B & bit:
                succ.append((0, (R, B & ~bit, C)))  # R4 on the blue pebble
        for w, t in succ:
            c = cost + w
            if c < dist.get(t, 1 << 60):
                dist[t] = c
                if w == 0:
                    dq.appendleft((c, t))
                else:
                    dq.append((c, t))
    return None
