"""BWD-slots-dv and BWD-slots-dv-x (docs/bounds/backward-slots-dv.md): their steps are proved by cvc5 as well as z3
(z3 for every backward claim in tests/test_backward_claims.py), tightened variants are refuted (the leading constant,
the face constant c₀, the per-segment constant c, the 10d² threshold, γ), the page names every step, each bound is
below every covered backward schedule's exact cost on a grid of its regime, and the numerical search of
tools/bwd_dv_face_check.py stays below the proved per-segment bound."""

from __future__ import annotations

import importlib.util
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from attnio.bounds import backward as bb
from attnio.bounds.costs import BACKWARD_FORMULAS
from attnio.bounds.expr import evaluate
from attnio.bounds.proofs import PROOF_STEPS
from attnio.solver.claims import all_claims
from attnio.solver.claims import backward as cb
from attnio.solver.claims.types import Implication
from attnio.solver.engine import prove
from attnio.solver.verify import verify_claim

ROOT = Path(__file__).parents[1]
STEPS = cb.dv_step_claims()
DV = (bb.BWD_SLOTS_DV, bb.BWD_SLOTS_DV_X)


def _step(claims: list[Implication], name: str) -> Implication:
    return next(c for c in claims if c.id == f"backward.slots.dv.{name}")


def _refuted(claim: Implication) -> None:
    v = verify_claim(claim)
    assert v.status == "refuted", (claim.id, v.status, v.reason)


@pytest.mark.parametrize("claim", STEPS, ids=lambda c: c.id)
def test_cvc5_proves_the_dv_steps_too(claim: Implication) -> None:
    pytest.importorskip("cvc5")
    assert prove(claim.hyps, claim.goal, backend="cvc5").status == "proved", claim.id


def test_the_steps_are_among_the_z3_checked_backward_claims() -> None:
    # tests/test_backward_claims.py::test_every_backward_step_and_consistency_link_is_proved runs z3 on each
    # Implication of cb.CLAIMS, so on each of these
    ids = {c.id for c in cb.CLAIMS if isinstance(c, Implication)}
    assert {c.id for c in STEPS} <= ids
    assert {c.id for c in cb.dv_consistency_claims()} <= ids


def test_a_larger_leading_constant_is_refuted() -> None:
    assert verify_claim(_step(STEPS, "rearrange")).status == "proved"
    _refuted(_step(cb.dv_step_claims(coeff=Fraction(211, 20)), "rearrange"))  # 10.55 > 200/19 ≈ 10.526


def test_a_face_constant_below_the_true_maximum_is_refuted() -> None:
    # max of 2a²b + ab² over 2a + 2b ≤ s is s³/(12√3) ≈ 0.0481125·s³; c₀ = 0.0481 is below it
    _refuted(_step(cb.dv_step_claims(face=Fraction(481, 10000)), "face_max"))


def test_a_per_segment_constant_below_the_true_maximum_is_refuted() -> None:
    # c = 0.0712 < √(9/(1024√3)) ≈ 0.071235: step 13 fails at x = 0, s = 3T/4, β = T/4
    c = _step(STEPS, "high")
    lhs = c.goal.lhs
    _refuted(Implication(c.id + ".mutant", c.kind, c.description, c.hyps, lhs <= Fraction(712, 10000) ** 2 * cb.vT**4))


def test_the_threshold_and_gamma_cannot_be_lowered_much() -> None:
    # T/8 in place of T/10: a type-2 pair (worth sβT/8) beats an input word (9c₀Tβ/4 ≈ 0.108Tβ) at the x = 0 optimum
    _refuted(_step(cb.dv_step_claims(threshold=8), "high"))
    # γ = 0.45 is below the relaxation's gap at T = 10d² (≈ 0.483d³)
    _refuted(_step(cb.dv_step_claims(gamma=Fraction(45, 100)), "low"))


