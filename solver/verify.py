"""Verify claims: turn each :mod:`attnio.solver.claims` record into solver obligations and a plain-data :class:`Verdict`.

``verify_all(claim_ids=None, solver="z3")`` is the API the CLI and the report use. ``solver`` is ``"z3"``,
``"cvc5"`` or ``"both"`` (z3 decides; every obligation z3 proved, for a tightest constant the found c and for a
crossover its two proved sides, is re-proved by cvc5 in a child process with a hard cap). cvc5 refuting what z3
proved is an error (verdict status ``"error"``); cvc5 unable to decide within its cap is reported as
``crosscheck="unknown"`` next to z3's proof, not as a disagreement.

A verdict's ``status`` is ``proved``, ``refuted``, ``unknown`` or ``error``. ``ok`` is True only for ``proved``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction

from attnio.bounds.expr import to_text
from attnio.solver import logic
from attnio.solver.claim_types import Claim, Coverage, Crossover, Implication, Tightest
from attnio.solver.claims import all_claims
from attnio.solver.engine import Outcome, prove
from attnio.solver.logic import All, Neg

SOLVERS = ("z3", "cvc5", "both")


@dataclass
class Verdict:
    id: str
    kind: str
    description: str
    status: str  # proved | refuted | unknown | error
    seconds: float
    constant: str | None = None
    counterexample: dict[str, str] | None = None
    spurious: bool = False
    reason: str = ""
    solver: str = "z3"
    crosscheck: str | None = None  # cvc5's status on the proved obligations (solver="both")
    assumed: list[str] = field(default_factory=list)
    details: list[dict] = field(default_factory=list)
    about: list[str] = field(default_factory=list)  # the catalog bounds the claim is about (Claim.about)

    @property
    def ok(self) -> bool:
        return self.status == "proved"

    def to_json(self) -> dict:
        return asdict(self)


def _cex(c: dict[str, Fraction] | None) -> dict[str, str] | None:
    return None if c is None else {k: str(v) for k, v in sorted(c.items())}


class _Runner:
    """Runs obligations with one backend, remembering the proved ones for the cvc5 re-check."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        self.proved: list[tuple[tuple, logic.Formula, bool]] = []

    def prove(
        self, hyps: Sequence[logic.Formula], goal: logic.Formula, assume_defined: bool,
        wall_ms: int | None = None, relax: bool = True,
    ) -> Outcome:
        kw = {"wall_ms": wall_ms} if wall_ms else {}
        o = prove(tuple(hyps), goal, backend=self.backend, assume_defined=assume_defined, relax=relax, **kw)
        if o.status == "proved":
            self.proved.append((tuple(hyps), goal, assume_defined, kw))
        return o


# ------------------------------------------------------------------------------------------------ per kind
def _implication(c: Implication, r: _Runner) -> Verdict:
    o = r.prove(c.hyps, c.goal, c.assume_defined)
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
        details=[{"goal": logic.to_text(c.goal), "hyps": [logic.to_text(h) for h in c.hyps], "mode": o.mode}],
    )


def _coverage(c: Coverage, r: _Runner) -> Verdict:
    obligations: list[tuple[str, logic.Formula]] = [
        ("no gap", logic.Any(tuple(All(rs) for _, rs in c.regimes)))
    ]
    for i, (na, ra) in enumerate(c.regimes):
        for nb, rb in c.regimes[i + 1 :]:
            obligations.append((f"no overlap {na}/{nb}", Neg(All(tuple(ra) + tuple(rb)))))
    details, status, cex, spurious, reason, secs = [], "proved", None, False, "", 0.0
    for what, goal in obligations:
        o = r.prove(c.domain, goal, False)
        secs += o.seconds
        details.append({"obligation": what, "status": o.status, "counterexample": _cex(o.counterexample)})
        if o.status != "proved" and status == "proved":
            status, cex, spurious, reason = o.status, o.counterexample, o.spurious, f"{what}: {o.reason}".strip(": ")
    return Verdict(c.id, c.kind, c.description, status, secs, None, _cex(cex), spurious, reason, details=details)


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
    if o.status == "proved":
        return True
    if o.status == "refuted" and not o.spurious:
        return False
    raise _Undecided(what, o)


