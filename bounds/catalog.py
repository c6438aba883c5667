"""The bounds catalog: every closed-form I/O bound of the seed papers, encoded once, with regime and provenance.

Sources (theorem numbers are those of the versions read):

- Dao, Fu, Ermon, Rudra, Ré, *FlashAttention*, arXiv 2205.14135: Thm 2, Prop 3, Thm 5 ("FA");
- Saha & Ye, *The I/O Complexity of Attention, or How Optimal is FlashAttention?*, arXiv 2402.07443 v1
  (ICML 2024): Thm 3.1, Lemmas 3.3/3.4, Thm 3.5, Lemma 3.6, Thm 3.7, Thm 4.8, Thm 4.14, Lemmas 4.15–4.16,
  Thm 4.17 ("SY");
- Hong & Kung 1981 (via SY Lemma 3.6); Smith, Lowery, Langou, van de Geijn, arXiv 1702.02017;
- Li, Liang, Shi, Song, Zhou, arXiv 2410.09397 (backward pass).

Entries marked ``explicit`` are true inequalities with explicit constants (the solver checks them against
every exact cost); the others are asymptotic only (Θ/Ω/O: the solver checks only their shape identities).
``exact.<name>`` entries are generated from :data:`bounds.costs.FORMULAS`, so a new formula appears here by
itself. :func:`all_bounds` also gathers ``BOUNDS`` of :mod:`attnio.bounds.constants` (explicit constants) and
:mod:`attnio.bounds.approx` (approximate attention) and :mod:`attnio.bounds.workloads` (N_q ≠ N_kv, causal, grouped heads).

The regimes are defined here, once (:data:`SMALL`, :data:`LARGE`, :data:`FA_REGIME`, :data:`BEYOND` and the
partition :data:`CACHE_REGIMES` a reader thinks in); the solver's claims and the report import them.
Links are data: each bound lists the algorithms that attain it (``attained_by``), and each claim lists the
bounds it is about (``about``, in :mod:`attnio.solver.claims.types`).

>>> ids = [b.id for b in all_bounds()]
>>> "sy.lemma3.4.explicit" in ids and "trivial.4Nd" in ids and "exact.flash2" in ids
True
>>> len(ids) == len(set(ids))
True
"""

from __future__ import annotations

import functools
from fractions import Fraction

from attnio.bounds import approx, backward, constants, distributed, workloads
from attnio.bounds.costs import BACKWARD_FORMULAS, FORMULAS, CostFormula
from attnio.bounds.expr import Expr, Rel, free_symbols, log2, minimum, sqrt
from attnio.bounds.symbols import M, N, d, dv, sym
from attnio.bounds.types import (
    ANY_ALGORITHM,
    ANY_BINARY,
    ANY_FINITE_FIELD,
    CDAG_BACKWARD,
    CDAG_MATMUL,
    CDAG_QK,
    Bound,
)
from attnio.core.errors import InvalidParameter

# Matrix-multiplication dimensions (A is m×k, B is k×n), and the opaque I/O complexities of rectangular matrix
# multiplication used by SY Lemmas 4.15–4.17 (not closed forms: functions of M only known asymptotically).
m_ = sym("m", doc="rows of A in C = A·B")
k_ = sym("k", doc="inner dimension of C = A·B")
n_ = sym("n", doc="columns of B in C = A·B")
QmmNdN = sym("QmmNdN", integer=False, lo=0, doc="I/O complexity of multiplying N×d by d×N with cache M")
QmmNNd = sym("QmmNNd", integer=False, lo=0, doc="I/O complexity of multiplying N×N by N×d with cache M")
sparsity = sym("s", integer=False, lo=0, doc="fraction of non-zero blocks of a block-sparsity mask (0 < s ≤ 1)")

SY = "Saha & Ye, arXiv 2402.07443 v1 (ICML 2024)"
FA = "Dao et al., FlashAttention, arXiv 2205.14135"
LI = "Li, Liang, Shi, Song, Zhou, arXiv 2410.09397"
SMITH = "Smith, Lowery, Langou, van de Geijn, arXiv 1702.02017"

