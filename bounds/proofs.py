"""Which steps of each derived lower bound's proof are machine-checked, and by which claim: the step tables of every
derived bound (the one place that says which bound a proof-step claim proves: :func:`attnio.solver.claims.step_links`
reads :data:`PROOF_STEPS` to set each step claim's ``about``), and :func:`proof_status`, the line a report prints
for a bound.

A table maps a bound id to its steps ``(n, claim id)`` in order, numbered as on the bound's docs page; ``"prose"``
marks a step argued in prose only. A step proved in links lists one entry per link, in order, under the same step
number. The tests check each table against its docs page (tests/test_constants.py, test_distributed_bound.py, test_backward_claims.py,
test_backward_small.py, test_backward_lift.py, test_b3p.py, test_bwd_slots_p.py).

>>> proof_status("constants.b3")
'7 of 14 steps machine-checkable, 7 prose'
"""

from __future__ import annotations

from collections.abc import Mapping

# Bound ids are spelled out (this module imports no bound module: bounds/constants.py reads proof_status, and the
# bound modules import each other); tests/test_links.py checks that each names a catalog bound.
Steps = list[tuple[int, str]]


def _prose(first: int, last: int) -> Steps:
    """Steps ``first`` to ``last`` argued in prose only."""
    return [(n, "prose") for n in range(first, last + 1)]


# The constants (docs/bounds/b1.md … bspv.md; claims in solver/claims/constants.py and bspv.py).
# Steps 1–11 of BSPV and BSPV-near (docs/bounds/bspv.md): the same for both; steps 10–11 are BS's algebra.
_BSPV_COMMON: list[tuple[int, str]] = [
    *_prose(1, 7),
    (8, "constants.bspv.pairs"),
    (9, "constants.bspv.third"),
    (10, "constants.bs.amgm"),
    (10, "constants.bs.combine"),
    (11, "constants.bs.cubic"),
]
CONSTANTS_STEPS: dict[str, list[tuple[int, str]]] = {
    "constants.bs": [
        *_prose(1, 6),
        (7, "constants.bs.pairs"),
        (8, "constants.bs.third"),
        (9, "constants.bs.combine"),
        (10, "constants.bs.cubic"),
        (11, "constants.bs.segment"),
        (12, "constants.bs.rearrange"),
        (13, "constants.bs.best_R"),
    ],
    # BSPV and BSPV-near share one page and one numbering (docs/bounds/bspv.md); steps 12–13 differ in R.
    "constants.bspv": [
        *_BSPV_COMMON,
        (12, "constants.bs.segment"),
        (13, "constants.bspv.rearrange"),
        (14, "constants.bs.best_R"),
        (14, "constants.bspv.crossover"),
    ],
    "constants.bspv-near": [
        *_BSPV_COMMON,
        (12, "constants.bspv-near.segment"),
        (13, "constants.bspv-near.rearrange"),
        (14, "constants.bspv.crossover"),
    ],
    # BSPV-cap (docs/bounds/bspv-cap.md): BSPV's steps 1–7, then the cap kept (8, 9), BS's algebra at κ = 1 (10, 11).
    "constants.bspv-cap": [
        *_prose(1, 7),
        (8, "constants.bspv-cap.pairs"),
        (9, "constants.bspv-cap.third"),
        (10, "constants.bs.amgm"),
        (10, "constants.bs.combine"),
        (11, "constants.bs.cubic"),
        (12, "constants.bspv-cap.segment"),
        (13, "constants.bspv-cap.rearrange"),
        (14, "constants.bs.best_R"),
    ],
    "constants.b1": [
        *_prose(1, 3),
        (4, "constants.b1.amgm"),
        (5, "constants.b1.endpoint"),
        (6, "constants.b1.segment_max"),
        (7, "constants.b1.rearrange"),
        (8, "constants.b1.best_R"),
    ],
    "constants.b2": [
        *_prose(1, 3),
        (4, "constants.b2.maximise"),
        (5, "constants.b2.endpoint"),
        (6, "constants.b2.segment_max"),
        (7, "constants.b2.rearrange"),
    ],
    "constants.b3": [
        *_prose(1, 5),
        (6, "constants.b3.amgm4"),
        (7, "constants.b3.lw_to_T2"),
        (8, "constants.b3.type2"),
        *_prose(9, 10),
        (11, "constants.b3.square_term"),
        (12, "constants.b3.sum"),
        (13, "constants.b3.eliminate"),  # step 13 in two links: S, f and ΣU eliminated, then the rearrangement
        (13, "constants.b3.rearrange"),
        (14, "constants.b3.best_R"),
    ],
}

