"""``attnio bounds``: the bounds catalog (every entry, its regime, expression, constant and provenance)."""

from __future__ import annotations

import argparse

from attnio.commands._common import print_json


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="machine-readable output (expressions as structural JSON)")


def rows() -> list[dict]:
    from attnio.bounds.catalog import all_bounds
    from attnio.bounds.expr import to_json, to_text

    out = []
    for b in all_bounds():
        out.append(
            {
                "id": b.id,
                "kind": b.kind,
                "statement": b.statement,
                "model": b.model,
                "cdag": b.cdag,
                "regime": [str(r) for r in b.regime],
                "regime_json": [to_json(r) for r in b.regime],
                "expr": to_text(b.expr),
                "expr_json": to_json(b.expr),
                "explicit": b.explicit,
                "constant": None if b.constant is None else str(b.constant),
                "slack": None if b.slack is None else to_text(b.slack),
                "provenance": b.provenance,
                "status": b.status,
                "doc": b.doc,
                "notes": b.notes,
            }
        )
    return out


def main(args: argparse.Namespace) -> int:
    rs = rows()
    if args.json:
        print_json(rs)
        return 0
    for r in rs:
        form = "explicit" if r["explicit"] else "asymptotic only"
        const = f", constant {r['constant']}" if r["constant"] is not None else ""
        slack = f", slack {r['slack']}" if r["slack"] else ""
        print(f"{r['id']}  [{r['kind']}, {form}{const}{slack}; {r['status']}]")
        print(f"    {r['statement']}")
        print(f"    expr:   {r['expr']}")
        print(f"    regime: {' ∧ '.join(r['regime']) or 'all N, d, M ≥ 1'}")
        print(f"    model:  {r['model']}")
        print(f"    source: {r['provenance']}" + (f"  (derivation: {r['doc']})" if r["doc"] else ""))
    print(f"{len(rs)} entries")
    return 0
