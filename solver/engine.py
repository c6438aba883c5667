"""Prove ``hyps ⇒ goal`` for every parameter value, by refutation, under deterministic resource limits.

:func:`prove` runs up to three obligations, each decided by the solver under a resource limit:

1. **non-vacuity** (``vacuity=True``): the hypotheses, together with the definedness conditions of every
   expression of the claim (denominators > 0, square-root arguments ≥ 0, logarithm arguments > 0), hold at
   some *integer* point of the symbols' domains. The point is found by the solver (real encoding, then the
   exact integer encoding) and re-evaluated exactly (:mod:`attnio.bounds.expr`); it is returned as
   ``Outcome.witness``. ``unsat`` gives **vacuous** (never a pass: anything follows from an empty regime);
   a point that cannot be found or confirmed gives **unknown**;
2. **definedness** (``defined=True``): ``hyps ⇒ every definedness condition`` (a true implication, proved, never
   assumed). An integer point of the regime where a condition fails gives **refuted**, with the conditions
   the claim needs in ``reason``; the proved conditions are listed in ``Outcome.defined``;
3. **the claim**: ``facts ∧ hyps ∧ conditions ∧ ¬goal`` (the conditions are used only once proved in step 2,
   or by the caller at claim level: ``vacuity=False, defined=False`` says so):

   - ``unsat``: **proved** (over the reals, hence over the integers: the encoding only over-approximates);
   - ``sat``: the model is re-evaluated *exactly* at the integer points around it (floor/ceil of every integer
     symbol). If one satisfies the hypotheses and violates the goal, **refuted** with that integer
     counterexample. If none does, the obligation is re-asked with integer symbols and integer floors/ceilings
     (exact encoding, same budget): ``unsat`` there is a proof over the integers, ``sat`` gives an integer
     counterexample (re-evaluated again), anything else is **unknown** with the real model labelled
     ``spurious``;
   - ``unknown``: **unknown**, with the solver's reason.

Determinism: every solver call has a solver of its own, in a context created for its claim (:func:`claim_scope`;
for a call outside a claim, for the call), under a resource limit (z3 ``rlimit``, cvc5
``rlimit-per``), counted by the solver itself, so the verdict does not depend on machine speed or load, nor on
what ran before in the process. A wall-clock cap (``GUARD_S``) guards only against a solver that hangs; hitting
it is an **error** (``SolverGuard``), never a silent unknown.

>>> from attnio.bounds.symbols import N, d, M
>>> o = prove((M <= d**2,), N**2 * d / M >= N**2 / d)
>>> o.status, sorted(o.witness) == ["M", "N", "d"]
('proved', True)
>>> o = prove((M <= d**2,), N**2 * d**2 / M <= N**2)
>>> o.status, o.spurious, o.counterexample["M"] < o.counterexample["d"] ** 2
('refuted', False, True)
>>> prove((4 * d**2 <= M, M <= d), N <= M).status      # an empty regime proves nothing
'vacuous'
"""

from __future__ import annotations

import contextlib
import functools
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

# Budgets: resource units counted by the solver (deterministic, machine-independent). A z3 real-encoding
# obligation runs a fixed portfolio of strategies, each under its own rlimit: z3's complete nlsat procedure
# (decides all but one of the catalog's real obligations, the largest proof using 1.3M units), then the smt core
# with its nonlinear module, then z3's default portfolio. The smt core is not first: on some nonlinear
# obligations it counts resources slowly (under 100k units a second), so a budget large enough for its proofs
# would let it spin for tens of seconds. Budgets were set at about twice the largest proof of the catalog
# (benchmarks/bench_verify.py prints the time per claim).
Z3_PORTFOLIO: tuple[tuple[str, int], ...] = (("qfnra-nlsat", 1_400_000), ("smt", 1_000_000), ("default", 5_000_000))
Z3_INT_RLIMIT = 2_500_000  # the exact integer re-check (one call, z3's default solver; largest catalog use: 1.0M)
CVC5_RLIMIT = 2_000_000  # cvc5 ``rlimit-per``
# A crash guard, not a budget: a call still running after GUARD_S seconds is stopped and reported as an error.
GUARD_S = 300.0

STATUSES = ("proved", "refuted", "vacuous", "unknown", "error")


class SolverGuard(Exception):
    """A solver call hit the wall-clock crash guard (GUARD_S): the verdict is an error, not unknown."""


