"""Is there a calculation *with recomputation* that moves only the compulsory words? The zero-slack search of
:mod:`attnio.solver.pebble.tight` extended to Hong–Kung's game (recomputation allowed).

Derived here (docs/pebbling.md §12). T = inputs + outputs is a lower bound on every complete calculation.

**Lemma 3 (tight calculations with recomputation).** A calculation of cost T reads every input exactly once,
writes every output exactly once, and moves nothing else: no non-input is ever read (it would need a write of a
non-output first) and no non-output is written. So each input is red on one interval (from its read to its
deletion), each non-input is red only through computations (any number of them), and an output may be written
at its first computation and never computed again (it is a sink). A tight calculation is therefore a sequence of
computations and deletions (reads folded into the computation that first uses the input) from which the state
(R: red set, U: inputs read and deleted — never readable again, W: outputs written) fully determines what may
follow. The search is a depth-first search over those states with a visited set, exhaustive up to the
reductions below, each a transformation of any tight calculation into one the search generates:

1. *Lazy reads.* An input is read right before the first computation that uses it (a later read only shortens
   its interval).
2. *Lazy deletion.* A red value is deleted only when some computation the search could make next does not fit
   (postpone every deletion to just before the first computation that needs its slot; a recomputation of a value
   still red is dropped). Inputs deleted become used up.
3. *Dead values.* A red value that reaches no unwritten output is deleted at once (it can never be used).
4. *Outputs at once.* An unwritten output whose parents are all red is computed, written and deleted as soon as
   one slot is free (earlier is never worse: it only leaves the unwritten set).
5. *An input's last use at once.* If a vertex v has all parents red, a slot is free, and some input parent p has
   no other child that reaches an unwritten output, v is computed now (and p then dies): in any tight completion
   v is computed later at t′, and p, an input with one red interval that contains now and t′, is red all along;
   computing v now and deleting p holds v in p's slot over [now, t′) and changes nothing else.
6. *Symmetry.* States related by a verified automorphism (:mod:`attnio.solver.pebble.symmetry`) have the same
   answer; the visited set keeps one representative per orbit (the least image of (R, U, W)).
7. *Dead ends.* A state from which some unwritten output cannot be produced at all (producible: red, or an input
   not yet used up, or a non-input whose parents are all producible) is abandoned.

A visited state is either refuted or on the current path (a cycle: a tight calculation through it again could be
shortened), so the search is complete. Answers: "tight" (a schedule of cost T, replayed by
:func:`attnio.solver.pebble.game.replay` with recomputation), "none" (exhaustive: OPT ≥ T + 1 with
recomputation), "unknown" (stopped).

>>> from attnio.solver.pebble.graphs import attention, reduction_tree
>>> tight_recompute(reduction_tree(4), 3).answer, tight_recompute(reduction_tree(4), 4).answer
('none', 'tight')
>>> tight_recompute(attention(2, 1), 7).answer, tight_recompute(attention(2, 1), 8).answer  # OPT 9 and 8
('none', 'tight')
"""

from __future__ import annotations

import time

from attnio.solver.pebble.game import replay
from attnio.solver.pebble.graphs import Graph
from attnio.solver.pebble.limits import NO_DEADLINE, Deadline, TimeLimitReached
from attnio.solver.pebble.symmetry import apply_mask, automorphisms, mask_tables
from attnio.solver.pebble.tight import TightResult, _bits, _masks, compulsory, few_perms


