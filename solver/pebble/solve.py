"""Exact minimum I/O of the red-blue pebble game with at most M red pebbles: A* over configurations.

The default engine is a dedicated exact search (docs/pebbling.md says why it beat z3 and CP-SAT). A state is
a configuration (red set R, blue set B) plus, in the one-shot variant (no recomputation), the set C of
vertices already computed. Moves cost 1 (R1 read, R2 write) or 0 (R3 compute, R4 delete). The search is A*
with a consistent heuristic, so the first goal popped is optimal over *all* complete calculations: no
horizon, no bound on the schedule's length. Results are "optimal" outright, or, when a state or time limit
stops the search, the bounds [lower, upper] (lower = least f on the open list, upper = the best schedule in
hand), never called optimal.

Reductions (each is a schedule transformation that never raises the cost, proved in docs/pebbling.md):

1. Blue pebbles are never removed (removal is free and a blue pebble never blocks anything).
2. Lazy deletion: a red pebble is removed only when a placement needs its slot (or the vertex is dead), and a
   non-output vertex is written only right before its red pebble is removed ("evict u, spilling it or not").
3. Dead vertices (every output they reach is already blue) lose their red pebble at once, and their blue
   pebble is forgotten.
4. An output (a sink) is written as soon as it is computed, and its red pebble removed.
5. A vertex that can be computed is never read instead (computing is free and leads to the same state).

Heuristic h(R, B) = (outputs not yet blue) + (inputs forced to be read): an input x not red is *forced* if a
path from x to an unfinished output runs through vertices that are neither red nor blue, since each of them
can only be computed and so x must be made red, which only R1 does. h is consistent (docs/pebbling.md).
The same backward walk detects dead ends of the one-shot game (a needed vertex already computed, now
neither red nor blue).

>>> from attnio.solver.pebble.graphs import chain, reduction_tree
>>> solve(chain(5), 2).opt
2
>>> r = solve(reduction_tree(4), 3)
>>> (r.status, r.opt, r.reads, r.writes)
('optimal', 7, 5, 2)
>>> solve(reduction_tree(4), 4).opt
5
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_int
from attnio.solver.pebble.frontier import NEVER, Frontier
from attnio.solver.pebble.game import replay
from attnio.solver.pebble.graphs import Graph
from attnio.solver.pebble.limits import NO_DEADLINE, Deadline, TimeLimitReached
from attnio.solver.pebble.symmetry import apply_mask, automorphisms, mask_tables, real_frames
from attnio.solver.pebble.tight import compulsory

STATUSES = ("optimal", "optimal within horizon", "bounds", "infeasible")


@dataclass(frozen=True)
class PebbleResult:
    """What the solver proved.

    - ``status == "optimal"``: ``opt`` is the minimum over all complete calculations (``lower == upper``).
    - ``"optimal within horizon"``: the minimum over calculations of at most ``horizon`` steps (SAT engines);
      ``upper`` is a real schedule's cost, ``lower`` only a proved lower bound (often the trivial one).
    - ``"bounds"``: the search stopped early: OPT ∈ [lower, upper].
    - ``"infeasible"``: M is below the least feasible value (max in-degree + 1).
    ``schedule`` is the best schedule found (replayed by :func:`solver.pebble.game.replay`).
    """

    graph: str
    n: int
    M: int
    recompute: bool
    status: str
    lower: int | None
    upper: int | None
    engine: str
    seconds: float
    states: int = 0
    horizon: int | None = None
    schedule: tuple[tuple[str, int], ...] | None = None
    reads: int | None = None
    writes: int | None = None
    note: str = ""
    extra: dict = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        assert self.status in STATUSES, self.status
        if self.status == "optimal":
            assert self.lower == self.upper is not None

    @property
    def opt(self) -> int | None:
        """OPT where it is proved outright, else None."""
        return self.upper if self.status == "optimal" else None

    @property
    def proved(self) -> str:
        if self.status == "optimal":
            return f"OPT = {self.upper}, proved optimal over all complete calculations ({self.engine})"
        if self.status == "optimal within horizon":
            return (
                f"least cost over calculations of at most {self.horizon} steps = {self.upper}; "
                f"over all calculations only OPT ∈ [{self.lower}, {self.upper}] is proved ({self.engine})"
            )
        if self.status == "bounds" and self.upper is None:
            return f"OPT ≥ {self.lower} (stopped before any schedule was found; not proved optimal) ({self.engine})"
        if self.status == "bounds":
            return f"OPT ∈ [{self.lower}, {self.upper}] (search stopped early; not proved optimal) ({self.engine})"
        return f"infeasible: M={self.M} < {self.extra.get('min_M')} (max in-degree + 1)"

    def as_dict(self) -> dict:
        return {
            "graph": self.graph,
            "vertices": self.n,
            "M": self.M,
            "recompute": self.recompute,
            "status": self.status,
            "opt": self.opt,
            "lower": self.lower,
            "upper": self.upper,
            "proved": self.proved,
            "horizon": self.horizon,
            "schedule_moves": len(self.schedule) if self.schedule is not None else None,
            "reads": self.reads,
            "writes": self.writes,
            "engine": self.engine,
            "states": self.states,
            "seconds": round(self.seconds, 4),
            "note": self.note,
        }


# ----------------------------------------------------------------------------------------------------------
# the compiled graph: bitmasks


class _Compiled:
    def __init__(self, g: Graph, deadline: Deadline = NO_DEADLINE) -> None:
        self.g = g
        self.n = g.n
        self.par = [sum(1 << p for p in ps) for ps in g.parents]
        self.parlist = [tuple(ps) for ps in g.parents]
        self.IN = sum(1 << v for v in g.inputs)
        self.OUT = sum(1 << v for v in g.outputs)
        ch = g.children
        desc = [0] * g.n  # outputs reachable from v (v included if it is an output)
        for v in reversed(range(g.n)):
            if not v & 255:
                deadline.check()
            m = (1 << v) if (self.OUT >> v) & 1 else 0
            for c in ch[v]:
                m |= desc[c]
            desc[v] = m
        self.desc_out = desc

    def live(self, missing: int) -> int:
        """Vertices that reach an output not yet blue."""
        m = 0
        for v, dm in enumerate(self.desc_out):
            if dm & missing:
                m |= 1 << v
        return m

    def forced(self, R: int, B: int, C: int | None, missing: int) -> int:
        """Number of inputs that must still be read, or -1 if (one-shot) a needed vertex is lost.

        Backward breadth-first walk from the unfinished outputs through vertices that are neither red nor
        blue (they can only be computed); the inputs it meets (not red) are forced."""
        IN, par = self.IN, self.par
        seen = frontier = missing & ~R
        forced = 0
        while frontier:
            acc = 0
            while frontier:
                low = frontier & -frontier
                acc |= par[low.bit_length() - 1]
                frontier ^= low
            new = acc & ~seen & ~R
            seen |= new
            forced |= new & IN
            frontier = new & ~IN & ~B
            if C is not None and frontier & C:
                return -1  # computed once already, now neither red nor blue: lost
        return forced.bit_count()


def _bits(m: int) -> list[int]:
    out = []
    while m:
        low = m & -m
        out.append(low.bit_length() - 1)
        m ^= low
    return out


# ----------------------------------------------------------------------------------------------------------
# an upper bound: a greedy one-shot schedule (valid with and without recomputation)


def greedy_schedule(
    g: Graph, M: int, order: list[int] | None = None, deadline: Deadline = NO_DEADLINE
) -> list[tuple[str, int]]:
    """Compute the non-inputs in ``order`` (default: depth-first from each output), each once; make room by
    evicting the red vertex whose next use is farthest (Belady), writing it first if it is used later and
    not yet blue. Outputs are written at once. Raises InvalidParameter if M < max in-degree + 1, and
    :class:`TimeLimitReached` when ``deadline`` passes."""
    if M < g.min_M:
        raise InvalidParameter("M", M, f"M >= {g.min_M} for {g.name} (max in-degree + 1)")
    order = order if order is not None else dfs_order(g)
    uses: dict[int, list[int]] = {v: [] for v in range(g.n)}
    for t, v in enumerate(order):
        for p in g.parents[v]:
            uses[p].append(t)
    outputs = set(g.outputs)
    red: set[int] = set()
    blue: set[int] = set(g.inputs)
    moves: list[tuple[str, int]] = []

    def next_use(u: int, t: int) -> float:
        for s in uses[u]:
            if s >= t:
                return s
        return float("inf")

    def make_room(t: int, keep: set[int]) -> None:
        while len(red) >= M:
            cand = [u for u in red if u not in keep]
            assert cand, "M below max in-degree + 1"
            u = max(cand, key=lambda u: (next_use(u, t), u))
            if next_use(u, t) != float("inf") and u not in blue:
                moves.append(("write", u))
                blue.add(u)
            moves.append(("delete", u))
            red.discard(u)

    for t, v in enumerate(order):
        deadline.check()
        keep = set(g.parents[v])
        for p in g.parents[v]:
            if p not in red:
                make_room(t, keep)
                assert p in blue, "greedy order lost a value"
                moves.append(("read", p))
                red.add(p)
        make_room(t, keep)
        moves.append(("compute", v))
        red.add(v)
        for u in [u for u in red if next_use(u, t + 1) == float("inf") and u not in outputs]:
            moves.append(("delete", u))
            red.discard(u)
        if v in outputs:
            moves.append(("write", v))
            blue.add(v)
            moves.append(("delete", v))
            red.discard(v)
    return moves


def dfs_order(g: Graph) -> list[int]:
    """Non-input vertices in depth-first post-order from the outputs, in output order."""
    seen: set[int] = set()
    order: list[int] = []

    def visit(v: int) -> None:
        stack = [(v, 0)]
        while stack:
            u, k = stack.pop()
            if k == 0:
                if u in seen:
                    continue
                seen.add(u)
            ps = g.parents[u]
            if k < len(ps):
                stack.append((u, k + 1))
                if ps[k] not in seen:
                    stack.append((ps[k], 0))
            elif ps:
                order.append(u)

    for o in g.outputs:
        visit(o)
    return order


def best_greedy(g: Graph, M: int, deadline: Deadline = NO_DEADLINE) -> tuple[int, list[tuple[str, int]]]:
    """The cheaper of the greedy schedules in depth-first and in plain topological order (replayed).
    When ``deadline`` passes after the first is built, that one is returned."""
    best = None
    for order in (dfs_order(g), [v for v in range(g.n) if g.parents[v]]):
        if best is not None and deadline.expired():
            break
        moves = greedy_schedule(g, M, order, deadline)
        cost = replay(g, M, moves, recompute=False).io
        if best is None or cost < best[0]:
            best = (cost, moves)
    assert best is not None
    return best


# ----------------------------------------------------------------------------------------------------------
# A*


def solve(
    g: Graph,
    M: int,
    *,
    recompute: bool = True,
    max_states: int = 5_000_000,
    time_limit_s: float | None = 60.0,
    symmetry: bool = True,
    deadline: Deadline | None = None,
    tight: bool = True,
) -> PebbleResult:
    """Least reads + writes to pebble ``g`` with at most ``M`` red pebbles (A*; see the module docstring).

    ``recompute=False`` is the one-shot game (each vertex computed at most once). The search stops after
    ``max_states`` expanded states or ``time_limit_s`` seconds and then reports bounds, never "optimal".
    With ``symmetry`` configurations are merged under the graph's verified automorphisms
    (:mod:`attnio.solver.pebble.symmetry`).

    ``deadline`` (default: ``time_limit_s`` from now) is checked in every phase (greedy schedule, automorphisms,
    compilation, each expansion and each generated state): past it the bounds in hand are reported.

    With ``tight`` the one-shot game first runs the zero-slack searches of :mod:`attnio.solver.pebble.tight`
    (three quarters of the time limit): is there a calculation of cost T = inputs + outputs ("tight": optimal at once)? If
    none, OPT ≥ T + 1; is there one of cost T + 1 (one input read twice, ``reread_search(k=1)``: found, optimal)?
    If none, OPT ≥ T + 2, and two re-reads or one spill are tried for a schedule of cost T + 2. A* then runs as usual on what is
    left and reports max(least f on the open list, L), L the proved bound.
    """
    M = check_int("M", M, min=1)
    max_states = check_int("max_states", max_states, min=1)
    t0 = time.perf_counter()
    dl = deadline if deadline is not None else Deadline(time_limit_s, t0)
    base = dict(graph=g.name, n=g.n, M=M, recompute=recompute, engine="astar")
    if M < g.min_M:
        return PebbleResult(status="infeasible", lower=None, upper=None, seconds=0.0, extra={"min_M": g.min_M}, **base)
    try:
        ub, ub_moves = best_greedy(g, M, dl)
    except TimeLimitReached:
        return PebbleResult(status="bounds", lower=g.trivial_io, upper=None, seconds=time.perf_counter() - t0,
                            note="stopped by the time limit before the greedy schedule was complete; lower bound: inputs + outputs", **base)
    ub_source = "the greedy schedule"
    if recompute:
        # every one-shot calculation is a calculation: the one-shot optimum (a much smaller search) bounds OPT
        budget = None if time_limit_s is None else time_limit_s / 4
        sub = dl.within(budget)
        one = solve(g, M, recompute=False, max_states=max(1, max_states // 4), time_limit_s=budget, symmetry=symmetry, deadline=sub)
        if one.upper is not None and one.upper < ub:
            ub, ub_moves, ub_source = one.upper, list(one.schedule), f"the one-shot search ({one.status})"
    # a proved lower bound on OPT: every input that is not an output read, every output that is not an input
    # written (= inputs + outputs unless a vertex is isolated)
    L = compulsory(g)
    L_note = ""
    if tight and not recompute and ub > L:
        from attnio.solver.pebble import tight as zs

        sub = dl.within(None if time_limit_s is None else time_limit_s * 3 / 4)
        zperms = zs.few_perms(automorphisms(g, sub) if symmetry else [tuple(range(g.n))])
        tr = zs.tight_one_shot(g, M, deadline=sub, perms=zperms)
        L_states = tr.states
        if tr.answer == "tight":
            ub, ub_moves, ub_source = tr.cost, list(tr.schedule), "the zero-slack search (a tight ordering)"
        elif tr.answer == "none":
            L, L_note = max(L, tr.lower), "no tight calculation exists (exhaustive zero-slack search)"
            rr = zs.reread_search(g, M, 1, deadline=sub, perms=zperms)  # = one_reread, faster
            L_states += rr.states
            if rr.answer == "found" and rr.cost < ub:
                ub, ub_moves, ub_source = rr.cost, list(rr.schedule), "the one-re-read search"
            elif rr.answer == "none":
                L, L_note = max(L, rr.cost + 1), L_note + " and none with one input read twice (exhaustive re-read search)"
                for search in (lambda *a, **k: zs.reread_search(*a, 2, perms=zperms, **k), zs.one_spill):
                    if ub <= L:
                        break
                    up = search(g, M, symmetry=symmetry, deadline=sub)
                    L_states += up.states
                    if up.answer == "found" and up.cost < ub:
                        ub, ub_moves, ub_source = up.cost, list(up.schedule), "a zero-slack search with two units of slack"
            L_note = f"; {L_note}, so OPT ≥ {L}"
        if ub <= L:
            rp = replay(g, M, ub_moves, recompute=False)
            assert rp.io == ub >= L
            return PebbleResult(
                status="optimal", lower=ub, upper=ub, seconds=time.perf_counter() - t0, states=L_states,
                schedule=tuple(ub_moves), reads=rp.reads, writes=rp.writes,
                note=f"{ub_source} meets the lower bound {L}{L_note or ' (inputs + outputs)'}", **base,
            )
    try:
        cg = _Compiled(g, dl)
    except TimeLimitReached:
        rp = replay(g, M, ub_moves, recompute=False)
        return PebbleResult(status="bounds", lower=min(L, rp.io), upper=rp.io, seconds=time.perf_counter() - t0,
                            schedule=tuple(ub_moves), reads=rp.reads, writes=rp.writes,
                            note=f"stopped by the time limit before the search began; upper bound from {ub_source}{L_note}", **base)
    IN, OUT, par = cg.IN, cg.OUT, cg.par
    one_shot = not recompute

    # state: (R, B, C) as bitmasks; C = computed vertices (one-shot) or 0; all three masked to the vertices
    # that can still matter (reduction 3)
    live_of: dict[int, int] = {}

    def live_for(missing: int) -> int:
        lv = live_of.get(missing)
        if lv is None:
            lv = live_of[missing] = cg.live(missing)
        return lv

    chl = g.children

    def canon(R: int, B: int, C: int) -> tuple[int, int, int]:
        live = live_for(OUT & ~B)
        if one_shot:
            live = useful(live, OUT & ~B, C)
        return R & live, B & (live | OUT), C & (live | OUT)

    useful_of: dict[tuple[int, int], int] = {}

    def useful(live: int, missing: int, C: int) -> int:
        """One-shot liveness: v is useful if it is an unfinished output or has a useful child not yet
        computed (a computed child can never be computed again, so it never needs v)."""
        U = useful_of.get((missing, C))
        if U is None:
            U = useful_of[missing, C] = _useful(live, missing, C)
        return U

    def _useful(live: int, missing: int, C: int) -> int:
        U = missing
        for v in reversed(range(g.n)):
            if not (live >> v) & 1 or (U >> v) & 1:
                continue
            for c in chl[v]:
                if (U >> c) & 1 and not (C >> c) & 1:
                    U |= 1 << v
                    break
        return U

    h_of: dict[tuple[int, int, int], int] = {}

    def heuristic(key: tuple[int, int, int]) -> int:
        h = h_of.get(key)
        if h is None:
            R, B, C = key
            missing = OUT & ~B
            f = cg.forced(R, B, C if one_shot else None, missing)
            h = h_of[key] = -1 if f < 0 else popcount(missing) + f
        return h

    popcount = int.bit_count
    key0 = canon(0, IN, 0)  # inputs start blue (this configuration is invariant under every automorphism)
    h0 = heuristic(key0)
    assert h0 >= 0
    if ub <= h0:
        # a schedule in hand meets the lower bound h(start) (every input read, every output written): optimal
        rp = replay(g, M, ub_moves, recompute=False)
        assert rp.io == ub == h0
        return PebbleResult(
            status="optimal", lower=ub, upper=ub, seconds=time.perf_counter() - t0, states=0,
            schedule=tuple(ub_moves), reads=rp.reads, writes=rp.writes,
            note=f"{ub_source} meets the lower bound h(start) = {h0} (inputs + outputs): no search needed", **base,
        )
    frontier = Frontier(key0, h0)
    generated = 0
    goal = None
    children = [sum(1 << c for c in cs) for cs in g.children]

    perms = automorphisms(g, dl) if symmetry else [tuple(range(g.n))]
    tables = []
    for p in perms[1:]:
        if dl.expired():  # a subset of verified automorphisms still merges only equivalent configurations
            perms = perms[: len(tables) + 1]
            break
        tables.append(mask_tables(p))

    def sym_canon(raw: tuple[int, int, int]) -> tuple[tuple[int, int, int], int]:
        """Least image of the configuration under the automorphisms, and which one gave it."""
        best, which = raw, 0
        R, B, C = raw
        for t, tb in enumerate(tables, 1):
            r = apply_mask(tb, R)
            if r > best[0]:
                continue  # lexicographic order: decided by R alone
            img = (r, apply_mask(tb, B), apply_mask(tb, C))
            if img < best:
                best, which = img, t
        return best, which

    def push(raw: tuple[int, int, int], gn: int, key: tuple[int, int, int], move: tuple) -> None:
        nonlocal generated
        generated += 1
        dl.check()  # one expansion of a large graph generates thousands of states
        nkey, sigma = sym_canon(raw) if tables else (raw, 0)
        if gn >= frontier.best.get(nkey, NEVER):
            return
        hn = heuristic(nkey)
        if hn < 0 or gn + hn > ub:
            return
        frontier.push(nkey, gn, hn, (key, move, sigma))

    def _expand_state(R: int, B: int, C: int, gcost: int, key: tuple[int, int, int], missing: int) -> None:
        live = live_for(missing) if not one_shot else useful(live_for(missing), missing, C)
        if popcount(R) >= M:
            # full: evict one red vertex, writing it first (spill) or not (reduction 2)
            for u in _bits(R):
                bit = 1 << u
                push(canon(R & ~bit, B, C), gcost, key, ("evict", u))
                if not B & bit:
                    push(canon(R & ~bit, B | bit, C), gcost + 1, key, ("spill", u))
            return
        notred = live & ~R
        for v in _bits(notred):
            bit = 1 << v
            if not IN & bit and (par[v] & R) == par[v]:
                if one_shot and C & bit:
                    continue
                Cn = C | bit if one_shot else 0
                if OUT & bit:  # output: compute, write, delete (reduction 4)
                    push(canon(R, B | bit, Cn), gcost + 1, key, ("compute_out", v))
                else:
                    push(canon(R | bit, B, Cn), gcost, key, ("compute", v))
            elif IN & bit or B & bit:
                # read only for a child that is live and not red (reads postponed to their first use)
                if children[v] & notred & ~C:
                    push(canon(R | bit, B, C), gcost + 1, key, ("read", v))

    while (top := frontier.pop()) is not None:
        key, gcost = top
        R, B, C = key
        missing = OUT & ~B
        if not missing:
            goal = (key, gcost)
            break
        if not frontier.expand(max_states, dl):
            break
        try:
            _expand_state(R, B, C, gcost, key, missing)
        except TimeLimitReached:
            # children pushed so far have f >= this state's f (consistent heuristic): putting it back keeps
            # the least f on the open list a lower bound
            frontier.put_back()
            frontier.stopped = "time"
            break
    expanded, stopped = frontier.expanded, frontier.stopped

    seconds = time.perf_counter() - t0
    if goal is not None:
        key, cost = goal
        # map the canonical path back to one real path: real move i = τ_{i-1}(m_i), τ_i = τ_{i-1} ∘ σ_i⁻¹
        macro = [(op, tau[v]) for (op, v), tau in real_frames(frontier.path(key), perms)]
        moves = _expand(canon, macro)
        rp = replay(g, M, moves, recompute=recompute)
        assert rp.io == cost >= L, (rp, cost, L)  # a schedule below a proved lower bound would be a bug
        return PebbleResult(
            status="optimal", lower=cost, upper=cost, seconds=seconds, states=expanded, extra={'generated': generated}, schedule=tuple(moves),
            reads=rp.reads, writes=rp.writes, note=L_note.removeprefix("; "), **base,
        )
    rp = replay(g, M, ub_moves, recompute=False)
    assert rp.io == ub
    if stopped is None:
        # the search excluded every calculation cheaper than this schedule: it is optimal
        return PebbleResult(
            status="optimal", lower=rp.io, upper=rp.io, seconds=seconds, states=expanded, extra={'generated': generated},
            schedule=tuple(ub_moves), reads=rp.reads, writes=rp.writes,
            note=f"no schedule cheaper than {ub_source} exists (search exhausted below it){L_note}", **base,
        )
    lower = max(frontier.least_f(rp.io), L)
    if lower >= rp.io:  # the proved lower bound meets the schedule in hand
        return PebbleResult(
            status="optimal", lower=rp.io, upper=rp.io, seconds=seconds, states=expanded,
            schedule=tuple(ub_moves), reads=rp.reads, writes=rp.writes,
            note=f"stopped by the {stopped} limit, but the least f on the open list meets {ub_source}{L_note}", **base,
        )
    return PebbleResult(
        status="bounds", lower=min(lower, rp.io), upper=rp.io, seconds=seconds, states=expanded, extra={'generated': generated},
        schedule=tuple(ub_moves), reads=rp.reads, writes=rp.writes,
        note=f"stopped by the {stopped} limit; upper bound from {ub_source}{L_note}", **base,
    )


def _expand(canon, macro: list[tuple]) -> list[tuple[str, int]]:
    """Turn the search's macro moves into plain game moves, re-deriving the free deletions of dead vertices."""
    R = B = C = 0
    moves: list[tuple[str, int]] = []
    for op, v in macro:
        if op == "spill":
            moves += [("write", v), ("delete", v)]
            B |= 1 << v
            R &= ~(1 << v)
        elif op == "evict":
            moves.append(("delete", v))
            R &= ~(1 << v)
        elif op == "read":
            moves.append(("read", v))
            R |= 1 << v
        elif op == "compute":
            moves.append(("compute", v))
            R |= 1 << v
            C |= 1 << v
        else:
            moves += [("compute", v), ("write", v), ("delete", v)]
            B |= 1 << v
            C |= 1 << v
        Rc, _, _ = canon(R, B, C)
        for w in _bits(R & ~Rc):
            moves.append(("delete", w))
        R = Rc
    return moves
