"""Prove ``hyps ⇒ goal`` for every parameter value, by refutation, with a deterministic budget.

:func:`prove` asserts the symbol domains, the translator's auxiliary facts, the hypotheses and ``¬goal``, and
asks the solver:

- ``unsat``: **proved** (over the reals, hence over the integers: the encoding only over-approximates);
- ``sat``: the model is re-evaluated *exactly* (``attnio.bounds.expr.evaluate``) at the integer points around it
  (floor/ceil of every integer symbol). If one satisfies the hypotheses and violates the goal, the verdict is
  **refuted** with that integer counterexample. If none does, the claim is re-asked with integer symbols and
  integer floors/ceilings (exact encoding, same budget): ``unsat`` there is a proof over the integers,
  ``sat`` gives an integer counterexample (re-evaluated again), and anything else is **unknown** with the
  real-valued counterexample kept and labelled ``spurious``;
- ``unknown``: **unknown**, with the solver's reason (``canceled`` = rlimit or wall-clock cap hit).

Unknown is never a pass. The budget is a z3 ``rlimit`` (resource units: deterministic, machine-independent)
plus a wall-clock cap that should never bind on a healthy machine; cvc5 gets ``rlimit-per`` and ``tlimit-per``.

Side conditions (positive denominators, non-negative square-root arguments) are proved as a first obligation
(``hyps ⇒ side conditions``); with ``assume_defined=True`` they are instead assumed and listed in
``Outcome.assumed`` (used for claims about cost formulas, whose definedness is its own claim ``wd.<name>``).

>>> from attnio.bounds.symbols import N, d, M
>>> prove((M <= d**2,), N**2 * d / M >= N**2 / d).status
'proved'
>>> o = prove((M <= d**2,), N**2 * d**2 / M <= N**2)
>>> o.status, o.spurious, o.counterexample["M"] < o.counterexample["d"] ** 2
('refuted', False, True)
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from attnio.bounds.expr import Rel
from attnio.solver import logic
from attnio.solver.translator import Translator

# Budgets. Each z3 obligation runs a fixed portfolio of deterministic strategies, each under a resource limit
# (rlimit, counted by z3 itself, so it does not depend on machine speed) and a wall-clock cap (a safety net: on
# nonlinear problems some z3 phases tick the resource counter slowly, so the cap can bind first; a verdict
# reached under the cap is still sound, only "unknown" can depend on speed). benchmarks/bench_verify.py prints
# the time per claim.
RLIMIT = 20_000_000
CVC5_RLIMIT = 2_000_000
WALL_MS = 20_000
# (tactic, share of the wall-clock cap): the smt core with its nonlinear arithmetic module first (fast on
# most of our obligations), then z3's complete nlsat procedure, then z3's default portfolio.
Z3_PORTFOLIO = (("smt", 0.15), ("qfnra-nlsat", 0.15), ("default", 0.7))


@dataclass
class Outcome:
    status: str  # "proved" | "refuted" | "unknown"
    counterexample: dict[str, Fraction] | None = None
    spurious: bool = False
    reason: str = ""
    assumed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    mode: str = "real"  # the encoding that decided it


def _value(v: Any) -> Fraction:
    try:
        return Fraction(v.as_fraction())
    except Exception:
        pass
    try:
        return Fraction(v.approx(30).as_fraction())
    except Exception:
        pass
    text = str(v)
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        pass
    import re

    # cvc5 algebraic numbers print as "(_ real_algebraic_number <poly, (lo, hi)>)": take the interval's midpoint
    # (only used to pick nearby integer points, which are then evaluated exactly).
    m = re.search(r"\((-?[\d/]+), (-?[\d/]+)\)>", text)
    if m:
        return (Fraction(m.group(1)) + Fraction(m.group(2))) / 2
    return Fraction(text.rstrip("?"))


def _solver(backend: str, B: Any, rlimit: int | None, wall_ms: int, mode: str, tactic: str = "default") -> Any:
    if backend == "z3":
        s = B.Solver() if tactic == "default" else B.Tactic(tactic).solver()
        s.set("rlimit", rlimit or RLIMIT)
        s.set("timeout", max(1, int(wall_ms)))
        return s
    s = B.SolverFor("QF_NRA" if mode == "real" else "QF_NIRA")
    if mode == "real":
        s.set("nl-cov", True)
    s.set("rlimit-per", rlimit or CVC5_RLIMIT)
    s.set("tlimit-per", wall_ms)
    return s


def _check(
    hyps: Sequence[logic.Formula],
    goal: logic.Formula,
    backend: str,
    mode: str,
    rlimit: int | None,
    wall_ms: int,
    assume_defined: bool,
    only_side: bool = False,
) -> tuple[str, dict[str, Fraction] | None, str, list[str]]:
    """One solver call. Returns (sat|unsat|unknown, model over the claim's symbols, reason, assumed)."""
    if backend == "z3" and mode == "real":
        reasons = []
        for tactic, share in Z3_PORTFOLIO:
            st, model, reason, assumed = _check1(
                hyps, goal, backend, mode, rlimit, wall_ms * share, assume_defined, only_side, tactic
            )
            if st != "unknown":
                return st, model, reason, assumed
            reasons.append(f"{tactic}: {reason}")
        return "unknown", None, "; ".join(reasons), []
    return _check1(hyps, goal, backend, mode, rlimit, wall_ms, assume_defined, only_side, "default")


def _check1(
    hyps: Sequence[logic.Formula],
    goal: logic.Formula,
    backend: str,
    mode: str,
    rlimit: int | None,
    wall_ms: float,
    assume_defined: bool,
    only_side: bool,
    tactic: str,
) -> tuple[str, dict[str, Fraction] | None, str, list[str]]:
    t = Translator(backend, mode)
    hs = [t.formula(h) for h in hyps]
    g = t.formula(goal)
    B = t.B
    s = _solver(backend, B, rlimit, wall_ms, mode, tactic)
    s.add(*t.facts)
    s.add(*hs)
    assumed: list[str] = []
    sides = [term for _, term in t.side_conditions]
    if only_side:
        if not sides:
            return "unsat", None, "", []
        s.add(B.Not(B.And(*sides)))
    else:
        if sides:
            s.add(*sides)  # assumed here; proved separately unless assume_defined
            assumed = [w for w, _ in t.side_conditions]
        s.add(B.Not(g))
    r = s.check()
    if str(r) == "unsat":
        return "unsat", None, "", assumed
    if str(r) == "sat":
        m = s.model()
        names = sorted(logic.symbols_of(goal).union(*(logic.symbols_of(h) for h in hyps)), key=lambda x: x.name)
        model = {}
        for sym_ in names:
            v = t.vars.get(sym_.name)
            if v is not None:
                model[sym_.name] = _value(m.eval(v, model_completion=True))
        return "sat", model, "", assumed
    try:
        reason = s.reason_unknown()
    except Exception:
        reason = "unknown"
    return "unknown", None, str(reason), assumed


def integer_counterexample(
    hyps: Sequence[logic.Formula], goal: logic.Formula, model: dict[str, Fraction]
) -> dict[str, Fraction] | None:
    """An integer point next to ``model`` (floor/ceil of each integer symbol) where the hypotheses hold and the
    goal fails, evaluated exactly; None if there is none (the model is then spurious)."""
    syms = sorted(logic.symbols_of(goal).union(*(logic.symbols_of(h) for h in hyps)), key=lambda x: x.name)
    choices = []
    for s in syms:
        v = model.get(s.name, s.lo)
        if s.integer:
            cands = {math.floor(v), math.ceil(v)}
            cands = sorted(c for c in cands if c >= s.lo) or [math.ceil(s.lo)]
            choices.append([Fraction(c) for c in cands])
        else:
            choices.append([Fraction(v)])
    for point in itertools.product(*choices):
        env = {s.name: (int(v) if v.denominator == 1 else v) for s, v in zip(syms, point, strict=True)}
        try:
            if all(logic.holds(h, env) for h in hyps) and not logic.holds(goal, env):
                return {k: Fraction(v) for k, v in env.items()}
        except (ZeroDivisionError, ValueError, OverflowError):
            continue
    return None


def prove(
    hyps: Sequence[logic.Formula],
    goal: logic.Formula,
    *,
    backend: str = "z3",
    rlimit: int | None = None,
    wall_ms: int = WALL_MS,
    assume_defined: bool = False,
    int_retry: bool = True,
    relax: bool = True,
) -> Outcome:
    """Prove ``∧hyps ⇒ goal`` for all values of the symbols (each ≥ its ``lo``). See the module docstring.

    With ``relax`` (default), a goal ``lhs ≤ rhs`` containing floors or ceilings is first tried in the
    floor-free form ``relax(lhs, upper) ≤ relax(rhs, lower)`` (:mod:`attnio.solver.relax`), whose own side conditions
    are proved; only a proof is taken from it, anything else falls back to the exact encoding."""
    t0 = time.perf_counter()
    hyps = tuple(hyps)
    if relax and isinstance(goal, Rel) and goal.op in ("<=", "<"):
        from attnio.solver.relax import is_exact
        from attnio.solver.relax import relax as _relax

        if not (is_exact(goal.lhs) and is_exact(goal.rhs)):
            lhs = goal.lhs if is_exact(goal.lhs) else _relax(goal.lhs, "upper")
            rhs = goal.rhs if is_exact(goal.rhs) else _relax(goal.rhs, "lower")
            if is_exact(lhs) and is_exact(rhs):
                o = prove(hyps, Rel(goal.op, lhs, rhs), backend=backend, rlimit=rlimit, wall_ms=wall_ms // 4,
                          assume_defined=False, int_retry=False, relax=False)
                if o.status == "proved":
                    o.mode = "relaxed"
                    o.seconds = time.perf_counter() - t0
                    return o
    if not assume_defined:
        st, model, reason, _ = _check(hyps, goal, backend, "real", rlimit, wall_ms, False, only_side=True)
        if st != "unsat":
            out = _classify_side(hyps, goal, st, model, reason, backend, rlimit, wall_ms)
            out.seconds = time.perf_counter() - t0
            return out
    st, model, reason, assumed = _check(hyps, goal, backend, "real", rlimit, wall_ms, assume_defined)
    out = Outcome("unknown", reason=reason, assumed=assumed if assume_defined else [])
    if st == "unsat":
        out.status = "proved"
    elif st == "sat":
        assert model is not None
        cex = integer_counterexample(hyps, goal, model)
        if cex is not None:
            out.status, out.counterexample = "refuted", cex
        elif int_retry:
            st2, model2, reason2, _ = _check(hyps, goal, backend, "int", rlimit, wall_ms, assume_defined)
            out.mode = "int"
            if st2 == "unsat":
                out.status = "proved"
            elif st2 == "sat" and model2 is not None and (cex2 := integer_counterexample(hyps, goal, model2)):
                out.status, out.counterexample = "refuted", cex2
            else:
                out.counterexample, out.spurious = model, True
                out.reason = f"real counterexample not valid at integer points; integer re-check: {st2} {reason2}"
        else:
            out.counterexample, out.spurious = model, True
            out.reason = "real counterexample not valid at integer points"
    out.seconds = time.perf_counter() - t0
    return out


def _classify_side(hyps, goal, st, model, reason, backend, rlimit, wall_ms) -> Outcome:
    if st == "sat" and model is not None:
        # an integer point where some expression of the claim is undefined (denominator ≤ 0 or sqrt of < 0)
        syms = sorted(logic.symbols_of(goal).union(*(logic.symbols_of(h) for h in hyps)), key=lambda x: x.name)
        for point in itertools.product(
            *[
                sorted({math.floor(model.get(s.name, s.lo)), math.ceil(model.get(s.name, s.lo))})
                if s.integer
                else [model.get(s.name, s.lo)]
                for s in syms
            ]
        ):
            env = {s.name: v for s, v in zip(syms, point, strict=True)}
            try:
                if not all(logic.holds(h, env) for h in hyps):
                    continue
                if not logic.holds(goal, env):
                    return Outcome(
                        "refuted",
                        {k: Fraction(v) for k, v in env.items()},
                        reason="a denominator is not positive here, and the goal fails",
                    )
            except (ZeroDivisionError, ValueError):
                return Outcome(
                    "refuted",
                    {k: Fraction(v) for k, v in env.items()},
                    reason="an expression of the claim is undefined here (denominator 0 or square root of < 0)",
                )
        return Outcome("unknown", model, spurious=True, reason="definedness: real counterexample not valid at integers")
    return Outcome("unknown", reason=f"definedness obligation: {st} {reason}")
