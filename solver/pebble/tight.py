"""Is there a calculation that moves only the compulsory words? An exhaustive zero-slack search (one-shot game).

A complete calculation costs at least inputs + outputs (every input read, every output written). Call one of
exactly that cost *tight*. If none exists, OPT ≥ inputs + outputs + 1: a lower bound above the trivial one, the
kind A*'s capacity-blind heuristic cannot prove on large graphs. Derived here (docs/pebbling.md §11):

**Lemma (tight one-shot calculations are orderings).** In a tight one-shot calculation each input is read
exactly once and each output written exactly once, and nothing else is read or written. So an input is red from
its one read through its last use, a computed non-output from its one computation through its last use (it is
never written, so it cannot be read back, and never recomputed). Trimming every such red interval to
[first use, last use] (inputs) or [computation, last use] (non-inputs; an output: its computation only, written
and deleted at once) gives a legal calculation of the same cost whose red set is contained in the original's at
every moment. Hence a tight one-shot calculation exists iff some topological order of the vertices to compute
keeps, at every computation step, the *live* values (those whose red interval contains the step) within M.

The search walks those orders as downsets C (the computed set): from C, compute a ready vertex v (all parents
computed or inputs) if |live(C) ∪ parents(v) ∪ {v}| ≤ M. It is a depth-first search with a table of refuted
downsets, merged under the graph's verified automorphisms (:mod:`attnio.solver.pebble.symmetry`), and one
partial-order reduction:

**Eager rule.** If a ready v has every parent live (red), a free slot (|live(C)| < M), and is an output or the
last uncomputed child of one of its parents, computing v now is without loss: in any tight completion v is
computed later at t′ while its parents stay red until t′ (a tight calculation never drops a live value); moving
v's computation to now adds v to the red set on [now, t′) and removes the parents whose last use is v (at least
one), or adds nothing if v is an output (written and deleted at once); the red count at every later step does
not grow and the order stays topological. So from C a tight completion exists iff one exists from C ∪ {v}: the
search takes that move alone.

The answer is "tight" (with the ordering's schedule, replayed), "none" (exhaustive: no tight one-shot
calculation, so the one-shot OPT ≥ inputs + outputs + 1), or "unknown" (the deadline or state limit stopped it).

>>> from attnio.solver.pebble.graphs import attention, reduction_tree
>>> tight_one_shot(reduction_tree(4), 3).answer  # 7 = inputs + outputs + 2 at M = 3 (docs/pebbling.md §5)
'none'
>>> r = tight_one_shot(reduction_tree(4), 4)
>>> (r.answer, r.cost)
('tight', 5)
>>> tight_one_shot(attention(2, 2), 8).answer, tight_one_shot(attention(2, 2), 9).answer  # OPT 17 and 16
('none', 'tight')
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from attnio.solver.pebble.game import replay
from attnio.solver.pebble.graphs import Graph
from attnio.solver.pebble.limits import NO_DEADLINE, Deadline, TimeLimitReached
from attnio.solver.pebble.symmetry import apply_mask, automorphisms, least_image, mask_tables

ANSWERS = ("tight", "none", "unknown")


@dataclass(frozen=True)
class TightResult:
    """``answer``: "tight" (``schedule`` is a replayed calculation of cost inputs + outputs), "none" (no tight
    one-shot calculation exists: the one-shot OPT ≥ ``cost + 1``... see :attr:`lower`), or "unknown"."""

    answer: str
    cost: int  # inputs + outputs
    M: int
    states: int
    seconds: float
    schedule: tuple[tuple[str, int], ...] | None = None

    @property
    def lower(self) -> int:
        """The one-shot lower bound this answer proves."""
        return self.cost + 1 if self.answer == "none" else self.cost


def compulsory(g: Graph) -> int:
    """Inputs that are not outputs (each has a child, so it must be read) plus outputs that are not inputs (each
    must be written): inputs + outputs when no vertex is isolated, as in every graph of :mod:`graphs`."""
    ins, outs = set(g.inputs), set(g.outputs)
    return len(ins - outs) + len(outs - ins)


def _masks(g: Graph) -> tuple[int, int, list[int], list[int]]:
    """Inputs, outputs, and each vertex's parents and children, as bitmasks."""
    par = [sum(1 << p for p in ps) for ps in g.parents]
    ch = [0] * g.n
    for v, ps in enumerate(g.parents):
        for p in ps:
            ch[p] |= 1 << v
    return sum(1 << v for v in g.inputs), sum(1 << v for v in g.outputs), par, ch


