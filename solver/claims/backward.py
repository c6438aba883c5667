"""z3 claims about the backward pass (ids ``backward.*``): the algebraic steps of the derived backward lower
bounds (docs/bounds/backward.md), every backward lower bound ≤ every backward exact cost, the regime crossover
of the exact backward costs (and of their leading terms), the tightest constant of each backward schedule, and a
training step (forward +
backward of the best schedules) against the sum of the bounds.

Built from :data:`attnio.bounds.costs.BACKWARD_FORMULAS` and :data:`attnio.bounds.backward.BOUNDS` (d_v = d).
The consistency claims are two-link chains, as for the forward (solver/claims/constants.py): per bound,
``bound ≤ 4N²d²/M`` where M ≥ 8d² and ``bound ≤ N²/2`` where M ≤ 8d²; per schedule, ``4N²d²/M ≤ cost`` where
M ≥ 8d² and ``N²/2 ≤ cost`` where M ≤ 8d². Together: bound ≤ cost wherever the schedule runs. Each claim lists a
witness point (:data:`WITNESSES`) where its hypotheses hold, so no regime is vacuous (tests/test_backward_claims.py).

>>> sorted({c.id.split(".")[1] for c in CLAIMS})[:4]
['consistency', 'crossover', 'dp', 'lift']
"""

from __future__ import annotations

import dataclasses
from fractions import Fraction
from typing import Any

from attnio.bounds.expr import Expr, eq, maximum, minimum, sqrt
from attnio.bounds.symbols import M, N, d, nonneg_real
from attnio.solver.claims.build import (
    BASE,
    Link,
    chain,
    claims_for,
    leading_crossover,
    links,
    nonneg_reals,
    relax,
    sq,
    tight_claims,
    to_cost,
)
from attnio.solver.claims.tight import SPECS
from attnio.solver.claims.types import Claim, Crossover, Implication, Tightest

DOC = "docs/bounds/backward.md"
UNIT = N**2 * d**2 / M


# auxiliary real symbols of the proofs (prefixed: they clash with nothing else)
x, B, I_rows, J_cols, h, Q, c = nonneg_reals("bwd", {
    "x": "type-2 pairs charged in a segment",
    "B": "segment budget M + R",
    "I": "|I_t|: rows whose whole Q row and dO row are available",
    "J": "|J_t|: rows whose whole K row and V row are available",
    "h": "number of segments",
    "Q": "words moved by the whole computation",
    "c": "R/M",
})

# auxiliary real symbols of the small-cache proofs (docs/bounds/backward-small.md): S for the S-tree family, P for
# the dP-tree family
SMALL_DOC = "docs/bounds/backward-small.md"
xS, xP, sS, sP, CS, CP, oS, oP, rd, wr, Rs, YS, YP, FS, FP, fa, fb, Yf, Ff, Kb, kap, lam, G, hs, Qs = nonneg_reals("bwds", {
    "xS": "type-2 S-pairs in a segment",
    "xP": "type-2 dP-pairs in a segment",
    "sS": "Q and K words available in a segment (red at its start or read in it)",
    "sP": "dO and V words available in a segment",
    "CS": "complete S-pairs in a segment",
    "CP": "complete dP-pairs in a segment",
    "oS": "open S-pairs in a segment",
    "oP": "open dP-pairs in a segment",
    "reads": "reads in a segment",
    "writes": "writes in a segment",
    "R": "I/Os per segment",
    "YS": "S-tree products whose useful instance lies in a segment",
    "YP": "dP-tree products whose useful instance lies in a segment",
    "FS": "the pair face of the S family in a segment",
    "FP": "the pair face of the dP family in a segment",
    "a": "an input face: available Q (or dO) words; or s, the available input words of a family",
    "b": "one family's second input face (available K, or V, words)",
    "Y": "products in a segment (one family, or both)",
    "F": "one family's pair face in a segment",
    "K": "the pair-face budget 2M + R",
    "kappa": "κ = 1 − (M + R)/(4d²) (≥ 0 where it is used)",
    "lambda": "λ = (M + R)/(4d²), so κ = 1 − λ",
    "G": "the shared pair face F_S + F_P of a segment",
    "h": "number of segments",
    "Q": "words moved by the whole computation",
})


def step_claims() -> list[Implication]:
    dp = claims_for("backward.dp", DOC + "#bwd-dp", label="BWD-dP", about=("backward.bwd-dp",))
    sdp = claims_for("backward.sdp", DOC, label="BWD-SdP", about=("backward.bwd-sdp",))
    return [
        dp("segment_max", "with R = M (B = 2M): ((2M − x)/(2d))² + x ≤ max(M²/d², 2M) for every x ∈ [0, 2M]",
           (*BASE, x <= 2 * M), sq((2 * M - x) / (2 * d)) + x <= maximum(M**2 / d**2, 2 * M)),
        dp("rearrange", "N² dP-roots ≤ h·max(M²/d², 2M) and Q ≥ M(h − 1) ⇒ Q ≥ min(N²d²/M, N²/2) − M",
           (*BASE, N**2 <= h * maximum(M**2 / d**2, 2 * M), Q >= M * (h - 1)),
           Q >= minimum(N**2 * d**2 / M, N**2 / 2) - M),
        dp("leading", "for M ≥ 2d², min(N²d²/M, N²/2) = N²d²/M (B1's form)", (*BASE, M >= 2 * d**2),
           minimum(N**2 * d**2 / M, N**2 / 2) >= N**2 * d**2 / M, kind="branch"),
        sdp("amgm", "AM–GM: 2d|I| + 2d|J| ≤ B − x ⇒ |I|·|J| ≤ ((B − x)/(4d))² (type-1 pairs in a segment)",
            (d >= 1, x <= B, 2 * d * I_rows + 2 * d * J_cols <= B - x),
            I_rows * J_cols <= sq((B - x) / (4 * d)), doc=DOC + "#step-4"),
        sdp("endpoint", "convexity in x: ((B − x)/(4d))² + x ≤ max(B²/(16d²), B) for x ∈ [0, B]",
            (d >= 1, x <= B), sq((B - x) / (4 * d)) + x <= maximum(sq(B) / (16 * d**2), B), doc=DOC + "#step-5"),
        sdp("segment_max",
            "with R = M (B = 2M): ((2M − x)/(4d))² + x ≤ max(M²/(4d²), 2M) for every x ∈ [0, 2M]",
            (*BASE, x <= 2 * M), sq((2 * M - x) / (4 * d)) + x <= maximum(M**2 / (4 * d**2), 2 * M),
            doc=DOC + "#step-6"),
        sdp("rearrange", "N² pairs ≤ h·max(M²/(4d²), 2M) and Q ≥ M(h − 1) ⇒ Q ≥ min(4N²d²/M, N²/2) − M",
            (*BASE, N**2 <= h * maximum(M**2 / (4 * d**2), 2 * M), Q >= M * (h - 1)),
            Q >= minimum(4 * N**2 * d**2 / M, N**2 / 2) - M, doc=DOC + "#step-7"),
        sdp("best_R", "with R = cM the leading constant 16c/(1 + c)² ≤ 4: R = M is the best choice", (c > 0,),
            16 * c / sq(1 + c) <= 4, doc=DOC + "#step-8"),
        sdp("leading", "for M ≥ 8d², min(4N²d²/M, N²/2) = 4N²d²/M", (*BASE, M >= 8 * d**2),
            minimum(4 * N**2 * d**2 / M, N**2 / 2) >= 4 * N**2 * d**2 / M, doc=DOC + "#step-9", kind="branch"),
    ]


# auxiliary real symbols of BWD-slots (docs/bounds/backward-slots.md): one segment's faces and the sums over segments
SLOTS_DOC = "docs/bounds/backward-slots.md"
(qYQ, qYK, qp, qaQ, qaK, qbQ, qbK, qm, qn, qs, qsig, qa, qx, qbeta, qT, qY, qSq, qZ, qU, qh, qQ) = nonneg_reals("bwdq", {
    "YQ": "dQ products whose useful instance lies in a segment",
    "YK": "dK products whose useful instance lies in a segment",
    "p": "the pair face |I_t||J_t| + x_t of a segment",
    "aQ": "the K face of the dQ products (available K words)",
    "aK": "the Q face of the dK products (available Q words)",
    "bQ": "dQ slots touched in a segment",
    "bK": "dK slots touched in a segment",
    "m": "|I_t|",
    "n": "|J_t|",
    "s": "s = d(|I_t| + |J_t|), the words of one of Q, dO (K, V) in the rows of I_t (J_t)",
    "sigma": "the upper end of an interval of s",
    "a": "a = s + k: the available Q and K words",
    "x": "type-2 pairs of a segment",
    "beta": "dQ and dK slots touched in a segment",
    "T": "T_t = M + R + z_t, a segment's budget",
    "Y": "dQ and dK products whose useful instance lies in a segment",
    "S": "Σ_t T_t²",
    "Z": "Σ_t n_t, new slots summed over segments",
    "U": "Σ_t U_t, partial I/O (dQ and dK partials) of the whole computation",
    "h": "number of segments",
    "Q": "words moved by the whole computation",
})
SLOTS_C = Fraction(23, 400)  # c with c² = 529/160000 ≥ 27/8192
SLOTS_COEFF = Fraction(200, 23)  # 1/(2c): the leading constant of BWD-slots


def slots_step_claims(coeff: Fraction = SLOTS_COEFF) -> list[Implication]:
    """The algebraic steps of BWD-slots. ``coeff`` is the leading constant of the last step (a larger one is a
    mutant that must be refuted, tests/test_backward_claims.py)."""
    about = ("backward.bwd-slots",)
    doc = SLOTS_DOC + "#proof"

    imp = claims_for("backward.slots", doc, label="BWD-slots", about=about)

    return [
        imp("cauchy", "Cauchy–Schwarz: Y_Q² ≤ p·a_Q·b_Q and Y_K² ≤ p·a_K·b_K ⇒ (Y_Q + Y_K)² ≤ p(a_Q + a_K)(b_Q + b_K)",
            (qYQ * qYQ <= qp * qaQ * qbQ, qYK * qYK <= qp * qaK * qbK),
            sq(qYQ + qYK) <= qp * (qaQ + qaK) * (qbQ + qbK)),
        imp("pairs", "s ≥ d(m + n) ⇒ m·n ≤ s²/(4d²) (|I_t||J_t| against the words of the rows)",
            (d >= 1, qs >= d * (qm + qn)), qm * qn <= sq(qs) / (4 * d**2)),
        imp("endpoint", "s − s²/(4d²) is concave: 0 ≤ s ≤ σ ⇒ s − s²/(4d²) ≥ min(0, σ − σ²/(4d²))",
            (d >= 1, qs <= qsig), qs - sq(qs) / (4 * d**2) >= minimum(0, qsig - sq(qsig) / (4 * d**2))),
        imp("case_x", "case s = 0: T ≥ 12d², x + a + β ≤ T ⇒ x·a·β ≤ 27T⁴/(8192d²)",
            (d >= 1, qT >= 12 * d**2, qx + qa + qbeta <= qT), 8192 * d**2 * qx * qa * qbeta <= 27 * qT**4),
        imp("case_s", "case x = 0: s ≤ a, s + a + β ≤ T ⇒ (s²/(4d²))·a·β ≤ 27T⁴/(8192d²)",
            (qs <= qa, qs + qa + qbeta <= qT), 2048 * qs * qs * qa * qbeta <= 27 * qT**4),
        imp("case_sa", "case s = a: T ≥ 12d², 2a + x + β ≤ T ⇒ (a²/(4d²) + x)·a·β ≤ 27T⁴/(8192d²)",
            (d >= 1, qT >= 12 * d**2, 2 * qa + qx + qbeta <= qT),
            2048 * (qa * qa + 4 * d**2 * qx) * qa * qbeta <= 27 * qT**4),
        imp("constant", "Y² ≤ 27T⁴/(8192d²) ⇒ Y ≤ (23/400)·T²/d (23²·8192 ≥ 27·400²)",
            (d >= 1, 8192 * d**2 * qY * qY <= 27 * qT**4), qY <= SLOTS_C * qT**2 / d),
        imp("sum", "Σ_t of B3's square expansion with R = M, f = 0: S ≤ 4M²h + 5M·(Σn − ΣU) + 2M·ΣU, "
            "Σn − ΣU ≤ Nd − ΣU/2 and ΣU ≥ 2Nd ⇒ S ≤ 4M²h + 4NMd",
            (*BASE, qSq <= 4 * M**2 * qh + 5 * M * (qZ - qU) + 2 * M * qU, qZ - qU <= N * d - qU / 2,
             qU >= 2 * N * d),
            qSq <= 4 * M**2 * qh + 4 * N * M * d),
        imp("rearrange", f"2N²d ≤ (23/400)·S/d, S ≤ 4M²h + 4NMd and Q ≥ M(h − 1) ⇒ Q ≥ ({coeff})·N²d²/M − Nd − M",
            (*BASE, 2 * N**2 * d <= SLOTS_C * qSq / d, qSq <= 4 * M**2 * qh + 4 * N * M * d, qQ >= M * (qh - 1)),
            qQ >= coeff * N**2 * d**2 / M - N * d - M),
    ]


