"""The pebbling benchmark: certified optima (or certified brackets) of attention graphs, one row per case.

A case is (N, d, M, game, causal, tree, time limit, computation: the forward graph or the backward one,
:func:`attnio.solver.pebble.graphs.attention_backward`). Its row is plain data (the sweep store keeps it): the
graph's size, what was proved about OPT and by what, the certificate, every applicable lower bound of the
catalog and of its small forms (:mod:`attnio.solver.pebble.small_bounds`), what the row says about each
(``verdicts``: confirms, refuted or open) and every algorithm's exact count.

Engines, in this order within one time limit:

1. the exact A* search of :mod:`attnio.solver.pebble.solve` (half the limit, three quarters in the one-shot
   game, where it first runs the zero-slack searches of :mod:`attnio.solver.pebble.tight`; its lower bound
   holds over *all* calculations) — for the partial-computation game the A* search of
   :mod:`attnio.solver.pebble.prbp` (the whole limit);
2. if the gap is open, OR-Tools CP-SAT (:mod:`attnio.solver.pebble.cpsat`, the rest of the limit), hinted with
   the best schedule in hand. Its proved bound is used as a lower bound only in the one-shot game, where the
   horizon is proved sufficient; with recomputation it can only improve the upper side.

Certificates: the best schedule is replayed by :func:`attnio.solver.pebble.game.replay` (or
:func:`attnio.solver.pebble.game.replay_prbp`) here, once more, before the row is written; ``lower_by`` names the
proof of the lower side. A case that runs out of time records ``[lower, upper]`` and its gap, never a failure.

>>> row = run_case(Case(N=2, d=1, M=8, game="one-shot").as_dict())
>>> (row["vertices"], row["edges"], row["status"], row["opt"], row["lower_by"])
(24, 32, 'optimal', 8, 'trivial bound (inputs + outputs)')
"""

from __future__ import annotations

import resource
import time
from dataclasses import asdict, dataclass
from typing import Any

from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int, check_real
from attnio.solver.pebble.game import replay
from attnio.solver.pebble.graphs import Graph, attention, attention_backward
from attnio.solver.pebble.limits import Deadline
from attnio.solver.pebble.solve import solve

GAMES = ("recompute", "one-shot", "prbp")
COMPUTATIONS = ("forward", "backward")


