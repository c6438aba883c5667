"""Approximate attention by the polynomial method: exact cost formulas of attnio's three schedules and the
catalog's bounds for them. Everything here is **derived here** (docs/approx.md); the seed paper (Papp,
Sobczyk & Zouzias, arXiv 2605.23751) is available only as an abstract, so none of it is the paper's statement.

Parameters: N (rows), d (head dimension, d_v = d), M (fast memory) and **r**, the rank of the feature map.
For the polynomial method r = C(d+g, g); that is not a polynomial in (d, g), so formulas and claims treat r as
its own positive integer symbol (the solver proves statements for *every* r ≥ 1).

The three schedules (algorithms/poly.py, docs/approx.md §4):

- ``stream``: fast memory holds S = U₂ᵀV and s = U₂ᵀ1 (r(d+1) words) for the whole run; K, V streamed once,
  then Q streamed once: exactly 4Nd words. Needs M ≥ r(d+2) + 2d.
- ``chunked``: features in chunks of c ≤ c_max = ⌊(M − 2d)/(d+2)⌋; K, V streamed once per chunk; S and s are
  written once; then query blocks of b ≤ b_max = ⌊(M − 1)/(d+3)⌋ rows stream all of [S | s] once, s first and then
  one column of S at a time (so a block holds its rows, z and one column of Y: b(d + 2) words, not b(2d + 1)).
  Needs M ≥ 3d + 3.
- ``tiled``: U₁ = φ(Q) and U₂ = φ(K) materialised in slow memory (2Nr writes), then two tiled products with
  tiles of width w = min(d, ⌊√M⌋ − 1). Needs M ≥ d + 1 and M ≥ 5.

>>> approx_cost("stream", N=1024, d=4, M=4096, r=15)
IOCount(reads_words=12288, writes_words=4096)
>>> approx_cost("chunked", N=8, d=2, M=9, r=6)
IOCount(reads_words=352, writes_words=34)
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from attnio.bounds.costs import CostFormula, cost
from attnio.bounds.expr import Rel, ceil, eq, evaluate_int, floor, maximum, minimum, sqrt
from attnio.bounds.symbols import M, N, d, dv, sym
from attnio.bounds.types import APPROXIMATE, Bound
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter

r = sym("r", doc="rank of the feature map of an approximate algorithm (C(d+g, g) for the polynomial method)")

DOC = "docs/approx.md"
SCHEDULES = ("stream", "chunked", "tiled")

# -- block rules, as expressions (algorithms/poly.py computes the same numbers independently) ----------------

STREAM_MIN_M = r * (d + 2) + 2 * d
stream_b = minimum(N, floor((M - r * (d + 1)) / (r + 2 * d)))

CHUNKED_MIN_M = 3 * d + 3
chunk_c_max = floor((M - 2 * d) / (d + 2))
chunk_Tf = ceil(r / chunk_c_max)  # feature chunks in phase 1 (K, V streamed once per chunk)
chunk_b_max = floor((M - 1) / (d + 3))  # query rows, z and one column of Y: b(d + 3) + 1 ≤ M (docs/approx.md §4.2)
chunk_Tq = ceil(N / chunk_b_max)  # query blocks in phase 2 ([S | s] streamed once per block)

tiled_w = minimum(d, floor(sqrt(M)) - 1)
tiled_Tc = ceil(d / tiled_w)  # column blocks of V / O
tiled_tB = floor((M - tiled_w) / (tiled_w + 2))
tiled_Ta = ceil(r / tiled_tB)  # feature blocks of the product U₂ᵀ[V | 1]
tiled_b_max = floor((M - tiled_w - 1) / (tiled_w + 2))
tiled_Tr = ceil(N / tiled_b_max)  # row blocks of the product U₁·[S | s]
TILED_MIN_M = maximum(d + 1, 5)


def _f(name: str, reads, writes, valid: tuple[Rel, ...], blocks: dict, leading: str) -> CostFormula:
    return CostFormula(f"poly.{name}", reads, writes, valid, blocks, f"{DOC}#{name}", leading)


FORMULAS: dict[str, CostFormula] = {
    "stream": _f(
        "stream",
        3 * N * d,
        N * d,
        (M >= STREAM_MIN_M,),
        {"b": stream_b},
        "4Nd (= the trivial lower bound)",
    ),
    "chunked": _f(
        "chunked",
        2 * N * d * chunk_Tf + N * d + chunk_Tq * r * (d + 1),
        r * (d + 1) + N * d,
        (M >= CHUNKED_MIN_M,),
        {"c_max": chunk_c_max, "T_f": chunk_Tf, "b_max": chunk_b_max, "T_q": chunk_Tq},
        "2Nrd(d+2)/M + Nr(d+1)(d+3)/M + 2Nd ≈ 3Nrd²/M + 2Nd",
    ),
    "tiled": _f(
        "tiled",
        2 * N * d + 2 * N * r * tiled_Tc + N * d * tiled_Ta + tiled_Tr * r * (d + 1),
        2 * N * r + r * (d + 1) + N * d,
        (M >= d + 1, M >= 5),
        {"w": tiled_w, "T_c": tiled_Tc, "t_B": tiled_tB, "T_a": tiled_Ta, "b_max": tiled_b_max, "T_r": tiled_Tr},
        "4Nrd/√M + 2Nr + O(Nd) (tiles ≈ √M; M < d²)",
    ),
}


def _env(N_: int, d_: int, M_: int, r_: int) -> dict[str, int]:
    return {"N": N_, "d": d_, "M": M_, "r": r_}


def valid(schedule: str, *, N: int, d: int, M: int, r: int) -> bool:
    env = _env(N, d, M, r)
    return all(rel.holds(env) for rel in FORMULAS[schedule].valid)


def approx_cost(schedule: str, *, N: int, d: int, M: int, r: int) -> IOCount:
    """Exact reads and writes of one schedule at (N, d, M, r); InvalidParameter where it cannot run."""
    if schedule not in FORMULAS:
        raise InvalidParameter("schedule", schedule, "one of " + ", ".join(SCHEDULES))
    f = FORMULAS[schedule]
    env = _env(N, d, M, r)
    for rel in f.valid:
        if not rel.holds(env):
            raise InvalidParameter("M", M, f"{rel} for poly schedule {schedule} at N={N}, d={d}, r={r}")
    return IOCount(evaluate_int(f.reads, env), evaluate_int(f.writes, env))


def best_schedule(*, N: int, d: int, M: int, r: int) -> tuple[str, IOCount]:
    """The automatic choice: the valid schedule with the least exact I/O (ties: stream, chunked, tiled)."""
    options = [(approx_cost(s, N=N, d=d, M=M, r=r), i, s) for i, s in enumerate(SCHEDULES) if valid(s, N=N, d=d, M=M, r=r)]
    if not options:
        raise InvalidParameter("M", M, f"M >= max(d + 1, 5) = {max(d + 1, 5)} for poly (no schedule fits M={M} at d={d})")
    io, _, s = min(options, key=lambda t: (t[0].io_words, t[1]))
    return s, io


# -- the polynomial's degree (pure arithmetic; algorithms/poly_features.py builds the map) ---------------

G_MAX = 200  # degrees above this are refused (the rank is astronomically large anyway)


def taylor_delta(g: int, beta: float) -> tuple[float, float]:
    """``(δ_g, h)``: the relative-error bound of P = T_g(x + h) on [−β, β] and the shift h that balances it.

    >>> delta, h = taylor_delta(4, 0.5)
    >>> 0 <= h <= 0.5 and delta < 1e-3
    True
    """
    assert g >= 0 and beta > 0
    k = g + 1
    lg = math.lgamma(k + 1)

    def left(a: float) -> float:  # log(e^a a^k): x below the centre (a = β − h)
        return -math.inf if a <= 0 else a + k * math.log(a)

    def right(a: float) -> float:  # log((2β − a)^k): x above the centre
        return k * math.log(2 * beta - a)

    lo, hi = 0.0, beta  # left − right is increasing in a, negative at 0, positive at β
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if left(mid) < right(mid):
            lo = mid
        else:
            hi = mid
    a = hi
    log_delta = max(left(a), right(a)) - lg
    # relative safety margin for the float evaluation of this bound (it is used as an upper bound)
    if log_delta > 700:
        return math.inf, beta - a
    return math.exp(log_delta) * (1 + 1e-9), beta - a



def degree_for(
    eps: float, B: float, d: int, beta: float | None = None, *, name: str | None = None
) -> tuple[int, float, float, float]:
    """``(g, δ_g, h, β)``: the least degree with 2δ_g/(1−δ_g)·B ≤ ε/2 (docs/approx.md §2), for validated
    0 < ε < 1, B > 0 and scale 1/√d; β = √d·B² unless given. InvalidParameter if g would exceed G_MAX.

    >>> degree_for(1e-3, 0.25, 4)[0]   # β = 2·0.25² = 0.125; g = 2 gives δ ≤ 0.13³/3! ≈ 3.7e-4 ≤ 1e-3/1.001
    2
    """
    try:
        beta_v = math.sqrt(d) * B * B if beta is None else float(beta)
    except OverflowError:  # d beyond float range
        beta_v = math.inf
    target = eps / (4 * B + eps)  # 2δ/(1−δ)·B ≤ ε/2  ⟺  δ ≤ ε/(4B + ε)
    for g in range(G_MAX + 1 if math.isfinite(beta_v) else 0):
        delta, h = taylor_delta(g, beta_v)
        if delta <= target:
            return g, delta, h, beta_v
    name = name or ("B" if beta is None else "beta")
    raise InvalidParameter(
        name,
        B if name == "B" else beta_v,
        f"{'B with β = √d·B²' if name == 'B' else 'a logit bound β'} small enough for a degree g ≤ {G_MAX} "
        f"to reach ε={eps:g} (β={beta_v:g} needs more)",
    )


def poly_io(*, N: int, d: int, M: int, eps: float, B: float) -> tuple[int, str, int, int]:
    """``(io_words, schedule, g, r)`` of poly's automatic choice at (N, d, M, ε, B), from the formulas."""
    g = degree_for(eps, B, d)[0]
    r_ = math.comb(d + g, g)
    s, io = best_schedule(N=N, d=d, M=M, r=r_)
    return io.io_words, s, g, r_