SLOTS_X_EXTRA = Fraction(4, 5)  # γ: (T/3)^{3/2} − (23/400)T²/d ≤ γd³ for every T (its maximum, at T = 1/(48c²)·d², is ≈ 0.76d³)


def slots_x_step_claims(numerator: int = 200, extra: Fraction = SLOTS_X_EXTRA) -> list[Implication]:
    """The steps of BWD-slots-x that differ from BWD-slots (9, 11, 12, 16). ``numerator`` (200 in 200/23) and
    ``extra`` (γ = 4/5) are the constants; a larger numerator or a smaller γ is a mutant that must be refuted."""
    about = ("backward.bwd-slots-x",)
    doc = SLOTS_DOC + "#bwd-slots-x"
    cap = maximum(27 * qT**4, Fraction(8192, 27) * d**2 * qT**3)  # 8192d² · max(27T⁴/(8192d²), T³/27)

    imp = claims_for("backward.slots.x", doc, label="BWD-slots-x", about=about)

    return [
        imp("case_x", "case s = 0, any T: x + a + β ≤ T ⇒ x·a·β ≤ T³/27", (qx + qa + qbeta <= qT,),
            27 * qx * qa * qbeta <= qT**3),
        imp("case_sa", "case s = a, any T: 2a + x + β ≤ T ⇒ (a²/(4d²) + x)·a·β ≤ max(27T⁴/(8192d²), T³/27)",
            (d >= 1, 2 * qa + qx + qbeta <= qT), 2048 * (qa * qa + 4 * d**2 * qx) * qa * qbeta <= cap),
        imp("constant", f"Y² ≤ max(27T⁴/(8192d²), T³/27) ⇒ Y ≤ (23/400)·T²/d + ({extra})·d³",
            (d >= 1, 8192 * d**2 * qY * qY <= cap), qY <= SLOTS_C * qT**2 / d + extra * d**3),
        imp("rearrange", f"2N²d ≤ (23/400)·S/d + (4/5)d³h, S ≤ 4M²h + 4NMd and Q ≥ M(h − 1) ⇒ "
            f"Q ≥ M({numerator}N²d² − 23NMd)/(23M² + 80d⁴) − M",
            (*BASE, 2 * N**2 * d <= SLOTS_C * qSq / d + SLOTS_X_EXTRA * d**3 * qh,
             qSq <= 4 * M**2 * qh + 4 * N * M * d, qQ >= M * (qh - 1)),
            qQ >= M * (numerator * N**2 * d**2 - 23 * N * M * d) / (23 * M**2 + 80 * d**4) - M),
    ]


# Two-pass schedules whose second link 9N²d²/M ≤ cost goes pass by pass (the direct form, through two ceilings of
# floors, took z3 about a minute and cvc5 did not re-prove it): T_c·M ≥ 4Nd (pass 1's K/V blocks), T_r2·M ≥ 3Nd
# (pass 2's Q blocks), cost = 2Nd·T_c + 2Nd·T_r2 + 9Nd + 3N + 2N·T_c (Q, dO per K/V block; K, V per Q block), then
# backward.slots.two_pass_sum: 2Nd(4Nd/M) + 2Nd(3Nd/M) = 14N²d²/M ≥ 9N²d²/M.
SLOTS_BY_PASS: frozenset[str] = frozenset({"flash2-2pass-bwd"})
_t1 = nonneg_real("bwd2p_t1", "pass 1's number of K/V blocks T_c")
_t2 = nonneg_real("bwd2p_t2", "pass 2's number of Q blocks T_r2")
_io2 = nonneg_real("bwd2p_io", "a two-pass schedule's words moved")


def _slots_links_by_pass(name: str, f: Any, b: Any, tag: str, low: Any) -> list[Link]:
    """The second link of ``b`` ≤ cost(``name``) in three pieces, each about the exact formula."""
    T_c, T_r2 = f.blocks["T_c"], f.blocks["T_r2"]
    pre = f"backward.slots{tag}.consistency.{name}"
    return [
        to_cost(f"{pre}.pass1", name, f, 0, f"T_c·M ≥ 4Nd where {low} ({name}'s pass 1: c ≤ (M − 2d − 2)/(4d + 2); d_v = d)",
                base=(*BASE, *b.regime), covers=(b.id,), goal=4 * N * d <= T_c * M),
        to_cost(f"{pre}.pass2", name, f, 0, f"T_r2·M ≥ 3Nd where {low} ({name}'s pass 2: a ≤ (M − 2d)/(3d + 4); d_v = d)",
                base=(*BASE, *b.regime), covers=(b.id,), goal=3 * N * d <= T_r2 * M),
    ]


# Schedules whose second link k·N²d²/M ≤ cost (k = 9 for BWD-slots[-x], 11 for BWD-slots-dv[-x]) goes through their K/V
# blocks (the direct form, through the ceiling of a floor and a minimum, ran past z3's 300 s guard or cvc5's at
# M ≥ 4d²): T_c·M ≥ 4Nd (c ≤ (M − 3d − 2)/(4d + 2), T_c·c ≥ N), cost ≥ 4Nd·T_c + 4Nd, then the sum:
# 4Nd(4Nd/M) + 4Nd ≥ 16N²d²/M ≥ k·N²d²/M.
BY_BLOCKS: frozenset[str] = frozenset({"flash2-fused-bwd"})


def _links_by_blocks(name: str, f: Any, b: Any, pre: str, low: Any, k: int) -> list[Link]:
    """The second link of ``b`` ≤ cost(``name``) in three pieces: two facts of the exact formula, one sum."""
    T_c = f.blocks["T_c"]
    return [
        to_cost(f"{pre}.consistency.{name}.blocks", name, f, 0,
                f"T_c·M ≥ 4Nd where {low} ({name}: c ≤ (M − 3d − 2)/(4d + 2) K/V rows, T_c = ⌈N/c⌉; d_v = d)",
                base=(*BASE, *b.regime), covers=(b.id,), goal=4 * N * d <= T_c * M),
        to_cost(f"{pre}.consistency.{name}.io", name, f, 0,
                f"exact cost of {name} ≥ 4Nd·T_c + 4Nd where {low} (Q, dO, L and dQ, D per K/V block; O, K, V, dK, "
                "dV once; d_v = d)",
                base=(*BASE, *b.regime), covers=(b.id,), goal=4 * N * d * T_c + 4 * N * d <= f.io),
        Link(f"{pre}.consistency.{name}.sum",
             f"T_c·M ≥ 4Nd and io ≥ 4Nd·T_c + 4Nd (T_c ≥ 0) ⇒ io ≥ {k}N²d²/M (the last step of {name}'s second "
             f"link of {b.id})",
             (*BASE, _t1 * M >= 4 * N * d, _io2 >= 4 * N * d * _t1 + 4 * N * d), k * UNIT <= _io2, (b.id,)),
    ]


def _slots_io_by_pass(name: str, f: Any) -> Link:
    """cost(``name``) ≥ 2Nd·T_c + 2Nd·T_r2 wherever it runs (the regime of neither bound needed)."""
    from attnio.bounds.backward import BWD_SLOTS, BWD_SLOTS_X

    T_c, T_r2 = f.blocks["T_c"], f.blocks["T_r2"]
    rest = 9 * N * d + 3 * N + T_c * 2 * N  # the D pass, K, V, dK, dV, dQ once; Q, dO, L, D once; L, D per K/V block
    return to_cost(
        f"backward.slots.consistency.{name}.io", name, f, 0,
        f"exact cost of {name} = 2Nd·T_c + 2Nd·T_r2 + 9Nd + 3N + 2N·T_c wherever it runs, so ≥ 2Nd·T_c + 2Nd·T_r2 "
        "(with .pass1, .pass2 and backward.slots.two_pass_sum: 9N²d²/M ≤ it, the second link of BWD-slots and "
        "BWD-slots-x; d_v = d)",
        covers=(BWD_SLOTS.id, BWD_SLOTS_X.id), goal=eq(f.io, 2 * N * d * T_c + 2 * N * d * T_r2 + rest))


def slots_consistency_claims() -> list[Implication]:
    """BWD-slots (M ≥ 12d²) and BWD-slots-x (M ≥ 4d²) ≤ the exact cost of every backward schedule they cover, where
    the schedule runs, each as a two-link chain through 9N²d²/M (the direct form, through the schedules' floors,
    ran past z3's guard)."""
    from attnio.bounds.backward import BWD_SLOTS, BWD_SLOTS_X, COVERS

    out: list[Link] = []
    for b, tag in ((BWD_SLOTS, ""), (BWD_SLOTS_X, ".x")):
        low = b.regime[0]  # M ≥ 12d² or M ≥ 4d²
        out.append(relax(f"backward.slots{tag}.relax", b, 9 * UNIT,
                         f"{b.id} ≤ 9N²d²/M where {low} (first link of {b.id} ≤ every covered exact cost)"))
        for name, f in _formulas().items():
            if name not in COVERS[b.id]:
                continue
            if name in SLOTS_BY_PASS:
                out += _slots_links_by_pass(name, f, b, tag, low)
                continue
            if name in BY_BLOCKS:
                out += _links_by_blocks(name, f, b, f"backward.slots{tag}", low, 9)
                continue
            out.append(to_cost(f"backward.slots{tag}.consistency.{name}", name, f, 9 * UNIT,
                               f"9N²d²/M ≤ exact cost of {name} where {low} (second link, with backward.slots{tag}.relax; "
                               "d_v = d)", base=(*BASE, *b.regime), covers=(b.id,)))
    out += [_slots_io_by_pass(name, f) for name, f in _formulas().items() if name in SLOTS_BY_PASS]
    out.append(
        Link("backward.slots.two_pass_sum",
             "T_c·M ≥ 4Nd, T_r2·M ≥ 3Nd and io = 2Nd·T_c + 2Nd·T_r2 + 9Nd + 3N + 2N·T_c (T_c, T_r2 ≥ 0) ⇒ "
             "io ≥ 9N²d²/M (the last step of the pass-by-pass second link of BWD-slots and BWD-slots-x for the two-pass "
             "backward)",
             (*BASE, _t1 * M >= 4 * N * d, _t2 * M >= 3 * N * d,
              eq(_io2, 2 * N * d * _t1 + 2 * N * d * _t2 + 9 * N * d + 3 * N + 2 * N * _t1)),
             9 * UNIT <= _io2, (BWD_SLOTS.id, BWD_SLOTS_X.id))
    )
    return chain(out, SLOTS_DOC + "#consistency")