STD = "standard matrix multiplication (QKᵀ and PV by Σ-products; recomputation allowed)"
ANY_Q = "any algorithm computing every entry of QKᵀ, entries in F_q with q > N (fast matrix multiplication allowed)"
BIN = "any algorithm computing every entry of QKᵀ, binary entries (fast matrix multiplication allowed)"
EXACT_ANY = "any exact attention algorithm (inputs start and outputs end in slow memory)"

# The two shapes of Saha–Ye Thm 3.1: small cache N²d/√M, large cache N²d²/M (they meet at M = d²).
SY_SMALL = N**2 * d / sqrt(M)
SY_LARGE = N**2 * d**2 / M

# The standard "scalar" (d ≤ M ≤ Nd) regime of FlashAttention Thm 2.
FA_REGIME = (d <= M, M <= N * d)
# Saha–Ye's small cache (closed at M = d², where both shapes are equal) and large cache.
SMALL = (M <= d**2,)
LARGE = (d**2 <= M, M <= N * d)
# Fast memory larger than one input matrix: the trivial 4Nd decides.
BEYOND = (N * d < M,)

# The cache regimes a reader thinks in, as a partition of all (N, d, M) with d ≤ N (claim
# coverage.sy-regimes proves it): (name, how it reads, relations).
CACHE_REGIMES: tuple[tuple[str, str, tuple[Rel, ...]], ...] = (
    ("small cache", "M < d²", (M < d**2,)),
    ("large cache", "d² ≤ M ≤ Nd", LARGE),
    ("beyond", "M > Nd", BEYOND),
)

# Bounds that are explicit but are not I/O counts of attention (excluded from I/O consistency claims).
NOT_IO = frozenset({"sy.lemma3.3.explicit"})


# Why the entries in terms of Q_MM(·)(M) have no claim (sy.lemma4.15, sy.lemma4.16, sy.thm4.17).
QMM_OPAQUE = (
    "Q_MM(·)(M), the I/O complexity of rectangular matrix multiplication, is known only up to constants (an opaque "
    "symbol here): there is no closed form to check an exact cost or an explicit bound against."
)


def _paper(**kw) -> Bound:
    """A hand-written entry: a paper's statement (``status="paper"``) and asymptotic only (``explicit=False``,
    ``constant=None``) unless the entry says otherwise."""
    kw.setdefault("status", "paper")
    kw.setdefault("explicit", False)
    kw.setdefault("constant", None)
    return Bound(**kw)


