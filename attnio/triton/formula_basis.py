"""The candidate basis of :mod:`attnio.triton.formula`: features of a shape, one axis at a time, and the exact
solve of a factorial design.

A kernel's count of one tensor and field (reads or writes, bytes or words) is fitted as

    count = Σ_{u, w, l} θ_uwl · unit_u · width_w · length_l        (θ rational)

with one factor from each axis (names as in the shape: Z batch, H query heads, H_kv K/V heads, d, d_v widths,
N_q, N_kv rows, B_r, B_c the kernel's pinned blocks, T_r = ⌈N_q/B_r⌉, T_c = ⌈N_kv/B_c⌉, δ = N_kv − N_q, S the
kernel's pinned key splits where it has them):

- units: ``Z*H``, ``Z*H_kv`` (default), ``Z``, ``1``;
- widths: ``1``, ``d``, ``d_v`` (default), ``T_d`` = ⌈d/B_c⌉, ``T_v`` = ⌈d_v/B_c⌉ (kernels that tile the width);
- lengths without a mask: ``1, N_q, N_kv, T_r, T_c, T_r*N_kv, T_r*T_c, T_c*N_q, N_q*N_kv``, and on request
  (derived from two loop structures of shipped kernels, docs/triton-formula.md#fit):

  - ``T_r*N_q``: with ``T_r*N_kv``, the δ = N_kv − N_q keys of a cached prefix that every Q block loads
    (a prefix prefill: T_r·δ = T_r·N_kv − T_r·N_q, the new keys counted apart by SE − T_r·δ);
  - ``NE`` = ⌈T_c/⌈T_c/S⌉⌉: the non-empty splits of a split-K kernel that cuts the T_c key tiles into S
    splits of ⌈T_c/S⌉ tiles each (split s is empty when s·⌈T_c/S⌉ ≥ T_c) and skips the empty ones (query rows
    re-read and partial outputs written once per non-empty split), and ``N_q*NE`` (query rows × non-empty
    splits, the same kernel at N_q > 1); they need S (``context``'s ``splits``);

  under a causal mask
  (bottom-right: query row i sees key rows j ≤ i + δ) the products become the visit sums they count, with
  e_i = min(N_q, (i + 1)B_r) the end of Q block i, E_i = e_i + δ its key rows, r_i = e_i − i·B_r its rows, and
  s_j = max(0, j·B_c − δ) the first query row that sees K block j:

  ======  ===========================  =============================================  ==========
  name    sum                          what it counts                                 unmasked
  ======  ===========================  =============================================  ==========
  SE      Σ_i E_i                      key rows loaded by the Q blocks                T_r*N_kv
  ST      Σ_i ⌈E_i/B_c⌉                key tiles visited by the Q blocks              T_r*T_c
  SrT     Σ_i r_i·⌈E_i/B_c⌉            query rows × key tiles                         N_q*T_c
  SrE     Σ_i r_i·E_i                  (query row, key row) pairs in visited blocks   N_q*N_kv
  SR      Σ_j (N_q − s_j)              query rows loaded by the K blocks              T_c*N_q
  SQ      Σ_j ⌈(N_q − s_j)/B_r⌉        query tiles visited by the K blocks            T_c*T_r
  ======  ===========================  =============================================  ==========

Each feature is one Python expression (its evaluation, also the text of the generated ``launch_metadata``), a
sympy form, and, for the solver, an attnio expression at N_q = N_kv = N (δ = 0) with T_r = ⌈N/B_r⌉ left as a
ceiling (the translator brackets it: B·t ≥ N, B·t ≤ N + B − 1). SrT and ST have that closed form only when
B_c divides B_r, SQ when B_r divides B_c (None otherwise: such a formula is not compared).

>>> ctx = context(dict(Z=1, H=1, H_kv=1, N_q=5, N_kv=5, d=2, d_v=2), (2, 2))
>>> [value(LENGTH["SE"], ctx), value(LENGTH["SR"], ctx)]   # Q blocks see 2, 4, 5 keys; K blocks 5, 3, 1 rows
[11, 9]
>>> inverse([[1, 1], [2, 1]]) == [[-1, 1], [2, -1]]
True
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

SHAPE = ("Z", "H", "H_kv", "N_q", "N_kv", "d", "d_v")

_E = "(min(N_q, (i + 1) * B_r) + N_kv - N_q)"  # E_i
_R = "(min(N_q, (i + 1) * B_r) - i * B_r)"  # r_i
_S = "(N_q - max(0, j * B_c - (N_kv - N_q)))"  # N_q − s_j


@dataclass(frozen=True)
class Feature:
    """One basis function: ``py`` a Python expression over the shape names, B_r, B_c, T_r, T_c (ints)."""

    name: str
    py: str
    doc: str = ""


def _f(name: str, py: str, doc: str = "") -> Feature:
    return Feature(name, py, doc)


UNIT = {f.name: f for f in (_f("Z*H", "Z * H"), _f("Z*H_kv", "Z * H_kv"), _f("Z", "Z"), _f("1", "1"))}
WIDTH = {f.name: f for f in (_f("1", "1"), _f("d", "d"), _f("d_v", "d_v"), _f("T_d", "-(-d // B_c)"),
                             _f("T_v", "-(-d_v // B_c)"))}
LENGTH = {f.name: f for f in (
    _f("1", "1"), _f("N_q", "N_q"), _f("N_kv", "N_kv"), _f("T_r", "T_r"), _f("T_c", "T_c"),
    _f("T_r*N_kv", "T_r * N_kv"), _f("T_r*T_c", "T_r * T_c"), _f("T_c*N_q", "T_c * N_q"), _f("N_q*N_kv", "N_q * N_kv"),
    _f("T_r*N_q", "T_r * N_q"),
    _f("NE", "-(-T_c // -(-T_c // S))", "non-empty key splits, ⌈T_c/⌈T_c/S⌉⌉ (S key splits of ⌈T_c/S⌉ tiles)"),
    _f("N_q*NE", "N_q * -(-T_c // -(-T_c // S))"),
    _f("SE", f"sum({_E} for i in range(T_r))", "key rows loaded by the Q blocks, Σ_i E_i"),
    _f("ST", f"sum(-(-{_E} // B_c) for i in range(T_r))", "key tiles visited by the Q blocks, Σ_i ⌈E_i/B_c⌉"),
    _f("SrT", f"sum({_R} * -(-{_E} // B_c) for i in range(T_r))", "query rows × key tiles, Σ_i r_i·⌈E_i/B_c⌉"),
    _f("SrE", f"sum({_R} * {_E} for i in range(T_r))", "(query row, key row) pairs in visited blocks, Σ_i r_i·E_i"),
    _f("SR", f"sum({_S} for j in range(T_c))", "query rows loaded by the K blocks, Σ_j (N_q − s_j)"),
    _f("SQ", f"sum(-(-{_S} // B_r) for j in range(T_c))", "query tiles visited by the K blocks, Σ_j ⌈(N_q − s_j)/B_r⌉"),
)}
UNITS_DEFAULT = ("Z*H", "Z*H_kv")
WIDTHS_DEFAULT = ("1", "d", "d_v")
LENGTHS_PLAIN = ("1", "N_q", "N_kv", "T_r", "T_c", "T_r*N_kv", "T_r*T_c", "T_c*N_q", "N_q*N_kv")
LENGTHS_CAUSAL = ("1", "N_q", "N_kv", "T_r", "T_c", "SE", "ST", "SrT", "SrE", "SR", "SQ")
NAMED = ("SE", "ST", "SrT", "SrE", "SR", "SQ", "NE")  # lengths printed by name (their definitions apart)


def named_in(length: str) -> list[str]:
    """The named lengths (:data:`NAMED`, defined apart) that the length ``length`` is a product of."""
    return [n for n in length.split("*") if n in NAMED]


def context(shape: dict[str, int], block: tuple[int, int], splits: int | None = None) -> dict[str, int]:
    """The names a feature reads: the shape, B_r, B_c, T_r, T_c, and S = ``splits`` when the kernel has them."""
    B_r, B_c = block
    return {**{k: int(shape[k]) for k in SHAPE}, "B_r": B_r, "B_c": B_c,
            "T_r": -(-int(shape["N_q"]) // B_r), "T_c": -(-int(shape["N_kv"]) // B_c),
            **({} if splits is None else {"S": int(splits)})}


def value(f: Feature, ctx: dict[str, int]) -> int:
    """The feature's exact value (an int) at ``ctx`` (:func:`context`)."""
    env = {"__builtins__": {}, "min": min, "max": max, "sum": sum, "range": range, **ctx}  # globals: seen by the sums
    return int(eval(f.py, env))  # noqa: S307 (our own constant text)


