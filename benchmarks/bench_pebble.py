"""Benchmark of the exact red-blue pebbling solver (solver/pebble), printed from one run.

    .venv/bin/python benchmarks/bench_pebble.py                 # A* on every instance, 60 s limit each
    .venv/bin/python benchmarks/bench_pebble.py --engines       # also z3 and CP-SAT (horizon encodings)
    .venv/bin/python benchmarks/bench_pebble.py --quick         # a 10 s limit, fewer instances
    .venv/bin/python benchmarks/bench_pebble.py --zero-slack    # recomputation game: the zero-slack searches
                                                                # (docs/pebbling.md §12) at 60 s and 600 s
    .venv/bin/python benchmarks/bench_pebble.py --closed        # recomputation game: optima closed above the
                                                                # trivial bound, one line per instance

Target: graphs up to 40 vertices solved to proven optimality in ≤ 60 s each on 2 cores. The certified
benchmark table (A* + CP-SAT, three games, every bound beside each row) is ``attnio pebble --benchmark``
(docs/pebbling.md §9). The table
says, per instance, what was proved, in how long, and the largest graph proved optimal within the limit.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from attnio.solver.pebble.graphs import attention, matmul, reduction_tree  # noqa: E402
from attnio.solver.pebble.solve import solve  # noqa: E402


def instances(quick: bool):
    out = [(reduction_tree(8), M) for M in (3, 4, 5)]
    out += [(matmul(2, 2, 2), M) for M in range(3, 8)]
    out += [(attention(2, 1), M) for M in range(3, 9)]
    if not quick:
        out += [(matmul(2, 2, 3), M) for M in (4, 6, 8)]
        out += [(matmul(2, 3, 2), M) for M in (6, 8, 10)]
        out += [(matmul(3, 2, 3), M) for M in (8, 10, 12, 14)]
        out += [(attention(2, 1, tree="chain"), M) for M in (4, 6, 8)]
        out += [(attention(2, 2), M) for M in (10, 14, 18, 22)]
        out += [(attention(3, 1), M) for M in (8, 12, 16)]
    return out


def engines_table(limit: float) -> list[dict]:
    """A*, z3 and CP-SAT on the same instances; the SAT horizon T = the A* schedule's number of moves
    (a horizon that contains an optimal schedule, so all three answer the same question within T)."""
    from attnio.solver.pebble.sat import solve_sat

    rows = []
    for g, M in [(reduction_tree(4), 3), (matmul(1, 2, 2), 3), (matmul(2, 2, 2), 5), (matmul(2, 2, 2), 6), (attention(2, 1), 7)]:
        a = solve(g, M, time_limit_s=limit)
        T = len(a.schedule)
        row = {"graph": g.name, "n": g.n, "M": M, "astar": (a.status, a.upper, round(a.seconds, 2)), "T": T}
        for eng in ("z3", "cpsat"):
            try:
                r = solve_sat(g, M, horizon=T, engine=eng, time_limit_s=limit)
                row[eng] = (r.status, r.upper, round(r.seconds, 2))
            except Exception as e:  # noqa: BLE001 - an engine missing is reported, not fatal
                row[eng] = (f"error: {e}", None, None)
        rows.append(row)
        print(json.dumps(row, ensure_ascii=False), flush=True)
    return rows


ZERO_SLACK = [(2, 1, 7), (2, 2, 8), (3, 1, 10), (2, 3, 9), (2, 3, 8), (2, 4, 8), (2, 5, 8), (4, 1, 13)]


def zero_slack_table(limits: tuple[float, ...]) -> dict[float, tuple]:
    """certify_recompute on attention instances just below their one-shot thresholds, once per limit; prints
    each row and the largest graph whose optimum with recomputation was certified above the trivial bound (and
    the largest with a proved lower bound above it) within each limit."""
    from attnio.solver.pebble.tight_recompute import certify_recompute

    best: dict[float, tuple] = {}
    for limit in limits:
        for N, d, M in ZERO_SLACK:
            g = attention(N, d)
            c = certify_recompute(g, M, time_limit_s=limit)
            val = str(c.lower) if c.optimal else f"[{c.lower}, {c.upper}]"
            print(f"limit {limit:g} s  attention N={N} d={d} M={M}  n={g.n}  T={c.T}  OPT {val:>9}  {c.seconds:7.1f} s  "
                  + "; ".join(f"{name}: {ans} {s:g} s" for name, ans, s in c.steps), flush=True)
            if c.lower > c.T:
                key = ("certified" if c.optimal else "lower above T", limit)
                if g.n > best.get(key, (0,))[0]:
                    best[key] = (g.n, f"N={N}, d={d}, M={M}", val, round(c.seconds, 1))
    for (what, limit), (n, inst, val, s) in sorted(best.items()):
        print(f"within {limit:g} s, recomputation, {what}: {n} vertices ({inst}: OPT {val}, {s} s)")
    return best


CLOSED = [(2, 1, 7, False), (2, 2, 8, False), (3, 1, 10, False), (3, 2, 10, True), (2, 5, 10, False)]


def closed_table(limit: float) -> list[tuple]:
    """certify_recompute on the instances whose optimum with recomputation it closes above the trivial bound
    (docs/pebbling.md §12): one line each with the instance, vertices, OPT (or [lower, upper]), T, CPU and wall
    seconds (the machine is shared: CPU seconds are the one-core time)."""
    from attnio.solver.pebble.tight_recompute import certify_recompute

    rows = []
    for N, d, M, causal in CLOSED:
        g = attention(N, d, causal=causal)
        cpu = time.process_time()
        c = certify_recompute(g, M, time_limit_s=limit)
        cpu = time.process_time() - cpu
        val = str(c.lower) if c.optimal else f"[{c.lower}, {c.upper}]"
        inst = f"attention N={N} d={d}{' causal' if causal else ''} M={M}"
        print(f"{inst:<32} vertices {g.n:>3}  OPT {val:>9}  T {c.T:>3}  {cpu:6.1f} CPU s  {c.seconds:6.1f} s  "
              + "; ".join(f"{name}: {ans}" for name, ans, _ in c.steps), flush=True)
        rows.append((inst, g.n, val, c.T, round(cpu, 1)))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--limit", type=float, default=None, help="seconds per solve (default 60, quick 10)")
    ap.add_argument("--engines", action="store_true", help="also compare z3 and CP-SAT")
    ap.add_argument("--zero-slack", action="store_true", help="only the recomputation game's zero-slack table")
    ap.add_argument("--closed", action="store_true", help="only the recomputation game's closed optima above T")
    args = ap.parse_args()
    if args.closed:
        closed_table(900.0 if args.limit is None else args.limit)
        return 0
    if args.zero_slack:
        zero_slack_table((60.0, 600.0) if args.limit is None else (args.limit,))
        return 0
    limit = args.limit or (10.0 if args.quick else 60.0)
    print(f"# bench_pebble: limit {limit:g} s per solve, cores visible {os.cpu_count()}")
    print(f"{'graph':<36} {'n':>3} {'M':>3} {'game':<9} {'status':<8} {'OPT / bounds':>13} {'states':>9} {'s':>7}")
    largest = {}
    t_all = time.perf_counter()
    for g, M in instances(args.quick):
        for recompute in (True, False):
            r = solve(g, M, recompute=recompute, time_limit_s=limit)
            val = str(r.opt) if r.status == "optimal" else f"[{r.lower}, {r.upper}]"
            game = "recompute" if recompute else "one-shot"
            print(f"{g.name:<36} {g.n:>3} {M:>3} {game:<9} {r.status:<8} {val:>13} {r.states:>9} {r.seconds:>7.2f}", flush=True)
            if r.status == "optimal" and r.seconds <= limit:
                if g.n > largest.get(game, (0,))[0]:
                    largest[game] = (g.n, g.name, M, round(r.seconds, 2))
    for game, (n, name, M, s) in largest.items():
        print(f"largest graph proved optimal within {limit:g} s ({game}): {n} vertices, {name}, M={M}, {s} s")
    print(f"total {time.perf_counter() - t_all:.1f} s")
    if args.engines:
        rows = engines_table(limit)
        for row in rows:
            a = row["astar"][2]
            for eng in ("z3", "cpsat"):
                s = row[eng][2]
                if s and a:
                    print(f"{row['graph']} M={row['M']}: {eng} time / A* time = {s / max(a, 1e-3):.1f} ({row[eng][0]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