def small_cache_step_claims() -> list[Implication]:
    """The algebraic steps of BWD-SdP-small (docs/bounds/backward-small.md) that are not BS's own
    (BS's claims ``constants.bs.*`` serve for BWD-dP-small and for the steps the two share). Split into small
    monotone links so that cvc5 re-proves each at once."""
    imp = claims_for("backward.small", SMALL_DOC, label="BWD-SdP-small", about=("backward.bwd-sdp-small",))
    return [
        imp("faces",
            "shared pair-face budget: s_S + s_P + x_S + x_P ≤ M + r, o_S + o_P ≤ M + w, r + w ≤ R, "
            "C_S ≤ λs_S, C_P ≤ λs_P ⇒ (x_S + C_S + o_S) + (x_P + C_P + o_P) ≤ (2M + R) − (1 − λ)(s_S + s_P) "
            "(λ = (M + R)/(4d²), κ = 1 − λ)",
            (M >= 1, sS + sP + xS + xP <= M + rd, oS + oP <= M + wr, rd + wr <= Rs, CS <= lam * sS, CP <= lam * sP),
            (xS + CS + oS) + (xP + CP + oP) <= 2 * M + Rs - (1 - lam) * (sS + sP), doc=SMALL_DOC + "#step-8"),
        imp("per_family", "one family: Loomis–Whitney Y² ≤ a·b·F and AM–GM ⇒ 4Y² ≤ (a + b)²·F (a, b, F ≥ 0)",
            (sq(Yf) <= fa * fb * Ff,), 4 * sq(Yf) <= sq(fa + fb) * Ff, doc=SMALL_DOC + "#step-9"),
        imp("lift", "one family's face into the shared one: 4Y² ≤ s²F and F ≤ G ⇒ 4Y² ≤ s²G",
            (4 * sq(Yf) <= sq(fa) * Ff, Ff <= G), 4 * sq(Yf) <= sq(fa) * G, doc=SMALL_DOC + "#step-10"),
        imp("merge",
            "two families on one face: 4Y_S² ≤ s_S²G and 4Y_P² ≤ s_P²G ⇒ 4(Y_S + Y_P)² ≤ (s_S + s_P)²G "
            "(Y_S·Y_P ≤ s_S·s_P·G/4)", (4 * sq(YS) <= sq(sS) * G, 4 * sq(YP) <= sq(sP) * G),
            4 * sq(YS + YP) <= sq(sS + sP) * G, doc=SMALL_DOC + "#step-11"),
        imp("budget",
            "the shared face's budget: 4Y² ≤ s²G and G ≤ K − κs ⇒ Y² ≤ (s²/4)(K − κs) (BS's form, "
            "for constants.bs.cubic)", (4 * sq(Yf) <= sq(fa) * G, G <= Kb - kap * fa),
            sq(Yf) <= sq(fa) / 4 * (Kb - kap * fa), doc=SMALL_DOC + "#step-12"),
        imp("rearrange",
            "2N²d products: κ·2N²d ≤ h·(54/25)·M√M and Q ≥ 3M(h − 1) ⇒ "
            "Q ≥ (25/9)(1 − M/d²)·N²d/√M − 3M (κ = 1 − M/d², M ≤ d²)",
            (*BASE, M <= d**2, (1 - M / d**2) * 2 * N**2 * d <= hs * Fraction(54, 25) * M * sqrt(M),
             Qs >= 3 * M * (hs - 1)),
            Qs >= Fraction(25, 9) * (1 - M / d**2) * N**2 * d / sqrt(M) - 3 * M, doc=SMALL_DOC + "#step-15"),
    ]


# auxiliary real symbols of the lifted count (docs/bounds/backward-lift.md)
LIFT_DOC = "docs/bounds/backward-lift.md"
lA, lx, ly, lo1, lo2, lC, ls, lY = nonneg_reals("bwdl", {
    "A": "input words (Q, K, dO, V) available in a segment (red at its start or read in it)",
    "x": "type-2 pairs in a segment",
    "y": "type-2 slots (dQ, dK, dV accumulation trees) in a segment",
    "o1": "open pairs in a segment",
    "o2": "open slots in a segment",
    "C": "complete pairs in a segment (in I^S×J^S or I^P×J^P)",
    "s": "F₁ + F₂: the two non-pair faces of the lifted set (≤ 2A + y + o₂)",
    "Y": "products of all families whose useful instance lies in a segment (|Z_t|)",
})
# the budgets of a segment shared by the lifted count (steps 5–8 of docs/bounds/backward-lift.md) and the
# charged-once count (steps 4–6 of docs/bounds/backward-once.md): reads and writes, complete pairs and available words
_SEGMENT_BUDGETS = (
    M >= 1,
    lA + lx + ly <= M + rd,
    lo1 + lo2 <= M + wr,
    rd + wr <= Rs,
    lC <= CS + CP,
    CS <= lam * sS,
    CP <= lam * sP,
    sS + sP <= lA,
)
# the lifted count's segment (steps 5–8 of docs/bounds/backward-lift.md), shared by steps 9 and 10
_LIFT_FACE = (*_SEGMENT_BUDGETS, ls <= 2 * lA + ly + lo2)
LIFT_FAMILIES = {"five": 5, "four": 4}  # BWD-five-small (S, dP, dV, dQ, dK), BWD-four-small (dP, dV, dQ, dK)


def lift_step_claims(coeffs: dict[str, Fraction] | None = None) -> list[Implication]:
    """The algebraic steps of BWD-five-small and BWD-four-small that are not BS's own (docs/bounds/backward-lift.md):
    the shared pair face with the doubled input faces (κ/2), the per-segment maximum and the rearrangement over
    5N²d (4N²d) products. ``coeffs`` (name → leading coefficient) default to 125/36 and 25/9; a larger one is a
    mutant that must be refuted."""
    coeffs = coeffs or {"five": Fraction(125, 36), "four": Fraction(25, 9)}
    kappa2 = (1 - M / d**2) / 2
    out = [
        Implication(
            "backward.lift.third",
            "derivation",
            "[BWD-five/four-small] shared pair face: A + x + y ≤ M + r, o₁ + o₂ ≤ M + w, r + w ≤ R, "
            "C ≤ C_S + C_P, C_S ≤ λs_S, C_P ≤ λs_P, s_S + s_P ≤ A, s ≤ 2A + y + o₂, 0 ≤ λ ≤ 1 "
            "⇒ x + C + o₁ ≤ (2M + R) − ((1 − λ)/2)·s",
            (*_LIFT_FACE, lam <= 1),
            lx + lC + lo1 <= 2 * M + Rs - (1 - lam) / 2 * ls,
            provenance=LIFT_DOC + "#step-9",
            about=("backward.bwd-five-small", "backward.bwd-four-small"),
        ),
        Implication(
            "backward.lift.segment",
            "derivation",
            "[BWD-five/four-small] R = 3M (K = 5M, κ/2 = (1 − M/d²)/2), M ≤ d²: 27(κ/2)²Y² ≤ (5M)³ "
            "⇒ (κ/2)·Y ≤ (54/25)·M√M",
            (*BASE, M <= d**2, 27 * sq(kappa2) * sq(lY) <= (5 * M) ** 3),
            kappa2 * lY <= Fraction(54, 25) * M * sqrt(M),
            provenance=LIFT_DOC + "#step-13",
            about=("backward.bwd-five-small", "backward.bwd-four-small"),
        ),
    ]
    for name, n in LIFT_FAMILIES.items():
        out.append(
            Implication(
                f"backward.lift.rearrange.{name}",
                "derivation",
                f"[BWD-{name}-small] {n}N²d products: (κ/2)·{n}N²d ≤ h·(54/25)·M√M and Q ≥ 3M(h − 1) ⇒ "
                f"Q ≥ ({coeffs[name]})(1 − M/d²)·N²d/√M − 3M (κ = 1 − M/d², M ≤ d²)",
                (
                    *BASE,
                    M <= d**2,
                    kappa2 * n * N**2 * d <= hs * Fraction(54, 25) * M * sqrt(M),
                    Qs >= 3 * M * (hs - 1),
                ),
                Qs >= coeffs[name] * (1 - M / d**2) * N**2 * d / sqrt(M) - 3 * M,
                provenance=LIFT_DOC + "#step-14",
                about=(f"backward.bwd-{name}-small",),
            )
        )
    return out


def near_step_claims(coeffs: dict[str, Fraction] | None = None) -> list[Implication]:
    """The steps of BWD-five-small-near and BWD-four-small-near (docs/bounds/backward-lift.md#near) beyond the lift's:
    the pair face with the cap A ≤ M + R, the two cases of the maximum over s (d²/6 ≤ M ≤ 3d²/4), the segment and
    the rearrangement. ``coeffs`` default to 15/4 and 3 (= 3n/4); a larger one is a mutant that must be refuted."""
    coeffs = coeffs or {"five": Fraction(15, 4), "four": Fraction(3)}
    mu = M / d**2
    near = (*BASE, d**2 <= 6 * M, 4 * M <= 3 * d**2)
    cap = 16 * M**3 * (1 + 4 * mu)  # the per-segment maximum of Y², at s = 8M
    ids = ("backward.bwd-five-small-near", "backward.bwd-four-small-near")
    cases = (
        ("low", "s ≤ 8M: Y² ≤ (s²/4)T, T ≤ 5M − ((1 − M/d²)/2)s (step 9) ⇒ Y² ≤ 16M³(1 + 4M/d²) (increasing in s "
         "up to 20M/(3κ) ≥ 8M as M ≥ d²/6)", ls <= 8 * M, lC <= 5 * M - (1 - mu) / 2 * ls),
        ("high", "s ≥ 8M: Y² ≤ (s²/4)T, T ≤ (9 + 4M/d²)M − s (step 10) ⇒ Y² ≤ 16M³(1 + 4M/d²) (decreasing in s from "
         "(2/3)(9 + 4M/d²)M ≤ 8M as M ≤ 3d²/4)", ls >= 8 * M, lC <= (9 + 4 * mu) * M - ls),
    )
    out = [
        Implication(
            "backward.lift.third_cap",
            "derivation",
            "[BWD-five/four-small-near] pair face with the cap: the hypotheses of backward.lift.third ⇒ "
            "x + C + o₁ ≤ (2M + R) + (1 + λ)(M + R) − s (A ≤ M + r ≤ M + R; = (9 + 4M/d²)M − s for R = 3M)",
            _LIFT_FACE,
            lx + lC + lo1 <= 2 * M + Rs + (1 + lam) * (M + Rs) - ls,
            provenance=LIFT_DOC + "#near",
            about=ids,
        ),
        *(
            Implication(f"backward.lift.near.{case}", "derivation", f"[BWD-five/four-small-near] {text}",
                        (*near, case_hyp, 4 * sq(lY) <= sq(ls) * lC, face), sq(lY) <= cap,
                        provenance=LIFT_DOC + "#near", about=ids)
            for case, text, case_hyp, face in cases
        ),
        Implication(
            "backward.lift.near.segment",
            "derivation",
            "[BWD-five/four-small-near] Y² ≤ 16M³(1 + 4M/d²) ⇒ Y ≤ 4M√M·√(1 + 4M/d²)",
            (*near, sq(lY) <= cap),
            lY <= 4 * M * sqrt(M) * sqrt(1 + 4 * mu),
            provenance=LIFT_DOC + "#near",
            about=ids,
        ),
    ]
    for name, n in LIFT_FAMILIES.items():
        out.append(
            Implication(
                f"backward.lift.near.rearrange.{name}",
                "derivation",
                f"[BWD-{name}-small-near] {n}N²d products: {n}N²d ≤ h·4M√M·√(1 + 4M/d²) and Q ≥ 3M(h − 1) ⇒ "
                f"Q ≥ ({coeffs[name]})·N²d/(√M·√(1 + 4M/d²)) − 3M",
                (*near, n * N**2 * d <= hs * 4 * M * sqrt(M) * sqrt(1 + 4 * mu), Qs >= 3 * M * (hs - 1)),
                Qs >= coeffs[name] * N**2 * d / (sqrt(M) * sqrt(1 + 4 * mu)) - 3 * M,
                provenance=LIFT_DOC + "#near",
                about=(f"backward.bwd-{name}-small-near",),
            )
        )
    return out


