"""The two laws :mod:`attnio.triton.scale` checks and extrapolates by, as pure functions (no Triton).

**Grid law** (:func:`grid_law`): a launch's grid at the workload from its grids at witnesses (the workload with
b ∈ {1, b_w} batches and k ∈ {1, k_w} K/V heads, group size kept): each axis's extent must be
e(b, k) = e(1, 1)·b^β·k^κ with β, κ ∈ {0, 1}, read off b = 2 and k = 2 and checked at (b_w, k_w); an axis with
β = κ = 0 is a *block* axis (its extent is the workload's), the others are *unit* axes (the workload's extent is
e(1, 1)·B^β·K^κ: extrapolated by the law). Anything else is a :class:`Mismatch`.

**Piecewise-affine law** (:func:`fit_axis`): the count c(i) of program i along a block axis of T programs is cut
into pieces, each affine, found from the cheaper end: programs 0 and T − 1 run first, and when T − 1 moved fewer
words (its loops are shorter: a FlashAttention backward's K/V block j visits the query blocks from j on) the loop
below runs on i ↦ c(T − 1 − i), so that the programs each line is drawn through and checked at first are the
cheap ones (the sum and the checks are the same law read backwards); else from the left::

    lo = 0
    while lo < T:
        T − lo ≤ 3: run lo..T−1 (exact)
        else: the line through c(lo), c(lo+1); hi = T−1 if c(T−1) is on it, else T−2 if c(T−2) is on it,
              else bisect [lo+1, T−1] for the last program on it (the line's programs taken as a prefix);
              check c(lo+2) and ``verify`` seeded random programs in (lo+2, hi) on it (else Mismatch);
              Σ_{i=lo..hi} c(i) = n·c(lo) + (c(lo+1) − c(lo))·n(n−1)/2, n = hi − lo + 1; lo = hi + 1

More than :data:`MAX_PIECES` pieces is a Mismatch (not piecewise affine). A piece of one or two programs is
run, not fitted. What is not checked: the line on the programs of a piece that were not run.

>>> c = lambda i: Counts({"k": (0, 0, 10 * i + 3, 0)}) if i < 9 else Counts({"k": (0, 0, 50, 0)})
>>> total, pieces = fit_axis(10, lambda idx: {i: c(i) for i in idx}, verify=1, seed=0)
>>> total["k"][2] == sum(10 * i + 3 for i in range(9)) + 50, pieces
(True, '[0..8] affine (checked on 2, 6), [9] run')
>>> c = lambda i: Counts({"k": (0, 0, 10 * (9 - i) + 3, 0)}) if i else Counts({"k": (0, 0, 200, 0)})
>>> total, pieces = fit_axis(10, lambda idx: {i: c(i) for i in idx}, verify=1, seed=0)
>>> total["k"][2] == 200 + sum(10 * (9 - i) + 3 for i in range(1, 10)), pieces
(True, 'found from the right (program T−1 moved fewer words than program 0): [0] run, [1..9] affine (checked on 3, 7)')
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from attnio.core.errors import AttnioError

#: a block axis is cut into at most this many affine pieces
MAX_PIECES = 6


class Mismatch(AttnioError, RuntimeError):
    """A sampled program, or a launch's grid, did not behave as the extrapolation needs."""


class Counts(dict):
    """tensor -> (read bytes, written bytes, read words, written words); + and − per tensor, × an integer;
    equality ignores all-zero entries."""

    def _get(self, k: str) -> tuple[int, ...]:
        return tuple(self.get(k, (0, 0, 0, 0)))

    def __add__(self, o: Counts) -> Counts:
        return Counts({k: tuple(a + b for a, b in zip(self._get(k), o._get(k), strict=True)) for k in set(self) | set(o)})

    def __sub__(self, o: Counts) -> Counts:
        return Counts({k: tuple(a - b for a, b in zip(self._get(k), o._get(k), strict=True)) for k in set(self) | set(o)})

    def __mul__(self, n: int) -> Counts:
        return Counts({k: tuple(a * n for a in v) for k, v in self.items()})

    def __eq__(self, o: object) -> bool:
        if not isinstance(o, dict):
            return NotImplemented
        o = Counts(o)
        return all(self._get(k) == o._get(k) for k in set(self) | set(o))

    __hash__ = None  # type: ignore[assignment]


