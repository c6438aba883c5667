"""Exact minimum I/O of the partial-computation red-blue game (PRBP, one-shot): A* over configurations.

The rules are :func:`attnio.solver.pebble.game.replay_prbp`'s (docs/pebbling.md §10). A state is (R, B, E): red
vertices, blue vertices whose blue copy is current, and the aggregated edges. Moves cost 1 (read, write) or
0 (compute, aggregate, delete). Reductions, each a transformation that never raises the cost (§10):

1. blue pebbles are never removed, except the stale copy an aggregation removes by rule;
2. lazy deletion: a red pebble is removed only when a placement needs its slot, written first ("spill") or
   not ("evict");
3. dead values (complete, every out-edge aggregated, not an unfinished output) lose their pebbles at once;
4. an output is written, and its red pebble removed, as soon as it is complete;
5. a blue value is read only if it is an unfinished partial sum or has an edge still to be aggregated;
6. symmetry: configurations related by a verified automorphism of the graph (its vertices, and with them its
   edges) have the same cost-to-go; one representative per orbit is kept (:mod:`attnio.solver.pebble.symmetry`).

Heuristic h = (outputs not yet complete and blue) + (inputs not red with an out-edge not yet aggregated):
each such input must be read again (only R1 makes an input red). Consistent: a read lowers h by at most
one, an output's write by one, and no free move lowers it. A started sum with neither pebble is lost (no
recomputation): such a state is a dead end.

>>> from attnio.solver.pebble.graphs import reduction_tree
>>> (solve_prbp(reduction_tree(3, tree="flat"), 2).opt, min_M(reduction_tree(3, tree="flat")))
(4, 2)
"""

from __future__ import annotations

import time

from attnio.core.validate import check_int
from attnio.solver.pebble.frontier import NEVER, Frontier
from attnio.solver.pebble.game import aggregable, replay_prbp
from attnio.solver.pebble.graphs import Graph
from attnio.solver.pebble.limits import Deadline, TimeLimitReached
from attnio.solver.pebble.solve import PebbleResult
from attnio.solver.pebble.symmetry import apply_mask, automorphisms, mask_tables, real_frames


def min_M(g: Graph) -> int:
    """Least M with which the PRBP game can be played: a sum needs 2 red pebbles (partial sum and summand),
    any other vertex its in-degree + 1."""
    sums = aggregable(g)
    return max([1] + [2 if v in sums else len(ps) + 1 for v, ps in enumerate(g.parents) if ps])


