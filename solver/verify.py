"""Verify claims: turn each :mod:`attnio.solver.claims` record into solver obligations and a plain-data :class:`Verdict`.

``verify_all(claim_ids=None, solver="z3", jobs=None)`` is the API the CLI and the report use. ``solver`` is
``"z3"``, ``"cvc5"`` or ``"both"`` (z3 decides; every obligation z3 proved, the claim's definedness obligation
included, for a tightest constant the found c and for a crossover its two proved sides, is re-proved by cvc5
in a child process). cvc5 refuting what z3 proved is an error (verdict status ``"error"``); cvc5 unable to
decide within its resource limit is reported as ``crosscheck="unknown"`` next to z3's proof.

Every claim is checked, besides its own obligations, for **non-vacuity** (its hypotheses hold at an integer
point, shown as ``Verdict.witness``; a coverage family's every regime, and a crossover's two proved sides,
likewise) and **definedness** (the hypotheses imply every denominator > 0, square-root argument ≥ 0 and
logarithm argument > 0 of the claim; listed in ``Verdict.defined``). See docs/solver.md.

A verdict's ``status`` is ``proved``, ``refuted``, ``vacuous``, ``unknown`` or ``error``. ``ok`` is True only
for ``proved``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from typing import Any

from attnio.bounds.expr import to_text
from attnio.solver import logic
from attnio.solver.claims import all_claims
from attnio.solver.claims.types import LINK_FIELDS, Claim, Coverage, Crossover, Implication, Tightest
from attnio.solver.engine import Outcome, SolverGuard, check_defined, claim_scope, find_witness, prove
from attnio.solver.logic import All, Neg
from attnio.solver.relax import flatten

SOLVERS = ("z3", "cvc5", "both")


@dataclass
class Verdict:
    id: str
    kind: str
    description: str
    status: str  # proved | refuted | vacuous | unknown | error
    seconds: float
    constant: str | None = None
    counterexample: dict[str, str] | None = None
    spurious: bool = False
    reason: str = ""
    solver: str = "z3"
    crosscheck: str | None = None  # cvc5 on the proved obligations (solver="both"): proved | unknown | error | disagrees
    assumed: list[str] = field(default_factory=list)  # conditions used without proof: empty (see `defined`)
    details: list[dict] = field(default_factory=list)
    about: list[str] = field(default_factory=list)  # the catalog bounds the claim is about (Claim.about)
    meta: str = ""  # for a meta-claim (about no one bound): why (Claim.meta)
    where: str = ""  # the module:function that built the claim (Claim.where)
    witness: dict[str, str] | None = None  # non-vacuity: an integer point of the hypotheses, checked exactly
    defined: list[str] = field(default_factory=list)  # definedness conditions proved from the hypotheses
    solvers: dict[str, str] = field(default_factory=dict)  # each solver's answer: {"z3": "proved", "cvc5": ...}

    @classmethod
    def of(cls, c: Claim, status: str, t0: float, *rest: Any, **fields: Any) -> Verdict:
        """The verdict ``status`` on claim ``c``, timed from ``t0`` (a :func:`time.perf_counter` reading)."""
        return cls(c.id, c.kind, c.description, status, time.perf_counter() - t0, *rest, **fields)

    @property
    def ok(self) -> bool:
        return self.status == "proved"

    def to_json(self) -> dict:
        return asdict(self)


def statement(c: Claim) -> str:
    """What a claim states, as plain-data text: its fields' reprs (id, kind, text, hypotheses, goal and
    parameters) without the link fields (:data:`~attnio.solver.claims.types.LINK_FIELDS`: the bounds it is
    about, a meta note, where it was built), which say where it belongs, not what it says."""
    import dataclasses

    parts = (f"{x.name}={getattr(c, x.name)!r}" for x in dataclasses.fields(c) if x.name not in LINK_FIELDS)
    return f"{type(c).__name__}({', '.join(parts)})"


def fingerprint(c: Claim) -> str:
    """A digest of what a claim states (:func:`statement`, and its symbols' domains): a cvc5 record (``attnio
    verify --solver both --record``) counts a claim only while its fingerprint is unchanged; a new link
    (``about``) leaves it unchanged.

    >>> from attnio.solver.claims import by_id
    >>> len(fingerprint(by_id("sy.meet")))
    16
    """
    import hashlib

    domains = sorted((x.name, x.integer, str(x.lo)) for x in _symbols(c))  # a symbol's domain is part of the claim
    lemmas = ""
    if getattr(c, "lemmas", ()):  # a claim re-proved through lemmas changes when one of them does
        from attnio.solver.claims import by_id

        lemmas = "".join(fingerprint(by_id(lid)) for lid in c.lemmas)
    return hashlib.sha256((statement(c) + repr(domains) + lemmas).encode()).hexdigest()[:16]


def _symbols(x: object, seen: set | None = None) -> set:
    """Every symbol in a claim's plain data (hypotheses, goals, shapes, axes), by walking its fields."""
    import dataclasses

    from attnio.bounds.expr import Sym

    out: set = set()
    stack = [x]
    while stack:
        y = stack.pop()
        if isinstance(y, Sym):
            out.add(y)
        elif dataclasses.is_dataclass(y) and not isinstance(y, type):
            stack.extend(getattr(y, f.name) for f in dataclasses.fields(y))
        elif isinstance(y, tuple | list | frozenset | set):
            stack.extend(y)
        elif isinstance(y, dict):
            stack.extend(y.values())
    return out


