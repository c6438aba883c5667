"""Exact cost formulas: reads and writes of each implemented algorithm, in closed form with ceilings.

Each formula is derived from its schedule line by line (docs/costs.md) and equals what the machine
measures, for every N, d, M (tests/test_counts.py checks ``cost(...) == measured``). They are symbolic
expressions, so the solver proves things about them; :func:`cost` evaluates them exactly.

>>> cost("flash2", N=4, d=2, M=14)
IOCount(reads_words=72, writes_words=12)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from attnio.bounds import blocks
from attnio.bounds.expr import (
    Expr,
    Rel,
    ceil,
    evaluate,
    evaluate_int,
    floor,
    maximum,
    minimum,
    sqrt,
    substitute,
)
from attnio.bounds.symbols import M, N, d, dv
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter


@dataclass(frozen=True)
class CostFormula:
    """``reads`` and ``writes`` in N, d, M (and dv where the algorithm supports d_v ≠ d), valid where
    every relation of ``valid`` holds (the algorithm's minimum M). ``blocks`` gives the block sizes."""

    algorithm: str
    reads: Expr
    writes: Expr
    valid: tuple[Rel, ...]
    blocks: dict[str, Expr]
    derivation: str  # docs page
    leading: str  # leading term, for people

    @property
    def io(self) -> Expr:
        return self.reads + self.writes

    def with_dv_equal_d(self) -> CostFormula:
        """The same formula with dv = d, for claims over (N, d, M)."""
        s = {dv: d}
        return CostFormula(
            self.algorithm,
            substitute(self.reads, s),
            substitute(self.writes, s),
            tuple(Rel(r.op, substitute(r.lhs, s), substitute(r.rhs, s)) for r in self.valid),
            {k: substitute(v, s) for k, v in self.blocks.items()},
            self.derivation,
            self.leading,
        )


FORMULAS: dict[str, CostFormula] = {}


def _add(f: CostFormula) -> None:
    assert f.algorithm not in FORMULAS
    FORMULAS[f.algorithm] = f


# Two loops with two block rules each: one formula per loop, given its block rule.


def _flash2(name: str, key: str, rows: Expr, leading: str) -> CostFormula:
    """FA-2's forward with ``rows`` rows per Q block (block size ``key``), T_r = ⌈N/rows⌉."""
    T_r = ceil(N / rows)
    sizes = {key: rows, "T_r": T_r}
    reads = N * d + T_r * (N * d + N * dv)  # Q once; K and V once per Q block
    writes = N * dv + N  # O and L once
    valid = (M >= d + dv + 4 + maximum(d, dv),)  # a ≥ 1, = Flash2Tiling.min_M
    return CostFormula(name, reads, writes, valid, sizes, "docs/costs.md#flash2", leading)


def _flash1(name: str, key: str, cols: Expr, valid: tuple[Rel, ...], leading: str, B_r: Expr | None = None) -> CostFormula:
    """FA-1's forward with ``cols`` K/V rows per block (block size ``key``), T_c = ⌈N/cols⌉ (O, ℓ, m initialised
    in slow memory)."""
    T_c = ceil(N / cols)
    sizes = {key: cols} | ({"B_r": B_r} if B_r is not None else {}) | {"T_c": T_c}
    reads = N * d + N * dv + T_c * (N * d + N * dv + 2 * N)  # K and V once; Q, O, ℓ, m once per K/V block
    writes = (1 + T_c) * (N * dv + 2 * N)  # O, ℓ, m: the initialisation, then once per K/V block
    return CostFormula(name, reads, writes, valid, sizes, "docs/costs.md#flash1", leading)


# flash2, io-optimal rule: a = ⌊(M − max(d,dv))/(d + dv + 4)⌋ rows per Q block; T_r = ⌈N/a⌉.
_add(_flash2("flash2", "a", blocks.flash2(d, dv).resident(M), "N²(d+dv)²/M (4N²d²/M for dv = d)"))

# flash2, square rule: B_r = B_c = b = ⌊(⌊√(p² + 4M)⌋ − p)/2⌋ with p = d + dv + max(d, dv) + 3.
_leading = "≈ 2M/(b·d)·N²d²/M (dv = d): ≈ 6N²d²/M for M ≪ 9d², → 2N²d/√M for M ≫ 9d²"
_add(_flash2("flash2-square", "b", blocks.flash2(d, dv).square(M), _leading))

# flash1 as published (Dao et al. 2022, Alg. 1): B_c = ⌈M/4d⌉, T_c = ⌈N/B_c⌉; O, ℓ, m initialised in slow memory.
# It runs at any M in audit mode (its working set exceeds M).
_Bc1 = ceil(M / (4 * d))
_leading = "12N²d²/M (FlashAttention Algorithm 1's transfers, 2Nd + T_c(3Nd + 4N), plus the N·d + 2N initialisation)"
_add(_flash1("flash1", "B_c", _Bc1, (M >= 1,), _leading, B_r=minimum(_Bc1, d)))

# flash1-fit: the same loop, c = ⌊(M − d − dv − 6)/(d + dv + 1)⌋ K/V rows per block.
_add(_flash1("flash1-fit", "c", blocks.flash1_fit(d, dv).resident(M, "cols"), (M >= 2 * (d + dv) + 7,), "6N²d²/M"))

# standard: square tiles of side b = ⌊√(M/3)⌋; S and P materialised.
_bs = floor(sqrt(M / 3))
_Ts, _Tvs = ceil(N / _bs), ceil(dv / _bs)
_add(
    CostFormula(
        algorithm="standard",
        reads=2 * _Ts * N * d + 2 * N**2 + _Tvs * N**2 + _Ts * N * dv,
        writes=2 * N**2 + N * dv,
        valid=(M >= 4,),
        blocks={"b": _bs, "T": _Ts, "T_v": _Tvs},
        derivation="docs/costs.md#standard",
        leading="4√3·N²d/√M + 4N² while M < 3d²; 5N² + 3√3·N²d/√M once b ≥ dv (dv = d), Θ(Nd + N²) per FA Thm 2",
    )
)

# square_tiling (Saha–Ye Alg. 1, stable): B = ⌊√(M/4)⌋.
_B = floor(sqrt(M / 4))
_T, _Tv = ceil(N / _B), ceil(dv / _B)
_add(
    CostFormula(
        algorithm="square_tiling",
        reads=2 * _T * N * d + N + _Tv * N**2 + _T * N * dv,
        writes=N**2 + N + N * dv,
        valid=(M >= 4,),
        blocks={"B": _B, "T": _T, "T_v": _Tv},
        derivation="docs/costs.md#square_tiling",
        leading="8N²d/√M + N² (Saha–Ye Thm 3.5; 4N²d/B + N² + Nd + 2N when B divides N and d)",
    )
)

# square_tiling-io (derived here): output tiles ≈ √M × √M, inner dimension streamed (docs/costs.md#square_tiling-io).
_q = floor(sqrt(M))


def _phase(n: Expr, groups0: Expr) -> tuple[Expr, Expr]:
    """(a, b) of one phase of square_tiling-io, as algorithms/square_tiling_io.py computes them.

    The ``maximum(1, ·)`` are the identity wherever the formula is valid (M ≥ 6: b⁰ ≤ ⌊(M − 2)/3⌋ gives a⁰ ≥ 1,
    and a ≤ a⁰ ≤ (M − 1)/3 gives b ≥ 1; docs/costs.md#square_tiling-io); written out, they make every
    denominator positive by its form, so the solver proves the formula defined without unfolding the floors."""
    b0 = ceil(n / groups0)
    a0 = maximum(1, minimum(N, floor((M - b0) / (b0 + 2))))
    a = ceil(N / ceil(N / a0))
    return a, maximum(1, minimum(n, floor((M - 2 * a) / (a + 1))))


_cap = floor((M - 2) / 3)  # b⁰ ≤ _cap keeps a⁰ ≥ 1
_a1, _b1 = _phase(N, maximum(ceil(N / _q), ceil(N / _cap)))
_a2, _b2 = _phase(dv, maximum(1, floor((2 * dv + _q) / (2 * _q)), ceil(dv / _cap)))
_Ta, _Tb, _T2, _G = ceil(N / _a1), ceil(N / _b1), ceil(N / _a2), ceil(dv / _b2)
_add(
    CostFormula(
        algorithm="square_tiling-io",
        reads=N * d * (_Ta + _Tb) + N + _G * N**2 + _T2 * N * dv,
        writes=N**2 + N + N * dv,
        valid=(M >= 6,),
        blocks={"a1": _a1, "b1": _b1, "a2": _a2, "b2": _b2, "T_a": _Ta, "T_b": _Tb, "T_2": _T2, "G": _G},
        derivation="docs/costs.md#square_tiling-io",
        leading="4N²d/√M + N² (a ≈ b ≈ √M in both phases; the paper rule's 8N²d/√M halved)",
    )
)

# kv_stationary: b = ⌊(M − d − 2dv − 3)/(d + dv + 1)⌋ K/V rows held, T_c = ⌈N/b⌉ passes over Q.
_bkv = floor((M - d - 2 * dv - 3) / (d + dv + 1))
_Tkv = ceil(N / _bkv)
_add(
    CostFormula(
        algorithm="kv_stationary",
        reads=N * d + N * dv + _Tkv * N * d + (_Tkv - 1) * (N * dv + N),
        writes=_Tkv * (N * dv + N),
        valid=(M >= 2 * d + 3 * dv + 4,),
        blocks={"b": _bkv, "T_c": _Tkv},
        derivation="docs/costs.md#kv_stationary",
        leading="N²(d + dv)(d + 2dv)/M (6N²d²/M for dv = d)",
    )
)

# split_v: g = min(d, dv) value columns per group, G = ⌈dv/g⌉ groups, a = ⌊(M − d)/(d + g + 4)⌋ Q rows.
_g = minimum(d, dv)
_G = ceil(dv / _g)
_asv = floor((M - d) / (d + _g + 4))
_Trsv = ceil(N / _asv)
_add(
    CostFormula(
        algorithm="split_v",
        reads=N * d + _Trsv * (_G * N * d + N * dv),
        writes=N * dv + N,
        valid=(M >= 2 * d + _g + 4,),
        blocks={"g": _g, "G": _G, "a": _asv, "T_r": _Trsv},
        derivation="docs/costs.md#split_v",
        leading="4N²·d·dv/M when d divides dv (d_v > d); N²(d+dv)²/M (= flash2) when dv ≤ d",
    )
)


def _lookup(table: dict[str, CostFormula], name: str, what: str) -> CostFormula:
    """``table[name]``, or InvalidParameter naming the algorithm and listing ``what`` it must be."""
    if name not in table:
        raise InvalidParameter("algorithm", name, what + ": " + ", ".join(sorted(table)))
    return table[name]


def _evaluate(f: CostFormula, algorithm: str, *, N: int, d: int, M: int, dv: int | None) -> IOCount:
    """``f``'s reads and writes at (N, d, M[, dv]) (dv defaults to d); InvalidParameter on M, naming
    ``algorithm``, where ``f`` is not valid."""
    env = {"N": N, "d": d, "M": M, "dv": d if dv is None else dv}
    for r in f.valid:
        if not r.holds(env):
            raise InvalidParameter("M", M, f"{r} for {algorithm} at N={N}, d={d}")
    return IOCount(evaluate_int(f.reads, env), evaluate_int(f.writes, env))


def formula(algorithm: str) -> CostFormula:
    return _lookup(FORMULAS, algorithm, "one with a cost formula")


def cost(algorithm: str, *, N: int, d: int, M: int, dv: int | None = None) -> IOCount:
    """The exact reads and writes of ``algorithm`` at (N, d, M[, dv]), evaluated from its formula."""
    return _evaluate(formula(algorithm), algorithm, N=N, d=d, M=M, dv=dv)


def costs_at(table: dict[str, CostFormula], n: int, dd: int, mm: int, skip: frozenset[str] = frozenset()) -> dict[str, int]:
    """The exact words (d_v = d) at (N, d, M) = (n, dd, mm) of every formula of ``table`` that is valid there and
    defined there (no division by zero, no negative root), but those named in ``skip``.

    >>> sorted(costs_at(FORMULAS, 4096, 64, 16))  # M = 16: flash2 and the others need more
    ['flash1', 'square_tiling', 'square_tiling-io', 'standard']
    >>> cheapest(costs_at(FORMULAS, 65536, 64, 65536)), cheapest(costs_at(FORMULAS, 4096, 128, 1024))
    ('flash2', 'square_tiling-io')
    """
    env = {"N": n, "d": dd, "M": mm, "dv": dd}
    out = {}
    for name, fm in table.items():
        fd = fm.with_dv_equal_d()
        if name in skip or not all(r.holds(env) for r in fd.valid):
            continue
        try:
            out[name] = int(evaluate(fd.io, env))
        except (ValueError, ZeroDivisionError):
            continue
    return out


def cheapest(costs: dict[str, int]) -> str:
    """The schedule of fewest words in ``costs`` (:func:`costs_at`); ties go to the first name in sorted order."""
    return min(costs, key=lambda a: (costs[a], a))


# ===================================================================================================== workloads
# Exact counts of the workload schedules (algorithms/workloads.py): N_q query rows, N_kv key/value rows, g query
# heads per K/V head, causal masks bottom-right aligned (δ = N_kv − N_q ≥ 0). Derived here, docs/costs.md#workloads.
# Each formula counts one *unit*: one query head for the per-head schedules (g = 1 substituted), one K/V head
# with its g query heads for the grouped schedule; the workload's count is units × the unit count
# (batch·H per-head units, batch·H_kv grouped units). Kept apart from FORMULAS: those are over (N, d, M, dv).
from attnio.bounds.symbols import Nkv, Nq, g  # noqa: E402

_delta = Nkv - Nq


def _causal_visits(T: Expr, B: Expr) -> Expr:
    """Σ_j (N_q − max(0, j·B − δ)): the query rows that T K/V blocks of B key rows visit under the causal mask
    (the blocks j with j·B ≤ δ visit every query row)."""
    J = minimum(T, floor(_delta / B) + 1)
    return T * Nq - B * (T * (T - 1) - J * (J - 1)) / 2 + (T - J) * _delta


def _causal_sums(B: Expr, T: Expr) -> tuple[Expr, Expr]:
    """For T row tiles of B rows (the last one Nq − (T − 1)B rows), the K/V rows [0, e_i + δ) each needs:
    A = Σ_i (e_i + δ) and Area = Σ_i rows_i·(e_i + δ)."""
    A = B * T * (T - 1) / 2 + Nq + T * _delta
    area = B * (B * T * (T - 1) / 2 + (T - 1) * _delta) + (Nq - (T - 1) * B) * Nkv
    return A, area


def _wf(name: str, reads: Expr, writes: Expr, valid: tuple[Rel, ...], blocks: dict[str, Expr], leading: str) -> CostFormula:
    return CostFormula(name, reads, writes, valid, blocks, "docs/costs.md#workloads", leading)


WORKLOAD_FORMULAS: dict[tuple[str, str, bool], CostFormula] = {}

# flash2: a rows per Q block (io-optimal rule), ⌊a/g⌋ positions of each of the g heads per block.
_w2 = maximum(d, dv)
_ag = floor(blocks.flash2(d, dv).resident(M) / g)
_T2 = ceil(Nq / _ag)
_B2 = ceil(Nq / _T2)
_A2, _ = _causal_sums(_B2, _T2)
_valid2 = (M >= _w2 + g * (d + dv + 4),)
for _sched, _gsub in (("per-head", {g: 1}), ("grouped", {})):
    for _causal in (False, True):
        _kv = _A2 if _causal else _T2 * Nkv
        _f = _wf(
            f"flash2/{_sched}" + ("/causal" if _causal else ""),
            g * Nq * d + _kv * (d + dv),
            g * Nq * (dv + 1),
            _valid2 + ((Nq <= Nkv,) if _causal else ()),
            {"a_g": _ag, "T_r": _T2, "B_r": _B2},
            "causal: about half of the K/V traffic (T_r + 1)/(2T_r)" if _causal else "T_r·N_kv(d + d_v) K/V words",
        )
        WORKLOAD_FORMULAS[("flash2", _sched, _causal)] = CostFormula(
            _f.algorithm, substitute(_f.reads, _gsub), substitute(_f.writes, _gsub),
            tuple(Rel(r.op, substitute(r.lhs, _gsub), substitute(r.rhs, _gsub)) for r in _f.valid),
            {k: substitute(v, _gsub) for k, v in _f.blocks.items()}, _f.derivation, _f.leading,
        )

# flash1 (published B_c = ⌈M/4d⌉) and flash1-fit (c = ⌊(M − d − dv − 6)/(d + dv + 1)⌋, B_c = ⌈N_kv/T_c⌉), per head.
_Bc1w = ceil(M / (4 * d))
_c1w = blocks.flash1_fit(d, dv).resident(M, "cols")
for _name, _Bc, _Tc, _valid in (
    ("flash1", _Bc1w, ceil(Nkv / _Bc1w), (M >= 1,)),
    ("flash1-fit", ceil(Nkv / ceil(Nkv / _c1w)), ceil(Nkv / _c1w), (M >= 2 * (d + dv) + 7,)),
):
    for _causal, _rows in ((False, _Tc * Nq), (True, _causal_visits(_Tc, _Bc))):
        WORKLOAD_FORMULAS[(_name, "per-head", _causal)] = _wf(
            f"{_name}/per-head" + ("/causal" if _causal else ""),
            Nkv * (d + dv) + _rows * (d + dv + 2),
            Nq * (dv + 2) + _rows * (dv + 2),
            _valid + ((Nq <= Nkv,) if _causal else ()),
            {"B_c": _Bc, "T_c": _Tc},
            "causal: Σ_j (N_q − max(0, j·B_c − δ)) Q/O rows" if _causal else "T_c·N_q(d + 2d_v + 4) Q/O/ℓ/m words",
        )

# standard (b = ⌊√(M/3)⌋) and square tiling (B = ⌊√(M/4)⌋), per head, S of N_q × N_kv.
for _name, _b in (("standard", floor(sqrt(M / 3))), ("square_tiling", floor(sqrt(M / 4)))):
    _Tq, _Tk, _Tvv = ceil(Nq / _b), ceil(Nkv / _b), ceil(dv / _b)
    _A, _area = _causal_sums(_b, _Tq)
    _r = Nq - (_Tq - 1) * _b
    _qreads_c = d * (_b * (_Tq * (_Tq - 1) / 2 + (_Tq - 1) * ceil(_delta / _b)) + _r * ceil(Nkv / _b))
    for _causal in (False, True):
        if _causal:
            qk, kv_rows, area = _qreads_c, _A, _area
        else:
            qk, kv_rows, area = _Tk * Nq * d, _Tq * Nkv, Nq * Nkv
        if _name == "standard":  # S written, read twice, P written, P read T_v times
            reads, writes = qk + kv_rows * (d + dv) + 2 * area + _Tvv * area, 2 * area + Nq * dv
        else:  # logits written once and read T_v times, one logsumexp per row written and read
            reads, writes = qk + kv_rows * (d + dv) + Nq + _Tvv * area, area + Nq + Nq * dv
        WORKLOAD_FORMULAS[(_name, "per-head", _causal)] = _wf(
            f"{_name}/per-head" + ("/causal" if _causal else ""),
            reads,
            writes,
            (M >= 4,) + ((Nq <= Nkv,) if _causal else ()),
            {"b": _b, "T_q": _Tq, "T_v": _Tvv},
            "causal: only the S tiles on or below the diagonal" if _causal else "S of N_q·N_kv words",
        )


def _workload_lookup(table: dict, algorithm: str, schedule: str, causal: bool, what: str) -> CostFormula:
    key = (algorithm, schedule, bool(causal))
    if key not in table:
        have = sorted({f"{a} ({s})" for a, s, _ in table})
        raise InvalidParameter("algorithm", f"{algorithm} ({schedule})", what + ": " + ", ".join(have))
    return table[key]


def _workload_evaluate(f: CostFormula, w: object, *, grouped: bool) -> IOCount:
    """``f``'s unit count times the workload's units: K/V heads (``grouped``, g query heads per unit) or query
    heads (g = 1), after checking the formula's validity at the workload."""
    env = {"Nq": w.Nq, "Nkv": w.Nkv, "d": w.d, "dv": w.dv, "M": w.M, "g": w.groups if grouped else 1}  # type: ignore[attr-defined]
    for r in f.valid:
        if not r.holds(env):
            raise InvalidParameter("M", w.M, f"{r} for {f.algorithm} at {env}")  # type: ignore[attr-defined]
    units = w.kv_heads_total if grouped else w.query_heads_total  # type: ignore[attr-defined]
    return IOCount(units * evaluate_int(f.reads, env), units * evaluate_int(f.writes, env))


def workload_formula(algorithm: str, schedule: str, causal: bool) -> CostFormula:
    return _workload_lookup(WORKLOAD_FORMULAS, algorithm, schedule, causal, "one with a workload formula")


def workload_cost(algorithm: str, w: object, schedule: str = "per-head") -> IOCount:
    """Exact reads and writes (words) of ``algorithm``'s workload schedule over the whole workload ``w``
    (an :class:`attnio.core.workload.Workload`): units × the unit formula.

    >>> from attnio.core.workload import Workload
    >>> workload_cost("flash2", Workload.build(N=4, d=2, M=14, causal=True))
    IOCount(reads_words=48, writes_words=12)
    """
    return _workload_evaluate(workload_formula(algorithm, schedule, w.causal), w, grouped=schedule == "grouped")  # type: ignore[attr-defined]

# ===========================================================================================================
# Backward pass (derived here, docs/costs.md#backward). Kept apart from FORMULAS, which holds forward passes
# only (the forward catalog, claims, constants table and `auto` iterate FORMULAS).
# Inputs Q, K (N×d), V, O, dO (N×dv) and the forward's saved statistics start in slow memory; dQ, dK, dV end there.
# ===========================================================================================================

BACKWARD_FORMULAS: dict[str, CostFormula] = {}


def _add_bwd(f: CostFormula) -> None:
    assert f.algorithm not in BACKWARD_FORMULAS and f.algorithm not in FORMULAS
    BACKWARD_FORMULAS[f.algorithm] = f


# Two backward loops with two block rules each: one formula per loop, given its block rule.


def _flash2_bwd(name: str, key: str, cols: Expr, leading: str) -> CostFormula:
    """FA-2's backward (Alg. 2) with ``cols`` K/V rows per block (block size ``key``), T_c = ⌈N/cols⌉."""
    T_c = ceil(N / cols)
    sizes = {key: cols, "T_c": T_c}
    reads = 2 * N * dv + N * (d + dv) + T_c * (2 * N * d + N * dv + 2 * N)  # D pass (O, dO), K, V once; Q, dO, dQ, L, D per K/V block
    writes = N + N * d + N * (d + dv) + T_c * N * d  # D, the dQ initialisation, dK and dV once; dQ per K/V block
    return CostFormula(name, reads, writes, (M >= 4 * d + 3 * dv + 4,), sizes, "docs/costs.md#flash2-bwd", leading)


def _flash1_bwd(name: str, key: str, cols: Expr, valid: tuple[Rel, ...], leading: str, B_r: Expr | None = None) -> CostFormula:
    """FA-1's backward (FA Alg. 4) with ``cols`` K/V rows per block (block size ``key``), T_c = ⌈N/cols⌉."""
    T_c = ceil(N / cols)
    sizes = {key: cols} | ({"B_r": B_r} if B_r is not None else {}) | {"T_c": T_c}
    reads = N * (d + dv) + T_c * (2 * N * d + 2 * N * dv + 2 * N)  # K, V once; Q, O, dO, dQ, ℓ, m per K/V block
    writes = N * (2 * d + dv) + T_c * N * d + N * (d + dv)  # dQ, dK, dV initialised; dQ per K/V block; dK, dV once
    return CostFormula(name, reads, writes, valid, sizes, "docs/costs.md#flash1-bwd", leading)


# flash2-bwd (FA-2 Alg. 2, io-optimal rule): c = ⌊(M − 2d − dv − 2)/(2d + 2dv + 2)⌋ K/V rows, T_c = ⌈N/c⌉.
_leading = "16N²d²/M (dv = d): per K/V block Q, dQ, dO read and dQ written"
_add_bwd(_flash2_bwd("flash2-bwd", "c", blocks.flash2_bwd(d, dv).resident(M, "cols"), _leading))

# flash2-square-bwd: B_r = B_c = b = ⌊(⌊√(p² + 8M)⌋ − p)/4⌋, p = 4d + 3dv + 2.
_leading = "4N²d·⌈N/b⌉/N with 2b² + (7d + 2)b ≈ M (dv = d): ≈ 28N²d²/M for M ≪ 49d², → 4√2·N²d/√M for M ≫ 49d²"
_add_bwd(_flash2_bwd("flash2-square-bwd", "b", blocks.flash2_bwd(d, dv).square(M), _leading))

# flash2-fused-bwd (derived here): flash2-bwd's loop and block rule; D formed from O_i, dQ_i started at zero on a
# row's first visit (K/V block 1), so no D pass and no dQ initialisation; D written only when a later block reads it.
_cfb = blocks.flash2_bwd(d, dv).resident(M, "cols")
_Tcfb = ceil(N / _cfb)
_add_bwd(
    CostFormula(
        algorithm="flash2-fused-bwd",
        # O once (first visit), K, V once; Q, dO, L per K/V block; dQ, D per later K/V block
        reads=N * dv + N * (d + dv) + _Tcfb * N * (d + dv + 1) + (_Tcfb - 1) * N * (d + 1),
        writes=minimum(_Tcfb - 1, 1) * N + _Tcfb * N * d + N * (d + dv),  # D (if read back); dQ per K/V block; dK, dV once
        valid=(M >= 4 * d + 3 * dv + 4,),
        blocks={"c": _cfb, "T_c": _Tcfb},
        derivation="docs/costs.md#flash2-fused-bwd",
        leading="16N²d²/M (dv = d), flash2-bwd's, less N(2d + dv + 1) fixed words",
    )
)

# flash2-2pass-bwd (derived here): pass 1 c = ⌊(M − d − dv − 2)/(2d + 2dv + 2)⌋ K/V rows resident, T_c = ⌈N/c⌉;
# pass 2 a = ⌊(M − d − dv)/(2d + dv + 4)⌋ Q rows resident, T_r2 = ⌈N/a⌉.
_c2p = blocks.flash2_2pass_bwd_kv(d, dv).resident(M, "cols")
_a2p = blocks.flash2_2pass_bwd_q(d, dv).resident(M, "rows")
_Tc2p, _Tr2p = ceil(N / _c2p), ceil(N / _a2p)
_add_bwd(
    CostFormula(
        algorithm="flash2-2pass-bwd",
        # D pass (O, dO); pass 1: K, V once, Q, dO, L, D per K/V block; pass 2: Q, dO, L, D once, K, V per Q block
        reads=2 * N * dv + N * (d + dv) + _Tc2p * (N * d + N * dv + 2 * N) + N * (d + dv + 2) + _Tr2p * (N * d + N * dv),
        writes=N + N * (d + dv) + N * d,  # D; dK, dV once (pass 1); dQ once (pass 2)
        valid=(M >= 3 * d + 3 * dv + 4,),
        blocks={"c": _c2p, "T_c": _Tc2p, "a": _a2p, "T_r2": _Tr2p},
        derivation="docs/costs.md#flash2-2pass-bwd",
        leading="14N²d²/M (dv = d): pass 1 reads Q, dO per K/V block (8), pass 2 reads K, V per Q block (6)",
    )
)

# flash1-bwd (FA Alg. 4 as published): B_c = ⌈M/4d⌉, T_c = ⌈N/B_c⌉; dQ, dK, dV initialised in slow memory.
_Bcb1 = ceil(M / (4 * d))
_add_bwd(_flash1_bwd("flash1-bwd", "B_c", _Bcb1, (M >= 1,), "20N²d²/M (dv = d); working set ≈ 2M", B_r=minimum(_Bcb1, d)))  # audit mode

# flash1-fit-bwd: c = ⌊(M − 2(d + dv) − 3)/(2(d + dv) + 2)⌋.
_add_bwd(_flash1_bwd("flash1-fit-bwd", "c", blocks.flash1_fit_bwd(d, dv).resident(M, "cols"), (M >= 4 * (d + dv) + 5,), "20N²d²/M (dv = d)"))

# standard-bwd (FA Alg. 3): square tiles b = ⌊√(M/3)⌋; P read, dP and dS materialised.
_bsb = floor(sqrt(M / 3))
_Tsb, _Tdsb, _Tvsb = ceil(N / _bsb), ceil(d / _bsb), ceil(dv / _bsb)
_add_bwd(
    CostFormula(
        algorithm="standard-bwd",
        reads=_Tvsb * N**2 + 3 * _Tsb * N * dv + 4 * N**2 + 2 * _Tdsb * N**2 + 2 * _Tsb * N * d,
        writes=N * dv + 2 * N**2 + 2 * N * d,
        valid=(M >= 3,),
        blocks={"b": _bsb, "T": _Tsb, "T_d": _Tdsb, "T_v": _Tvsb},
        derivation="docs/costs.md#standard-bwd",
        leading="8√3·N²d/√M + 6N² while M < 3d²; 9N² + 5√3·N²d/√M once b ≥ d (dv = d): Θ(Nd + N²), FA Thm 5",
    )
)

def _square_bwd(algorithm: str, B: Expr, stats_per_row: bool, valid: tuple[Rel, ...], leading: str) -> None:
    """A square-tiled backward with side B (T = ⌈N/B⌉, T_d = ⌈d/B⌉, T_v = ⌈d_v/B⌉): phase 0 (O, dO), phase 1 (dO,
    V, S and the statistics L, D: 2N once per row tile, or 2T·N with each S row when ``stats_per_row``), phase 2
    (S, L, dO), phases 3 and 4 (dS, K, Q); the other statistics term is 0, so each stands where the
    derivation (docs/costs.md#<algorithm>) writes it."""
    T, T_d, T_v = ceil(N / B), ceil(d / B), ceil(dv / B)
    once, per_row = (0, 2 * T * N) if stats_per_row else (2 * N, 0)
    _add_bwd(
        CostFormula(
            algorithm=algorithm,
            reads=2 * N * dv + once + 3 * T * N * dv + N**2 + per_row + T_v * N**2 + T * T_v * N + 2 * T_d * N**2
            + 2 * T * N * d,
            writes=N + N**2 + N * dv + 2 * N * d,
            valid=valid,
            blocks={"B": B, "T": T, "T_d": T_d, "T_v": T_v},
            derivation=f"docs/costs.md#{algorithm}",
            leading=leading,
        )
    )


# square_tiling-bwd (derived here): B = ⌊(⌊√(3M + 1)⌋ − 1)/3⌋, the largest with 3B² + 2B ≤ M.
_square_bwd("square_tiling-bwd", floor((floor(sqrt(3 * M + 1)) - 1) / 3), False, (M >= 5,),
            "8√3·N²d/√M + 2N² (dv = d): Θ(N²d/√M) for M ≤ d²")
# square_tiling-io-bwd (derived here): B×B output tiles, the inner dimension streamed one index at a time;
# B = ⌊√(M + 1)⌋ − 1, the largest with B² + 2B ≤ M.
_square_bwd("square_tiling-io-bwd", floor(sqrt(M + 1)) - 1, True, (M >= 3,),
            "8N²d/√M + 2N² (dv = d): Θ(N²d/√M) for M ≤ d², √3 below square_tiling-bwd's leading term")

def backward_formula(algorithm: str) -> CostFormula:
    return _lookup(BACKWARD_FORMULAS, algorithm, "a backward schedule with a cost formula")


def backward_cost(algorithm: str, *, N: int, d: int, M: int, dv: int | None = None) -> IOCount:
    """The exact reads and writes of the backward schedule ``algorithm`` at (N, d, M[, dv]).

    >>> backward_cost("flash2-bwd", N=4, d=2, M=30)
    IOCount(reads_words=96, writes_words=44)
    """
    return _evaluate(backward_formula(algorithm), algorithm, N=N, d=d, M=M, dv=dv)


# ===========================================================================================================
# Backward pass of workloads (derived here, docs/costs.md#workloads; schedule: algorithms/workloads_bwd.py).
# One unit = one K/V head with its g query heads (both schedules: the per-head one combines the heads' dK, dV
# in slow memory, so its unit is the group too); the workload's count is batch·H_kv × the unit count.
# ===========================================================================================================

WORKLOAD_BACKWARD_FORMULAS: dict[tuple[str, str, bool], CostFormula] = {}

# flash2-bwd, io-optimal rule on N_kv key rows: c K/V rows, T_c = ⌈N_kv/c⌉ blocks of B_c = ⌈N_kv/T_c⌉.
_cbw = blocks.flash2_bwd(d, dv).resident(M, "cols")
_Tcbw = ceil(Nkv / _cbw)
_Bcbw = ceil(Nkv / _Tcbw)


def _flash2_bwd_workloads(name: str, B_c: Expr, q_words: Callable[[Expr], tuple[Expr, Expr]],
                          leading: Callable[[str], str]) -> None:
    """The grouped and per-head formulas of a flash2-bwd loop with K/V blocks of B_c rows, unmasked and causal:
    ``q_words(R)`` gives the query-side reads and writes when R query rows are visited per head; K, V are read
    and dK, dV written once per K/V head (grouped), or K/V read per head and the partial dK/dV read back
    (per-head). ``leading(tag)``: the note of the formula named ``name/tag``."""
    for causal, R in ((False, _Tcbw * Nq), (True, _causal_visits(_Tcbw, B_c))):
        q_reads, q_writes = q_words(R)
        kvw = Nkv * (d + dv)
        for sched, r, wr in (
            ("grouped", q_reads + kvw, q_writes + kvw),
            ("per-head", q_reads + (2 * g - 1) * kvw, q_writes + g * kvw),
        ):
            tag = sched + ("/causal" if causal else "")
            WORKLOAD_BACKWARD_FORMULAS[(name, sched, causal)] = _wf(
                f"{name}/{tag}", r, wr, (M >= 4 * d + 3 * dv + 4,) + ((Nq <= Nkv,) if causal else ()),
                {"c": _cbw, "T_c": _Tcbw, "B_c": B_c}, leading(tag),
            )


# D pass (O, dO) + per visited row Q, dO, dQ, L, D; writes D, the dQ initialisation, dQ per visited row.
_flash2_bwd_workloads(
    "flash2-bwd", _Bcbw, lambda R: (g * (2 * Nq * dv + R * (2 * d + dv + 2)), g * (Nq + Nq * d + R * d)),
    lambda tag: "causal: Σ_j (N_q − max(0, j·B_c − δ)) visited Q rows per head" if tag.endswith("/causal")
    else "T_c·g·N_q(3d + d_v + 2) Q/dO/dQ/L/D words",
)


# flash2-fused-bwd (derived here): the same loop; per query head O read once (first visit), no D pass, no dQ
# initialisation; dQ and D read on the R − N_q later visits; D written when T_c > 1. Blocks: T_c − 1 full blocks of
# B_c = min(c, N_kv) K/V rows, the remainder last (so under a causal mask the later blocks start later: fewer visits).
# Reads: O once; Q, dO, L per visit; dQ, D per later visit. Writes: D (if read back), dQ per visited row.
_flash2_bwd_workloads(
    "flash2-fused-bwd", minimum(_cbw, Nkv),
    lambda R: (g * (Nq * dv + R * (d + dv + 1) + (R - Nq) * (d + 1)), g * (minimum(_Tcbw - 1, 1) * Nq + R * d)),
    lambda tag: f"flash2-bwd/{tag} less g·N_q(2d + d_v + 1) words (+ g·N_q when T_c = 1)",
)


def workload_backward_formula(algorithm: str, schedule: str, causal: bool) -> CostFormula:
    return _workload_lookup(WORKLOAD_BACKWARD_FORMULAS, algorithm, schedule, causal, "a backward with a workload formula")


def workload_backward_cost(algorithm: str, w: object, schedule: str = "grouped") -> IOCount:
    """Exact reads and writes (words) of the workload backward ``algorithm`` over the whole workload ``w``:
    batch·H_kv units (a K/V head with its g query heads) × the unit formula.

    >>> from attnio.core.workload import Workload
    >>> workload_backward_cost("flash2-bwd", Workload.build(N=4, d=2, M=30, causal=True))
    IOCount(reads_words=80, writes_words=40)
    """
    # both schedules' unit is a K/V head with its g query heads (the per-head one combines dK, dV in slow memory)
    return _workload_evaluate(workload_backward_formula(algorithm, schedule, w.causal), w, grouped=True)  # type: ignore[attr-defined]
