"""z3 claims about workloads (docs/bounds/workloads.md, docs/costs.md#workloads): the B1/B2 rearrangement with a
pair count, every workload schedule's unit count against the trivial bound and the pair-count bounds,
FlashAttention-2's causal half, and the grouped schedule's saving in decoding.

Ids: ``workloads.<what>[.<formula>]``; formula names are those of ``WORKLOAD_FORMULAS`` with ``/`` → ``.``.
"""

from __future__ import annotations

from attnio.bounds.blocks import flash2_bwd as bwd_budget
from attnio.bounds.costs import WORKLOAD_BACKWARD_FORMULAS, WORKLOAD_FORMULAS, CostFormula
from attnio.bounds.expr import Rel, ceil, eq, floor, maximum, minimum, substitute
from attnio.bounds.symbols import M, N, Nkv, Nq, d, dv, g, sym
from attnio.bounds.workloads import (
    B1_CAUSAL,
    B1_RECT,
    B2_CAUSAL,
    B2_RECT,
    BWD_DP_CAUSAL,
    BWD_DP_RECT,
    BWD_SDP_CAUSAL,
    BWD_SDP_RECT,
    BWD_TRIVIAL,
    PAIRS_CAUSAL,
    PAIRS_RECT,
    TRIVIAL,
    TRIVIAL_CAUSAL,
    TRIVIAL_ONE_KEY,
)
from attnio.solver.claims.build import Link, chain, links
from attnio.solver.claims.types import Claim, Implication

DOC = "docs/bounds/workloads.md"
COSTS = "docs/costs.md#workloads"
_BASE = (Nq >= 1, Nkv >= 1, d >= 1, dv >= 1, M >= 1, g >= 1)

# Causal formulas whose sums carry ⌈δ/b⌉ or min(T_c, ⌊δ/B_c⌋ + 1) terms: z3 times out on one-step well-definedness
# and bound claims, so formula_claims() skips them; causal_forward_claims() proves them as chains of links with
# integer auxiliaries instead. tests/test_workloads.py also checks them against the bounds on Hypothesis examples.
NO_Z3 = frozenset(
    {("flash1", "per-head", True), ("flash1-fit", "per-head", True), ("standard", "per-head", True), ("square_tiling", "per-head", True)}
)


def _name(f: CostFormula) -> str:
    return f.algorithm.replace("/", ".")


def _sub(f: CostFormula, s: dict) -> CostFormula:
    return CostFormula(
        f.algorithm, substitute(f.reads, s), substitute(f.writes, s),
        tuple(Rel(r.op, substitute(r.lhs, s), substitute(r.rhs, s)) for r in f.valid),
        {k: substitute(v, s) for k, v in f.blocks.items()}, f.derivation, f.leading,
    )


def _wd(f: CostFormula, hyps: tuple, goal: Rel, about: tuple[str, ...]) -> Link:
    """``workloads.wd.<f>``: ``f``'s unit formula is defined on ``hyps`` (its denominators > 0: ``goal``)."""
    return Link(f"workloads.wd.{_name(f)}",
                f"{f.algorithm}'s unit formula is defined wherever it claims to be valid: every denominator > 0.",
                hyps, goal, about, kind="well-defined", doc=COSTS)


def derivation_claims() -> list[Claim]:
    P = sym("wl_P", integer=False, lo=0, doc="required (query, key) pairs of a workload")
    h = sym("wl_h", integer=False, lo=0, doc="number of segments of M I/Os")
    Q = sym("wl_Q", integer=False, lo=0, doc="words moved by the whole calculation")
    return chain([
        Link("workloads.b1.rearrange",
             "P ≤ h·M²/d² (at most M²/d² required roots per segment, B1 step 6) and Q ≥ M(h − 1) give Q ≥ P·d²/M − M.",
             (M >= 1, d >= 1, P <= h * M**2 / d**2, Q >= M * (h - 1)), Q >= P * d**2 / M - M,
             (B1_RECT.id, B1_CAUSAL.id)),
        Link("workloads.b2.rearrange",
             "P·d ≤ h·M²/(2d) (at most M²/(2d) PV products per segment, B2 step 6) and Q ≥ M(h − 1) give "
             "Q ≥ 2P·d²/M − M.", (M >= 1, d >= 1, P * d <= h * M**2 / (2 * d), Q >= M * (h - 1)),
             Q >= 2 * P * d**2 / M - M, (B2_RECT.id, B2_CAUSAL.id)),
        Link("workloads.pairs.square-causal",
             "With N_q = N_kv = N the bottom-right causal pair count N_q(N_q + 1)/2 + N_q(N_kv − N_q) is N(N + 1)/2.",
             (N >= 1,), eq(substitute(PAIRS_CAUSAL, {Nq: N, Nkv: N}), N * (N + 1) / 2),
             (B1_CAUSAL.id, B2_CAUSAL.id), kind="identity"),
        Link("workloads.pairs.causal-le-rect",
             "A causal mask never adds pairs: N_q(N_q + 1)/2 + N_q(N_kv − N_q) ≤ N_q·N_kv for N_q ≤ N_kv.",
             (Nq >= 1, Nq <= Nkv), PAIRS_CAUSAL <= PAIRS_RECT, (B1_CAUSAL.id,), kind="inequality"),
    ], DOC, kind="derivation")


def formula_claims() -> list[Claim]:
    out: list[Claim] = []
    for (alg, sched, causal), f in sorted(WORKLOAD_FORMULAS.items()):
        if (alg, sched, causal) in NO_Z3:
            continue
        n = _name(f)
        units_g = g if sched == "grouped" else 1  # query heads in one unit
        hyps = _BASE + f.valid
        about = ("workloads.trivial",)
        out.append(_wd(f, hyps, f.io >= 0, about))
        triv = substitute(TRIVIAL.expr, {g: units_g})
        out.append(
            Link(f"workloads.trivial.{n}",
                 f"{f.algorithm} moves at least the trivial {triv} words per unit (Q, O once per query head; K, V once "
                 "per unit).", hyps + TRIVIAL.regime, f.io >= triv, about, kind="consistency")
        )
        if alg == "flash1":
            continue  # published blocks exceed M (audit mode): not a schedule of an M-word machine
        if alg == "flash2" and causal:
            continue  # the chain of causal_chain_claims(): direct claims are at z3's mercy (unknown in some runs)
        P = PAIRS_CAUSAL if causal else PAIRS_RECT
        b1, b2 = (B1_CAUSAL, B2_CAUSAL) if causal else (B1_RECT, B2_RECT)
        fd = _sub(f, {dv: d})  # d_v = d, as the consistency claims of solver/claims/constants.py
        out.append(
            Link(f"workloads.consistency.b1.{n}",
                 f"{f.algorithm}'s unit count (d_v = d) ≥ {units_g}·P·d²/M (B1_P without its −M slack, so it adds up "
                 "over units) where 2d² ≤ M ≤ 4d² (above, the b2 claim gives twice as much).",
                 _BASE + fd.valid + b1.regime + (M <= 4 * d**2,), fd.io >= units_g * P * d**2 / M, (b1.id,),
                 kind="consistency")
        )
        out.append(
            Link(f"workloads.consistency.b2.{n}",
                 f"{f.algorithm}'s unit count (d_v = d) ≥ {units_g}·2P·d²/M (B2_P without its −M slack) where M ≥ 4d².",
                 _BASE + fd.valid + b2.regime, fd.io >= units_g * 2 * P * d**2 / M, (b2.id,),
                 kind="consistency")
        )
    return chain(out, DOC, kind="derivation")