@dataclass
class Outcome:
    status: str  # "proved" | "refuted" | "vacuous" | "unknown" | "error"
    counterexample: dict[str, Fraction] | None = None
    spurious: bool = False
    reason: str = ""
    assumed: list[str] = field(default_factory=list)  # conditions used without proof: always empty
    seconds: float = 0.0
    mode: str = "real"  # the encoding that decided it
    witness: dict[str, Fraction] | None = None  # an integer point of the hypotheses (non-vacuity), if checked
    defined: list[str] = field(default_factory=list)  # definedness conditions proved from the hypotheses
    proved_goal: Any = None  # the goal the solver proved: the claim's, or its floor-free relaxation (mode "relaxed")


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


def _solver(t: Translator, rlimit: int, tactic: str) -> Any:
    B = t.B
    if t.backend == "z3":
        s = B.Solver(ctx=t.ctx) if tactic == "default" else B.Tactic(tactic, t.ctx).solver()
        s.set("rlimit", rlimit)
        s.set("timeout", int(GUARD_S * 1000))
        return s
    s = B.SolverFor("QF_NRA" if t.mode == "real" else "QF_NIRA", ctx=t.ctx)
    for k, v in CVC5_OPTIONS[tactic if t.mode == "real" else "int"]:
        s.set(k, v)
    s.set("rlimit-per", rlimit)
    s.set("tlimit-per", int(_guard(t.backend, tactic) * 1000))
    return s


def _guard(backend: str, tactic: str = "") -> float:
    return GUARD_S if backend == "z3" else CVC5_STAGE_GUARDS.get(tactic, CVC5_STAGE_S)


# cvc5 options for nonlinear arithmetic, a three-stage portfolio over the reals: cylindrical algebraic coverings
# alone (complete over the reals; decides most catalog obligations in well under a second, where cvc5's default
# of coverings with the incremental linearisation lemmas of nl-ext ran for minutes without counting resources),
# then nl-ext's incremental linearisation alone under a short guard (CVC5_STAGE_GUARDS: it decides in a few
# seconds some obligations whose many auxiliary variables, log₂ brackets or nested floors, slow the coverings
# down, e.g. sy.thm4.14.below-fa: 0.3 s against 37 s), then coverings with nl-ext (needed by a few obligations).
# Integers (the exact re-check):
# cvc5's defaults. cvc5 does not always count resources promptly in these procedures, so each stage also has a
# wall-clock guard (CVC5_STAGE_S): a stage that hits it passes to the next; the last one is an error. cvc5's
# answers (the second opinion) can therefore depend on machine load; z3's verdicts cannot.
CVC5_OPTIONS: dict[str, tuple[tuple[str, Any], ...]] = {
    "cov": (("nl-cov", True), ("nl-ext", "none")),
    "ext": (("nl-cov", False), ("nl-ext", "full")),
    "cov+ext": (("nl-cov", True), ("nl-ext", "light")),
    "int": (),
}
CVC5_STAGE_S = 12.0
CVC5_STAGE_GUARDS: dict[str, float] = {"ext": 4.0}  # stages with a shorter guard than CVC5_STAGE_S


def _names(formulas: Sequence[logic.Formula]) -> list:
    return sorted(frozenset().union(*(logic.symbols_of(f) for f in formulas)), key=lambda x: x.name)


def _check(
    hyps: Sequence[logic.Formula],
    goal: logic.Formula,
    backend: str,
    mode: str,
    rlimit: int | None,
    what: str,
) -> tuple[str, dict[str, Fraction] | None, str, Translator | None]:
    """One obligation, by portfolio (z3, real encoding) or one call. ``what``: "main" (hyps ∧ conditions ∧ ¬goal),
    "side" (hyps ∧ ¬conditions) or "sat" (hyps ∧ conditions, goal translated only for its conditions).
    Returns (sat|unsat|unknown, model over the claim's symbols, reason, translator)."""
    if backend == "z3" and mode == "real":
        plan = [(tac, rlimit or lim) for tac, lim in Z3_PORTFOLIO]
    elif backend == "z3":
        plan = [("default", rlimit or Z3_INT_RLIMIT)]
    elif mode == "real":
        plan = [("cov", rlimit or CVC5_RLIMIT), ("ext", rlimit or CVC5_RLIMIT), ("cov+ext", rlimit or CVC5_RLIMIT)]
    else:
        plan = [("default", rlimit or CVC5_RLIMIT)]
    reasons = []
    for i, (tactic, lim) in enumerate(plan):
        try:
            if backend == "cvc5":
                st, model, reason, t = _in_child(hyps, goal, mode, lim, what, tactic)
            else:
                st, model, reason, t = _check1(hyps, goal, backend, mode, lim, what, tactic)
        except SolverGuard as e:
            if backend == "z3" or i == len(plan) - 1:
                raise
            st, model, reason, t = "unknown", None, str(e), None
        if st != "unknown":
            return st, model, reason, t
        reasons.append(f"{tactic}: {reason}" if len(plan) > 1 else reason)
    return "unknown", None, "; ".join(reasons), None