# ------------------------------------------------------------------------------------------------- sympy forms

def sympy_symbols() -> dict[str, Any]:
    import sympy as sp

    names = (*SHAPE, "B_r", "B_c", "T_r", "T_c", "T_d", "T_v", "S", *NAMED)
    return {n: sp.Symbol(n, integer=True, positive=n not in NAMED) for n in names}


def sympy_of(axis: dict[str, Feature], name: str) -> Any:
    """The feature ``name`` of ``axis`` as a sympy expression in the shape symbols and the named sums."""
    import sympy as sp

    s = sympy_symbols()
    if name in (*NAMED, "T_r", "T_c", "T_d", "T_v"):
        return s[name]
    return sp.sympify(name, locals=s)


def sympy_definitions() -> dict[Any, Any]:
    """Each named feature symbol -> its definition (sympy: ``ceiling``, ``Min``, ``Max``, ``Sum``)."""
    import sympy as sp

    s = sympy_symbols()
    i, j = sp.symbols("i j", integer=True, nonnegative=True)
    Nq, Nkv, Br, Bc = s["N_q"], s["N_kv"], s["B_r"], s["B_c"]
    Tr, Tc = sp.ceiling(Nq / Br), sp.ceiling(Nkv / Bc)
    E = sp.Min(Nq, (i + 1) * Br) + Nkv - Nq
    r = sp.Min(Nq, (i + 1) * Br) - i * Br
    S = Nq - sp.Max(0, j * Bc - (Nkv - Nq))
    return {
        s["T_r"]: Tr, s["T_c"]: Tc, s["T_d"]: sp.ceiling(s["d"] / Bc), s["T_v"]: sp.ceiling(s["d_v"] / Bc),
        s["SE"]: sp.Sum(E, (i, 0, Tr - 1)), s["ST"]: sp.Sum(sp.ceiling(E / Bc), (i, 0, Tr - 1)),
        s["SrT"]: sp.Sum(r * sp.ceiling(E / Bc), (i, 0, Tr - 1)), s["SrE"]: sp.Sum(r * E, (i, 0, Tr - 1)),
        s["SR"]: sp.Sum(S, (j, 0, Tc - 1)), s["SQ"]: sp.Sum(sp.ceiling(S / Br), (j, 0, Tc - 1)),
        s["NE"]: sp.ceiling(Tc / sp.ceiling(Tc / s["S"])),
    }