def causal_chain_claims() -> list[Claim]:
    """Causal flash2 (per-head: g = 1, grouped: g) against B1_P and B2_P, d_v = d, in two links.

    Link 1 (``workloads.causal.chain.kv``, ``.passes``, ``.pairs``, abstract): for any T ≥ 1, B, a ≥ 1 with
    B·T ≥ N_q, a·T ≥ N_q and d + g·a(2d + 4) ≤ M, the unit count g·N_q·d + 2d(B·T(T − 1)/2 + N_q + T·δ) +
    g·N_q(d + 1) is at least 2g·P·d²/M (B2_P's leading term; B1_P's is half of it), for every M. Link 2 (``workloads.causal.chain.blocks.*``): the formula's
    T_r = ⌈N_q/a_g⌉, B_r = ⌈N_q/T_r⌉ and a_g = ⌊⌊(M − d)/(2d + 4)⌋/g⌋ satisfy those hypotheses, and its count is
    that expression with T = T_r, B = B_r (docs/costs.md#workloads). Together: every causal flash2 unit count ≥
    the pair-count bounds without their −M slack."""
    T = sym("wl_T", doc="Q blocks per head (T_r)")
    B = sym("wl_B", doc="query positions per Q block (B_r)")
    a = sym("wl_a", doc="query positions a Q block can hold per head (a_g)")
    delta = Nkv - Nq
    unit = g * Nq * d + 2 * d * (B * T * (T - 1) / 2 + Nq + T * delta) + g * Nq * (d + 1)
    base1 = (Nq >= 1, Nq <= Nkv, d >= 1, g >= 1, M >= 1, T >= 1)
    lower = d * Nq * (T + 1) + 2 * d * T * delta
    out: list[Claim] = [
        Link("workloads.causal.chain.kv",
             "Link 1a: B·T ≥ N_q gives unit ≥ d·N_q(T + 1) + 2d·T·δ (the diagonal half of the K/V rows).",
             base1 + (B >= 1, B * T >= Nq), unit >= lower, (B1_CAUSAL.id, B2_CAUSAL.id)),
        Link("workloads.causal.chain.passes",
             "Link 1b: a·T ≥ N_q and d + g·a(2d + 4) ≤ M give T·M ≥ 2g·N_q·d (enough Q blocks for the rows held).",
             base1 + (a >= 1, a * T >= Nq, d + g * a * (2 * d + 4) <= M), T * M >= 2 * g * Nq * d,
             (B1_CAUSAL.id, B2_CAUSAL.id)),
        Link("workloads.causal.chain.pairs",
             "Link 1c: T·M ≥ 2g·N_q·d gives d·N_q(T + 1) + 2d·T·δ ≥ 2g·P·d²/M, P = N_q(N_q + 1)/2 + N_q·δ (so ≥ B2_P "
             "and ≥ B1_P = half of it, without their −M slack, for every M).",
             base1 + (T * M >= 2 * g * Nq * d,), lower >= 2 * g * PAIRS_CAUSAL * d**2 / M,
             (B1_CAUSAL.id, B2_CAUSAL.id)),
    ]
    for sched in ("per-head", "grouped"):
        f = _sub(WORKLOAD_FORMULAS[("flash2", sched, True)], {dv: d})
        Tr, Br, ag = f.blocks["T_r"], f.blocks["B_r"], f.blocks["a_g"]
        gg = 1 if sched == "per-head" else g
        base = (Nq >= 1, Nkv >= 1, d >= 1, M >= 1, g >= 1) + f.valid
        facts = (
            ("T", Tr >= 1), ("B", Br * Tr >= Nq), ("a", ag >= 1), ("aT", ag * Tr >= Nq), ("M", d + gg * ag * (2 * d + 4) <= M),
        )
        out += links(f"workloads.causal.chain.blocks.{sched}", base, (
            (what, f"Link 2 (flash2 {sched}, causal, d_v = d): the formula's blocks satisfy {goal}.", (), goal)
            for what, goal in facts), (B1_CAUSAL.id, B2_CAUSAL.id), provenance=COSTS)
        unit_f = substitute(unit, {T: Tr, B: Br, g: gg})
        out.append(
            Link(f"workloads.causal.chain.blocks.{sched}.count",
                 f"Link 2 (flash2 {sched}, causal, d_v = d): the formula's count is the link-1 expression at T = T_r, B = B_r.",
                 base, eq(f.io, unit_f), (B1_CAUSAL.id, B2_CAUSAL.id), kind="identity", doc=COSTS)
        )
    return chain(out, DOC, kind="derivation")


def _flash2_unit(causal: bool, T: object, B: object, gg: object) -> object:
    """flash2's unit count (workload schedule, docs/costs.md#workloads) at T Q blocks of B positions, gg query heads."""
    kv = (B * T * (T - 1) / 2 + Nq + T * (Nkv - Nq)) if causal else T * Nkv  # type: ignore[operator]
    return gg * Nq * d + kv * (d + dv) + gg * Nq * (dv + 1)  # type: ignore[operator]


def _flash2_count_links(prefix: str, sched: str, causal: bool, hyps: tuple, env: dict | None = None, *,
                        about: tuple[str, ...] = (), meta: str = "") -> tuple[list[Claim], object, object]:
    """Link: the flash2 formula is _flash2_unit at its own T_r, B_r (identity); returns the claims, T_r and B_r."""
    f = WORKLOAD_FORMULAS[("flash2", sched, causal)]
    if env:
        f = _sub(f, env)
    Tr, Br = f.blocks["T_r"], f.blocks["B_r"]
    gg = 1 if sched == "per-head" else g
    unit = _flash2_unit(causal, Tr, Br, gg)
    if env:
        unit = substitute(unit, env)  # type: ignore[arg-type]
    claim = Implication(
        f"{prefix}.count.{sched}" + (".causal" if causal else ""),
        "identity",
        f"Link ({f.algorithm}): the formula is flash2's unit count at its own T_r, B_r.",
        hyps,
        eq(f.io, unit),
        provenance=COSTS,
        about=about,
        meta=meta,
    )
    return [claim], Tr, Br


