"""z3 claims about context parallelism (docs/distributed.md#claims): when a ring step's transfer hides behind its
attention, and when Ulysses moves fewer words per device than the ring.

- ``distributed.ring.overlap-fwd``: a forward ring step's K/V transfer, n(d + d_v)·β/BW seconds per K/V head,
  is at most its attention, 2g·n²(d + d_v)/F, **if and only if** n ≥ F·β/(2g·BW), for every n, g, d, d_v, β ≥ 1
  and F, BW > 0;
- ``distributed.ring.overlap-bwd``: the backward step (K/V and the dK/dV accumulator, 2n(d + d_v) words, against
  2g·n²(3d + 2d_v) FLOPs) likewise iff n ≥ (d + d_v)·F·β/(g(3d + 2d_v)·BW);
- ``distributed.ulysses-vs-ring``: Ulysses' forward words per device ≤ the ring's iff H + H_kv ≤ P·H_kv (with
  g = H/H_kv: iff P ≥ g + 1), for every P ≥ 2, N, b, H, H_kv, d, d_v ≥ 1;
- ``distributed.hybrid-vs-ring-fwd``: hybrid a2a+p2p's forward words ≤ the ring's under the same condition, at every
  group size 2 ≤ P_a ≤ P/2;
- ``distributed.hybrid-between-fwd``: hybrid's forward words lie between Ulysses' and the ring's;
- ``distributed.lb.*``: DIST-QK, the lower bound on the words the busiest of P processors receives
  (docs/bounds/distributed.md): its algebraic steps (amgm, endpoint, branches, share, regime), the bound ≤ each
  one-head schedule's exact forward words (``le.<schedule>``), and its attainment by Attention2D's Q/K traffic.
"""

from __future__ import annotations

from attnio.bounds.distributed import (
    BW,
    BYTES,
    FLOPS,
    HKV,
    LB_BRANCH1,
    LB_ID,
    LB_PAIRS,
    LB_QK,
    LB_REGIME,
    LOWER,
    PA,
    ROWS,
    SCHEDULES,
    STEP_COMM_BWD,
    STEP_COMM_FWD,
    STEP_COMP_BWD,
    STEP_COMP_FWD,
    THRESHOLD_BWD,
    THRESHOLD_FWD,
    B,
    G,
    H,
    P,
)
from attnio.bounds.expr import sqrt, substitute
from attnio.bounds.symbols import N, d, dv, nonneg_real
from attnio.solver.claims.build import claims_for
from attnio.solver.claims.types import Implication
from attnio.solver.logic import All, Any, Iff

DOC = "docs/distributed.md#claims"
META = "a fact of the context-parallel schedules' exact counts (bounds/distributed.py), about no catalog bound"

STEP_REGIME = (1 <= ROWS, 1 <= G, 1 <= d, 1 <= dv, 1 <= BYTES, 0 < FLOPS, 0 < BW)
SPLIT_REGIME = (2 <= P, 1 <= N, 1 <= B, 1 <= H, 1 <= HKV, HKV <= H, 1 <= d, 1 <= dv)


def overlap(pass_: str, comm=None, comp=None, threshold=None, suffix: str = "") -> Implication:
    """The ring's overlap condition for ``pass_`` (tests pass a mutant threshold)."""
    fwd = pass_ == "fwd"
    comm = comm or (STEP_COMM_FWD if fwd else STEP_COMM_BWD)
    comp = comp or (STEP_COMP_FWD if fwd else STEP_COMP_BWD)
    threshold = threshold or (THRESHOLD_FWD if fwd else THRESHOLD_BWD)
    return Implication(
        f"distributed.ring.overlap-{pass_}{suffix}", "iff",
        f"[distributed] A {'forward' if fwd else 'backward'} ring step's transfer ({comm}) is at most its attention "
        f"({comp}) iff the rows per device n ≥ {threshold}, where (" + ", ".join(str(r) for r in STEP_REGIME) + ").",
        STEP_REGIME, Iff(comm <= comp, ROWS >= threshold), provenance=DOC, meta=META)


def ulysses_vs_ring(pass_: str, suffix: str = "", rhs=None) -> Implication:
    u, r = SCHEDULES["ulysses"], SCHEDULES["ring"]
    uw, rw = (u.forward, r.forward) if pass_ == "fwd" else (u.backward, r.backward)
    cond = rhs if rhs is not None else (H + HKV <= P * HKV)
    return Implication(
        f"distributed.ulysses-vs-ring-{pass_}{suffix}", "iff",
        f"[distributed] Ulysses' {'forward' if pass_ == 'fwd' else 'backward'} words per device ≤ the ring's iff "
        f"{cond}, where (" + ", ".join(str(x) for x in SPLIT_REGIME) + ").",
        SPLIT_REGIME, Iff(uw <= rw, cond), provenance=DOC, meta=META)