@dataclass(frozen=True)
class Case:
    """One benchmark row to compute (the sweep machinery's row kind ``"pebble"``)."""

    N: int
    d: int
    M: int
    game: str = "recompute"
    causal: bool = False
    tree: str = "balanced"
    time_limit_s: float = 60.0
    kind: str = "pebble"
    count_only: bool = False  # the sweep orders work by (count_only, −N): pebbling rows are all "numeric"
    computation: str = "forward"

    def key(self) -> str:
        graph = "attention" if self.computation == "forward" else "attention_backward"  # forward keys unchanged
        return (f"pebble|{graph}|N={self.N}|d={self.d}|M={self.M}|game={self.game}|causal={self.causal}"
                f"|tree={self.tree}|limit={self.time_limit_s:g}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def graph_of(c: Case) -> Graph:
    tree = "flat" if c.game == "prbp" else c.tree
    if c.computation == "backward":
        if c.causal:
            raise NotImplementedError("a causal backward graph is not built here")
        return attention_backward(c.N, c.d, tree=tree)
    return attention(c.N, c.d, tree=tree, causal=c.causal)


def _cpu() -> float:
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def run_case(cfg: dict[str, Any]) -> dict[str, Any]:
    """Compute one row (see the module docstring)."""
    c = Case(**cfg)
    check_int("N", c.N, min=1)
    check_int("d", c.d, min=1)
    check_int("M", c.M, min=1)
    check_choice("game", c.game, GAMES)
    check_choice("computation", c.computation, COMPUTATIONS)
    check_real("time_limit_s", c.time_limit_s, gt=0)
    t0, cpu0 = time.perf_counter(), _cpu()
    dl = Deadline(c.time_limit_s, t0)
    g = graph_of(c)
    row: dict[str, Any] = {"key": c.key(), **c.as_dict(), "graph": g.name, "vertices": g.n,
                           "edges": sum(len(p) for p in g.parents), "inputs": len(g.inputs), "outputs": len(g.outputs),
                           "min_M": g.min_M if c.game != "prbp" else _prbp_min_M(g)}
    if c.M < row["min_M"]:
        row.update(status="infeasible", opt=None, lower=None, upper=None, gap=None, solver="-", seconds=0.0, cpu_seconds=0.0)
        return row
    engines = []
    if c.game == "prbp":
        from attnio.solver.pebble.prbp import solve_prbp

        a = solve_prbp(g, c.M, deadline=dl)  # no second engine for PRBP: the whole limit
    else:
        # one-shot: the zero-slack searches inside solve() are the engine that proves; 3/4 of the limit
        share = c.time_limit_s * (3 / 4 if c.game == "one-shot" else 1 / 2)
        a = solve(g, c.M, recompute=c.game == "recompute", time_limit_s=share, deadline=dl.within(share))
    engines.append({"engine": a.engine, "status": a.status, "lower": a.lower, "upper": a.upper, "seconds": round(a.seconds, 3)})
    lower, upper, moves = a.lower, a.upper, a.schedule
    lower_by = "A* (least f on the open list)" if a.status != "optimal" else f"A* ({a.note or 'search exhausted'})"
    if a.status == "optimal" and a.lower == g.trivial_io:
        lower_by = "trivial bound (inputs + outputs)"
    if lower != upper and c.game != "prbp" and moves is not None:
        from attnio.solver.pebble import cpsat

        if cpsat.available() and not dl.expired():
            try:
                s = cpsat.solve_cpsat(g, c.M, recompute=c.game == "recompute", hint=list(moves), lower=lower,
                                      deadline=dl, time_limit_s=max(0.01, dl.remaining() or 0.01))
            except Exception as e:  # noqa: BLE001 - an engine failing (time, size) is recorded, the row stands
                engines.append({"engine": "cpsat", "status": f"error: {type(e).__name__}: {e}"})
            else:
                engines.append({"engine": "cpsat", "status": s.status, "lower": s.lower, "upper": s.upper,
                                "seconds": round(s.seconds, 3), "horizon": s.horizon, **{k: s.extra.get(k) for k in ("cpsat_status", "T_suff", "cpsat_bound")}})
                if s.upper is not None and s.upper < upper:
                    upper, moves = s.upper, s.schedule
                if s.lower is not None and s.lower > lower and c.game == "one-shot":
                    lower, lower_by = s.lower, "CP-SAT bound, horizon proved sufficient (one-shot)"
    # the certificate: replay once more, independently of the engines
    if moves is None:  # stopped before any schedule was found: only the lower side is known
        row.update(status="bounds", opt=None, lower=lower, upper=None, gap=None, lower_by=lower_by, certificate=None,
                   solver=" + ".join(e["engine"] for e in engines), engines=engines,
                   seconds=round(time.perf_counter() - t0, 3), cpu_seconds=round(_cpu() - cpu0, 3))
        row.update(_beside(c, g, row))
        return row
    if c.game == "prbp":
        from attnio.solver.pebble.game import replay_prbp

        rp = replay_prbp(g, c.M, moves)
    else:
        rp = replay(g, c.M, moves, recompute=c.game == "recompute")
    assert rp.io == upper, (rp, upper)
    status = "optimal" if lower == upper else "bounds"
    row.update(
        status=status, opt=upper if status == "optimal" else None, lower=lower, upper=upper, gap=upper - lower,
        lower_by=lower_by, certificate={"replayed": True, "reads": rp.reads, "writes": rp.writes, "moves": len(moves)},
        solver=" + ".join(e["engine"] for e in engines), engines=engines,
        seconds=round(time.perf_counter() - t0, 3), cpu_seconds=round(_cpu() - cpu0, 3),
    )
    row.update(_beside(c, g, row))
    return row


def _prbp_min_M(g: Graph) -> int:
    from attnio.solver.pebble.prbp import min_M

    return min_M(g)


def _beside(c: Case, g: Graph, row: dict[str, Any]) -> dict[str, Any]:
    """The catalog's lower bounds, their small forms, what this row says about each (``verdicts``:
    :func:`attnio.solver.pebble.small_bounds.verdict`) and every algorithm's exact count, at this case."""
    from attnio.solver.pebble import sandwich, small_bounds

    out: dict[str, Any] = {"trivial": g.trivial_io}
    env = {"N": c.N, "d": c.d, "M": c.M}
    if c.causal:  # the catalog's causal workload bounds and schedules, at one head with N_q = N_kv = N
        explicit, costs = _causal_bounds(env), _causal_costs(c.N, c.d, c.M)
    elif c.computation == "backward":
        from attnio.bounds.backward import RECOMPUTES_S

        explicit, every = _backward_bounds(env), _backward_costs(c.N, c.d, c.M)
        # like with like: the schedules that recompute S run this graph; standard-bwd and square_tiling-bwd read
        # the forward's P or S (another CDAG), so their counts stand beside the row unchecked
        costs = {k: v for k, v in every.items() if k in RECOMPUTES_S}
        out["costs_other_cdag"] = {k: v for k, v in every.items() if k not in RECOMPUTES_S}
    else:
        explicit, _ = sandwich._eval_bounds(sandwich._lower_entries(sandwich.ATTENTION_SYMBOLS), env)
        costs = sandwich._costs(c.N, c.d, c.M) if c.game != "prbp" else {}
    if c.game == "prbp":  # only the bounds whose CDAG assumption allows partial sums (small_bounds.prbp_ok)
        explicit = {k: v for k, v in explicit.items() if small_bounds.holds_in_prbp(k)}
    out["lower_bounds"] = {k: round(float(v), 6) for k, v in explicit.items()}
    out["small_forms"] = small_bounds.evaluate(c.N, c.d, c.M, game=c.game, computation="causal" if c.causal else c.computation)
    out["verdicts"] = {k: small_bounds.verdict(v, row) for k, v in {**out["lower_bounds"], **out["small_forms"]}.items()}
    out["costs"] = costs
    return out


def _explicit_lower(bounds, env: dict[str, int]) -> dict[str, float]:
    """Each explicit lower bound of ``bounds`` whose symbols ``env`` gives and whose regime holds there, by id."""
    from attnio.bounds.expr import evaluate, free_symbols

    out = {}
    for b in bounds:
        names = {s.name for s in free_symbols(b.expr)} | {s.name for r in b.regime for s in free_symbols(r)}
        if b.kind == "lower" and b.explicit and names <= set(env) and all(r.holds(env) for r in b.regime):
            out[b.id] = float(evaluate(b.expr, env))
    return out


def _backward_bounds(env: dict[str, int]) -> dict[str, float]:
    """Every explicit backward lower bound of the catalog in (N, d, M) (d_v = d) whose regime holds; the graph of
    :func:`attention_backward` recomputes S, so BWD-SdP and its small-cache form apply as well as BWD-dP."""
    from attnio.bounds import backward

    return _explicit_lower(backward.BOUNDS, {**env, "dv": env["d"]})


def _causal_bounds(env: dict[str, int]) -> dict[str, float]:
    """The catalog's explicit causal-workload lower bounds (``bounds.workloads.CAUSAL``) at one head, N_q = N_kv = N,
    d_v = d: the causal graph of :func:`attention` is that head's standard CDAG over the P = N(N + 1)/2 pairs."""
    from attnio.bounds import workloads

    one_head = {"Nq": env["N"], "Nkv": env["N"], "g": 1, "d": env["d"], "dv": env["d"], "M": env["M"]}
    return _explicit_lower([b for b in workloads.BOUNDS if b.id in workloads.CAUSAL], one_head)


def _causal_costs(N: int, d: int, M: int) -> dict[str, int]:
    """Every causal workload schedule's exact count (``bounds.costs.workload_cost``, one head, per-head schedule)
    where its formula is valid."""
    from attnio.bounds import costs
    from attnio.core.workload import Workload

    w = Workload.build(N=N, d=d, M=M, causal=True)
    out = {}
    for name, sched, causal in sorted(costs.WORKLOAD_FORMULAS):
        if causal and sched == "per-head":
            try:
                out[name] = costs.workload_cost(name, w, sched).io_words
            except InvalidParameter:
                continue
    return out


def _backward_costs(N: int, d: int, M: int) -> dict[str, int]:
    """Every backward schedule's exact count (:func:`attnio.bounds.costs.backward_cost`, d_v = d) where its formula
    is valid; the schedules that overflow M (``bounds.backward.OVERFLOWS``) are left out."""
    from attnio.bounds import backward, costs
    from attnio.solver.pebble.sandwich import valid_costs

    return valid_costs(sorted(costs.BACKWARD_FORMULAS.items()), costs.backward_cost, N, d, M, skip=backward.OVERFLOWS)


def default_cases(time_limit_s: float = 60.0) -> list[Case]:
    """The committed table: attention forward N=2 (d = 1, 2, 3), N=3 (d = 1, 2, 3), N=4 (d = 1), causal N=2, 3, 4,
    at M from the least feasible value up, in the three games; the backward graph for (N, d) = (1, 1), (1, 2),
    (2, 1) and (3, 1) (where the backward segment forms are positive) in the two standard games (docs/pebbling.md §9)."""
    out = []
    for N, d, Ms in [(2, 1, (3, 4, 5, 6, 8)), (2, 2, (4, 8, 16)), (2, 3, (8, 24)), (3, 1, (4, 8, 12)),
                     (3, 2, (12, 24)), (4, 1, (12, 20)), (3, 3, (30,))]:
        for M in Ms:
            for game in ("recompute", "one-shot"):
                out.append(Case(N, d, M, game, time_limit_s=time_limit_s))
    for N, d, Ms in [(3, 1, (4,)), (4, 1, (8,)), (3, 2, (16,))]:
        for M in Ms:
            out.append(Case(N, d, M, "one-shot", causal=True, time_limit_s=time_limit_s))
    for M in (3, 4):  # causal rows that solve, in both games (the causal bounds and forms beside them)
        for game in ("recompute", "one-shot"):
            out.append(Case(2, 1, M, game, causal=True, time_limit_s=time_limit_s))
    for N, d, Ms in [(2, 1, (3, 4, 5, 6, 8)), (2, 2, (4, 8)), (3, 1, (3, 4, 8))]:
        for M in Ms:
            out.append(Case(N, d, M, "prbp", time_limit_s=time_limit_s))
    for N, d, Ms in [(1, 1, (3, 4, 6, 8)), (1, 2, (3, 4, 6, 8, 12)), (2, 1, (4, 8, 12, 20)), (3, 1, (3,))]:
        for M in Ms:
            for game in ("recompute", "one-shot"):
                out.append(Case(N, d, M, game, time_limit_s=time_limit_s, computation="backward"))
    # one-shot rows at and just below the least M with OPT = inputs + outputs, where the zero-slack searches
    # (solver/pebble/tight.py) prove OPT = inputs + outputs + 1 or + 2, or a lower bound above it
    # (docs/pebbling.md §11); the larger ones get 5, 10 or 30 times the limit (N=3, d=3, M=17: ~500 s)
    for N, d, M, causal, scale in [(3, 1, 9, False, 1), (3, 1, 10, False, 1), (2, 3, 10, False, 1),
                                   (2, 3, 11, False, 1), (4, 1, 13, False, 1), (3, 2, 15, False, 1),
                                   (3, 2, 14, False, 10), (2, 5, 10, False, 5), (4, 2, 11, True, 5),
                                   (3, 3, 17, False, 30)]:
        out.append(Case(N, d, M, "one-shot", causal=causal, time_limit_s=time_limit_s * scale))
    return out