def causal_half_claims() -> list[Claim]:
    """FlashAttention-2 §3.1.1 as a checked statement: per-head flash2, N_q = N_kv = N. As links: (1) the causal and
    non-causal formulas are flash2's unit count at T_r, B_r; (2) T_r ≥ 1, B_r ≥ 1, B_r ≤ a and (T_r − 1)a ≤ N − 1
    (the last Q block is not empty); (3) for any such T, B the causal count is between half the non-causal one and
    that half + (3/2)N(d + d_v) + N/2 (``workloads.causal.half.lower`` / ``.upper``, the conclusions)."""
    T = sym("wl_T", doc="Q blocks per head (T_r)")
    B = sym("wl_B", doc="query positions per Q block (B_r)")
    Cs = sym("wl_c", doc="K/V rows a block may hold (the block rule's c)")
    sq = {Nq: N, Nkv: N, g: 1}
    c = _sub(WORKLOAD_FORMULAS[("flash2", "per-head", True)], sq)
    f = _sub(WORKLOAD_FORMULAS[("flash2", "per-head", False)], sq)
    hyps = (N >= 1, d >= 1, dv >= 1, M >= 1) + c.valid + f.valid
    about = ("workloads.b1.causal",)
    out: list[Claim] = []
    for causal in (True, False):
        cl, _, _ = _flash2_count_links("workloads.causal.half", "per-head", causal, hyps, sq, about=about)
        out += cl
    Tr, Br = c.blocks["T_r"], c.blocks["B_r"]
    a = c.blocks["a_g"]
    out += links("workloads.causal.half.blocks", hyps, (
        (what, f"Link (flash2 per-head, N_q = N_kv = N): the formula's blocks satisfy {goal}.", (), goal)
        for what, goal in (("T", Tr >= 1), ("B", Br >= 1), ("Ba", Br <= a), ("last", (Tr - 1) * a <= N - 1))),
        about, provenance=COSTS)
    uc = substitute(_flash2_unit(True, T, B, 1), sq)  # type: ignore[arg-type]
    uf = substitute(_flash2_unit(False, T, B, 1), sq)  # type: ignore[arg-type]
    abstract = (N >= 1, d >= 1, dv >= 1, T >= 1, B >= 1, B * T >= N, B <= Cs, (T - 1) * Cs <= N - 1)
    out += [
        Link("workloads.causal.half.blocks.cover",
             "Link (flash2 per-head, N_q = N_kv = N): B_r·T_r ≥ N (the Q blocks cover the rows).", hyps,
             Br * Tr >= N, about, doc=COSTS),
        Link("workloads.causal.half.lower",
             "FlashAttention-2's causal saving is at most half: causal flash2 count ≥ non-causal count / 2 (N_q = N_kv; "
             "at any T ≥ 1 Q blocks of B positions with B·T ≥ N, B ≤ c, (T − 1)c ≤ N − 1: the formula's, by the "
             "links workloads.causal.half.count.* and .blocks.*).", abstract, uc >= uf / 2, about,
             kind="inequality"),
        Link("workloads.causal.half.upper",
             "…and at least half up to the diagonal: causal ≤ non-causal/2 + (3/2)·N(d + d_v) + N/2, a gap that does not "
             "grow with T_r = ⌈N/B_r⌉, so causal ÷ non-causal → 1/2 as N/B_r → ∞ (FlashAttention-2 §3.1.1; same "
             "links as .lower).", abstract, uc <= uf / 2 + 3 * N * (d + dv) / 2 + N / 2, about,
             kind="inequality"),
    ]
    return chain(out, DOC, kind="derivation")


def grouped_claims() -> list[Claim]:
    """Decoding (g·N_q ≤ a): one Q block holds every row of the group, so T_r = 1 and B_r = N_q in both schedules
    (links ``workloads.grouped.decode.blocks.*``), the formulas are flash2's unit count there (``.count.*``), and at
    T = 1, B = N_q grouped + (g − 1)·N_kv(d + d_v) = g × per-head (``workloads.grouped.decode[.causal]``)."""
    a = floor((M - maximum(d, dv)) / (d + dv + 4))
    X = sym("wl_Xq", doc="query positions a Q block can hold per head (decoding)")
    meta = ("compares two workload schedules' exact counts (grouped against per-head flash2 in decoding); the "
            "catalog has no bound for a workload schedule's exact count")
    out: list[Claim] = [
        Implication(
            "workloads.grouped.decode.blocks.one", "identity",
            "For an integer X ≥ N_q: ⌈N_q/X⌉ = 1 (one Q block).", (Nq >= 1, X >= Nq), eq(ceil(Nq / X), 1), provenance=COSTS,
            meta=meta,
        ),
        Implication(
            "workloads.grouped.decode.blocks.all", "identity",
            "For an integer X ≥ N_q: ⌈N_q/⌈N_q/X⌉⌉ = N_q (that block holds every position).",
            (Nq >= 1, X >= Nq), eq(ceil(Nq / ceil(Nq / X)), Nq), provenance=COSTS, meta=meta,
        ),
    ]
    for causal in (False, True):
        gr = WORKLOAD_FORMULAS[("flash2", "grouped", causal)]
        ph = WORKLOAD_FORMULAS[("flash2", "per-head", causal)]
        hyps = _BASE + gr.valid + ph.valid + (g * Nq <= a,)
        sfx = ".causal" if causal else ""
        for sched, f in (("grouped", gr), ("per-head", ph)):
            cl, Tr, Br = _flash2_count_links("workloads.grouped.decode", sched, causal, hyps, meta=meta)
            out += cl
            if sched == "grouped":  # T_r = ⌈N_q/a_g⌉ with a_g = ⌊a/g⌋ ≥ N_q: via the abstract links .blocks.one/.all
                out.append(
                    Implication(
                        f"workloads.grouped.decode.blocks.grouped.ag{sfx}", "derivation",
                        f"Link ({f.algorithm}, g·N_q ≤ a): a_g = ⌊a/g⌋ ≥ N_q, so (workloads.grouped.decode.blocks.one, "
                        ".all at X = a_g) T_r = 1 and B_r = N_q.",
                        hyps, f.blocks["a_g"] >= Nq, provenance=COSTS, meta=meta,
                    )
                )
                continue
            out += links(f"workloads.grouped.decode.blocks.{sched}", hyps, (
                (what + sfx, f"Link ({f.algorithm}, g·N_q ≤ a): {goal}.", (), goal)
                for what, goal in (("T", eq(Tr, 1)), ("B", eq(Br, Nq)))), (), provenance=COSTS, meta=meta)
        out.append(
            Implication(
                "workloads.grouped.decode" + sfx,
                "identity",
                "When one Q block holds every row of the group (g·N_q ≤ a, so T_r = 1 and B_r = N_q in both schedules: "
                "links workloads.grouped.decode.blocks.*, .count.*), grouped flash2 + (g − 1)·N_kv(d + d_v) = "
                "g × per-head flash2: K/V read once per group instead of once per query head"
                + (" (causal)." if causal else "."),
                _BASE + ((Nq <= Nkv,) if causal else ()),
                eq(_flash2_unit(causal, 1, Nq, g) + (g - 1) * Nkv * (d + dv), g * _flash2_unit(causal, 1, Nq, 1)),  # type: ignore[operator]
                provenance=COSTS,
                meta=meta,
            )
        )
    return out


