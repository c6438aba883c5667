"""The backward claims (solver/claims/backward.py): every algebraic step and consistency link is proved by z3 (the
BWD-SdP steps also by cvc5), no claim's regime is empty (each is evaluated at a witness point), the docs page names
each machine-checked step, the tightest constants of flash2-bwd and of the training step are proved, the leading
crossover is derived, and the exact costs cross where the leading terms say (measured)."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import pytest

from attnio.algorithms.run import count
from attnio.bounds import backward as bb
from attnio.bounds.costs import BACKWARD_FORMULAS, backward_cost
from attnio.bounds.expr import Rel, evaluate, free_symbols
from attnio.bounds.proofs import BACKWARD_STEPS
from attnio.reports.sources import backward_constants_table
from attnio.solver import logic
from attnio.solver.claims import all_claims
from attnio.solver.claims.backward import CLAIMS
from attnio.solver.claims.types import Crossover, Implication, Tightest
from attnio.solver.engine import prove
from attnio.solver.verify import verify_claim

ROOT = Path(__file__).resolve().parents[1]
IMPLICATIONS = [c for c in CLAIMS if isinstance(c, Implication)]

# Points for the witness check: the main symbols and the proofs' auxiliary ones.
_AUX = {"bwd_x": 0, "bwd_I": 1, "bwd_J": 1, "bwd_h": 10**12, "bwd_c": 1}
# the small-cache proofs' auxiliary symbols (bwds_*): all 0 except these (bwds_Q is set in _env)
_AUX_SMALL = {"bwds_h": 10**12, "bwds_tile": 1, "bwds_io": 10**15}
_SMALL_SYMS = {s.name for c in IMPLICATIONS for r in (*c.hyps, c.goal) for s in free_symbols(r) if s.name.startswith("bwds_")}
_SLOTS_SYMS = {s.name for c in IMPLICATIONS for r in (*c.hyps, c.goal) for s in free_symbols(r) if s.name.startswith("bwdq_")}
# the lifted count's auxiliary symbols (bwdl_*, docs/bounds/backward-lift.md): all 0 (an empty segment)
_DV_SYMS = {s.name for c in IMPLICATIONS for r in (*c.hyps, c.goal) for s in free_symbols(r) if s.name.startswith("bwdv_")}
# the charged-once count's auxiliary symbols (bwdo_*, docs/bounds/backward-once.md): all 0 (an empty segment) except
# κ = 1/2 and t = √M (set in _env where M is a square)
_ONCE_SYMS = {s.name for c in IMPLICATIONS for r in (*c.hyps, c.goal) for s in free_symbols(r) if s.name.startswith("bwdo_")}
_LIFT_SYMS = {s.name for c in IMPLICATIONS for r in (*c.hyps, c.goal) for s in free_symbols(r) if s.name.startswith("bwdl_")}
WITNESSES = [
    {"N": 4096, "d": 8, "M": 16384, "dv": 8},  # M ≥ 8d²
    {"N": 4096, "d": 64, "M": 4096, "dv": 64},  # M ≤ 8d²
    {"N": 4096, "d": 64, "M": 65536, "dv": 64},
    {"N": 4096, "d": 128, "M": 256, "dv": 128},  # M ≤ min(4d, d²): flash1-bwd's one-row small-cache link
    # the exact crossover's case lemmas (d = 64, N = 64d): M ≤ 15d²/16 with T_d = 2 (B = 34), 3 (B = 25), ≥ 4
    # (B = 17); M ≥ 9d²/8 with T_d = 2 (B = 38) (T_d = 1: M = 65536 above)
    {"N": 4096, "d": 64, "M": 3600, "dv": 64},
    {"N": 4096, "d": 64, "M": 2000, "dv": 64},
    {"N": 4096, "d": 64, "M": 1000, "dv": 64},
    {"N": 4096, "d": 64, "M": 4608, "dv": 64},
    # the near forms' case s ≥ 8M (docs/bounds/backward-lift.md#near): d²/6 ≤ M ≤ 3d²/4, s = 8M
    {"N": 4096, "d": 64, "M": 2000, "dv": 64, "bwdl_s": 16000},
]


def _env(w: dict) -> dict:
    env = dict(w, **_AUX)
    env["bwd_B"] = 2 * w["M"]
    env["bwd_Q"] = w["M"] * (_AUX["bwd_h"] - 1)
    env.update({n: 0 for n in _SMALL_SYMS})
    env.update({n: 0 for n in _LIFT_SYMS})
    env.update({k: v for k, v in w.items() if k.startswith("bwdl_")})
    env.update(_AUX_SMALL)
    env["bwds_Q"] = 3 * w["M"] * (_AUX_SMALL["bwds_h"] - 1)
    env.update(_slots_aux(w))
    env.update(_dv_aux(w))
    env.update(_two_pass_aux(w))
    env.update({n: 0 for n in _ONCE_SYMS}, bwdo_kappa=Fraction(1, 2))
    if math.isqrt(w["M"]) ** 2 == w["M"]:
        env["bwdo_t"] = math.isqrt(w["M"])
    return env


def _dv_aux(w: dict) -> dict:
    """BWD-slots-dv's auxiliary symbols (bwdv_*, docs/bounds/backward-slots-dv.md): 0 except a segment budget
    T = 2M and the sums over segments of a computation with h = 10¹² segments, the 3Nd final writes as its partial
    I/O and Σn = 3Nd new slots."""
    n_d, m, hh = w["N"] * w["d"], w["M"], 10**12
    env = {n: 0 for n in _DV_SYMS}
    env.update(bwdv_T=2 * m, bwdv_U=3 * n_d, bwdv_Z=3 * n_d, bwdv_h=hh, bwdv_S=4 * m * m * hh + 6 * n_d * m,
               bwdv_Q=m * (hh - 1))
    return env


def _two_pass_aux(w: dict) -> dict:
    """backward.slots.two_pass_sum's symbols (bwd2p_*): flash2-2pass-bwd's own T_c, T_r2 and exact cost at w
    (0 where it does not run)."""
    f = BACKWARD_FORMULAS["flash2-2pass-bwd"].with_dv_equal_d()
    if not all(r.holds(w) for r in f.valid):
        return {"bwd2p_t1": 0, "bwd2p_t2": 0, "bwd2p_io": 0}
    return {"bwd2p_t1": evaluate(f.blocks["T_c"], w), "bwd2p_t2": evaluate(f.blocks["T_r2"], w), "bwd2p_io": evaluate(f.io, w)}


def _slots_aux(w: dict) -> dict:
    """BWD-slots' auxiliary symbols (bwdq_*): 0 except a segment budget T = 2M, the sums over segments of a
    computation with h = 10¹² segments, the 2Nd final writes as its partial I/O and Σn = 2Nd new slots."""
    n_d, m, hh = w["N"] * w["d"], w["M"], 10**12
    env = {n: 0 for n in _SLOTS_SYMS}
    env.update(bwdq_T=2 * m, bwdq_U=2 * n_d, bwdq_Z=2 * n_d, bwdq_h=hh, bwdq_S=4 * m * m * hh + 4 * n_d * m,
               bwdq_Q=m * (hh - 1))
    return env


def _holds_somewhere(hyps) -> dict | None:
    for w in WITNESSES:
        env = _env(w)
        if all(logic.holds(h, env) for h in hyps):
            return env
    return None


def test_backward_claims_are_in_the_aggregate_with_unique_ids() -> None:
    ids = [c.id for c in all_claims()]
    assert len(ids) == len(set(ids))
    assert {c.id for c in CLAIMS} <= set(ids)
    assert all(c.id.startswith("backward.") for c in CLAIMS)


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: c.id)
def test_every_backward_claim_has_a_non_empty_regime(claim) -> None:
    hyps = claim.hyps
    # relations, or (the exact crossover's integrality facts) disjunctions of relations
    assert all(isinstance(h, Rel) or (isinstance(h, logic.Any) and all(isinstance(r, Rel) for r in h.parts))
               for h in hyps), claim.id
    env = _holds_somewhere(hyps)
    assert env is not None, f"{claim.id}: no witness point satisfies the hypotheses"
    if isinstance(claim, Implication):  # and the conclusion holds there (a numeric spot check of the proof)
        assert logic.holds(claim.goal, env), claim.id


@pytest.mark.parametrize("claim", IMPLICATIONS, ids=lambda c: c.id)
def test_every_backward_step_and_consistency_link_is_proved(claim: Implication) -> None:
    v = verify_claim(claim)
    assert v.status == "proved", (claim.id, v.status, v.reason, v.counterexample)


@pytest.mark.parametrize("claim", [c for c in IMPLICATIONS if c.id.startswith("backward.sdp.")], ids=lambda c: c.id)
def test_cvc5_proves_the_bwd_sdp_steps_too(claim: Implication) -> None:
    pytest.importorskip("cvc5")
    assert prove(claim.hyps, claim.goal, backend="cvc5").status == "proved", claim.id


def test_the_docs_page_names_each_machine_checked_step() -> None:
    ids = {c.id for c in CLAIMS} | {"constants.b1.amgm", "constants.b1.endpoint", "constants.b3.square_term"}
    docs = {b.id: b.doc for b in bb.BOUNDS}
    for bound_id, steps in BACKWARD_STEPS.items():
        if bound_id in bb.SMALL_CACHE | bb.LIFT_SMALL | bb.ONCE_SMALL:  # backward-small/-lift/-once.md: own test files
            continue
        text = (ROOT / docs[bound_id]).read_text()
        for n, claim_id in steps:
            if claim_id == "prose":
                continue
            assert claim_id in ids, claim_id
            assert re.search(rf"^{n}\. .*machine-checked: {re.escape(claim_id)}", text, re.M), (bound_id, n, claim_id)


@pytest.mark.parametrize(
    "claim_id",
    [
        "backward.tight.flash1-bwd.large-d",
        "backward.tight.training.flash2",
        "backward.tight.flash2-bwd.large-d",
        "backward.tight.flash2-square-bwd",
        "backward.tight.square_tiling-bwd",
    ],
)
def test_tightest_backward_constants_are_proved_with_the_step_below_refuted(claim_id: str) -> None:
    claim = next(c for c in CLAIMS if c.id == claim_id)
    assert isinstance(claim, Tightest)
    v = verify_claim(claim)
    assert v.status == "proved", (v.status, v.reason)
    assert v.counterexample is not None  # c − precision refuted at a valid integer point
    # re-evaluated here, exactly: the counterexample is in the regime and breaks c − precision, not c
    env = {k: Fraction(x) for k, x in v.counterexample.items()}
    c = Fraction(v.constant)
    assert all(logic.holds(h, env) for h in claim.hyps)
    assert not logic.holds(claim.claim_at(c - claim.precision), env)
    assert logic.holds(claim.claim_at(c), env)


# The constants proved (docs/costs.md#backward-constants): each is checked against the exact cost at realistic points
# in its regime (cost ≤ c·shape + extra) and against its leading constant (the exact ratio approaches it from the
# regime's interior, so c cannot be below it).
SQRT_TILED_EXPECTED = {
    "backward.tight.flash2-bwd.large-d": (Fraction(1055, 64), 16.0),  # 16N²d²/M leading
    "backward.tight.flash2-square-bwd": (Fraction(73, 2), 28.0),  # 28N²d²/M while M ≪ 49d²
    "backward.tight.square_tiling-bwd": (Fraction(15), 8 * 3**0.5),  # 8√3·N²d/√M
}


@pytest.mark.parametrize("claim_id", sorted(SQRT_TILED_EXPECTED))
def test_new_backward_constants_bound_the_exact_costs_at_realistic_points(claim_id: str) -> None:
    from attnio.bounds.expr import evaluate

    claim = next(c for c in CLAIMS if c.id == claim_id)
    c, leading = SQRT_TILED_EXPECTED[claim_id]
    assert c >= leading
    checked = 0
    for dd in (64, 128):
        for NN in (64 * dd, 1024 * dd):
            for MM in sorted({dd * dd // 4 + 1, dd * dd // 2, dd * dd, 4 * dd * dd, 8 * dd * dd, 16 * dd * dd}):
                env = {"N": NN, "d": dd, "M": MM}
                if not all(logic.holds(h, env) for h in claim.hyps):
                    continue
                cost = evaluate(claim.f, env)
                assert cost <= c * evaluate(claim.g, env) + evaluate(claim.extra, env), (env, cost)
                checked += 1
    assert checked >= 4


def test_leading_crossover_of_the_backward_is_derived_near_M_equal_d_squared() -> None:
    claim = next(c for c in CLAIMS if c.id == "backward.crossover.leading.square_tiling-bwd.flash2-bwd")
    v = verify_claim(claim)
    assert v.status == "proved", v.reason
    lo, hi = (float(eval(x)) for x in re.findall(r"M/d² [≤≥] (\d+/\d+)", v.constant))  # noqa: S307  (digits only)
    assert 0.9 < lo <= hi < 1.1, v.constant


@pytest.mark.parametrize("d", [16, 64, 128])
def test_exact_backward_costs_cross_where_the_leading_terms_say(d: int) -> None:
    """Measured (count-only): square_tiling-bwd < flash2-bwd at M/d² ≤ 1/2, > at M/d² ≥ 2 (N = 256d)."""
    N = 256 * d
    for r in (0.5, 0.25):
        M = max(int(r * d * d), 7 * d + 4)
        if M > r * d * d:
            continue
        assert count("square_tiling-bwd", N=N, d=d, M=M).io_words < count("flash2-bwd", N=N, d=d, M=M).io_words
    for r in (2, 4):
        M = r * d * d
        assert count("square_tiling-bwd", N=N, d=d, M=M).io_words > count("flash2-bwd", N=N, d=d, M=M).io_words


def _exact_crossover() -> Crossover:
    return next(c for c in CLAIMS if c.id == "backward.crossover.square_tiling-bwd.flash2-bwd")


@pytest.fixture(scope="module")
def exact_crossover_verdict():
    return verify_claim(_exact_crossover())


def test_exact_backward_crossover_is_derived_with_a_narrow_band(exact_crossover_verdict) -> None:
    """The exact costs' crossover (d ≥ 64, N ≥ 64d): both sides proved, the band between them at most 1/4 wide and
    around the leading terms' crossover once T_d = 2 is counted exactly (M/d² ≈ 0.947)."""
    v = exact_crossover_verdict
    assert v.status == "proved", v.reason
    lo, hi = (Fraction(x) for x in re.findall(r"M/d² [≤≥] (\d+/\d+)", v.constant))
    assert Fraction(7, 8) <= lo < Fraction(947, 1000) < hi <= Fraction(5, 4), v.constant
    assert hi - lo <= Fraction(1, 4)
    # the lower side is sharp: one step up, a genuine integer counterexample (re-evaluated exactly here)
    assert v.counterexample is not None
    env = {k: int(Fraction(x)) for k, x in v.counterexample.items()}
    assert backward_cost("square_tiling-bwd", **env).io_words >= backward_cost("flash2-bwd", **env).io_words


