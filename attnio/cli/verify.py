"""``attnio verify``: prove every claim of the catalog (z3; cvc5 as second opinion) and print the verdicts.

Exit status 0 when every selected claim is proved, 1 when any is refuted, vacuous (its hypotheses hold
nowhere), unknown or an error. Expected refutations (the c − δ side of a tightest constant, the step beyond a
derived crossover) are part of a claim that is proved as a whole, and are shown as its counterexample. Every
verdict carries its non-vacuity witness (an integer point of its hypotheses); see docs/solver.md.
"""

from __future__ import annotations

import argparse
import time

from attnio.cli._common import int_option, print_json

HELP = "prove every claim of the catalog with z3 (and cvc5)"
"""The one-line help of ``attnio verify`` (``attnio --help``, ``attnio verify --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable verdicts")
    p.add_argument("--solver", choices=("z3", "cvc5", "both"), default="z3",
                   help="z3 (default); cvc5; or both: z3 decides and cvc5 re-proves every proved obligation")
    p.add_argument("--claim", action="append", metavar="ID",
                   help="verify only this claim, or the claims matching a shell glob such as 'sy.*' (repeatable)")
    p.add_argument("--about", action="append", metavar="BOUND",
                   help="verify only the claims about this catalog bound (repeatable; `attnio bounds` lists the ids)")
    p.add_argument("--list", action="store_true", help="list the selected claim ids and exit")
    p.add_argument("--where", action="store_true",
                   help="with --list: also the bounds each claim is about (or why it is a meta-claim) and the "
                        "module:function that defines it")
    p.add_argument("--jobs", type=int_option, default=None,
                   help="worker processes (default: the CPUs available; 0 or 1: in this process); verdicts do not depend on it")
    p.add_argument("--record", metavar="PATH", default=None,
                   help="with --solver both on the whole catalog: write each claim's fingerprint and each solver's "
                        "answer, the solver versions and the encoding digest to PATH (JSON, atomically); with "
                        "--stale: merge the verdicts of the stale claims into PATH. `attnio report` reads "
                        "reports/crosscheck.json")
    p.add_argument("--stale", action="store_true",
                   help="prove only the claims whose entry in the proof record (--record PATH, else "
                        "reports/crosscheck.json) is missing, changed or not proved by both solvers; every claim when "
                        "the record's solver versions or encoding digest differ from this installation's")


def main(args: argparse.Namespace) -> int:
    from attnio.solver.verify import select, verify_all

    if args.list:
        return list_claims(select(args.claim, args.about), where=args.where, as_json=args.json)
    if args.record is not None and (args.solver != "both" or args.claim or args.about):
        from attnio.core.errors import InvalidParameter

        raise InvalidParameter("--record", args.record,
                               "only with --solver both and no --claim or --about (a record covers the whole catalog)")
    if args.stale:
        return stale_run(args)
    t0 = time.perf_counter()
    verdicts = verify_all(args.claim, solver=args.solver, jobs=args.jobs, about=args.about)
    if not verdicts and args.about:  # bounds no claim is about: say why
        from attnio.bounds.catalog import by_id

        for b in args.about:
            note = by_id(b).asymptotic_only
            print(f"no claim is about {b}" + (f": asymptotic only. {note}" if note else ""))
        return 0
    total = time.perf_counter() - t0
    if args.record is not None:
        write_record(args.record, verdicts)
    return report(verdicts, total, as_json=args.json)


def stale_run(args: argparse.Namespace) -> int:
    """``--stale``: prove the claims the record does not hold fresh (:func:`attnio.solver.record.stale`); with
    ``--record``, merge their verdicts into the record (atomically; entries of removed claims dropped)."""
    from attnio.core.errors import InvalidParameter
    from attnio.reports.sources import CROSSCHECK
    from attnio.reports.store import write_atomic
    from attnio.solver import record
    from attnio.solver.verify import verify_all

    if args.claim or args.about:
        raise InvalidParameter("--stale", "set", "without --claim or --about (the record decides which claims)")
    path = args.record or CROSSCHECK
    rec, here, current = record.load(path), record.header(), record.current_fingerprints()
    ids = record.stale(rec, current, here)
    t0 = time.perf_counter()
    verdicts = verify_all(ids, solver=args.solver, jobs=args.jobs) if ids else []
    total = time.perf_counter() - t0
    if args.record is not None:
        new = record.merged(rec, verdicts, current, here)
        if new != rec:
            write_atomic(args.record, record.dumps(new))
    why = ("no record" if rec is None else "solver versions or encoding changed"
           if not record.header_matches(rec, here) else "missing or changed")
    if not args.json:
        print(f"{len(ids)} of {len(current)} claims stale in {path} ({why})" if ids
              else f"0 of {len(current)} claims stale in {path}: nothing to prove")
    return report(verdicts, total, as_json=args.json, extra={"stale": ids, "record": path})


def report(verdicts: list, total: float, *, as_json: bool, extra: dict | None = None) -> int:
    """Print the verdicts (one line each, or one JSON object); exit status 1 when any is not proved."""
    failed = [v for v in verdicts if not v.ok]
    s = summary(verdicts)
    if as_json:
        print_json({"total_seconds": total, "failed": len(failed), **s, **(extra or {}),
                    "verdicts": [v.to_json() for v in verdicts]})
        return 1 if failed else 0
    for v in verdicts:
        line = f"{v.status:8s} {v.seconds:6.2f}s  {v.id}"
        if v.constant:
            line += f"  constant: {v.constant}"
        if v.crosscheck:
            line += f"  cvc5: {v.crosscheck}"
        print(line)
        if v.counterexample:
            tag = " (spurious: fails nowhere at integer points)" if v.spurious else ""
            expected = " (expected)" if v.status == "proved" else ""
            print(f"          counterexample{expected}{tag}: {v.counterexample}")
        if v.reason and (v.status != "proved" or v.kind in ("tightest", "crossover")):
            print(f"          {v.reason}")
    by = ", ".join(f"{n} {k}" for k, n in s["statuses"].items() if k != "proved")
    solvers = "; ".join(f"{k} proved {n}" for k, n in s["proved_by"].items())
    print(f"{len(verdicts)} claims, {len(verdicts) - len(failed)} proved, {len(failed)} not proved"
          + (f" ({by})" if by else "") + f"; {solvers}; {total:.1f}s")
    return 1 if failed else 0


def list_claims(claims: list, *, where: bool, as_json: bool) -> int:
    """``--list``: one line per claim (id, kind, statement); with ``--where`` a second line with the bounds it is
    about (or ``meta:`` and why it names none) and the ``module:function`` that defines it; ``--json``: all of it."""
    if as_json:
        print_json({"claims": [{"id": c.id, "kind": c.kind, "description": c.description, "about": list(c.about),
                                "meta": c.meta, "where": c.where} for c in claims]})
        return 0
    for c in claims:
        print(f"{c.id}  [{c.kind}] {c.description}")
        if where:
            print(f"    about: {', '.join(c.about)}" if c.about else f"    meta: {c.meta}")
            print(f"    defined in {c.where}")
    return 0


def summary(verdicts: list) -> dict:
    """Counts for the JSON output and the closing line: verdicts by status, claims proved by each solver."""
    statuses: dict[str, int] = {}
    for v in verdicts:
        statuses[v.status] = statuses.get(v.status, 0) + 1
    proved_by: dict[str, int] = {}
    for v in verdicts:
        for solver, st in v.solvers.items():
            proved_by.setdefault(solver, 0)
            proved_by[solver] += st == "proved"
    return {"claims": len(verdicts), "statuses": dict(sorted(statuses.items())), "proved_by": proved_by,
            "witnesses": sum(v.witness is not None for v in verdicts)}


def write_record(path: str, verdicts: list) -> None:
    """The proof record (:mod:`attnio.solver.record`): per claim its fingerprint
    (:func:`attnio.solver.verify.fingerprint`) and each solver's answer, with the solver versions and the
    encoding digest, written atomically. A record is evidence of one run, never an input to a verdict: the
    report counts a claim as re-proved by cvc5 only while its entry is fresh."""
    from attnio.reports.store import write_atomic
    from attnio.solver import record

    write_atomic(path, record.dumps(record.merged(None, verdicts, record.current_fingerprints(), record.header())))