def _formulas() -> dict:
    from attnio.bounds.costs import BACKWARD_FORMULAS

    return {n: f.with_dv_equal_d() for n, f in sorted(BACKWARD_FORMULAS.items())}


# Schedules that read S or P (N² words) at every M: their large-cache link goes through N²/2
# (backward.consistency.large.half). The direct 4N²d²/M ≤ cost of square_tiling-bwd, whose tiles nest floors of
# √(3M + 1), was proved by z3 but not re-proved by cvc5 within its guard; both links of this form are.
VIA_HALF: frozenset[str] = frozenset({"square_tiling-bwd", "square_tiling-io-bwd"})


def consistency_claims() -> list[Implication]:
    from attnio.bounds.backward import BOUNDS, BWD_TRIVIAL, COVERS, LIFT_SMALL, ONCE_SMALL, SMALL_CACHE

    # small cache: below; BWD-slots (above 4N²d²/M): its own links, slots_consistency_claims
    chained = [b for b in BOUNDS if b is not BWD_TRIVIAL and b.id not in SMALL_CACHE | LIFT_SMALL | ONCE_SMALL
               and not b.id.startswith("backward.bwd-slots")]
    large, small = M >= 8 * d**2, M <= 8 * d**2
    out: list[Link] = [
        Link("backward.consistency.large.half",
             "4N²d²/M ≤ N²/2 where M ≥ 8d² (the middle link for the schedules that read S or P: bound ≤ 4N²d²/M ≤ "
             "N²/2 ≤ their cost)", (*BASE, large), 4 * UNIT <= N**2 / 2, tuple(b.id for b in chained)),
    ]
    for b in chained:
        short = b.id.removeprefix("backward.")
        out += [relax(f"backward.relax.{short}.{cache}", b, lead,
                      f"{b.id} ≤ {text} where {where} (first link of {b.id} ≤ every backward exact cost)", extra=(side,))
                for cache, lead, text, where, side in (("large", 4 * UNIT, "4N²d²/M", "M ≥ 8d²", large),
                                                       ("small", N**2 / 2, "N²/2", "M ≤ 8d²", small))]
    for name, f in _formulas().items():
        covered = tuple(b.id for b in chained if name in COVERS[b.id])
        half = name in VIA_HALF
        out += [
            Link(f"backward.wd.{name}",
                 f"{name}'s cost formula is defined wherever it claims to be valid ({'; '.join(map(str, f.valid))}).",
                 f.valid, f.io >= 0, (f"exact.{name}",), kind="well-defined", doc=f.derivation),
            # the second links of the chains: the large-cache one and the small-cache one
            to_cost(f"backward.consistency.large.{name}", name, f, N**2 / 2 if half else 4 * UNIT,
                    (f"N²/2 ≤ exact cost of {name} where M ≥ 8d² (second link, with backward.consistency.large.half: "
                     "4N²d²/M ≤ N²/2 ≤ it; it reads S or P; d_v = d)") if half else
                    f"4N²d²/M ≤ exact cost of {name} where M ≥ 8d² (second link; d_v = d)", extra=(large,), covers=covered),
            to_cost(f"backward.consistency.small.{name}", name, f, N**2 / 2,
                    f"N²/2 ≤ exact cost of {name} where M ≤ 8d² (second link; d_v = d)", extra=(small,), covers=covered),
            to_cost(f"backward.consistency.trivial.{name}", name, f, BWD_TRIVIAL.expr,
                    f"{name} never moves fewer than 7Nd words (N ≥ 2, d_v = d): the trivial backward bound",
                    base=(*BASE, 2 <= N), covers=(BWD_TRIVIAL.id,), goal=f.io >= BWD_TRIVIAL.expr, doc=DOC + "#trivial"),
        ]
    return chain(out, DOC + "#consistency")


# How each schedule's small-cache link (L = (25/9)·N²d/√M ≤ cost where M ≤ d²) is proved; every backward formula needs
# an entry (tests/test_backward_small.py). "via": 4N²d²/M ≤ cost, then backward.small.via_large; "split": the same
# where 4d ≤ M and L ≤ cost directly where M ≤ 4d (flash1-bwd's B_c = ⌈M/4d⌉ is 1 there, and 4N²d²/M > its cost
# at tiny M); "direct": L ≤ cost; "tiles": cost ≥ 2N²d/B, 1 ≤ B, 3B² ≤ M, then backward.small.tiles_amgm; "stream"
# (output tiles B×B, inner dimension streamed, B² + 2B ≤ M): cost ≥ 5N²d/B, 1 ≤ B, B² ≤ M, then
# backward.small.stream_amgm.
SMALL_LINK: dict[str, str] = {
    "flash1-bwd": "split",
    "flash1-fit-bwd": "via",
    "flash2-bwd": "via",
    "flash2-fused-bwd": "via",
    "flash2-2pass-bwd": "via",
    "flash2-square-bwd": "via",
    "standard-bwd": "direct",
    "square_tiling-bwd": "tiles",
    "square_tiling-io-bwd": "stream",
}
SMALL_LEAD: Expr = 2 * Fraction(25, 18) * N**2 * d / sqrt(M)  # (25/9)·N²d/√M, the leading term of BWD-SdP-small
tile = nonneg_real("bwds_tile", "a square tile's side B")
io_ = nonneg_real("bwds_io", "a schedule's words moved")


def small_cache_consistency_claims() -> list[Implication]:
    """Every small-cache backward bound ≤ every backward exact cost where M ≤ d² and the schedule runs, as a chain
    through L = (25/9)·N²d/√M (docs/bounds/backward-small.md#consistency): ``backward.small.relax.<bound>``
    (bound ≤ L), then per schedule the link(s) of :data:`SMALL_LINK` (L ≤ cost)."""
    from attnio.bounds.backward import BOUNDS, BWD_FIVE_SMALL, BWD_FOUR_SMALL, COVERS, ONCE_SMALL, SMALL_CACHE

    small = [b for b in BOUNDS if b.id in SMALL_CACHE or b is BWD_FOUR_SMALL]
    ids = tuple(b.id for b in small)
    reg = (*BASE, M <= d**2)
    out: list[Link] = [
        relax(f"backward.small.relax.{b.id.removeprefix('backward.')}", b, SMALL_LEAD,
              f"{b.id} ≤ (25/9)·N²d/√M where M ≤ d² (first link of {b.id} ≤ every backward exact cost)", base=reg)
        for b in small
    ]
    out += [
        Link("backward.small.via_large",
             "(25/9)·N²d/√M ≤ 4N²d²/M where M ≤ d² (√M ≤ d; the link for the FlashAttention-style schedules)",
             reg, SMALL_LEAD <= 4 * UNIT, ids),
        Link("backward.small.tiles_amgm",
             "B ≥ 1, 3B² ≤ M, io ≥ 2N²d/B ⇒ io ≥ (25/9)·N²d/√M (2N²d/B ≥ 2√3·N²d/√M; the link for square tiles)",
             (*BASE, tile >= 1, 3 * tile * tile <= M, io_ >= 2 * N**2 * d / tile), SMALL_LEAD <= io_, ids),
    ]
    for name, f in _formulas().items():
        how = SMALL_LINK[name]
        covers = tuple(b.id for b in small if name in COVERS[b.id])
        # the 4N²d²/M links serve BWD-five-small's chain too (backward.lift.via_large), and the charged-once bounds'
        # (backward.once.relax.*, backward.once.via_large)
        once = tuple(sorted(i for i in ONCE_SMALL if name in COVERS[i]))
        large = covers + ((BWD_FIVE_SMALL.id,) if name in COVERS[BWD_FIVE_SMALL.id] else ()) + once

        def link(suffix: str, statement: str, extra: tuple, lower: Any, covers: tuple = covers, goal: Any = None,
                 name: str = name, f: Any = f) -> Link:
            return to_cost(f"backward.small.consistency.{name}{suffix}", name, f, lower, f"{statement} ({name}; d_v = d)",
                           base=reg, extra=extra, covers=covers, goal=goal)

        if how == "via":
            out.append(link("", "4N²d²/M ≤ exact cost where M ≤ d² (with backward.small.via_large: L ≤ it)", (), 4 * UNIT,
                            large))
        elif how == "split":
            out.append(link(".rows", "4N²d²/M ≤ exact cost where 4d ≤ M ≤ d² (with backward.small.via_large)", (4 * d <= M,),
                            4 * UNIT, large))
            out.append(link(".one-row", "(25/9)·N²d/√M ≤ exact cost where M ≤ min(4d, d²)", (M <= 4 * d,), SMALL_LEAD))
        elif how == "direct":
            out.append(link("", "(25/9)·N²d/√M ≤ exact cost where M ≤ d²", (), SMALL_LEAD))
        elif how == "tiles":
            b = f.blocks["B"]
            out.append(link(".phase", "2N²d/B ≤ exact cost where M ≤ d² (dQ and dK read S-tiles ⌈d/B⌉ times each)", (),
                            2 * N**2 * d / b))
            out.append(link(".tile", "its tile side B ≥ 1 where M ≤ d²", (), 0, goal=1 <= b, covers=covers + once))
            out.append(link(".tiles", "its tiles fit: 3B² ≤ M (with backward.small.tiles_amgm: L ≤ cost)", (), 0,
                            goal=3 * b * b <= M, covers=covers + once))
        elif how == "stream":
            b = f.blocks["B"]
            out.append(link(".phase5", "5N²d/B ≤ exact cost where M ≤ d² (Q, K, V and dO tiles read ⌈N/B⌉ times in five "
                            "streamed passes)", (), 5 * N**2 * d / b, covers=covers + once))
            out.append(link(".tile", "its tile side B ≥ 1 where M ≤ d²", (), 0, goal=1 <= b, covers=covers + once))
            out.append(link(".side", "its output tile fits: B² ≤ M (with backward.small.stream_amgm: L ≤ cost)", (), 0,
                            goal=b * b <= M, covers=covers + once))
        else:  # pragma: no cover - SMALL_LINK's values are the five above
            raise AssertionError(how)
    out.append(Link("backward.small.stream_amgm",
                    "B ≥ 1, B² ≤ M, io ≥ 5N²d/B ⇒ io ≥ (25/9)·N²d/√M (5N²d/B ≥ 5N²d/√M; the link for streamed output tiles)",
                    (*BASE, tile >= 1, tile * tile <= M, io_ >= 5 * N**2 * d / tile), SMALL_LEAD <= io_, ids))
    return chain(out, SMALL_DOC + "#consistency")


FIVE_LEAD: Expr = Fraction(125, 36) * N**2 * d / sqrt(M)  # the leading term of BWD-five-small