def crossover_B(N: int, d: int, M: int, eps: float, *, B_lo: float = 1e-4, B_hi: float = 64.0) -> dict[str, Any]:
    """The entry bound B at which poly (automatic schedule) stops moving fewer words than flash2.

    r, and so poly's I/O, is non-decreasing in B; B* is located by bisection to relative precision 1e-6:
    at ``B_below`` poly moves fewer words than flash2, at ``B`` (= B*) at least as many. ``B`` is None when
    poly wins on all of [B_lo, B_hi] or already loses at B_lo (see ``poly_wins_at_B_lo``).

    >>> c = crossover_B(2**16, 16, 4096, 1e-3)
    >>> c["g_below"] < c["g"] and c["poly_io_below"] < c["flash2_io"] <= c["poly_io"]
    True
    """
    flash = cost("flash2", N=N, d=d, M=M).io_words

    def io(B: float) -> tuple[int, str, int, int] | None:
        try:
            return poly_io(N=N, d=d, M=M, eps=eps, B=B)
        except InvalidParameter:  # degree above G_MAX, or no schedule fits M
            return None

    def wins(B: float) -> bool:
        v = io(B)
        return v is not None and v[0] < flash

    out: dict[str, Any] = {"N": N, "d": d, "M": M, "eps": eps, "flash2_io": flash}
    if not wins(B_lo) or wins(B_hi):
        return {**out, "B": None, "poly_wins_at_B_lo": wins(B_lo)}
    lo, hi = B_lo, B_hi
    while hi / lo > 1 + 1e-6:
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if wins(mid) else (lo, mid)
    below, at = io(lo), io(hi)
    assert below is not None
    out.update(B_below=lo, poly_io_below=below[0], schedule_below=below[1], g_below=below[2], r_below=below[3], B=hi)
    if at is not None:
        out.update(poly_io=at[0], schedule=at[1], g=at[2], r=at[3])
    else:
        out.update(poly_io=None, schedule=None, g=None, r=None)
    return out