def _cex(c: dict[str, Fraction] | None) -> dict[str, str] | None:
    return None if c is None else {k: str(v) for k, v in sorted(c.items())}


class _Runner:
    """Runs obligations with one backend, remembering the proved ones for the cvc5 re-check."""

    def __init__(self, backend: str, rlimit: int | None = None) -> None:
        self.backend = backend
        self.rlimit = rlimit
        # ("main", hyps, goal, defined, relax) or ("defined", hyps, goal): proved obligations, for cvc5
        self.proved: list[tuple] = []

    def prove(self, hyps: Sequence[logic.Formula], goal: logic.Formula, *, checked: bool = False,
              relax: bool = True) -> Outcome:
        """One obligation. ``checked``: non-vacuity and definedness of ``hyps`` and every expression of ``goal``
        were proved at claim level (:meth:`claim_checks`); otherwise :func:`prove` proves them here."""
        o = prove(tuple(hyps), goal, backend=self.backend, rlimit=self.rlimit, vacuity=not checked,
                  defined=not checked, relax=relax)
        if o.status == "proved":
            # cvc5 re-proves what z3 proved: the relaxed goal when the floor-free relaxation was proved (it implies
            # the claim's goal: solver/relax.py, checked exactly in tests/test_solver.py)
            if o.proved_goal is not None:
                self.proved.append(("main", tuple(hyps), o.proved_goal, True, False))
            else:
                self.proved.append(("main", tuple(hyps), goal, not checked, relax))
        return o

    def claim_checks(self, hyps: Sequence[logic.Formula], exprs: logic.Formula) -> Outcome:
        """Non-vacuity then definedness of ``hyps`` with every expression of ``exprs``; ``proved`` carries the
        witness and the proved conditions, anything else is the claim's verdict."""
        t0 = time.perf_counter()
        try:
            st, w, why = find_witness(tuple(hyps), exprs, backend=self.backend, rlimit=self.rlimit)
            if st != "found":
                return Outcome(st, reason=why, seconds=time.perf_counter() - t0)
            o = check_defined(tuple(hyps), exprs, backend=self.backend, rlimit=self.rlimit)
        except SolverGuard as e:
            return Outcome("error", reason=str(e), seconds=time.perf_counter() - t0)
        o.witness = w
        o.seconds = time.perf_counter() - t0
        if o.status == "proved" and o.defined:
            self.proved.append(("defined", tuple(hyps), exprs))
        return o


def scope(c: Claim) -> tuple[tuple[logic.Formula, ...], logic.Formula]:
    """The claim's hypotheses and a formula holding every expression its obligations use: what the claim-level
    non-vacuity and definedness checks are about."""
    if isinstance(c, Implication):
        return tuple(c.hyps), c.goal
    if isinstance(c, Coverage):
        return tuple(c.domain), All(tuple(p for _, rs in c.regimes for p in rs))
    if isinstance(c, Tightest):
        return tuple(c.hyps), c.f <= c.g + c.extra  # the same expressions as every claim_at(c)
    if isinstance(c, Crossover):
        return tuple(c.hyps), All((c.a < c.b, c.axis <= c.axis))  # every expression of every side
    raise TypeError(type(c).__name__)