def lift_consistency_claims() -> list[Implication]:
    """BWD-five-small ≤ every backward exact cost it covers where M ≤ d² (docs/bounds/backward-lift.md#consistency):
    bound ≤ L₅ = (125/36)·N²d/√M, then L₅ ≤ 4N²d²/M (√M ≤ d) and the ``backward.small.consistency.*`` links
    4N²d²/M ≤ cost; for flash1-bwd where M ≤ 4d, L₅ ≤ cost directly. (BWD-four-small's leading term is (25/9)·N²d/√M:
    it is in :func:`small_cache_consistency_claims`.)"""
    from attnio.bounds.backward import BWD_FIVE_SMALL, COVERS

    reg = (*BASE, M <= d**2)
    b = BWD_FIVE_SMALL
    out = [
        relax("backward.lift.relax.bwd-five-small", b, FIVE_LEAD,
              f"{b.id} ≤ (125/36)·N²d/√M where M ≤ d² (first link of {b.id} ≤ every covered exact cost)", base=reg),
        Link("backward.lift.via_large",
             "(125/36)·N²d/√M ≤ 4N²d²/M where M ≤ d² (√M ≤ d; then backward.small.consistency.<schedule>)",
             reg, FIVE_LEAD <= 4 * UNIT, (b.id,)),
    ]
    out += [to_cost(f"backward.lift.consistency.{name}.one-row", name, f, FIVE_LEAD,
                    f"(125/36)·N²d/√M ≤ exact cost where M ≤ min(4d, d²) ({name}; d_v = d)", base=reg,
                    extra=(M <= 4 * d,), covers=(b.id,))
            for name, f in _formulas().items() if name in COVERS[b.id] and SMALL_LINK[name] == "split"]
    return chain(out, LIFT_DOC + "#consistency")


NEAR_FIVE_LEAD: Expr = Fraction(15, 4) * N**2 * d / sqrt(M)  # BWD-five-small-near ≤ it (√(1 + 4M/d²) ≥ 1)
NEAR_FOUR_LEAD: Expr = 3 * N**2 * d / sqrt(M)  # BWD-four-small-near ≤ it


def near_consistency_claims() -> list[Implication]:
    """BWD-five-small-near and BWD-four-small-near ≤ every covered backward exact cost on their regime
    (docs/bounds/backward-lift.md#near): bound ≤ L = (3n/4)·N²d/√M; (15/4)·N²d/√M ≤ 4N²d²/M, then the
    ``backward.small.consistency.*`` links for the schedules that recompute S (flash1-bwd where M ≤ 4d: directly);
    3·N²d/√M ≤ (15/4)·N²d/√M, and for standard-bwd and square_tiling-bwd 3·N²d/√M ≤ cost (square tiles: through
    the tiles claims of :func:`small_cache_consistency_claims`, 2√3 ≥ 3)."""
    from attnio.bounds.backward import BWD_FIVE_SMALL_NEAR, BWD_FOUR_SMALL_NEAR, COVERS

    five, four = BWD_FIVE_SMALL_NEAR.id, BWD_FOUR_SMALL_NEAR.id
    reg = (*BASE, M <= d**2)
    out = [
        relax("backward.lift.near.relax.five", BWD_FIVE_SMALL_NEAR, NEAR_FIVE_LEAD, f"{five} ≤ (15/4)·N²d/√M on its regime"),
        relax("backward.lift.near.relax.four", BWD_FOUR_SMALL_NEAR, NEAR_FOUR_LEAD, f"{four} ≤ 3·N²d/√M on its regime"),
        Link("backward.lift.near.lead", "3·N²d/√M ≤ (15/4)·N²d/√M", reg, NEAR_FOUR_LEAD <= NEAR_FIVE_LEAD, (four,)),
        Link("backward.lift.near.via_large", "(15/4)·N²d/√M ≤ 4N²d²/M where M ≤ d² (√M ≤ d; then "
             "backward.small.consistency.<schedule>)", reg, NEAR_FIVE_LEAD <= 4 * UNIT, (five, four)),
        Link("backward.lift.near.tiles_amgm", "B ≥ 1, 3B² ≤ M, io ≥ 2N²d/B ⇒ io ≥ 3·N²d/√M (2√3 ≥ 3; square_tiling-bwd "
             "with its .phase, .tile, .tiles links)", (*BASE, tile >= 1, 3 * tile * tile <= M, io_ >= 2 * N**2 * d / tile),
             NEAR_FOUR_LEAD <= io_, (four,)),
        Link("backward.lift.near.stream_amgm", "B ≥ 1, B² ≤ M, io ≥ 5N²d/B ⇒ io ≥ 3·N²d/√M (square_tiling-io-bwd "
             "with its .phase5, .tile, .side links)", (*BASE, tile >= 1, tile * tile <= M, io_ >= 5 * N**2 * d / tile),
             NEAR_FOUR_LEAD <= io_, (four,)),
    ]
    for name, f in _formulas().items():
        how = SMALL_LINK[name]
        if how == "split":  # flash1-bwd where M ≤ 4d
            lead, covers = NEAR_FIVE_LEAD, (five, four)
        elif how == "direct":  # standard-bwd
            lead, covers = NEAR_FOUR_LEAD, (four,)
        else:
            continue
        out.append(to_cost(
            f"backward.lift.near.consistency.{name}", name, f, lead,
            f"the near forms' lead ≤ exact cost where M ≤ d²{' and M ≤ 4d' if how == 'split' else ''} ({name}; d_v = d)",
            base=reg, extra=(M <= 4 * d,) if how == "split" else (), covers=tuple(b for b in covers if name in COVERS[b])))
    return chain(out, LIFT_DOC + "#near")


def tightest_claims() -> list[Claim]:
    """The backward tightest constants (``backward.tight.*``) and their tile-fact links: the backward specs of
    :data:`attnio.solver.claims.tight.SPECS`."""
    return [c for spec in SPECS if spec.backward for c in tight_claims(spec)]


def crossover_claims() -> list[Claim]:
    """The small-cache/large-cache crossover of the backward, derived along M/d² on the leading terms of the exact
    counts (docs/costs.md#backward-constants): square_tiling-bwd 8√3·N²d/√M + 2N² against flash2-bwd 16N²d²/M.
    The crossover of the exact formulas is :func:`exact_crossover_claims`."""
    return [
        leading_crossover(
            "backward.crossover.leading.square_tiling-bwd.flash2-bwd",
            "Leading terms with constants: the square-tiled backward 8√3·N²d/√M + 2N² against flash2-bwd's 16N²d²/M; "
            "the boundary on M/d² is derived by bisection (t = √M/d solves 16/t² = 8√3/t + 2: M/d² ≈ 1.016).",
            8 * sqrt(3 * M) * N**2 * d / M + 2 * N**2, 16 * UNIT, "8√3·N²d/√M + 2N²", "16N²d²/M",
            hi=Fraction(4), provenance="docs/costs.md#backward-constants (both leading terms)",
            about=("exact.square_tiling-bwd", "exact.flash2-bwd"),
        )
    ]


# The exact crossover (docs/costs.md#backward-crossover): realistic heads and long sequences, where lower-order terms
# do not decide. The crossover sits where square_tiling-bwd's tile B is about d/√3, so ⌈d/B⌉ (2 or 3 there) sets
# the N² term 3⌈d/B⌉N²; the real relaxation of the ceiling (d/B ≤ ⌈d/B⌉ < d/B + 1) would let it be 2.9 and move
# the lower side to M/d² ≈ 0.77. The integrality facts of :func:`_tile_facts` (proved on their own by
# backward.crossover.tiles) restore it.
XOVER_REGIME = (64 <= d, 64 * d <= N)
TILE_KS = (1, 2, 3)


def _tile_facts() -> tuple:
    """``⌈d/B⌉ ≤ k or kB < d`` and ``⌈d/B⌉ ≥ k + 1 or d ≤ kB`` for k = 1, 2, 3 (B: square_tiling-bwd's tile):
    true at every integer point (⌈d/B⌉ ≤ k ⇔ d ≤ kB), not implied by the real relaxation of the ceiling."""
    from attnio.solver.logic import Any as Either

    st = _formulas()["square_tiling-bwd"]
    tile, td = st.blocks["B"], st.blocks["T_d"]
    out: list = []
    for k in TILE_KS:
        out += [Either((td <= k, k * tile < d)), Either((k + 1 <= td, d <= k * tile))]
    return tuple(out)


XOVER_ID = "backward.crossover.square_tiling-bwd.flash2-bwd"
XOVER_LO, XOVER_HI = Fraction(15, 16), Fraction(9, 8)  # the search floor and ceiling: the two sides the bisection proves


def exact_crossover_claims() -> list[Claim]:
    from attnio.solver.logic import All

    fs = _formulas()
    st, f2 = fs["square_tiling-bwd"], fs["flash2-bwd"]
    facts = _tile_facts()
    xo = Crossover(
        XOVER_ID,
        "Exact costs (every floor and ceiling): where square_tiling-bwd moves strictly fewer words than flash2-bwd, "
        "along M/d², for d ≥ 64 and N ≥ 64d (d_v = d); derived by bisection, both sides proved. The hypotheses "
        "add T_d = ⌈d/B⌉'s integrality facts (proved by backward.crossover.tiles). Between the two sides either "
        "can win, depending on d (the leading terms cross at M/d² ≈ 0.947 once T_d = 2 is counted exactly). "
        "cvc5 re-proves the two sides from the envelope lemmas backward.crossover.link.*.",
        XOVER_REGIME + st.valid + f2.valid + facts,
        a=st.io,
        b=f2.io,
        axis=M / d**2,
        lo=XOVER_LO,
        hi=XOVER_HI,
        precision=Fraction(1, 16),
        a_name="square_tiling-bwd",
        b_name="flash2-bwd",
        axis_name="M/d²",
        provenance=f"{st.derivation}; {f2.derivation}; docs/costs.md#backward-crossover",
        rlimit=1_200_000,
        cleared=True,
        about=("exact.square_tiling-bwd", "exact.flash2-bwd"),
    )
    envelopes = _crossover_links(xo, st, f2)
    return [
        Implication(
            "backward.crossover.tiles",
            "identity",
            "square_tiling-bwd's head-dimension tile count T_d = ⌈d/B⌉ (B = ⌊(⌊√(3M + 1)⌋ − 1)/3⌋) is an integer: "
            "T_d ≤ k exactly when d ≤ kB, for k = 1, 2, 3 (the facts the exact crossover's hypotheses add)",
            (*BASE, *st.valid),
            All(facts),
            provenance="docs/costs.md#backward-crossover",
            about=("exact.square_tiling-bwd",),
        ),
        *envelopes,
        dataclasses.replace(xo, lemmas=tuple(c.id for c in envelopes)),
    ]


