"""Lower bounds for workloads: N_q ≠ N_kv, causal masks, grouped K/V heads (derived here, docs/bounds/workloads.md).

Per *pair count* P (the number of (query, key) pairs whose logit the output depends on):

- rectangular (no mask): P = N_q·N_kv;
- causal, bottom-right aligned (query i sees keys j ≤ i + δ, δ = N_kv − N_q ≥ 0):
  P = Σ_i (i + 1 + δ) = N_q(N_q + 1)/2 + N_q·δ, which is N(N + 1)/2 when N_q = N_kv = N.

B1 and B2 (docs/bounds/b1.md, b2.md) count pairs, not rows: their step 2 needs each *required* root S_ij
computed once, and steps 4–6 bound the roots (products) one segment can complete by the available Q/K(/V)
words, whatever pairs exist. So with P required pairs, step 7 gives

- **B1_P**: Q ≥ P·d²/M − M for M ≥ 2d² (P ≤ h·M²/d²; claim ``workloads.b1.rearrange``);
- **B2_P**: Q ≥ 2P·d²/M − M for M ≥ 4d², d_v = d (P·d ≤ h·M²/(2d); claim ``workloads.b2.rearrange``).

A workload on one machine (heads one after another, as the schedules run) has P = batch·H·P_head: K rows
shared by a group only make I_t × J_t larger than the pairs that exist, which the per-segment count already
allows.

**Trivial bound.** Every exact algorithm reads each Q word, each K and V word (once per K/V head, not per query
head) and writes each O word at least once when N_kv ≥ 2 (with one key the softmax is 1 and K is not needed):
per group unit g·N_q(d + d_v) + N_kv(d + d_v); the workload is batch·H_kv units. Bytes: × bytes per word.
Under a causal mask with N_q = N_kv query row 0 sees one key and needs no Q_0: the causal bound counts
g(N_q − 1)·d words of Q (``workloads.trivial.causal``).

>>> from attnio.workload import Workload
>>> w = Workload.build(batch=1, heads=4, kv_heads=1, N=8, d=2, M=32, causal=True)
>>> pairs(w), trivial_words(w)
(144, 152)
>>> best_lower_bound(w)[0]
'workloads.trivial.causal'
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.expr import evaluate, minimum
from attnio.bounds.symbols import M, Nkv, Nq, d, dv, g
from attnio.bounds.types import ANY_ALGORITHM, CDAG_BACKWARD, CDAG_QK, CDAG_QK_PV, Bound

DOC = "docs/bounds/workloads.md"
MODEL = (
    "standard attention CDAG of every (query, key) pair the output depends on (masked pairs absent), over all "
    "heads of the workload run on one two-level machine; recomputation allowed"
)

PAIRS_RECT = Nq * Nkv
PAIRS_CAUSAL = Nq * (Nq + 1) / 2 + Nq * (Nkv - Nq)

TRIVIAL = Bound(
    id="workloads.trivial",
    statement="Per K/V head and its g query heads, every exact algorithm moves at least g·N_q(d + d_v) + N_kv(d + d_v) "
    "words: Q read and O written once per query head, K and V read once per K/V head (N_kv ≥ 2).",
    kind="lower",
    model="any exact attention algorithm over a workload (inputs start and outputs end in slow memory)",
    regime=(2 <= Nkv,),
    expr=g * Nq * (d + dv) + Nkv * (d + dv),
    explicit=True,
    constant=Fraction(1),
    provenance="derived here",
    status="derived here",
    doc=DOC,
    symbols=("Nq", "Nkv", "g", "d", "dv"),
    cdag=ANY_ALGORITHM,
    notes="A workload is batch·H_kv such units; bytes are words × bytes per word.",
)


TRIVIAL_CAUSAL = Bound(
    id="workloads.trivial.causal",
    statement="Under a bottom-right causal mask (N_q ≤ N_kv), per K/V head and its g query heads, every exact "
    "algorithm moves at least g(N_q − 1)·d + g·N_q·d_v + N_kv(d + d_v) words: as workloads.trivial, except that "
    "with δ = N_kv − N_q = 0 query row 0 sees key 0 only (its softmax is 1, O_0 = V_0) and needs no Q_0 (N_kv ≥ 2).",
    kind="lower",
    model="any exact attention algorithm over a causal workload (inputs start and outputs end in slow memory)",
    regime=(2 <= Nkv, Nq <= Nkv),
    expr=g * (Nq - 1) * d + g * Nq * dv + Nkv * (d + dv),
    explicit=True,
    constant=Fraction(1),
    provenance="derived here",
    status="derived here",
    doc=DOC,
    symbols=("Nq", "Nkv", "g", "d", "dv"),
    cdag=ANY_ALGORITHM,
    notes="Exact for δ = 0 and g·d words weaker than needed for δ ≥ 1 (row 0 then sees two keys). The schedules' "
    "causal counts are proved ≥ workloads.trivial, which is ≥ this (claim workloads.trivial.causal.weaker).",
)


def _b(id_: str, pairs_: object, factor: int, regime: tuple, what: str) -> Bound:
    return Bound(
        id=id_,
        statement=f"Every standard-CDAG calculation of one head with {what} moves at least "
        f"{factor if factor > 1 else ''}P·d²/M − M words, P = {pairs_}.",
        kind="lower",
        model=MODEL,
        regime=regime,
        expr=factor * pairs_ * d**2 / M - M,  # type: ignore[operator]
        explicit=True,
        constant=Fraction(factor),
        slack=-M,
        provenance="derived here (B1/B2 with the pair count in place of N², docs/bounds/b1.md, b2.md)",
        status="derived here",
        doc=DOC,
        symbols=("Nq", "Nkv", "d", "M"),
        cdag=CDAG_QK if factor == 1 else CDAG_QK_PV,  # B1 needs the QKᵀ trees; B2 also the PV products
    )


B1_RECT = _b("workloads.b1.rect", PAIRS_RECT, 1, (M >= 2 * d**2,), "N_q queries and N_kv keys, no mask")
B1_CAUSAL = _b("workloads.b1.causal", PAIRS_CAUSAL, 1, (M >= 2 * d**2, Nq <= Nkv), "a bottom-right causal mask")
B2_RECT = _b("workloads.b2.rect", PAIRS_RECT, 2, (M >= 4 * d**2,), "N_q queries and N_kv keys, no mask (d_v = d)")
B2_CAUSAL = _b("workloads.b2.causal", PAIRS_CAUSAL, 2, (M >= 4 * d**2, Nq <= Nkv), "a bottom-right causal mask (d_v = d)")

BOUNDS: list[Bound] = [TRIVIAL, TRIVIAL_CAUSAL, B1_RECT, B1_CAUSAL, B2_RECT, B2_CAUSAL]


def pairs(w: object) -> int:
    """Required (query, key) pairs of the whole workload: batch·H·P_head."""
    e = PAIRS_CAUSAL if w.causal else PAIRS_RECT  # type: ignore[attr-defined]
    return w.query_heads_total * int(evaluate(e, {"Nq": w.Nq, "Nkv": w.Nkv}))  # type: ignore[attr-defined]


def trivial_words(w: object) -> int:
    """Q read and O written per query head, K and V read per K/V head (0 of K when N_kv = 1: see the regime);
    under a causal mask one Q row per query head fewer (:data:`TRIVIAL_CAUSAL`)."""
    per_q = w.Nq * (w.d + w.dv)  # type: ignore[attr-defined]
    kv = w.Nkv * (w.d + w.dv) if w.Nkv >= 2 else 0  # type: ignore[attr-defined]
    if w.causal and w.Nkv >= 2:  # type: ignore[attr-defined]
        per_q -= w.d  # type: ignore[attr-defined]
    return w.query_heads_total * per_q + w.kv_heads_total * kv  # type: ignore[attr-defined]


def best_lower_bound(w: object) -> tuple[str, Fraction]:
    """The largest applicable lower bound (words) on the whole workload: trivial, B1_P or B2_P (d_v = d)."""
    P, dd, MM = pairs(w), w.d, w.M  # type: ignore[attr-defined]
    trivial_id = TRIVIAL_CAUSAL.id if w.causal and w.Nkv >= 2 else TRIVIAL.id  # type: ignore[attr-defined]
    cands: dict[str, Fraction] = {trivial_id: Fraction(trivial_words(w))}
    kind = "causal" if w.causal else "rect"  # type: ignore[attr-defined]
    if MM >= 2 * dd * dd:
        cands[f"workloads.b1.{kind}"] = Fraction(P * dd * dd, MM) - MM
    if MM >= 4 * dd * dd and w.dv == dd:  # type: ignore[attr-defined]
        cands[f"workloads.b2.{kind}"] = Fraction(2 * P * dd * dd, MM) - MM
    best = max(cands, key=lambda k: (cands[k], k))
    return best, cands[best]


# ===================================================================================================== backward
# Backward-pass bounds for workloads (docs/bounds/workloads.md#backward). A list of their own (the catalog adds it
# to its aggregate): computation "backward", so they are compared only with backward schedules.

BWD_TRIVIAL = Bound(
    id="workloads.bwd.trivial",
    statement="Per K/V head and its g query heads, every exact backward pass moves at least "
    "g(N_q − 1)·d + g·N_q(d + d_v) + 2N_kv(d + d_v) words (N_kv ≥ 2): dQ written and dO read once per query head, "
    "dK, dV written and K, V read once per K/V head, Q read for every query row that sees two or more keys (all "
    "but at most one per head).",
    kind="lower",
    model="any exact attention backward pass over a workload (inputs start and outputs end in slow memory)",
    regime=(2 <= Nkv,),
    expr=g * (Nq - 1) * d + g * Nq * (d + dv) + 2 * Nkv * (d + dv),
    explicit=True,
    constant=Fraction(1),
    provenance="derived here",
    status="derived here",
    doc=DOC,
    symbols=("Nq", "Nkv", "g", "d", "dv"),
    cdag=ANY_ALGORITHM,
    computation="backward",
    notes="O and the saved statistics are not counted (D = rowsum(P ∘ dP) can be formed without O).",
)


def _bwd(id_: str, pairs_: object, c: int, what: str, model: str) -> Bound:
    return Bound(
        id=id_,
        statement=f"Every backward pass of one head with {what} whose CDAG is the {model} moves at least "
        f"min({c if c > 1 else ''}P·d²/M, P/2) − M words, P = {pairs_} (d_v = d).",
        kind="lower",
        model=model,
        regime=(),
        expr=minimum(c * pairs_ * d**2 / M, pairs_ / 2) - M,  # type: ignore[operator]
        explicit=True,
        constant=Fraction(c),
        slack=-M,
        provenance="derived here (BWD-dP / BWD-SdP with the pair count in place of N², docs/bounds/backward.md)",
        status="derived here",
        doc=DOC,
        symbols=("Nq", "Nkv", "d", "M"),
        cdag=CDAG_BACKWARD,
        computation="backward",
    )


_DP = "standard backward CDAG (dP-trees of the required pairs)"
_SDP = "backward CDAG with S recomputed (S-tree and dP-tree of each required pair)"
BWD_DP_RECT = _bwd("workloads.bwd-dp.rect", PAIRS_RECT, 1, "N_q queries and N_kv keys, no mask", _DP)
BWD_DP_CAUSAL = _bwd("workloads.bwd-dp.causal", PAIRS_CAUSAL, 1, "a bottom-right causal mask", _DP)
BWD_SDP_RECT = _bwd("workloads.bwd-sdp.rect", PAIRS_RECT, 4, "N_q queries and N_kv keys, no mask", _SDP)
BWD_SDP_CAUSAL = _bwd("workloads.bwd-sdp.causal", PAIRS_CAUSAL, 4, "a bottom-right causal mask", _SDP)

BWD_BOUNDS: list[Bound] = [BWD_TRIVIAL, BWD_DP_RECT, BWD_DP_CAUSAL, BWD_SDP_RECT, BWD_SDP_CAUSAL]


def bwd_trivial_words(w: object) -> int:
    """BWD_TRIVIAL over the whole workload (batch·H_kv units); with N_kv = 1 only dO read and the outputs written."""
    if w.Nkv < 2:  # type: ignore[attr-defined]
        return w.query_heads_total * w.Nq * (w.d + w.dv) + w.kv_heads_total * w.Nkv * (w.d + w.dv)  # type: ignore[attr-defined]
    return w.query_heads_total * ((w.Nq - 1) * w.d + w.Nq * (w.d + w.dv)) + w.kv_heads_total * 2 * w.Nkv * (w.d + w.dv)  # type: ignore[attr-defined]


def best_backward_lower_bound(w: object, recomputes_S: bool = True) -> tuple[str, Fraction]:
    """The largest applicable backward lower bound (words) on the whole workload: trivial, BWD-dP_P, and (for
    schedules that recompute S, as flash2-bwd does; d_v = d) BWD-SdP_P.

    >>> from attnio.workload import Workload
    >>> best_backward_lower_bound(Workload.build(heads=32, kv_heads=8, N=4096, d=128, gpu="h100", dtype="bf16", causal=True))
    ('workloads.bwd-sdp.causal', Fraction(134133760, 1))
    """
    P, dd, MM = pairs(w), w.d, w.M  # type: ignore[attr-defined]
    kind = "causal" if w.causal else "rect"  # type: ignore[attr-defined]
    cands: dict[str, Fraction] = {"workloads.bwd.trivial": Fraction(bwd_trivial_words(w))}
    if w.dv == dd:  # type: ignore[attr-defined]
        cands[f"workloads.bwd-dp.{kind}"] = min(Fraction(P * dd * dd, MM), Fraction(P, 2)) - MM
        if recomputes_S:
            cands[f"workloads.bwd-sdp.{kind}"] = min(Fraction(4 * P * dd * dd, MM), Fraction(P, 2)) - MM
    best = max(cands, key=lambda k: (cands[k], k))
    return best, cands[best]
