"""The translator, the engine's verdicts, the relaxation, the claim kinds, and the cvc5 second opinion."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnio.bounds import expr as ex
from attnio.bounds.costs import FORMULAS
from attnio.bounds.expr import ceil, eq, evaluate, floor, log2, maximum, minimum, sqrt
from attnio.bounds.symbols import M, N, d
from attnio.solver import logic
from attnio.solver.claims import Tightest, all_claims, by_id
from attnio.solver.engine import integer_counterexample, prove
from attnio.solver.relax import relax
from attnio.solver.verify import verify_all, verify_claim


# translator: true facts are proved, false ones refuted at a valid integer point ------------------------------
@pytest.mark.parametrize(
    "goal",
    [
        floor(N / 2) <= N / 2,
        3 * ceil(N / 3) >= N,
        floor(sqrt(M / 4)) ** 2 <= M / 4,
        4 * (floor(sqrt(M / 4)) + 1) ** 2 >= M + 1,
        minimum(N, d) <= maximum(N, d),
        eq(sqrt(M) * sqrt(M), M),
        ceil(N / floor((M - d) / (2 * d + 4))) >= 1,
    ],
    ids=str,
)
def test_translator_proves_true_facts(goal):
    hyps = (3 * d + 4 <= M,)
    assert prove(hyps, goal).status == "proved"


@pytest.mark.parametrize(
    "hyps, goal",
    [
        ((), floor(N / 2) >= N / 2),
        ((), 3 * ceil(N / 3) <= N),
        ((16 <= M,), eq(floor(sqrt(M / 4)) ** 2, M / 4)),
        ((), eq(minimum(N, d), N)),
    ],
    ids=str,
)
def test_translator_refutes_false_facts_with_valid_integer_counterexample(hyps, goal):
    o = prove(hyps, goal)
    assert o.status == "refuted" and not o.spurious
    env = {k: int(v) for k, v in o.counterexample.items()}
    assert all(logic.holds(h, env) for h in hyps) and not logic.holds(goal, env)


def test_log2_bracketing_is_sound_and_usable():
    assert prove((64 <= N,), 6 <= log2(N)).status == "proved"
    assert prove((), log2(N) <= N).status == "proved"
    o = prove((64 <= N,), log2(N) <= 5)
    assert o.status == "refuted" and o.counterexample["N"] >= 64


def test_denominator_that_can_vanish_is_reported_not_assumed():
    o = prove((), N / (M - 5) >= 0)
    assert o.status == "refuted"
    assert o.counterexample["M"] <= 5  # where M − 5 ≤ 0: the claim's expression is not defined/positive
    assert "needs 0 < M − 5" in o.reason  # the condition the claim needs, named


def test_real_only_counterexample_is_rechecked_over_integers():
    # 2 ≤ 2N ≤ 3 leaves only N = 1 among integers; over the reals N = 3/2 violates N ≤ 1.
    hyps = (2 <= 2 * N, 2 * N <= 3)
    assert prove(hyps, N <= 1).status == "proved"
    o = prove(hyps, N <= 1, int_retry=False)
    assert o.status == "unknown" and o.spurious  # labelled spurious, never a pass
    assert integer_counterexample(hyps, N <= 1, o.counterexample) is None


# relaxation: lower ≤ exact ≤ upper on every cost formula ------------------------------------------------------
_POINTS = st.tuples(st.integers(1, 4096), st.integers(1, 160), st.integers(4, 200_000))


@given(_POINTS, st.sampled_from(sorted(FORMULAS)))
def test_relaxation_brackets_every_cost_formula(point, name):
    n, dd, m = point
    f = FORMULAS[name].with_dv_equal_d()
    env = {"N": n, "d": dd, "M": m}
    if not all(r.holds(env) for r in f.valid):
        return
    exact = evaluate(f.io, env)
    for side, ok in (("lower", lambda v: v <= exact), ("upper", lambda v: v >= exact)):
        try:
            v = evaluate(relax(f.io, side), env)
        except ZeroDivisionError:
            continue
        assert ok(v), (name, side, env, v, exact)


# claim kinds ---------------------------------------------------------------------------------------------------
def test_tightest_constant_is_proved_and_the_step_below_refuted_at_a_real_point():
    v = verify_claim(by_id("tight.flash2.large-d"))
    assert v.status == "proved"
    c = Fraction(v.constant)
    claim = by_id("tight.flash2.large-d")
    assert isinstance(claim, Tightest)
    env = {k: int(Fraction(x)) for k, x in v.counterexample.items()}
    assert all(logic.holds(h, env) for h in claim.hyps)
    # the counterexample violates c − δ but (being a point of the regime) respects c
    assert not logic.holds(claim.claim_at(c - claim.precision), env)
    assert logic.holds(claim.claim_at(c), env)
    assert Fraction(4) < c < Fraction(5)  # leading constant of flash2 is 4; rounding adds a little


def test_bisection_reuses_an_earlier_counterexample_only_where_it_refutes_the_step_exactly():
    from attnio.solver.engine import Outcome
    from attnio.solver.verify import _refuted_before

    hyps = (d <= N,)
    earlier = [Outcome("refuted", {"N": Fraction(10), "d": Fraction(2)})]  # N = 10, d = 2: N/d = 5
    hit = _refuted_before(earlier, hyps, N <= 4 * d)  # c = 4 fails at the point (10 > 8)
    assert hit is not None and hit.status == "refuted" and hit.counterexample == {"N": 10, "d": 2}
    assert _refuted_before(earlier, hyps, N <= 5 * d) is None  # c = 5 holds there (10 ≤ 10): ask the solver
    assert _refuted_before(earlier, (3 * d <= N, N <= 4 * d), N <= 2 * d) is None  # the point is outside the regime
    spurious = [Outcome("refuted", {"N": Fraction(10), "d": Fraction(2)}, spurious=True)]
    assert _refuted_before(spurious, hyps, N <= 4 * d) is None  # a spurious model is never reused
    # √10 ≈ 3.16 < 4: true in floating point, but not exact: the solver decides
    assert _refuted_before(earlier, hyps, 4 <= sqrt(N)) is None
    assert _refuted_before(earlier, hyps, 4 <= sqrt(N + 6)) is None  # √16 = 4: exact, and it holds
    assert _refuted_before(earlier, hyps, 5 <= sqrt(N + 6)) is not None  # exact, and it fails


def test_expression_hash_is_cached_per_process_and_never_pickled():
    import copy
    import pickle

    e = N**2 * d / M + floor(N / d)
    h = hash(e)
    assert hash(e) == h and "_hash" in vars(e)
    for clone in (pickle.loads(pickle.dumps(e)), copy.deepcopy(e)):
        assert "_hash" not in vars(clone) and clone == e and hash(clone) == h
    assert repr(e) == repr(pickle.loads(pickle.dumps(e)))  # the cache is not a field: repr and fingerprints unchanged


def test_crossover_boundary_is_derived_not_typed():
    v = verify_claim(by_id("crossover.leading.square_tiling.flash2"))
    assert v.status == "proved"
    # 36 − 16√5 ≈ 0.22291: the derived grid values must straddle it
    assert "57/256" in v.constant and "29/128" in v.constant
    assert Fraction(57, 256) < Fraction(36) - 16 * Fraction(22360679775, 10**10) < Fraction(29, 128)


def test_coverage_finds_the_overlap_when_its_domain_condition_is_dropped():
    from attnio.solver.claims import Coverage

    c = by_id("coverage.saha-ye")
    assert verify_claim(c).status == "proved"
    broken = Coverage("x", "no d ≤ N", (), c.regimes)
    v = verify_claim(broken)
    assert v.status == "refuted"
    env = {k: int(Fraction(x)) for k, x in v.counterexample.items()}
    assert env["d"] > env["N"]


def test_verify_all_selects_and_reports_plain_data():
    vs = verify_all(["sy.meet", "sy.min-branch.large"])
    assert [v.id for v in vs] == ["sy.meet", "sy.min-branch.large"]
    assert all(v.ok and isinstance(v.to_json(), dict) for v in vs)


def test_claim_ids_unique_and_every_formula_has_its_generated_claims():
    ids = {c.id for c in all_claims()}
    for name in FORMULAS:
        assert {f"wd.{name}", f"trivial.{name}"} <= ids


# second opinion -------------------------------------------------------------------------------------------------
CVC5_SUBSET = [
    "sy.meet",
    "sy.min-branch.small",
    "sy.min-branch.large",
    "sy.n2-free-small-cache",
    "sy.lemma3.4.step-io",
    "sy.thm4.8.step-bstar",
    "coverage.saha-ye",
    "trivial.flash2",
    "consistency.sy.lemma3.4.explicit.flash2",
]


@pytest.mark.parametrize("claim_id", CVC5_SUBSET)
def test_cvc5_agrees_with_z3(claim_id):
    pytest.importorskip("cvc5")
    v = verify_claim(by_id(claim_id), solver="both")
    assert v.status == "proved" and v.crosscheck == "proved", (v.reason, v.crosscheck)


def _with_lemmas(monkeypatch, lemmas):
    """A small crossover (M against d² along M/d²) whose cvc5 re-check goes through ``lemmas``."""
    from attnio.solver import claims as claims_module
    from attnio.solver.claims import Crossover

    table = {lemma.id: lemma for lemma in lemmas}
    real = claims_module.by_id
    monkeypatch.setattr(claims_module, "by_id", lambda i: table[i] if i in table else real(i))
    return Crossover("x.lemmas", "M < d² below M/d² = 1", (), a=M, b=d**2, axis=M / d**2, lo=Fraction(1, 2),
                     hi=Fraction(2), precision=Fraction(1, 4), lemmas=tuple(table))


def test_cvc5_recheck_through_lemmas_counts_only_when_every_lemma_is_re_proved(monkeypatch):
    pytest.importorskip("cvc5")
    from attnio.solver.claims import Implication

    true = Implication("x.lemma.true", "inequality", "M ≤ M + d", (), M <= M + d)
    false = Implication("x.lemma.false", "inequality", "M < 1: refuted, and it would make every obligation hold",
                        (), M < 1)
    ok = verify_claim(_with_lemmas(monkeypatch, [true]), solver="both")
    assert ok.status == "proved" and ok.crosscheck == "proved", (ok.reason, ok.details)
    assert ok.details[-1] == {"cvc5_lemmas": ["x.lemma.true"], "not_re_proved": []}
    bad = verify_claim(_with_lemmas(monkeypatch, [true, false]), solver="both")
    assert bad.status == "proved" and bad.crosscheck == "unknown"  # z3's verdict never uses lemmas
    assert bad.details[-1]["not_re_proved"] == ["x.lemma.false"]


def test_every_lemma_is_an_implication_of_the_catalog_and_changes_its_claims_fingerprint(monkeypatch):
    import dataclasses

    from attnio.solver.claims import Implication
    from attnio.solver.verify import fingerprint

    with_lemmas = [c for c in all_claims() if getattr(c, "lemmas", ())]
    assert with_lemmas, "no claim is re-proved through lemmas"
    for c in with_lemmas:
        for lid in c.lemmas:
            assert lid != c.id and isinstance(by_id(lid), Implication), (c.id, lid)
    c = with_lemmas[0]
    before = fingerprint(c)
    lemma = by_id(c.lemmas[0])
    changed = dataclasses.replace(lemma, hyps=lemma.hyps + (d <= N,))
    from attnio.solver import claims as claims_module

    real = claims_module.by_id
    monkeypatch.setattr(claims_module, "by_id", lambda i: changed if i == lemma.id else real(i))
    assert fingerprint(c) != before


def test_cli_verify_exit_codes():
    import subprocess
    import sys

    ok = subprocess.run([sys.executable, "-m", "attnio.cli", "verify", "--claim", "sy.meet"], capture_output=True,
                        text=True)
    assert ok.returncode == 0 and "proved" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "attnio.cli", "verify", "--claim", "no.such.claim"],
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "no.such.claim" in bad.stderr


# --- pinned by mutation testing (tools/mutation.sh, docs/mutation.md): behaviour a surviving mutant changed ---

# --- the translator (solver/translator.py): its facts are true of the true value, and pin it exactly --------

_TRANSLATED = [
    ex.floor(N / M), ex.ceil(N / M), ex.floor(ex.sqrt(M / 4)), ex.floor(ex.sqrt(M)), ex.ceil(ex.sqrt(M) / 2),
    ex.floor((M - d) / (2 * d + 4)), ex.ceil(N / ex.floor((M - d) / (2 * d + 4))), ex.ceil(3 * N / 4),
    ex.floor(Fraction(1, 3) * N), ex.minimum(N, d, M), ex.maximum(N, d, M), N**-2, (N + d) ** 3 / M, ex.log2(M),
    ex.floor(N) + ex.ceil(d) + N**0,
    # arguments that are no ratio p/q (only the plain brackets apply) and arguments that can be negative
    ex.floor(ex.sqrt(N + Fraction(1, 2))), ex.floor(N / 2 + Fraction(1, 2)), ex.floor((M - 20) / 3), ex.ceil((M - 20) / 3),
    ex.sqrt(N / M), ex.sqrt(M) - N,  # square roots below 1 (√(1/16) = 1/4) and exact ones
]
_TRANSLATION_POINTS = [{"N": 1, "d": 1, "M": 16}, {"N": 7, "d": 2, "M": 64}, {"N": 100, "d": 3, "M": 1024}, {"N": 5, "d": 9, "M": 4}]


@pytest.mark.parametrize("e", _TRANSLATED, ids=str)
def test_the_translation_of_an_expression_is_exactly_its_value_at_integer_points(e: ex.Expr) -> None:
    """In mode "int" (floors and ceilings as integers) the facts admit the true value and no other one; at
    these points √ is rational or under a floor and log₂'s argument is a power of two."""
    import z3

    from attnio.solver.translator import Translator

    for env in _TRANSLATION_POINTS:
        if env["M"] - env["d"] < 2 * env["d"] + 4 and "2·d + 4" in str(e):
            continue  # the inner floor is 0 there: ⌈N/0⌉ is outside the formula's domain
        value = ex.evaluate(e, env)
        if not isinstance(value, Fraction):
            continue  # an irrational √ (no exact value to pin)
        t = Translator("z3", mode="int")
        term = t.expr(e)
        true = value
        s = z3.Solver(ctx=t.ctx)  # the translator's own context (a fresh one per translator)
        s.add(*t.facts, *(t.vars[k] == v for k, v in env.items() if k in t.vars))
        s.add(*(c for _, c in t.side_conditions))
        assert s.check(term == z3.RealVal(true.numerator, t.ctx) / true.denominator) == z3.sat, (str(e), env)
        assert s.check(term != z3.RealVal(true.numerator, t.ctx) / true.denominator) == z3.unsat, (str(e), env)