# -- the catalog -----------------------------------------------------------------------------------------

_CLASS_ALL = "approximate attention: any algorithm that reads every word of Q, K, V and writes every word of O (docs/approx.md §5.1)"
_CLASS_MM = (
    "approximate attention by the polynomial method: classical (semiring) evaluation of U₂ᵀV or of U₁·S with U₁, U₂ given in slow memory: every one of its "
    "N·r·d elementary products formed once or more, operands in fast memory (docs/approx.md §5.2)"
)
_CLASS_RA = (
    "approximate attention by the polynomial method: resident-accumulator evaluation of S = U₂ᵀV: each of the r·d entries of S accumulated in one fast-memory "
    "word from its creation to its completion, each term φ_α(k_j)·v_jc added while v_jc is resident "
    "(docs/approx.md §5.3)"
)

def _lower(**kw) -> Bound:
    """A lower bound on approximate attention (docs/approx.md §5): explicit, derived here, over the approximate
    computation DAG. Its regime states d_v = d: the polynomial method here approximates attention with V of width d
    (poly needs d_v = d), and the counts (4Nd, r(d+1), Nrd) read V's width as d."""
    kw["regime"] = (*kw["regime"], eq(dv, d))
    return Bound(kind="lower", explicit=True, cdag=APPROXIMATE, **{"doc": f"{DOC}#lower-bounds", "status": "derived here", **kw})