def _tightest(c: Tightest, r: _Runner) -> Verdict:
    t0 = time.perf_counter()
    delta = c.precision
    last_cex: dict[int, Outcome] = {}

    def pred(k: int) -> bool:
        val = k * delta
        o = r.prove(c.hyps, c.claim_at(val), c.assume_defined, wall_ms=c.wall_ms, relax=False)
        if o.status == "refuted":
            last_cex[k] = o
        return _decide(o, f"c = {val}")

    lo_k, hi_k = math.floor(c.lo / delta), math.ceil(c.hi / delta)
    try:
        if pred(lo_k):
            return Verdict(c.id, c.kind, c.description, "unknown", time.perf_counter() - t0,
                           reason=f"already proved at the search floor c = {lo_k * delta}; lower `lo`")
        hi_ok = pred(hi_k)
        while not hi_ok and hi_k * delta < 2**20:
            lo_k, hi_k = hi_k, hi_k * 4
            hi_ok = pred(hi_k)
        if not hi_ok:
            return Verdict(c.id, c.kind, c.description, "refuted", time.perf_counter() - t0,
                           reason="no constant up to 2^20 holds", counterexample=_cex(last_cex[hi_k].counterexample))
        lo_k, hi_k, steps = _grid_search(pred, lo_k, hi_k)
    except _Undecided as u:
        return Verdict(c.id, c.kind, c.description, "unknown", time.perf_counter() - t0,
                       counterexample=_cex(u.outcome.counterexample), spurious=u.outcome.spurious,
                       reason=f"bisection undecided at {u.what}: {u.outcome.reason}")
    cval, below = hi_k * delta, lo_k * delta
    o_below = last_cex[lo_k]
    r.proved = [p for p in r.proved if p[1] == c.claim_at(cval)]  # the cross-check re-proves the found c
    cex = o_below.counterexample
    return Verdict(
        c.id,
        c.kind,
        c.description,
        "proved",
        time.perf_counter() - t0,
        constant=str(cval),
        counterexample=_cex(cex),
        reason=f"c = {cval} proved; c − {delta} = {below} refuted (expected) at the counterexample shown",
        assumed=o_below.assumed,
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
    M ≤ 6d² + 64. Only for claims over N, d, M. Every hit is an exact evaluation, hence a valid counterexample."""
    from attnio.bounds.expr import evaluate
    from attnio.solver.engine import integer_counterexample

    names = {s.name for s in logic.symbols_of(All(c.hyps + (extra, goal)))}
    if not names <= {"N", "d", "M"}:
        return None
    hyps = c.hyps + (extra,)
    for dd in list(range(1, 17)) + list(range(17, 49, 4)):
        top = 6 * dd * dd + 64
        for NN in (dd, 64 * dd, 129 * dd, 1000 * dd):
            for MM in range(1, top + 1):
                env = {"N": Fraction(NN), "d": Fraction(dd), "M": Fraction(MM)}
                try:
                    ax = evaluate(c.axis, env)
                except (ZeroDivisionError, ValueError):
                    continue
                if not (window[0] <= ax <= window[1]):
                    continue
                hit = integer_counterexample(hyps, goal, env)
                if hit is not None:
                    return hit
    return None


def _crossover(c: Crossover, r: _Runner) -> Verdict:
    t0 = time.perf_counter()
    delta = c.precision
    lo_k, hi_k = math.floor(c.lo / delta), math.ceil(c.hi / delta)
    outcomes: dict[tuple[str, int], Outcome] = {}
    a_wins = c.a < c.b
    b_wins = c.b <= c.a
    wall = c.wall_ms

    def a_side(k: int) -> bool:  # axis ≤ k·δ ⇒ a < b   (monotone: true for small k)
        o = r.prove(c.hyps + (c.axis <= k * delta,), a_wins, c.assume_defined, wall_ms=wall)
        outcomes[("a", k)] = o
        return o.status == "proved"

    def b_side(k: int) -> bool:  # axis ≥ k·δ ⇒ a ≥ b   (monotone: true for large k)
        o = r.prove(c.hyps + (k * delta <= c.axis,), b_wins, c.assume_defined, wall_ms=wall)
        outcomes[("b", k)] = o
        return o.status == "proved"

    ax = c.axis_name or to_text(c.axis)
    if not a_side(lo_k):
        return Verdict(c.id, c.kind, c.description, "unknown", time.perf_counter() - t0,
                       counterexample=_cex(outcomes[("a", lo_k)].counterexample),
                       reason=f"{c.a_name} < {c.b_name} not proved for {ax} ≤ {c.lo} (search floor): "
                       f"{outcomes[('a', lo_k)].status} {outcomes[('a', lo_k)].reason}")
    if not b_side(hi_k):
        return Verdict(c.id, c.kind, c.description, "unknown", time.perf_counter() - t0,
                       counterexample=_cex(outcomes[("b", hi_k)].counterexample),
                       reason=f"{c.b_name} ≤ {c.a_name} not proved for {ax} ≥ {c.hi} (search ceiling): "
                       f"{outcomes[('b', hi_k)].status} {outcomes[('b', hi_k)].reason}")
    if a_side(hi_k):
        return Verdict(c.id, c.kind, c.description, "refuted", time.perf_counter() - t0,
                       reason=f"both sides proved at {ax} = {c.hi}: inconsistent claim")
    alo, ahi, _ = _grid_search(lambda k: not a_side(k), lo_k, hi_k)
    blo, bhi, _ = _grid_search(b_side, lo_k, hi_k)
    rho_lo, rho_hi = alo * delta, bhi * delta
    keep = {(c.axis <= alo * delta), (bhi * delta <= c.axis)}
    r.proved = [p for p in r.proved if p[0] and p[0][-1] in keep]  # the cross-check re-proves both sides

    def witness(o: Outcome, extra: logic.Formula, goal: logic.Formula, window) -> tuple[dict | None, str]:
        if o.status == "refuted" and not o.spurious:
            return _cex(o.counterexample), "solver"
        w = _witness_search(c, extra, goal, window)
        return (_cex(w), "exact search") if w is not None else (None, "none found")

    cex_a, how_a = witness(outcomes[("a", ahi)], c.axis <= ahi * delta, a_wins, (alo * delta, ahi * delta))
    cex_b, how_b = witness(outcomes[("b", blo)], blo * delta <= c.axis, b_wins, (blo * delta, bhi * delta))
    sharp_a, sharp_b = cex_a is not None, cex_b is not None
    constant = f"{c.a_name} < {c.b_name} for {ax} ≤ {rho_lo}; {c.b_name} ≤ {c.a_name} for {ax} ≥ {rho_hi}"
    band = "no band" if rho_hi - rho_lo <= delta else f"band {rho_lo} < {ax} < {rho_hi}: either can win"
    reason = (
        f"{band}; lower side {'sharp to ' + str(delta) if sharp_a else 'not shown sharp (no counterexample one step up)'}"
        f"; upper side {'sharp to ' + str(delta) if sharp_b else 'not shown sharp (no counterexample one step down)'}"
    )
    return Verdict(
        c.id,
        c.kind,
        c.description,
        "proved",
        time.perf_counter() - t0,
        constant=constant,
        counterexample=cex_a,
        reason=reason,
        assumed=outcomes[("a", alo)].assumed,
        details=[
            {"side": f"{ax} ≤ {rho_lo} ⇒ {c.a_name} < {c.b_name}", "status": "proved",
             "mode": outcomes[("a", alo)].mode},
            {"side": f"{ax} ≤ {ahi * delta} ⇒ {c.a_name} < {c.b_name}", "status": "refuted (expected)" if sharp_a
             else outcomes[("a", ahi)].status, "counterexample": cex_a, "found_by": how_a},
            {"side": f"{ax} ≥ {rho_hi} ⇒ {c.b_name} ≤ {c.a_name}", "status": "proved",
             "mode": outcomes[("b", bhi)].mode},
            {"side": f"{ax} ≥ {blo * delta} ⇒ {c.b_name} ≤ {c.a_name}", "status": "refuted (expected)" if sharp_b
             else outcomes[("b", blo)].status, "counterexample": cex_b, "found_by": how_b},
        ],
    )


_DISPATCH = {Implication: _implication, Coverage: _coverage, Tightest: _tightest, Crossover: _crossover}


def verify_claim(c: Claim, solver: str = "z3") -> Verdict:
    """Verify one claim. With ``solver="both"`` z3 decides and cvc5 re-proves every obligation z3 proved."""
    if solver not in SOLVERS:
        from attnio.errors import InvalidParameter

        raise InvalidParameter("solver", solver, "one of " + ", ".join(SOLVERS))
    primary = "cvc5" if solver == "cvc5" else "z3"
    runner = _Runner(primary)
    v = _DISPATCH[type(c)](c, runner)
    v.solver = primary
    v.about = list(c.about)
    if solver == "both" and v.status == "proved":
        t0 = time.perf_counter()
        statuses = []
        for hyps, goal, assume, kw in runner.proved:
            st, cex = _cvc5_recheck(hyps, goal, assume, kw)
            statuses.append(st)
            if st == "refuted":
                v.status = "error"
                v.reason = f"cvc5 refutes an obligation z3 proved: {logic.to_text(goal)} at {cex}"
                break
        v.seconds += time.perf_counter() - t0
        if v.status == "proved":
            v.crosscheck = "proved" if all(s == "proved" for s in statuses) else "unknown"
        else:
            v.crosscheck = "disagrees"
        v.solver = "z3+cvc5"
    return v


CVC5_WALL_S = 15.0


def _cvc5_worker(q, hyps, goal, assume, kw) -> None:  # runs in a forked child
    o = prove(hyps, goal, backend="cvc5", assume_defined=assume, **kw)
    q.put((o.status if not o.spurious else "unknown", _cex(o.counterexample)))


def _cvc5_recheck(hyps, goal, assume, kw) -> tuple[str, dict | None]:
    """Re-prove one obligation with cvc5 in a child process with a hard wall-clock cap (cvc5's own time limit is
    not always honoured inside its nonlinear procedures). Returns (proved|refuted|unknown, counterexample)."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    q = ctx.Queue()
    p = ctx.Process(target=_cvc5_worker, args=(q, hyps, goal, assume, kw), daemon=True)
    p.start()
    p.join(CVC5_WALL_S)
    if p.is_alive():
        p.kill()
        p.join()
        return "unknown", None
    try:
        return q.get(timeout=1)
    except Exception:
        return "unknown", None


def verify_all(claim_ids: Iterable[str] | None = None, solver: str = "z3") -> list[Verdict]:
    """Verdicts for the given claim ids (all claims when None), in catalog order."""
    claims = all_claims()
    if claim_ids is not None:
        wanted = list(claim_ids)
        known = {c.id for c in claims}
        for w in wanted:
            if w not in known:
                from attnio.errors import InvalidParameter

                raise InvalidParameter("claim", w, "an id listed by `attnio verify --list`")
        claims = [c for c in claims if c.id in set(wanted)]
    return [verify_claim(c, solver) for c in claims]