# The backward (docs/bounds/backward*.md; claims in solver/claims/backward.py; BWD-dP reuses B1's algebra, claims
# constants.b1.*).
BACKWARD_STEPS: dict[str, list[tuple[int, str]]] = {
    "backward.bwd-dp": [
        *_prose(1, 3),
        (4, "constants.b1.amgm"),
        (5, "constants.b1.endpoint"),
        (6, "backward.dp.segment_max"),
        (7, "backward.dp.rearrange"),
        (8, "backward.dp.leading"),
    ],
    "backward.bwd-sdp": [
        *_prose(1, 3),
        (4, "backward.sdp.amgm"),
        (5, "backward.sdp.endpoint"),
        (6, "backward.sdp.segment_max"),
        (7, "backward.sdp.rearrange"),
        (8, "backward.sdp.best_R"),
        (9, "backward.sdp.leading"),
    ],
    # BS's steps 1–12 verbatim (claims constants.bs.*), with (dO, V) in place of (Q, K); its step 13 (the choice
    # of R) is not restated.
    "backward.bwd-dp-small": CONSTANTS_STEPS["constants.bs"][:12],
    "backward.bwd-sdp-small": [
        *_prose(1, 6),
        (7, "constants.bs.pairs"),
        (8, "backward.small.faces"),
        (9, "backward.small.per_family"),
        (10, "backward.small.lift"),
        (11, "backward.small.merge"),
        (12, "backward.small.budget"),
        (13, "constants.bs.cubic"),
        (14, "constants.bs.segment"),
        (15, "backward.small.rearrange"),
    ],
    "backward.bwd-slots": [
        *_prose(1, 4),
        (5, "backward.slots.cauchy"),
        (6, "backward.slots.pairs"),
        (7, "prose"),
        (8, "backward.slots.endpoint"),
        (9, "backward.slots.case_x"),
        (10, "backward.slots.case_s"),
        (11, "backward.slots.case_sa"),
        (12, "backward.slots.constant"),
        (13, "prose"),
        (14, "constants.b3.square_term"),
        (15, "backward.slots.sum"),
        (16, "backward.slots.rearrange"),
    ],
}


# BWD-slots-x: BWD-slots' steps with 9, 11, 12 and 16 replaced (docs/bounds/backward-slots.md#bwd-slots-x)
_SLOTS_X_STEPS = {9: "backward.slots.x.case_x", 11: "backward.slots.x.case_sa", 12: "backward.slots.x.constant",
                  16: "backward.slots.x.rearrange"}
BACKWARD_STEPS["backward.bwd-slots-x"] = [(n, _SLOTS_X_STEPS.get(n, c)) for n, c in BACKWARD_STEPS["backward.bwd-slots"]]

# BWD-slots-dv and BWD-slots-dv-x (docs/bounds/backward-slots-dv.md): steps 1–13 shared, then the per-segment constant
# (for T ≥ 10d², or for every T with γ = d³/2), the amortisation over 3Nd slots and the rearrangement.
_DV_STEPS = [*_prose(1, 4), (5, "backward.slots.dv.cauchy"),
             (6, "backward.slots.dv.rows"), (7, "backward.slots.dv.faces"), (8, "prose"),
             (9, "backward.slots.dv.mono"), (10, "backward.slots.dv.reduced"), (11, "backward.slots.dv.face_max"),
             (12, "backward.slots.dv.high_scale"), (13, "backward.slots.dv.high")]
_DV_TAIL = [(15, "prose"), (16, "constants.b3.square_term"), (17, "backward.slots.dv.sum")]
BACKWARD_STEPS["backward.bwd-slots-dv"] = [*_DV_STEPS, (14, "backward.slots.dv.constant"), *_DV_TAIL,
                                           (18, "backward.slots.dv.rearrange")]
BACKWARD_STEPS["backward.bwd-slots-dv-x"] = [*_DV_STEPS, (14, "backward.slots.dv.low_amgm"), (15, "backward.slots.dv.low"),
                                             (16, "backward.slots.dv.constant_x"), (17, "prose"),
                                             (18, "constants.b3.square_term"), (19, "backward.slots.dv.sum"),
                                             (20, "backward.slots.dv.rearrange_x")]

# The lifted count (docs/bounds/backward-lift.md): one derivation, n = 5 or 4 families; only the last step differs.
_LIFT_STEPS = [*_prose(1, 7)] + [
    (8, "constants.bs.pairs"),
    (9, "backward.lift.third"),
    (10, "constants.bs.amgm"),
    (11, "constants.bs.combine"),
    (12, "constants.bs.cubic"),
    (13, "backward.lift.segment"),
]
BACKWARD_STEPS["backward.bwd-five-small"] = [*_LIFT_STEPS, (14, "backward.lift.rearrange.five")]
BACKWARD_STEPS["backward.bwd-four-small"] = [*_LIFT_STEPS, (14, "backward.lift.rearrange.four")]
# the near forms (docs/bounds/backward-lift.md#near): steps 1–9 shared, then the cap and the two cases of the maximum
_NEAR_STEPS = [*_LIFT_STEPS[:9], (10, "backward.lift.third_cap"), (11, "constants.bs.amgm"),
               (12, "backward.lift.near.low"), (13, "backward.lift.near.high"), (14, "backward.lift.near.segment")]
