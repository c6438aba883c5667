"""Assertions shared by the count tests of every pass, and by the mutant tests of the claims."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from fractions import Fraction

from attnio.algorithms import registry
from attnio.algorithms.run import count


def assert_count_equals_formula(name: str, formula: Callable, N: int, d: int, dv: int, M: int) -> None:
    """The count-only run of ``name`` moves exactly the words ``formula(name, …)`` gives (reads and writes apart),
    and, unless the schedule runs in audit mode, its peak fits in M."""
    measured = count(name, N=N, d=d, M=M, dv=dv)
    predicted = formula(name, N=N, d=d, M=M, dv=dv)
    assert (measured.reads_words, measured.writes_words) == (predicted.reads_words, predicted.writes_words), (N, d, dv, M)
    if not registry.get(name).audit:
        assert measured.peak_fast_words <= M and not measured.overflowed


def assert_real_run_equals_count_and_formula(name: str, chosen: str, real, formula: Callable, N: int, d: int, dv: int, M: int) -> None:
    """A real run's measurement ``real`` of ``name`` equals its count-only run (per array, in total and at peak)
    and moves exactly the words ``formula(chosen, …)`` gives, ``chosen`` being the schedule that ran (``name``
    itself, or the one ``auto`` picked); unless that schedule runs in audit mode, its peak fits in M."""
    fast = count(name, N=N, d=d, dv=dv, M=M)
    assert real.per_array == fast.per_array, (N, d, dv, M)
    assert real.io == fast.io
    assert real.peak_fast_words == fast.peak_fast_words
    predicted = formula(chosen, N=N, d=d, M=M, dv=dv)
    assert (real.reads_words, real.writes_words) == (predicted.reads_words, predicted.writes_words), (N, d, dv, M)
    if not registry.get(chosen).audit:
        assert real.peak_fast_words <= M and not real.overflowed

def assert_refuted_with_valid_counterexample(claim: object, *, integer_point: bool = False) -> None:
    """z3 refutes ``claim`` (a tightened variant of a proved claim) with a counterexample that satisfies every
    hypothesis and violates the goal when re-checked exactly; with ``integer_point``, a counterexample whose every
    value is an integer, re-checked at those integers."""
    from attnio.solver import logic
    from attnio.solver.verify import verify_claim

    v = verify_claim(claim)  # type: ignore[arg-type]
    assert v.status == "refuted" and not v.spurious, (v.status, v.reason)
    env = {k: Fraction(x) for k, x in v.counterexample.items()}
    if integer_point:
        assert all(x.denominator == 1 for x in env.values()), env
        env = {k: int(x) for k, x in env.items()}
    assert all(logic.holds(h, env) for h in claim.hyps)  # type: ignore[attr-defined]
    assert not logic.holds(claim.goal, env)  # type: ignore[attr-defined]


def without_hypothesis(claim: object, hyp: str) -> object:
    """``claim`` without its hypothesis ``hyp`` (as printed), id suffixed ``.mutant``: a stronger claim."""
    from dataclasses import replace

    kept = tuple(x for x in claim.hyps if str(x) != hyp)  # type: ignore[attr-defined]
    assert len(kept) == len(claim.hyps) - 1, [str(x) for x in claim.hyps]  # type: ignore[attr-defined]
    return replace(claim, id=claim.id + ".mutant", hyps=kept)  # type: ignore[attr-defined, type-var]


def small_cache_grid(cut: Callable[[int], int]) -> Iterator[tuple[int, int, int]]:
    """(N, d, M) with d from 1 to 128, M from 1 to d² (small values, d, 4d, d²/8, d²/4, d²/2, 3d²/4, d² − 1, d²
    and the bound family's own ``cut(d)``) and N near d, small, and 1000: the grid of the small-cache checks."""
    for dd in (1, 2, 3, 5, 8, 16, 31, 64, 128):
        for mm in sorted({1, 2, 3, 4, 5, 7, dd, 4 * dd, dd * dd // 8, cut(dd), dd * dd // 4, dd * dd // 2,
                          3 * dd * dd // 4, dd * dd - 1, dd * dd}):
            if 1 <= mm <= dd * dd:
                for n in sorted({1, 2, 3, max(dd - 1, 1), dd, dd + 1, 2 * dd, 1000}):
                    yield n, dd, mm


def covered_cost_check(bounds: Sequence[object], points: Iterable[tuple[int, int, int]]) -> tuple[int, float]:
    """Asserts that every backward lower bound of ``bounds``, at every point (N, d, M) of ``points`` where its
    regime holds (d_v = d), is at most the exact cost of every schedule it covers
    (:data:`attnio.bounds.backward.COVERS`) that is valid there; returns the number of (bound, schedule, point)
    checks and the least exact cost ÷ bound over the positive bounds (``inf`` if none)."""
    import math

    from attnio.bounds import backward as bb
    from attnio.bounds.costs import BACKWARD_FORMULAS, backward_cost
    from attnio.bounds.expr import evaluate

    checked, least = 0, math.inf
    for n, dd, mm in points:
        env = {"N": n, "d": dd, "M": mm, "dv": dd}
        for b in bounds:
            if not all(r.holds(env) for r in b.regime):  # type: ignore[attr-defined]
                continue
            lb = float(evaluate(b.expr, env))  # type: ignore[attr-defined]
            for name in bb.COVERS[b.id]:  # type: ignore[attr-defined]
                if all(r.holds(env) for r in BACKWARD_FORMULAS[name].with_dv_equal_d().valid):
                    io = backward_cost(name, N=n, d=dd, M=mm).io_words
                    assert io >= lb, (b.id, name, n, dd, mm, io, lb)  # type: ignore[attr-defined]
                    if lb > 0:
                        least = min(least, io / lb)
                    checked += 1
    return checked, least


def assert_measured_count_above(bound: object, name: str, n: int, dd: int, mm: int) -> None:
    """The count-only run of the backward schedule ``name`` at (N, d, M) = (n, dd, mm) moves exactly its formula's
    words, and at least the (positive) lower bound ``bound`` there (d_v = d)."""
    from attnio.bounds.costs import backward_cost
    from attnio.bounds.expr import evaluate

    m = count(name, N=n, d=dd, M=mm)
    assert m.io == backward_cost(name, N=n, d=dd, M=mm)
    lb = evaluate(bound.expr, {"N": n, "d": dd, "M": mm, "dv": dd})  # type: ignore[attr-defined]
    assert lb > 0 and m.io_words >= lb
