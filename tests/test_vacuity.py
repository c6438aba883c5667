"""What "proved" means: the regime is non-empty (an integer witness, re-evaluated here), every expression is
defined on it (proved, never assumed), verdicts come from resource limits only (the same on a loaded machine),
and a solver that hangs is an error, never a silent unknown."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from fractions import Fraction

import pytest

from attnio.bounds.costs import FORMULAS
from attnio.bounds.expr import floor, sqrt
from attnio.bounds.symbols import M, N, d
from attnio.solver import engine, logic
from attnio.solver.claims import Coverage, Crossover, Implication, Tightest, all_claims
from attnio.solver.engine import prove
from attnio.solver.verify import precheck, scope, verify_claim

F2 = FORMULAS["flash2"].with_dv_equal_d()
EMPTY = (4 * d**2 <= M, M <= d)  # a typo'd regime: 4d² ≤ M ≤ d holds for no d ≥ 1


# non-vacuity ------------------------------------------------------------------------------------------------
VACUOUS = [
    Implication("vac.typo", "inequality", "flash2 ≤ 1 on an empty regime", EMPTY + F2.valid, F2.io <= 1),
    # the regime contradicts flash2's own validity conditions (M ≥ 3d + 4 or so): M ≤ d
    Implication("vac.validity", "inequality", "flash2 ≤ 1 for M ≤ d", (M <= d,) + F2.valid, F2.io <= 1),
    Tightest("vac.tight", "least c on an empty regime", EMPTY, f=N**2, g=N**2 * d**2 / M, extra=N * 0,
             precision=Fraction(1, 8)),
    Coverage("vac.coverage", "a family with an empty regime", (), (("all", ()), ("empty", EMPTY))),
    Crossover("vac.crossover", "a crossover on an empty regime", EMPTY, a=N * d, b=N**2, axis=M / d**2,
              lo=Fraction(1, 8), hi=Fraction(4), precision=Fraction(1, 8)),
]


@pytest.mark.parametrize("claim", VACUOUS, ids=lambda c: c.id)
def test_claim_on_an_empty_regime_is_vacuous_never_proved(claim):
    v = verify_claim(claim)
    assert v.status == "vacuous" and not v.ok, (v.status, v.reason)
    assert v.witness is None or claim.kind == "coverage"  # a coverage's domain is fine, one regime is empty


# definedness ------------------------------------------------------------------------------------------------
def test_contradictory_definedness_is_vacuous_not_proved():
    # N/(d − M) ≥ 5 for d < M: false wherever defined, and d − M > 0 contradicts d < M
    c = Implication("def.contradiction", "inequality", "N/(d − M) ≥ 5 for d < M", (d < M,), N / (d - M) >= 5)
    v = verify_claim(c)
    assert v.status in ("vacuous", "refuted") and not v.ok, (v.status, v.reason)
    assert v.status == "vacuous"  # defined nowhere in its regime


def test_claim_needing_an_unstated_condition_is_refuted_with_the_condition_named():
    c = Implication("def.unstated", "inequality", "N/(M − d) ≥ 0 for M ≥ 1", (), N / (M - d) >= 0)
    v = verify_claim(c)
    assert v.status == "refuted", (v.status, v.reason)
    assert "0 < M − d" in v.reason
    env = {k: int(Fraction(x)) for k, x in v.counterexample.items()}
    assert env["M"] <= env["d"]  # a point of the (empty) hypotheses where the denominator is not positive
    assert v.witness is not None  # the regime itself is not empty


@pytest.mark.parametrize("goal", [sqrt(d - M) <= N + d, floor(sqrt(d - M)) <= N + d], ids=["sqrt", "floor-sqrt"])
def test_square_root_of_a_possibly_negative_argument_is_refuted_with_the_condition_named(goal):
    # true wherever defined (√(d − M) ≤ √d ≤ d), but undefined where M > d: the encoding's s² = d − M must not
    # make d − M ≥ 0 look proved
    v = verify_claim(Implication("def.sqrt", "inequality", "a root with no hypotheses", (), goal))
    assert v.status == "refuted" and "0 ≤ d − M" in v.reason, (v.status, v.reason)
    env = {k: int(Fraction(x)) for k, x in v.counterexample.items()}
    assert env["M"] > env["d"]
    assert verify_claim(Implication("def.sqrt.ok", "inequality", "the same for M ≤ d", (M <= d,), goal)).ok


def test_proved_definedness_is_listed_and_nothing_is_assumed():
    o = prove((d**2 <= M,), N**2 * d / sqrt(M) >= N**2 * d / M)
    assert o.status == "proved" and o.assumed == []
    assert "0 < √M" in o.defined and "0 ≤ M" in o.defined


# the catalog ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("claim", all_claims(), ids=lambda c: c.id)
def test_every_catalog_claim_has_an_integer_witness_and_is_defined(claim):
    """Only the claim-level checks (witness, definedness), not the claim's proof: cheap for the whole catalog."""
    o = precheck(claim)
    assert o.status == "proved", (o.status, o.reason)
    hyps, exprs = scope(claim)
    syms = {s.name: s for f in (*hyps, exprs) for s in logic.symbols_of(f)}
    assert set(o.witness) == set(syms)
    assert all(v.denominator == 1 for k, v in o.witness.items() if syms[k].integer)  # integers where integer
    assert all(v >= syms[k].lo for k, v in o.witness.items())
    env = {k: int(v) if v.denominator == 1 else v for k, v in o.witness.items()}
    assert all(logic.holds(h, env) for h in hyps)  # re-evaluated exactly, independently of the solver
    assert all(c.holds(env) for c in engine.conditions(hyps, exprs))