def precheck(c: Claim, backend: str = "z3") -> Outcome:
    """Non-vacuity (an integer witness) and definedness of one claim, without its own obligations: ``proved``
    with ``witness`` and ``defined``, or the verdict the claim would get (vacuous, refuted, unknown, error)."""
    return _Runner(backend).claim_checks(*scope(c))


def _early(c: Claim, o: Outcome, t0: float) -> Verdict:
    """The verdict of a claim whose claim-level checks failed (vacuous, refuted by definedness, unknown, error)."""
    return Verdict.of(c, o.status, t0, counterexample=_cex(o.counterexample),
                      spurious=o.spurious, reason=o.reason, witness=_cex(o.witness))


# ------------------------------------------------------------------------------------------------ per kind
def _implication(c: Implication, r: _Runner) -> Verdict:
    o = r.prove(c.hyps, c.goal)
    return Verdict(
        c.id,
        c.kind,
        c.description,
        o.status,
        o.seconds,
        counterexample=_cex(o.counterexample),
        spurious=o.spurious,
        reason=o.reason,
        assumed=o.assumed,
        witness=_cex(o.witness),
        defined=o.defined,
        details=[{"goal": logic.to_text(c.goal), "hyps": [logic.to_text(h) for h in c.hyps], "mode": o.mode}],
    )


def _coverage(c: Coverage, r: _Runner) -> Verdict:
    t0 = time.perf_counter()
    _, every = scope(c)
    pre = r.claim_checks(c.domain, every)
    if pre.status != "proved":
        return _early(c, pre, t0)
    details: list[dict] = []
    # every regime of the family is non-empty inside the domain (a typo that empties one is caught here)
    for name, rs in c.regimes:
        try:
            st, w, why = find_witness(tuple(c.domain) + tuple(rs), every, backend=r.backend, rlimit=r.rlimit)
        except SolverGuard as e:
            st, w, why = "error", None, str(e)
        details.append({"obligation": f"regime {name} non-empty", "status": "proved" if st == "found" else st,
                        "witness": _cex(w)})
        if st != "found":
            return Verdict.of(c, st, t0,
                              reason=f"regime {name}: {why}", witness=_cex(pre.witness), details=details)
    obligations: list[tuple[str, logic.Formula]] = [
        ("no gap", logic.Any(tuple(All(rs) for _, rs in c.regimes)))
    ]
    for i, (na, ra) in enumerate(c.regimes):
        for nb, rb in c.regimes[i + 1 :]:
            obligations.append((f"no overlap {na}/{nb}", Neg(All(tuple(ra) + tuple(rb)))))
    status, cex, spurious, reason = "proved", None, False, ""
    for what, goal in obligations:
        o = r.prove(c.domain, goal, checked=True)
        details.append({"obligation": what, "status": o.status, "counterexample": _cex(o.counterexample)})
        if o.status != "proved" and status == "proved":
            status, cex, spurious, reason = o.status, o.counterexample, o.spurious, f"{what}: {o.reason}".strip(": ")
    return Verdict.of(c, status, t0, None, _cex(cex), spurious, reason,
                      details=details, witness=_cex(pre.witness), defined=pre.defined)


def _grid_search(pred, lo_k: int, hi_k: int) -> tuple[int, int, dict]:
    """Bisection on integers: pred(lo_k) is False (refuted), pred(hi_k) True (proved); returns adjacent
    (lo_k, hi_k). ``pred`` returns True/False, or raises _Undecided."""
    steps = {}
    while hi_k - lo_k > 1:
        mid = (lo_k + hi_k) // 2
        ok = pred(mid)
        steps[mid] = ok
        if ok:
            hi_k = mid
        else:
            lo_k = mid
    return lo_k, hi_k, steps


class _Undecided(Exception):
    def __init__(self, what: str, outcome: Outcome) -> None:
        super().__init__(what)
        self.what = what
        self.outcome = outcome


def _decide(o: Outcome, what: str) -> bool:
    """True for proved, False for a valid refutation; anything else stops the bisection (_Undecided)."""
    if o.status == "proved":
        return True
    if o.status == "refuted" and not o.spurious:
        return False
    raise _Undecided(what, o)


