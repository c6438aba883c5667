"""The red-blue pebble game as a time-indexed CP-SAT model (OR-Tools), hinted, with horizon-sufficiency.

Variables, for steps t = 0..T: ``r[t][v]``, ``b[t][v]`` (red, blue before step t); for t < T the moves of
step t: ``rd[t][v]`` (R1), ``wr[t][v]`` (R2), ``cp[t][v]`` (R3). A step is played as: its writes, then its
deletions (``r[t] ∖ r[t+1]``), then its reads and computes, all of which stay red at t+1, so no moment holds
more than ``max(|r[t]|, |r[t+1]|) ≤ M`` red pebbles (the encoding of :mod:`attnio.solver.pebble.sat`).

Added to that encoding, each a schedule transformation that never raises the cost (docs/pebbling.md §4):

- *no useless move*: a read or compute places a pebble on a vertex not red, a write on a vertex not blue;
- *blue pebbles persist* (``b[t] ≤ b[t+1]``: removing one is free and never helps);
- *steps are packed*: a step without moves is followed only by steps without moves (symmetry breaking:
  idle steps anywhere else are removed);
- *redundant cuts*: every non-input is computed at least once (each vertex reaches an output), every input
  is read and every output written at least once; one-shot: each non-input computed exactly once;
- the cost is at least ``lower`` when the caller passes a lower bound proved elsewhere (A*'s least f).

**Hints.** A schedule in hand (the greedy one, A*'s, an attnio schedule's) is laid out one move per step,
its deletions folded into the next step, and given to CP-SAT as a complete hint.

**What is certified** (never more): CP-SAT's answer is the least cost over calculations of at most T steps.

- *One-shot game*: a calculation of cost ≤ U has at most U reads and writes and at most (n − inputs)
  computes, so it fits in T_suff = (n − inputs) + U steps (one move a step; deletions ride along). With a
  hint of cost U and T ≥ T_suff, the optimum within T is the global one-shot optimum, and CP-SAT's proved
  objective bound is a global lower bound (if a cheaper calculation existed it would fit). Status
  ``optimal`` when CP-SAT closes the gap, else ``bounds`` with its proved bound.
- *Recomputation allowed*: no a-priori bound on the length of an optimal calculation is known here, so the
  horizon result certifies nothing below the upper bound. The lower side is ``lower`` (proved elsewhere:
  A*'s least f, the trivial bound); status ``optimal`` only where it meets the schedule found.

OR-Tools is optional (``pip install -e '.[pebble]'``): without it :func:`solve_cpsat` raises Unsupported and
its tests (tests/test_pebble_benchmark.py: the 7-vertex trees certified and equal to brute force) skip.
"""

from __future__ import annotations

import time

from attnio.core.errors import InvalidParameter, Unsupported
from attnio.core.validate import check_int, check_real
from attnio.solver.pebble.game import replay
from attnio.solver.pebble.graphs import Graph
from attnio.solver.pebble.limits import MAX_SAT_CELLS, NO_DEADLINE, Deadline
from attnio.solver.pebble.solve import PebbleResult, best_greedy


def available() -> bool:
    """Whether OR-Tools is installed (the benchmark and its tests skip without it)."""
    try:
        import ortools.sat.python.cp_model  # noqa: F401
    except ImportError:
        return False
    return True


def sufficient_horizon(g: Graph, upper: int) -> int:
    """T_suff = (n − inputs) + upper: every one-shot calculation of cost ≤ ``upper`` fits in that many steps.

    >>> from attnio.solver.pebble.graphs import attention
    >>> sufficient_horizon(attention(2, 1), 24)
    42
    """
    return g.n - len(g.inputs) + upper


def steps_of(g: Graph, moves) -> list[tuple[frozenset, frozenset, tuple[str, int]]]:
    """A schedule laid out one move per step: ``(red before, blue before, move)`` per step, deletions of
    red and blue pebbles folded into the step of the next move; a final entry ``(red, blue, None)``."""
    red: set[int] = set()
    blue: set[int] = set(g.inputs)
    out = []
    start_red, start_blue = frozenset(red), frozenset(blue)
    for op, v in moves:
        if op == "delete":
            red.discard(v)
            continue
        if op == "delete_blue":
            continue  # blue pebbles persist in the model (never worse)
        out.append((start_red, start_blue, (op, v)))
        if op in ("read", "compute"):
            red.add(v)
        elif op == "write":
            blue.add(v)
        start_red, start_blue = frozenset(red), frozenset(blue)
    out.append((start_red, start_blue, None))
    return out


