"""``attnio sweep [--grid FILE] [--store PATH] [--export FILE]``: run a grid into a resumable SQLite results store,
and optionally write every row of the store as a table (``.csv``, or ``.parquet`` with pyarrow installed)."""

from __future__ import annotations

import argparse

from attnio.cli._common import int_option

HELP = "run a grid of configurations into a results store"
"""The one-line help of ``attnio sweep`` (``attnio --help``, ``attnio sweep --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--grid", default=None, help="grid file (.json or .toml); default: the embedded default grid")
    p.add_argument("--store", default="reports/_work/sweep.sqlite", help="SQLite results store (created if absent; re-runs skip finished rows)")
    p.add_argument("--workers", type=int_option, default=None, help="local worker processes (default: CPU count; 0 = in this process)")
    p.add_argument("--scheduler", default=None, metavar="ADDRESS", help="run on a Dask distributed cluster, e.g. tcp://host:8786")
    p.add_argument("--batch", type=int_option, default=None, help="configurations per task (default: balanced over workers, at most 32)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    p.add_argument("--export", default=None, metavar="FILE", help="then write every row of the store to FILE (.csv, or .parquet: needs pyarrow), atomically; columns as attnio.results()")


def main(args: argparse.Namespace) -> int:
    from attnio.cli._common import print_json
    from attnio.core.errors import InvalidParameter
    from attnio.core.validate import check_int
    from attnio.reports.grid import default_grid, load_grid
    from attnio.reports.store import Store
    from attnio.reports.sweep import run_sweep

    if args.workers is not None:
        check_int("workers", args.workers, min=0)
    if args.batch is not None:
        check_int("batch", args.batch, min=1)
    if args.scheduler is not None and "://" not in args.scheduler:
        raise InvalidParameter("scheduler", args.scheduler, "a Dask scheduler address like tcp://host:8786")
    if args.export is not None:
        from attnio.reports.export import check_export

        check_export(args.export)  # before the sweep: a bad name or a missing pyarrow fails at once
    grid = load_grid(args.grid) if args.grid else default_grid()
    with Store(args.store) as store:
        s = run_sweep(grid, store, workers=args.workers, scheduler=args.scheduler, batch_size=args.batch, progress=not args.no_progress)
        if args.export is not None:
            from attnio.reports.export import export

            exported = export(store, args.export)
    if args.json:
        print_json({"store": args.store, "configurations": s.total, "already_done": s.done_before, "ran": s.ran,
                    "errors": s.errors, "skipped_below_min_M": s.skipped, "seconds": s.seconds}
                   | ({} if args.export is None else {"export": args.export, "exported_rows": exported}))
        return 0
    print(
        f"{s.total} configurations: {s.done_before} already in {args.store}, {s.ran} run now, "
        f"{s.errors} recorded as errors; {s.skipped} dropped (M below the algorithm's minimum); {s.seconds:.1f} s"
    )
    if args.export is not None:
        print(f"wrote {exported} rows of {args.store} to {args.export}")
    return 0