def _exact_truth(f: logic.Formula, env: dict) -> bool | None:
    """The truth value of ``f`` at ``env`` when every side of every relation evaluates to a rational number;
    None when one is irrational (a float: a square root or logarithm that is not an integer's)."""
    from attnio.bounds.expr import Rel, evaluate

    if isinstance(f, Rel):
        a, b = evaluate(f.lhs, env), evaluate(f.rhs, env)
        if isinstance(a, float) or isinstance(b, float):
            return None
        return f.holds(env)
    parts = {logic.All: lambda x: x.parts, logic.Any: lambda x: x.parts, Neg: lambda x: (x.part,),
             logic.Iff: lambda x: (x.lhs, x.rhs)}[type(f)](f)
    values = [_exact_truth(p, env) for p in parts]
    if any(v is None for v in values):
        return None
    return logic.holds(f, env)


def _refuted_before(earlier: Iterable[Outcome], hyps: Sequence[logic.Formula], goal: logic.Formula) -> Outcome | None:
    """A bisection step refuted without a solver call: an integer counterexample of an earlier step of the same
    search that, evaluated exactly, satisfies this step's hypotheses and violates its goal (e.g. a point that
    refutes c = 5 refutes c = 4 too). None if no earlier counterexample does."""
    for o in earlier:
        if o.status != "refuted" or o.spurious or not o.counterexample:
            continue
        env = {k: (int(v) if v.denominator == 1 else v) for k, v in o.counterexample.items()}
        try:
            if all(_exact_truth(h, env) is True for h in hyps) and _exact_truth(goal, env) is False:
                return Outcome("refuted", dict(o.counterexample), mode="exact",
                               reason="refuted, evaluated exactly, at a counterexample of an earlier step")
        except (ZeroDivisionError, ValueError, OverflowError, KeyError):
            continue
    return None


def _tightest(c: Tightest, r: _Runner) -> Verdict:
    t0 = time.perf_counter()
    delta = c.precision
    last_cex: dict[int, Outcome] = {}

    pre = r.claim_checks(*scope(c))
    if pre.status != "proved":
        return _early(c, pre, t0)

    def pred(k: int) -> bool:
        val = k * delta
        o = _refuted_before(last_cex.values(), c.hyps, c.claim_at(val)) or r.prove(
            c.hyps, c.claim_at(val), checked=True, relax=False)
        if o.status == "refuted":
            last_cex[k] = o
        return _decide(o, f"c = {val}")

    lo_k, hi_k = math.floor(c.lo / delta), math.ceil(c.hi / delta)
    try:
        if pred(lo_k):
            return Verdict.of(c, "unknown", t0,
                              reason=f"already proved at the search floor c = {lo_k * delta}; lower `lo`",
                              witness=_cex(pre.witness))
        hi_ok = pred(hi_k)
        while not hi_ok and hi_k * delta < 2**20:
            lo_k, hi_k = hi_k, hi_k * 4
            hi_ok = pred(hi_k)
        if not hi_ok:
            return Verdict.of(c, "refuted", t0,
                              reason="no constant up to 2^20 holds", counterexample=_cex(last_cex[hi_k].counterexample))
        lo_k, hi_k, steps = _grid_search(pred, lo_k, hi_k)
    except _Undecided as u:
        return Verdict.of(c, "error" if u.outcome.status == "error" else "unknown", t0,
                          counterexample=_cex(u.outcome.counterexample), spurious=u.outcome.spurious,
                          reason=f"bisection undecided at {u.what}: {u.outcome.reason}", witness=_cex(pre.witness))
    cval, below = hi_k * delta, lo_k * delta
    o_below = last_cex[lo_k]
    # the cross-check re-proves the definedness obligation and the found c
    r.proved = [p for p in r.proved if p[0] == "defined" or p[2] == c.claim_at(cval)]
    cex = o_below.counterexample
    return Verdict.of(
        c,
        "proved",
        t0,
        constant=str(cval),
        counterexample=_cex(cex),
        reason=f"c = {cval} proved; c − {delta} = {below} refuted (expected) at the counterexample shown",
        witness=_cex(pre.witness),
        defined=pre.defined,
        details=[
            {"claim": to_text(c.claim_at(cval).lhs) + " ≤ " + to_text(c.claim_at(cval).rhs), "precision": str(delta)},
            {"refuted_at": str(below), "counterexample": _cex(cex)},
        ],
    )


