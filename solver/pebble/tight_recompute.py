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
5. *A last use at once.* Call a red value p *once* if it can never be red again after its deletion: an input
   (read once) or a non-input with a parent outside the closure of the red values and the readable inputs (every
   ancestor of a needed value that is red later is in that closure, and p's parents do not depend on p), so p is
   red on one interval from now.
   If a vertex v has all parents red, a slot is free, and some once parent p has no other child that reaches an
   unwritten output, v is computed now (and p then dies): in any tight completion every later computation of v
   falls in p's interval, which contains them all; computing v now and deleting p holds v in p's slot until the
   last of them and changes nothing else (where v was red anyway the count drops; p's computations of children
   that reach no unwritten output are useless and dropped; where the completion never computes v again, because a
   red descendant of v stands on every path from v to an unwritten output, v is deleted at once or where p would
   have been, which lazy deletion covers). Likewise (5b) a once value
   whose only child that reaches an unwritten output is red is deleted: any later use recomputes that child
   while p is red all along; holding the child instead costs the same slot.
6. *Symmetry.* States related by a verified automorphism (:mod:`attnio.solver.pebble.symmetry`) have the same
   answer; the visited set keeps one representative per orbit (the least image of (R, U, W)).
7. *Dead ends.* A state from which some unwritten output cannot be produced at all (producible: red, or an input
   not yet used up, or a non-input whose parents are all producible) is abandoned.

A visited state is either refuted or on the current path (a cycle), so the search is complete: measure a state by
(the size of the closure above, the fewest computations left in a tight completion), ordered lexicographically.
The closure never grows along a play; a rule 5 step that adds a computation removes its once value p from the
closure for good; every other step of a tight completion lowers the computations left. The measure is the same on
automorphic states, so a tight calculation through a state on the current path again would have a completion of
smaller measure from the first visit, found there. Answers: "tight" (a schedule of cost T, replayed by
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
from dataclasses import dataclass

from attnio.solver.pebble.game import replay
from attnio.solver.pebble.graphs import Graph
from attnio.solver.pebble.limits import NO_DEADLINE, Deadline, TimeLimitReached
from attnio.solver.pebble.symmetry import automorphisms, orbit_canon
from attnio.solver.pebble.tight import TightResult, _bits, _masks, compulsory, few_perms


def tight_recompute(g: Graph, M: int, *, symmetry: bool = True, max_states: int = 20_000_000,
                    deadline: Deadline = NO_DEADLINE, perms: list[tuple[int, ...]] | None = None,
                    keep_perms: int = 24, extra_reads: int = 0, rereadable: int | None = None) -> TightResult:
    """Decide whether ``g`` has a calculation of cost inputs + outputs with ``M`` red pebbles, recomputation
    allowed (module docstring). ``perms``: automorphisms to merge under (default: the ``keep_perms`` that move
    fewest vertices of :func:`attnio.solver.pebble.symmetry.automorphisms`, when ``symmetry``).

    ``extra_reads`` = k > 0: the same search where inputs already used up may be read again, at most k times in
    all (a state is then kept with the most budget it was refuted with). "tight" then means a replayed schedule
    of cost ≤ T + k; "none" that no calculation of cost ≤ T + k writes no non-output and reads no non-input. For
    k = 1 that is every calculation of cost T + 1 (Lemma 4, docs/pebbling.md §12: one extra move is a second
    read of an input; a write of a non-output alone is droppable, a read of a non-input needs one), so "none"
    with k = 1 proves OPT ≥ T + 2.

    ``rereadable`` (a bitmask of inputs; default all): only these may be read again. Reductions 5 and 5b then stay
    on for every other input (each still has one red interval), which is what makes the search finish on 60+
    vertices; :func:`one_reread_recompute` runs it once per orbit of inputs. ``perms`` must then map the mask
    onto itself (checked)."""
    t0 = time.perf_counter()
    n = g.n
    IN, OUT, par, ch = _masks(g)
    OUT &= ~IN  # an isolated vertex is an input and an output: blue from the start, never moved
    cost = compulsory(g)

    def done(answer: str, states: int, sched=None) -> TightResult:
        return TightResult(answer, cost, M, states, time.perf_counter() - t0, sched)

    if M < g.min_M:
        return done("none", 0)
    if perms is None:
        perms = few_perms(automorphisms(g, deadline), keep_perms) if symmetry else [tuple(range(n))]
    assert all(all(sorted(p[u] for u in g.parents[v]) == sorted(g.parents[p[v]]) for v in range(n)) for p in perms)
    X = IN if rereadable is None else rereadable & IN
    assert all(sum(1 << p[x] for x in _bits(X)) == X for p in perms), "perms must map the rereadable set onto itself"
    anc = [0] * n  # ancestors of each vertex, itself included
    for v in range(n):
        a = 1 << v
        for p in g.parents[v]:
            a |= anc[p]
        anc[v] = a
    assert all(p < v for v in range(n) for p in g.parents[v]), "vertices must be numbered in topological order"
    needs: dict[int, int] = {}

    def needed(W: int) -> int:
        m = needs.get(W)
        if m is None:
            m = 0
            for o in _bits(OUT & ~W):
                m |= anc[o]
            needs[W] = m
        return m

    # a state (R, U, W) as one key: R in the low n bits, U | W above (U ⊆ inputs, W ⊆ outputs: disjoint)
    least = orbit_canon([tuple(p) + tuple(n + w for w in p) for p in perms], 2 * n) if len(perms) > 1 else None

    def canon(R: int, U: int, W: int) -> int:
        key = R | (U | W) << n
        return key if least is None else least(key)

    def closure(R: int, fresh: int, need: int) -> int:
        """The needed values that can be red from here on: red, readable, or with all parents so."""
        prod = R | fresh
        for v in _bits(need & ~prod & ~IN):  # ascending: topological
            if par[v] & ~prod == 0:
                prod |= 1 << v
        return prod

    def readable(R: int, U: int, left: int) -> int:
        return IN & ~R & ~U if not left else IN & ~R & ~(U & ~X)

    visited: dict[int, int] = {}
    states = 0
    path: list[tuple[str, int]] = []

    def settle(R: int, U: int, W: int, left: int) -> tuple[int, int, int, list[tuple[str, int]]]:
        """Reductions 3–5 to a fixed point: dead values deleted, outputs and last uses of values red on one interval
        from here on computed (not a rereadable input: it may leave and come back, and holding v instead is no
        longer free)."""
        moves: list[tuple[str, int]] = []
        once = IN & ~X if left else IN  # inputs with one red interval from here on
        while True:
            need = needed(W)
            # red values with one red interval from here on: inputs that cannot be read again, and non-inputs with
            # a parent that can never be red again (outside the closure of R and the readable inputs)
            prod = closure(R, readable(R, U, left), need)
            one = R & once
            for u in _bits(R & need & ~IN):
                if par[u] & ~prod:
                    one |= 1 << u
            dead = R & ~need
            if one:  # reduction 5b: a value whose one needed child is red is held by that child instead
                for x in _bits(one & need):
                    c = ch[x] & need
                    if c & (c - 1) == 0 and c & R:
                        dead |= 1 << x
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
            if not one:
                return R, U, W, moves
            for v in _bits(need & ~IN & ~R):
                pv = par[v]
                if pv & ~R:
                    continue
                if any(ch[p] & need == 1 << v for p in _bits(pv & one)):
                    act = v
                    break
            if act is None:
                return R, U, W, moves
            moves.append(("compute", act))
            R |= 1 << act

    def dfs(R: int, U: int, W: int, left: int) -> bool:
        nonlocal states
        R, U, W, pre = settle(R, U, W, left)
        path.extend(pre)
        if W == OUT:
            return True
        key = canon(R, U, W)
        if visited.get(key, -1) >= left:  # refuted with at least this budget, or on the path (a cycle)
            del path[len(path) - len(pre):]
            return False
        visited[key] = left
        states += 1
        if states > max_states:
            raise TimeLimitReached
        if not states & 1023:
            deadline.check()
        need = needed(W)
        fresh = readable(R, U, left)
        if OUT & ~W & ~closure(R, fresh, need):  # reduction 7
            del path[len(path) - len(pre):]
            return False
        used = R.bit_count()
        fits, blocked = [], False
        for v in _bits(need & ~IN & ~R & ~W):
            pv = par[v]
            if pv & ~(R | fresh):
                continue
            if (pv & U).bit_count() > left:
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
            if (OUT >> v) & 1:  # an output: written and deleted at once
                path.extend((("write", v), ("delete", v)))
                nxt = (R | reads, U & ~reads, W | (1 << v), left - (reads & U).bit_count())
            else:
                nxt = (R | reads | (1 << v), U & ~reads, W, left - (reads & U).bit_count())
            if dfs(*nxt):
                return True
            del path[mark:]
        if blocked:
            for u in _bits(R):
                path.append(("delete", u))
                if dfs(R & ~(1 << u), U | (IN & (1 << u)), W, left):
                    return True
                path.pop()
        del path[len(path) - len(pre):]
        return False

    import sys

    # a path may compute and delete a value many times: up to one frame per state (Python frames, not C stack)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 200_000))
    try:
        ok = dfs(0, 0, 0, extra_reads)
    except (TimeLimitReached, RecursionError):
        return done("unknown", states)
    finally:
        # restored: a raised limit left behind lets C recursion elsewhere (json's scanner) overflow the C stack
        sys.setrecursionlimit(limit)
    if not ok:
        return done("none", states)
    sched = _schedule(path, IN, OUT)
    rp = replay(g, M, sched, recompute=True)
    assert rp.io <= cost + extra_reads, (rp, cost)
    return TightResult("tight", rp.io, M, states, time.perf_counter() - t0, tuple(sched))


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


def one_reread_recompute(g: Graph, M: int, *, deadline: Deadline = NO_DEADLINE,
                         perms: list[tuple[int, ...]] | None = None) -> TightResult:
    """Decide whether ``g`` has a calculation of cost T + 1 with recomputation (T = inputs + outputs), given that it
    has none of cost T. By Lemma 4 (docs/pebbling.md §12) such a calculation reads one input x twice and moves
    nothing else beyond T; an automorphism maps it to one that re-reads the representative of x's orbit. So
    :func:`tight_recompute` with ``extra_reads=1`` and only that representative rereadable, once per orbit (merging
    under the automorphisms that fix it), is exhaustive: "tight" (a replayed schedule of cost ≤ T + 1), "none"
    (OPT ≥ T + 2 with recomputation, when no tight calculation exists), "unknown" (stopped)."""
    from attnio.solver.pebble.tight import input_orbits

    t0 = time.perf_counter()
    perms = automorphisms(g, deadline) if perms is None else perms
    states = 0
    unknown = False
    for x in input_orbits(g, perms):
        r = tight_recompute(g, M, deadline=deadline, extra_reads=1, rereadable=1 << x,
                            perms=few_perms([p for p in perms if p[x] == x]))
        states += r.states
        if r.answer == "tight":
            return TightResult("tight", r.cost, M, states, time.perf_counter() - t0, r.schedule)
        unknown |= r.answer == "unknown"
        if deadline.expired():
            break
    return TightResult("unknown" if unknown else "none", compulsory(g) + 1, M, states, time.perf_counter() - t0)


@dataclass(frozen=True)
class RecomputeCertificate:
    """What the zero-slack searches prove about OPT with recomputation: ``lower`` (a lower bound over every
    calculation), ``upper`` and ``schedule`` (a replayed calculation of that cost, or None), ``steps`` (each
    search run: name, answer, seconds)."""

    T: int
    M: int
    lower: int
    upper: int | None
    schedule: tuple[tuple[str, int], ...] | None
    steps: tuple[tuple[str, str, float], ...]
    seconds: float

    @property
    def optimal(self) -> bool:
        return self.upper is not None and self.lower == self.upper


def certify_recompute(g: Graph, M: int, *, time_limit_s: float | None = 60.0) -> RecomputeCertificate:
    """OPT with recomputation by the zero-slack searches, in order, each within what is left of the limit:
    a tight one-shot calculation (:func:`attnio.solver.pebble.tight.tight_one_shot`; a one-shot calculation is
    a calculation) → OPT = T; a tight calculation with recomputation (:func:`tight_recompute`) → OPT = T, or
    "none" → OPT ≥ T + 1; then a calculation of cost T + 1: one-shot with one input read twice
    (:func:`attnio.solver.pebble.tight.reread_search`, k = 1), else with recomputation, exhaustively, one input
    orbit at a time (:func:`one_reread_recompute`), whose "none" proves OPT ≥ T + 2. Every schedule is replayed
    with recomputation."""
    from attnio.solver.pebble.tight import reread_search, tight_one_shot

    t0 = time.perf_counter()
    dl = Deadline(time_limit_s)
    T = compulsory(g)
    steps: list[tuple[str, str, float]] = []
    group = automorphisms(g, dl)
    perms = few_perms(group)

    def result(lower: int, upper: int | None, sched) -> RecomputeCertificate:
        if sched is not None:
            assert replay(g, M, sched, recompute=True).io == upper
        return RecomputeCertificate(T, M, lower, upper, None if sched is None else tuple(sched), tuple(steps),
                                    time.perf_counter() - t0)

    r1 = tight_one_shot(g, M, deadline=dl, perms=perms)
    steps.append(("tight one-shot", r1.answer, round(r1.seconds, 3)))
    if r1.answer == "tight":
        return result(T, T, r1.schedule)
    r2 = tight_recompute(g, M, deadline=dl, perms=perms)
    steps.append(("tight with recomputation", r2.answer, round(r2.seconds, 3)))
    if r2.answer == "tight":
        return result(T, T, r2.schedule)
    if r2.answer != "none":
        return result(T, None, None)
    r3 = reread_search(g, M, 1, deadline=dl, perms=perms)
    steps.append(("one re-read, one-shot", r3.answer, round(r3.seconds, 3)))
    if r3.answer == "found":
        return result(T + 1, r3.cost, r3.schedule)
    r4 = one_reread_recompute(g, M, deadline=dl, perms=group)
    steps.append(("one re-read with recomputation", r4.answer, round(r4.seconds, 3)))
    if r4.answer == "tight":
        return result(T + 1, r4.cost, r4.schedule)
    return result(T + 2 if r4.answer == "none" else T + 1, None, None)