def solve_cpsat(
    g: Graph,
    M: int,
    *,
    recompute: bool = True,
    time_limit_s: float = 60.0,
    hint: list[tuple[str, int]] | None = None,
    horizon: int | None = None,
    lower: int | None = None,
    workers: int = 2,
    deadline: Deadline | None = None,
) -> PebbleResult:
    """Least reads + writes by CP-SAT (module docstring says what is certified).

    ``hint``: a legal schedule (default: the better greedy schedule); ``horizon`` (default: T_suff of the hint
    one-shot, else the hint's length + (n − inputs)); ``lower``: a lower bound on OPT proved elsewhere."""
    if not available():
        raise Unsupported("the CP-SAT engine needs OR-Tools (pip install -e '.[pebble]')")
    from ortools.sat.python import cp_model

    M = check_int("M", M, min=1)
    workers = check_int("workers", workers, min=1)
    check_real("time_limit_s", time_limit_s, gt=0)
    t0 = time.perf_counter()
    dl = deadline if deadline is not None else Deadline(time_limit_s, t0)
    base = dict(graph=g.name, n=g.n, M=M, recompute=recompute, engine="cpsat")
    if M < g.min_M:
        return PebbleResult(status="infeasible", lower=None, upper=None, seconds=0.0, extra={"min_M": g.min_M}, **base)
    if hint is None:
        _, hint = best_greedy(g, M, dl)
    hint = list(hint)
    rp_hint = replay(g, M, hint, recompute=recompute)
    U = rp_hint.io
    steps = steps_of(g, hint)
    T_suff = sufficient_horizon(g, U)
    T = horizon if horizon is not None else max(T_suff, len(steps) - 1)
    T = check_int("horizon", T, min=max(1, len(steps) - 1))
    if (T + 1) * g.n > MAX_SAT_CELLS:
        raise InvalidParameter("horizon", T, f"(horizon + 1)·vertices <= {MAX_SAT_CELLS} ({g.name} has {g.n} vertices)")
    lo_ext = max(g.trivial_io, lower or 0)
    base["horizon"] = T

    m = cp_model.CpModel()
    V = range(g.n)
    IN, OUT = set(g.inputs), set(g.outputs)
    nb = m.NewBoolVar
    r = [[nb(f"r{t}_{v}") for v in V] for t in range(T + 1)]
    b = [[nb(f"b{t}_{v}") for v in V] for t in range(T + 1)]
    rd = [[nb(f"rd{t}_{v}") for v in V] for t in range(T)]
    wr = [[nb(f"wr{t}_{v}") for v in V] for t in range(T)]
    cp = [[None if v in IN else nb(f"cp{t}_{v}") for v in V] for t in range(T)]
    act = [nb(f"a{t}") for t in range(T)]
    for v in V:
        m.Add(r[0][v] == 0)
        m.Add(b[0][v] == int(v in IN))
        if v in OUT:
            m.Add(b[T][v] == 1)
    for t in range(T + 1):
        m.Add(sum(r[t]) <= M)
    for t in range(T):
        dl.check()
        moves_t = []
        for v in V:
            c = cp[t][v]
            m.AddBoolOr([r[t][v], rd[t][v]] + ([c] if c is not None else [])).OnlyEnforceIf(r[t + 1][v])
            m.AddBoolOr([b[t][v], wr[t][v]]).OnlyEnforceIf(b[t + 1][v])
            m.AddImplication(b[t][v], b[t + 1][v])
            m.AddBoolAnd([b[t][v], r[t + 1][v], r[t][v].Not()]).OnlyEnforceIf(rd[t][v])
            m.AddBoolAnd([r[t][v], b[t][v].Not()]).OnlyEnforceIf(wr[t][v])
            moves_t += [rd[t][v], wr[t][v]]
            if c is not None:
                m.AddBoolAnd([r[t + 1][v], r[t][v].Not()] + [r[t][p] for p in g.parents[v]] + [r[t + 1][p] for p in g.parents[v]]).OnlyEnforceIf(c)
                moves_t.append(c)
        for x in moves_t:
            m.AddImplication(x, act[t])
        m.AddBoolOr(moves_t).OnlyEnforceIf(act[t])
        if t + 1 < T:
            m.AddImplication(act[t + 1], act[t])
    for v in V:
        if v in IN:
            m.Add(sum(rd[t][v] for t in range(T)) >= 1)
        else:
            total = sum(cp[t][v] for t in range(T))
            m.Add(total == 1) if not recompute else m.Add(total >= 1)
        if v in OUT:
            m.Add(sum(wr[t][v] for t in range(T)) >= 1)
    cost = sum(rd[t][v] + wr[t][v] for t in range(T) for v in V)
    m.Add(cost >= lo_ext)
    m.Add(cost <= U)
    m.Minimize(cost)

    # the hint: one move per step, then idle steps
    for t in range(T + 1):
        R, B, mv = steps[min(t, len(steps) - 1)]
        for v in V:
            m.AddHint(r[t][v], v in R)
            m.AddHint(b[t][v], v in B)
        if t == T:
            break
        mv = mv if t < len(steps) - 1 else None
        m.AddHint(act[t], mv is not None)
        for v in V:
            m.AddHint(rd[t][v], mv == ("read", v))
            m.AddHint(wr[t][v], mv == ("write", v))
            if cp[t][v] is not None:
                m.AddHint(cp[t][v], mv == ("compute", v))

    solver = cp_model.CpSolver()
    left = dl.remaining()
    solver.parameters.max_time_in_seconds = max(0.01, left if left is not None else time_limit_s)
    solver.parameters.num_workers = workers
    status = solver.Solve(m)
    seconds = time.perf_counter() - t0
    extra = {"cpsat_status": solver.StatusName(status), "T_suff": T_suff, "hint_cost": U,
             "cpsat_bound": None, "wall": solver.WallTime(), "user_time": solver.UserTime()}
    if status in (cp_model.OPTIMAL, cp_model.FEASIBLE):
        moves = _moves(solver, g, T, r, rd, wr, cp)
        rp = replay(g, M, moves, recompute=recompute)
        assert rp.io == round(solver.ObjectiveValue()), (rp, solver.ObjectiveValue())
        if rp.io > U:  # cannot happen (cost ≤ U is a constraint); keep the hint otherwise
            moves, rp = hint, rp_hint
        bound = U if status == cp_model.OPTIMAL else int(-(-solver.BestObjectiveBound() // 1))
        extra["cpsat_bound"] = min(bound, rp.io) if status != cp_model.OPTIMAL else rp.io
    else:
        moves, rp = hint, rp_hint
        bound = None
    upper = rp.io
    sufficient = not recompute and T >= T_suff
    lo = lo_ext
    if sufficient and status == cp_model.OPTIMAL:
        lo = upper
    elif sufficient and bound is not None:
        lo = max(lo, min(bound, upper))
    elif sufficient and status == cp_model.INFEASIBLE:  # nothing of cost ≤ U other than... (cannot: hint fits)
        lo = max(lo, U)
    lo = min(lo, upper)
    common = dict(seconds=seconds, schedule=tuple(moves), reads=rp.reads, writes=rp.writes, extra=extra, **base)
    if lo == upper:
        how = ("CP-SAT closed the gap with the horizon proved sufficient (one-shot, T ≥ T_suff)" if sufficient
               and status == cp_model.OPTIMAL else "the lower bound proved elsewhere meets the schedule found")
        return PebbleResult(status="optimal", lower=upper, upper=upper, note=how, **common)
    if status == cp_model.OPTIMAL:
        return PebbleResult(status="optimal within horizon", lower=lo, upper=upper,
                            note="least cost within the horizon; recomputation: the horizon is not proved sufficient", **common)
    return PebbleResult(status="bounds", lower=lo, upper=upper, note=f"CP-SAT stopped ({solver.StatusName(status)})", **common)


def _moves(solver, g: Graph, T: int, r, rd, wr, cp) -> list[tuple[str, int]]:
    """Sequentialise the steps: writes, deletions, then reads and computes (the module docstring's order)."""
    val = solver.BooleanValue
    moves: list[tuple[str, int]] = []
    for t in range(T):
        moves += [("write", v) for v in range(g.n) if val(wr[t][v])]
        moves += [("delete", v) for v in range(g.n) if val(r[t][v]) and not val(r[t + 1][v])]
        moves += [("read", v) for v in range(g.n) if val(rd[t][v])]
        moves += [("compute", v) for v in range(g.n) if cp[t][v] is not None and val(cp[t][v])]
    return moves


__all__ = ["NO_DEADLINE", "available", "solve_cpsat", "steps_of", "sufficient_horizon"]