def _witness_search(
    c: Crossover, extra: logic.Formula, goal: logic.Formula, window: tuple[Fraction, Fraction]
) -> dict[str, Fraction] | None:
    """Exact search for an integer point satisfying the claim's hypotheses and ``extra`` where ``goal`` fails,
    over small (N, d, M) whose axis value lies in ``window`` (one grid step): d ≤ 48, N ∈ {d, 64d, 129d, 1000d},
    M ≤ 6d² + 64. Only for claims over N, d, M. Every hit is an exact evaluation, hence a valid counterexample.

    The M with the axis in the window are found by bisection, assuming the axis grows with M (true of every
    catalog axis: M/d², 4M/(d + 1)²); for another axis the search can only miss points, never report a false one."""
    from attnio.bounds.expr import evaluate
    from attnio.solver.engine import integer_counterexample

    names = {s.name for s in logic.symbols_of(All(c.hyps + (extra, goal)))}
    if not names <= {"N", "d", "M"}:
        return None
    hyps = c.hyps + (extra,)

    def axis(NN: int, dd: int, MM: int) -> Fraction | None:
        try:
            return evaluate(c.axis, {"N": Fraction(NN), "d": Fraction(dd), "M": Fraction(MM)})
        except (ZeroDivisionError, ValueError):
            return None

    def first(NN: int, dd: int, top: int, ok) -> int:  # least M in [1, top] with ok(axis(M)), or top + 1
        lo, hi = 1, top + 1
        while lo < hi:
            mid = (lo + hi) // 2
            a = axis(NN, dd, mid)
            if a is not None and ok(a):
                hi = mid
            else:
                lo = mid + 1
        return lo

    for dd in list(range(1, 17)) + list(range(17, 49, 4)):
        top = 6 * dd * dd + 64
        for NN in (dd, 64 * dd, 129 * dd, 1000 * dd):
            m_lo = first(NN, dd, top, lambda a: a >= window[0])
            m_hi = first(NN, dd, top, lambda a: a > window[1])
            for MM in range(m_lo, m_hi):
                ax = axis(NN, dd, MM)
                if ax is None or not (window[0] <= ax <= window[1]):
                    continue
                env = {"N": Fraction(NN), "d": Fraction(dd), "M": Fraction(MM)}
                try:  # a cheap exact pre-filter (hypotheses first, in order): most grid points are outside the regime
                    if not all(logic.holds(h, env) for h in hyps):
                        continue
                except (ZeroDivisionError, ValueError, OverflowError):
                    continue
                hit = integer_counterexample(hyps, goal, env)
                if hit is not None:
                    return hit
    return None


def _crossover(c: Crossover, r: _Runner) -> Verdict:
    t0 = time.perf_counter()
    delta = c.precision
    outcomes: dict[tuple[str, int], Outcome] = {}
    a_wins = c.a < c.b
    b_wins = c.b <= c.a
    pre = r.claim_checks(*scope(c))
    if pre.status != "proved":
        return _early(c, pre, t0)

    def side(o: Outcome) -> bool:
        if o.status == "error":
            raise _Undecided("crash guard", o)
        return o.status == "proved"  # a step not proved (refuted, or unknown within its rlimit) counts as false

    def a_side(k: int) -> bool:  # axis ≤ k·δ ⇒ a < b   (monotone: true for small k)
        hyps = c.hyps + (c.axis_at_most(k * delta),)
        o = _refuted_before(outcomes.values(), hyps, a_wins) or r.prove(hyps, a_wins, checked=True)
        outcomes[("a", k)] = o
        return side(o)

    def b_side(k: int) -> bool:  # axis ≥ k·δ ⇒ a ≥ b   (monotone: true for large k)
        hyps = c.hyps + (c.axis_at_least(k * delta),)
        o = _refuted_before(outcomes.values(), hyps, b_wins) or r.prove(hyps, b_wins, checked=True)
        outcomes[("b", k)] = o
        return side(o)

    try:
        return _crossover_search(c, r, t0, pre, outcomes, a_side, b_side)
    except _Undecided as u:
        return Verdict.of(c, "error", t0, reason=u.outcome.reason,
                          witness=_cex(pre.witness))


