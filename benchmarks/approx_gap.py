"""The approximate-attention gap at the report's approximate configurations (reports/grid.py's default grid):
poly's automatic choice (exact formulas, which equal the measured counts: tests/test_poly.py) ÷ the best
approximate lower bound whose class contains the schedule it runs (docs/approx.md §5). Prints one table.

    .venv/bin/python benchmarks/approx_gap.py

Columns: the schedule and its exact io; ``before``: ÷ approx.lower.trivial (4Nd), the only approximate bound the
report can evaluate (its points carry no r); ``after``: ÷ the largest bound of docs/approx.md §5 whose class holds
the schedule (trivial, two-phase; accumulator and output-accumulator for stream and chunked; matmul for
tiled), evaluated at the r that
ε and B give; ``flash2/4Nd``: exact attention (an ε-approximation with error 0) ÷ 4Nd, the one bound that holds
for it; ``rd²/M``: the schedule's Θ(Nrd²/M) term over 4Nd, rd/(4M)·d, which a bound for the class of chunked
would have to reach; ``κ for 3``: the constant κ a bound κ·Nrd²/M would need for ratio ≤ 3.
"""

from __future__ import annotations

import math
import statistics

from attnio.bounds import approx
from attnio.bounds.costs import cost
from attnio.bounds.expr import evaluate
from attnio.reports.grid import default_grid_dict

CLASS = approx.CLASS_SCHEDULES  # docs/approx.md §5: the poly schedules in each bound's class


def main() -> None:
    block = next(b for b in default_grid_dict()["blocks"] if "eps" in b)
    bounds = {b.id: b for b in approx.BOUNDS if b.kind == "lower"}
    assert set(bounds) == set(CLASS), sorted(bounds)
    rows = []
    for eps in block["eps"]:
        for B in block["B"]:
            for d in block["d"]:
                for M in block["M"]:
                    for N in block["N"]:
                        io, sched, g, r = approx.poly_io(N=N, d=d, M=M, eps=eps, B=B)
                        env = {"N": N, "d": d, "M": M, "r": r}
                        vals = {bid: float(evaluate(bounds[bid].expr, env)) for bid, cl in CLASS.items()
                                if sched in cl and all(rel.holds(env) for rel in bounds[bid].regime)}
                        best = max(vals, key=lambda k: vals[k])
                        triv = 4 * N * d
                        rows.append((N, M, B, g, r, sched, io, io / triv, best, io / vals[best],
                                     cost("flash2", N=N, d=d, M=M).io_words / triv, r * d * d / M * N / triv,
                                     io / (3 * N * r * d * d / M)))
    print(f"{'N':>6} {'M':>5} {'B':>4} {'g':>2} {'r':>5} {'schedule':>8} {'io':>11} {'before':>7} "
          f"{'best bound after':>31} {'after':>6} {'flash2/4Nd':>10} {'rd²/M':>6} {'κ for 3':>7}")
    for N, M, B, g, r, s, io, bef, best, aft, fl, th, kap in rows:
        print(f"{N:>6} {M:>5} {B:>4} {g:>2} {r:>5} {s:>8} {io:>11} {bef:>7.2f} {best:>31} {aft:>6.2f} {fl:>10.2f} "
              f"{th:>6.2f} {kap:>7.3f}")
    for col, name in ((7, "before"), (9, "after")):
        v = [row[col] for row in rows]
        print(f"{name}: median {statistics.median(v):.2f}, max {max(v):.2f}, "
              f"at the largest point (N = {rows[-1][0]}, M = {rows[-1][1]}, B = {rows[-1][2]}) {rows[-1][col]:.2f}; "
              f"≤ 3 at {sum(x <= 3 for x in v)} of {len(v)}")
    assert all(math.isfinite(row[9]) and row[9] >= 1 for row in rows)  # consistency: no bound above a schedule's io


if __name__ == "__main__":
    main()