def seed_bounds() -> list[Bound]:
    """The literature entries (hand-written, one per theorem) and the derived trivial bound."""
    sy_small = SY_SMALL
    sy_large = SY_LARGE
    # Li et al.'s two sides (lower and upper) of one backward-pass statement
    li = dict(regime=(), expr=minimum((N**2 * d**2 + N * d**3) / M, (N**2 * d + N * d**2) / sqrt(M)),
              model="attention backward pass, standard matrix multiplication",
              provenance=f"{LI}, main theorem (abstract level)", computation="backward")
    return [
        # ------------------------------------------------------------------ trivial
        _paper(
            id="trivial.4Nd", kind="lower", regime=(2 <= N,), expr=2 * N * d + 2 * N * dv, model=EXACT_ANY,
            provenance="derived here",
            statement="Every exact attention algorithm moves at least 2Nd + 2N·d_v words (4Nd when d_v = d): it "
            "reads each of the 2Nd words of Q and K and the N·d_v words of V at least once and writes each of the "
            "N·d_v output words at least once (N ≥ 2).",
            explicit=True, constant=Fraction(4), status="derived here (refereed)", cdag=ANY_ALGORITHM,
            doc="docs/bounds/trivial.md", symbols=("N", "d", "M", "dv"),
        ),
        # ------------------------------------------------------------------ FlashAttention
        _paper(
            id="fa.thm2.standard", kind="upper", regime=FA_REGIME, expr=N * d + N**2,
            model="algorithm standard (Dao et al. Algorithm 0)", provenance=f"{FA}, Theorem 2",
            statement="Standard attention (S = QKᵀ and P written to slow memory) makes Θ(Nd + N²) HBM accesses.",
            notes="Θ: also a lower bound for that one algorithm. Asymptotic only.", attained_by=("standard",),
        ),
        _paper(
            id="fa.thm2.flash", kind="upper", regime=FA_REGIME, expr=sy_large,
            model="algorithm flash1 (Dao et al. Algorithm 1)", provenance=f"{FA}, Theorem 2",
            statement="FlashAttention (Algorithm 1) makes Θ(N²d²/M) HBM accesses for d ≤ M ≤ Nd.",
            notes="Θ for that algorithm; its exact count is exact.flash1 (leading constant 12).",
            attained_by=("flash1", "flash1-fit", "flash2"),
        ),
        _paper(
            id="fa.prop3", kind="lower", regime=FA_REGIME, expr=sy_large, model=EXACT_ANY,
            provenance=f"{FA}, Proposition 3",
            statement="No exact attention algorithm makes o(N²d²/M) HBM accesses for all M in [d, Nd].",
            cdag=ANY_ALGORITHM,
            notes="Argued only at M = Θ(Nd), where N²d²/M = Nd and the trivial bound applies; it says nothing "
            "for M ≪ Nd (Saha–Ye answer that).",
            attained_by=("flash2", "kv_stationary", "split_v"),
        ),
        _paper(
            id="fa.prop4", kind="upper", regime=FA_REGIME + (0 < sparsity, sparsity <= 1),
            expr=N * d + N**2 * d**2 * sparsity / M,
            model="algorithm block-sparse FlashAttention (Dao et al. Algorithm 5)",
            provenance=f"{FA}, Proposition 4",
            statement="Block-sparse FlashAttention (a block mask with a fraction s of non-zero blocks) makes "
            "Θ(Nd + N²d²s/M) HBM accesses for d ≤ M ≤ Nd.",
            symbols=("N", "d", "M", "s"),
            notes="attnio's masked FA-2 count in terms of the block mask is bounds/masks.py::flash2_masked_words "
            "(docs/masks.md).",
            asymptotic_only="a Θ statement without constants about an algorithm of unstated block sizes: there is "
            "no explicit inequality to prove; attnio's exact masked count stands beside it (docs/masks.md)",
        ),
        _paper(
            id="fa.thm5.standard-backward", kind="upper", regime=FA_REGIME, expr=N * d + N**2,
            model="algorithm standard backward pass", provenance=f"{FA}, Theorem 5",
            statement="The standard attention backward pass makes Θ(Nd + N²) HBM accesses.",
            computation="backward",
        ),
        _paper(
            id="fa.thm5.flash-backward", kind="upper", regime=FA_REGIME, expr=sy_large,
            model="algorithm FlashAttention backward pass", provenance=f"{FA}, Theorem 5",
            statement="The FlashAttention backward pass makes Θ(N²d²/M) HBM accesses for d ≤ M ≤ Nd.",
            computation="backward",
        ),
        # ------------------------------------------------------------------ Saha–Ye §3 (standard MM)
        _paper(
            id="sy.thm3.1.lower", kind="lower", regime=(M <= N * d,), expr=minimum(sy_small, sy_large),
            model=STD, provenance=f"{SY}, Theorem 3.1",
            statement="With standard matrix multiplication attention needs Ω(min(N²d/√M, N²d²/M)) I/Os.",
            cdag=CDAG_QK,
            notes="The paper states no range of M; it cannot hold for M ≫ Nd (below the trivial 4Nd), so the "
            "regime M ≤ Nd is ours. min = N²d/√M iff M ≤ d² (claim sy.min-branch.*).",
            attained_by=("square_tiling", "flash2"),
        ),
        _paper(
            id="sy.thm3.1.upper", kind="upper", regime=(M <= N * d,), expr=minimum(sy_small, sy_large),
            model=STD, provenance=f"{SY}, Theorem 3.1",
            statement="Attention can be computed with O(min(N²d/√M, N²d²/M)) I/Os (square tiling below d², "
            "FlashAttention above).",
            attained_by=("square_tiling", "flash2"),
        ),
        _paper(
            id="sy.lemma3.3.explicit", kind="upper", regime=(d**2 <= M,), expr=4 * M**2 / d**2 + 4 * M,
            model="count of QKᵀ summation trees met by one part of a 2M-partition (not an I/O count)",
            provenance=f"{SY}, Lemma 3.3 (constant from its proof)",
            statement="One part of a 2M-partition of the attention CDAG meets at most 4M²/d² + 4M of the N² "
            "summation trees of QKᵀ (so O(M²/d) level-1 vertices for M ≥ d²).",
            explicit=True, constant=Fraction(4), status="paper, constant derived here",
            doc="docs/bounds/saha-ye-lemma3.4-explicit.md", symbols=("d", "M"),
        ),
        _paper(
            id="sy.lemma3.4", kind="lower", regime=(d**2 <= M,), expr=sy_large, model=STD,
            provenance=f"{SY}, Lemma 3.4",
            statement="For M = Ω(d²), P(M) = Ω(N²d²/M²) and attention with standard MM needs Ω(N²d²/M) I/Os.",
            attained_by=("flash2",), cdag=CDAG_QK,
        ),
        _paper(
            id="sy.lemma3.4.explicit", kind="lower", regime=(d**2 <= M,), expr=N**2 * d**2 / (8 * M) - M,
            model=STD, provenance=f"{SY}, Lemmas 3.3/3.4 with Hong–Kung Lemma 2.8 (constants from the proof)",
            statement="For M ≥ d², every standard-MM attention calculation makes at least N²d²/(8M) − M I/Os.",
            explicit=True, constant=Fraction(1, 8), slack=-M, status="paper, constant derived here",
            cdag=CDAG_QK, doc="docs/bounds/saha-ye-lemma3.4-explicit.md", attained_by=("flash2",),
        ),
        _paper(
            id="sy.thm3.5", kind="upper", regime=SMALL + (4 <= M,), expr=sy_small,
            model="algorithm square_tiling (Saha–Ye Algorithm 1)", provenance=f"{SY}, Theorem 3.5",
            statement="SquareTilingAttention (Algorithm 1, B = ⌊√(M/4)⌋) computes attention with O(N²d/√M) I/Os, "
            "O(N²d) time and O(Nd + N²) space.",
            notes="Its exact count is exact.square_tiling (≈ 8N²d/√M + N² + Nd + 2N when B divides N and d).",
            attained_by=("square_tiling",),
        ),
        _paper(
            id="sy.lemma3.6.hong-kung", kind="lower", regime=(), expr=m_ * k_ * n_ / sqrt(M),
            model="standard matrix multiplication C = A·B (m×k by k×n)",
            provenance=f"{SY}, Lemma 3.6 (Hong & Kung 1981, Corollary 6.2)",
            statement="Multiplying an m×k by a k×n matrix with the standard algorithm needs Ω(mkn/√M) I/Os.",
            cdag=CDAG_MATMUL, symbols=("m", "k", "n", "M"),
            notes="Asymptotic only. An explicit form needs a precondition on k: see smith.mm.",
            asymptotic_only="Ω(mkn/√M) with no constant and no slack, for matrix multiplication rather than attention: "
            "nothing to check against an exact count; its explicit form is smith.mm, which the smith.* claims check.",
        ),
        _paper(
            id="smith.mm", kind="lower", regime=(4 * M <= (k_ + 1) ** 2,), expr=2 * m_ * n_ * k_ / sqrt(M),
            model="standard matrix multiplication C := A·B (m×k by k×n), computations turned into FMAs",
            provenance=f"{SMITH}, main theorem (leading term from the abstract; exact statement not read)",
            statement="C := AB with the standard algorithm needs 2mnk/√M I/Os in leading order (2n³/√M for n×n); "
            "needs a long inner dimension k ≥ 2√M − 1 (derived precondition).",
            constant=Fraction(2), status="under review", cdag=CDAG_MATMUL,
            doc="docs/bounds/smith-mm-precondition.md", symbols=("m", "k", "n", "M"),
            notes="Leading constant 2 is the paper's; lower-order terms are not encoded (COSMA reports the form "
            "2mnk/√M − 2M, unverified here). Read as a reads-only bound it is contradicted by row streaming "
            "whenever (k + 1)² < 4M (claim smith.precondition.crossover), which is the large-cache attention "
            "shape: so it is never applied to attention here.",
        ),
        _paper(
            id="sy.thm3.7", kind="lower", regime=SMALL, expr=sy_small, model=STD,
            provenance=f"{SY}, Theorem 3.7 (reduction from Lemma 3.6)",
            statement="If M = o(d²), attention with standard matrix multiplication needs Ω(N²d/√M) I/Os.",
            attained_by=("square_tiling",), cdag=CDAG_QK,
        ),
        # ------------------------------------------------------------------ Saha–Ye §4 (any algorithm)
        _paper(
            id="sy.thm4.8", kind="lower", regime=(), expr=minimum(sy_large, N**2), model=ANY_Q,
            provenance=f"{SY}, Theorem 4.8",
            statement="With Q, K over F_q, q > N, any algorithm (fast MM allowed) needs Ω(min(N²d²/M, N²)) I/Os.",
            attained_by=("flash2",),
            notes="Met by flash2 for M ≥ d² (FlashAttention is optimal there even against fast matrix multiplication); for M < d² the N² branch is not attained by any schedule here.",
            cdag=ANY_FINITE_FIELD,
        ),
        _paper(
            id="sy.thm4.8.explicit", kind="lower", regime=(),
            expr=minimum(N**2 * d**2 / (8 * M), N**2 / 8) - M, model=ANY_Q,
            provenance=f"{SY}, Theorem 4.8 with Lemmas 4.1, 4.6 and Theorem 4.4 (constants from the proof)",
            statement="With Q, K over F_q, q > N, any algorithm needs at least min(N²d²/(8M), N²/8) − M I/Os.",
            explicit=True, constant=Fraction(1, 8), slack=-M, status="paper, constant derived here",
            cdag=ANY_FINITE_FIELD, doc="docs/bounds/saha-ye-thm4.8-explicit.md", attained_by=("flash2",),
        ),
        _paper(
            id="sy.thm4.14", kind="lower", regime=(2 <= N,),
            expr=minimum(N**2 * d**2 / (M * log2(N) ** 2), N**2), model=BIN, provenance=f"{SY}, Theorem 4.14",
            statement="With binary Q, K, any algorithm needs Ω(min(N²d²/(M log² N), N²)) I/Os.",
            cdag=ANY_BINARY,
            notes="Tight up to log² N against FlashAttention. Implicitly needs d ≳ log N (Lemma 4.9).",
        ),
        _paper(
            id="sy.lemma4.15", kind="upper", regime=(), expr=QmmNdN + QmmNNd,
            model="any algorithm (fast MM allowed)", provenance=f"{SY}, Lemma 4.15",
            statement="For all M, Q_Att(M) = O(Q_MM(N,d,N)(M) + Q_MM(N,N,d)(M)): attention is no harder than two "
            "rectangular matrix multiplications.",
            symbols=("QmmNdN", "QmmNNd"), asymptotic_only=QMM_OPAQUE,
        ),
        _paper(
            id="sy.lemma4.16", kind="lower", regime=SMALL, expr=QmmNdN,
            model="any algorithm (fast MM allowed)", provenance=f"{SY}, Lemma 4.16",
            statement="If M ≤ d², Q_Att(M) = Ω(Q_MM(N,d,N)(M)).",
            cdag=ANY_ALGORITHM, symbols=("QmmNdN", "d", "M"), asymptotic_only=QMM_OPAQUE,
        ),
        _paper(
            id="sy.thm4.17", kind="lower", regime=SMALL, expr=QmmNdN, model="any algorithm (fast MM allowed)",
            provenance=f"{SY}, Theorem 4.17",
            statement="If M ≤ d², Ω(Q_MM(N,d,N)) ≤ Q_Att ≤ O(Q_MM(N,d,N) + Q_MM(N,N,d)): small-cache attention is "
            "equivalent to rectangular matrix multiplication.",
            cdag=ANY_ALGORITHM, symbols=("QmmNdN", "QmmNNd", "d", "M"),
            notes="Upper side as in sy.lemma4.15.", asymptotic_only=QMM_OPAQUE,
        ),
        # ------------------------------------------------------------------ Li et al. (backward)
        _paper(
            id="li.backward.lower", kind="lower",
            statement="The attention backward pass needs Ω(min((N²d² + Nd³)/M, (N²d + Nd²)/√M)) I/Os.",
            cdag=CDAG_BACKWARD, notes="Crossover at M = Θ(d²); no explicit constants were available.", **li,
        ),
        _paper(
            id="li.backward.upper", kind="upper",
            statement="The attention backward pass can be done with O(min((N²d² + Nd³)/M, (N²d + Nd²)/√M)) I/Os.",
            **li,
        ),
    ]


