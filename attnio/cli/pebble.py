"""``attnio pebble --N --d --M``: the exact optimal red-blue pebbling of a tiny attention (or matmul) graph.

Prints OPT or its bounds, what was proved, the schedule's length and the solve time (docs/pebbling.md).
"""

from __future__ import annotations

import argparse

from attnio.cli._common import float_option, int_option, print_json

HELP = "exact optimal red-blue pebbling of a tiny attention graph"
"""The one-line help of ``attnio pebble`` (``attnio --help``, ``attnio pebble --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--N", type=int_option, default=None, help="sequence length (matmul: rows m of A, default); required unless --benchmark")
    p.add_argument("--d", type=int_option, default=None, help="head dimension (matmul: inner dimension k, default); required unless --benchmark")
    p.add_argument("--M", type=int_option, default=None, help="red pebbles (fast-memory values); required unless --benchmark")
    p.add_argument("--benchmark", action="store_true",
                   help="run the benchmark table (docs/pebbling.md §9) through the sweep store and write it to --out")
    p.add_argument("--out", default="reports/pebbling.json", help="--benchmark: the JSON table (written atomically)")
    p.add_argument("--store", default="reports/_work/pebble.sqlite", help="--benchmark: resumable results store")
    p.add_argument("--workers", type=int_option, default=None, help="--benchmark: local worker processes (0 = this process)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS", help="--benchmark: a Dask scheduler, e.g. tcp://host:8786")
    p.add_argument("--quick", action="store_true", help="--benchmark: only the N = 2, d = 1 cases")
    p.add_argument("--graph", choices=["attention", "matmul"], default="attention")
    p.add_argument("--m", type=int_option, default=None, help="matmul: rows of A (default N)")
    p.add_argument("--k", type=int_option, default=None, help="matmul: inner dimension (default d)")
    p.add_argument("--n", type=int_option, default=None, help="matmul: columns of B (default N, i.e. Q·Kᵀ)")
    p.add_argument("--tree", choices=["balanced", "chain"], default="balanced", help="summation-tree shape")
    p.add_argument("--no-recompute", action="store_true", help="one-shot game: each vertex computed at most once")
    p.add_argument("--engine", choices=["astar", "z3", "cpsat"], default="astar",
                   help="astar (exact, default); z3/cpsat: time-indexed encoding, optimal within --horizon only")
    p.add_argument("--horizon", type=int_option, default=None, help="z3/cpsat: number of parallel steps T")
    p.add_argument("--time-limit", type=float_option, default=60.0,
                   help="seconds before reporting bounds (graph construction included)")
    p.add_argument("--max-states", type=int_option, default=5_000_000, help="astar: expanded states before bounds")
    p.add_argument("--schedule", action="store_true", help="print the schedule's moves")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def main(args: argparse.Namespace) -> int:
    import time

    from attnio.core.errors import InvalidParameter
    from attnio.core.validate import check_int, check_real
    from attnio.solver.pebble.graphs import attention, matmul
    from attnio.solver.pebble.limits import Deadline, TimeLimitReached
    from attnio.solver.pebble.solve import PebbleResult, solve

    t0 = time.perf_counter()
    time_limit = check_real("time_limit", args.time_limit, gt=0)
    if args.benchmark:
        return _benchmark(args, time_limit)
    for name in ("N", "d", "M"):
        if getattr(args, name) is None:
            raise InvalidParameter(name, None, "an integer >= 1 (required unless --benchmark)")
    max_states = check_int("max_states", args.max_states, min=1)
    M = check_int("M", args.M, min=1)
    if args.engine != "astar":
        if args.horizon is None:
            raise InvalidParameter("horizon", None, "an integer T >= 1 (required with --engine z3/cpsat)")
        check_int("horizon", args.horizon, min=1)
    deadline = Deadline(time_limit, t0)  # the limit covers building the graph too
    recompute = not args.no_recompute
    try:
        if args.graph == "attention":
            g = attention(args.N, args.d, tree=args.tree, deadline=deadline)
        else:
            m, k, n = (args.N if args.m is None else args.m, args.d if args.k is None else args.k,
                       args.N if args.n is None else args.n)
            g = matmul(m, k, n, tree=args.tree, deadline=deadline)
    except TimeLimitReached:
        r = PebbleResult(graph=args.graph, n=0, M=M, recompute=recompute, status="bounds", lower=0, upper=None,
                         engine=args.engine, seconds=time.perf_counter() - t0, note="stopped by the time limit while building the graph")
        _print(args, r.as_dict() | {"min_M": None, "trivial_bound": None})
        return 0
    if args.engine == "astar":
        r = solve(g, M, recompute=recompute, time_limit_s=time_limit, max_states=max_states, deadline=deadline)
    else:
        from attnio.solver.pebble.sat import solve_sat

        r = solve_sat(g, M, horizon=args.horizon, engine=args.engine, recompute=recompute, time_limit_s=time_limit, deadline=deadline)
    out = r.as_dict()
    out["min_M"] = g.min_M
    out["trivial_bound"] = g.trivial_io
    if args.schedule and r.schedule is not None:
        out["schedule"] = [[op, g.labels[v]] for op, v in r.schedule]
    if args.json:
        print_json(out)
        return 0
    print(f"{g.name}  M={M}  {g.n} vertices  {'recomputation allowed' if recompute else 'one-shot (no recomputation)'}")
    print(f"  {r.proved}")
    if r.schedule is not None:
        print(f"  schedule: {len(r.schedule)} moves, {r.reads} reads + {r.writes} writes (replayed under Hong–Kung rules)")
    print(f"  trivial bound (inputs + outputs) {g.trivial_io}; least feasible M {g.min_M}")
    print(f"  {r.seconds:.3f} s, {r.states} states expanded ({r.engine})")
    if args.schedule and r.schedule is not None:
        for op, lab in out["schedule"]:
            print(f"    {op:<8} {lab}")
    return 0


def _benchmark(args: argparse.Namespace, time_limit: float) -> int:
    import os
    import platform

    from attnio.reports.pebble_bench import run_cases, write_json
    from attnio.reports.store import Store
    from attnio.solver.pebble.benchmark import default_cases

    cases = default_cases(time_limit)
    if args.quick:
        cases = [c for c in cases if (c.N, c.d) == (2, 1)]
    os.makedirs(os.path.dirname(args.store) or ".", exist_ok=True)
    with Store(args.store) as store:
        rows = run_cases(cases, store, workers=args.workers, scheduler=args.scheduler, progress=not args.json)
    meta = {"cases": len(cases), "time_limit_s": time_limit, "cpus": os.cpu_count(), "machine": platform.machine(),
            "load_average": list(os.getloadavg()), "workers": args.workers, "scheduler": args.scheduler}
    write_json(rows, args.out, meta)
    if args.json:
        print_json({"out": args.out, **meta, "optimal": sum(r.get("status") == "optimal" for r in rows)})
        return 0
    for r in rows:
        val = r.get("opt") if r.get("status") == "optimal" else f"[{r.get('lower')}, {r.get('upper')}]"
        print(f"N={r['N']} d={r['d']} M={r['M']} {r['game']:<9}{' causal' if r['causal'] else ''}{' backward' if r.get('computation') == 'backward' else ''} {r['vertices']:>4} vertices "
              f"{r['status']:<10} {val}  {r.get('seconds')} s")
    print(f"{len(rows)} rows written to {args.out}")
    return 0


def _print(args: argparse.Namespace, out: dict) -> None:
    if args.json:
        print_json(out)
    else:
        print(f"{out['graph']}  M={out['M']}: {out['proved']}; {out['note']}")
