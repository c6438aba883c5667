"""Backward ratios before and after the newer bounds. First table: flash2-bwd ÷ the best backward lower bound that
covers it, at the backward constants table's points, before and after BWD-slots and BWD-slots-x
(docs/bounds/backward-slots.md), and flash2-2pass-bwd (docs/costs.md#flash2-2pass-bwd) ÷ the best bound that covers
it. Second table: at the small-cache points (M ≤ d²), flash2-bwd and the cheapest small-cache schedule ÷ the best
bound covering each, before and after BWD-five-small, BWD-four-small and their near forms
(docs/bounds/backward-lift.md#numbers). Run: ``python tools/backward_ratios.py``."""

from attnio.bounds import backward as bb
from attnio.bounds.constants import TABLE_POINTS
from attnio.bounds.costs import BACKWARD_FORMULAS
from attnio.bounds.expr import evaluate

SLOTS = (bb.BWD_SLOTS.id, bb.BWD_SLOTS_X.id)
LIFT = tuple(bb.LIFT_SMALL)


def best(n, dd, mm, schedule="flash2-bwd", without=()):
    env = {"N": n, "d": dd, "M": mm, "dv": dd}
    vals = {
        b.id: evaluate(b.expr, env)
        for b in bb.BOUNDS
        if b.id not in without and all(r.holds(env) for r in b.regime) and schedule in bb.COVERS[b.id]
    }
    k = max(vals, key=vals.get)
    return k, vals[k]


def cost(name, n, dd, mm):
    return evaluate(BACKWARD_FORMULAS[name].with_dv_equal_d().io, {"N": n, "d": dd, "M": mm, "dv": dd})


def cheapest(n, dd, mm):
    env = {"N": n, "d": dd, "M": mm, "dv": dd}
    runs = [
        k
        for k, f in BACKWARD_FORMULAS.items()
        if k not in bb.OVERFLOWS and all(r.holds(env) for r in f.with_dv_equal_d().valid)
    ]
    return min(runs, key=lambda k: (cost(k, n, dd, mm), k))


print(
    f"{'N':>6} {'d':>4} {'M':>8} {'M/d²':>6}  {'before: bound':<24}{'f2÷':>6}  {'after: bound':<24}{'f2÷':>6}"
    f"  {'2pass÷':>6} {'2pass/f2':>8}"
)
for n, dd, mm in TABLE_POINTS + bb.SMALL_TABLE_POINTS:
    f2, tp = cost("flash2-bwd", n, dd, mm), cost("flash2-2pass-bwd", n, dd, mm)
    b0, v0 = best(n, dd, mm, without=SLOTS + LIFT)
    b1, v1 = best(n, dd, mm, without=LIFT)
    _, v2 = best(n, dd, mm, "flash2-2pass-bwd", without=LIFT)
    print(
        f"{n:>6} {dd:>4} {mm:>8} {mm / dd**2:>6g}  {b0:<24}{float(f2 / v0):>6.2f}  {b1:<24}{float(f2 / v1):>6.2f}"
        f"  {float(tp / v2):>6.2f} {float(tp / f2):>8.3f}"
    )

print()
print(
    "small cache: before/after BWD-five-small, BWD-four-small and their -near forms (docs/bounds/backward-lift.md)"
)
print(
    f"{'N':>6} {'d':>4} {'M':>8} {'M/d²':>6}  {'schedule':<18}{'before: bound':<24}{'÷':>6}  {'after: bound':<30}{'÷':>6}"
)
for n, dd, mm in bb.SMALL_TABLE_POINTS:
    for name in dict.fromkeys(("flash2-bwd", "flash2-2pass-bwd", cheapest(n, dd, mm))):
        c = cost(name, n, dd, mm)
        b0, v0 = best(n, dd, mm, name, without=LIFT)
        b1, v1 = best(n, dd, mm, name)
        print(
            f"{n:>6} {dd:>4} {mm:>8} {mm / dd**2:>6g}  {name:<18}{b0:<24}{float(c / v0):>6.2f}  {b1:<30}"
            f"{float(c / v1):>6.2f}"
        )