def _bits(m: int):
    while m:
        low = m & -m
        yield low.bit_length() - 1
        m ^= low


def tight_one_shot(g: Graph, M: int, *, symmetry: bool = True, max_states: int = 10_000_000,
                   deadline: Deadline = NO_DEADLINE, perms: list[tuple[int, ...]] | None = None,
                   gates: dict[int, int] | None = None) -> TightResult:
    """Decide whether ``g`` has a one-shot calculation of cost inputs + outputs with ``M`` red pebbles
    (module docstring). Vertices that reach no output are never computed (in a tight calculation nothing is
    computed that is not used: dropping such a computation keeps it legal). ``perms``: automorphisms of ``g``
    to merge under (default: :func:`attnio.solver.pebble.symmetry.automorphisms` when ``symmetry``).
    ``gates`` {input x: vertex u}: x may be read only once u is computed (a spilled copy of u, :func:`one_spill`)."""
    t0 = time.perf_counter()
    n = g.n
    IN, OUT, par, ch = _masks(g)
    reach = [0] * n  # reaches an output
    for v in reversed(range(n)):
        reach[v] = bool((OUT >> v) & 1) or any(reach[c] for c in _bits(ch[v]))
    need = sum(1 << v for v in range(n) if reach[v])
    todo = need & ~IN
    ch = [c & need for c in ch]
    cost = compulsory(g)
    gates = gates or {}
    GATED = sum(1 << x for x in gates)

    def done(res_answer: str, states: int, sched=None) -> TightResult:
        return TightResult(res_answer, cost, M, states, time.perf_counter() - t0, sched)

    if M < g.min_M:
        return done("none", 0)
    if perms is None:
        perms = automorphisms(g, deadline) if symmetry else [tuple(range(n))]
    assert all(all(sorted(p[u] for u in g.parents[v]) == sorted(g.parents[p[v]]) for v in range(n)) for p in perms)
    tables = [mask_tables(p) for p in perms if p != tuple(range(n))]

    def canon(C: int) -> int:
        return least_image(tables, C)

    refuted: set[int] = set()
    states = 0
    # explicit stack of (C, live, order-so-far length, iterator over candidate moves)
    order: list[int] = []

    def step(C: int, live: int, v: int) -> tuple[int, int]:
        C2 = C | (1 << v)
        lv = live | (par[v] & need) | (1 << v)
        for u in _bits(lv):
            if not ch[u] & ~C2:
                lv &= ~(1 << u)
        return C2, lv

    def moves(C: int, live: int) -> list[int]:
        """Candidate moves from C: the eager move alone if there is one, else every ready vertex that fits."""
        ready = []
        free = M - live.bit_count()
        for v in _bits(todo & ~C):
            pv = par[v] & need
            if pv & ~(C | IN):
                continue
            if pv & GATED and any(not (C >> gates[x]) & 1 for x in _bits(pv & GATED)):
                continue
            new = (pv | (1 << v)) & ~live
            if new.bit_count() > free:
                continue
            if free >= 1 and not pv & ~live:
                if (OUT >> v) & 1 or any(not ch[p] & ~C & ~(1 << v) for p in _bits(pv)):
                    return [v]
            ready.append(v)
        return ready

    C0, live0 = 0, 0
    stack = [(C0, live0, iter(moves(C0, live0)))]
    found = False
    try:
        while stack:
            C, live, it = stack[-1]
            if C == todo:
                found = True
                break
            v = next(it, None)
            if v is None:
                refuted.add(canon(C))
                stack.pop()
                if order:
                    order.pop()
                continue
            C2, lv2 = step(C, live, v)
            if C2 != todo and canon(C2) in refuted:
                continue
            states += 1
            if states > max_states:
                return done("unknown", states)
            if not states & 1023:
                deadline.check()
            order.append(v)
            stack.append((C2, lv2, iter(moves(C2, lv2))))
    except TimeLimitReached:
        return done("unknown", states)
    if not found:
        return done("none", states)
    sched = _drop_schedule(g, [("compute", v) for v in order], par, ch, IN, OUT)
    rp = replay(g, M, sched, recompute=False)
    assert rp.io == cost, (rp, cost)
    return done("tight", states, tuple(sched))


# ----------------------------------------------------------------------------------------------------------
# one unit of slack: one input read twice


