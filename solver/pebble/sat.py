"""Time-indexed SAT/CP encoding of the red-blue pebble game with horizon T, for z3 and OR-Tools CP-SAT.

Kept for the measured comparison in docs/pebbling.md (the A* search of :mod:`attnio.solver.pebble.solve` is the
default engine because it was faster on every instance measured, and proves optimality without a horizon).

Variables, for steps t = 0..T: ``r[t][v]``, ``b[t][v]`` (red, blue at time t); for t < T the moves of step t:
``rd[t][v]`` (R1), ``wr[t][v]`` (R2), ``cp[t][v]`` (R3). Constraints::

    r[0] = ∅, b[0] = inputs, b[T] ⊇ outputs, Σ_v r[t][v] ≤ M for every t
    r[t+1][v] → r[t][v] ∨ cp[t][v] ∨ rd[t][v]        b[t+1][v] → b[t][v] ∨ wr[t][v]
    rd[t][v] → b[t][v] ∧ r[t+1][v]                   wr[t][v] → r[t][v]
    cp[t][v] → r[t+1][v] ∧ ⋀_{p parent} (r[t][p] ∧ r[t+1][p])     (one-shot: Σ_t cp[t][v] ≤ 1)
    minimise Σ rd + Σ wr

A step may hold several moves; it is played sequentially as: its writes, then its deletions
(r[t] ∖ r[t+1]: none of them is a parent of a compute of the step, those stay red), then its reads and
computes (every one of them stays red at t+1, so at most |r[t+1]| ≤ M red pebbles at any point). So each
solution is a legal calculation of the same cost, and :func:`solve_sat` replays it to make sure. What is
proved is the least cost over calculations of at most T steps: "optimal within horizon T", never more.

>>> from attnio.solver.pebble.graphs import reduction_tree
>>> r = solve_sat(reduction_tree(4), 3, horizon=12, engine="z3")
>>> (r.status, r.upper, r.horizon)
('optimal within horizon', 7, 12)
"""

from __future__ import annotations

import time

from attnio.core.errors import InvalidParameter, Unsupported
from attnio.core.validate import check_choice, check_int, check_real
from attnio.solver.pebble.game import replay
from attnio.solver.pebble.graphs import Graph
from attnio.solver.pebble.limits import MAX_SAT_CELLS, Deadline, TimeLimitReached
from attnio.solver.pebble.solve import PebbleResult

ENGINES = ("z3", "cpsat")


def solve_sat(
    g: Graph, M: int, *, horizon: int, engine: str = "z3", recompute: bool = True, time_limit_s: float = 60.0,
    deadline: Deadline | None = None,
) -> PebbleResult:
    """Least reads + writes over calculations of at most ``horizon`` parallel steps (see module docstring).

    The encoding has ``(horizon + 1) · vertices`` cells, at most :data:`MAX_SAT_CELLS`; ``deadline`` (default
    ``time_limit_s`` from now) is checked while it is built, and the solver gets the time left."""
    M = check_int("M", M, min=1)
    T = check_int("horizon", horizon, min=1)
    if (T + 1) * g.n > MAX_SAT_CELLS:
        raise InvalidParameter("horizon", T, f"(horizon + 1)·vertices <= {MAX_SAT_CELLS} for the time-indexed encodings ({g.name} has {g.n} vertices)")
    check_choice("engine", engine, ENGINES)
    check_real("time_limit_s", time_limit_s, gt=0)
    base = dict(graph=g.name, n=g.n, M=M, recompute=recompute, engine=f"{engine} (horizon {T})", horizon=T)
    t0 = time.perf_counter()
    dl = deadline if deadline is not None else Deadline(time_limit_s, t0)
    if M < g.min_M:
        return PebbleResult(status="infeasible", lower=None, upper=None, seconds=0.0, extra={"min_M": g.min_M}, **base)
    try:
        solved = _solve_z3(g, M, T, recompute, dl) if engine == "z3" else _solve_cpsat(g, M, T, recompute, dl)
    except TimeLimitReached:
        return PebbleResult(status="bounds", lower=g.trivial_io, upper=None, seconds=time.perf_counter() - t0,
                            note="stopped by the time limit while building the encoding", **base)
    seconds = time.perf_counter() - t0
    if solved is None:
        return PebbleResult(status="bounds", lower=g.trivial_io, upper=None, seconds=seconds,
                            note="no schedule within the horizon found before the time limit (or none exists)", **base)
    cost, moves, proved = solved
    rp = replay(g, M, moves, recompute=recompute)
    assert rp.io == cost, (rp, cost)
    if proved:
        return PebbleResult(status="optimal within horizon", lower=g.trivial_io, upper=cost, seconds=seconds,
                            schedule=tuple(moves), reads=rp.reads, writes=rp.writes, **base)
    return PebbleResult(status="bounds", lower=g.trivial_io, upper=cost, seconds=seconds, schedule=tuple(moves),
                        reads=rp.reads, writes=rp.writes, note="time limit hit before the optimum was proved", **base)


def _moves_from(g: Graph, T: int, val, deadline: Deadline) -> list[tuple[str, int]]:
    """Sequentialise the steps: writes, deletions, then reads and computes."""
    moves: list[tuple[str, int]] = []
    for t in range(T):
        deadline.check()
        for v in range(g.n):
            if val("wr", t, v):
                moves.append(("write", v))
        for v in range(g.n):
            if val("r", t, v) and not val("r", t + 1, v):
                moves.append(("delete", v))
        for v in range(g.n):
            if val("rd", t, v):
                moves.append(("read", v))
        for v in range(g.n):
            if val("cp", t, v):
                moves.append(("compute", v))
    return moves