def _crossover_search(c: Crossover, r: _Runner, t0: float, pre: Outcome, outcomes, a_side, b_side) -> Verdict:
    delta = c.precision
    lo_k, hi_k = math.floor(c.lo / delta), math.ceil(c.hi / delta)
    a_wins = c.a < c.b
    b_wins = c.b <= c.a

    ax = c.axis_name or to_text(c.axis)
    if not a_side(lo_k):
        return Verdict.of(c, "unknown", t0,
                          counterexample=_cex(outcomes[("a", lo_k)].counterexample),
                          reason=f"{c.a_name} < {c.b_name} not proved for {ax} ≤ {c.lo} (search floor): "
                          f"{outcomes[('a', lo_k)].status} {outcomes[('a', lo_k)].reason}")
    if not b_side(hi_k):
        return Verdict.of(c, "unknown", t0,
                          counterexample=_cex(outcomes[("b", hi_k)].counterexample),
                          reason=f"{c.b_name} ≤ {c.a_name} not proved for {ax} ≥ {c.hi} (search ceiling): "
                          f"{outcomes[('b', hi_k)].status} {outcomes[('b', hi_k)].reason}")
    if a_side(hi_k):
        return Verdict.of(c, "refuted", t0,
                          reason=f"both sides proved at {ax} = {c.hi}: inconsistent claim")
    alo, ahi, _ = _grid_search(lambda k: not a_side(k), lo_k, hi_k)
    blo, bhi, _ = _grid_search(b_side, lo_k, hi_k)
    rho_lo, rho_hi = alo * delta, bhi * delta
    keep = {c.axis_at_most(alo * delta), c.axis_at_least(bhi * delta)}
    # the cross-check re-proves the definedness obligation and both sides
    r.proved = [p for p in r.proved if p[0] == "defined" or (p[1] and p[1][-1] in keep)]
    # each proved side holds somewhere: a side proved only because its part of the regime is empty says nothing
    side_witness = {}
    for name, extra, goal in (("lower", c.axis_at_most(rho_lo), a_wins), ("upper", c.axis_at_least(rho_hi), b_wins)):
        try:
            st, w, why = find_witness(c.hyps + (extra,), goal, backend=r.backend, rlimit=r.rlimit)
        except SolverGuard as e:
            st, w, why = "error", None, str(e)
        if st != "found":
            return Verdict.of(c, st, t0,
                              reason=f"{name} side ({logic.to_text(extra)}): {why}", witness=_cex(pre.witness))
        side_witness[name] = _cex(w)

    def witness(o: Outcome, extra: logic.Formula, goal: logic.Formula, window) -> tuple[dict | None, str]:
        if o.status == "refuted" and not o.spurious:
            return _cex(o.counterexample), "earlier step" if o.mode == "exact" else "solver"
        w = _witness_search(c, extra, goal, window)
        return (_cex(w), "exact search") if w is not None else (None, "none found")

    cex_a, how_a = witness(outcomes[("a", ahi)], c.axis_at_most(ahi * delta), a_wins, (alo * delta, ahi * delta))
    cex_b, how_b = witness(outcomes[("b", blo)], c.axis_at_least(blo * delta), b_wins, (blo * delta, bhi * delta))
    sharp_a, sharp_b = cex_a is not None, cex_b is not None
    constant = f"{c.a_name} < {c.b_name} for {ax} ≤ {rho_lo}; {c.b_name} ≤ {c.a_name} for {ax} ≥ {rho_hi}"
    band = "no band" if rho_hi - rho_lo <= delta else f"band {rho_lo} < {ax} < {rho_hi}: either can win"
    reason = (
        f"{band}; lower side {'sharp to ' + str(delta) if sharp_a else 'not shown sharp (no counterexample one step up)'}"
        f"; upper side {'sharp to ' + str(delta) if sharp_b else 'not shown sharp (no counterexample one step down)'}"
    )
    return Verdict.of(
        c,
        "proved",
        t0,
        constant=constant,
        counterexample=cex_a,
        reason=reason,
        witness=_cex(pre.witness),
        defined=pre.defined,
        details=[
            {"side": f"{ax} ≤ {rho_lo} ⇒ {c.a_name} < {c.b_name}", "status": "proved",
             "mode": outcomes[("a", alo)].mode, "witness": side_witness["lower"]},
            {"side": f"{ax} ≤ {ahi * delta} ⇒ {c.a_name} < {c.b_name}", "status": "refuted (expected)" if sharp_a
             else outcomes[("a", ahi)].status, "counterexample": cex_a, "found_by": how_a},
            {"side": f"{ax} ≥ {rho_hi} ⇒ {c.b_name} ≤ {c.a_name}", "status": "proved",
             "mode": outcomes[("b", bhi)].mode, "witness": side_witness["upper"]},
            {"side": f"{ax} ≥ {blo * delta} ⇒ {c.b_name} ≤ {c.a_name}", "status": "refuted (expected)" if sharp_b
             else outcomes[("b", blo)].status, "counterexample": cex_b, "found_by": how_b},
        ],
    )