@dataclass(frozen=True)
class RereadResult:
    """``answer``: "found" (``schedule``, replayed on the original graph, costs inputs + outputs + 1), "none"
    (no one-shot calculation of that cost: with no tight one either, the one-shot OPT ≥ inputs + outputs + 2),
    or "unknown" (stopped). ``splits``: the split graphs searched."""

    answer: str
    cost: int
    M: int
    splits: int
    states: int
    seconds: float
    schedule: tuple[tuple[str, int], ...] | None = None


def split_input(g: Graph, x: int, group: frozenset[int]) -> Graph:
    """``g`` with input ``x`` duplicated: a new input x″ (index x + 1, later vertices shifted by one) feeds the
    children in ``group`` instead of x. A calculation of the split graph in which x and x″ are each read once
    is a calculation of ``g`` reading x twice (:func:`merge_schedule`)."""
    assert group and group <= set(g.children[x]) and group != set(g.children[x])
    new = [v if v <= x else v + 1 for v in range(g.n)]
    copy = g.labels[x] + "″"
    while copy in g.labels:
        copy += "″"
    labels = list(g.labels[: x + 1]) + [copy] + list(g.labels[x + 1:])
    parents: list[tuple[int, ...]] = [() for _ in range(g.n + 1)]
    for v, ps in enumerate(g.parents):
        parents[new[v]] = tuple(x + 1 if (p == x and v in group) else new[p] for p in ps)
    return Graph(f"{g.name} with {g.labels[x]} split", tuple(labels), tuple(parents), {})


def merge_schedule(g: Graph, x: int, moves) -> list[tuple[str, int]]:
    """Map a split graph's schedule back to ``g``: x″ is x; a copy read while the other is red is not read
    again, and x is deleted only when neither copy is red. If x is a non-input (a spill), it is written right
    after its computation, so that x″'s read is a read of x."""
    old = lambda w: w if w <= x else (x if w == x + 1 else w - 1)  # noqa: E731
    copies = 0
    out = []
    for op, w in moves:
        v = old(w)
        if v == x and op == "read":
            copies += 1
            if copies > 1:
                continue
        if v == x and op == "compute":
            copies += 1
            out += [(op, v), ("write", v)]
            continue
        if v == x and op == "delete":
            copies -= 1
            if copies > 0:
                continue
        out.append((op, v))
    return out


def split_perms(perms, x: int, group: frozenset[int]) -> list[tuple[int, ...]]:
    """The automorphisms of ``split_input(g, x, group)`` induced by those of g that fix x and map ``group``
    onto itself (each is re-verified by :func:`tight_one_shot`)."""
    new = lambda v: v if v <= x else v + 1  # noqa: E731
    out = []
    for p in perms:
        if p[x] != x or frozenset(p[c] for c in group) != group:
            continue
        q = [0] * (len(p) + 1)
        for v, w in enumerate(p):
            q[new(v)] = new(w)
        q[x + 1] = x + 1
        out.append(tuple(q))
    return out


def few_perms(perms: list[tuple[int, ...]], keep: int = 24) -> list[tuple[int, ...]]:
    """The ``keep`` automorphisms that move the fewest vertices (the identity first). Merging states under any
    subset of the automorphisms is sound (a state is merged only with an automorphic image of itself); on large
    groups (144 at N = 3, d = 3) a few cheap ones beat all of them, whose cost grows with the group."""
    return sorted(perms, key=lambda p: sum(1 for v, w in enumerate(p) if v != w))[:keep]


def input_orbits(g: Graph, perms) -> list[int]:
    """One input from each orbit of the automorphism group."""
    reps, seen = [], set()
    for x in g.inputs:
        if x in seen:
            continue
        reps.append(x)
        seen.update(p[x] for p in perms)
    return reps