def tight_recompute(g: Graph, M: int, *, symmetry: bool = True, max_states: int = 20_000_000,
                    deadline: Deadline = NO_DEADLINE, perms: list[tuple[int, ...]] | None = None,
                    keep_perms: int = 24) -> TightResult:
    """Decide whether ``g`` has a calculation of cost inputs + outputs with ``M`` red pebbles, recomputation
    allowed (module docstring). ``perms``: automorphisms to merge under (default: the ``keep_perms`` that move
    fewest vertices of :func:`attnio.solver.pebble.symmetry.automorphisms`, when ``symmetry``)."""
    t0 = time.perf_counter()
    n = g.n
    IN, OUT, par, ch = _masks(g)
    cost = compulsory(g)

    def done(answer: str, states: int, sched=None) -> TightResult:
        return TightResult(answer, cost, M, states, time.perf_counter() - t0, sched)

    if M < g.min_M:
        return done("none", 0)
    if perms is None:
        perms = few_perms(automorphisms(g, deadline), keep_perms) if symmetry else [tuple(range(n))]
    assert all(all(sorted(p[u] for u in g.parents[v]) == sorted(g.parents[p[v]]) for v in range(n)) for p in perms)
    tables = [mask_tables(p) for p in perms if p != tuple(range(n))]

    anc = [0] * n  # ancestors of each vertex, itself included
    for v in range(n):
        a = 1 << v
        for p in g.parents[v]:
            a |= anc[p]
        anc[v] = a
    outs = list(_bits(OUT))
    order = [v for v in range(n) if not (IN >> v) & 1]  # topological

    def needed(W: int) -> int:
        m = 0
        for o in outs:
            if not (W >> o) & 1:
                m |= anc[o]
        return m

    def canon(R: int, U: int, W: int) -> tuple[int, int, int]:
        best = (R, U, W)
        for tb in tables:
            x = (apply_mask(tb, R), apply_mask(tb, U), apply_mask(tb, W))
            if x < best:
                best = x
        return best

    def producible(R: int, fresh: int, need: int, W: int) -> bool:
        prod = R | fresh
        for v in order:
            if (need >> v) & 1 and not (prod >> v) & 1 and par[v] & ~prod == 0:
                prod |= 1 << v
        return OUT & ~W & ~prod == 0

    visited: set[tuple[int, int, int]] = set()
    states = 0
    path: list[tuple[str, int]] = []

    def settle(R: int, U: int, W: int) -> tuple[int, int, int, list[tuple[str, int]]]:
        """Reductions 3–5 to a fixed point: dead values deleted, outputs and inputs' last uses computed."""
        moves: list[tuple[str, int]] = []
        while True:
            need = needed(W)
            dead = R & ~need
            if dead:
                for u in _bits(dead):
                    moves.append(("delete", u))
                U |= dead & IN
                R &= ~dead
            if W == OUT:
                return R, U, W, moves
            free = M - R.bit_count()
            if free < 1:
                return R, U, W, moves
            act = None
            for o in _bits(OUT & ~W):
                if par[o] & ~R == 0:
                    act = o
                    break
            if act is not None:
                moves += [("compute", act), ("write", act), ("delete", act)]
                W |= 1 << act
                continue
            for v in _bits(need & ~IN & ~R):
                pv = par[v]
                if pv & ~R:
                    continue
                if any(ch[p] & need == 1 << v for p in _bits(pv & IN)):
                    act = v
                    break
            if act is None:
                return R, U, W, moves
            moves.append(("compute", act))
            R |= 1 << act

    def dfs(R: int, U: int, W: int) -> bool:
        nonlocal states
        R, U, W, pre = settle(R, U, W)
        path.extend(pre)
        if W == OUT:
            return True
        key = canon(R, U, W)
        if key in visited:
            del path[len(path) - len(pre):]
            return False
        visited.add(key)
        states += 1
        if states > max_states:
            raise TimeLimitReached
        if not states & 1023:
            deadline.check()
        need = needed(W)
        fresh = IN & ~R & ~U
        if not producible(R, fresh, need, W):
            del path[len(path) - len(pre):]
            return False
        used = R.bit_count()
        fits, blocked = [], False
        for v in _bits(need & ~IN & ~R & ~W):
            pv = par[v]
            if pv & ~(R | fresh):
                continue
            new = (pv & ~R).bit_count() + 1
            if used + new > M:
                blocked = True
                continue
            # prefer moves that free a slot soon: vertices that are the last needed use of some red parent
            fits.append((-sum(1 for p in _bits(pv & R) if ch[p] & need == 1 << v), v))
        fits.sort()
        for _, v in fits:
            reads = par[v] & ~R
            mark = len(path)
            path.extend(("read", x) for x in _bits(reads))
            path.append(("compute", v))
            if dfs(R | reads | (1 << v), U, W):
                return True
            del path[mark:]
        if blocked:
            for u in _bits(R):
                path.append(("delete", u))
                if dfs(R & ~(1 << u), U | (IN & (1 << u)), W):
                    return True
                path.pop()
        del path[len(path) - len(pre):]
        return False

    import sys

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 20 * n + 1000))
    try:
        ok = dfs(0, 0, 0)
    except TimeLimitReached:
        return done("unknown", states)
    if not ok:
        return done("none", states)
    sched = _schedule(path, IN, OUT)
    rp = replay(g, M, sched, recompute=True)
    assert rp.io == cost, (rp, cost)
    return done("tight", states, tuple(sched))


def _schedule(path: list[tuple[str, int]], IN: int, OUT: int) -> list[tuple[str, int]]:
    """The path's moves as game moves: a compute of an output is followed by its write (already in the path),
    and deletions of values no longer red are dropped (none are produced; kept as a guard)."""
    red: set[int] = set()
    out = []
    for op, v in path:
        if op == "delete":
            if v not in red:
                continue
            red.discard(v)
        elif op in ("read", "compute"):
            red.add(v)
        out.append((op, v))
    return out
