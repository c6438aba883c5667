"""``attnio algorithms``: each algorithm, its regime of use and its exact cost formula."""

from __future__ import annotations

import argparse

from attnio.cli._common import print_json

HELP = "list the algorithms, their regimes and cost formulas"
"""The one-line help of ``attnio algorithms`` (``attnio --help``, ``attnio algorithms --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help='print one JSON object {"algorithms": [...]}')
    p.add_argument("--backward", action="store_true", help="list the backward-pass schedules instead")


def main(args: argparse.Namespace) -> int:
    from attnio.algorithms import registry
    from attnio.bounds import costs
    from attnio.bounds.expr import to_json, to_text

    formulas = costs.BACKWARD_FORMULAS if args.backward else costs.FORMULAS
    rows = []
    for name in registry.names("backward" if args.backward else "forward"):
        spec = registry.get(name)
        f = formulas.get(spec.cost) if spec.cost else None
        rows.append(
            {
                "name": name,
                "summary": spec.summary,
                "regime": spec.regime,
                "audit_mode": spec.audit,
                "reads": to_text(f.reads) if f else None,
                "writes": to_text(f.writes) if f else None,
                "leading": f.leading if f else None,
                "formula": {"reads": to_json(f.reads), "writes": to_json(f.writes)} if f else None,
            }
        )
    if args.json:
        print_json({"algorithms": rows})
        return 0
    for r in rows:
        print(f"{r['name']}: {r['summary']}")
        print(f"    regime: {r['regime']}")
        if r["reads"]:
            print(f"    reads  = {r['reads']}")
            print(f"    writes = {r['writes']}")
            print(f"    leading term: {r['leading']}")
    return 0
