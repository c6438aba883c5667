"""Backward ratios before and after the newer bounds. First table: flash2-bwd ÷ the best backward lower bound that
covers it, at the backward constants table's points, before and after BWD-slots and BWD-slots-x
(docs/bounds/backward-slots.md), and flash2-2pass-bwd (docs/costs.md#flash2-2pass-bwd) ÷ the best bound that covers
it. Second table: at the small-cache points (M ≤ d²), flash2-bwd and the cheapest small-cache schedule ÷ the best
bound covering each, before and after BWD-five-small, BWD-four-small and their near forms
(docs/bounds/backward-lift.md#numbers). Third table: at the large-cache points (the referee's slack table and
M = 16d² at N = 4096, d = 64), flash2-bwd and flash2-2pass-bwd ÷ the best bound covering each, before and after
BWD-slots-dv and BWD-slots-dv-x (docs/bounds/backward-slots-dv.md#numbers). Fourth table: at the small-cache
points, the best schedule ÷ the best bound covering it, before and after the charged-once bounds
(docs/bounds/backward-once.md) and square_tiling-io-bwd, and whether the goal ≤ 5 is met. Run:
``python tools/backward_ratios.py``."""

from attnio.bounds import backward as bb
from attnio.bounds.constants import TABLE_POINTS
from attnio.bounds.costs import BACKWARD_FORMULAS
from attnio.bounds.expr import evaluate

SLOTS = (bb.BWD_SLOTS.id, bb.BWD_SLOTS_X.id)
LIFT = tuple(bb.LIFT_SMALL)
DV = (bb.BWD_SLOTS_DV.id, bb.BWD_SLOTS_DV_X.id)
ONCE = tuple(sorted(bb.ONCE_SMALL))
NEW_SCHEDULES = ("square_tiling-io-bwd",)


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


def cheapest(n, dd, mm, without=()):
    env = {"N": n, "d": dd, "M": mm, "dv": dd}
    runs = [
        k
        for k, f in BACKWARD_FORMULAS.items()
        if k not in bb.OVERFLOWS and k not in without and all(r.holds(env) for r in f.with_dv_equal_d().valid)
    ]
    return min(runs, key=lambda k: (cost(k, n, dd, mm), k))


print(
    f"{'N':>6} {'d':>4} {'M':>8} {'M/d²':>6}  {'before: bound':<24}{'f2÷':>6}  {'after: bound':<24}{'f2÷':>6}"
    f"  {'2pass÷':>6} {'2pass/f2':>8}"
)
for n, dd, mm in TABLE_POINTS + bb.SMALL_TABLE_POINTS:
    f2, tp = cost("flash2-bwd", n, dd, mm), cost("flash2-2pass-bwd", n, dd, mm)
    b0, v0 = best(n, dd, mm, without=SLOTS + LIFT + DV)
    b1, v1 = best(n, dd, mm, without=LIFT + DV)
    _, v2 = best(n, dd, mm, "flash2-2pass-bwd", without=LIFT + DV)
    print(
        f"{n:>6} {dd:>4} {mm:>8} {mm / dd**2:>6g}  {b0:<24}{float(f2 / v0):>6.2f}  {b1:<24}{float(f2 / v1):>6.2f}"
        f"  {float(tp / v2):>6.2f} {float(tp / f2):>8.3f}"
    )

print()
print("(first table: 'after' is BWD-slots / BWD-slots-x, without the dV face; the third table adds it)")
print()
print(
    "small cache: before/after BWD-five-small, BWD-four-small and their -near forms (docs/bounds/backward-lift.md)"
)
print(
    f"{'N':>6} {'d':>4} {'M':>8} {'M/d²':>6}  {'schedule':<18}{'before: bound':<24}{'÷':>6}  {'after: bound':<30}{'÷':>6}"
)
for n, dd, mm in bb.SMALL_TABLE_POINTS:
    for name in dict.fromkeys(("flash2-bwd", "flash2-2pass-bwd", cheapest(n, dd, mm, NEW_SCHEDULES))):
        c = cost(name, n, dd, mm)
        b0, v0 = best(n, dd, mm, name, without=LIFT + ONCE)
        b1, v1 = best(n, dd, mm, name, without=ONCE)
        print(
            f"{n:>6} {dd:>4} {mm:>8} {mm / dd**2:>6g}  {name:<18}{b0:<24}{float(c / v0):>6.2f}  {b1:<30}"
            f"{float(c / v1):>6.2f}"
        )

print()
print("large cache: before/after BWD-slots-dv and BWD-slots-dv-x (docs/bounds/backward-slots-dv.md)")
print(
    f"{'N':>6} {'d':>4} {'M/d²':>6}  {'before: bound':<22}{'f2÷':>6}{'2pass÷':>8}  {'after: bound':<26}{'f2÷':>6}"
    f"{'2pass÷':>8}"
)
for n, dd, k in ((4096, 64, 4), (4096, 64, 16), (16384, 128, 8), (65536, 64, 16), (65536, 128, 16), (65536, 128, 64)):
    mm = k * dd * dd
    f2, tp = cost("flash2-bwd", n, dd, mm), cost("flash2-2pass-bwd", n, dd, mm)
    b0, v0 = best(n, dd, mm, without=LIFT + DV)
    _, w0 = best(n, dd, mm, "flash2-2pass-bwd", without=LIFT + DV)
    b1, v1 = best(n, dd, mm, without=LIFT)
    _, w1 = best(n, dd, mm, "flash2-2pass-bwd", without=LIFT)
    print(
        f"{n:>6} {dd:>4} {k:>6}  {b0:<22}{float(f2 / v0):>6.2f}{float(tp / w0):>8.2f}  {b1:<26}{float(f2 / v1):>6.2f}"
        f"{float(tp / w1):>8.2f}"
    )

print()
print("small cache: best schedule ÷ best bound covering it, before/after the charged-once bounds")
print("(docs/bounds/backward-once.md) and square_tiling-io-bwd; goal ≤ 5")
print(
    f"{'N':>6} {'d':>4} {'M':>8} {'M/d²':>6}  {'before: schedule':<19}{'bound':<31}{'÷':>6}  "
    f"{'after: schedule':<22}{'bound':<34}{'÷':>6}  ≤ 5?"
)
for n, dd, mm in bb.SMALL_TABLE_POINTS:
    s0 = cheapest(n, dd, mm, NEW_SCHEDULES)
    b0, v0 = best(n, dd, mm, s0, without=ONCE)
    s1 = cheapest(n, dd, mm)
    b1, v1 = best(n, dd, mm, s1)
    r0, r1 = float(cost(s0, n, dd, mm) / v0), float(cost(s1, n, dd, mm) / v1)
    print(
        f"{n:>6} {dd:>4} {mm:>8} {mm / dd**2:>6g}  {s0:<19}{b0:<31}{r0:>6.2f}  {s1:<22}{b1:<34}{r1:>6.2f}  "
        f"{'yes' if r1 <= 5 else 'NO'}"
    )
