"""Step claims of the bounds derived in the third round (not refereed): B3 with pair counts, B3_P
(docs/bounds/b3p.md; catalog ``workloads.b3.rect``, ``workloads.b3.causal``).

B3_P is B3's proof (docs/bounds/b3.md) with two counts generalised: the P·d products of the unmasked pairs in place
of the N²·d products (steps 8 and 13), and the L output slots (final writes) in place of the N·d slots (steps 10
and 12). Steps 1–11 are per segment and do not use N: they are B3's claims ``constants.b3.amgm4``,
``.lw_to_T2``, ``.type2``, ``.square_term``. The three claims here are steps 12 and 13 over symbols P, L of their
own: they hold for every real P, L ≥ 0, not only P = N², L = Nd. :func:`consistency_claims` adds, for every
rectangular workload formula, unit count ≥ B3_P per unit without its non-positive terms.
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.constants import PROOF_STEPS as B3_STEPS
from attnio.bounds.expr import Expr
from attnio.bounds.symbols import M, d, sym
from attnio.solver.claim_types import Implication
from attnio.solver.claims_constants import SU, Q, R, S, Z, f, h

DOC = "docs/bounds/b3p.md"
ABOUT = ("workloads.b3.rect", "workloads.b3.causal")

# P and L as real symbols of their own (the catalog's P is an expression in N_q, N_kv; L = N_q·d).
Pp = sym("b3p_P", integer=False, lo=0, doc="pairs whose products the accumulation trees contain (unmasked pairs)")
Ls = sym("b3p_L", integer=False, lo=0, doc="output slots (i, ℓ'), one final write each")

_BASE = (d >= 1, M >= 1)


def _sq(e: Expr) -> Expr:
    return e * e


# Step 13, middle of the chain: the number of segments h after S, f and ΣU are eliminated (R = M).
SEGMENTS = 16 * Pp * d**2 <= h * (4 * M**2 + 64 * d**4) + 6 * M * Ls


def _claim(id_: str, statement: str, hyps: tuple, goal: object, step: int) -> Implication:
    return Implication(f"bounds_v3.b3p.{id_}", "derivation", f"[B3_P] {statement}", hyps, goal,  # type: ignore[arg-type]
                       provenance=f"{DOC}#step-{step}", about=ABOUT)


CLAIMS: list[Implication] = [
    _claim(
        "sum",
        "Σ_t: S ≤ h(M+R)² + (3M+2R+f)Σz + (M+R+f)ΣU and Σz ≤ L − ΣU/2 ⇒ S ≤ h(M+R)² + (3M+2R+f)L + (f − M)ΣU/2 "
        "(B3 step 12 with L output slots in place of Nd)",
        (
            *_BASE,
            S <= h * _sq(M + R) + (3 * M + 2 * R + f) * (Z - SU) + (M + R + f) * SU,
            Z - SU <= Ls - SU / 2,
        ),
        S <= h * _sq(M + R) + (3 * M + 2 * R + f) * Ls + (f - M) * SU / 2,
        12,
    ),
    _claim(
        "eliminate",
        "R = M: P·d ≤ S/(16d) + 4d³h, S ≤ h(2M)² + (5M + f)L + (f − M)ΣU/2, f ≤ M "
        "⇒ 16P·d² ≤ h(4M² + 64d⁴) + 6·M·L (first link of step 13)",
        (
            *_BASE,
            Pp * d <= S / (16 * d) + 4 * d**3 * h,
            S <= h * _sq(2 * M) + (5 * M + f) * Ls + (f - M) * SU / 2,
            f <= M,
        ),
        SEGMENTS,
        13,
    ),
    _claim(
        "rearrange",
        "16P·d² ≤ h(4M² + 64d⁴) + 6·M·L (bounds_v3.b3p.eliminate), Q ≥ M(h − 1) "
        "⇒ Q ≥ M(4P·d² − 1.5·M·L)/(M² + 16d⁴) − M",
        (*_BASE, SEGMENTS, Q >= M * (h - 1)),
        Q >= M * (4 * Pp * d**2 - Fraction(3, 2) * M * Ls) / (M**2 + 16 * d**4) - M,
        13,
    ),
]



def consistency_claims() -> list[Implication]:
    """Every rectangular workload unit count (d_v = d) ≥ g·4P·d²·M/(M² + 16d⁴) (g query heads in the unit), i.e.
    B3_P per unit without its −1.5·M·L and −M terms, both ≤ 0: summed over the units the workload's count is ≥
    batch·H·(expression + M) − M = workload_value(workloads.b3.rect). Stated with the denominator multiplied out.
    The causal formulas are not claimed (measured: tests/test_bound_falsification.py)."""
    from attnio.bounds.costs import WORKLOAD_FORMULAS
    from attnio.bounds.expr import substitute, substitute_rel
    from attnio.bounds.symbols import Nkv, Nq, dv, g
    from attnio.bounds.workloads import PAIRS_RECT

    out = []
    for (alg, sched, causal), fm in sorted(WORKLOAD_FORMULAS.items()):
        if causal or alg == "flash1":  # flash1's published blocks exceed M (audit mode)
            continue
        sub = {dv: d}
        units_g = g if sched == "grouped" else 1
        out.append(
            Implication(
                f"bounds_v3.b3p.consistency.{alg}.{sched}",
                "consistency",
                f"[B3_P] {fm.algorithm}'s unit count (d_v = d)·(M² + 16d⁴) ≥ {units_g}·4P·d²·M, P = N_q·N_kv: "
                "B3_P per unit without its non-positive terms −1.5·M·L and −M",
                (*_BASE, g >= 1, Nq >= 1, Nkv >= 1, *(substitute_rel(r, sub) for r in fm.valid)),
                substitute(fm.io, sub) * (M**2 + 16 * d**4) >= units_g * 4 * PAIRS_RECT * d**2 * M,
                provenance=f"{DOC}#consistency-and-numbers",
                about=(ABOUT[0],),
            )
        )
    return out


CLAIMS += consistency_claims()

# Which proof steps are machine-checked (docs/bounds/b3p.md numbers the same steps as b3.md): B3's steps 1–11, then
# steps 12 and 13 on P and L.
PROOF_STEPS: list[tuple[int, str]] = [st for st in B3_STEPS["constants.b3"] if st[0] <= 11] + [
    (12, "bounds_v3.b3p.sum"),
    (13, "bounds_v3.b3p.eliminate"),
    (13, "bounds_v3.b3p.rearrange"),
]
