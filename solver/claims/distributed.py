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
- ``distributed.hybrid-between-fwd``: hybrid's forward words lie between Ulysses' and the ring's.
"""

from __future__ import annotations

from attnio.bounds.distributed import (
    BW,
    BYTES,
    FLOPS,
    HKV,
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
from attnio.bounds.symbols import N, d, dv
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
