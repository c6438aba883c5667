"""``attnio report``: run the embedded default sweep and the verification, write reports/REPORT.md and
reports/report.html (+ reports/figures/). ``--grid FILE`` runs another grid; ``--store PATH`` reports from a
sweep store (running ``--grid`` into it first when both are given)."""

from __future__ import annotations

import argparse
import time

from attnio.cli._common import int_option

HELP = "write the regime report (Markdown + HTML) into reports/"
"""The one-line help of ``attnio report`` (``attnio --help``, ``attnio report --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", default="reports", help="output folder (default reports/)")
    p.add_argument("--grid", default=None, help="grid file (.json/.toml); default: the embedded default grid")
    p.add_argument("--store", default=None, help="report the rows of this sweep store (see `attnio sweep`)")
    p.add_argument("--workers", type=int_option, default=None, help="local worker processes (default: CPU count; 0 = in this process)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS", help="run the sweep on a Dask cluster")
    p.add_argument("--no-verify", action="store_true", help="skip the z3 verification")
    p.add_argument("--no-pebbling", action="store_true", help="skip the optimal-pebbling sandwich table")
    p.add_argument("--no-progress", action="store_true")


def main(args: argparse.Namespace) -> int:
    import os

    os.environ["TRITON_INTERPRET"] = "1"  # the Triton section counts on the CPU: set before anything imports Triton
    from attnio.core.validate import check_int
    from attnio.reports import sources
    from attnio.reports.grid import default_grid, load_grid
    from attnio.reports.report import make_report
    from attnio.reports.sources import merge_verdicts, pebbling_tasks, verification_tasks
    from attnio.reports.store import Store
    from attnio.reports.sweep import run_sweep

    if args.workers is not None:
        check_int("workers", args.workers, min=0)
    t0 = time.perf_counter()
    verdicts = pebbling = None
    vtasks = [] if args.no_verify else verification_tasks()
    ptasks = [] if args.no_pebbling else pebbling_tasks()
    tasks = vtasks + ptasks

    def split(side: list) -> None:
        nonlocal verdicts, pebbling
        if vtasks:
            verdicts = merge_verdicts(side[: len(vtasks)])
        if ptasks:
            pebbling = sources.trim_pebble_rows(side[len(vtasks):])
    if args.store and not args.grid:
        from pathlib import Path

        from attnio.core.errors import InvalidParameter

        if not Path(args.store).is_file():
            raise InvalidParameter("store", args.store, "an existing sweep store (run `attnio sweep --store PATH` first)")
        with Store(args.store) as st:
            rows = st.rows()
            if tasks:  # nothing to sweep: the verification alone on the executor
                from attnio.reports.grid import Grid

                split(run_sweep(Grid(()), st, workers=args.workers, scheduler=args.scheduler, progress=not args.no_progress, side=tasks).side)
        note = f"Rows from the sweep store {args.store}."
    else:
        grid = load_grid(args.grid) if args.grid else default_grid()
        with Store(args.store or ":memory:") as st:
            split(run_sweep(grid, st, workers=args.workers, scheduler=args.scheduler, progress=not args.no_progress, side=tasks).side)
            keys = {c.key() for c in grid.configs}
            rows = [r for r in st.rows() if r["key"] in keys]
        note = ("Grid: the embedded default grid." if not args.grid else f"Grid: {args.grid}.") + (
            f" {len(grid.skipped)} configurations below an algorithm's minimum M were not run." if grid.skipped else ""
        )
    t_sweep = time.perf_counter() - t0
    written = make_report(rows, args.out, verify=False, verdicts=verdicts, pebbling=pebbling, note=note, meta={"sweep_seconds": round(t_sweep, 3), "rows": len(rows)})
    print(f"wrote {len(written)} files into {args.out}/ ({len(rows)} rows; {time.perf_counter() - t0:.1f} s)")
    for p in written:
        if p.suffix in (".md", ".html"):
            print(f"  {p}")
    return 0