#: the workload backwards with a formula (bounds/costs.py WORKLOAD_BACKWARD_FORMULAS), each chained to the trivial bound.
BWD_ALGS = ("flash2-bwd", "flash2-fused-bwd")


def _bwd_unit(sched: str, R: object, alg: str = "flash2-bwd", Dw: object = 0) -> object:
    """The count of ``alg`` (flash2-bwd or flash2-fused-bwd) for one K/V head and its g query heads (schedule
    ``sched``, grouped or per-head) when each query head visits R query rows over all K/V blocks: the count the
    backward chain links are stated in. flash2-fused-bwd: ``Dw`` the D words each head writes (N_q when a later
    K/V block reads D back, else 0)."""
    kvw = Nkv * (d + dv)
    if alg == "flash2-fused-bwd":  # O once; Q, dO, L per visit; dQ, D per later visit; D, dQ per visit written
        q = g * (Nq * dv + R * (d + dv + 1) + (R - Nq) * (d + 1)) + g * (Dw + R * d)  # type: ignore[operator]
    else:  # D pass (O, dO); Q, dO, dQ, L, D per visit; D, the dQ initialisation, dQ per visit written
        q = g * (2 * Nq * dv + R * (2 * d + dv + 2)) + g * (Nq + Nq * d + R * d)  # type: ignore[operator]
    return q + (2 * kvw if sched == "grouped" else (2 * g - 1) * kvw + g * kvw)  # type: ignore[operator]


def _fused_dw(f: CostFormula) -> object:
    """flash2-fused-bwd's D writes per query head: N_q·min(T_c − 1, 1)."""
    return minimum(f.blocks["T_c"] - 1, 1) * Nq


def backward_claims() -> list[Claim]:
    """The backward of workloads: BWD-dP_P / BWD-SdP_P step 7 with a pair count, and every flash2-bwd workload
    formula well defined and ≥ the backward trivial bound (docs/bounds/workloads.md#backward)."""
    P = sym("wl_P", integer=False, lo=0, doc="required (query, key) pairs of a workload")
    h = sym("wl_h", integer=False, lo=0, doc="number of segments of M I/Os")
    Q = sym("wl_Q", integer=False, lo=0, doc="words moved by the whole calculation")
    out: list[Claim] = []
    for name, c, bounds in (("bwd-dp", 1, (BWD_DP_RECT, BWD_DP_CAUSAL)), ("bwd-sdp", 4, (BWD_SDP_RECT, BWD_SDP_CAUSAL))):
        for branch, cap, hyp in (("large", M**2 / (c * d**2), M >= 2 * c * d**2), ("small", 2 * M, M <= 2 * c * d**2)):
            out.append(
                Link(f"workloads.{name}.rearrange.{branch}",
                     f"Step 7 of {name.upper()} with P pairs, {branch} cache ({hyp}: max(M²/({c}d²), 2M) = {cap}): "
                     f"P ≤ h·{cap} and Q ≥ M(h − 1) give Q ≥ min({c}P·d²/M, P/2) − M.",
                     (M >= 1, d >= 1, hyp, P <= h * cap, Q >= M * (h - 1)),
                     Q >= minimum(c * P * d**2 / M, P / 2) - M, tuple(b.id for b in bounds))
            )
    # Well-definedness and the trivial bound, as a chain: (1) for any R ≥ N_q visited rows the unit count in R is
    # ≥ the trivial bound (linear in R); (2) the formula is that count at its own R; (3) its R ≥ N_q.
    R = sym("wl_R", integer=False, lo=0, doc="query rows one head visits over all K/V blocks")
    Dw = sym("wl_Dw", integer=False, lo=0, doc="D words one head writes (flash2-fused-bwd)")
    units = {(alg, sched): _bwd_unit(sched, R, alg, Dw) for alg in BWD_ALGS for sched in ("grouped", "per-head")}
    for (alg, sched), unit in units.items():
        out.append(
            Link(f"workloads.bwd.chain.trivial.{sched}" + ("" if alg == "flash2-bwd" else f".{alg}"),
                 f"Link 1 ({alg} {sched}): with R ≥ N_q visited rows per head (block 0 visits all)"
                 + (" and D writes Dw ≥ 0" if alg != "flash2-bwd" else "")
                 + f", the unit count in R is ≥ the backward trivial {BWD_TRIVIAL.expr}.",
                 _BASE + BWD_TRIVIAL.regime + (R >= Nq,) + ((Dw >= 0,) if alg != "flash2-bwd" else ()),
                 unit >= BWD_TRIVIAL.expr, (BWD_TRIVIAL.id,))
        )
    for (alg, sched, causal), f in sorted(WORKLOAD_BACKWARD_FORMULAS.items()):
        if causal:
            continue  # the causal R carries min(T_c, ⌊δ/B_c⌋ + 1): see causal_bwd_claims()
        n = _name(f)
        hyps = _BASE + f.valid
        Tc = f.blocks["T_c"]
        dw = {Dw: _fused_dw(f)} if alg != "flash2-bwd" else {}
        out.append(_wd(f, hyps, Tc >= 1, (BWD_TRIVIAL.id,)))
        out.append(
            Link(f"workloads.bwd.chain.count.{n}",
                 f"Link 2 ({f.algorithm}): the formula is the link-1 count at R = T_c·N_q"
                 + (", Dw = N_q·min(T_c − 1, 1)." if dw else "."), hyps,
                 eq(f.io, substitute(units[(alg, sched)], {R: Tc * Nq} | dw)), (BWD_TRIVIAL.id,), kind="identity",
                 doc=COSTS)
        )
        out.append(
            Link(f"workloads.bwd.chain.rows.{n}",
                 f"Link 3 ({f.algorithm}): R = T_c·N_q ≥ N_q (T_c ≥ 1)" + (" (and Dw ≥ 0: workloads.bwd.chain.dw.*)" if dw else "")
                 + ", so with links 1 and 2 the formula is ≥ the backward trivial bound.", hyps,
                 Tc * Nq >= Nq, (BWD_TRIVIAL.id,), doc=COSTS)
        )
        if dw:
            out.append(
                Link(f"workloads.bwd.chain.dw.{n}", f"Link 3b ({f.algorithm}): Dw = N_q·min(T_c − 1, 1) ≥ 0 (T_c ≥ 1).",
                     hyps, _fused_dw(f) >= 0, (BWD_TRIVIAL.id,), doc=COSTS)
            )
    return chain(out, DOC, kind="derivation")