def test_real_mode_floor_and_ceil_brackets_are_sound_and_tight_for_ratios() -> None:
    """Over the reals ⌊N/M⌋ is only bracketed; with integer N, M the bracket (N − M + 1)/M ≤ c ≤ N/M holds
    for the true floor and excludes anything a whole step away."""
    import z3

    from attnio.solver.translator import Translator

    for n, m in [(7, 2), (8, 2), (1, 5), (100, 7), (5, 1)]:
        # the exact real interval the facts allow: ⌊n/m⌋ ∈ [max((n − m + 1)/m, 0, 1 if n ≥ m), n/m] and
        # ⌈n/m⌉ ∈ [max(n/m, 1), (n + m − 1)/m]
        x = Fraction(n, m)
        for e, true, lo, hi in [(ex.floor(N / M), n // m, max(Fraction(n - m + 1, m), Fraction(int(n >= m))), x),
                                (ex.ceil(N / M), -(-n // m), max(x, Fraction(1)), Fraction(n + m - 1, m))]:
            t = Translator("z3")
            c = t.expr(e)
            s = z3.Solver(ctx=t.ctx)  # the translator's own context (a fresh one per translator)
            s.add(*t.facts, t.vars["N"] == n, t.vars["M"] == m)
            q = lambda v, ctx=t.ctx: z3.RealVal(v.numerator, ctx) / v.denominator  # noqa: E731
            assert s.check(c == true) == z3.sat and s.check(c == q(lo)) == z3.sat and s.check(c == q(hi)) == z3.sat
            eps = Fraction(1, 1000)
            assert s.check(c < q(lo - eps)) == z3.unsat and s.check(c > q(hi + eps)) == z3.unsat, (str(e), n, m)


def test_real_mode_floor_of_zero_is_zero_and_log2_between_powers_of_two_is_chord_and_tangent() -> None:
    import z3

    from attnio.solver.translator import INV_LN2_UPPER, LOG_RANGE, Translator

    t = Translator("z3")
    c = t.expr(ex.floor((M - 16) / 4))
    s = z3.Solver(ctx=t.ctx)  # the translator's own context (a fresh one per translator)
    s.add(*t.facts, t.vars["M"] == 16)
    assert s.check(c == 0) == z3.sat and s.check(c < 0) == z3.unsat  # ⌊0⌋ = 0 even over the reals
    for n in (3, 6, 100):
        t = Translator("z3")
        L = t.expr(ex.log2(N))
        s = z3.Solver(ctx=t.ctx)  # the translator's own context (a fresh one per translator)
        s.add(*t.facts, t.vars["N"] == n)
        k = n.bit_length() - 1
        chord = k + Fraction(n - 2**k, 2**k)  # from below: the chord on [2^k, 2^(k+1)]
        tangent = min(j + Fraction(n - 2**j, 2**j) * INV_LN2_UPPER for j in range(LOG_RANGE + 1))  # from above
        q = lambda v, ctx=t.ctx: z3.RealVal(v.numerator, ctx) / v.denominator  # noqa: E731
        assert s.check(L == q(chord)) == z3.sat and s.check(L < q(chord)) == z3.unsat, n
        assert s.check(L == q(tangent)) == z3.sat and s.check(L > q(tangent)) == z3.unsat, n


def test_log2_is_pinned_exactly_at_every_power_of_two_of_its_range() -> None:
    import z3

    from attnio.solver.translator import LOG_RANGE, Translator

    for k in (0, 1, 10, LOG_RANGE):
        t = Translator("z3")
        L = t.expr(ex.log2(N))
        s = z3.Solver(ctx=t.ctx)  # the translator's own context (a fresh one per translator)
        s.add(*t.facts, t.vars["N"] == 2**k)
        assert s.check(L == k) == z3.sat and s.check(L != k) == z3.unsat, k


def test_which_expressions_the_translator_treats_as_integers_and_as_ratios() -> None:
    from attnio.solver.translator import as_ratio, is_integer_valued

    for e in (N, 3 * N + 2, N**2 * d, ex.floor(N / M), ex.ceil(ex.sqrt(M)), ex.minimum(N, ex.floor(M / 2)), ex.maximum(N, d)):
        assert is_integer_valued(e), str(e)
    for e in (N / M, ex.sqrt(N), Fraction(1, 2) * N, ex.log2(N), ex.minimum(N, M / 2), N + Fraction(1, 3)):
        assert not is_integer_valued(e), str(e)
    assert as_ratio(N / ex.floor(M / 4)) == (N, ex.floor(M / 4))
    assert as_ratio(3 * N / 4) == (3 * N, ex.Const(Fraction(4))) and as_ratio(N * d / 2) == (N * d, ex.Const(Fraction(2)))
    assert as_ratio(N) == (N, ex.Const(Fraction(1))) and as_ratio(ex.sqrt(N)) is None and as_ratio(N / ex.sqrt(M)) is None
