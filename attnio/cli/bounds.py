"""``attnio bounds``: the bounds catalog (every entry, its regime, expression, constant and provenance).

``attnio bounds --id sy.thm3.5`` shows one bound with its links, all read from data: the schedules that attain
it (``Bound.attained_by``) with each one's exact cost formula, and the claims about it (``Claim.about``) with
their z3 verdicts (``--no-verify`` lists the claims without proving them).
"""

from __future__ import annotations

import argparse

from attnio.cli._common import print_json

HELP = "print the bounds catalog"
"""The one-line help of ``attnio bounds`` (``attnio --help``, ``attnio bounds --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help='print one JSON object {"bounds": [...]} (expressions as structural JSON)')
    p.add_argument("--id", default=None, metavar="ID", help="one bound, with the schedules that attain it and the claims about it")
    p.add_argument("--no-verify", action="store_true", help="with --id: list the claims about the bound without proving them")


def rows() -> list[dict]:
    from attnio.bounds.catalog import all_bounds

    return [_row(b) for b in all_bounds()]


def _row(b) -> dict:
    from attnio.bounds.expr import to_json, to_text

    def fields(*names: str) -> dict:  # fields shown as they are
        return {k: getattr(b, k) for k in names}

    return {
        **fields("id", "kind", "statement", "model", "cdag", "computation"),
        "regime": [str(r) for r in b.regime],
        "regime_json": [to_json(r) for r in b.regime],
        "expr": to_text(b.expr),
        "expr_json": to_json(b.expr),
        "explicit": b.explicit,
        "constant": None if b.constant is None else str(b.constant),
        "slack": None if b.slack is None else to_text(b.slack),
        **fields("provenance", "status", "doc", "notes"),
        "attained_by": list(b.attained_by),
        "asymptotic_only": b.asymptotic_only,
    }


def schedules(b) -> list[dict]:
    """The algorithms that attain ``b``, each with its exact cost formula (d_v = d) where it has one."""
    from attnio.algorithms import registry
    from attnio.bounds.costs import BACKWARD_FORMULAS, FORMULAS
    from attnio.bounds.expr import to_text

    formulas = FORMULAS if b.computation == "forward" else BACKWARD_FORMULAS
    out = []
    for name in b.attained_by:
        spec = registry.get(name)
        f = formulas.get(spec.cost) if spec.cost else None
        g = f.with_dv_equal_d() if f is not None else None
        out.append(
            {
                "algorithm": name,
                "summary": spec.summary,
                "formula": None if g is None else to_text(g.io),
                "valid": None if g is None else [str(r) for r in g.valid],
                "leading": None if f is None else f.leading,
                "derivation": None if f is None else f.derivation,
            }
        )
    return out


def claims_about(bound_id: str, verify: bool) -> list[dict]:
    """The claims whose ``about`` names the bound, with their verdicts when ``verify``."""
    from attnio.solver.claims import all_claims

    cs = [c for c in all_claims() if bound_id in c.about]
    verdicts = {}
    if verify and cs:
        from attnio.solver.verify import verify_all

        verdicts = {v.id: v for v in verify_all([c.id for c in cs])}
    out = []
    for c in cs:
        v = verdicts.get(c.id)
        out.append(
            {
                "id": c.id,
                "kind": c.kind,
                "description": c.description,
                "verdict": None if v is None else v.status,
                "constant": None if v is None else v.constant,
                "where": c.where,
            }
        )
    return out


def main_one(args: argparse.Namespace) -> int:
    from attnio.bounds.catalog import by_id

    b = by_id(args.id)
    r = _row(b)
    r["schedules"] = schedules(b)
    r["claims"] = claims_about(b.id, verify=not args.no_verify)
    if args.json:
        print_json(r)
    else:
        _print(r)
        print("    attained by:" + ("" if r["schedules"] else " no schedule registered here"))
        for sch in r["schedules"]:
            print(f"      {sch['algorithm']}: {sch['summary']}")
            if sch["formula"] is None:
                print("        exact cost formula: none in attnio.bounds.costs")
            else:
                print(f"        exact cost (d_v = d): {sch['formula']}")
                print(f"        valid where {' ∧ '.join(sch['valid'])}; leading term {sch['leading']}; derivation {sch['derivation']}")
        print(f"    claims about it: {len(r['claims'])}" + (" (not verified: --no-verify)" if args.no_verify and r["claims"] else ""))
        if not r["claims"] and r["asymptotic_only"]:
            print(f"      none: asymptotic only. {r['asymptotic_only']}")
        for c in r["claims"]:
            verdict = "" if c["verdict"] is None else f"{c['verdict']}" + (f", constant {c['constant']}" if c["constant"] else "") + ": "
            print(f"      {c['id']} [{c['kind']}] {verdict}{c['description']}")
            print(f"        defined in {c['where']}")
    bad = [c for c in r["claims"] if c["verdict"] not in (None, "proved")]
    return 1 if bad else 0


def _print(r: dict) -> None:
    form = "explicit" if r["explicit"] else "asymptotic only"
    const = f", constant {r['constant']}" if r["constant"] is not None else ""
    slack = f", slack {r['slack']}" if r["slack"] else ""
    print(f"{r['id']}  [{r['kind']}, {form}{const}{slack}; {r['status']}]")
    print(f"    {r['statement']}")
    print(f"    expr:   {r['expr']}")
    print(f"    regime: {' ∧ '.join(r['regime']) or 'all N, d, M ≥ 1'}")
    print(f"    model:  {r['model']}")
    print(f"    source: {r['provenance']}" + (f"  (derivation: {r['doc']})" if r["doc"] else ""))
    if r["notes"]:
        print(f"    notes:  {r['notes']}")


def main(args: argparse.Namespace) -> int:
    if args.id is not None:
        return main_one(args)
    rs = rows()
    if args.json:
        print_json({"bounds": rs})
        return 0
    for r in rs:
        _print(r)
        if r["attained_by"]:
            print(f"    attained by: {', '.join(r['attained_by'])}")
    print(f"{len(rs)} entries")
    return 0