def causal_bwd_claims() -> list[Claim]:
    """Causal flash2-bwd (per-head and grouped) against the backward trivial bound, with integer auxiliaries for its
    blocks: link A (abstract, integers T, B, J): T ≥ 1, B ≥ 1, 1 ≤ J ≤ T and (T − 1)·B ≤ N_kv − 1 (the last block is
    not empty) give R(T, B, J) = T·N_q − B(T(T − 1) − J(J − 1))/2 + (T − J)δ ≥ N_q; link B: the formula's T_c, B_c,
    J = min(T_c, ⌊δ/B_c⌋ + 1) satisfy those facts; link C: the count is the backward chain's link-1 count at that R."""
    T = sym("wl_T", doc="Q blocks per head (T_r)")
    B = sym("wl_B", doc="query positions per Q block (B_r)")
    J = sym("wl_J", doc="K/V blocks every query row visits (causal backward)")
    R = sym("wl_R", integer=False, lo=0, doc="query rows one head visits over all K/V blocks")
    delta = Nkv - Nq
    Rexpr = T * Nq - B * (T * (T - 1) - J * (J - 1)) / 2 + (T - J) * delta
    tail = (T - J) * (Nkv - B * (T + J - 1) / 2)  # Σ_{j=J}^{T−1} (N_kv − jB): T − J terms, their mean
    Y = sym("wl_Y", integer=False, lo=0, doc="the visited rows of the K/V blocks after the first J (causal backward)")
    blocks = (Nq >= 1, Nq <= Nkv, T >= 1, B >= 1, J >= 1, J <= T, (T - 1) * B <= Nkv - 1)
    Cs = sym("wl_c", doc="K/V rows a block may hold (the block rule's c)")
    out: list[Claim] = [
        Link("workloads.causal.blocks.last",
             "B ≤ c and (T − 1)·c ≤ N_kv − 1 give (T − 1)·B ≤ N_kv − 1: with B_c = ⌈N_kv/T_c⌉ ≤ c and T_c = ⌈N_kv/c⌉ "
             "the last K/V block is not empty (the flash1-fit and flash2-bwd facts .lastc and .Bc at T = T_c, B = B_c).",
             (T >= 1, B >= 1, Cs >= 1, B <= Cs, (T - 1) * Cs <= Nkv - 1), (T - 1) * B <= Nkv - 1,
             (BWD_TRIVIAL.id, TRIVIAL.id), doc=COSTS),
        Link("workloads.bwd.causal.rows.split",
             "Link A1: the causal row sum is J·N_q (blocks every row visits) + (T − J)(N_kv − B(T + J − 1)/2) (the rest).",
             (Nq >= 1, Nq <= Nkv, T >= 1, B >= 1, J >= 1), eq(Rexpr, J * Nq + tail),
             (BWD_TRIVIAL.id, TRIVIAL.id), kind="identity", doc=COSTS),
        Link("workloads.bwd.causal.rows.tail.split",
             "Link A2a: the rest is (T − J)(N_kv − (T − 1)B) + B(T − J)(T − J − 1)/2 (each term against the last block's).",
             (T >= 1, B >= 1, J >= 1), eq(tail, (T - J) * (Nkv - (T - 1) * B) + B * (T - J) * (T - J - 1) / 2),
             (BWD_TRIVIAL.id, TRIVIAL.id), kind="identity", doc=COSTS),
        Link("workloads.bwd.causal.rows.tail.pair.lt",
             "Link A2b, case J ≤ T − 1: (T − J)(T − J − 1) ≥ 0 (both factors ≥ 0). For integers J ≤ T the only other "
             "case is J = T (argued: integrality).", (T >= 1, J >= 1, J <= T - 1), (T - J) * (T - J - 1) >= 0,
             (BWD_TRIVIAL.id, TRIVIAL.id), doc=COSTS),
        Link("workloads.bwd.causal.rows.tail.pair.eq", "Link A2b, case J = T: (T − J)(T − J − 1) = 0.",
             (T >= 1, eq(J, T)), eq((T - J) * (T - J - 1), 0), (BWD_TRIVIAL.id, TRIVIAL.id), kind="identity",
             doc=COSTS),
        Link("workloads.bwd.causal.rows.tail",
             "Link A2c: with J ≤ T, (T − 1)·B ≤ N_kv − 1 (last block not empty) and link A2b, both parts of the rest "
             "are ≥ 0, so the rest is.", blocks + ((T - J) * (T - J - 1) >= 0,),
             (T - J) * (Nkv - (T - 1) * B) + B * (T - J) * (T - J - 1) / 2 >= 0, (BWD_TRIVIAL.id, TRIVIAL.id),
             doc=COSTS),
        Link("workloads.bwd.causal.rows",
             "Link A3: J ≥ 1 and a rest Y ≥ 0 give J·N_q + Y ≥ N_q: every head visits at least its N_q rows.",
             (Nq >= 1, J >= 1, Y >= 0), J * Nq + Y >= Nq, (BWD_TRIVIAL.id,), doc=COSTS),
    ]
    # BWD-SdP_P (and BWD-dP_P, which it dominates: min(P·d²/M, P/2) ≤ min(4P·d²/M, P/2)) against the unit counts,
    # d_v = d: R·B ≥ P and B(4d + 2) ≤ M give g·R(4d + 2) ≥ g·4P·d²/M (per unit, without the −M slack).
    Pp = sym("wl_P", integer=False, lo=0, doc="required (query, key) pairs of a workload")
    Cs = sym("wl_c", doc="K/V rows a block may hold (the block rule's c)")
    for sched in ("grouped", "per-head"):
        unit = _bwd_unit(sched, R)
        out.append(
            Link(f"workloads.bwd.chain.sdp.{sched}",
                 f"Link (flash2-bwd {sched}, d_v = d): R visited rows per head with R·B ≥ P and B(4d + 2) ≤ M give the "
                 "unit count ≥ g·min(4P·d²/M, P/2) (BWD-SdP_P per query head without its −M slack; ≥ BWD-dP_P too), "
                 "with B ≤ c and c(4d + 2) ≤ M.",
                 _BASE + (R >= 0, B >= 1, Pp >= 0, R * B >= Pp, B <= Cs, Cs * (4 * d + 2) <= M),
                 substitute(unit, {dv: d}) >= g * minimum(4 * Pp * d**2 / M, Pp / 2),
                 (BWD_SDP_RECT.id, BWD_SDP_CAUSAL.id, BWD_DP_RECT.id, BWD_DP_CAUSAL.id))
        )
    for causal in (False, True):
        f = WORKLOAD_BACKWARD_FORMULAS[("flash2-bwd", "grouped", causal)]  # the blocks are the same for per-head
        Tc, Bc = f.blocks["T_c"], f.blocks["B_c"]
        hyps = _BASE + f.valid
        cb = bwd_budget(d, dv).resident(M, "cols")  # c = ⌊(M − 2d − d_v − 2)/(2d + 2d_v + 2)⌋
        facts = [("c", (), cb * (2 * d + 2 * dv + 2) <= M - 2 * d - dv - 2), ("Bc", (), Bc <= cb)]
        if causal:
            Jf = minimum(Tc, floor((Nkv - Nq) / Bc) + 1)
            facts += [("TB", (), Tc * Bc >= Nkv), ("Jlow", (), (Jf - 1) * Bc <= Nkv - Nq), ("Jhigh", (Jf <= Tc - 1,), Jf * Bc >= Nkv - Nq + 1)]
        else:
            facts += [("pairs", (), Tc * Nq * Bc >= PAIRS_RECT)]
        out += links(f"workloads.bwd.{'causal' if causal else 'rect'}.blocks", hyps, (
            (what, f"Link (flash2-bwd{', causal' if causal else ''}): the formula's blocks satisfy {goal}"
             + (f" where {hyp[0]}" if hyp else "") + " (with workloads.causal.rows.pairs.* for the causal "
             "R·B ≥ P; then workloads.bwd.chain.sdp.*).", hyp, goal)
            for what, hyp, goal in facts),
            (BWD_SDP_CAUSAL.id, BWD_DP_CAUSAL.id) if causal else (BWD_SDP_RECT.id, BWD_DP_RECT.id), provenance=COSTS)
    Dw = sym("wl_Dw", integer=False, lo=0, doc="D words one head writes (flash2-fused-bwd)")
    for alg in BWD_ALGS:  # the same blocks and visits (flash2-fused-bwd keeps flash2-bwd's block rule)
        for sched in ("per-head", "grouped"):
            f = WORKLOAD_BACKWARD_FORMULAS[(alg, sched, True)]
            Tc, Bc = f.blocks["T_c"], f.blocks["B_c"]
            Jf = minimum(Tc, floor((Nkv - Nq) / Bc) + 1)
            hyps = _BASE + f.valid
            out.append(_wd(f, hyps, Jf >= 1, (BWD_TRIVIAL.id,)))
            cb = bwd_budget(d, dv).resident(M, "cols")  # c = ⌊(M − 2d − d_v − 2)/(2d + 2d_v + 2)⌋
            facts = (("T", Tc >= 1), ("B", Bc >= 1), ("J", Jf >= 1), ("JT", Jf <= Tc), ("lastc", (Tc - 1) * cb <= Nkv - 1))
            fused = alg != "flash2-bwd"
            if fused:  # its own B_c = min(c, N_kv) (full blocks first); B_c ≤ c with .lastc gives the last block non-empty
                facts = (*facts[:4], ("Bc", Bc <= cb))
            out += links("workloads.bwd.causal.blocks" + (f".{alg}" if fused else ""), hyps, (  # the same blocks for both schedules
                (what, f"Link B ({alg}, causal, both schedules): the formula's blocks satisfy {goal}.", (), goal)
                for what, goal in (facts if sched == "grouped" else ())), (BWD_TRIVIAL.id,), provenance=COSTS)
            unit = _bwd_unit(sched, R, alg, Dw)
            sub = {R: substitute(Rexpr, {T: Tc, B: Bc, J: Jf})} | ({Dw: _fused_dw(f)} if fused else {})
            tag = f".{alg}" if fused else ""
            out.append(
                Link(f"workloads.bwd.causal.count.{sched}{tag}",
                     f"Link C ({f.algorithm}): the formula is the link-1 count (workloads.bwd.chain.trivial.{sched}{tag}) at "
                     "R = R(T_c, B_c, J)" + (", Dw = N_q·min(T_c − 1, 1) (≥ 0: workloads.bwd.causal.dw)." if fused else "."), hyps,
                     eq(f.io, substitute(unit, sub)), (BWD_TRIVIAL.id,), kind="identity", doc=COSTS)
            )
    f = WORKLOAD_BACKWARD_FORMULAS[("flash2-fused-bwd", "grouped", True)]
    out.append(
        Link("workloads.bwd.causal.dw", "flash2-fused-bwd's D writes per head N_q·min(T_c − 1, 1) are ≥ 0 (T_c ≥ 1).",
             _BASE + f.valid, _fused_dw(f) >= 0, (BWD_TRIVIAL.id,), doc=COSTS)
    )
    return chain(out, DOC, kind="derivation")


