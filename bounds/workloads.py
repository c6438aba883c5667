"""Lower bounds for workloads: N_q ≠ N_kv, causal masks, grouped K/V heads (derived here, docs/bounds/workloads.md).

Per *pair count* P (the number of unmasked (query, key) pairs, each with its trees in the CDAG: see MODEL):

- rectangular (no mask): P = N_q·N_kv;
- causal, bottom-right aligned (query i sees keys j ≤ i + δ, δ = N_kv − N_q ≥ 0):
  P = Σ_i (i + 1 + δ) = N_q(N_q + 1)/2 + N_q·δ, which is N(N + 1)/2 when N_q = N_kv = N.

B1 and B2 (docs/bounds/b1.md, b2.md) count pairs, not rows: their step 2 needs each *required* root S_ij
computed once, and steps 4–6 bound the roots (products) one segment can complete by the available Q/K(/V)
words, whatever pairs exist. So with P required pairs, step 7 gives

- **B1_P**: Q ≥ P·d²/M − M for M ≥ 2d² (P ≤ h·M²/d²; claim ``workloads.b1.rearrange``);
- **B2_P**: Q ≥ 2P·d²/M − M for M ≥ 4d², d_v = d (P·d ≤ h·M²/(2d); claim ``workloads.b2.rearrange``).

Each bound's statement ends with its encoded regime, rendered from the ``Rel`` tuple (:func:`conditions`), so
the conditions a statement names are the ones the regime encodes (d_v = d is a relation of the regime, not
prose: B2_P and the four backward pair-count bounds do not hold for d_v < d).

A workload on one machine (heads one after another, as the schedules run) has P = batch·H·P_head: K rows
shared by a group only make I_t × J_t larger than the pairs that exist, which the per-segment count already
allows.

**Trivial bound.** Every exact algorithm reads each Q word, each K and V word (once per K/V head, not per query
head) and writes each O word at least once when N_kv ≥ 2: per group unit g·N_q(d + d_v) + N_kv(d + d_v); the
workload is batch·H_kv units. Bytes: × bytes per word. With one key (N_kv = 1) the softmax is 1 and O = V₀ in
every row: neither Q nor K is needed, and the bound is g·N_q·d_v + d_v (O written, V₀ read once per unit;
``workloads.trivial.one-key``).
Under a causal mask with N_q = N_kv query row 0 sees one key and needs no Q_0: the causal bound counts
g(N_q − 1)·d words of Q (``workloads.trivial.causal``).

>>> from attnio.core.workload import Workload
>>> w = Workload.build(batch=1, heads=4, kv_heads=1, N=8, d=2, M=32, causal=True)
>>> pairs(w), trivial_words(w)
(144, 152)
>>> best_lower_bound(w)[0]
'workloads.trivial.causal'
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.expr import Rel, eq, evaluate, minimum
from attnio.bounds.symbols import M, Nkv, Nq, d, dv, g
from attnio.bounds.types import ANY_ALGORITHM, CDAG_BACKWARD, CDAG_QK, CDAG_QK_PV, CDAG_QK_PV_ACC, Bound

DOC = "docs/bounds/workloads.md"
MODEL = (
    "standard attention CDAG with the trees of every unmasked (query, key) pair (masked pairs absent; the trees of "
    "pair (0, 0) are present under a causal mask with N_q = N_kv although its softmax is the constant 1), over all "
    "heads of the workload run on one two-level machine; recomputation allowed"
)
DV_EQ_D = eq(dv, d)  # d_v = d, as a relation of a regime (B2_P and the backward pair-count bounds need it)


def conditions(regime: tuple[Rel, ...]) -> str:
    """The regime as the text a statement ends with: ``"(d_v = d, 4·d² ≤ M)"``; ``""`` for an empty regime.

    >>> conditions((M >= 4 * d**2, DV_EQ_D))
    '(4·d^2 ≤ M, dv = d)'
    """
    return "(" + ", ".join(str(r) for r in regime) + ")" if regime else ""

PAIRS_RECT = Nq * Nkv
TWO_KEYS = (2 <= Nkv,)
CAUSAL_TWO_KEYS = (2 <= Nkv, Nq <= Nkv)
ONE_KEY = (Nkv <= 1,)
PAIRS_CAUSAL = Nq * (Nq + 1) / 2 + Nq * (Nkv - Nq)


def _once(**fields) -> Bound:
    """A trivial bound per K/V head and its g query heads (each word that must move, moved once): explicit,
    constant 1, derived here, about any algorithm."""
    return Bound(
        kind="lower",
        explicit=True,
        constant=Fraction(1),
        provenance="derived here",
        status="derived here",
        doc=DOC,
        symbols=("Nq", "Nkv", "g", "d", "dv"),
        cdag=ANY_ALGORITHM,
        **fields,
    )


TRIVIAL = _once(
    id="workloads.trivial",
    statement="Per K/V head and its g query heads, every exact algorithm moves at least g·N_q(d + d_v) + N_kv(d + d_v) "
    "words: Q read and O written once per query head, K and V read once per K/V head, where " + conditions(TWO_KEYS) + ".",
    model="any exact attention algorithm over a workload (inputs start and outputs end in slow memory)",
    regime=TWO_KEYS,
    expr=g * Nq * (d + dv) + Nkv * (d + dv),
    notes="A workload is batch·H_kv such units; bytes are words × bytes per word.",
)


TRIVIAL_CAUSAL = _once(
    id="workloads.trivial.causal",
    statement="Under a bottom-right causal mask (N_q ≤ N_kv), per K/V head and its g query heads, every exact "
    "algorithm moves at least g(N_q − 1)·d + g·N_q·d_v + N_kv(d + d_v) words: as workloads.trivial, except that "
    "with δ = N_kv − N_q = 0 query row 0 sees key 0 only (its softmax is 1, O_0 = V_0) and needs no Q_0, where " + conditions(CAUSAL_TWO_KEYS) + ".",
    model="any exact attention algorithm over a causal workload (inputs start and outputs end in slow memory)",
    regime=CAUSAL_TWO_KEYS,
    expr=g * (Nq - 1) * d + g * Nq * dv + Nkv * (d + dv),
    notes="Exact for δ = 0 and g·d words weaker than needed for δ ≥ 1 (row 0 then sees two keys). The schedules' "
    "causal counts are proved ≥ workloads.trivial, which is ≥ this (claim workloads.trivial.causal.weaker).",
)


def _pairs(**fields) -> Bound:
    """A pair-count lower bound (a paper's N² replaced by the pair count P): explicit, slack −M, derived here."""
    return Bound(kind="lower", explicit=True, slack=-M, status="derived here", doc=DOC, **fields)


def _b(id_: str, pairs_: object, factor: int, regime: tuple, what: str) -> Bound:
    return _pairs(
        id=id_,
        statement=f"Every standard-CDAG calculation of one head with {what} moves at least "
        f"{factor if factor > 1 else ''}P·d²/M − M words, P = {pairs_}, where {conditions(regime)}.",
        model=MODEL,
        regime=regime,
        expr=factor * pairs_ * d**2 / M - M,  # type: ignore[operator]
        constant=Fraction(factor),
        provenance="derived here (B1/B2 with the pair count in place of N², docs/bounds/b1.md, b2.md)",
        symbols=("Nq", "Nkv", "d", "M") if factor == 1 else ("Nq", "Nkv", "d", "dv", "M"),
        cdag=CDAG_QK if factor == 1 else CDAG_QK_PV,  # B1 needs the QKᵀ trees; B2 also the PV products
    )


B1_RECT = _b("workloads.b1.rect", PAIRS_RECT, 1, (M >= 2 * d**2,), "N_q queries and N_kv keys, no mask")
B1_CAUSAL = _b("workloads.b1.causal", PAIRS_CAUSAL, 1, (M >= 2 * d**2, Nq <= Nkv), "a bottom-right causal mask")
# B2_P counts the P·d_v PV products against the V face: d_v = d is part of its regime (at d_v < d flash2 moves
# less than 2P·d²/M − M, e.g. N = 16384, d = 32, d_v = 1, M = 4096, H = 8, H_kv = 4; tests/test_bound_falsification.py).
B2_RECT = _b("workloads.b2.rect", PAIRS_RECT, 2, (M >= 4 * d**2, DV_EQ_D), "N_q queries and N_kv keys, no mask")
B2_CAUSAL = _b("workloads.b2.causal", PAIRS_CAUSAL, 2, (M >= 4 * d**2, DV_EQ_D, Nq <= Nkv), "a bottom-right causal mask")

# B3 with pair counts (derived here, refereed; docs/bounds/b3p.md): B3's proof with the P·d products of the
# unmasked pairs in place of N²d and the L = N_q·d output slots of a head in place of Nd (its final writes).
SLOTS = Nq * d  # output slots (i, ℓ') of one head, d_v = d


def _b3(id_: str, pairs_: object, regime: tuple, what: str) -> Bound:
    return Bound(
        id=id_,
        statement=f"Every standard-CDAG calculation of one head with {what} moves at least "
        f"M(4P·d² − 1.5·M·L)/(M² + 16d⁴) − M words, P = {pairs_} unmasked pairs, L = N_q·d output slots, where "
        f"{conditions(regime)}.",
        kind="lower",
        model=MODEL + "; every unmasked pair's d_v products are leaves of its row's accumulation trees, one tree per "
        "output slot (docs/bounds/b3.md (P1)–(P6) with the unmasked pairs)",
        regime=regime,
        expr=M * (4 * pairs_ * d**2 - Fraction(3, 2) * M * SLOTS) / (M**2 + 16 * d**4) - M,  # type: ignore[operator]
        explicit=True,
        constant=Fraction(4),
        slack=-M,
        provenance="derived here (B3, docs/bounds/b3.md, with the pair count P in place of N² and the slot count "
        "L = N_q·d in place of Nd; docs/bounds/b3p.md)",
        status="derived here (refereed)",
        doc="docs/bounds/b3p.md",
        symbols=("Nq", "Nkv", "d", "dv", "M"),
        cdag=CDAG_QK_PV_ACC,
        notes="Refereed (docs/bounds/b3p.md#referee). The expression less its −M is linear in (P, L), both of which add up over heads, so "
        "over a workload it is batch·H × (expression + M) − M (workload_value). Consistency: proved by z3 and cvc5 "
        "for every rectangular workload formula (claims workloads.b3p.consistency.*); measured for the causal ones "
        "(tests/test_bound_falsification.py).",
    )


B3_RECT = _b3("workloads.b3.rect", PAIRS_RECT, (DV_EQ_D,), "N_q queries and N_kv keys, no mask")
B3_CAUSAL = _b3("workloads.b3.causal", PAIRS_CAUSAL, (DV_EQ_D, Nq <= Nkv), "a bottom-right causal mask")

TRIVIAL_ONE_KEY = Bound(
    **{
        **vars(TRIVIAL),
        "id": "workloads.trivial.one-key",
        "statement": "With one key (N_kv = 1) the softmax is the constant 1 and every output row is V₀: per K/V head "
        "and its g query heads every exact algorithm moves at least g·N_q·d_v + d_v words (O written once per query "
        "head, V₀ read once; Q and K are not needed), where " + conditions(ONE_KEY) + ".",
        "regime": ONE_KEY,
        "expr": g * Nq * dv + dv,
        "notes": "A workload is batch·H_kv such units. Exact: reading V₀ once and writing it to every O row of the "
        "group moves this many words.",
    }
)

BOUNDS: list[Bound] = [TRIVIAL, TRIVIAL_CAUSAL, TRIVIAL_ONE_KEY, B1_RECT, B1_CAUSAL, B2_RECT, B2_CAUSAL, B3_RECT, B3_CAUSAL]
# The bounds about causal workloads (the others are about workloads without a mask).
CAUSAL = frozenset({TRIVIAL_CAUSAL.id, B1_CAUSAL.id, B2_CAUSAL.id, B3_CAUSAL.id})


def pairs(w: object) -> int:
    """Required (query, key) pairs of the whole workload: batch·H·P_head."""
    e = PAIRS_CAUSAL if w.causal else PAIRS_RECT  # type: ignore[attr-defined]
    return w.query_heads_total * int(evaluate(e, {"Nq": w.Nq, "Nkv": w.Nkv}))  # type: ignore[attr-defined]


def _env(w: object, g_: int) -> dict[str, int]:
    return {"Nq": w.Nq, "Nkv": w.Nkv, "d": w.d, "dv": w.dv, "M": w.M, "g": g_}  # type: ignore[attr-defined]


def applies(b: Bound, w: object) -> bool:
    """Whether the workload bound ``b`` speaks about ``w``: its mask (:data:`CAUSAL`, :data:`BWD_CAUSAL`) is
    w's and its regime holds at w (the group size g = heads/kv_heads for the bounds per group unit)."""
    causal_ids = CAUSAL | BWD_CAUSAL
    masks = {TRIVIAL_ONE_KEY.id, BWD_TRIVIAL.id}  # these two speak about both (one key: N_q ≤ 1 if causal)
    if b.id not in masks and (b.id in causal_ids) != bool(w.causal):  # type: ignore[attr-defined]
        return False
    return all(r.holds(_env(w, w.groups)) for r in b.regime)  # type: ignore[attr-defined]


def workload_value(b: Bound, w: object) -> Fraction:
    """The bound ``b`` (words) over the whole workload ``w``, evaluated from its catalog expression:

    - a bound per group unit (its symbols include g): batch·H_kv × the expression at g = H/H_kv (the trivial
      bounds), or batch·H_kv × (expression − slack) + slack for one with a slack (the backward slot bounds, whose
      expression less its −M is linear in the unit's pairs and slots);
    - a pair-count bound (c·P·d²/M − M, min(c·P·d²/M, P/2) − M): the expression less its slack is
      homogeneous in P, and the workload has batch·H × P_head pairs on one machine, the −M paid once:
      batch·H × (expression − slack) + slack at one head.

    >>> from attnio.core.workload import Workload
    >>> w = Workload.build(heads=8, kv_heads=4, N=16384, d=32, M=4096)
    >>> workload_value(B2_RECT, w) == Fraction(2 * 8 * 16384**2 * 32**2, 4096) - 4096
    True
    """
    if "g" in b.symbols:
        env = _env(w, w.groups)
        if b.slack is None:
            return w.kv_heads_total * Fraction(evaluate(b.expr, env))  # type: ignore[attr-defined]
        slack = Fraction(evaluate(b.slack, env))  # a per-unit pair-count bound: the −M paid once
        return w.kv_heads_total * (Fraction(evaluate(b.expr, env)) - slack) + slack  # type: ignore[attr-defined]
    env = _env(w, 1)
    assert b.slack is not None, b.id
    slack = Fraction(evaluate(b.slack, env))
    return w.query_heads_total * (Fraction(evaluate(b.expr, env)) - slack) + slack  # type: ignore[attr-defined]


def trivial_words(w: object) -> int:
    """Q read and O written per query head, K and V read per K/V head; under a causal mask one Q row per query
    head fewer (:data:`TRIVIAL_CAUSAL`); with one key (N_kv = 1) O written and V₀ read only
    (:data:`TRIVIAL_ONE_KEY`)."""
    b = _trivial(w)
    return int(workload_value(b, w))


def _trivial(w: object) -> Bound:
    if w.Nkv < 2:  # type: ignore[attr-defined]
        return TRIVIAL_ONE_KEY
    return TRIVIAL_CAUSAL if w.causal else TRIVIAL  # type: ignore[attr-defined]


def best_lower_bound(w: object) -> tuple[str, Fraction]:
    """The largest applicable lower bound (words) on the whole workload: trivial (one-key, causal or plain),
    B1_P, B2_P or B3_P, each where its regime holds (B2_P, B3_P: d_v = d; B2_P: M ≥ 4d²)."""
    cands: dict[str, Fraction] = {
        b.id: workload_value(b, w)
        for b in BOUNDS
        if b is _trivial(w) or (b.slack is not None and applies(b, w))
    }
    best = max(cands, key=lambda k: (cands[k], k))
    return best, cands[best]


# ===================================================================================================== backward
# Backward-pass bounds for workloads (docs/bounds/workloads.md#backward). A list of their own (the catalog adds it
# to its aggregate): computation "backward", so they are compared only with backward schedules.

BWD_TRIVIAL = _once(
    id="workloads.bwd.trivial",
    statement="Per K/V head and its g query heads, every exact backward pass moves at least "
    "g(N_q − 1)·d + g·N_q(d + d_v) + 2N_kv(d + d_v) words (N_kv ≥ 2): dQ written and dO read once per query head, "
    "dK, dV written and K, V read once per K/V head, Q read for every query row that sees two or more keys (all "
    "but at most one per head), where " + conditions(TWO_KEYS) + ".",
    model="any exact attention backward pass over a workload (inputs start and outputs end in slow memory)",
    regime=TWO_KEYS,
    expr=g * (Nq - 1) * d + g * Nq * (d + dv) + 2 * Nkv * (d + dv),
    computation="backward",
    notes="O and the saved statistics are not counted (D = rowsum(P ∘ dP) can be formed without O).",
)


def _bwd(id_: str, pairs_: object, c: int, what: str, model: str) -> Bound:
    regime = (DV_EQ_D,)  # the dP-trees have d_v products and the row widths are d, d_v, d, d_v: proved for d_v = d
    return _pairs(
        id=id_,
        statement=f"Every backward pass of one head with {what} whose CDAG is the {model} moves at least "
        f"min({c if c > 1 else ''}P·d²/M, P/2) − M words, P = {pairs_}, where {conditions(regime)}.",
        model=model,
        regime=regime,
        expr=minimum(c * pairs_ * d**2 / M, pairs_ / 2) - M,  # type: ignore[operator]
        constant=Fraction(c),
        provenance="derived here (BWD-dP / BWD-SdP with the pair count in place of N², docs/bounds/backward.md)",
        symbols=("Nq", "Nkv", "d", "dv", "M"),
        cdag=CDAG_BACKWARD,
        computation="backward",
    )


_DP = "standard backward CDAG (dP-trees of the unmasked pairs, each dP_ij an ancestor of an output)"
_SDP = (
    "backward CDAG with S recomputed (for each unmasked pair, the S-tree and the dP-tree and a designated set Π_ij "
    "of pair-level vertices: scale·S_ij, scale·S_ij − L_i, P_ij, dP_ij − D_i, (dP_ij − D_i)·P_ij, dS_ij; "
    "each vertex of Π_ij has a Π-parent or the root S_ij or dP_ij, and from dS_ij both roots are reached; "
    "docs/bounds/backward.md)"
)
BWD_DP_RECT = _bwd("workloads.bwd-dp.rect", PAIRS_RECT, 1, "N_q queries and N_kv keys, no mask", _DP)
BWD_DP_CAUSAL = _bwd("workloads.bwd-dp.causal", PAIRS_CAUSAL, 1, "a bottom-right causal mask", _DP)
BWD_SDP_RECT = _bwd("workloads.bwd-sdp.rect", PAIRS_RECT, 4, "N_q queries and N_kv keys, no mask", _SDP)
BWD_SDP_CAUSAL = _bwd("workloads.bwd-sdp.causal", PAIRS_CAUSAL, 4, "a bottom-right causal mask", _SDP)


# BWD-slots and BWD-slots-x with pair counts (derived here, docs/bounds/bwd-slots-p.md): the proofs of
# docs/bounds/backward-slots.md with the 2P·d dQ and dK products of the unmasked pairs in place of 2N²d and the L
# dQ and dK output slots in place of 2Nd. Per K/V head and its g query heads: g·P_head pairs, L = g·N_q·d dQ slots
# + N_kv·d dK slots (dK of a K/V head is one output word per (j, ℓ), accumulated over the g·N_q query rows).
SLOTS_COEFF = Fraction(200, 23)
BWD_SLOTS_L = g * Nq * d + Nkv * d


def _bwd_slots(id_: str, pairs_: object, low: int, expr: object, form: str, what: str) -> Bound:
    regime = (low * d**2 <= M, DV_EQ_D) + ((Nq <= Nkv,) if "causal" in id_ else ())
    return Bound(
        id=id_,
        statement=f"Per K/V head and its g query heads with {what}, every backward pass that recomputes S and "
        f"accumulates dQ = dS·K and dK = dSᵀ·Q by sum trees of scalar products moves at least {form} words, "
        f"P = g·({pairs_}) unmasked pairs, L = g·N_q·d + N_kv·d dQ and dK output slots; over a workload on one "
        f"machine P and L add up over the units and −M is paid once, where {conditions(regime)}.",
        kind="lower",
        model=_SDP + "; each dQ and dK product dS_ij·K_jℓ, dS_ij·Q_iℓ of an unmasked pair is its own vertex and a leaf "
        "of the accumulation tree of its output slot, one tree per dQ slot (query head, i, ℓ) and per dK slot "
        "(K/V head, j, ℓ) (docs/bounds/backward-slots.md (P3-SdP), (Q1)–(Q3) with the unmasked pairs); the trees of "
        "pair (0, 0) are present under a causal mask with N_q = N_kv although dS_00 ≡ 0 (likewise every pair when "
        "N_kv = 1), and products of masked entries may be further leaves",
        regime=regime,
        expr=expr,
        explicit=True,
        constant=SLOTS_COEFF,
        slack=-M,
        provenance="derived here (BWD-slots, docs/bounds/backward-slots.md, with the pair count P in place of N² and "
        "the dQ and dK slot count L in place of 2Nd; docs/bounds/bwd-slots-p.md)",
        status="derived here (refereed)",
        doc="docs/bounds/bwd-slots-p.md",
        symbols=("Nq", "Nkv", "g", "d", "dv", "M"),
        cdag=CDAG_BACKWARD,
        computation="backward",
        notes="Not yet refereed. The expression less its −M is linear in (P, L), which add up over the K/V-head units: "
        "over a workload it is batch·H_kv × (expression + M) − M (workload_value).",
    )


def _slots_expr(pairs_: object) -> object:
    return SLOTS_COEFF * g * pairs_ * d**2 / M - BWD_SLOTS_L / 2 - M  # type: ignore[operator]


def _slots_x_expr(pairs_: object) -> object:
    return M * (200 * g * pairs_ * d**2 - Fraction(23, 2) * M * BWD_SLOTS_L) / (23 * M**2 + 80 * d**4) - M  # type: ignore[operator]


_SL, _SLX = "(200/23)·P·d²/M − L/2 − M", "M(200P·d² − (23/2)·M·L)/(23M² + 80d⁴) − M"
_RECT, _CAUSAL = "N_q queries and N_kv keys, no mask", "a bottom-right causal mask"
BWD_SLOTS_RECT = _bwd_slots("workloads.bwd-slots.rect", PAIRS_RECT, 12, _slots_expr(PAIRS_RECT), _SL, _RECT)
BWD_SLOTS_CAUSAL = _bwd_slots("workloads.bwd-slots.causal", PAIRS_CAUSAL, 12, _slots_expr(PAIRS_CAUSAL), _SL, _CAUSAL)
BWD_SLOTS_X_RECT = _bwd_slots("workloads.bwd-slots-x.rect", PAIRS_RECT, 4, _slots_x_expr(PAIRS_RECT), _SLX, _RECT)
BWD_SLOTS_X_CAUSAL = _bwd_slots("workloads.bwd-slots-x.causal", PAIRS_CAUSAL, 4, _slots_x_expr(PAIRS_CAUSAL), _SLX, _CAUSAL)
BWD_SLOTS_P = (BWD_SLOTS_RECT, BWD_SLOTS_CAUSAL, BWD_SLOTS_X_RECT, BWD_SLOTS_X_CAUSAL)

BWD_BOUNDS: list[Bound] = [BWD_TRIVIAL, BWD_DP_RECT, BWD_DP_CAUSAL, BWD_SDP_RECT, BWD_SDP_CAUSAL, *BWD_SLOTS_P]
BWD_CAUSAL = frozenset({BWD_DP_CAUSAL.id, BWD_SDP_CAUSAL.id, BWD_SLOTS_CAUSAL.id, BWD_SLOTS_X_CAUSAL.id})
# The backward pair-count bounds for schedules that recompute S (flash2-bwd does).
BWD_RECOMPUTE_S = frozenset({BWD_SDP_RECT.id, BWD_SDP_CAUSAL.id, *(b.id for b in BWD_SLOTS_P)})


def bwd_trivial_words(w: object) -> int:
    """BWD_TRIVIAL over the whole workload (batch·H_kv units); with N_kv = 1 only dO read and the outputs written."""
    if w.Nkv < 2:  # type: ignore[attr-defined]
        return w.query_heads_total * w.Nq * (w.d + w.dv) + w.kv_heads_total * w.Nkv * (w.d + w.dv)  # type: ignore[attr-defined]
    return int(workload_value(BWD_TRIVIAL, w))


def best_backward_lower_bound(w: object, recomputes_S: bool = True, exclude: frozenset[str] = frozenset()) -> tuple[str, Fraction]:
    """The largest applicable backward lower bound (words) on the whole workload: trivial, BWD-dP_P, and (for
    schedules that recompute S, as flash2-bwd does) BWD-SdP_P, BWD-slots_P and BWD-slots-x_P, each where its regime
    holds (d_v = d; M ≥ 12d², M ≥ 4d² for the slot bounds). ``exclude``: bound ids left out (to compare with and
    without a bound, tools/workload_step_ratios.py).

    >>> from attnio.core.workload import Workload
    >>> best_backward_lower_bound(Workload.build(heads=32, kv_heads=8, N=4096, d=128, gpu="h100", dtype="bf16", causal=True))
    ('workloads.bwd-slots-x.causal', Fraction(23694400063488, 79847))
    """
    cands: dict[str, Fraction] = {BWD_TRIVIAL.id: Fraction(bwd_trivial_words(w))}
    for b in BWD_BOUNDS:
        if b.id in exclude:
            continue
        if b.slack is not None and applies(b, w) and (recomputes_S or b.id not in BWD_RECOMPUTE_S):
            cands[b.id] = workload_value(b, w)
    best = max(cands, key=lambda k: (cands[k], k))
    return best, cands[best]
