"""Step and consistency claims of BWD-slots and BWD-slots-x with pair counts (docs/bounds/bwd-slots-p.md; catalog
``workloads.bwd-slots.{rect,causal}``, ``workloads.bwd-slots-x.{rect,causal}``). Derived here, not yet refereed.

The port changes three steps of docs/bounds/backward-slots.md: the slot count of steps 13 and 15 (L dQ and dK slots,
one final write each, in place of 2Nd) and the product count of step 16 (2P·d in place of 2N²d). Steps 1–12 are per
segment and count neither; they are BWD-slots' claims ``backward.slots.*`` (and ``backward.slots.x.*``). The claims
here are over symbols P, L of their own (real, ≥ 0), as B3_P's are (solver/claims/b3p.py): the algebra does
not rely on the rectangular or causal form of P nor on how L splits into dQ and dK slots.

Consistency: every flash2-bwd workload unit count (per-head and grouped, rectangular and causal; d_v = d) is ≥ the
unit's term g·(200/23)·P·d²/M (resp. g·200P·d²·M/(23M² + 80d⁴)), the bound per unit without its non-positive
terms, as the last link of the chain of ``workloads.bwd.chain.sdp.*`` (same hypotheses: R·B ≥ P, B ≤ c,
c(4d + 2) ≤ M, from ``workloads.bwd.rect.blocks.*``, ``workloads.bwd.causal.blocks.*`` and
``workloads.causal.rows.pairs.*``).
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.expr import substitute
from attnio.bounds.symbols import M, Nkv, Nq, d, dv, g, sym
from attnio.bounds.workloads import BWD_SLOTS_CAUSAL, BWD_SLOTS_RECT, BWD_SLOTS_X_CAUSAL, BWD_SLOTS_X_RECT
from attnio.solver.claims.build import PAIR_BASE, Link, chain, claim
from attnio.solver.claims.types import Implication

DOC = "docs/bounds/bwd-slots-p.md"
SLOTS = (BWD_SLOTS_RECT.id, BWD_SLOTS_CAUSAL.id)
SLOTS_X = (BWD_SLOTS_X_RECT.id, BWD_SLOTS_X_CAUSAL.id)
C = Fraction(23, 400)  # BWD-slots' per-segment constant c (claim backward.slots.constant)
COEFF = Fraction(200, 23)  # 1/(2c)
EXTRA = Fraction(4, 5)  # BWD-slots-x's per-segment additive γ·d³ (claim backward.slots.x.constant)

Pp = sym("bsp_P", integer=False, lo=0, doc="unmasked (query, key) pairs whose dQ and dK products the trees contain")
Ls = sym("bsp_L", integer=False, lo=0, doc="dQ and dK output slots, one accumulation tree and one final write each")
S, Z, U, h, Q = (sym(f"bsp_{n}", integer=False, lo=0, doc=doc) for n, doc in (
    ("S", "Σ_t T_t²"), ("Z", "Σ_t n_t, new slots summed over segments"),
    ("U", "Σ_t U_t, partial I/O of the whole computation"), ("h", "number of segments"),
    ("Q", "words moved by the whole computation")))
SUM_BOUND = S <= 4 * M**2 * h + 2 * M * Ls  # step 15 with L slots


def step_claims(coeff: Fraction = COEFF, numerator: int = 200, final_writes: bool = True) -> list[Implication]:
    """Steps 15 and 16 of BWD-slots and step 16 of BWD-slots-x with P pairs and L slots. ``coeff``, ``numerator``
    and ``final_writes`` (step 13's ΣU ≥ L) are for mutants: a larger constant or no final-write count must be
    refuted (tests/test_bwd_slots_p.py)."""
    fw = (U >= Ls,) if final_writes else ()
    return [
        claim("workloads.bwd-slots.sum",
              "step 15 with L slots: S ≤ 4M²h + 5M(Σn − ΣU) + 2M·ΣU (step 14 summed), "
             "Σn − ΣU ≤ L/2 − ΣU/2 and ΣU ≥ L (step 13: one final write per slot) ⇒ S ≤ 4M²h + 2M·L",
             (*PAIR_BASE, S <= 4 * M**2 * h + 5 * M * (Z - U) + 2 * M * U, Z - U <= Ls / 2 - U / 2, *fw),
              SUM_BOUND, f"{DOC}#proof", label="BWD-slots_P", about=SLOTS + SLOTS_X),
        claim("workloads.bwd-slots.rearrange",
              f"step 16 with P pairs: 2P·d ≤ (23/400)·S/d, S ≤ 4M²h + 2M·L and Q ≥ M(h − 1) "
             f"⇒ Q ≥ ({coeff})·P·d²/M − L/2 − M",
             (*PAIR_BASE, 2 * Pp * d <= C * S / d, SUM_BOUND, Q >= M * (h - 1)),
              Q >= coeff * Pp * d**2 / M - Ls / 2 - M, f"{DOC}#proof", label="BWD-slots_P", about=SLOTS),
        claim("workloads.bwd-slots-x.rearrange",
              f"step 16 with P pairs: 2P·d ≤ (23/400)·S/d + (4/5)d³h, S ≤ 4M²h + 2M·L and "
             f"Q ≥ M(h − 1) ⇒ Q ≥ M({numerator}P·d² − (23/2)·M·L)/(23M² + 80d⁴) − M",
             (*PAIR_BASE, 2 * Pp * d <= C * S / d + EXTRA * d**3 * h, SUM_BOUND, Q >= M * (h - 1)),
             Q >= M * (numerator * Pp * d**2 - Fraction(23, 2) * M * Ls) / (23 * M**2 + 80 * d**4) - M,
              f"{DOC}#bwd-slots-x_p", label="BWD-slots-x_P", about=SLOTS_X),
    ]


def consistency_claims(with_block_budget: bool = True) -> list[Implication]:
    """flash2-bwd's unit count (d_v = d; per-head and grouped, rectangular and causal: the unit in R of
    solver/claims/workloads.py) ≥ the per-unit term of each slot bound. ``with_block_budget=False`` drops
    c(4d + 2) ≤ M (a mutant that must be refuted)."""
    from attnio.solver.claims.workloads import _bwd_unit

    R = sym("wl_R", integer=False, lo=0, doc="query rows one head visits over all K/V blocks")
    B = sym("wl_B", doc="query positions per Q block (B_r)")
    Cs = sym("wl_c", doc="K/V rows a block may hold (the block rule's c)")
    P = sym("wl_P", integer=False, lo=0, doc="required (query, key) pairs of a workload")
    base = (Nq >= 1, Nkv >= 1, d >= 1, M >= 1, g >= 1)
    budget = (Cs * (4 * d + 2) <= M,) if with_block_budget else ()
    hyps = (*base, R >= 0, B >= 1, P >= 0, R * B >= P, B <= Cs, *budget)
    out = []
    for sched in ("grouped", "per-head"):
        unit = substitute(_bwd_unit(sched, R), {dv: d})
        out += [
            Link(f"workloads.bwd.chain.slots.{sched}",
                 f"Link (flash2-bwd {sched}, d_v = d): R visited rows per head with R·B ≥ P, B ≤ c and c(4d + 2) ≤ M "
                 "give unit·M ≥ g·(200/23)·P·d² (the unit's R(4d + 2) Q/dO/dQ/L/D words per head reach 16P·d²/M): "
                 "BWD-slots_P per unit without −L/2 − M; with workloads.bwd.{rect,causal}.blocks.* and "
                 "workloads.causal.rows.pairs.* the formula's count.",
                 hyps, unit * M >= g * COEFF * P * d**2, SLOTS),
            Link(f"workloads.bwd.chain.slots-x.{sched}",
                 f"Link (flash2-bwd {sched}, d_v = d): as workloads.bwd.chain.slots.{sched}, "
                 "unit·(23M² + 80d⁴) ≥ g·200P·d²·M: BWD-slots-x_P per unit without its non-positive terms.",
                 hyps, unit * (23 * M**2 + 80 * d**4) >= g * 200 * P * d**2 * M, SLOTS_X),
        ]
    return chain(out, f"{DOC}#consistency")


CLAIMS: list[Implication] = step_claims() + consistency_claims()