def _crossover_links(xo: Crossover, st: Any, f2: Any) -> list[Implication]:
    """The exact crossover's two sides, cut into floor-free envelopes and a case split on T_d = ⌈d/B⌉, for cvc5
    (which decides neither side whole; z3 does). Below (M ≤ 15d²/16): cost(square_tiling-bwd) ≤ A⁺ < F⁻ ≤
    cost(flash2-bwd); above (M ≥ 9d²/8): cost(flash2-bwd) ≤ F⁺ ≤ A⁻ ≤ cost(square_tiling-bwd). A± replace
    T = ⌈N/B⌉ by N/B (+1) and keep the tile B and T_d exact; F± replace T_c = ⌈N/c⌉ by N/x (N/x⁻ + 1), with
    x = (M − 3d − 2)/(4d + 2) ≥ c = ⌊x⌋ ≥ x⁻ = (M − 7d − 3)/(4d + 2). The middle comparisons are split on
    d against B, 2B, 3B (cases that cover every point). docs/costs.md#backward-crossover."""
    tile, td = st.blocks["B"], st.blocks["T_d"]
    x = (M - 3 * d - 2) / (4 * d + 2)
    x_minus = (M - 7 * d - 3) / (4 * d + 2)
    # cost(square_tiling-bwd) = 5Nd + 3N + 5·T·Nd + 2N² + 3·T_d·N² + T·T_d·N  and  cost(flash2-bwd) =
    # 7Nd + T_c·(3Nd + 2N) + N + T_c·Nd: the link claims below prove each envelope against the formula itself
    def a_with(t: Expr) -> Expr:
        return 5 * N * d + 3 * N + 5 * t * N * d + 2 * N**2 + 3 * td * N**2 + t * td * N

    def f_with(tc: Expr) -> Expr:
        return 7 * N * d + tc * (3 * N * d + 2 * N) + N + tc * N * d

    a_up, a_lo = a_with(N / tile + 1), a_with(N / tile)
    f_lo, f_up = f_with(N / x), f_with(N / x_minus + 1)
    base = XOVER_REGIME + st.valid + f2.valid
    below = xo.hyps + (xo.axis_at_most(xo.lo),)
    above = xo.hyps + (xo.axis_at_least(xo.hi),)
    steps = [
        ("square_tiling-bwd.upper", "cost(square_tiling-bwd) ≤ A⁺: T = ⌈N/B⌉ < N/B + 1 (B and T_d exact)",
         base, st.io <= a_up),
        ("square_tiling-bwd.lower", "A⁻ ≤ cost(square_tiling-bwd): T = ⌈N/B⌉ ≥ N/B (B and T_d exact)",
         base, a_lo <= st.io),
        ("flash2-bwd.lower", "F⁻ ≤ cost(flash2-bwd): T_c = ⌈N/c⌉ ≥ N/x with c = ⌊x⌋ ≤ x = (M − 3d − 2)/(4d + 2)",
         base, f_lo <= f2.io),
        ("flash2-bwd.upper", "cost(flash2-bwd) ≤ F⁺: T_c < N/c + 1 ≤ N/x⁻ + 1, as c = ⌊p/(4d + 2)⌋ ≥ "
         "(p − 4d − 1)/(4d + 2) = x⁻ = (M − 7d − 3)/(4d + 2) for the integer p = M − 3d − 2 "
         "(x⁻ > 0: M ≥ 7d + 4)", base, f2.io <= f_up),
        ("below.T_d=2", "A⁺ < F⁻ for M ≤ 15d²/16 where d ≤ 2B (T_d = 2: B < d there)",
         below + (d <= 2 * tile,), a_up < f_lo),
        ("below.T_d=3", "A⁺ < F⁻ for M ≤ 15d²/16 where 2B < d ≤ 3B (T_d = 3)",
         below + (2 * tile < d, d <= 3 * tile), a_up < f_lo),
        ("below.T_d>=4", "A⁺ < F⁻ for M ≤ 15d²/16 where 3B < d (T_d ≥ 4)", below + (3 * tile < d,), a_up < f_lo),
        ("above.T_d=1", "F⁺ ≤ A⁻ for M ≥ 9d²/8 where d ≤ B (T_d = 1)", above + (d <= tile,), f_up <= a_lo),
        ("above.T_d>=2", "F⁺ ≤ A⁻ for M ≥ 9d²/8 where B < d (T_d = 2 there)", above + (tile < d,), f_up <= a_lo),
    ]
    return links("backward.crossover.link", (), steps, ("exact.square_tiling-bwd", "exact.flash2-bwd"),
                 kind="inequality", provenance="docs/costs.md#backward-crossover")


def training_claims() -> list[Claim]:
    """flash2 + flash2-bwd (one training step of the best schedules) against B2 + BWD-SdP (their leading
    terms 2N²d²/M + 4N²d²/M; the bounds themselves are these minus 2M)."""
    from attnio.bounds.costs import FORMULAS

    if "flash2" not in FORMULAS:
        return []
    fwd = FORMULAS["flash2"].with_dv_equal_d()
    bwd = _formulas()["flash2-bwd"]
    return [
        Tightest(
            "backward.tight.training.flash2",
            "Least c with cost(flash2) + cost(flash2-bwd) ≤ c·6N²d²/M + 12Nd for d ≥ 64, 8d² ≤ M ≤ Nd: one training "
            "step of the best schedules against the sum of the forward bound B2 (2N²d²/M − M) and the backward "
            "bound BWD-SdP (4N²d²/M − M); leading constant 20/6.",
            (64 <= d, 8 * d**2 <= M, M <= N * d) + fwd.valid + bwd.valid,
            f=fwd.io + bwd.io,
            g=6 * UNIT,
            extra=12 * N * d,
            precision=Fraction(1, 4),
            hi=Fraction(16),
            provenance="docs/bounds/backward.md#training-step",
            about=("exact.flash2", "exact.flash2-bwd", "constants.b2", "backward.bwd-sdp"),
        )
    ]


# BWD-slots-dv and BWD-slots-dv-x (docs/bounds/backward-slots-dv.md): BWD-slots with the dV slot face, three families
# of N²d products (dQ, dK, dV) in one segment budget. Appended; the chains above are untouched.
DV_DOC = "docs/bounds/backward-slots-dv.md"
(vy1, vy2, vA1, vA2, vB1, vB2, vm, vn, vu, vw, vp, vX, vA, vr1, vq, vo, vk, vv, vx, vs, va, val, vb, vbe, vbeta, vT, vY, vSq,
 vZ, vU, vh, vQ) = nonneg_reals("bwdv", {
    "y1": "one family's products in a segment (or a sum of families)",
    "y2": "another family's products in a segment",
    "A1": "one family's pair face times its input face",
    "A2": "another family's pair face times its input face",
    "B1": "one family's touched slots",
    "B2": "another family's touched slots",
    "m": "rows of one side wholly available",
    "n": "rows of the other side wholly available",
    "u": "min(q, o): a bound on the Q-and-dO rows' words",
    "w": "min(k, v): a bound on the K-and-V rows' words",
    "p": "d² times a pair face: |I_t||J_t| + x_t (dQ, dK) or |I^Q_t||J^K_t| + x_t (dV)",
    "X": "d²·x_t",
    "A": "uw or qk: a bound on d² times the type-1 part of a pair face",
    "r1": "q + k (the input faces of the dQ and dK products together) or o (the dV products' input face)",
    "q": "available Q words in a segment",
    "o": "available dO words in a segment",
    "k": "available K words in a segment",
    "v": "available V words in a segment",
    "x": "type-2 pairs of a segment",
    "s": "q + o + k + v, or an upper bound on it",
    "a": "(q + o)/2",
    "al": "|q − o|/2",
    "b": "(k + v)/2",
    "be": "|k − v|/2",
    "beta": "dQ, dK and dV slots touched in a segment",
    "T": "T_t = M + R + z_t, a segment's budget",
    "Y": "dQ, dK and dV products whose useful instance lies in a segment",
    "S": "Σ_t T_t²",
    "Z": "Σ_t n_t, new slots summed over segments",
    "U": "Σ_t U_t, partial I/O (dQ, dK and dV partials) of the whole computation",
    "h": "number of segments",
    "Q": "words moved by the whole computation",
})
DV_FACE = Fraction(1203, 25000)  # c₀ ≥ 1/(12√3) ≈ 0.0481125: max of uw(q+k) + qko over q + o + k + v ≤ s is s³/(12√3)
DV_C = Fraction(57, 800)  # c with c² ≥ (27/256)·c₀: the per-segment constant, Y ≤ c·T²/d
DV_COEFF = Fraction(200, 19)  # 3/(4c): the leading constant of BWD-slots-dv
DV_THRESHOLD = 10  # T ≥ 10d²: type-2 pairs do not pay (their first-order gain stops near 9.2d²)
DV_GAMMA = Fraction(1, 2)  # γ: Y ≤ c·T²/d + γd³ for every T (the largest gap found numerically is ≈ 0.45d³)


def dv_step_claims(coeff: Fraction = DV_COEFF, face: Fraction = DV_FACE, threshold: int = DV_THRESHOLD,
                   gamma: Fraction = DV_GAMMA) -> list[Implication]:
    """The algebraic steps of BWD-slots-dv and BWD-slots-dv-x. The arguments are the constants; a larger ``coeff``,
    a smaller ``face`` (c₀), a smaller ``threshold`` or a smaller ``gamma`` is a mutant that must be refuted."""
    both = ("backward.bwd-slots-dv", "backward.bwd-slots-dv-x")
    c = DV_C
    E = (va - val) * (vb - vbe) * (va + val + vb + vbe) + (va * va - val * val) * (vb + vbe)

    def imp(i: str, statement: str, hyps: tuple, goal: Any, about: tuple = both, anchor: str = "#proof") -> Implication:
        return Implication(f"backward.slots.dv.{i}", "derivation", f"[BWD-slots-dv] {statement}", hyps, goal,
                           provenance=DV_DOC + anchor, about=about)

    x_only = ("backward.bwd-slots-dv-x",)
    return [
        imp("cauchy", "Cauchy–Schwarz, two terms (applied twice: dQ + dK, then + dV): y₁² ≤ A₁B₁, y₂² ≤ A₂B₂ ⇒ "
            "(y₁ + y₂)² ≤ (A₁ + A₂)(B₁ + B₂)",
            (vy1 * vy1 <= vA1 * vB1, vy2 * vy2 <= vA2 * vB2), sq(vy1 + vy2) <= (vA1 + vA2) * (vB1 + vB2)),
        imp("rows", "d·m ≤ u, d·n ≤ w ⇒ d²·m·n ≤ u·w (whole rows against the available words)",
            (d >= 1, d * vm <= vu, d * vn <= vw), d**2 * vm * vn <= vu * vw),
        imp("faces", "P ≤ A + X ⇒ P·r ≤ A·r + X·r (one family's pair face times its input face; applied with "
            "(P, A, X, r) = (d²p, uw, d²x, q + k) and (d²p_V, qk, d²x, o))",
            (vp <= vA + vX,), vp * vr1 <= vA * vr1 + vX * vr1),
        imp("mono", "u ≤ a − α, w ≤ b − β′, q ≤ a + α, k ≤ b + β′, qo = a² − α² ⇒ "
            "uw(q + k) + qko ≤ (a − α)(b − β′)(a + α + b + β′) + (a² − α²)(b + β′)",
            (vu <= va - val, vw <= vb - vbe, vq <= va + val, vk <= vb + vbe, eq(vq * vo, va * va - val * val)),
            vu * vw * (vq + vk) + vq * vk * vo <= E),
        imp("reduced", "α ≤ a, β′ ≤ b ⇒ (a − α)(b − β′)(a + α + b + β′) + (a² − α²)(b + β′) ≤ 2a²b + ab² "
            "(the unequal rows never gain)",
            (val <= va, vbe <= vb), E <= 2 * va * va * vb + va * vb * vb),
        imp("face_max", f"2a + 2b ≤ s ⇒ 2a²b + ab² ≤ ({face})·s³ (the maximum s³/(12√3) at a = s/(2√3))",
            (2 * va + 2 * vb <= vs,), 2 * va * va * vb + va * vb * vb <= face * vs**3),
        imp("high_scale", f"T ≥ {threshold}d² ⇒ d²·x·s·β ≤ x·s·β·T/{threshold}",
            (d >= 1, vT >= threshold * d**2), d**2 * vx * vs * vbeta <= vx * vs * vbeta * vT / threshold),
        imp("high", f"s + x + β ≤ T ⇒ (c₀s³ + x·s·T/{threshold})·β ≤ c²T⁴ (c₀ = {face}, c = {c})",
            (vs + vx + vbeta <= vT,), (face * vs**3 + vx * vs * vT / threshold) * vbeta <= c * c * vT**4),
        imp("constant", f"d²Y² ≤ c²T⁴ ⇒ Y ≤ ({c})·T²/d", (d >= 1, d**2 * vY * vY <= c * c * vT**4),
            vY <= c * vT**2 / d, about=("backward.bwd-slots-dv",)),
        imp("low_amgm", "s + x + β ≤ T ⇒ 4d²(c₀s³ + d²xs)β ≤ s(d²(T − s) + c₀s²)² (AM–GM on c₀s²/d² + x and β)",
            (d >= 1, vs + vx + vbeta <= vT),
            4 * d**2 * (face * vs**3 + d**2 * vx * vs) * vbeta <= vs * sq(d**2 * (vT - vs) + face * vs**2),
            about=x_only, anchor="#bwd-slots-dv-x"),
        imp("low", f"s ≤ T ≤ {threshold}d² ⇒ s(d²(T − s) + c₀s²)² ≤ 4d²(cT² + ({gamma})d⁴)²",
            (d >= 1, vs <= vT, vT <= threshold * d**2),
            vs * sq(d**2 * (vT - vs) + face * vs**2) <= 4 * d**2 * sq(c * vT**2 + gamma * d**4),
            about=x_only, anchor="#bwd-slots-dv-x"),
        imp("constant_x", f"d²Y² ≤ (cT² + γd⁴)² ⇒ Y ≤ ({c})·T²/d + ({gamma})·d³",
            (d >= 1, d**2 * vY * vY <= sq(c * vT**2 + gamma * d**4)), vY <= c * vT**2 / d + gamma * d**3,
            about=x_only, anchor="#bwd-slots-dv-x"),
        imp("sum", "Σ_t of B3's square expansion with R = M, f = 0 over 3Nd slots: S ≤ 4M²h + 5M·(Σn − ΣU) + 2M·ΣU, "
            "Σn − ΣU ≤ 3Nd/2 − ΣU/2 and ΣU ≥ 3Nd ⇒ S ≤ 4M²h + 6NMd",
            (*BASE, vSq <= 4 * M**2 * vh + 5 * M * (vZ - vU) + 2 * M * vU, vZ - vU <= Fraction(3, 2) * N * d - vU / 2,
             vU >= 3 * N * d),
            vSq <= 4 * M**2 * vh + 6 * N * M * d),
        imp("rearrange", f"3N²d ≤ c·S/d, S ≤ 4M²h + 6NMd and Q ≥ M(h − 1) ⇒ Q ≥ ({coeff})·N²d²/M − (3/2)Nd − M",
            (*BASE, 3 * N**2 * d <= c * vSq / d, vSq <= 4 * M**2 * vh + 6 * N * M * d, vQ >= M * (vh - 1)),
            vQ >= coeff * N**2 * d**2 / M - Fraction(3, 2) * N * d - M, about=("backward.bwd-slots-dv",)),
        imp("rearrange_x", "3N²d ≤ c·S/d + γd³h, S ≤ 4M²h + 6NMd and Q ≥ M(h − 1) ⇒ "
            "Q ≥ M(1200N²d² − 171NMd)/(114M² + 200d⁴) − M",
            (*BASE, 3 * N**2 * d <= c * vSq / d + gamma * d**3 * vh, vSq <= 4 * M**2 * vh + 6 * N * M * d,
             vQ >= M * (vh - 1)),
            vQ >= M * (1200 * N**2 * d**2 - 171 * N * M * d) / (114 * M**2 + 200 * d**4) - M,
            about=x_only, anchor="#bwd-slots-dv-x"),
    ]