def _constraints(g: Graph, M: int, T: int, recompute: bool, lib, deadline: Deadline):
    """Build the model through a tiny adapter ``lib`` (new_bool, implies_all(a, [b...]), implies_any(a, [b..]),
    fix(x, value), at_most(xs, k))."""
    IN, OUT = set(g.inputs), set(g.outputs)
    V = range(g.n)

    def layer(name: str, t: int) -> list:
        deadline.check()  # building the encoding is itself long for a large horizon
        return [lib.new_bool(f"{name}_{t}_{v}") for v in V]

    r = [layer("r", t) for t in range(T + 1)]
    b = [layer("b", t) for t in range(T + 1)]
    rd = [layer("rd", t) for t in range(T)]
    wr = [layer("wr", t) for t in range(T)]
    cp = [layer("cp", t) for t in range(T)]
    for v in V:
        lib.fix(r[0][v], False)
        lib.fix(b[0][v], v in IN)
        if v in OUT:
            lib.fix(b[T][v], True)
    for t in range(T + 1):
        deadline.check()
        lib.at_most([r[t][v] for v in V], M)
    for t in range(T):
        for v in V:
            if not v & 63:
                deadline.check()
            lib.implies_any(r[t + 1][v], [r[t][v], cp[t][v], rd[t][v]])
            lib.implies_any(b[t + 1][v], [b[t][v], wr[t][v]])
            lib.implies_all(rd[t][v], [b[t][v], r[t + 1][v]])
            lib.implies_all(wr[t][v], [r[t][v]])
            if v in IN:
                lib.fix(cp[t][v], False)
            else:
                lib.implies_all(cp[t][v], [r[t + 1][v]] + [r[t][p] for p in g.parents[v]] + [r[t + 1][p] for p in g.parents[v]])
    if not recompute:
        for v in V:
            deadline.check()
            if v not in IN:
                lib.at_most([cp[t][v] for t in range(T)], 1)
    cost_terms = [x for t in range(T) for x in rd[t] + wr[t]]
    return {"r": r, "b": b, "rd": rd, "wr": wr, "cp": cp}, cost_terms


def _solve_z3(g: Graph, M: int, T: int, recompute: bool, deadline: Deadline):
    import z3

    opt = z3.Optimize()

    class Lib:
        new_bool = staticmethod(z3.Bool)

        @staticmethod
        def fix(x, value):
            opt.add(x if value else z3.Not(x))

        @staticmethod
        def implies_all(a, bs):
            for c in bs:
                opt.add(z3.Implies(a, c))

        @staticmethod
        def implies_any(a, bs):
            opt.add(z3.Implies(a, z3.Or(*bs)))

        @staticmethod
        def at_most(xs, k):
            opt.add(z3.PbLe([(x, 1) for x in xs], k))

    vars_, cost_terms = _constraints(g, M, T, recompute, Lib, deadline)
    opt.minimize(z3.Sum([z3.If(x, 1, 0) for x in cost_terms]))
    left = deadline.remaining()
    if left is not None:
        deadline.check()
        opt.set("timeout", max(1, int(left * 1000)))
    res = opt.check()
    # Optimize.check answers sat only once the optimum is proved; unknown on timeout (maybe with a model)
    if res == z3.sat:
        proved = True
    elif res == z3.unknown:
        proved = False
        try:
            model = opt.model()
        except z3.Z3Exception:
            return None
        if model is None or len(model) == 0:
            return None
    else:
        return None
    model = opt.model()

    def val(kind, t, v):
        return z3.is_true(model.eval(vars_[kind][t][v], model_completion=True))

    moves = _moves_from(g, T, val, deadline)
    cost = sum(1 for op, _ in moves if op in ("read", "write"))  # one move per true rd/wr variable
    return cost, moves, proved


def _solve_cpsat(g: Graph, M: int, T: int, recompute: bool, deadline: Deadline):
    try:
        from ortools.sat.python import cp_model
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise Unsupported("engine=cpsat needs OR-Tools (pip install ortools)") from e
    model = cp_model.CpModel()

    class Lib:
        new_bool = staticmethod(model.NewBoolVar)

        @staticmethod
        def fix(x, value):
            model.Add(x == int(value))

        @staticmethod
        def implies_all(a, bs):
            for c in bs:
                model.AddImplication(a, c)

        @staticmethod
        def implies_any(a, bs):
            model.AddBoolOr(bs).OnlyEnforceIf(a)

        @staticmethod
        def at_most(xs, k):
            model.Add(sum(xs) <= k)

    vars_, cost_terms = _constraints(g, M, T, recompute, Lib, deadline)
    model.Minimize(sum(cost_terms))
    solver = cp_model.CpSolver()
    left = deadline.remaining()
    if left is not None:
        deadline.check()
        solver.parameters.max_time_in_seconds = max(0.001, left)
    solver.parameters.num_workers = 2
    status = solver.Solve(model)
    if status not in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        return None

    def val(kind, t, v):
        return bool(solver.Value(vars_[kind][t][v]))

    moves = _moves_from(g, T, val, deadline)
    cost = int(round(solver.ObjectiveValue()))
    return cost, moves, status == cp_model.OPTIMAL