_DISPATCH = {Implication: _implication, Coverage: _coverage, Tightest: _tightest, Crossover: _crossover}


def verify_claim(c: Claim, solver: str = "z3") -> Verdict:
    """Verify one claim. With ``solver="both"`` z3 decides and cvc5 re-proves every obligation z3 proved
    (the definedness obligation and the claim's own obligations; the non-vacuity witness is checked exactly)."""
    if solver not in SOLVERS:
        from attnio.core.errors import InvalidParameter

        raise InvalidParameter("solver", solver, "one of " + ", ".join(SOLVERS))
    primary = "cvc5" if solver == "cvc5" else "z3"
    runner = _Runner(primary, getattr(c, "rlimit", None) if primary == "z3" else None)
    with claim_scope():
        v = _DISPATCH[type(c)](c, runner)
    v.solver = primary
    v.about, v.meta, v.where = list(c.about), c.meta, c.where
    v.solvers = {primary: v.status}
    if solver == "both" and v.status == "proved":
        t0 = time.perf_counter()
        statuses = []
        obligations = runner.proved
        if getattr(c, "lemmas", ()):
            extra, missing = _lemmas(c)
            v.details.append({"cvc5_lemmas": list(c.lemmas), "not_re_proved": missing})
            statuses += ["unknown"] * len(missing)
            obligations = [("lemmas", ob[1], ob[2], ob[4], extra) if ob[0] == "main" else ob for ob in obligations]
        for ob in obligations:
            st, cex, why = _cvc5_recheck(ob)
            statuses.append(st)
            if st == "refuted":
                v.status = "error"
                v.reason = f"cvc5 refutes an obligation z3 proved: {logic.to_text(ob[2])} at {cex} ({why})"
                break
        v.seconds += time.perf_counter() - t0
        if v.status == "proved":
            v.crosscheck = next((s for s in ("error", "unknown") if s in statuses), "proved")
        else:
            v.crosscheck = "disagrees"
        v.solvers["cvc5"] = v.crosscheck
        v.solver = "z3+cvc5"
    return v



def _lemmas(c: Claim) -> tuple[tuple[logic.Formula, ...], list[str]]:
    """A claim's lemmas (Crossover.lemmas) as formulas ``hyps ⇒ goal``, each verified here by z3 and re-proved by
    cvc5; returns the formulas and the ids of the lemmas that were not both proved and re-proved."""
    from attnio.solver.claims import by_id

    formulas, missing = [], []
    for lid in c.lemmas:
        lemma = by_id(lid)
        assert isinstance(lemma, Implication), f"lemma {lid} of {c.id} is not an implication"
        lv = verify_claim(lemma, "both")
        if not (lv.status == "proved" and lv.crosscheck == "proved"):
            missing.append(lid)
        formulas.append(logic.Any((Neg(All(lemma.hyps)), lemma.goal)))
    return tuple(formulas), missing


def _cvc5_run(ob: tuple) -> tuple[str, dict | None, str]:
    if ob[0] == "defined":
        o = check_defined(ob[1], ob[2], backend="cvc5")
    elif ob[0] == "lemmas":
        # the obligation with the claim's lemmas (each a proved claim: true at every point) added to its hypotheses;
        # the lemmas' own definedness is proved from the claim's hypotheses, never assumed
        _, hyps, goal, relax, extra = ob
        o = check_defined(hyps, All((*extra, goal)), backend="cvc5")
        if o.status == "proved":
            o = prove(tuple(hyps) + tuple(extra), goal, backend="cvc5", vacuity=False, defined=False, relax=relax)
    else:
        _, hyps, goal, checks, relax = ob
        o = prove(hyps, goal, backend="cvc5", vacuity=False, defined=checks, relax=relax)
        flat = flatten(goal)
        if o.status in ("unknown", "error") and flat != goal:
            # the same goal with nested quotients p/(a/b) written p·b/a (equal wherever the goal is defined; its
            # own definedness conditions are proved here): cvc5 decides some relaxed goals only in this form
            o2 = prove(hyps, flat, backend="cvc5", vacuity=False, defined=True, relax=relax)
            if o2.status == "proved":
                o = o2
    st = "unknown" if o.spurious else o.status
    return st, _cex(o.counterexample), o.reason