HYBRID_REGIME = (*SPLIT_REGIME, 2 <= PA, 2 * PA <= P)


def hybrid_between(pass_: str, suffix: str = "", hybrid=None) -> Implication:
    """Hybrid a2a+p2p's words per device lie between Ulysses' and the ring's (tests pass a mutant ``hybrid``)."""
    get = (lambda s: SCHEDULES[s].forward) if pass_ == "fwd" else (lambda s: SCHEDULES[s].backward)
    hy = hybrid if hybrid is not None else get("hybrid")
    u, r = get("ulysses"), get("ring")
    return Implication(
        f"distributed.hybrid-between-{pass_}{suffix}", "inequality",
        f"[distributed] Hybrid a2a+p2p's {'forward' if pass_ == 'fwd' else 'backward'} words per device lie between "
        "Ulysses' and the ring's (min ≤ hybrid ≤ max), for every group size 2 ≤ P_a ≤ P/2, where ("
        + ", ".join(str(x) for x in HYBRID_REGIME) + ").",
        HYBRID_REGIME, Any((All((u <= hy, hy <= r)), All((r <= hy, hy <= u)))), provenance=DOC, meta=META)


def hybrid_vs_ring(suffix: str = "", rhs=None) -> Implication:
    cond = rhs if rhs is not None else (H + HKV <= P * HKV)
    return Implication(
        f"distributed.hybrid-vs-ring-fwd{suffix}", "iff",
        f"[distributed] Hybrid a2a+p2p's forward words per device ≤ the ring's iff {cond}, at every group size "
        "2 ≤ P_a ≤ P/2 (the same condition as Ulysses'), where (" + ", ".join(str(x) for x in HYBRID_REGIME) + ").",
        HYBRID_REGIME, Iff(SCHEDULES["hybrid"].forward <= SCHEDULES["ring"].forward, cond), provenance=DOC, meta=META)


CLAIMS: list[Implication] = [overlap("fwd"), overlap("bwd"), ulysses_vs_ring("fwd"), hybrid_vs_ring(),
                             hybrid_between("fwd")]


# DIST-QK, the lower bound (docs/bounds/distributed.md): its algebraic steps and its consistency with every schedule --

_q = nonneg_real("dlb_q", "Q/K words initially on the busiest processor (DIST-QK)")
_R = nonneg_real("dlb_R", "words the busiest processor receives (DIST-QK)")
_a = nonneg_real("dlb_a", "distinct Q/K words it receives (DIST-QK)")
_x = nonneg_real("dlb_x", "type-2 pairs assigned to it (DIST-QK)")
_u = nonneg_real("dlb_u", "rows whose whole Q row is available on it (DIST-QK)")
_v = nonneg_real("dlb_v", "rows whose whole K row is available on it (DIST-QK)")
_A = nonneg_real("dlb_A", "pairs assigned to it (DIST-QK)")

LB_DOC = "docs/bounds/distributed.md"
_ONE_HEAD = {B: 1, H: 1, HKV: 1}
ABOUT_LB = (LB_ID,)


def _sq(e):
    return e * e


def _branch1(q):
    return 2 * N * d / sqrt(P) - q


def _branch2(q):
    return N**2 / P - _sq(q) / (4 * d**2)


def one_head(schedule: str):
    """A schedule's exact forward words per device with one sequence and one head (b = H = H_kv = 1)."""
    return substitute(SCHEDULES[schedule].forward, _ONE_HEAD)


_lb = claims_for("distributed.lb", LB_DOC, label="DIST-QK", about=ABOUT_LB)