# The lifted count with every word charged once (docs/bounds/backward-once.md): per-family Loomis–Whitney on the
# shared pair face, the families that share a word combined by the largest eigenvalue c of a bilinear form.
ONCE_DOC = "docs/bounds/backward-once.md"
ONCE_C = {"five": Fraction(81, 100), "four": Fraction(17, 24)}  # ≥ φ/2 ≈ 0.80902 (S, dQ, dK share Q, K), ≥ √2/2
ONCE_COEFF = {"five": Fraction(3125, 729), "four": Fraction(200, 51)}  # 25n/(36c): the pure forms (R = 3M)
ONCE_CAP_COEFF = {"five": Fraction(256), "four": Fraction(234)}  # ≤ 8√27·n/c: the cap forms (R = 2M)
ONCE_CAP_R = {"five": Fraction(5, 16), "four": Fraction(32, 117)}  # ≥ 2c/√27 (4c²/27 ≤ r²), = 16n/coeff
ONCE_W = 16 + 9 * M / d**2  # the cap forms' (16 + 9M/d²): X = W/4 with X·M = (2M + R) + λ(M + R) at R = 2M
(uq, uk, uzq, uzk, uo, uv, uzv, og, oY, oZ, osp, oF, ophi, oS2, okap, oK) = nonneg_reals("bwdo", {
    "uq": "√q: q the available Q words of a segment",
    "uk": "√k: k the available K words",
    "uzq": "√z_Q: z_Q the dQ slots with a product in a segment",
    "uzk": "√z_K: z_K the dK slots with a product in a segment",
    "uo": "√o: o the available dO words",
    "uv": "√v: v the available V words",
    "uzv": "√z_V: z_V the dV slots with a product in a segment",
    "g": "√F₃: F₃ = x + C + o₁ the pair face of a segment",
    "Y": "one family's products whose useful instance lies in a segment",
    "Z": "the products of all families whose useful instance lies in a segment",
    "s": "s′ = A + y + o₂: a segment's available input words and charged slots, each once",
    "F": "F₃, the pair face of a segment",
    "phi": "Φ, the bilinear form of the families' face sizes",
    "S2": "the sum of the squares of Φ's variables (q + k + z_Q + z_K + o + v + z_V)",
    "kappa": "κ = 1 − λ, λ = (M + R)/(4d²) (> 0 where it is used)",
    "K": "the pair-face budget 2M + R",
})
_ONCE_IDS = {
    "five": ("backward.bwd-five-small-once", "backward.bwd-five-small-once-cap"),
    "four": ("backward.bwd-four-small-once", "backward.bwd-four-small-once-cap"),
}
ONCE_FAMILIES = {"five": 5, "four": 4}
_ONCE_ALL = _ONCE_IDS["five"] + _ONCE_IDS["four"]


def once_phi(name: str) -> Expr:
    """Φ: u_q·u_k (five only) + u_q·u_zK + u_zQ·u_k + u_o·u_v + u_o·u_zV (docs/bounds/backward-once.md step 8)."""
    rest = uq * uzk + uzq * uk + uo * uv + uo * uzv
    return uq * uk + rest if name == "five" else rest


def once_step_claims(coeffs: dict[str, Fraction] | None = None,
                     cap_coeffs: dict[str, Fraction] | None = None) -> list[Implication]:
    """The algebraic steps of BWD-five/four-small-once and their cap forms (docs/bounds/backward-once.md).
    ``coeffs``/``cap_coeffs`` default to :data:`ONCE_COEFF`/:data:`ONCE_CAP_COEFF`; larger ones are mutants that
    must be refuted (tests/test_backward_once.py)."""
    coeffs = coeffs or ONCE_COEFF
    cap_coeffs = cap_coeffs or ONCE_CAP_COEFF
    mu = M / d**2
    kappa = 1 - mu
    sum_sq = uq * uq + uk * uk + uzq * uzq + uzk * uzk + uo * uo + uv * uv + uzv * uzv

    def imp(suffix: str, text: str, hyps: tuple, goal: Any, step: str, about: tuple[str, ...] = _ONCE_ALL,
            label: str = "BWD-five/four-small-once") -> Implication:
        return Implication(f"backward.once.{suffix}", "derivation", f"[{label}] {text}", hyps, goal,
                           provenance=f"{ONCE_DOC}#{step}", about=about)

    face = (*_SEGMENT_BUDGETS, eq(osp, lA + ly + lo2))  # a segment (steps 4–6, 9 of docs/bounds/backward-once.md)
    out = [
        imp("root", "one family after Loomis–Whitney: Y² ≤ a·b·F₃ with a = u_a², b = u_b², F₃ = g² (all ≥ 0) ⇒ "
            "Y ≤ u_a·u_b·g", (sq(oY) <= sq(uq) * sq(uk) * sq(og),), oY <= uq * uk * og, "step-8"),
        imp("third", "pair face, each word once: A + x + y ≤ M + r, o₁ + o₂ ≤ M + w, r + w ≤ R, C ≤ C_S + C_P, "
            "C_S ≤ λs_S, C_P ≤ λs_P, s_S + s_P ≤ A, s′ = A + y + o₂, 0 ≤ λ ≤ 1 ⇒ x + C + o₁ ≤ (2M + R) − (1 − λ)s′",
            (*face, lam <= 1), lx + lC + lo1 <= 2 * M + Rs - (1 - lam) * osp, "step-10",
            (_ONCE_IDS["five"][0], _ONCE_IDS["four"][0])),
        imp("third_cap", "pair face with the cap A ≤ M + R: the hypotheses of backward.once.third (any λ ≥ 0) ⇒ "
            "x + C + o₁ ≤ (2M + R) + λ(M + R) − s′", face, lx + lC + lo1 <= 2 * M + Rs + lam * (M + Rs) - osp,
            "cap", (_ONCE_IDS["five"][1], _ONCE_IDS["four"][1])),
    ]
    for name, n in ONCE_FAMILIES.items():
        c = ONCE_C[name]
        ids = _ONCE_IDS[name]
        label = f"BWD-{name}-small-once"
        r = ONCE_CAP_R[name]
        ys = [nonneg_real(f"bwdo_Y{f}", f"the {f} products whose useful instance lies in a segment")
              for f in ("S", "dK", "dQ", "dP", "dV")]
        pairs = [(uq, uk), (uq, uzk), (uzq, uk), (uo, uv), (uo, uzv)]
        if name == "four":
            ys, pairs = ys[1:], pairs[1:]
        out += [
            imp(f"form.{name}", f"Φ ≤ ({c})·(u_q² + u_k² + u_zQ² + u_zK² + u_o² + u_v² + u_zV²) for u ≥ 0 "
                f"(the largest eigenvalue of Φ is {'φ/2 ≈ 0.80902' if name == 'five' else '√2/2 ≈ 0.70711'})", (),
                once_phi(name) <= c * sum_sq, "step-8", ids, label),
            imp(f"merge.{name}", f"the {n} families: Y_f ≤ u_a·u_b·g each (backward.once.root), Z = Σ_f Y_f ⇒ Z ≤ g·Φ",
                (*(yf <= a * b * og for yf, (a, b) in zip(ys, pairs, strict=True)), eq(oZ, sum(ys[1:], ys[0]))),
                oZ <= og * once_phi(name), "step-8", ids, label),
            imp(f"square.{name}", f"Z ≤ g·Φ, Φ ≤ ({c})·S₂, S₂ ≤ s′, F₃ = g² ⇒ Z² ≤ ({c})²·s′²·F₃",
                (oZ <= og * ophi, ophi <= c * oS2, oS2 <= osp, eq(oF, og * og)), sq(oZ) <= c * c * sq(osp) * oF,
                "step-8", ids, label),
            imp(f"cubic.{name}", f"cubic maximum: 0 < κ, Z² ≤ ({c})²s′²F₃, F₃ ≤ K − κs′ ⇒ 27κ²Z² ≤ 4({c})²K³ "
                "(the maximum over s′ is at s′ = 2K/(3κ))",
                (okap > 0, sq(oZ) <= c * c * sq(osp) * oF, oF <= oK - okap * osp),
                27 * sq(okap) * sq(oZ) <= 4 * c * c * oK**3, "step-11", (ids[0],), label),
            imp(f"segment.{name}", f"R = 3M (K = 5M, κ = 1 − M/d²), M ≤ d²: 27κ²Z² ≤ 4({c})²(5M)³ ⇒ "
                f"κ·Z ≤ 2({c})(54/25)·M√M", (*BASE, M <= d**2, 27 * sq(kappa) * sq(oZ) <= 4 * c * c * (5 * M) ** 3),
                kappa * oZ <= 2 * c * Fraction(54, 25) * M * sqrt(M), "step-11", (ids[0],), label),
            imp(f"rearrange.{name}", f"{n}N²d products: κ·{n}N²d ≤ h·2({c})(54/25)·M√M and Q ≥ 3M(h − 1) ⇒ "
                f"Q ≥ ({coeffs[name]})(1 − M/d²)·N²d/√M − 3M (κ = 1 − M/d², M ≤ d²)",
                (*BASE, M <= d**2, kappa * n * N**2 * d <= hs * 2 * c * Fraction(54, 25) * M * sqrt(M),
                 Qs >= 3 * M * (hs - 1)),
                Qs >= coeffs[name] * kappa * N**2 * d / sqrt(M) - 3 * M, "step-12", (ids[0],), label),
            imp(f"cap.cubic.{name}", f"cap form, R = 2M (X = (16 + 9M/d²)/4): Z² ≤ ({c})²s′²F, 0 ≤ F ≤ XM − s′ ⇒ "
                f"27Z² ≤ 4({c})²X³M³ (the maximum over s′ is at s′ = 2XM/3)",
                (*BASE, sq(oZ) <= c * c * sq(osp) * oF, oF <= ONCE_W / 4 * M - osp),
                27 * sq(oZ) <= 4 * c * c * (ONCE_W / 4 * M) ** 3, "cap", (ids[1],), label + "-cap"),
            imp(f"cap.segment.{name}", f"27Z² ≤ 4({c})²X³M³ ⇒ Z ≤ ({r})·X√X·M√M (4({c})²/27 ≤ ({r})²; X = (16 + 9M/d²)/4)",
                (*BASE, 27 * sq(oZ) <= 4 * c * c * (ONCE_W / 4 * M) ** 3),
                oZ <= r * (ONCE_W / 4) * sqrt(ONCE_W / 4) * M * sqrt(M), "cap", (ids[1],), label + "-cap"),
            imp(f"cap.rearrange.{name}", f"{n}N²d ≤ h·({r})·X√X·M√M and Q ≥ 2M(h − 1) ⇒ "
                f"Q ≥ {cap_coeffs[name]}·N²d/(√M·(16 + 9M/d²)^(3/2)) − 2M",
                (*BASE, n * N**2 * d <= hs * r * (ONCE_W / 4) * sqrt(ONCE_W / 4) * M * sqrt(M), Qs >= 2 * M * (hs - 1)),
                Qs >= cap_coeffs[name] * N**2 * d / (sqrt(M) * ONCE_W * sqrt(ONCE_W)) - 2 * M, "cap", (ids[1],),
                label + "-cap"),
        ]
    return out


