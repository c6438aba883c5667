"""Falsification: no explicit lower bound of the catalog exceeds the exact count of a schedule that computes what
it bounds, at points drawn from the bound's **encoded** regime (its ``Rel`` tuple), not from its prose.

Every explicit lower bound of :func:`attnio.bounds.catalog.all_bounds` is tested (the list is the catalog's, not
written here). A point carries every symbol the bound or a schedule uses: N (or N_q, N_kv, batch, heads, kv-heads
and the mask for a workload bound), d, d_v, M (and the rank r for approximate attention), with edge values
(d_v = 1, d_v = d, N_kv = 1, H_kv = 1, g = 1, M at the least and the largest value its regime allows, M at a
schedule's least valid M, M near k·d²). **Every parameter the schedules take is drawn**, whatever the bound's
regime names: d_v ∈ {1, …, 2d + 1} for every bound (a bound that holds only at d_v = d must say so in its regime,
``eq(dv, d)``, and is then drawn at d_v = d), N_q ≠ N_kv, heads, groups and the causal mask for workload bounds
(the word counts do not depend on the dtype). ``test_the_draw_covers_every_parameter_of_the_compared_schedules``
checks that a new bound cannot enter the catalog without this: the symbols of every schedule compared with it are
drawn, and d_v ≠ d is reached unless the regime pins d_v = d.

The schedules compared, each wherever its validity (``valid``) holds at the point:

- forward bounds: every formula of ``FORMULAS`` (``cost``), except those whose working set exceeds M (audit mode);
- backward bounds: the formulas of ``BACKWARD_FORMULAS`` that the bound's model covers (``backward.COVERS``),
  except audit mode;
- workload bounds: every workload formula of the bound's mask (``workload_cost``, per-head and grouped), and for a
  plain workload (N_q = N_kv, no mask) every forward formula run per head; backward: ``workload_backward_cost``
  (flash2-bwd recomputes S, so every backward workload bound covers it);
- approximate attention: the poly schedules of the bound's class (docs/approx.md §5; poly runs at d_v = d only), and
  for the trivial class also every exact forward formula.

All arithmetic is exact (Fractions; a bound with an irrational square root is decided in floating point only when
it is more than a relative 1e-9 away from the count, and an undecided comparison fails the test).

Examples per bound: the profile's (tests/conftest.py: dev 40, ci 50, mutation 20), 2,000 with
``ATTNIO_HYPOTHESIS_PROFILE=nightly``.
"""

from __future__ import annotations

import os
import re
from fractions import Fraction

import pytest
from hypothesis import HealthCheck, assume, find, given, settings
from hypothesis import strategies as st

from attnio.algorithms import registry
from attnio.bounds import approx, backward, workloads
from attnio.bounds.catalog import NOT_IO, all_bounds
from attnio.bounds.costs import BACKWARD_FORMULAS, FORMULAS, WORKLOAD_BACKWARD_FORMULAS, WORKLOAD_FORMULAS
from attnio.bounds.expr import Rel, evaluate, evaluate_int, free_symbols
from attnio.bounds.types import APPROXIMATE, Bound
from attnio.core.workload import Workload

PROFILE = os.environ.get("ATTNIO_HYPOTHESIS_PROFILE", "")
EXAMPLES = 2000 if PROFILE == "nightly" else settings.default.max_examples

WORKLOAD_SYMS = {"Nq", "Nkv", "g"}
SINGLE_HEAD_SYMS = {"N", "d", "M"}


def _names(b: Bound) -> set[str]:
    out = {s.name for s in free_symbols(b.expr)}
    for r in b.regime:
        out |= {s.name for s in free_symbols(r)}
    return out | set(b.symbols)


def _regime_names(b: Bound) -> set[str]:
    return {s.name for r in b.regime for s in free_symbols(r)}


def family(b: Bound) -> str:
    if WORKLOAD_SYMS & _names(b):
        return "workload-" + b.computation
    if b.cdag == APPROXIMATE:
        return "approx"
    return b.computation


def lower_bounds() -> list[Bound]:
    return [b for b in all_bounds() if b.kind == "lower" and b.explicit and b.id not in NOT_IO]


LOWER = lower_bounds()
FORWARD_AUDIT = frozenset(n for n in registry.names() if registry.get(n).audit)
BACKWARD_AUDIT = frozenset(n for n in registry.names("backward") if registry.get(n).audit)
APPROX_CLASS = approx.CLASS_SCHEDULES  # docs/approx.md §5: the poly schedules in each approximate bound's class