def causal_forward_claims() -> list[Claim]:
    """The causal formulas of flash1, flash1-fit, standard and square tiling (per head, g = 1), whose one-step claims
    z3 cannot decide (NO_Z3), as chains of links with integer auxiliaries (docs/bounds/workloads.md#causal-chains).

    flash1, flash1-fit: the count is N_kv(d + d_v) + R(d + d_v + 2) + N_q(d_v + 2) + R(d_v + 2) at the causal row
    sum R = R(T_c, B_c, J) of the backward chain (links workloads.bwd.causal.rows.*: R ≥ N_q), so ≥ the trivial bound.
    standard, square tiling: the count is a linear form in Q reads Qr, K/V rows A, score entries Ar and T_v; with
    integers T = T_q, b, U = ⌈δ/b⌉, V = ⌈N_kv/b⌉ and r = N_q − (T − 1)b ∈ [1, b]: A ≥ N_kv, Qr ≥ N_q·d (trivial
    bound) and Ar − P = (T − 1)·b(b − 1)/2 + r(r − 1)/2 ≥ 0 (pair-count bounds B1_P, B2_P)."""
    T = sym("wl_T", doc="Q blocks per head (T_r)")
    B = sym("wl_B", doc="query positions per Q block (B_r)")
    J = sym("wl_J", doc="K/V blocks every query row visits (causal backward)")
    Cs = sym("wl_c", doc="K/V rows a block may hold (the block rule's c)")
    U = sym("wl_U", lo=0, doc="⌈δ/b⌉: column tiles of the δ leading keys (causal standard, square tiling)")
    V = sym("wl_V", doc="⌈N_kv/b⌉: column tiles of the last row tile (causal standard, square tiling)")
    X = sym("wl_X", lo=0, doc="a non-negative integer")
    R = sym("wl_R", integer=False, lo=0, doc="query rows one head visits over all K/V blocks")
    Qr = sym("wl_Qr", integer=False, lo=0, doc="Q words read (causal standard, square tiling)")
    A = sym("wl_A", integer=False, lo=0, doc="K/V rows read (causal standard, square tiling)")
    Ar = sym("wl_Ar", integer=False, lo=0, doc="score entries (causal standard, square tiling)")
    Tv = sym("wl_Tv", doc="⌈d_v/b⌉ (standard, square tiling)")
    delta = Nkv - Nq
    base = (Nq >= 1, Nkv >= 1, d >= 1, dv >= 1, M >= 1, Nq <= Nkv)
    out: list[Claim] = [
        Link("workloads.causal.pair.ge1",
             "X ≥ 1 gives X(X − 1) ≥ 0 (both factors ≥ 0); with workloads.causal.pair.zero: X(X − 1) ≥ 0 for every "
             "integer X ≥ 0 (that an integer X ≥ 0 is 0 or ≥ 1 is argued, not machine-checked).", (X >= 1,),
             X * (X - 1) >= 0, (TRIVIAL.id,)),
        Link("workloads.causal.pair.zero", "X = 0 gives X(X − 1) = 0.", (eq(X, 0),), eq(X * (X - 1), 0),
             (TRIVIAL.id,), kind="identity"),
    ]
    # flash1, flash1-fit -------------------------------------------------------------------------------------------
    unit1 = Nkv * (d + dv) + R * (d + dv + 2) + Nq * (dv + 2) + R * (dv + 2)
    out.append(
        Link("workloads.causal.flash1.trivial",
             "flash1 / flash1-fit, link 1: with R ≥ N_q visited Q rows, N_kv(d + d_v) + R(d + d_v + 2) + N_q(d_v + 2) + "
             "R(d_v + 2) ≥ the trivial N_q(d + d_v) + N_kv(d + d_v).", base + (R >= Nq,),
             unit1 >= substitute(TRIVIAL.expr, {g: 1}), (TRIVIAL.id,))
    )
    Rexpr = T * Nq - B * (T * (T - 1) - J * (J - 1)) / 2 + (T - J) * delta
    for alg in ("flash1", "flash1-fit"):
        f = WORKLOAD_FORMULAS[(alg, "per-head", True)]
        Tc, Bc = f.blocks["T_c"], f.blocks["B_c"]
        Jf = minimum(Tc, floor(delta / Bc) + 1)
        hyps = base + f.valid
        covers = (TRIVIAL.id,) if alg == "flash1" else (TRIVIAL.id, B1_CAUSAL.id, B2_CAUSAL.id)
        out.append(_wd(f, hyps, Jf >= 1, covers))
        last = ("last", (Tc - 1) * Bc <= Nkv - 1) if alg == "flash1" else (
            "lastc", (Tc - 1) * floor((M - d - dv - 6) / (d + dv + 1)) <= Nkv - 1)
        out += links(f"workloads.causal.blocks.{alg}", hyps, (
            (what, f"Link 2 ({f.algorithm}): the formula's blocks satisfy {goal} (the hypotheses of "
             "workloads.bwd.causal.rows.*).", (), goal)
            for what, goal in (("T", Tc >= 1), ("B", Bc >= 1), ("J", Jf >= 1), ("JT", Jf <= Tc), last)),
            covers, provenance=COSTS)
        out.append(
            Link(f"workloads.causal.count.{alg}",
                 f"Link 3 ({f.algorithm}): the formula is the link-1 count at R = R(T_c, B_c, J).", hyps,
                 eq(f.io, substitute(unit1, {R: substitute(Rexpr, {T: Tc, B: Bc, J: Jf})})), covers,
                 kind="identity", doc=COSTS)
        )
    # flash1-fit against B1_P, B2_P: R·B ≥ P (each visited (row, block) covers at most B of the row's keys), B ≤ c
    kvrows = (Nq >= 1, Nq <= Nkv, T >= 1, B >= 1, J >= 1, (T - 1) * B <= Nkv - 1, T * B >= Nkv, (J - 1) * B <= delta)
    out += [
        Link("workloads.causal.rows.pairs.lt",
             "Causal row sum, case J ≤ T − 1 (then J·B ≥ δ + 1): R(T, B, J)·B ≥ P (a visited (row, K/V block) pair "
             "covers at most B of the row's keys). With .eq: for integers J ≤ T (argued: J ≤ T − 1 or J = T).",
             kvrows + (J <= T - 1, J * B >= delta + 1), Rexpr * B >= PAIRS_CAUSAL, (B1_CAUSAL.id, B2_CAUSAL.id)),
        Link("workloads.causal.rows.pairs.eq", "Causal row sum, case J = T: R = T·N_q and R·B ≥ N_q·N_kv ≥ P.",
             kvrows + (eq(J, T),), Rexpr * B >= PAIRS_CAUSAL, (B1_CAUSAL.id, B2_CAUSAL.id)),
    ]
    for bnd, fac, reg in (("b1", 1, (M >= 2 * d**2, M <= 4 * d**2)), ("b2", 2, (M >= 4 * d**2,))):
        out.append(
            Link(f"workloads.causal.flash1-fit.{bnd}",
                 f"flash1-fit, link 1 (d_v = d): R·B ≥ P, B ≤ c and c(2d + 1) ≤ M give the count ≥ {fac}·P·d²/M "
                 f"({bnd.upper()}_P without its −M slack) where {' and '.join(str(x) for x in reg)}.",
                 base + reg + (R >= 0, B >= 1, R * B >= PAIRS_CAUSAL, B <= Cs, Cs * (2 * d + 1) <= M),
                 substitute(unit1, {dv: d}) >= fac * PAIRS_CAUSAL * d**2 / M,
                 (B1_CAUSAL.id if bnd == "b1" else B2_CAUSAL.id,))
        )
    f = WORKLOAD_FORMULAS[("flash1-fit", "per-head", True)]
    Tc, Bc = f.blocks["T_c"], f.blocks["B_c"]
    Jf = minimum(Tc, floor(delta / Bc) + 1)
    out += links("workloads.causal.blocks.flash1-fit", base + f.valid, (
        (what, f"Link 2 (flash1-fit, causal): the formula's blocks satisfy {goal}"
         + (f" where {hyp[0]}" if hyp else "") + " (hypotheses of workloads.causal.rows.pairs.*, .flash1-fit.b*).", hyp, goal)
        for what, hyp, goal in (
            ("TB", (), Tc * Bc >= Nkv),
            ("Jlow", (), (Jf - 1) * Bc <= delta),
            ("Jhigh", (Jf <= Tc - 1,), Jf * Bc >= delta + 1),
            ("c", (), floor((M - d - dv - 6) / (d + dv + 1)) * (d + dv + 1) <= M - d - dv - 6),
            ("Bc", (), Bc <= floor((M - d - dv - 6) / (d + dv + 1))),
        )), (B1_CAUSAL.id, B2_CAUSAL.id), provenance=COSTS)
    # standard, square tiling ------------------------------------------------------------------------------------------
    units = {
        "standard": Qr + A * (d + dv) + 2 * Ar + Tv * Ar + 2 * Ar + Nq * dv,
        "square_tiling": Qr + A * (d + dv) + Nq + Tv * Ar + Ar + Nq + Nq * dv,
    }
    r = Nq - (T - 1) * B
    Aexpr = B * T * (T - 1) / 2 + Nq + T * delta
    Arexpr = B * (B * T * (T - 1) / 2 + (T - 1) * delta) + r * Nkv
    Qexpr = d * (B * (T * (T - 1) / 2 + (T - 1) * U) + r * V)
    tiles = (T >= 1, B >= 1, r >= 1, r <= B)
    out += [
        Link("workloads.causal.tiles.kv",
             "Standard / square tiling, causal: the K/V rows read, b·T(T − 1)/2 + N_q + T·δ, are ≥ N_kv (T ≥ 1).",
             base + tiles, Aexpr >= Nkv, (TRIVIAL.id,), doc=COSTS),
        Link("workloads.causal.tiles.q",
             "Standard / square tiling, causal: the Q reads d(b(T(T − 1)/2 + (T − 1)U) + r·V) are ≥ N_q·d for U ≥ 0, "
             "V ≥ 1, r = N_q − (T − 1)b ≥ 1 and (T − 1)(T − 2) ≥ 0 (workloads.causal.pair.* at X = T − 1).",
             base + tiles + (U >= 0, V >= 1, (T - 1) * (T - 2) >= 0), Qexpr >= Nq * d, (TRIVIAL.id,), doc=COSTS),
        Link("workloads.causal.tiles.area.split",
             "Standard / square tiling, causal: score entries − required pairs = (T − 1)·b(b − 1)/2 + r(r − 1)/2 (each "
             "row of a full row tile computes b − 1 − k extra columns, each row of the last one N_q − 1 − i).",
             base + (T >= 1, B >= 1), eq(Arexpr - PAIRS_CAUSAL, (T - 1) * B * (B - 1) / 2 + r * (r - 1) / 2),
             (B1_CAUSAL.id, B2_CAUSAL.id), kind="identity", doc=COSTS),
        Link("workloads.causal.tiles.area",
             "…so score entries ≥ required pairs P (b ≥ 1, r ≥ 1: both parts ≥ 0).", base + tiles,
             Arexpr >= PAIRS_CAUSAL, (B1_CAUSAL.id, B2_CAUSAL.id), doc=COSTS),
    ]
    for alg, unit in units.items():
        out.append(
            Link(f"workloads.causal.{alg}.trivial",
                 f"{alg}, link 1: with Qr ≥ N_q·d, A ≥ N_kv, T_v ≥ 1 the count is ≥ the trivial N_q(d + d_v) + N_kv(d + d_v).",
                 base + (Qr >= Nq * d, A >= Nkv, Tv >= 1), unit >= substitute(TRIVIAL.expr, {g: 1}),
                 (TRIVIAL.id,))
        )
        for bnd, fac, reg in (("b1", 1, (M >= 2 * d**2, M <= 4 * d**2)), ("b2", 2, (M >= 4 * d**2,))):
            out.append(
                Link(f"workloads.causal.{alg}.{bnd}",
                     f"{alg}, link 1 (d_v = d): with score entries Ar ≥ P, T_v ≥ 1, the count is ≥ {fac}·P·d²/M "
                     f"({bnd.upper()}_P without its −M slack) where {' and '.join(str(x) for x in reg)}.",
                     base + reg + (Qr >= 0, A >= 0, Ar >= PAIRS_CAUSAL, Tv >= 1),
                     substitute(unit, {dv: d}) >= fac * PAIRS_CAUSAL * d**2 / M,
                     (B1_CAUSAL.id if bnd == "b1" else B2_CAUSAL.id,))
            )
        f = WORKLOAD_FORMULAS[(alg, "per-head", True)]
        b, Tq = f.blocks["b"], f.blocks["T_q"]
        Uf, Vf = ceil(delta / b), ceil(Nkv / b)
        hyps = base + f.valid
        covers = (TRIVIAL.id, B1_CAUSAL.id, B2_CAUSAL.id)
        out.append(_wd(f, hyps, Uf + Vf + Tq + f.blocks["T_v"] >= 0, covers))
        rf = Nq - (Tq - 1) * b
        out += links(f"workloads.causal.blocks.{alg}", hyps, (
            (what, f"Link 2 ({f.algorithm}): the formula's tiles satisfy {goal}.", (), goal)
            for what, goal in (("T", Tq >= 1), ("b", b >= 1), ("r", rf >= 1), ("rb", rf <= b), ("U", Uf >= 0),
                               ("V", Vf >= 1), ("Tv", f.blocks["T_v"] >= 1))), covers, provenance=COSTS)
        sub = {T: Tq, B: b, U: Uf, V: Vf}
        out.append(
            Link(f"workloads.causal.count.{alg}",
                 f"Link 3 ({f.algorithm}): the formula is the link-1 count at the formula's Qr, A, Ar, T_v.",
                 hyps,
                 eq(f.io, substitute(unit, {Qr: substitute(Qexpr, sub), A: substitute(Aexpr, sub), Ar: substitute(Arexpr, sub),
                 Tv: f.blocks["T_v"]})), covers, kind="identity", doc=COSTS)
        )
    return chain(out, DOC, kind="derivation")


