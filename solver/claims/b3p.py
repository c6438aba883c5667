"""Step claims of B3 with pair counts, B3_P (derived here, refereed)
(docs/bounds/b3p.md; catalog ``workloads.b3.rect``, ``workloads.b3.causal``).

B3_P is B3's proof (docs/bounds/b3.md) with two counts generalised: the P·d products of the unmasked pairs in place
of the N²·d products (steps 8 and 13), and the L output slots (final writes) in place of the N·d slots (steps 10
and 12). Steps 1–11 are per segment and do not use N: they are B3's claims ``constants.b3.amgm4``,
``.lw_to_T2``, ``.type2``, ``.square_term``. The three claims here are steps 12 and 13 over symbols P, L of their
own: they hold for every real P, L ≥ 0, not only P = N², L = Nd. :func:`consistency_claims` adds, for every
rectangular workload formula, unit count ≥ B3_P per unit without its non-positive terms; :func:`causal_consistency_claims`
the same for every causal one, as last links of the pair-count chains of solver/claims/workloads.py.
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.symbols import M, d, sym
from attnio.solver.claims.build import PAIR_BASE, Link, chain, claims_for, sq
from attnio.solver.claims.constants import SU, Q, R, S, Z, f, h
from attnio.solver.claims.types import Implication

DOC = "docs/bounds/b3p.md"
ABOUT = ("workloads.b3.rect", "workloads.b3.causal")

# P and L as real symbols of their own (the catalog's P is an expression in N_q, N_kv; L = N_q·d).
Pp = sym("b3p_P", integer=False, lo=0, doc="pairs whose products the accumulation trees contain (unmasked pairs)")
Ls = sym("b3p_L", integer=False, lo=0, doc="output slots (i, ℓ'), one final write each")

# Step 13, middle of the chain: the number of segments h after S, f and ΣU are eliminated (R = M).
SEGMENTS = 16 * Pp * d**2 <= h * (4 * M**2 + 64 * d**4) + 6 * M * Ls


_claim = claims_for("workloads.b3p", DOC, label="B3_P", about=ABOUT)


CLAIMS: list[Implication] = [
    _claim(
        "sum",
        "Σ_t: S ≤ h(M+R)² + (3M+2R+f)Σz + (M+R+f)ΣU and Σz ≤ L − ΣU/2 ⇒ S ≤ h(M+R)² + (3M+2R+f)L + (f − M)ΣU/2 "
        "(B3 step 12 with L output slots in place of Nd)",
        (
            *PAIR_BASE,
            S <= h * sq(M + R) + (3 * M + 2 * R + f) * (Z - SU) + (M + R + f) * SU,
            Z - SU <= Ls - SU / 2,
        ),
        S <= h * sq(M + R) + (3 * M + 2 * R + f) * Ls + (f - M) * SU / 2,
        doc=f"{DOC}#step-12",
    ),
    _claim(
        "eliminate",
        "R = M: P·d ≤ S/(16d) + 4d³h, S ≤ h(2M)² + (5M + f)L + (f − M)ΣU/2, f ≤ M "
        "⇒ 16P·d² ≤ h(4M² + 64d⁴) + 6·M·L (first link of step 13)",
        (
            *PAIR_BASE,
            Pp * d <= S / (16 * d) + 4 * d**3 * h,
            S <= h * sq(2 * M) + (5 * M + f) * Ls + (f - M) * SU / 2,
            f <= M,
        ),
        SEGMENTS,
        doc=f"{DOC}#step-13",
    ),
    _claim(
        "rearrange",
        "16P·d² ≤ h(4M² + 64d⁴) + 6·M·L (workloads.b3p.eliminate), Q ≥ M(h − 1) "
        "⇒ Q ≥ M(4P·d² − 1.5·M·L)/(M² + 16d⁴) − M",
        (*PAIR_BASE, SEGMENTS, Q >= M * (h - 1)),
        Q >= M * (4 * Pp * d**2 - Fraction(3, 2) * M * Ls) / (M**2 + 16 * d**4) - M,
        doc=f"{DOC}#step-13",
    ),
]



def consistency_claims() -> list[Implication]:
    """Every rectangular workload unit count (d_v = d) ≥ g·4P·d²·M/(M² + 16d⁴) (g query heads in the unit), i.e.
    B3_P per unit without its −1.5·M·L and −M terms, both ≤ 0: summed over the units the workload's count is ≥
    batch·H·(expression + M) − M = workload_value(workloads.b3.rect). Stated with the denominator multiplied out.
    The causal formulas: causal_consistency_claims()."""
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
        out.append(Link(
            f"workloads.b3p.consistency.{alg}.{sched}",
            f"{fm.algorithm}'s unit count (d_v = d)·(M² + 16d⁴) ≥ {units_g}·4P·d²·M, P = N_q·N_kv: "
            "B3_P per unit without its non-positive terms −1.5·M·L and −M",
            (*PAIR_BASE, g >= 1, Nq >= 1, Nkv >= 1, *(substitute_rel(r, sub) for r in fm.valid)),
            substitute(fm.io, sub) * (M**2 + 16 * d**4) >= units_g * 4 * PAIRS_RECT * d**2 * M,
            (ABOUT[0],)))
    return chain(out, f"{DOC}#consistency-and-numbers", label="B3_P")


CLAIMS += consistency_claims()


def causal_consistency_claims() -> list[Implication]:
    """Every causal workload unit count (d_v = d) ≥ g·4P·d²·M/(M² + 16d⁴), P = N_q(N_q + 1)/2 + N_q·δ: B3_P per unit
    without its non-positive terms, as for the rectangular formulas (docs/bounds/b3p.md#consistency-and-numbers).
    Direct claims on the causal formulas are beyond z3 (solver/claims/workloads.py NO_Z3), so each is the last link
    of a chain whose other links are the pair-count chains of solver/claims/workloads.py:

    flash2 (per-head g = 1, grouped g): ``workloads.causal.chain.blocks.<sched>.*`` (the formula is the unit
    expression at T = T_r, B = B_r, and its blocks satisfy T ≥ 1, B·T ≥ N_q, a ≥ 1, a·T ≥ N_q,
    d + g·a(2d + 4) ≤ M), ``workloads.causal.chain.kv`` (unit ≥ d·N_q(T + 1) + 2d·T·δ) and ``.passes``
    (T·M ≥ 2g·N_q·d); then ``.flash2.kv`` here: that K/V traffic is ≥ 4g·P·d²/M (a ≥ 1 gives M ≥ 2g·d, which
    pays the diagonal's N_q/2 extra pairs), and ``.flash2.unit``: unit ≥ it gives the B3_P term.
    flash1-fit: ``workloads.causal.count.flash1-fit``, ``workloads.causal.blocks.flash1-fit.*`` and
    ``workloads.causal.rows.pairs.*`` (R·B ≥ P, B ≤ c, c(2d + 1) ≤ M), then ``.flash1-fit`` here.
    standard, square tiling: ``workloads.causal.count.<alg>``, ``workloads.causal.blocks.<alg>.*`` and
    ``workloads.causal.tiles.area`` (score entries ≥ P), then ``.<alg>`` here (B3_P per head ≤ P/2)."""
    from attnio.bounds.symbols import Nkv, Nq, g
    from attnio.bounds.workloads import PAIRS_CAUSAL as P
    # The chains' symbols (solver/claims/workloads.py declares the same ones): integers ≥ 1, then reals ≥ 0.
    T, B, a, Cs, Tv = (sym(n, doc=doc) for n, doc in (
        ("wl_T", "Q blocks per head (T_r)"), ("wl_B", "query positions per Q block (B_r)"),
        ("wl_a", "query positions a Q block can hold per head (a_g)"), ("wl_c", "K/V rows a block may hold (the block rule's c)"),
        ("wl_Tv", "⌈d_v/b⌉ (standard, square tiling)")))
    R, Qr, A, Ar = (sym(n, integer=False, lo=0, doc=doc) for n, doc in (
        ("wl_R", "query rows one head visits over all K/V blocks"), ("wl_Qr", "Q words read (causal standard, square tiling)"),
        ("wl_A", "K/V rows read (causal standard, square tiling)"), ("wl_Ar", "score entries (causal standard, square tiling)")))
    delta = Nkv - Nq
    base = (d >= 1, M >= 1, Nq >= 1, Nq <= Nkv)

    kv = d * Nq * (T + 1) + 2 * d * T * delta  # workloads.causal.chain.kv's lower bound on the unit count
    U = sym("b3p_U", integer=False, lo=0, doc="a workload schedule's unit count (words)")
    K = sym("b3p_K", integer=False, lo=0, doc="a lower bound on that unit count (words)")
    unit1 = 2 * d * Nkv + R * (2 * d + 2) + Nq * (d + 2) + R * (d + 2)  # flash1-fit, d_v = d
    units = {
        "standard": Qr + 2 * d * A + 2 * Ar + Tv * Ar + 2 * Ar + Nq * d,
        "square_tiling": Qr + 2 * d * A + Nq + Tv * Ar + Ar + Nq + Nq * d,
    }
    id_ = "workloads.b3p.consistency.causal"
    causal = (ABOUT[1],)
    out = [
        Link(f"{id_}.flash2.kv",
             "causal flash2, link 1 (d_v = d): a ≥ 1, d + g·a(2d + 4) ≤ M and T·M ≥ 2g·N_q·d "
             "(workloads.causal.chain.passes) give (d·N_q(T + 1) + 2d·T·δ)·M ≥ 4g·P·d², "
             "P = N_q(N_q + 1)/2 + N_q·δ: the K/V traffic alone is twice B2_P's term.",
             (*base, g >= 1, T >= 1, a >= 1, d + g * a * (2 * d + 4) <= M, T * M >= 2 * g * Nq * d),
             kv * M >= 4 * g * P * d**2, causal),
        Link(f"{id_}.flash2.unit",
             "causal flash2, link 2 (d_v = d): a unit count U ≥ K (workloads.causal.chain.kv: the count at T, B "
             "with B·T ≥ N_q is ≥ K = d·N_q(T + 1) + 2d·T·δ) with K·M ≥ 4g·P·d² (.flash2.kv) has "
             "U·(M² + 16d⁴) ≥ g·4P·d²·M (B3_P per unit without its non-positive terms); with "
             "workloads.causal.chain.blocks.* U is the formula's count, per-head (g = 1) and grouped.",
             (*base, g >= 1, U >= K, K * M >= 4 * g * P * d**2),
             U * (M**2 + 16 * d**4) >= g * 4 * P * d**2 * M, causal),
        Link(f"{id_}.flash1-fit",
             "causal flash1-fit, link 1 (d_v = d): R·B ≥ P (workloads.causal.rows.pairs.*), B ≤ c and "
             "c(2d + 1) ≤ M (workloads.causal.blocks.flash1-fit.*) give the count·(M² + 16d⁴) ≥ 4P·d²·M; with "
             "workloads.causal.count.flash1-fit the formula's count.",
             (*base, R >= 0, B >= 1, R * B >= P, B <= Cs, Cs * (2 * d + 1) <= M),
             unit1 * (M**2 + 16 * d**4) >= 4 * P * d**2 * M, causal),
    ]
    out += [
        Link(f"{id_}.{alg}",
             f"causal {alg}, link 1 (d_v = d): score entries Ar ≥ P (workloads.causal.tiles.area), T_v ≥ 1 "
             "give the count·(M² + 16d⁴) ≥ 4P·d²·M (B3_P per head is ≤ P/2, as M² + 16d⁴ ≥ 8M·d²); with "
             f"workloads.causal.count.{alg} the formula's count.",
             (*base, Qr >= 0, A >= 0, Ar >= P, Tv >= 1),
             unit * (M**2 + 16 * d**4) >= 4 * P * d**2 * M, causal)
        for alg, unit in units.items()
    ]
    return chain(out, f"{DOC}#consistency-and-numbers", kind="derivation", label="B3_P")


CLAIMS += causal_consistency_claims()
