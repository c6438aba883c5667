"""Print best schedule ÷ best forward lower bound before and after BSPV-cap (docs/bounds/bspv-cap.md), at N = 4096,
d = 128 = d_v and M/d² ∈ {1/64, 1/16, 1/4, 1/2, 3/4, 1, 1.25, 1.5, 2}, and flash2 ÷ best bound at M = d².

Run: ``python tools/bspv_ratios.py``. "Best bound" is the largest explicit forward lower bound of the catalog that
applies at the point (``reports.sources.applicable``, ``bound_value``), "before" without ``constants.bspv-cap``;
the best schedule is the cheapest exact forward formula that runs there, audit-mode schedules (working set > M:
flash1) left out.
"""

from __future__ import annotations

from fractions import Fraction

from attnio.algorithms import registry
from attnio.bounds.catalog import all_bounds
from attnio.bounds.constants import BSPV_CAP
from attnio.bounds.costs import FORMULAS
from attnio.bounds.expr import evaluate
from attnio.reports.sources import applicable, bound_value

N_, D_ = 4096, 128
FRACTIONS = (Fraction(1, 64), Fraction(1, 16), Fraction(1, 4), Fraction(1, 2), Fraction(3, 4), Fraction(1), Fraction(5, 4),
             Fraction(3, 2), Fraction(2))


def best_bound(env: dict, with_cap: bool) -> tuple[str, float]:
    vals = {}
    for b in all_bounds():
        if b.kind != "lower" or (b.id == BSPV_CAP.id and not with_cap) or not applicable(b, "flash2", env, False):
            continue
        v = bound_value(b, env)
        if v is not None:
            vals[b.id] = v
    best = max(vals, key=lambda i: (vals[i], i))
    return best, vals[best]


def costs(env: dict) -> dict[str, int]:
    out = {}
    for name, fm in FORMULAS.items():
        if registry.get(name).audit or not all(r.holds(env) for r in fm.valid):
            continue
        out[name] = int(evaluate(fm.io, env))
    return out


def rows() -> list[tuple]:
    out = []
    for f in FRACTIONS:
        env = {"N": N_, "d": D_, "dv": D_, "M": int(f * D_ * D_)}
        cs = costs(env)
        sched = min(cs, key=lambda a: (cs[a], a))
        (b0, v0), (b1, v1) = best_bound(env, False), best_bound(env, True)
        out.append((f, env["M"], sched, cs[sched], b0, cs[sched] / v0, b1, cs[sched] / v1, cs.get("flash2")))
    return out


def main() -> None:
    print(f"N = {N_}, d = d_v = {D_}")
    print("| M/d² | M | best schedule | best bound before | ratio before | best bound after | ratio after |")
    print("|---|---|---|---|---|---|---|")
    flash2_at_d2 = None
    for f, m, sched, _, b0, r0, b1, r1, fl in rows():
        print(f"| {f} | {m} | {sched} | {b0.removeprefix('constants.')} | {r0:.2f} | {b1.removeprefix('constants.')} | {r1:.2f} |")
        if f == 1:
            env = {"N": N_, "d": D_, "dv": D_, "M": m}
            flash2_at_d2 = (fl / best_bound(env, False)[1], fl / best_bound(env, True)[1])
    assert flash2_at_d2 is not None
    print(f"flash2 ÷ best bound at M = d²: {flash2_at_d2[0]:.2f} before, {flash2_at_d2[1]:.2f} after")


if __name__ == "__main__":
    main()