def grid_law(grids: dict[tuple[int, int], list[tuple[str, tuple[int, int, int]]]], batch: int,
             kv_heads: int) -> list[dict[str, Any]]:
    """Per launch: ``name``, ``extent`` (the workload's grid), ``units`` (indices of unit axes) and ``law``
    (text) from the witnesses' grids ``grids[(b, k)]`` (module docstring); the witnesses must launch the same
    kernels in the same order."""
    keys = sorted(grids)
    first = grids[(1, 1)]
    for key in keys:
        if [n for n, _ in grids[key]] != [n for n, _ in first]:
            raise Mismatch(f"the witness with batch {key[0]}, kv_heads {key[1]} launches "
                           f"{[n for n, _ in grids[key]]}, the one with 1, 1 {[n for n, _ in first]}")
    bw, kw = max(b for b, _ in keys), max(k for _, k in keys)
    out = []
    for ell, (name, g11) in enumerate(first):
        extent, units, laws = [], [], []
        for ax in range(3):
            e11 = g11[ax]
            beta = kappa = 0
            if bw > 1:
                e = grids[(bw, 1)][ell][1][ax]
                if e not in (e11, bw * e11):
                    raise Mismatch(f"launch {ell} ({name}) axis {'xyz'[ax]}: extent {e11} at batch 1, {e} at batch "
                                   f"{bw}: not proportional to the batch nor independent of it")
                beta = int(e != e11)
            if kw > 1:
                e = grids[(1, kw)][ell][1][ax]
                if e not in (e11, kw * e11):
                    raise Mismatch(f"launch {ell} ({name}) axis {'xyz'[ax]}: extent {e11} at 1 K/V head, {e} at "
                                   f"{kw}: not proportional to the K/V heads nor independent of them")
                kappa = int(e != e11)
            if bw > 1 and kw > 1:
                e = grids[(bw, kw)][ell][1][ax]
                if e != e11 * bw**beta * kw**kappa:
                    raise Mismatch(f"launch {ell} ({name}) axis {'xyz'[ax]}: extent {e} at batch {bw}, {kw} K/V "
                                   f"heads, not {e11 * bw**beta * kw**kappa} as at the other witnesses")
            extent.append(e11 * batch**beta * kv_heads**kappa)
            if beta or kappa:
                units.append(ax)
                laws.append(f"{'xyz'[ax]} = {e11}" + "·batch" * beta + "·kv_heads" * kappa)
        out.append({"name": name, "extent": tuple(extent), "units": units, "law": ", ".join(laws)})
    return out


def words(c: Counts) -> int:
    """Words read and written by one program (every tensor), the cost by which programs are compared."""
    return sum(v[2] + v[3] for v in c.values())


def fit_axis(T: int, run: Callable[[list[int]], dict[int, Counts]], *, verify: int = 1,
             seed: int = 0) -> tuple[Counts, str]:
    """Σ_{i<T} c(i) by the piecewise-affine law (module docstring), and the pieces as text; ``run(indices)``
    returns c at those indices (each index asked once). Programs 0 and T − 1 run first; when T − 1 moved fewer
    words, the pieces are found from the right (the law on i ↦ T − 1 − i; the text says so)."""
    known: dict[int, Counts] = {}

    def need(idx: list[int]) -> None:
        missing = sorted({i for i in idx if i not in known})
        if missing:
            got = run(missing)
            known.update({i: Counts(got[i]) for i in missing})

    need([0, T - 1])
    right = words(known[T - 1]) < words(known[0])
    at = (lambda i: T - 1 - i) if right else (lambda i: i)
    total, pieces = _fit_from_left(T, lambda idx: need([at(i) for i in idx]), lambda i: known[at(i)], at, verify,
                                   seed)
    spans = sorted((min(at(lo), at(hi)), max(at(lo), at(hi)), sorted(at(i) for i in checks))
                   for lo, hi, checks in pieces)
    text = []
    for lo, hi, checks in spans:
        if not checks:
            text.append(f"[{lo}..{hi}] run" if hi > lo else f"[{lo}] run")
        else:
            text.append(f"[{lo}..{hi}] affine (checked on {', '.join(map(str, checks))})")
    return total, ("found from the right (program T−1 moved fewer words than program 0): " if right else "") + \
        ", ".join(text)


def _fit_from_left(T: int, need: Callable[[list[int]], None], c: Callable[[int], Counts], at: Callable[[int], int],
                   verify: int, seed: int) -> tuple[Counts, list[tuple[int, int, list[int]]]]:
    """The module docstring's loop on c (``need`` runs indices first): the sum and the pieces (lo, hi, checked
    indices; a piece run in full has none). ``at``: the program index of i, as messages name it."""
    rng = random.Random(seed)
    total = Counts()
    pieces: list[tuple[int, int, list[int]]] = []

    def text() -> str:
        return ", ".join(f"[{min(at(lo), at(hi))}..{max(at(lo), at(hi))}]" for lo, hi, _ in pieces)

    lo = 0
    while lo < T:
        if len(pieces) == MAX_PIECES:
            raise Mismatch(f"the count along the block axis is not piecewise affine in at most {MAX_PIECES} pieces "
                           f"(pieces so far: {text()})")
        if T - lo <= 3:
            need(list(range(lo, T)))
            for i in range(lo, T):
                total = total + c(i)
            pieces.append((lo, T - 1, []))
            break
        need([lo, lo + 1, T - 1])
        a, b = c(lo), c(lo + 1) - c(lo)

        def on(i: int, a: Counts = a, b: Counts = b, lo: int = lo) -> bool:
            return c(i) == a + b * (i - lo)

        if on(T - 1):
            hi = T - 1
        else:
            need([T - 2])
            if on(T - 2):
                hi = T - 2
            else:
                good, bad = lo + 1, T - 2
                while bad - good > 1:
                    mid = (good + bad) // 2
                    need([mid])
                    good, bad = (mid, bad) if on(mid) else (good, mid)
                hi = good
        checks: list[int] = []
        if hi - lo >= 2:
            inner = list(range(lo + 3, hi))
            checks = sorted({lo + 2} | set(rng.sample(inner, min(verify, len(inner)))))
            need(checks)
            for i in checks:
                if not on(i):
                    raise Mismatch(f"program {at(i)}'s count is not on the line through programs {at(lo)} and "
                                   f"{at(lo + 1)} though program {at(hi)}'s is: not piecewise affine along the "
                                   f"block axis")
        n = hi - lo + 1
        total = total + a * n + b * (n * (n - 1) // 2)
        pieces.append((lo, hi, checks))
        lo = hi + 1
    return total, pieces