DV_PINNED = "dv = d"  # str of eq(dv, d), the relation by which a regime states d_v = d


def dv_pinned(b: Bound) -> bool:
    """The bound's encoded regime states d_v = d (then d_v is drawn equal to d; otherwise from 1 to 2d + 1)."""
    return any(str(r) == DV_PINNED for r in b.regime)


# ----------------------------------------------------------------------------------------------- the regime's M


def _holds(rels: tuple[Rel, ...], env: dict) -> bool:
    return all(r.holds(env) for r in rels)


def least_M(rels: tuple[Rel, ...], env: dict, cap: int = 1 << 40) -> int | None:
    """The least M ≥ 1 at which ``rels`` hold (the other symbols as in ``env``), assuming the M where they hold
    from there on form an interval; None if none up to ``cap``."""
    if _holds(rels, {**env, "M": 1}):
        return 1
    hi = 2
    while hi <= cap and not _holds(rels, {**env, "M": hi}):
        hi *= 2
    if hi > cap:
        return None
    lo = hi // 2  # fails at lo
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if _holds(rels, {**env, "M": mid}) else (mid, hi)
    return hi


def largest_M(rels: tuple[Rel, ...], env: dict, start: int, cap: int = 1 << 40) -> int | None:
    """The largest M ≥ start at which ``rels`` hold (an interval from ``start``); None if it holds at ``cap``."""
    if _holds(rels, {**env, "M": cap}):
        return None
    lo, hi = start, cap  # holds at lo, fails at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _holds(rels, {**env, "M": mid}) else (lo, mid)
    return lo


def schedules_valid(b: Bound) -> list[tuple[Rel, ...]]:
    fam = family(b)
    if fam == "forward":
        return [f.valid for f in FORMULAS.values()]
    if fam == "backward":
        return [BACKWARD_FORMULAS[n].valid for n in backward.COVERS.get(b.id, ())]
    if fam == "workload-forward":
        return [f.valid for f in WORKLOAD_FORMULAS.values()]
    if fam == "workload-backward":
        return [f.valid for f in WORKLOAD_BACKWARD_FORMULAS.values()]
    return [approx.FORMULAS[s].valid for s in APPROX_CLASS[b.id]]