# determinism ------------------------------------------------------------------------------------------------
class _Hanging:
    """A z3 solver whose check() hangs past the crash guard, then answers unknown (as z3 does on its timeout)."""

    def __init__(self, solver):
        self._solver = solver

    def __getattr__(self, name):
        return getattr(self._solver, name)

    def check(self):
        time.sleep(engine.GUARD_S)
        return "unknown"

    def reason_unknown(self):
        return "timeout"


def test_crash_guard_is_an_error_not_an_unknown(monkeypatch):
    # The hang is simulated: with a real 1 ms guard, z3 sometimes answers before it (a refutation, not an error),
    # so the verdict depended on the machine's speed.
    real = engine._solver
    monkeypatch.setattr(engine, "GUARD_S", 0.01)
    monkeypatch.setattr(engine, "_solver", lambda *a: _Hanging(real(*a)))
    o = prove((16 * d**2 <= M, M <= N * d), F2.io <= 5 * N**2 * d**2 / M + 4 * N * d)
    assert o.status == "error" and "crash guard" in o.reason


def test_unknown_satisfiability_is_unknown(monkeypatch):
    monkeypatch.setattr(engine, "_check", lambda *a, **k: ("unknown", None, "budget", None))
    v = verify_claim(Implication("x", "inequality", "N ≤ N²", (), N <= N**2))
    assert v.status == "unknown" and "non-vacuity" in v.reason


# claims whose z3 proof used to depend on a wall-clock cap (smt gave up, nlsat proved; bisections)
DETERMINISM_SUBSET = ["consistency.sy.lemma3.4.explicit.flash1", "tight.flash2", "smith.precondition.crossover"]


def _verify_json() -> list[dict]:
    argv = [sys.executable, "-m", "attnio.cli", "verify", "--json", "--jobs", "1"]
    for c in DETERMINISM_SUBSET:
        argv += ["--claim", c]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    vs = json.loads(out.stdout)["verdicts"]
    for v in vs:
        v.pop("seconds")
    return vs


@pytest.mark.slow
def test_verdicts_identical_with_a_cpu_hog_beside_one_run():
    """Two runs of `attnio verify --json` on a subset (the whole catalog would double the suite's solver time):
    the second with busy-looping processes competing for every core. Everything but the timings must match."""
    quiet = _verify_json()
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(3)]
    try:
        loaded = _verify_json()
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    assert loaded == quiet
    assert all(v["status"] == "proved" and v["witness"] for v in quiet)


def test_a_verdict_does_not_depend_on_what_the_process_verified_before():
    """Each claim's obligations share z3 contexts created for that claim only (engine.claim_scope): the same claim
    verified first, or after others, gives the same verdict, constant, counterexample and witness."""
    from attnio.solver.claims import by_id

    def run(ids):
        out = {}
        for i in ids:
            v = verify_claim(by_id(i)).to_json()
            v.pop("seconds")
            out[i] = v
        return out

    ids = ["tight.flash2.large-d", "crossover.leading.square_tiling.flash2", "sy.meet"]
    assert run(ids) == run(list(reversed(ids)))