def exact_bounds() -> list[Bound]:
    """One ``exact.<name>`` entry per cost formula, generated from FORMULAS and BACKWARD_FORMULAS, over every symbol
    the formula takes (d_v included: the entry at d_v = d was applied to rows of any d_v, where it is not the count)."""
    tables = [(FORMULAS, "forward"), (BACKWARD_FORMULAS, "backward")]
    return [_exact(n, f, c) for table, c in tables for n, f in sorted(table.items())]


def _exact(name: str, f: CostFormula, computation: str) -> Bound:
    """The ``exact.<name>`` entry of cost formula ``f``."""
    g = f  # over every symbol the formula takes, d_v included
    return Bound(
        id=f"exact.{name}",
        statement=f"Exact words moved by {name} (reads + writes; leading term {f.leading}).",
        kind="exact",
        model=f"algorithm {name}",
        regime=g.valid,
        expr=g.io,
        explicit=True,
        constant=None,
        provenance="derived here",
        status="derived here",
        doc=f.derivation,
        notes="Equal to the two-level machine's measured count (tests/test_counts.py, tests/test_backward.py).",
        attained_by=(name,),
        computation=computation,
    )


def all_bounds() -> list[Bound]:
    """The whole catalog: seed entries, exact cost entries, explicit constants, approximate attention, the
    backward pass, workloads (batch, heads, GQA, causal masks, N_q ≠ N_kv)."""
    out = seed_bounds() + exact_bounds() + list(constants.BOUNDS) + list(approx.BOUNDS) + list(backward.BOUNDS) + list(workloads.BOUNDS) + list(workloads.BWD_BOUNDS)
    ids = [b.id for b in out]
    assert len(ids) == len(set(ids)), "duplicate bound id"
    return out


