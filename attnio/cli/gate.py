"""``attnio gate [--update]``: fail (exit 1) if this run's exact figures regress against reports/baseline.json.

Exit 0: no regression (notes, e.g. improved counts, are printed); 1: regression, with a readable diff;
2: the baseline is missing or corrupted (``--update`` writes it, atomically, on purpose).
"""

from __future__ import annotations

import argparse
import sys

from attnio.cli._common import int_option, print_json

HELP = "compare this run's figures against reports/baseline.json"
"""The one-line help of ``attnio gate`` (``attnio --help``, ``attnio gate --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--baseline", default="reports/baseline.json", help="baseline file (default reports/baseline.json)")
    p.add_argument("--update", action="store_true", help="rewrite the baseline from this run (on purpose; commit it)")
    p.add_argument("--grid", default=None, help="grid file (default: the embedded default grid, count-only)")
    p.add_argument("--no-verify", action="store_true", help="skip the z3 verification (verdicts are then not gated)")
    p.add_argument("--workers", type=int_option, default=None, help="local worker processes (default: CPU count; 0 = in this process)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--current", default=None, metavar="JSON", help="write this run's figures to JSON as well")
    p.add_argument("--json", action="store_true", help="print the outcome as one JSON object (same exit codes)")
    p.add_argument("--kernels", action="append", default=[], metavar="FILE.py",
                   help="import FILE.py, which registers Triton kernel configurations (attnio.triton.gate.register) "
                        "whose counted bytes are gated (repeatable; docs/triton.md)")


def main(args: argparse.Namespace) -> int:
    import os

    os.environ["TRITON_INTERPRET"] = "1"  # the triton section counts on the CPU: set before anything imports Triton
    from attnio.core.validate import check_int
    from attnio.reports import gate
    from attnio.reports.grid import load_grid
    from attnio.reports.store import write_atomic

    if args.workers is not None:
        check_int("workers", args.workers, min=0)
    if args.kernels:
        from attnio.cli.kernel import KernelInputError, load_module

        try:
            for f in args.kernels:
                load_module(f, "kernels")
        except KernelInputError as e:
            print(f"attnio gate: error: {' '.join(str(e).split())}", file=sys.stderr)
            return 2
    grid = load_grid(args.grid) if args.grid else None
    baseline = None
    if not args.update:
        try:
            baseline = gate.load_baseline(args.baseline)
        except gate.BaselineError as e:
            print(f"attnio gate: error: {' '.join(str(e).split())}", file=sys.stderr)
            return 2
    current = gate.collect(grid, verify=not args.no_verify, workers=args.workers, progress=not args.no_progress)
    if args.current:
        write_atomic(args.current, gate.dumps(current))
    if args.update:
        write_atomic(args.baseline, gate.dumps(current))
        print(f"wrote {args.baseline}: {len(current['io'])} configurations, {len(current.get('bounds') or {})} bounds, "
              f"{len(current.get('verdicts') or {})} verdicts, {len(current.get('constants') or {})} constants"
              )
        return 0
    assert baseline is not None
    if args.no_verify:
        baseline = {k: v for k, v in baseline.items() if k != "verdicts"}
    res = gate.compare(baseline, current)  # verdicts are deterministic (resource limits only): no second try
    if args.json:
        print_json({"ok": res.ok, "configurations": len(current["io"]), "problems": res.problems, "notes": res.notes})
        return 0 if res.ok else 1
    for n in res.notes:
        print(f"note: {n}")
    if res.ok:
        print(f"gate OK: {len(current['io'])} configurations, no count grew, no proof lost, no bound or constant changed for the worse")
        return 0
    print(f"gate FAILED: {len(res.problems)} regression(s) against {args.baseline}:", file=sys.stderr)
    for p in res.problems:
        print(f"  - {p}", file=sys.stderr)
    print("If this change is intended, run `attnio gate --update` and commit reports/baseline.json.", file=sys.stderr)
    return 1