def one_reread(g: Graph, M: int, *, symmetry: bool = True, deadline: Deadline = NO_DEADLINE,
               stop_at_first: bool = True) -> RereadResult:
    """Look for a one-shot calculation of cost inputs + outputs + 1 (one input read twice).

    Lemma (derived here, docs/pebbling.md §11): if no tight one-shot calculation exists, a one-shot calculation
    of cost inputs + outputs + 1 reads one input x twice and moves nothing else beyond the compulsory words (an
    extra write alone would be useless and droppable, and reading a non-input needs a write first); its two
    red intervals are disjoint (a read of a red value is droppable) and each contains the computation of some
    of x's children (else that read is droppable), each child exactly once. So it is a tight calculation of
    :func:`split_input` (g, x, children computed in the second interval). Splits of inputs in one orbit of the
    automorphism group give isomorphic graphs, so one input per orbit and every bipartition of its children
    (up to swapping the two parts) cover all cases: "none" on all of them is exhaustive.
    """
    t0 = time.perf_counter()
    cost = compulsory(g) + 1
    perms = automorphisms(g, deadline) if symmetry else [tuple(range(g.n))]
    splits = states = 0
    unknown = False
    for x in input_orbits(g, perms):
        rest = list(g.children[x])[1:]
        for mask in range(1, 1 << len(rest)):  # the part not containing the first child: nonempty, proper
            group = frozenset(c for t, c in enumerate(rest) if mask >> t & 1)
            if deadline.expired():
                return RereadResult("unknown", cost, M, splits, states, time.perf_counter() - t0)
            h = split_input(g, x, group)
            r = tight_one_shot(h, M, deadline=deadline, perms=split_perms(perms, x, group))
            splits += 1
            states += r.states
            if r.answer == "tight":
                moves = merge_schedule(g, x, r.schedule)
                rp = replay(g, M, moves, recompute=False)
                if rp.io == cost:  # else overlapping copies made it cheaper: a tight calculation (cannot happen
                    return RereadResult("found", cost, M, splits, states, time.perf_counter() - t0, tuple(moves))
                assert rp.io < cost
                return RereadResult("found", rp.io, M, splits, states, time.perf_counter() - t0, tuple(moves))
            unknown |= r.answer == "unknown"
    return RereadResult("unknown" if unknown else "none", cost, M, splits, states, time.perf_counter() - t0)


def one_spill(g: Graph, M: int, *, symmetry: bool = True, deadline: Deadline = NO_DEADLINE) -> RereadResult:
    """Look for a one-shot calculation of cost inputs + outputs + 2 that spills one computed non-output u
    (writes it once, reads it back once): a tight calculation of :func:`split_input` (g, u, part) in which the
    copy u″ is an input that may be read only after u is computed. Only an upper bound: "found" gives a
    replayed schedule; "none" proves nothing (two input re-reads are the other way to spend two words)."""
    t0 = time.perf_counter()
    cost = compulsory(g) + 2
    perms = automorphisms(g, deadline) if symmetry else [tuple(range(g.n))]
    outs = set(g.outputs)
    reps, seen = [], set()
    for u in range(g.n):
        if g.parents[u] and u not in outs and len(g.children[u]) > 1 and u not in seen:
            reps.append(u)
            seen.update(p[u] for p in perms)
    splits = states = 0
    for u in reps:
        rest = list(g.children[u])[1:]
        for mask in range(1, 1 << len(rest)):
            if deadline.expired():
                return RereadResult("unknown", cost, M, splits, states, time.perf_counter() - t0)
            group = frozenset(c for t, c in enumerate(rest) if mask >> t & 1)
            h = split_input(g, u, group)
            r = tight_one_shot(h, M, deadline=deadline, perms=split_perms(perms, u, group), gates={u + 1: u})
            splits += 1
            states += r.states
            if r.answer == "tight":
                moves = merge_schedule(g, u, r.schedule)
                rp = replay(g, M, moves, recompute=False)
                assert rp.io <= cost
                return RereadResult("found", rp.io, M, splits, states, time.perf_counter() - t0, tuple(moves))
    return RereadResult("unknown", cost, M, splits, states, time.perf_counter() - t0)


# ----------------------------------------------------------------------------------------------------------
# k units of slack spent on input re-reads, in one search