@pytest.mark.parametrize("d", [64, 96, 128])
def test_exact_crossover_sides_agree_with_the_exact_counts(d: int, exact_crossover_verdict) -> None:
    """At concrete points on each proved side, the exact formulas (and, at N = 64d, the machine's measured counts)
    order the two schedules as the proved sides say."""
    v = exact_crossover_verdict
    assert v.status == "proved", v.reason
    lo, hi = (Fraction(x) for x in re.findall(r"M/d² [≤≥] (\d+/\d+)", v.constant))
    for N in (64 * d, 1000 * d):
        for M in (int(lo * d * d), int(lo * d * d * 3 / 4), (7 * d + 4 + d * d // 4)):  # a-side: st < f2
            assert M <= lo * d * d
            st, f2 = backward_cost("square_tiling-bwd", N=N, d=d, M=M), backward_cost("flash2-bwd", N=N, d=d, M=M)
            assert st.io_words < f2.io_words, (N, d, M)
        for M in (-(-hi.numerator * d * d // hi.denominator), 2 * d * d, N * d):  # b-side: f2 ≤ st
            assert M >= hi * d * d
            st, f2 = backward_cost("square_tiling-bwd", N=N, d=d, M=M), backward_cost("flash2-bwd", N=N, d=d, M=M)
            assert f2.io_words <= st.io_words, (N, d, M)
    if d == 64:  # measured on the machine (count-only), at one point of each side
        N = 64 * d
        for M, st_wins in ((int(lo * d * d), True), (-(-hi.numerator * d * d // hi.denominator), False)):
            st = count("square_tiling-bwd", N=N, d=d, M=M).io_words
            f2 = count("flash2-bwd", N=N, d=d, M=M).io_words
            assert st == backward_cost("square_tiling-bwd", N=N, d=d, M=M).io_words
            assert (st < f2) == st_wins, (M, st, f2)


def test_tile_integrality_facts_hold_at_integer_points() -> None:
    """backward.crossover.tiles' facts are true of ⌈d/B⌉ at every integer point (checked exhaustively on a grid),
    and not implied by the ceiling's real relaxation: the exact crossover needs them."""
    claim = next(c for c in CLAIMS if c.id == "backward.crossover.tiles")
    for dd in range(1, 40):
        for MM in range(5, 3 * dd * dd + 40, 7):
            assert logic.holds(claim.goal, {"N": 1, "d": dd, "M": MM}), (dd, MM)
    # over the reals (⌈d/B⌉ any real in [d/B, d/B + 1)) they do not follow: the proof needs integer reasoning
    assert prove(claim.hyps, claim.goal, relax=False, int_retry=False).status != "proved"


def test_square_tiling_bwd_tile_facts_hold_at_integer_points_of_its_regime() -> None:
    """The facts backward.tight.square_tiling-bwd's hypotheses restate (backward.tight.square_tiling-bwd.tiles.*)
    hold at every integer point of its regime on a grid (d ≥ 64, d²/4 ≤ M ≤ d²), so they leave its constant as is."""
    claims = [c for c in CLAIMS if c.id.startswith("backward.tight.square_tiling-bwd.tiles.")]
    assert {c.id.rsplit(".", 1)[1] for c in claims} == {"fit", "ceil", "td", "td4"}
    for dd in range(64, 90, 5):
        for MM in range(dd * dd // 4 + 1, dd * dd + 1, 97):
            for NN in (1, 7, 100):
                env = {"N": NN, "d": dd, "M": MM}
                for c in claims:
                    assert logic.holds(c.goal, env), (c.id, env)


def test_backward_constants_table_at_the_forward_points() -> None:
    rows = backward_constants_table()
    assert len(rows) == 6
    for r in rows:
        assert r.best_schedule == "flash2-2pass-bwd"  # 14N²d²/M; flash1-bwd (overflows M) is excluded
        assert r.ratio_best < r.ratio_flash2_bwd
        assert r.ratio_flash2_bwd >= 1 and r.ratio_best >= 1  # no bound above a schedule's exact count
        assert 16 <= r.flash2_bwd_constant <= 19
    big = [r for r in rows if r.M >= 8 * r.d**2]
    # since BWD-slots-dv (docs/bounds/backward-slots-dv.md; was BWD-slots / BWD-slots-x with ratios < 2.3)
    assert big and all(r.best_bound in (bb.BWD_SLOTS_DV.id, bb.BWD_SLOTS_DV_X.id) and r.ratio_flash2_bwd < 1.9
                       for r in big)
    slots = [r for r in rows if r.M >= 10 * r.d**2]  # BWD-slots-dv's regime: it is the larger bound there
    assert len(slots) == 4 and all(r.best_bound == bb.BWD_SLOTS_DV.id and r.ratio_flash2_bwd < 1.9 for r in slots)


def test_overflowing_backward_schedules_are_those_run_in_audit_mode() -> None:
    from attnio.algorithms import registry

    assert bb.OVERFLOWS == {n for n in registry.names("backward") if registry.get(n).audit}
    assert bb.RECOMPUTES_S == {n for n in registry.names("backward") if registry.get(n).recomputes_S}


def test_the_exact_crossover_proves_the_sides_its_cvc5_lemmas_state() -> None:
    """The lemmas backward.crossover.link.below.* / .above.* assume the sides M/d² ≤ lo and M/d² ≥ hi (the search
    floor and ceiling); a bisection that proved other sides would leave cvc5 unable to use them."""
    from attnio.solver.claims import by_id
    from attnio.solver.claims.backward import XOVER_ID

    c = by_id(XOVER_ID)
    assert isinstance(c, Crossover) and c.lemmas
    v = verify_claim(c)
    assert v.ok, (v.status, v.reason)
    assert v.details[0]["side"].startswith(f"M/d² ≤ {c.lo} ⇒") and v.details[2]["side"].startswith(f"M/d² ≥ {c.hi} ⇒")
    below = [by_id(i) for i in c.lemmas if ".below." in i]
    above = [by_id(i) for i in c.lemmas if ".above." in i]
    assert below and above
    assert all(c.axis_at_most(c.lo) in lemma.hyps for lemma in below)
    assert all(c.axis_at_least(c.hi) in lemma.hyps for lemma in above)