_CLASS_2P = (
    "approximate attention by the polynomial method, two-phase: reads every word of Q, K, V and writes every word of O; "
    "computes each of the r(d+1) values of [S | s] = U₂ᵀ[V | 1] (roots of accumulation trees over the N key rows) "
    "exactly once, and forms every product φ_α(q_i)·S_αc, φ_α(q_i)·s_α after the last of them (docs/approx.md §5.4)"
)

_CLASS_OA = (
    "approximate attention by the polynomial method, two-phase with resident output accumulators: the class of "
    "approx.lower.two-phase, and (a) each of the N(d+1) sums Y_ic = Σ_α φ_α(q_i)·S_αc, z_i = Σ_α φ_α(q_i)·s_α "
    "(g ≥ 1, so r ≥ d + 1) accumulated in one fast-memory word from its creation to its completion, each of its r "
    "products formed while the accumulator is resident and then added to it, (b) each "
    "query feature φ_α(q_i) computed from the words q_il, l ∈ supp(α), only, and never written to slow memory "
    "(docs/approx.md §5.5)"
)

# approx.lower.row-resident (docs/bounds/approx-row-resident.md): I/Os before and after [S | s] is complete
RR_PHASE1 = maximum(N * r * d * (d + 1) / M - 2 * r * (d + 1) - M, 2 * N * d + r * (d + 1) - M)
RR_PHASE2 = maximum(N * r * d * (d + 1) / M - M, N * d + r * (d + 1) - M)

_CLASS_RR = (
    "approximate attention by the polynomial method, two-phase with row-resident products: the class of "
    "approx.lower.two-phase, and (a) each of the r(d+1) values of [S | s] accumulated in one fast-memory word from its "
    "creation to its completion, each of its N terms φ_α(k_j)·v_jc (φ_α(k_j) for s) formed, and added to it, while that "
    "accumulator (after its creation, before its completion) and all d words of the key row k_j are in fast memory, (b) each of the N·r(d+1) products φ_α(q_i)·S_αc, "
    "φ_α(q_i)·s_α formed while all d words of the query row q_i and the value S_αc (s_α) are in fast memory "
    "(docs/approx.md §5.6, docs/bounds/approx-row-resident.md)"
)