# ----------------------------------------------------------------------------- solver forms at N_q = N_kv = N

def square_form(axis: str, name: str, consts: dict[str, int], N: Any, N_q: int | None = None) -> Any:
    """The feature as an attnio expression at N_q = N_kv = N (``N`` an attnio symbol, δ = 0), or at N_kv = N with
    ``N_q`` fixed (a decode kernel: products only), the other shape names and the blocks fixed by ``consts``;
    None when it has no closed form there (module docstring). NE is S over the range when ``consts["N_lo"]`` >
    S(S − 1)·B_c (then ⌈T_c/S⌉ ≥ S, so T_c/⌈T_c/S⌉ > S − 1 and NE = S), else None."""
    from attnio.bounds.expr import ceil, const

    Br, Bc = consts["B_r"], consts["B_c"]
    if axis == "unit":
        return const(value(UNIT[name], {**consts}))
    if axis == "width":
        return const(value(WIDTH[name], {**consts}))
    Q, Tr, Tc = N, ceil(N / Br), ceil(N / Bc)
    if N_q is not None:
        Q, Tr = const(N_q), const(-(-N_q // Br))
    forms = {"1": const(1), "N_q": Q, "N_kv": N, "T_r": Tr, "T_c": Tc, "T_r*N_kv": Tr * N, "T_r*T_c": Tr * Tc,
             "T_c*N_q": Tc * Q, "N_q*N_kv": Q * N, "T_r*N_q": Tr * Q}
    S = consts.get("S")
    if S is not None and consts.get("N_lo", 0) > S * (S - 1) * Bc:
        forms["NE"], forms["N_q*NE"] = const(S), Q * S
    if N_q is not None:
        return forms.get(name)
    tri_r, tri_c = Tr * (Tr - 1) / 2, Tc * (Tc - 1) / 2
    last = N - (Tr - 1) * Br  # rows of the last Q block
    forms.update(SE=Br * tri_r + N, SrE=Br * Br * tri_r + last * N, SR=Tc * N - Bc * tri_c)
    if Br % Bc == 0:
        k = Br // Bc
        forms["ST"] = k * tri_r + Tc
        forms["SrT"] = Br * k * tri_r + last * Tc
    if Bc % Br == 0:
        forms["SQ"] = Tc * Tr - (Bc // Br) * tri_c
    return forms.get(name)


# ------------------------------------------------------------------------------------------------ exact algebra

def rank(rows: list[list[Fraction]]) -> int:
    """The rank of a rational matrix (Gaussian elimination over Fraction)."""
    m = [list(map(Fraction, r)) for r in rows]
    rk, cols = 0, len(m[0]) if m else 0
    for c in range(cols):
        p = next((i for i in range(rk, len(m)) if m[i][c] != 0), None)
        if p is None:
            continue
        m[rk], m[p] = m[p], m[rk]
        for i in range(len(m)):
            if i != rk and m[i][c] != 0:
                f = m[i][c] / m[rk][c]
                m[i] = [a - f * b for a, b in zip(m[i], m[rk], strict=True)]
        rk += 1
    return rk


def inverse(a: list[list[Any]]) -> list[list[Fraction]]:
    """The inverse of a square nonsingular rational matrix (ValueError if singular)."""
    n = len(a)
    m = [[Fraction(x) for x in row] + [Fraction(int(i == j)) for j in range(n)] for i, row in enumerate(a)]
    for c in range(n):
        p = next((i for i in range(c, n) if m[i][c] != 0), None)
        if p is None:
            raise ValueError("singular design")
        m[c], m[p] = m[p], m[c]
        piv = m[c][c]
        m[c] = [x / piv for x in m[c]]
        for i in range(n):
            if i != c and m[i][c] != 0:
                f = m[i][c]
                m[i] = [a_ - f * b for a_, b in zip(m[i], m[c], strict=True)]
    return [row[n:] for row in m]


def greedy_design(candidates: list[Any], row_of: Any, size: int) -> list[Any]:
    """The first candidates (in order) whose rows raise the rank, until it is ``size``; ValueError if the
    candidates cannot reach it (the basis is not identifiable on them)."""
    chosen: list[Any] = []
    rows: list[list[Fraction]] = []
    for c in candidates:
        r = [Fraction(x) for x in row_of(c)]
        if rank([*rows, r]) > len(rows):
            chosen.append(c)
            rows.append(r)
            if len(rows) == size:
                return chosen
    raise ValueError(f"the candidate points reach rank {len(rows)} of {size}")