def _child(q, args) -> None:  # runs in a forked child
    try:
        st, model, reason, _ = _check1(*args)
        q.put((st, model, reason))
    except SolverGuard as e:
        q.put(("guard", None, str(e)))


def _in_child(hyps, goal, mode: str, rlimit: int, what: str, tactic: str):
    """One cvc5 call in a forked child process, killed after its stage's guard (CVC5_STAGE_S, or CVC5_STAGE_GUARDS): cvc5 honours neither its
    resource nor its time limit inside some nonlinear procedures, and only a process can be stopped from outside."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_child, args=(q, (hyps, goal, "cvc5", mode, rlimit, what, tactic)))
    p.start()
    try:
        st, model, reason = q.get(timeout=_guard("cvc5", tactic))
    except Exception:
        st, model, reason = "guard", None, ""
    finally:
        if p.is_alive():
            p.kill()
        p.join()
    if st == "guard":
        raise SolverGuard(f"cvc5 {tactic} ran past the {_guard('cvc5', tactic):.0f} s crash guard {reason}".strip())
    return st, model, reason, None


# Translations shared by the obligations of one claim (claim_scope): None outside a claim.
_SHARED: dict | None = None


@contextlib.contextmanager
def claim_scope():
    """Within one claim, z3 obligations over the same hypotheses and goal (non-vacuity, definedness, the claim
    itself; each strategy of the portfolio) share one translation and its context, each with a solver of its
    own. The scope is one claim, run start to end in one process, so what a solver call sees depends only on
    the claim, never on what ran before it in the process."""
    global _SHARED
    prev, _SHARED = _SHARED, {}
    try:
        yield
    finally:
        _SHARED = prev


def _check1(
    hyps: Sequence[logic.Formula], goal: logic.Formula, backend: str, mode: str, rlimit: int, what: str, tactic: str
) -> tuple[str, dict[str, Fraction] | None, str, Translator]:
    key = (tuple(hyps), goal, backend, mode)
    if _SHARED is not None and backend == "z3" and key in _SHARED:
        t, hs, g = _SHARED[key]
    else:
        t = Translator(backend, mode)
        hs = [t.formula(h) for h in hyps]
        g = t.formula(goal)
        if _SHARED is not None and backend == "z3":
            _SHARED[key] = (t, hs, g)
    B = t.B
    s = _solver(t, rlimit, tactic)
    s.add(*t.facts_for(what))
    s.add(*hs)
    sides = [term for _, term in t.side_conditions]
    if what == "side":
        if not sides:
            return "unsat", None, "", t
        s.add(B.Not(B.And(*sides)))
    else:
        s.add(*sides)
        if what == "main":
            s.add(B.Not(g))
    t0 = time.perf_counter()
    r = s.check()
    if str(r) == "unsat":
        return "unsat", None, "", t
    if str(r) == "sat":
        m = s.model()
        model = {}
        for sym_ in _names([goal, *hyps]):
            v = t.vars.get(sym_.name)
            if v is not None:
                model[sym_.name] = _value(m.eval(v, model_completion=True))
        return "sat", model, "", t
    try:
        reason = str(s.reason_unknown())
    except Exception:
        reason = "unknown"
    if time.perf_counter() - t0 >= 0.95 * _guard(backend, tactic):
        raise SolverGuard(f"{backend} {tactic} ran past the {_guard(backend, tactic):.0f} s crash guard ({reason})")
    return "unknown", None, reason, t


def _neighbours(syms: list, model: dict[str, Fraction]):
    choices = []
    for s in syms:
        v = model.get(s.name, s.lo)
        if s.integer:
            cands = sorted(c for c in {math.floor(v), math.ceil(v)} if c >= s.lo) or [math.ceil(s.lo)]
            choices.append([Fraction(c) for c in cands])
        else:
            choices.append([Fraction(max(v, s.lo))])
    for point in itertools.product(*choices):
        yield {s.name: (int(v) if v.denominator == 1 else v) for s, v in zip(syms, point, strict=True)}


def integer_counterexample(
    hyps: Sequence[logic.Formula], goal: logic.Formula, model: dict[str, Fraction]
) -> dict[str, Fraction] | None:
    """An integer point next to ``model`` (floor/ceil of each integer symbol) where the hypotheses hold and the
    goal fails, evaluated exactly; None if there is none (the model is then spurious)."""
    for env in _neighbours(_names([goal, *hyps]), model):
        try:
            if all(logic.holds(h, env) for h in hyps) and not logic.holds(goal, env):
                return {k: Fraction(v) for k, v in env.items()}
        except (ZeroDivisionError, ValueError, OverflowError):
            continue
    return None


def conditions(hyps: Sequence[logic.Formula], goal: logic.Formula) -> list[Rel]:
    """The definedness conditions of every expression in ``hyps`` and ``goal`` (as exact relations)."""
    return list(_conditions(tuple(hyps), goal))


@functools.lru_cache(maxsize=64)  # a pure function of its arguments: non-vacuity and definedness both ask for it
def _conditions(hyps: tuple[logic.Formula, ...], goal: logic.Formula) -> tuple[Rel, ...]:
    t = Translator("z3", scratch=True)
    for f in (*hyps, goal):
        t.formula(f)
    return tuple(t.side_rels)


def _is_witness(hyps: Sequence[logic.Formula], conds: Sequence[Rel], env: dict) -> bool:
    try:
        return all(c.holds(env) for c in conds) and all(logic.holds(h, env) for h in hyps)
    except (ZeroDivisionError, ValueError, OverflowError):
        return False


def find_witness(
    hyps: Sequence[logic.Formula], goal: logic.Formula, *, backend: str = "z3", rlimit: int | None = None
) -> tuple[str, dict[str, Fraction] | None, str]:
    """Non-vacuity: an integer point where the hypotheses and the definedness conditions of ``hyps`` and ``goal``
    hold, checked exactly. Returns ("found", point, "") | ("vacuous", None, why) | ("unknown", None, why).

    The point is searched with z3 whatever ``backend`` is: it is re-evaluated exactly, so the solver that
    found it does not matter (and cvc5 finds points of some catalog regimes only slowly)."""
    hyps = tuple(hyps)
    backend = "z3"
    conds = conditions(hyps, goal)
    syms = _names([goal, *hyps])
    undecided = []
    for sort, points in (("real", "real"), ("int", "integer")):  # a real point first, then an integer one
        st, model, reason, _ = _check(hyps, goal, backend, sort, rlimit, "sat")
        if st == "unsat":
            return "vacuous", None, f"the hypotheses (with the definedness conditions) hold at no {points} point"
        if st == "sat":
            assert model is not None
            for env in _neighbours(syms, model):
                if _is_witness(hyps, conds, env):
                    return "found", {k: Fraction(v) for k, v in env.items()}, ""
            if sort == "int":
                return "unknown", None, "non-vacuity: the solver's integer point fails the exact re-evaluation"
        undecided.append(f"{points} {st} {reason}")
    return "unknown", None, f"non-vacuity undecided: {'; '.join(undecided)}".strip()


def _failing(conds: Sequence[Rel], env: dict) -> list[str]:
    out = []
    for c in conds:
        try:
            if not c.holds(env):
                out.append(str(c))
        except (ZeroDivisionError, ValueError, OverflowError):
            out.append(str(c))
    return out


def check_defined(
    hyps: Sequence[logic.Formula], goal: logic.Formula, *, backend: str = "z3", rlimit: int | None = None
) -> Outcome:
    """Definedness: prove ``hyps ⇒ every definedness condition of hyps and goal``. ``proved`` lists the conditions
    in ``defined``; ``refuted`` gives an integer point of the regime where some condition fails (named in
    ``reason``: the condition the claim needs); ``unknown`` otherwise."""
    hyps = tuple(hyps)
    conds = conditions(hyps, goal)
    names = [str(c) for c in conds]
    if not conds:
        return Outcome("proved")
    syms = _names([goal, *hyps])
    for mode in ("real", "int"):
        st, model, reason, _ = _check(hyps, goal, backend, mode, rlimit, "side")
        if st == "unsat":
            return Outcome("proved", defined=names, mode=mode)
        if st == "sat":
            assert model is not None
            for env in _neighbours(syms, model):
                try:
                    if not all(logic.holds(h, env) for h in hyps):
                        continue
                except (ZeroDivisionError, ValueError, OverflowError):
                    pass  # a hypothesis itself undefined here: the point is in no regime, try the next
                else:
                    bad = _failing(conds, env)
                    if bad:
                        return Outcome(
                            "refuted",
                            {k: Fraction(v) for k, v in env.items()},
                            reason="not defined everywhere in its regime: needs " + ", ".join(bad),
                            mode=mode,
                        )
        last = f"{mode}: {st} {reason}".strip()
    return Outcome("unknown", reason=f"definedness undecided ({last})")


def prove(
    hyps: Sequence[logic.Formula],
    goal: logic.Formula,
    *,
    backend: str = "z3",
    rlimit: int | None = None,
    vacuity: bool = True,
    defined: bool = True,
    int_retry: bool = True,
    relax: bool = True,
) -> Outcome:
    """Prove ``∧hyps ⇒ goal`` for all values of the symbols (each ≥ its ``lo``). See the module docstring.

    ``vacuity=False`` / ``defined=False`` skip the non-vacuity / definedness obligations: only for a caller that
    has proved them itself for the same hypotheses and every expression of ``goal`` (:mod:`attnio.solver.verify`
    does, once per claim, before the obligations of a bisection).

    With ``relax`` (default), a goal ``lhs ≤ rhs`` containing floors or ceilings is first tried in the
    floor-free form ``relax(lhs, upper) ≤ relax(rhs, lower)`` (:mod:`attnio.solver.relax`), whose own
    definedness conditions are proved; only a proof is taken from it, anything else falls back to the exact
    encoding."""
    t0 = time.perf_counter()
    hyps = tuple(hyps)
    try:
        out = _prove(hyps, goal, backend, rlimit, vacuity, defined, int_retry, relax)
    except SolverGuard as e:
        out = Outcome("error", reason=str(e))
    out.seconds = time.perf_counter() - t0
    return out


def _prove(hyps, goal, backend, rlimit, vacuity, defined, int_retry, relax) -> Outcome:
    witness = None
    if vacuity:
        st, witness, why = find_witness(hyps, goal, backend=backend, rlimit=rlimit)
        if st != "found":
            return Outcome(st, reason=why)
    proved_conds: list[str] = []
    if defined:
        od = check_defined(hyps, goal, backend=backend, rlimit=rlimit)
        if od.status != "proved":
            od.witness = witness
            return od
        proved_conds = od.defined
    if relax and isinstance(goal, Rel) and goal.op in ("<=", "<"):
        from attnio.solver.relax import is_exact
        from attnio.solver.relax import relax as _relax

        if not (is_exact(goal.lhs) and is_exact(goal.rhs)):
            lhs = goal.lhs if is_exact(goal.lhs) else _relax(goal.lhs, "upper")
            rhs = goal.rhs if is_exact(goal.rhs) else _relax(goal.rhs, "lower")
            if is_exact(lhs) and is_exact(rhs):
                relaxed = Rel(goal.op, lhs, rhs)
                o = _prove(hyps, relaxed, backend, rlimit, False, True, False, False)
                if o.status == "proved":
                    o.mode = "relaxed"
                    o.proved_goal = relaxed
                    o.witness = witness
                    o.defined = sorted(set(proved_conds) | set(o.defined))
                    return o
    st, model, reason, _ = _check(hyps, goal, backend, "real", rlimit, "main")
    out = Outcome("unknown", reason=reason, witness=witness, defined=proved_conds)
    if st == "unsat":
        out.status = "proved"
    elif st == "sat":
        assert model is not None
        cex = integer_counterexample(hyps, goal, model)
        if cex is not None:
            out.status, out.counterexample = "refuted", cex
        elif int_retry:
            st2, model2, reason2, _ = _check(hyps, goal, backend, "int", rlimit, "main")
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
    return out

