"""flash2-bwd ÷ the best backward lower bound that covers it, at the backward constants table's points, before and
after BWD-slots and BWD-slots-x (docs/bounds/backward-slots.md), and flash2-2pass-bwd (docs/costs.md#flash2-2pass-bwd)
÷ the best bound that covers it. Run: ``python tools/backward_ratios.py``."""

from attnio.bounds import backward as bb
from attnio.bounds.constants import TABLE_POINTS
from attnio.bounds.costs import BACKWARD_FORMULAS
from attnio.bounds.expr import evaluate


def best(n, dd, mm, without=(), schedule="flash2-bwd"):
    env = {"N": n, "d": dd, "M": mm, "dv": dd}
    vals = {
        b.id: evaluate(b.expr, env)
        for b in bb.BOUNDS
        if b.id not in without and all(r.holds(env) for r in b.regime) and schedule in bb.COVERS[b.id]
    }
    k = max(vals, key=vals.get)
    return k, vals[k]


def io(name, env):
    return evaluate(BACKWARD_FORMULAS[name].with_dv_equal_d().io, env)


print(
    f"{'N':>6} {'d':>4} {'M':>8} {'M/d²':>6}  {'before: bound':<24}{'f2÷':>6}  {'after: bound':<24}{'f2÷':>6}"
    f"  {'2pass÷':>6} {'2pass/f2':>8}"
)
for n, dd, mm in TABLE_POINTS + bb.SMALL_TABLE_POINTS:
    env = {"N": n, "d": dd, "M": mm, "dv": dd}
    f2, tp = io("flash2-bwd", env), io("flash2-2pass-bwd", env)
    b0, v0 = best(n, dd, mm, without=(bb.BWD_SLOTS.id, bb.BWD_SLOTS_X.id))
    b1, v1 = best(n, dd, mm)
    _, v2 = best(n, dd, mm, schedule="flash2-2pass-bwd")
    print(
        f"{n:>6} {dd:>4} {mm:>8} {mm / dd**2:>6g}  {b0:<24}{float(f2 / v0):>6.2f}  {b1:<24}{float(f2 / v1):>6.2f}"
        f"  {float(tp / v2):>6.2f} {float(tp / f2):>8.3f}"
    )