@pytest.mark.parametrize("b", DV, ids=lambda b: b.id)
def test_the_page_names_every_step_and_the_bound_is_registered(b) -> None:
    ids = {c.id for c in all_claims()}
    steps = PROOF_STEPS[b.id]
    assert [n for n, _ in steps] == list(range(1, len(steps) + 1))
    text = (ROOT / b.doc).read_text()
    for n, cid in steps:
        if cid == "prose":
            assert re.search(rf"^{n}\. .*argued in prose", text, re.M), (b.id, n)
        else:
            assert cid in ids, cid
            assert re.search(rf"^{n}\. .*machine-checked: {re.escape(cid)}\*", text, re.M), (b.id, n, cid)
    own = [c for c in STEPS if b.id in c.about]
    assert len(own) >= 10 and {c.id for c in own} <= {cid for _, cid in steps}
    assert b in bb.BOUNDS and bb.COVERS[b.id] == bb.RECOMPUTES_S and b.status == "derived here (refereed)"
    assert "**derived here (refereed)**" in text and "fresh referee" in " ".join(text.split())  # a fresh reader checked it


@pytest.mark.parametrize("b", DV, ids=lambda b: b.id)
def test_the_bound_is_below_every_covered_exact_cost_on_a_grid(b) -> None:
    low = 10 if b is bb.BWD_SLOTS_DV else 4
    checked, least = 0, None
    for dd in (1, 2, 3, 16, 128):
        for n in (1, 7, 64, 4096, 65536):
            for k in (3, 4, 5, 8, 9, 10, 11, 16, 64, 4096):
                for mm in (k * dd * dd, k * dd * dd + 1):
                    env = {"N": n, "d": dd, "M": mm, "dv": dd}
                    if not all(r.holds(env) for r in b.regime):
                        assert mm < low * dd * dd
                        continue
                    lb = evaluate(b.expr, env)
                    for name in sorted(bb.COVERS[b.id]):
                        f = BACKWARD_FORMULAS[name].with_dv_equal_d()
                        if all(r.holds(env) for r in f.valid):
                            io = evaluate(f.io, env)
                            assert lb <= io, (name, env)
                            checked += 1
                            if lb > 0:
                                least = min(least or io / lb, io / lb)
    assert checked > 300 and least is not None and least > 1


def test_ratios_at_the_large_cache_points() -> None:
    """flash2-bwd and flash2-2pass-bwd ÷ the best bound covering each (docs/bounds/backward-slots-dv.md#numbers)."""
    got = {}
    for n, dd, k in ((4096, 64, 4), (4096, 64, 16), (16384, 128, 8), (65536, 64, 16), (65536, 128, 64)):
        out = []
        for name in ("flash2-bwd", "flash2-2pass-bwd"):
            env = {"N": n, "d": dd, "M": k * dd * dd, "dv": dd}
            bid, lb = bb.best_lower_bound(n, dd, k * dd * dd, name)
            assert bid == (bb.BWD_SLOTS_DV.id if k >= 10 else bb.BWD_SLOTS_DV_X.id)
            out.append(round(float(evaluate(BACKWARD_FORMULAS[name].with_dv_equal_d().io, env) / lb), 2))
        got[(n, dd, k)] = tuple(out)
    assert got == {(4096, 64, 4): (1.84, 1.62), (4096, 64, 16): (1.87, 1.72), (16384, 128, 8): (1.65, 1.47),
                   (65536, 64, 16): (1.57, 1.39), (65536, 128, 64): (1.69, 1.52)}


def test_the_numerical_search_stays_below_the_proved_per_segment_bound() -> None:
    spec = importlib.util.spec_from_file_location("bwd_dv_face_check", ROOT / "tools" / "bwd_dv_face_check.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rng = np.random.default_rng(7)
    analytic = np.sqrt(9 / (1024 * np.sqrt(3)))
    for t in (4.5, 10.0, 32.0):
        y, z = mod.maximise(t, 8, rng, rounds=120)
        bound = float(cb.DV_C) * t * t + (0.0 if t >= cb.DV_THRESHOLD else float(cb.DV_GAMMA))
        assert y <= bound, (t, y, bound)
        assert abs(z.sum() - t) < 1e-9 * t
        if t >= cb.DV_THRESHOLD:  # the search reaches the analytic maximum, so the comparison has teeth
            assert y >= 0.999 * analytic * t * t, (t, y)