ONCE_LEAD4: Expr = 4 * N**2 * d / sqrt(M)  # BWD-four-small-once(-cap) and BWD-five-small-once-cap ≤ it where M ≤ d²
ONCE_LEAD5: Expr = Fraction(3125, 729) * N**2 * d / sqrt(M)  # BWD-five-small-once ≤ it (and ONCE_LEAD4 ≤ it)
ONCE_PURE5: Expr = Fraction(3125, 729) * (1 - M / d**2) * N**2 * d / sqrt(M)  # BWD-five-small-once without its −3M
_t = nonneg_real("bwdo_t", "√M, as a symbol (t² = M)")
ONCE_PURE5_T: Expr = Fraction(3125, 729) * (1 - M / d**2) * N**2 * d / _t  # the same with √M as the symbol t


def once_consistency_claims() -> list[Implication]:
    """The charged-once bounds ≤ every covered backward exact cost where M ≤ d² and the schedule runs
    (docs/bounds/backward-once.md#consistency): BWD-five-small-once ≤ 4N²d²/M (its (1 − M/d²) keeps it there), the
    other three ≤ 4N²d/√M ≤ 4N²d²/M (√M ≤ d), then ``backward.small.consistency.<schedule>`` (4N²d²/M ≤ cost) for
    the schedules linked "via" there; flash1-bwd where M ≤ 4d: ≤ (3125/729)·N²d/√M ≤ its cost; standard-bwd:
    4N²d/√M ≤ its cost; square tiles: cost ≥ 5N²d/B with backward-small.md's .tile and .tiles (B ≥ 1, 3B² ≤ M),
    then 5√3 ≥ 4."""
    from attnio.bounds.backward import (
        BWD_FIVE_SMALL_ONCE,
        BWD_FIVE_SMALL_ONCE_CAP,
        BWD_FOUR_SMALL_ONCE,
        BWD_FOUR_SMALL_ONCE_CAP,
        COVERS,
        ONCE_SMALL,
    )

    reg = (*BASE, M <= d**2)
    lead4 = (BWD_FIVE_SMALL_ONCE_CAP, BWD_FOUR_SMALL_ONCE, BWD_FOUR_SMALL_ONCE_CAP)
    every = (BWD_FOUR_SMALL_ONCE.id, BWD_FOUR_SMALL_ONCE_CAP.id)
    out: list[Link] = [
        relax("backward.once.relax.five", BWD_FIVE_SMALL_ONCE, ONCE_PURE5,
              f"{BWD_FIVE_SMALL_ONCE.id} ≤ (3125/729)(1 − M/d²)·N²d/√M where M ≤ d²", base=reg),
        Link("backward.once.pure_large", "(3125/729)(1 − M/d²)·N²d/t ≤ 4N²d²/M where M ≤ d², t = √M as a symbol (t ≥ 0, t² = M): "
             "(3125/729)(1 − t²/d²)·t ≤ 4d, its maximum is (3125/729)·2d/(3√3) ≈ 1.65d; then "
             "backward.small.consistency.<schedule>", (*reg, eq(_t * _t, M)),
             ONCE_PURE5_T <= 4 * UNIT, (BWD_FIVE_SMALL_ONCE.id,)),
        relax("backward.once.relax.five.lead", BWD_FIVE_SMALL_ONCE, ONCE_LEAD5,
              f"{BWD_FIVE_SMALL_ONCE.id} ≤ (3125/729)·N²d/√M where M ≤ d² (flash1-bwd's one-row link)", base=reg),
        *(relax(f"backward.once.relax.{tag}", b, ONCE_LEAD4, f"{b.id} ≤ 4N²d/√M where M ≤ d²", base=reg)
          for tag, b in zip(("five-cap", "four", "four-cap"), lead4, strict=True)),
        Link("backward.once.via_large", "4N²d/√M ≤ 4N²d²/M where M ≤ d² (√M ≤ d; then "
             "backward.small.consistency.<schedule>)", reg, ONCE_LEAD4 <= 4 * UNIT, tuple(b.id for b in lead4)),
        Link("backward.once.lead", "4N²d/√M ≤ (3125/729)·N²d/√M (flash1-bwd's one-row link)", reg,
             ONCE_LEAD4 <= ONCE_LEAD5, tuple(b.id for b in lead4)),
        Link("backward.once.stream_amgm", "B ≥ 1, B² ≤ M, io ≥ 5N²d/B ⇒ io ≥ 4N²d/√M (streamed output tiles, with "
             "their .phase5, .tile and .side links)", (*BASE, tile >= 1, tile * tile <= M, io_ >= 5 * N**2 * d / tile),
             ONCE_LEAD4 <= io_, every),
        Link("backward.once.tiles_amgm", "B ≥ 1, 3B² ≤ M, io ≥ 5N²d/B ⇒ io ≥ 4N²d/√M (5N²d/B ≥ 5√3·N²d/√M; square "
             "tiles, with their .phase5, .tile and .tiles links)",
             (*BASE, tile >= 1, 3 * tile * tile <= M, io_ >= 5 * N**2 * d / tile), ONCE_LEAD4 <= io_, every),
    ]
    for name, f in _formulas().items():
        how = SMALL_LINK[name]
        covers = tuple(sorted(i for i in ONCE_SMALL if name in COVERS[i]))
        if how == "split":
            out.append(to_cost(f"backward.once.consistency.{name}.one-row", name, f, ONCE_LEAD5,
                               f"(3125/729)·N²d/√M ≤ exact cost where M ≤ min(4d, d²) ({name}; d_v = d)", base=reg,
                               extra=(M <= 4 * d,), covers=covers))
        elif how == "direct":
            out.append(to_cost(f"backward.once.consistency.{name}", name, f, ONCE_LEAD4,
                               f"4N²d/√M ≤ exact cost where M ≤ d² ({name}; d_v = d)", base=reg, covers=covers))
        elif how == "tiles":
            out.append(to_cost(f"backward.once.consistency.{name}.phase5", name, f, 5 * N**2 * d / f.blocks["B"],
                               f"5N²d/B ≤ exact cost where M ≤ d² (the K/V/Q/dO tiles are read ⌈N/B⌉ times in five "
                               f"of its passes; {name}; d_v = d)", base=reg, covers=covers))
    return chain(out, ONCE_DOC + "#consistency")

DV_LINK = 11  # the middle of the consistency chain: BWD-slots-dv[-x] ≤ 11N²d²/M ≤ every covered exact cost

def dv_consistency_claims() -> list[Implication]:
    """BWD-slots-dv (M ≥ 10d²) and BWD-slots-dv-x (M ≥ 4d²) ≤ the exact cost of every backward schedule they cover,
    each as a two-link chain through 11N²d²/M (the bounds' leading constant 200/19 ≈ 10.53 is above the 9 of
    BWD-slots' chain); the two-pass schedule pass by pass, with backward.slots.consistency.flash2-2pass-bwd.io."""
    from attnio.bounds.backward import BWD_SLOTS_DV, BWD_SLOTS_DV_X, COVERS

    doc = DV_DOC + "#consistency"
    link = DV_LINK * UNIT
    out = []
    for b, tag in ((BWD_SLOTS_DV, ""), (BWD_SLOTS_DV_X, ".x")):
        low = b.regime[0]
        pre = f"backward.slots.dv{tag}"
        out.append(Implication(f"{pre}.relax", "consistency",
                               f"{b.id} ≤ {DV_LINK}N²d²/M where {low} (first link of {b.id} ≤ every covered exact cost)",
                               (*BASE, *b.regime), b.expr <= link, provenance=doc, about=(b.id,)))
        for name, f in _formulas().items():
            if name not in COVERS[b.id]:
                continue
            if name in SLOTS_BY_PASS:
                for p_ in chain(_slots_links_by_pass(name, f, b, tag, low), doc):
                    out.append(dataclasses.replace(p_, id=p_.id.replace(f"backward.slots{tag}.", f"{pre}.")))
                continue
            if name in BY_BLOCKS:
                out += chain(_links_by_blocks(name, f, b, pre, low, DV_LINK), doc)
                continue
            out.append(Implication(f"{pre}.consistency.{name}", "consistency",
                                   f"{DV_LINK}N²d²/M ≤ exact cost of {name} where {low} (second link, with "
                                   f"{pre}.relax; d_v = d)",
                                   (*BASE, *b.regime, *f.valid), link <= f.io, provenance=doc,
                                   about=(b.id, f"exact.{name}")))
    out.append(Implication(
        "backward.slots.dv.two_pass_sum", "consistency",
        f"T_c·M ≥ 4Nd, T_r2·M ≥ 3Nd and io = 2Nd·T_c + 2Nd·T_r2 + 9Nd + 3N + 2N·T_c (T_c, T_r2 ≥ 0) ⇒ "
        f"io ≥ {DV_LINK}N²d²/M (the last step of the pass-by-pass second link of BWD-slots-dv and BWD-slots-dv-x)",
        (*BASE, _t1 * M >= 4 * N * d, _t2 * M >= 3 * N * d,
         eq(_io2, 2 * N * d * _t1 + 2 * N * d * _t2 + 9 * N * d + 3 * N + 2 * N * _t1)),
        link <= _io2, provenance=doc, about=(BWD_SLOTS_DV.id, BWD_SLOTS_DV_X.id)))
    return out


def claims() -> list[Claim]:
    return (
        step_claims()
        + small_cache_step_claims()
        + slots_step_claims()
        + slots_x_step_claims()
        + slots_consistency_claims()
        + consistency_claims()
        + small_cache_consistency_claims()
        + lift_step_claims()
        + near_step_claims()
        + lift_consistency_claims()
        + near_consistency_claims()
        + once_step_claims()
        + once_consistency_claims()
        + tightest_claims()
        + crossover_claims()
        + exact_crossover_claims()
        + training_claims()
        + dv_step_claims()
        + dv_consistency_claims()
    )


CLAIMS: list[Claim] = claims()