LB_STEPS: list[Implication] = [
    _lb("amgm", "d(|I| + |J|) ≤ q + a ⇒ |I|·|J| ≤ (q + a)²/(4d²)",
        (d >= 1, d * (_u + _v) <= _q + _a), _u * _v <= _sq(_q + _a) / (4 * d**2), doc=LB_DOC + "#proof"),
    _lb("endpoint", "a + x ≤ R and A ≤ (q + a)²/(4d²) + x ⇒ A ≤ max((q + R)²/(4d²), q²/(4d²) + R)",
        (d >= 1, _a + _x <= _R, _A <= _sq(_q + _a) / (4 * d**2) + _x),
        Any((_A <= _sq(_q + _R) / (4 * d**2), _A <= _sq(_q) / (4 * d**2) + _R)), doc=LB_DOC + "#proof"),
    # step 6 and step 7 in two links each, one per branch (cvc5 ran past its guard on each taken whole; the case split
    # "either hypothesis ⇒ the matching goal" is the whole of the combination)
    _lb("branches.first", "N²/P ≤ A ≤ (q + R)²/(4d²) ⇒ R ≥ 2Nd/√P − q (the first end of step 5's maximum)",
        (*LB_REGIME, _A >= N**2 / P, _A <= _sq(_q + _R) / (4 * d**2)), _R >= _branch1(_q), doc=LB_DOC + "#proof"),
    _lb("branches.second", "N²/P ≤ A ≤ q²/(4d²) + R ⇒ R ≥ N²/P − q²/(4d²) (the second end of step 5's maximum)",
        (*LB_REGIME, _A >= N**2 / P, _A <= _sq(_q) / (4 * d**2) + _R), _R >= _branch2(_q), doc=LB_DOC + "#proof"),
    _lb("share.first", "q ≤ 2Nd/P and R ≥ 2Nd/√P − q ⇒ R ≥ L(P, N, d)",
        (*LB_REGIME, _q <= 2 * N * d / P, _R >= _branch1(_q)), _R >= LOWER, doc=LB_DOC + "#proof"),
    _lb("share.second", "q ≤ 2Nd/P and R ≥ N²/P − q²/(4d²) ⇒ R ≥ N²/P − N²/P² (the second branch of L, so R ≥ L: "
        "a minimum is at most each of its terms; cvc5 ran past its guard with the minimum in the goal)",
        (*LB_REGIME, _q <= 2 * N * d / P, _R >= _branch2(_q)), _R >= LB_PAIRS, doc=LB_DOC + "#proof"),
    _lb("regime", "2Nd/√P − 2Nd/P ≤ N²/P − N²/P² iff 2dP ≤ N(√P + 1)",
        LB_REGIME, Iff(LB_QK <= LB_PAIRS, LB_BRANCH1), doc=LB_DOC + "#proof", kind="iff"),
]


def lb_le(schedule: str, bound=None, suffix: str = "") -> Implication:
    """DIST-QK ≤ ``schedule``'s exact forward words per device, one head (tests pass a mutant ``bound``)."""
    return _lb(f"le.{schedule}{suffix}",
               f"L(P, N, d) ≤ {schedule}'s exact forward words per device (one head, b = H = H_kv = 1), for every "
               "P ≥ 2, N, d, d_v ≥ 1", LB_REGIME, (LOWER if bound is None else bound) <= one_head(schedule),
               doc=LB_DOC + "#schedules", kind="consistency")


LB_SCHEDULES = ("ring", "zigzag", "striped", "allgather", "tokenring", "attention2d")  # those that run with one head
_A2D = one_head("attention2d")
_A2D_QK = (sqrt(P) - 1) * (N / P * d + N / P * d)  # its Q all-gather along rows and K all-gather along columns

LB_ATTAIN: list[Implication] = [
    _lb("attention2d-qk", "Attention2D's Q and K all-gathers, (√P − 1)(nd + nd) words, equal the first branch "
        "2Nd/√P − 2Nd/P", LB_REGIME, All((_A2D_QK <= LB_QK, LB_QK <= _A2D_QK)), doc=LB_DOC + "#schedules",
        kind="identity"),
    _lb("attention2d-ratio", "2d · (Attention2D's forward words, one head) = (2d + 2d_v + 1) · (2Nd/√P − 2Nd/P)",
        LB_REGIME, All((2 * d * _A2D <= (2 * d + 2 * dv + 1) * LB_QK, (2 * d + 2 * dv + 1) * LB_QK <= 2 * d * _A2D)),
        doc=LB_DOC + "#schedules", kind="identity"),
    _lb("attention2d-2x", "Attention2D's forward words ≤ 2·L when 2dP ≤ N(√P + 1) and 2d_v + 1 ≤ 2d",
        (*LB_REGIME, LB_BRANCH1, 2 * dv + 1 <= 2 * d), _A2D <= 2 * LOWER, doc=LB_DOC + "#schedules",
        kind="inequality"),
]

LB_CLAIMS: list[Implication] = [*LB_STEPS, *(lb_le(s) for s in LB_SCHEDULES), *LB_ATTAIN]
CLAIMS += LB_CLAIMS