BACKWARD_STEPS["backward.bwd-five-small-near"] = [*_NEAR_STEPS, (15, "backward.lift.near.rearrange.five")]
BACKWARD_STEPS["backward.bwd-four-small-near"] = [*_NEAR_STEPS, (15, "backward.lift.near.rearrange.four")]

# Each word charged once (docs/bounds/backward-once.md): the pure forms (## Proof, steps 1–12) and the cap forms
# (## The cap forms, steps 1–12, the first nine as the pure forms'); n = 5 or 4 families.
for _n in ("five", "four"):
    _once8 = [*_prose(1, 7), (8, "backward.once.root"), (8, f"backward.once.form.{_n}"), (8, f"backward.once.merge.{_n}"),
              (8, f"backward.once.square.{_n}"), (9, "constants.bs.pairs")]
    BACKWARD_STEPS[f"backward.bwd-{_n}-small-once"] = [
        *_once8, (10, "backward.once.third"), (11, f"backward.once.cubic.{_n}"), (11, f"backward.once.segment.{_n}"),
        (12, f"backward.once.rearrange.{_n}")]
    BACKWARD_STEPS[f"backward.bwd-{_n}-small-once-cap"] = [
        *_once8, (10, "backward.once.third_cap"), (11, f"backward.once.cap.cubic.{_n}"),
        (11, f"backward.once.cap.segment.{_n}"), (12, f"backward.once.cap.rearrange.{_n}")]

# The pair-count bounds of workloads (claims in solver/claims/b3p.py and bwd_slots_p.py).
# B3_P (docs/bounds/b3p.md numbers the same steps as b3.md): B3's steps 1–11, then steps 12 and 13 on P and L.
_B3P: Steps = [st for st in CONSTANTS_STEPS["constants.b3"] if st[0] <= 11] + [
    (12, "workloads.b3p.sum"),
    (13, "workloads.b3p.eliminate"),
    (13, "workloads.b3p.rearrange"),
]
# BWD-slots_P and BWD-slots-x_P (docs/bounds/bwd-slots-p.md numbers the steps of backward-slots.md): the machine-checked
# steps of BWD-slots (BWD-slots-x), then steps 15 and 16 on P and L.
_SLOTS_P = ("workloads.bwd-slots.rect", "workloads.bwd-slots.causal")
WORKLOAD_STEPS: dict[str, Steps] = {
    "workloads.b3.rect": _B3P,
    "workloads.b3.causal": _B3P,
    **{b: [(n, c) for n, c in BACKWARD_STEPS["backward.bwd-slots" if b in _SLOTS_P else "backward.bwd-slots-x"] if c != "prose" and n < 15]
       + [(15, "workloads.bwd-slots.sum"),
          (16, "workloads.bwd-slots.rearrange" if b in _SLOTS_P else "workloads.bwd-slots-x.rearrange")]
       for b in (*_SLOTS_P, "workloads.bwd-slots-x.rect", "workloads.bwd-slots-x.causal")},
}

# DIST-QK, the P-processor bound (docs/bounds/distributed.md; claims in solver/claims/distributed.py). Its bound is
# not in bounds.catalog.all_bounds (another machine); bounds.catalog.by_id finds it.
DISTRIBUTED_STEPS: dict[str, Steps] = {
    "distributed.qk-lower": [
        *_prose(1, 3),
        (4, "distributed.lb.amgm"),
        (5, "distributed.lb.endpoint"),
        (6, "distributed.lb.branches.first"),
        (6, "distributed.lb.branches.second"),
        (7, "distributed.lb.share.first"),
        (7, "distributed.lb.share.second"),
        (8, "prose"),
        (9, "distributed.lb.regime"),
    ],
}

PROOF_STEPS: dict[str, Steps] = {**CONSTANTS_STEPS, **BACKWARD_STEPS, **WORKLOAD_STEPS, **DISTRIBUTED_STEPS}


def proof_status(bound_id: str, verdicts: Mapping[str, str] | None = None) -> str:
    """"k of n steps machine-checkable, m prose; p/k proved" for a bound: steps counted by their number (a step
    proved in several links is one step, proved when every link is); ``verdicts``: claim id → status.

    >>> proof_status("constants.b3", {"constants.b3.eliminate": "proved"})
    '7 of 14 steps machine-checkable, 7 prose; 0/7 proved'
    """
    steps = PROOF_STEPS.get(bound_id)
    if not steps:
        return "no step list"
    links: dict[int, list[str]] = {}
    for n, c in steps:
        links.setdefault(n, []).append(c)
    checked = {n: cs for n, cs in links.items() if cs != ["prose"]}
    s = f"{len(checked)} of {len(links)} steps machine-checkable, {len(links) - len(checked)} prose"
    if verdicts is not None:
        proved = sum(all(verdicts.get(c) == "proved" for c in cs) for cs in checked.values())
        s += f"; {proved}/{len(checked)} proved"
    return s