BOUNDS: tuple[Bound, ...] = (
    # the three schedules' exact counts: one entry each, alike but for the schedule, its statement and its note
    *(
        Bound(
            id=bid,
            statement=statement,
            kind="exact",
            model=f"algorithm poly, schedule {schedule}",
            regime=FORMULAS[schedule].valid,
            expr=FORMULAS[schedule].io,
            explicit=True,
            constant=Fraction(4),
            provenance="derived here",
            status="derived here",
            doc=f"{DOC}#{schedule}",
            notes=notes,
            symbols=("N", "d", "M", "r"),
            attained_by=("poly",),
        )
        for bid, schedule, statement, notes in (
            ("approx.poly.stream.exact", "stream", "the stream schedule moves exactly 4Nd words", ""),
            ("approx.poly.chunked.exact", "chunked", "exact I/O of the feature-chunked schedule", "leading term ≈ 3Nrd²/M + 2Nd"),
            (
                "approx.poly.tiled.exact",
                "tiled",
                "exact I/O of the tiled schedule with materialised features",
                "leading term ≈ 4Nrd/√M + 2Nr when M < d²",
            ),
        )
    ),
    # each lower bound: what it states (id, statement, class, regime), its formula, where it comes from
    _lower(
        id="approx.lower.trivial", statement="io ≥ 4Nd", model=_CLASS_ALL,
        regime=(2 <= N,),  # as trivial.4Nd: with N = 1 the output is V whatever Q and K are
        expr=4 * N * d, constant=Fraction(4),
        provenance="derived here", symbols=("N", "d", "M"),
    ),
    _lower(
        id="approx.lower.matmul", statement="io ≥ Nrd/(3√M) − M for U₂ᵀV (and, separately, for U₁·S)", model=_CLASS_MM,
        regime=(M >= 1,), expr=N * r * d / (3 * sqrt(M)) - M, constant=Fraction(1, 3), slack=-M,
        provenance="derived here (Hong–Kung / Irony–Toledo–Tiskin segment argument; 1/3 < 1/(2√2))",
        symbols=("N", "d", "M", "r"),
    ),
    _lower(
        id="approx.lower.accumulator", statement="reads of V ≥ Nrd/M − rd", model=_CLASS_RA, regime=(M >= 2,),
        expr=N * r * d / M - r * d, constant=Fraction(1), slack=-r * d,
        provenance="derived here (co-residence counting)",
        notes="a factor ≈ 4d below the chunked schedule: the gap is open here", symbols=("N", "d", "M", "r"),
    ),
    _lower(
        id="approx.lower.two-phase", status="derived here (refereed)", statement="io ≥ 4Nd + 2(r(d+1) − M)",
        model=_CLASS_2P, regime=(2 <= N,),  # the 4Nd part as approx.lower.trivial
        expr=4 * N * d + 2 * r * (d + 1) - 2 * M, constant=Fraction(4), slack=-2 * M,
        provenance="derived here (the [S | s] values not resident when the last is computed are written and read back)",
        notes="above 4Nd only where [S | s] does not fit (r(d+1) > M); all three schedules are in its class",
        symbols=("N", "d", "M", "r"),
    ),
    _lower(
        id="approx.lower.output-accumulator", status="derived here (refereed)",
        statement="io ≥ 3Nd + (r(d+1) − M) + ⌊N(d+1)/(2M)⌋·(2√(rdM) − M)", model=_CLASS_OA,
        regime=(2 <= N, M >= 1, d + 1 <= r),
        expr=3 * N * d + r * (d + 1) - M + floor(N * (d + 1) / (2 * M)) * (2 * sqrt(r * d * M) - M),
        constant=Fraction(1), slack=-M,
        provenance="derived here (windows of output-accumulator lifetimes after [S | s] is complete)",
        notes="≈ N(d+1)(√(rd/M) − 1/2) + 3Nd: stream and chunked are in its class, tiled is not (it stores U₁)",
        symbols=("N", "d", "M", "r"),
    ),
    _lower(
        id="approx.lower.row-resident", doc="docs/bounds/approx-row-resident.md", status="derived here (refereed)",
        statement="io ≥ max(Nrd(d+1)/M − 2r(d+1) − M, 2Nd + r(d+1) − M) + max(Nrd(d+1)/M − M, Nd + r(d+1) − M)",
        model=_CLASS_RR, regime=(M >= 1,),
        expr=RR_PHASE1 + RR_PHASE2, constant=Fraction(2), slack=-2 * r * (d + 1) - 2 * M,
        provenance="derived here (segments of M I/Os before and after [S | s] is complete; a segment forms at most M²/d "
        "products with rows resident: docs/approx.md §5.6)",
        notes="≈ 2Nrd²/M where r(d+1) > 2M (else the word terms decide): Θ(Nrd²/M), the order of the chunked "
        "schedule (≈ 2Nrd(d+2)/M + Nr(d+1)(d+3)/M, a factor ≈ 1.65 above at d = 16, → 1.5 as d grows, at large N where r(d+1) > 2M); chunked is in its class, stream is not (it frees Q_i before its products), tiled is not (it stores "
        "U₁ and U₂)",
        symbols=("N", "d", "M", "r"),
    ),
)

# docs/approx.md §5: the poly schedules in each lower bound's class (those the bound's consistency claims cover).
CLASS_SCHEDULES: dict[str, tuple[str, ...]] = {
    "approx.lower.trivial": ("stream", "chunked", "tiled"),
    "approx.lower.matmul": ("tiled",),
    "approx.lower.accumulator": ("stream", "chunked"),
    "approx.lower.two-phase": ("stream", "chunked", "tiled"),
    "approx.lower.output-accumulator": ("stream", "chunked"),
    "approx.lower.row-resident": ("chunked",),
}
assert set(CLASS_SCHEDULES) == {b.id for b in BOUNDS if b.kind == "lower"}