def by_id(bound_id: str) -> Bound:
    """The catalog bound with this id; an unknown id raises InvalidParameter. The written bounds are indexed once
    (:func:`_index`); an ``exact.<name>`` entry is built from the cost formula at the call, so a formula registered
    later (a user's algorithm) is found, as :func:`all_bounds` finds it.

    >>> by_id("sy.thm3.5").attained_by
    ('square_tiling',)
    >>> by_id("exact.flash2").kind
    'exact'
    """
    name = bound_id.removeprefix("exact.")
    if name != bound_id:
        for table, computation in ((FORMULAS, "forward"), (BACKWARD_FORMULAS, "backward")):
            if name in table:
                f = table[name]
                hit = _EXACT.get(bound_id)
                if hit is None or hit[0] is not f:  # built once per formula object (a replaced formula is rebuilt)
                    hit = _EXACT[bound_id] = (f, _exact(name, f, computation))
                return hit[1]
    elif bound_id in _index():
        return _index()[bound_id]
    raise InvalidParameter("bound", bound_id, "an id listed by `attnio bounds`")


_EXACT: dict[str, tuple[CostFormula, Bound]] = {}


def machine_bounds() -> list[Bound]:
    """Lower bounds on another machine than the two-level one: P processors and the words a processor receives
    (:data:`attnio.bounds.distributed.BOUNDS`, docs/bounds/distributed.md). They are kept out of
    :func:`all_bounds`, whose every consumer (the report, the falsification test, the consistency claims) compares a
    bound with single-device two-level counts; :func:`by_id` finds them, and claims may be about them.

    >>> [b.id for b in machine_bounds()]
    ['distributed.qk-lower']
    """
    return list(distributed.BOUNDS)


@functools.cache
def _index() -> dict[str, Bound]:
    """Every bound of :func:`all_bounds` but the generated ``exact.*`` entries, and :func:`machine_bounds`, by id
    (built once: the catalog's other bounds are module constants)."""
    return {b.id: b for b in all_bounds() + machine_bounds() if not b.id.startswith("exact.")}


def explicit_io_lower_bounds() -> list[Bound]:
    """Explicit lower bounds on the forward pass's I/O in (N, d, M): what every exact forward cost must respect."""
    return [
        b
        for b in all_bounds()
        if b.kind == "lower" and b.explicit and b.computation == "forward" and b.id not in NOT_IO and set(_names(b.expr)) <= {"N", "d", "M"}
    ]


def _names(e: Expr) -> set[str]:
    return {s.name for s in free_symbols(e)}