def _cvc5_recheck(ob: tuple) -> tuple[str, dict | None, str]:
    """Re-prove one obligation with cvc5 (each cvc5 call runs in a child process with a crash guard,
    solver/engine.py). Returns (proved|refuted|unknown|error, counterexample, reason)."""
    return _cvc5_run(ob)


GLOB_CHARS = frozenset("*?[")


def select(patterns: Iterable[str] | None = None, about: Iterable[str] | None = None) -> list[Claim]:
    """The claims, in catalog order, whose id matches one of ``patterns`` (an exact id, or a shell glob such as
    ``'sy.*'``; all claims when None) and, with ``about``, that name at least one of those bounds in their
    ``about``. A pattern that matches no claim, or an id that is not a catalog bound, raises InvalidParameter.

    >>> [c.id for c in select(["sy.min-branch.*"])]
    ['sy.min-branch.small', 'sy.min-branch.large']
    >>> len(select(about=["sy.thm3.1.upper"])) > 0
    True
    """
    import fnmatch

    from attnio.solver.claims import index

    wanted = None if patterns is None else list(patterns)
    globs = [w for w in wanted or () if GLOB_CHARS & set(w)]
    if wanted is not None and not globs and about is None:
        idx = index()  # built once per process: the report verifies one claim per task
        if all(w in idx for w in wanted):
            order = {cid: i for i, cid in enumerate(idx)}
            return [idx[w] for w in sorted(set(wanted), key=order.__getitem__)]
    claims = all_claims()
    if wanted is not None:
        for w in wanted:
            if not any(fnmatch.fnmatchcase(c.id, w) if w in globs else c.id == w for c in claims):
                from attnio.core.errors import InvalidParameter

                raise InvalidParameter("claim", w, "an id listed by `attnio verify --list`, or a glob matching one (e.g. 'sy.*')")
        exact = set(wanted) - set(globs)
        claims = [c for c in claims if c.id in exact or any(fnmatch.fnmatchcase(c.id, g) for g in globs)]
    if about is not None:
        from attnio.bounds.catalog import by_id

        bounds = {by_id(b).id for b in about}  # InvalidParameter for an unknown bound
        claims = [c for c in claims if bounds & set(c.about)]
    return claims


def _verify_id(claim_id: str, solver: str) -> Verdict:  # runs in a worker process: ids in, plain data out
    from attnio.solver.claims import by_id

    return verify_claim(by_id(claim_id), solver)


def default_jobs() -> int:
    import os

    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def verify_all(claim_ids: Iterable[str] | None = None, solver: str = "z3", jobs: int | None = None,
               about: Iterable[str] | None = None) -> list[Verdict]:
    """Verdicts for the given claim ids or globs (all claims when None; with ``about``, only the claims about
    those bounds: :func:`select`), in catalog order.

    ``jobs`` worker processes (default: the CPUs this process may use; 1 or 0: in this process) verify claims
    in parallel, each claim whole in one worker. The verdicts do not depend on ``jobs`` nor on the order the
    workers take the claims in: every solver call has its own context and a resource limit (solver/engine.py).
    Nothing is cached between runs."""
    if solver not in SOLVERS:
        from attnio.core.errors import InvalidParameter

        raise InvalidParameter("solver", solver, "one of " + ", ".join(SOLVERS))
    claims = select(claim_ids, about)
    jobs = default_jobs() if jobs is None else jobs
    if jobs <= 1 or len(claims) <= 1:
        return [verify_claim(c, solver) for c in claims]
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from attnio.solver.claims import index

    index()  # build the id index before forking: the workers inherit it

    # slowest first (a static order, from the claim's shape), so that the last worker is not left with a long one
    order = sorted(range(len(claims)), key=lambda i: _weight(claims[i]), reverse=True)
    with ProcessPoolExecutor(max_workers=min(jobs, len(claims)), mp_context=mp.get_context("fork")) as ex:
        futs = {i: ex.submit(_verify_id, claims[i].id, solver) for i in order}
        return [futs[i].result() for i in range(len(claims))]


def _weight(c: Claim) -> int:
    """A rough static cost (no timing is stored anywhere): bisections first, then coverage, then implications."""
    return {Crossover: 3, Tightest: 2, Coverage: 1}.get(type(c), 0)