@st.composite
def draw_M(draw, b: Bound, env: dict) -> int:
    mode = draw(st.sampled_from(("least", "largest", "schedule", "dsq", "nd", "free")))
    d_ = env["d"]
    n_ = env.get("N", env.get("Nkv", 1))
    if mode in ("least", "largest"):
        m0 = least_M(b.regime, env)
        if m0 is not None and mode == "largest":
            m0 = largest_M(b.regime, env, m0)
        if m0 is not None:
            return m0 + draw(st.sampled_from((0, 0, 0, 1)))
    if mode == "schedule":
        m0 = least_M(draw(st.sampled_from(schedules_valid(b))), {**env, "g": env.get("g", 1)})
        if m0 is not None:
            return m0 + draw(st.sampled_from((0, 0, 1, 2)))
    if mode == "dsq":
        return max(1, d_ * d_ * 2 ** draw(st.integers(0, 13)) // 64 + draw(st.integers(-1, 1)))
    if mode == "nd":
        return max(1, n_ * d_ * 2 ** draw(st.integers(0, 8)) // 16 + draw(st.integers(-1, 1)))
    return draw(st.integers(1, 1 << 24))


DS = st.one_of(st.sampled_from((1, 2, 3, 4, 8, 16, 32, 64, 128)), st.integers(1, 160))
NS = st.one_of(st.sampled_from((1, 2, 3, 4, 16, 1024, 4096, 16384, 65536)), st.integers(1, 70000), st.integers(1024, 70000))


@st.composite
def point(draw, b: Bound) -> dict:
    """A point of ``b``'s encoded regime: a dict of every symbol (``causal``, ``batch``, ``heads``, ``kv_heads``
    too for workload bounds)."""
    fam = family(b)
    d_ = draw(DS)
    if dv_pinned(b):
        dv_ = d_
    else:
        dv_ = draw(st.one_of(st.just(d_), st.just(1), st.integers(1, 2 * d_ + 1)))
    env: dict = {"d": d_, "dv": dv_}
    if fam.startswith("workload"):
        causal = b.id in workloads.CAUSAL | workloads.BWD_CAUSAL or (
            b.id in (workloads.TRIVIAL_ONE_KEY.id, workloads.BWD_TRIVIAL.id) and draw(st.booleans())
        )
        nkv = draw(st.one_of(st.just(1), st.just(2), NS))
        nq = draw(st.one_of(st.just(nkv), st.just(nkv), st.just(1), st.integers(1, nkv) if causal else NS))
        kv_heads, groups = draw(st.sampled_from((1, 1, 2, 4, 8))), draw(st.sampled_from((1, 1, 2, 4, 8)))
        env |= {"Nq": nq, "Nkv": nkv, "g": groups, "causal": causal, "batch": draw(st.sampled_from((1, 1, 2, 3))),
                "kv_heads": kv_heads, "heads": kv_heads * groups}
        assume(not causal or nq <= nkv)
    else:
        env["N"] = draw(NS)
    if fam == "approx":
        env["r"] = draw(st.one_of(st.just(1), st.integers(1, 64), st.integers(1, 1 << 20)))
    env["M"] = draw(draw_M(b, env))
    assume(_holds(b.regime, env))
    return env


# ----------------------------------------------------------------------------------------------- the comparison


def _single(env: dict) -> dict:
    return {k: env[k] for k in ("N", "d", "M", "dv", "r") if k in env}


def exact_counts(b: Bound, env: dict) -> dict[str, int]:
    """The exact count of every schedule that computes what ``b`` bounds and runs at ``env``."""
    fam = family(b)
    out: dict[str, int] = {}
    if fam in ("forward", "approx"):
        e = _single(env)
        names = [n for n in FORMULAS if n not in FORWARD_AUDIT] if fam == "forward" or b.id == "approx.lower.trivial" else []
        for n in names:
            f = FORMULAS[n]
            if _holds(f.valid, e):
                out[n] = evaluate_int(f.io, e)
        for s in APPROX_CLASS.get(b.id, ()):
            f = approx.FORMULAS[s]
            if e["dv"] == e["d"] and _holds(f.valid, e):  # poly needs d_v = d
                out[f"poly.{s}"] = evaluate_int(f.io, e)
    elif fam == "backward":
        e = _single(env)
        for n in sorted(backward.COVERS[b.id] - BACKWARD_AUDIT):
            f = BACKWARD_FORMULAS[n]
            if _holds(f.valid, e):
                out[n] = evaluate_int(f.io, e)
    else:
        w = workload(env)
        table = WORKLOAD_FORMULAS if fam == "workload-forward" else WORKLOAD_BACKWARD_FORMULAS
        for (alg, sched, causal), f in table.items():
            if causal != w.causal or alg in FORWARD_AUDIT:
                continue
            grouped = sched == "grouped" or fam == "workload-backward"  # the backward unit is the group
            ue = {"Nq": w.Nq, "Nkv": w.Nkv, "d": w.d, "dv": w.dv, "M": w.M, "g": w.groups if grouped else 1}
            if _holds(f.valid, ue):
                units = w.kv_heads_total if grouped else w.query_heads_total
                out[f.algorithm] = units * evaluate_int(f.io, ue)
        if fam == "workload-forward" and not w.causal and w.Nq == w.Nkv:  # plain: any forward schedule per head
            e = {"N": w.Nq, "d": w.d, "M": w.M, "dv": w.dv}
            for n, f in FORMULAS.items():
                if n not in FORWARD_AUDIT and _holds(f.valid, e):
                    out[f"{n} per head"] = w.query_heads_total * evaluate_int(f.io, e)
    return out


def workload(env: dict) -> Workload:
    return Workload.build(batch=env["batch"], heads=env["heads"], kv_heads=env["kv_heads"], Nq=env["Nq"],
                          Nkv=env["Nkv"], d=env["d"], dv=env["dv"], causal=env["causal"], M=env["M"])


def bound_value(b: Bound, env: dict) -> Fraction | float:
    if family(b).startswith("workload"):
        w = workload(env)
        assert workloads.applies(b, w), (b.id, env)
        return workloads.workload_value(b, w)
    return evaluate(b.expr, _single(env))


def violations(b: Bound, env: dict, counts: dict[str, int] | None = None) -> list[str]:
    """The schedules whose exact count is below the bound at ``env`` (an undecided float comparison counts)."""
    v = bound_value(b, env)
    out = []
    for name, c in (exact_counts(b, env) if counts is None else counts).items():
        if isinstance(v, float) and abs(v - c) <= 1e-9 * max(1.0, abs(c)):
            out.append(f"{name}: undecided in floating point ({v!r} against {c})")
        elif v > c:
            out.append(f"{name}: {c} < bound {v}")
    return out


@pytest.mark.parametrize("b", LOWER, ids=[b.id for b in LOWER])
def test_bound_never_exceeds_an_exact_count_on_its_encoded_regime(b: Bound) -> None:
    seen = {"points": 0, "compared": 0}

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=PROFILE != "nightly", database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(env=point(b))
    def check(env: dict) -> None:
        counts = exact_counts(b, env)
        seen["points"] += 1
        seen["compared"] += len(counts)
        bad = violations(b, env, counts)
        assert not bad, f"{b.id} at {env}: " + "; ".join(bad)

    check()
    assert seen["points"] >= EXAMPLES, f"{b.id}: only {seen['points']} points of its regime were drawn"
    assert seen["compared"] > 0, f"{b.id}: no schedule ran at any drawn point (vacuous)"


def test_every_explicit_lower_bound_has_a_family_and_schedules() -> None:
    """A new explicit lower bound is tested without being listed here; one whose symbols no family knows fails."""
    known = SINGLE_HEAD_SYMS | WORKLOAD_SYMS | {"dv", "r"}
    for b in LOWER:
        assert _names(b) <= known, (b.id, _names(b) - known)
        assert schedules_valid(b), b.id
    assert {family(b) for b in LOWER} == {"forward", "backward", "approx", "workload-forward", "workload-backward"}


# ------------------------------------------------------------------------- every parameter drawn, d_v first

DRAWN = {
    "forward": {"N", "d", "dv", "M"},
    "backward": {"N", "d", "dv", "M"},
    "approx": {"N", "d", "dv", "M", "r"},
    "workload-forward": {"Nq", "Nkv", "d", "dv", "M", "g", "N"},  # N = N_q = N_kv: plain schedules per head
    "workload-backward": {"Nq", "Nkv", "d", "dv", "M", "g"},
}


def compared_formulas(b: Bound) -> list:
    """Every exact formula :func:`exact_counts` may compare with ``b`` (at some point)."""
    fam = family(b)
    if fam in ("forward", "approx"):
        out = [f for n, f in FORMULAS.items() if n not in FORWARD_AUDIT] if fam == "forward" or b.id == "approx.lower.trivial" else []
        return out + [approx.FORMULAS[s] for s in APPROX_CLASS.get(b.id, ())]
    if fam == "backward":
        return [BACKWARD_FORMULAS[n] for n in sorted(backward.COVERS[b.id] - BACKWARD_AUDIT)]
    if fam == "workload-forward":
        return [*WORKLOAD_FORMULAS.values(), *(f for n, f in FORMULAS.items() if n not in FORWARD_AUDIT)]
    return list(WORKLOAD_BACKWARD_FORMULAS.values())


def _formula_symbols(f) -> set[str]:
    out = {s.name for s in free_symbols(f.io)}
    for r in f.valid:
        out |= {s.name for s in free_symbols(r)}
    return out


@pytest.mark.parametrize("b", LOWER, ids=[b.id for b in LOWER])
def test_the_draw_covers_every_parameter_of_the_compared_schedules(b: Bound) -> None:
    """A bound enters the falsification draw with every parameter its compared schedules take: their symbols are
    all drawn (d_v among them), and a point with d_v ≠ d is drawn unless the regime states d_v = d (then every
    point has d_v = d); for a workload bound also a point with more than one query head per K/V head."""
    fam = family(b)
    syms = set().union(*(_formula_symbols(f) for f in compared_formulas(b)))
    assert syms, b.id
    assert syms <= DRAWN[fam], (b.id, syms - DRAWN[fam])
    # schedules without d_v (poly) run at d_v = d only, and a bound compared with them alone must state it
    assert "dv" in syms or dv_pinned(b), f"{b.id}: its schedules run at d_v = d only; its regime must say so"
    cfg = settings(max_examples=2000, database=None, suppress_health_check=list(HealthCheck))
    if dv_pinned(b):
        assert "dv" in {s.name for r in b.regime for s in free_symbols(r)}
    else:
        env = find(point(b), lambda e: e["dv"] != e["d"], settings=cfg)
        assert env["dv"] != env["d"] and _holds(b.regime, env)
    if fam.startswith("workload"):
        env = find(point(b), lambda e: e["heads"] > e["kv_heads"], settings=cfg)
        assert env["g"] > 1


# The referee's points (least exact count ÷ the bound as it was encoded, without d_v in it); the two-pass
# schedule of the BSPV point is the referee's, counted by its formula here (S written once in a×b tiles over
# ℓ = 1..d, then S and V streamed per block of c query rows with online softmax).
def _two_pass(n: int, dd: int, v: int, m: int) -> int:
    s_ = max(s for s in range(1, m) if s * s + 2 * s <= m)
    c = (m - v) // (2 + v + 1)
    return -(-n // s_) * n * dd * 2 + 2 * n * n + -(-n // c) * n * v + n * v


REFEREE_POINTS = [  # (bound id, N, d, d_v, M, the least count ÷ the old bound, rounded)
    ("constants.b3", 16384, 32, 1, 16384, 0.338),
    ("trivial.4Nd", 1024, 128, 1, 262144, 0.506),
    ("constants.b2", 16384, 128, 1, 65536, 0.548),
    ("constants.bspv", 16384, 128, 1, 256, 0.908),
]


def _old_form(bid: str):
    """The bound as it was encoded before d_v entered it: its expression at d_v = d read for any d_v, its regime
    without d_v = d."""
    from attnio.bounds.catalog import by_id
    from attnio.bounds.constants import BSPV_COEFF, bs_form
    from attnio.bounds.expr import sqrt
    from attnio.bounds.symbols import M, N, d

    b = by_id(bid)
    expr = {"trivial.4Nd": 4 * N * d, "constants.bspv": bs_form(BSPV_COEFF),
            "constants.bspv-near": (2 - M / d**2) * N**2 * d / sqrt(M) - M}.get(bid, b.expr)
    return Bound(**{**vars(b), "expr": expr, "regime": tuple(r for r in b.regime if str(r) != DV_PINNED)})


@pytest.mark.parametrize("bid,n,dd,v,m,ratio", REFEREE_POINTS, ids=[p[0] for p in REFEREE_POINTS])
def test_the_referee_points_refute_the_old_forms_and_not_the_new(bid: str, n: int, dd: int, v: int, m: int, ratio: float) -> None:
    from attnio.bounds.catalog import by_id

    env = {"N": n, "d": dd, "dv": v, "M": m}
    counts = exact_counts(by_id(bid), env)
    old = _old_form(bid)
    assert _holds(old.regime, env)
    assert round(float(min(counts.values()) / evaluate(old.expr, env)), 3) == ratio
    assert violations(old, env, counts)  # the test above would have reported the old form
    new = by_id(bid)
    assert not _holds(new.regime, env) or not violations(new, env, counts), bid
    if bid == "constants.bspv":  # square_tiling-io is the least count; the referee's two-pass schedule is lower still
        assert min(counts, key=counts.get) == "square_tiling-io"
        env2 = {"N": 16384, "d": 256, "dv": 1, "M": 256}
        w = _two_pass(**{"n": 16384, "dd": 256, "v": 1, "m": 256})
        assert round(w / float(evaluate(old.expr, env2)), 3) == 0.817
        assert w > evaluate(new.expr, env2) and w < min(exact_counts(new, env2).values())


def test_every_restated_bound_equals_its_old_value_at_d_v_equal_d() -> None:
    """trivial.4Nd, BSPV and BSPV-near now read d_v; at d_v = d each equals its old expression exactly (same type,
    same float), so no report figure moves at d_v = d; B2, B3 and the approximate bounds only gained d_v = d in
    their regime (same expression)."""
    from attnio.bounds.catalog import by_id

    n_points = 0
    for bid in ("trivial.4Nd", "constants.bspv", "constants.bspv-near", "constants.b2", "constants.b3"):
        new, old = by_id(bid), _old_form(bid)
        for n in (2, 3, 64, 1000, 4096, 65536):
            for dd in (1, 2, 3, 16, 64, 128, 256):
                for m in sorted({1, 2, dd, dd * dd // 7 + 1, dd * dd // 2, dd * dd, 4 * dd * dd, n * dd // 4}):
                    if m < 1:
                        continue
                    env = {"N": n, "d": dd, "M": m, "dv": dd}
                    try:
                        a, o = evaluate(new.expr, env), evaluate(old.expr, env)
                    except ZeroDivisionError:
                        continue
                    assert a == o and type(a) is type(o), (bid, env, a, o)
                    assert _holds(new.regime, env) == _holds(old.regime, env), (bid, env)
                    n_points += 1
    assert n_points > 500


def test_the_referee_point_refutes_B2_P_without_d_v_equal_d() -> None:
    """N = 16384, d = 32, d_v = 1, M = 4096, H = 8, H_kv = 4: flash2 grouped moves 661,913,600 words, below
    2P·d²/M − M = 1,073,737,728; d_v = d is in B2_P's regime, so the bound does not speak there."""
    env = {"Nq": 16384, "Nkv": 16384, "d": 32, "dv": 1, "M": 4096, "g": 2}
    w = Workload.build(heads=8, kv_heads=4, N=16384, d=32, dv=1, M=4096)
    from attnio.bounds.costs import workload_cost

    assert workload_cost("flash2", w, "grouped").io_words == 661_913_600
    assert workloads.workload_value(workloads.B2_RECT, w) == 1_073_737_728
    assert not _holds(workloads.B2_RECT.regime, env)
    assert not workloads.applies(workloads.B2_RECT, w)
    assert workloads.best_lower_bound(w)[0] != workloads.B2_RECT.id
    # the regime without d_v = d would admit the point, and the test above would report flash2 grouped
    bare = Bound(**{**vars(workloads.B2_RECT), "regime": tuple(r for r in workloads.B2_RECT.regime if r != workloads.DV_EQ_D)})
    assert _holds(bare.regime, env)
    bad = violations(bare, {**env, "causal": False, "batch": 1, "heads": 8, "kv_heads": 4})
    assert any(s.startswith("flash2/grouped: 661913600 <") for s in bad), bad


# ------------------------------------------------------------------------------ prose conditions = the regime

# Conditions a statement may name, and the relation each stands for (str of the Rel, as conditions() renders it).
CONDITION_PHRASES = {
    r"d_v = d": "dv = d",
    r"M ≥ 2d²": "2·d^2 ≤ M",
    r"M ≥ 4d²": "4·d^2 ≤ M",
    r"M ≤ d²": "M ≤ d^2",
    r"N_kv ≥ 2": "2 ≤ Nkv",
    r"N ≥ 2": "2 ≤ N",
    r"N ≥ 4d": "4·d ≤ N",
    r"M ≤ Nd/4": "4·M ≤ N·d",
}
# Phrases that state a branch of a min (where the bound takes one form), not a condition of the bound.
BRANCH = re.compile(r"(4?N²d²/M − M|M\(4N²d².*?\)) when M ≥ \d?d²")
#: a parenthetical special case of a bound stated for every d_v ("(4Nd when d_v = d)", "(… at d_v = d)"): a value, not a
#: condition of the regime
SPECIAL_CASE = re.compile(r"\((?:[^()]|\([^()]*\))*? (?:when|at) d_v = d\)")


def test_every_condition_a_statement_names_is_in_its_regime() -> None:
    """Prose and regime cannot disagree: each condition named in a lower bound's statement (d_v = d, M ≥ 4d², …)
    is a relation of its encoded regime, and each workload bound's statement ends with its rendered regime."""
    missing = []
    for b in LOWER:
        text = SPECIAL_CASE.sub("", BRANCH.sub("", b.statement))
        have = {str(r) for r in b.regime}
        for phrase, rel in CONDITION_PHRASES.items():
            if phrase in text and rel not in have:
                missing.append((b.id, phrase))
        if family(b).startswith("workload") and b.regime:
            assert b.statement.endswith(workloads.conditions(b.regime) + "."), b.id
    assert not missing, missing


@pytest.mark.parametrize(
    "shape,words",
    [(dict(Nq=8, d=2), 18), (dict(Nq=4096, d=128, heads=32, kv_heads=8), 16_778_240)],
)
def test_one_key_counts_the_output_and_V0_not_Q(shape: dict, words: int) -> None:
    """N_kv = 1: O = V₀ in every row, so the trivial count is g·N_q·d_v + d_v per unit (the referee's points: the
    earlier count, Q read and V₀ not, gave 32 and 33,554,432 words), and every workload schedule moves at least it."""
    w = Workload.build(Nkv=1, M=1 << 20, **shape)
    assert workloads.trivial_words(w) == words
    assert workloads.best_lower_bound(w) == (workloads.TRIVIAL_ONE_KEY.id, Fraction(words))
    env = {"Nq": w.Nq, "Nkv": 1, "d": w.d, "dv": w.dv, "M": w.M, "g": w.groups, "causal": False, "batch": 1,
           "heads": w.heads, "kv_heads": w.kv_heads}
    counts = exact_counts(workloads.TRIVIAL_ONE_KEY, env)
    assert counts and min(counts.values()) >= words
