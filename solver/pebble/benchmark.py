"""The pebbling benchmark: certified optima (or certified brackets) of attention graphs, one row per case.

A case is (N, d, M, game, causal, tree, time limit). Its row is plain data (the sweep store keeps it): the
graph's size, what was proved about OPT and by what, the certificate, every applicable lower bound of the
catalog and of its small forms (:mod:`attnio.solver.pebble.small_bounds`) and every algorithm's exact count.

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

from attnio.solver.pebble.game import replay
from attnio.solver.pebble.graphs import Graph, attention
from attnio.solver.pebble.limits import Deadline
from attnio.solver.pebble.solve import solve

from attnio.validate import check_choice, check_int, check_real

GAMES = ("recompute", "one-shot", "prbp")


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

    def key(self) -> str:
        return (f"pebble|attention|N={self.N}|d={self.d}|M={self.M}|game={self.game}|causal={self.causal}"
                f"|tree={self.tree}|limit={self.time_limit_s:g}")

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def graph_of(c: Case) -> Graph:
    tree = "flat" if c.game == "prbp" else c.tree
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
        row.update(_beside(c, g))
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
    row.update(_beside(c, g))
    return row


def _prbp_min_M(g: Graph) -> int:
    from attnio.solver.pebble.prbp import min_M

    return min_M(g)


def _beside(c: Case, g: Graph) -> dict[str, Any]:
    """The catalog's lower bounds, their small forms, and every algorithm's exact count, at this case."""
    from attnio.solver.pebble import sandwich, small_bounds

    out: dict[str, Any] = {"trivial": g.trivial_io}
    if c.causal:  # the catalog's bounds and schedules are about full (non-causal) attention
        out.update(lower_bounds={}, small_forms={}, costs={})
        return out
    explicit, _ = sandwich._eval_bounds(sandwich._lower_entries(sandwich.ATTENTION_SYMBOLS), {"N": c.N, "d": c.d, "M": c.M})
    if c.game == "prbp":  # only the bounds whose CDAG assumption allows partial sums (small_bounds.prbp_ok)
        explicit = {k: v for k, v in explicit.items() if small_bounds.holds_in_prbp(k)}
    out["lower_bounds"] = {k: round(float(v), 6) for k, v in explicit.items()}
    out["small_forms"] = {k: v for k, v in small_bounds.evaluate(c.N, c.d, c.M, game=c.game).items()}
    out["costs"] = sandwich._costs(c.N, c.d, c.M) if c.game != "prbp" else {}
    return out


def default_cases(time_limit_s: float = 60.0) -> list[Case]:
    """The committed table: attention forward N=2 (d = 1, 2, 3), N=3 (d = 1, 2, 3), N=4 (d = 1), causal N=3, 4,
    at M from the least feasible value up, in the three games (docs/pebbling.md §9)."""
    out = []
    for N, d, Ms in [(2, 1, (3, 4, 5, 6, 8)), (2, 2, (4, 8, 16)), (2, 3, (8, 24)), (3, 1, (4, 8, 12)),
                     (3, 2, (12, 24)), (4, 1, (12, 20)), (3, 3, (30,))]:
        for M in Ms:
            for game in ("recompute", "one-shot"):
                out.append(Case(N, d, M, game, time_limit_s=time_limit_s))
    for N, d, Ms in [(3, 1, (4,)), (4, 1, (8,)), (3, 2, (16,))]:
        for M in Ms:
            out.append(Case(N, d, M, "one-shot", causal=True, time_limit_s=time_limit_s))
    for N, d, Ms in [(2, 1, (3, 4, 5, 6, 8)), (2, 2, (4, 8)), (3, 1, (3, 4, 8))]:
        for M in Ms:
            out.append(Case(N, d, M, "prbp", time_limit_s=time_limit_s))
    # one-shot rows at and just below the least M with OPT = inputs + outputs, where the zero-slack searches
    # (solver/pebble/tight.py) prove OPT = inputs + outputs + 1 or + 2, or a lower bound above it
    # (docs/pebbling.md §11); the larger ones get 5, 10 or 30 times the limit (N=3, d=3, M=17: ~500 s)
    for N, d, M, causal, scale in [(3, 1, 9, False, 1), (3, 1, 10, False, 1), (2, 3, 10, False, 1),
                                   (2, 3, 11, False, 1), (4, 1, 13, False, 1), (3, 2, 15, False, 1),
                                   (3, 2, 14, False, 10), (2, 5, 10, False, 5), (4, 2, 11, True, 5),
                                   (3, 3, 17, False, 30)]:
        out.append(Case(N, d, M, "one-shot", causal=causal, time_limit_s=time_limit_s * scale))
    return out