def solve_prbp(g: Graph, M: int, *, time_limit_s: float | None = 60.0, max_states: int = 5_000_000,
               deadline: Deadline | None = None, symmetry: bool = True) -> PebbleResult:
    """Least reads + writes of a one-shot PRBP calculation of ``g`` with ``M`` red pebbles (module docstring).

    Where M ≥ max in-degree + 1, the standard one-shot optimum of the same graph is found first (a quarter of
    the time): its schedule is a PRBP schedule (a sum computed at once), so it is an upper bound U, states
    with f ≥ U are pruned, and a search that exhausts below U proves OPT_PRBP = U."""
    M = check_int("M", M, min=1)
    t0 = time.perf_counter()
    dl = deadline if deadline is not None else Deadline(time_limit_s, t0)
    base = dict(graph=g.name, n=g.n, M=M, recompute=False, engine="astar-prbp")
    if M < min_M(g):
        return PebbleResult(status="infeasible", lower=None, upper=None, seconds=0.0, extra={"min_M": min_M(g)}, **base)
    n, sums, par, ch = g.n, aggregable(g), g.parents, g.children
    eid: dict[tuple[int, int], int] = {}
    for v in range(n):
        for p in par[v]:
            eid[p, v] = len(eid)
    inmask = [sum(1 << eid[p, v] for p in par[v]) for v in range(n)]
    outmask = [sum(1 << eid[v, c] for c in ch[v]) for v in range(n)]
    IN = sum(1 << v for v in g.inputs)
    OUTS = set(g.outputs)
    OUT = sum(1 << v for v in OUTS)

    def complete(E: int, v: int) -> bool:
        return E & inmask[v] == inmask[v]

    def canon(R: int, B: int, E: int, out: list) -> tuple[int, int, int]:
        for v in range(n):
            bit = 1 << v
            if (R | B) & bit and complete(E, v) and E & outmask[v] == outmask[v] and not (OUT & bit and not B & bit):
                if R & bit:
                    out.append(("delete", v))
                R &= ~bit
                if not OUT & bit:
                    B &= ~bit
        return R, B, E

    def h(R: int, B: int, E: int) -> int:
        k = sum(1 for o in OUTS if not (B >> o & 1 and complete(E, o)))
        for v in range(n):
            bit = 1 << v
            if IN & bit:
                if not R & bit and E & outmask[v] != outmask[v]:
                    k += 1
            elif E & inmask[v] and not complete(E, v) and not (R | B) & bit:
                return -1  # a started partial sum lost
        return k

    U, U_moves = 1 << 60, None
    if M >= g.min_M:
        from attnio.solver.pebble.solve import solve

        left = dl.remaining()
        std = solve(g, M, recompute=False, time_limit_s=None if left is None else left / 4,
                    deadline=dl.within(None if left is None else left / 4))
        if std.schedule is not None:
            U_moves = list(std.schedule)
            U = replay_prbp(g, M, U_moves).io
    # symmetry: configurations related by a verified automorphism (vertices and, with them, edges) share their
    # cost-to-go; one representative per orbit is kept (the least image), as in solve.py
    perms = automorphisms(g, dl) if symmetry else [tuple(range(n))]
    tables = []
    for pi in perms[1:]:
        ep = [0] * len(eid)
        for (a, b), k in eid.items():
            ep[k] = eid[pi[a], pi[b]]
        tables.append((mask_tables(pi), mask_tables(tuple(ep))))

    def sym(raw: tuple[int, int, int]) -> tuple[tuple[int, int, int], int]:
        best_, which = raw, 0
        for t, (vt, et) in enumerate(tables, 1):
            img = (apply_mask(vt, raw[0]), apply_mask(vt, raw[1]), apply_mask(et, raw[2]))
            if img < best_:
                best_, which = img, t
        return best_, which

    s0 = canon(0, IN, 0, [])
    frontier = Frontier(s0, h(*s0))
    goal = None

    def push(raw: tuple, gn: int, frm: tuple, mv: list) -> None:
        s, sigma = sym(raw) if tables else (raw, 0)
        if gn >= frontier.best.get(s, NEVER):
            return
        hv = h(*s)
        if hv < 0 or gn + hv >= U:
            return
        frontier.push(s, gn, hv, (frm, mv, sigma))

    def placed(R: int, B: int, E: int, v: int, mv: list, gcost: int, frm: tuple) -> None:
        """v became red or received an aggregation: write a complete output at once (reduction 4)."""
        out = list(mv)
        cost = gcost
        if v in OUTS and complete(E, v):
            out += [("write", v), ("delete", v)]
            B |= 1 << v
            R &= ~(1 << v)
            cost += 1
        R, B, E = canon(R, B, E, out)
        push((R, B, E), cost, frm, out)

    try:
        while (top := frontier.pop()) is not None:
            s, gcost = top
            R, B, E = s
            if all(B >> o & 1 and complete(E, o) for o in OUTS):
                goal = (s, gcost)
                break
            if not frontier.expand(max_states, dl):
                break
            dl.check()
            full = R.bit_count() >= M
            if full:
                for u in range(n):
                    bit = 1 << u
                    if R & bit:
                        out: list = [("delete", u)]
                        push(canon(R & ~bit, B, E, out), gcost, s, out)
                        if not B & bit:
                            out = [("write", u), ("delete", u)]
                            push(canon(R & ~bit, B | bit, E, out), gcost + 1, s, out)
            for v in range(n):
                bit = 1 << v
                if not R & bit:
                    if full:
                        continue
                    if B & bit and (not complete(E, v) or E & outmask[v] != outmask[v]):
                        placed(R | bit, B, E, v, [("read", v)], gcost + 1, s)
                    if par[v] and not E & inmask[v] and all(R >> p & 1 and complete(E, p) for p in par[v]) and v not in sums:
                        placed(R | bit, B, E | inmask[v], v, [("compute", v)], gcost, s)
                if v in sums and not complete(E, v) and (R & bit or (not E & inmask[v] and not full)):
                    for p in par[v]:
                        e = 1 << eid[p, v]
                        if not E & e and R >> p & 1 and complete(E, p):
                            placed(R | bit, B & ~bit, E | e, v, [("aggregate", (p, v))], gcost, s)
    except TimeLimitReached:
        # raised only while the state last popped is expanded: back on the list it keeps the least f a lower bound
        # (its children pushed so far have f at least its own)
        frontier.put_back()
        frontier.stopped = "time"
    expanded, stopped = frontier.expanded, frontier.stopped
    seconds = time.perf_counter() - t0
    if goal is None and stopped is None and U_moves is not None:
        rp = replay_prbp(g, M, U_moves)
        return PebbleResult(status="optimal", lower=U, upper=U, seconds=seconds, states=expanded, schedule=tuple(U_moves),
                            reads=rp.reads, writes=rp.writes, note="no PRBP calculation cheaper than the standard one-shot optimum", **base)
    if goal is None:
        lower = max(frontier.least_f(U), len(g.inputs) + len(g.outputs))
        if M < g.min_M:  # no standard schedule to fall back on (a sum computed at once needs in-degree + 1)
            return PebbleResult(status="bounds", lower=lower, upper=None, seconds=seconds, states=expanded,
                                note=f"stopped by the {stopped} limit", **base)
        # a standard one-shot schedule is a PRBP schedule (a sum computed at once): the upper side
        from attnio.solver.pebble.solve import best_greedy

        moves = U_moves or best_greedy(g, M)[1]
        rp = replay_prbp(g, M, moves)
        return PebbleResult(status="bounds", lower=min(lower, rp.io), upper=rp.io, seconds=seconds, states=expanded,
                            schedule=tuple(moves), reads=rp.reads, writes=rp.writes,
                            note=f"stopped by the {stopped} limit; upper bound from a standard one-shot schedule", **base)
    s, cost = goal
    # back to one real path: a move found in the frame of a representative is mapped by τ (solve.py's rule)
    moves = [(op, (tau[x[0]], tau[x[1]]) if op == "aggregate" else tau[x])
             for mv, tau in real_frames(frontier.path(s), perms) for op, x in mv]
    rp = replay_prbp(g, M, moves)
    assert rp.io == cost, (rp, cost)
    return PebbleResult(status="optimal", lower=cost, upper=cost, seconds=seconds, states=expanded,
                        schedule=tuple(moves), reads=rp.reads, writes=rp.writes, **base)