def trivial_causal_claims() -> list[Claim]:
    """The causal trivial bound is below the plain one, so every count proved ≥ workloads.trivial is ≥ it."""
    return chain([
        Link("workloads.trivial.causal.weaker",
             "g(N_q − 1)·d + g·N_q·d_v + N_kv(d + d_v) ≤ g·N_q(d + d_v) + N_kv(d + d_v): workloads.trivial.causal ≤ "
             "workloads.trivial, so every causal count proved ≥ the latter (workloads.causal.*.trivial) is ≥ the former.",
             _BASE + TRIVIAL_CAUSAL.regime, TRIVIAL_CAUSAL.expr <= TRIVIAL.expr,
             (TRIVIAL_CAUSAL.id, TRIVIAL.id), kind="consistency"),
        *(
            Link(f"workloads.trivial.one-key.le.flash2.{sched}",
                 f"With one key (N_kv = 1) flash2's {sched} unit count is ≥ the one-key bound g·N_q·d_v + d_v.",
                 _BASE + (eq(Nkv, 1),) + WORKLOAD_FORMULAS[("flash2", sched, False)].valid,
                 WORKLOAD_FORMULAS[("flash2", sched, False)].io >= (TRIVIAL_ONE_KEY.expr if sched == "grouped"
                 else substitute(TRIVIAL_ONE_KEY.expr, {g: 1})), (TRIVIAL_ONE_KEY.id,), kind="consistency")
            for sched in ("per-head", "grouped")
        ),
    ], DOC, kind="derivation")


def claims() -> list[Claim]:
    return trivial_causal_claims() + derivation_claims() + formula_claims() + causal_chain_claims() + causal_half_claims() + grouped_claims() + backward_claims() + causal_bwd_claims() + causal_forward_claims()