def reread_search(g: Graph, M: int, k: int, *, symmetry: bool = True, max_states: int = 20_000_000,
                  deadline: Deadline = NO_DEADLINE, perms: list[tuple[int, ...]] | None = None) -> RereadResult:
    """Look for a one-shot calculation of cost ≤ inputs + outputs + ``k`` that writes no non-output: computed
    values stay red through their last use; an input may be dropped while still needed (at most ``k`` times,
    each drop paid by one later re-read). Depth first over (computed set, red inputs) with a table of refuted
    states (kept with the most budget they were refuted with) merged under the automorphisms; a drop is tried
    only when some ready vertex does not fit (lazy eviction, docs/pebbling.md §3 reduction 2). The eager rule of
    :func:`tight_one_shot` is kept where it stays valid with drops: an output, or a vertex that is the last use
    of a *non-input* parent (never dropped here). "found": a replayed schedule; "none": no such calculation
    (with k = 1 this is exactly the search of :func:`one_reread`, Lemma 2; with k ≥ 2 spills are not covered,
    so "none" is no lower bound); "unknown": stopped."""
    t0 = time.perf_counter()
    n = g.n
    IN, OUT, par, ch = _masks(g)
    todo = (sum(1 << v for v in range(n)) & ~IN)
    base = compulsory(g)
    if perms is None:
        perms = automorphisms(g, deadline) if symmetry else [tuple(range(n))]
    tables = [mask_tables(p) for p in perms if p != tuple(range(n))]

    def canon(C: int, Rin: int) -> tuple[int, int]:
        best = (C, Rin)
        for tb in tables:
            x = apply_mask(tb, C)
            if x < best[0]:
                best = (x, apply_mask(tb, Rin))
            elif x == best[0]:
                y = apply_mask(tb, Rin)
                if y < best[1]:
                    best = (x, y)
        return best

    refuted: dict[tuple[int, int], int] = {}
    states = 0
    moves_out: list[tuple[str, int]] = []

    def compute(C: int, live: int, Rin: int, v: int) -> tuple[int, int, int]:
        C2 = C | (1 << v)
        Rin2 = Rin | (par[v] & IN)
        lv = live | (par[v] & ~IN)
        if not (OUT >> v) & 1:
            lv |= 1 << v
        for u in _bits(lv | Rin2):
            if not ch[u] & ~C2:
                lv &= ~(1 << u)
                Rin2 &= ~(1 << u)
        return C2, lv, Rin2

    def dfs(C: int, live: int, Rin: int, left: int) -> bool:
        nonlocal states
        if C == todo:
            return True
        key = canon(C, Rin)
        if refuted.get(key, -1) >= left:
            return False
        states += 1
        if states > max_states:
            raise TimeLimitReached
        if not states & 1023:
            deadline.check()
        used = (live | Rin).bit_count()
        fits, tight_fit, eager = [], False, False
        for v in _bits(todo & ~C):
            pv = par[v]
            if pv & ~IN & ~C:
                continue
            need = (pv & IN & ~Rin).bit_count()
            if used + need + 1 > M:
                tight_fit = True
                continue
            if not need and ((OUT >> v) & 1 or any(ch[p] & ~C == 1 << v for p in _bits(pv & ~IN))):
                fits, eager = [v], True  # without loss (docstring): the only move tried
                break
            fits.append(v)
        else:
            fits.sort(key=lambda v: -sum(1 for p in _bits(par[v]) if ch[p] & ~C == 1 << v))
        for v in fits:
            C2, lv2, Rin2 = compute(C, live, Rin, v)
            moves_out.append(("compute", v))
            if dfs(C2, lv2, Rin2, left):
                return True
            moves_out.pop()
        if left and tight_fit and not eager:
            for x in _bits(Rin):
                moves_out.append(("drop", x))
                if dfs(C, live, Rin & ~(1 << x), left - 1):
                    return True
                moves_out.pop()
        refuted[key] = max(refuted.get(key, -1), left)
        return False

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * n + 100))
    try:
        ok = dfs(0, 0, 0, k)
    except TimeLimitReached:
        return RereadResult("unknown", base + k, M, 0, states, time.perf_counter() - t0)
    finally:
        sys.setrecursionlimit(limit)  # restored: the process's limit is not ours to keep raised
    if not ok:
        return RereadResult("none", base + k, M, 0, states, time.perf_counter() - t0)
    sched = _drop_schedule(g, moves_out, par, ch, IN, OUT)
    rp = replay(g, M, sched, recompute=False)
    assert rp.io <= base + k, (rp, base, k)
    return RereadResult("found", rp.io, M, 0, states, time.perf_counter() - t0, tuple(sched))


def _drop_schedule(g: Graph, macro, par, ch, IN: int, OUT: int) -> list[tuple[str, int]]:
    """Plain moves of macro moves (compute / drop): read each input right before a use that finds it not red,
    delete each value right after its last use, write each output at once."""
    moves: list[tuple[str, int]] = []
    red = C = 0
    for op, v in macro:
        if op == "drop":
            moves.append(("delete", v))
            red &= ~(1 << v)
            continue
        for p in _bits(par[v] & ~red):
            assert (IN >> p) & 1
            moves.append(("read", p))
            red |= 1 << p
        moves.append(("compute", v))
        red |= 1 << v
        C |= 1 << v
        if (OUT >> v) & 1:
            moves += [("write", v), ("delete", v)]
            red &= ~(1 << v)
        for u in _bits(red):
            if not ch[u] & ~C:
                moves.append(("delete", u))
                red &= ~(1 << u)
    return moves
