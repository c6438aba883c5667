"""The approximate-attention gap at the report's approximate configurations (reports/grid.py's default grid):
the report's own figure, from the function its summary reads (reports.compute.regime_summaries on a count-only
sweep of the grid's approximate block): poly's measured io ÷ the largest approximate lower bound whose class
holds the schedule poly ran (bounds.approx.CLASS_SCHEDULES, docs/approx.md §5), evaluated at the rank r of that
run. Prints one table.

    .venv/bin/python benchmarks/approx_gap.py

Columns: the schedule poly ran, its degree g and rank r and its measured io (= the exact formula: tests/test_poly.py); ``before``:
÷ approx.lower.trivial (4Nd), the only bound the report evaluated before its runs recorded r and their
schedule; ``after``: ÷ the best bound of its class (the report's figure); ``flash2/4Nd``: exact attention (an
ε-approximation with error 0) ÷ 4Nd, the one bound that holds for it; ``rd²/M``: the schedule's Θ(Nrd²/M) term
over 4Nd, rd/(4M)·d, which a bound for the class of chunked would have to reach; ``κ for 3``: the constant κ a
bound κ·Nrd²/M would need for ratio ≤ 3.
"""

from __future__ import annotations

import math
import statistics

from attnio.bounds.costs import cost
from attnio.reports import compute, sources
from attnio.reports.grid import default_grid_dict, grid_from_dict
from attnio.reports.store import Store
from attnio.reports.sweep import run_sweep


def approximate_rows() -> list[dict]:
    """The sweep rows of the default grid's approximate block, count-only (the same counts as real arithmetic)."""
    block = next(b for b in default_grid_dict()["blocks"] if "eps" in b)
    with Store(":memory:") as s:
        run_sweep(grid_from_dict({"numeric_max_N": 0, "blocks": [block]}), s, workers=0, progress=False)
        return s.rows()


def gap_summary(rows: list[dict] | None = None) -> compute.RegimeSummary:
    """The report's summary of the approximate regime (its points: one PointBest per configuration)."""
    ctx = compute.Context(approximate_rows() if rows is None else rows, None)
    (summary,) = [s for s in compute.regime_summaries(ctx, sources.all_bounds()) if s.regime == compute.APPROXIMATE]
    return summary


def main() -> None:
    rows = approximate_rows()
    g = {(r["N"], r["d"], r["M"], r["eps"], r["B"]): r["g"] for r in rows}
    summary = gap_summary(rows)
    pts = sorted(summary.points, key=lambda p: (p.eps, p.B, p.d, p.M, p.N))
    print(f"{'N':>6} {'M':>5} {'B':>4} {'g':>2} {'r':>5} {'schedule':>8} {'io':>11} {'before':>7} "
          f"{'best bound after':>31} {'after':>6} {'flash2/4Nd':>10} {'rd²/M':>6} {'κ for 3':>7}")
    before = {}
    for p in pts:
        N, d, M, r = p.N, p.d, p.M, p.r
        triv = 4 * N * d
        before[p.key] = p.io / triv
        print(f"{N:>6} {M:>5} {p.B:>4} {g[(N, d, M, p.eps, p.B)]:>2} {r:>5} {p.variant:>8} {p.io:>11} {before[p.key]:>7.2f} {p.bound:>31} {p.ratio:>6.2f} "
              f"{cost('flash2', N=N, d=d, M=M).io_words / triv:>10.2f} {r * d * d / M * N / triv:>6.2f} "
              f"{p.io / (3 * N * r * d * d / M):>7.3f}")
    big = summary.largest
    assert big is not None
    for name, v, at in (("before", list(before.values()), before[big.key]), ("after", [p.ratio for p in pts], big.ratio)):
        print(f"{name}: median {statistics.median(v):.2f}, max {max(v):.2f}, "
              f"at the largest point (N = {big.N}, M = {big.M}, B = {big.B}) {at:.2f}; ≤ 3 at {sum(x <= 3 for x in v)} of {len(v)}")
    assert all(math.isfinite(p.ratio) and p.ratio >= 1 for p in pts)  # consistency: no bound above a schedule's io


if __name__ == "__main__":
    main()
