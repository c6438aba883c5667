"""Attention masks as data (docs/masks.md): a predicate on (query index, key index), named families with
closed forms, combinations, and the block mask a schedule's tiles see.

A mask answers "does output row q depend on key/value row k?". Conventions:

- FlexAttention's ``mask_mod(b, h, q_idx, kv_idx) -> bool`` (:class:`MaskMod`), evaluated vectorised: the
  function receives NumPy integer arrays that broadcast (q_idx a column, kv_idx a row) and returns a boolean
  array; a plain Python predicate works too, more slowly.
- Bottom-right alignment, as FlashAttention ≥ 2.1 and attnio's workloads: with δ = N_kv − N_q, query q sits at
  key position q + δ. :class:`Causal` allows k ≤ q + δ; :class:`SlidingWindow` allows
  q + δ − window_left ≤ k ≤ q + δ + window_right, −1 meaning unbounded on that side (FlashAttention's
  ``window_size``); causal is the window (−1, 0).
- :class:`Document` (packed variable-length sequences, ``cu_seqlens`` as FlashAttention's varlen API takes them):
  a query sees the keys of its own sequence (N_q = N_kv = cu_seqlens[-1]). :class:`PrefixLM`: every query sees the
  first ``prefix`` keys, and the rest causally. :class:`BlockSparse`: a boolean layout of (block_q × block_kv)
  blocks. :class:`And` / :class:`Or` (also ``a & b``, ``a | b``) combine any of them.

A query row that sees no key has a zero output (FlexAttention's convention; documented in docs/masks.md).

The named families except :class:`BlockSparse` (and their conjunctions) are *interval* masks: row q sees one
contiguous key range [lo_q, hi_q] with lo and hi non-decreasing in q. Their pair count has a closed form, and
their blocks are classified in closed form per tile (no per-pair work), so a block mask at N = 2¹⁷ takes well
under a second; any other mask is evaluated per tile.

>>> Causal().pairs(4, 4), SlidingWindow(1, 0).pairs(4, 4), Document([0, 2, 5]).pairs(5, 5)
(10, 7, 13)
>>> bm = Causal().blocks(4, 4, 2, 2)
>>> bm.kinds.tolist()   # 0 empty, 1 partial, 2 full
[[1, 0], [2, 1]]
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from typing import Any

import numpy as np

from attnio.bounds.expr import Rel, Sym, const, evaluate, evaluate_int, maximum, minimum
from attnio.bounds.symbols import M, Nq, d, dv, g, sym
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int

EMPTY, PARTIAL, FULL = 0, 1, 2
#: what a schedule loads of a non-empty tile (docs/masks.md#loads): ``span``, the key rows some row of the Q block
#: needs, first to last (attnio's default, every published figure); ``tile``, the whole tile, as FlashAttention-2/3
#: and FlexAttention load every tile they visit
LOADS = ("span", "tile")
#: where a document mask's tiles start (docs/masks.md#documents-packed-or-varlen): ``packed``, global tiles over
#: the packed sequences (FlexAttention's way; the default); ``varlen``, each sequence tiled from its own start
#: (FlashAttention-2's varlen API, cu_seqlens)
DOCUMENTS = ("packed", "varlen")
#: keys per evaluation chunk of a general mask (bounds the memory of one vectorised call)
_CHUNK = 1 << 22


class _IntOps:
    """Integer arithmetic for the closed forms; ``attnio.solver``'s z3 check passes z3's instead, so one
    definition is both computed and proved."""

    @staticmethod
    def max(a: Any, b: Any) -> Any:
        return a if a >= b else b

    @staticmethod
    def min(a: Any, b: Any) -> Any:
        return a if a <= b else b

    @staticmethod
    def ite(c: Any, a: Any, b: Any) -> Any:
        return a if c else b

    @staticmethod
    def half(x: Any) -> Any:
        return x // 2


INT_OPS = _IntOps()


class _ExprOps:
    """The same closed forms as :class:`~attnio.bounds.expr.Expr` trees (the z3 claims of
    ``attnio.solver.claims.masks`` state them): max/min nodes, an exact half of an even product, and ``ite`` only
    on a window side's "unbounded" test x < 0 (or a Python bool): b for a symbol x ≥ 0, and for an integer symbol
    x ≥ −1 b + max(0, −x)·(a − b), max(0, −x) being 1 at x = −1 and 0 at x ≥ 0."""

    @staticmethod
    def max(a: Any, b: Any) -> Any:
        return maximum(a, b)

    @staticmethod
    def min(a: Any, b: Any) -> Any:
        return minimum(a, b)

    @staticmethod
    def ite(c: Any, a: Any, b: Any) -> Any:
        if isinstance(c, bool):
            return a if c else b
        x = c.lhs if isinstance(c, Rel) else None
        if c.op == "<" and c.rhs == const(0) and isinstance(x, Sym) and x.lo >= 0:
            return b  # x < 0 is false on x's domain
        if not (c.op == "<" and c.rhs == const(0) and isinstance(x, Sym) and x.integer and x.lo == -1):
            raise NotImplementedError(f"ite on {c}: only a window side's test x < 0 (x ≥ −1) has an Expr form")
        return b + maximum(0, -x) * (a - b)

    @staticmethod
    def half(x: Any) -> Any:
        return x / 2


EXPR_OPS = _ExprOps()


def _tri(x: Any, ops: Any) -> Any:
    """1 + 2 + … + x = x(x + 1)/2 for an integer x ≥ 0 (the product is even, so the half is exact)."""
    return ops.half(x * (x + 1))


def _tsum(n: Any, c: Any, ops: Any = INT_OPS) -> Any:
    """Σ_{i=0}^{n−1} max(0, i + c), in closed form: the terms are the integers max(c, 1) … c + n − 1 (none when
    c + n − 1 < 1), so the sum is tri(max(c + n − 1, 0)) − tri(max(c − 1, 0)), tri(x) = 1 + … + x."""
    return _tri(ops.max(c + n - 1, 0), ops) - _tri(ops.max(c - 1, 0), ops)


def _clip_sum(n: Any, c: Any, K: Any, ops: Any = INT_OPS) -> Any:
    """Σ_{i=0}^{n−1} clip(i + c, 0, K) = T(c) − T(c − K), T the sum above."""
    return _tsum(n, c, ops) - _tsum(n, c - K, ops)


def window_pairs(Nq: Any, Nkv: Any, left: Any, right: Any, ops: Any = INT_OPS) -> Any:
    """P of :class:`SlidingWindow`: Σ_q clip(q + b + 1, 0, N_kv) − Σ_q clip(q + a, 0, N_kv), a = δ − left,
    b = δ + right, δ = N_kv − N_q; −1 unbounded (row q's keys are [max(0, q + a), min(N_kv − 1, q + b)])."""
    d = Nkv - Nq
    upper = ops.ite(right < 0, Nq * Nkv, _clip_sum(Nq, d + right + 1, Nkv, ops))
    lower = ops.ite(left < 0, 0, _clip_sum(Nq, d - left, Nkv, ops))
    return upper - lower


def prefix_pairs(Nq: Any, Nkv: Any, prefix: Any, ops: Any = INT_OPS) -> Any:
    """P of :class:`PrefixLM`: the r₀ = clip(p − δ − 1, 0, N_q) first rows see p' = min(p, N_kv) keys, the rest
    clip(q + δ + 1, 0, N_kv)."""
    d, p = Nkv - Nq, ops.min(prefix, Nkv)
    r0 = ops.min(ops.max(p - d - 1, 0), Nq)
    return r0 * p + _clip_sum(Nq - r0, r0 + d + 1, Nkv, ops)


class Mask:
    """Base class: subclasses give :meth:`allowed` (vectorised) and, for interval masks, :meth:`bounds`."""

    name = "mask"

    def allowed(self, q: np.ndarray, k: np.ndarray, Nq: int, Nkv: int) -> np.ndarray:
        raise NotImplementedError

    def bounds(self, q: np.ndarray, Nq: int, Nkv: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(lo, hi) per query row, the allowed keys being [lo, hi] ∩ [0, N_kv) (empty where lo > hi), lo and hi
        non-decreasing in q; ``None`` when the mask is not an interval mask."""
        return None

    def check(self, Nq: int, Nkv: int) -> None:
        """Raise InvalidParameter when the mask cannot apply to an N_q × N_kv problem."""

    def _sizes(self, Nq: int, Nkv: int) -> tuple[int, int]:
        """N_q, N_kv integers ≥ 1 (returned as int: 8.0 is 8), then the mask's own :meth:`check`."""
        Nq, Nkv = check_int("Nq", Nq, min=1), check_int("Nkv", Nkv, min=1)
        self.check(Nq, Nkv)
        return Nq, Nkv

    # -- derived ------------------------------------------------------------------------------------------
    def pairs(self, Nq: int, Nkv: int) -> int:
        """P: the number of (query, key) pairs some output depends on."""
        Nq, Nkv = self._sizes(Nq, Nkv)
        b = self.bounds(np.arange(Nq), Nq, Nkv)
        if b is not None:
            lo, hi = np.maximum(b[0], 0), np.minimum(b[1], Nkv - 1)
            return int(np.maximum(hi - lo + 1, 0).sum())
        return int(sum(self._dense(rows, slice(0, Nkv), Nq, Nkv).sum() for rows in _row_chunks(Nq, Nkv)))

    def dense(self, Nq: int, Nkv: int) -> np.ndarray:
        """The N_q × N_kv boolean matrix (small sizes: tests and references)."""
        Nq, Nkv = self._sizes(Nq, Nkv)
        return self._dense(slice(0, Nq), slice(0, Nkv), Nq, Nkv)

    def _dense(self, rows: slice, cols: slice, Nq: int, Nkv: int) -> np.ndarray:
        q = np.arange(rows.start, rows.stop)[:, None]
        k = np.arange(cols.start, cols.stop)[None, :]
        out = np.asarray(self.allowed(q, k, Nq, Nkv), dtype=bool)
        return np.broadcast_to(out, (q.shape[0], k.shape[1]))

    def blocks(self, Nq: int, Nkv: int, B_r: int, B_c: int, load: str = "span") -> BlockMask:
        """The block mask of tiles B_r × B_c: each tile full, partial or empty, and the key rows each Q block
        loads of each tile: its needed span (``load="span"``) or, ``load="tile"``, the whole tile."""
        Nq, Nkv = self._sizes(Nq, Nkv)
        B_r, B_c = check_int("B_r", B_r, min=1), check_int("B_c", B_c, min=1)
        load = check_choice("load", load, LOADS)
        b = self.bounds(np.arange(Nq), Nq, Nkv)
        if b is not None:
            return _interval_blocks(b, Nq, Nkv, B_r, B_c, load)
        return _dense_blocks(self, Nq, Nkv, B_r, B_c, load)

    def block_rows(self, Nq: int, Nkv: int, B_r: int, B_c: int, load: str = "span", documents: str = "packed"
                   ) -> BlockRows | BlockMask | VarlenRows:
        """The block mask as a schedule walks it, one Q block at a time: for an interval mask a
        :class:`BlockRows` (O(N_q) memory, no T_r × T_c array), else the full :meth:`blocks`. Both give
        ``active``, ``kv_rows`` and ``row(i)``, under the ``load`` convention (:data:`LOADS`).
        ``documents="varlen"``: a :class:`VarlenRows`, each sequence of the mask's :class:`Document` tiled from
        its own start (the mask a Document, or an interval mask combined with one by ``&``)."""
        Nq, Nkv = self._sizes(Nq, Nkv)
        B_r, B_c = check_int("B_r", B_r, min=1), check_int("B_c", B_c, min=1)
        load = check_choice("load", load, LOADS)
        documents = check_choice("documents", documents, DOCUMENTS)
        b = self.bounds(np.arange(Nq), Nq, Nkv)
        if documents == "varlen":
            cu = _cu_seqlens(self)
            if cu is None or b is None:
                raise InvalidParameter("documents", documents, "packed unless the mask is a Document (or an interval mask & a Document)")
            lo, hi = _clipped(b, Nkv)
            return VarlenRows(B_r, B_c, cu, lo, hi, load)
        if b is None:
            return _dense_blocks(self, Nq, Nkv, B_r, B_c, load)
        lo, hi = _clipped(b, Nkv)
        return BlockRows(B_r, B_c, Nq, Nkv, lo, hi, load)

    def kv_block_rows(self, Nq: int, Nkv: int, B_c: int) -> np.ndarray:
        """Per K/V block of B_c keys: the query rows that need one of its keys, counted as one contiguous range
        (first such row to last), what a backward that keeps the K/V block resident visits."""
        return self.kv_block_range(Nq, Nkv, B_c)[1]

    def kv_block_range(self, Nq: int, Nkv: int, B_c: int) -> tuple[np.ndarray, np.ndarray]:
        """(first, rows) per K/V block of B_c keys: the range of :meth:`kv_block_rows` with its first row (0 where
        no row needs the block), the rows a masked backward visits."""
        Nq, Nkv = self._sizes(Nq, Nkv)
        B_c = check_int("B_c", B_c, min=1)
        b = self.bounds(np.arange(Nq), Nq, Nkv)
        if b is not None:
            lo, hi = _clipped(b, Nkv)
            c0 = np.arange(-(-Nkv // B_c)) * B_c
            first, last = _reach(lo, hi, np.array([0]), np.array([Nq]), c0, np.minimum(c0 + B_c, Nkv))
            some = first <= last
            return np.where(some, first, 0)[0], np.where(some, last - first + 1, 0)[0]
        Tc = -(-Nkv // B_c)
        hit = np.zeros((Nq, Tc), dtype=bool)
        for rows in _row_chunks(Nq, Nkv):
            a = self._dense(rows, slice(0, Nkv), Nq, Nkv)
            hit[rows] = np.pad(a, ((0, 0), (0, Tc * B_c - Nkv))).reshape(a.shape[0], Tc, B_c).any(axis=2)
        any_ = hit.any(axis=0)
        first = np.argmax(hit, axis=0)
        last = Nq - 1 - np.argmax(hit[::-1], axis=0)
        return np.where(any_, first, 0), np.where(any_, last - first + 1, 0)

    def __and__(self, other: Mask) -> Mask:
        return And(self, other)

    def __or__(self, other: Mask) -> Mask:
        return Or(self, other)


def _cap(x: int, Nq: int, Nkv: int) -> int:
    """A window side, prefix or block edge ``x`` ≥ 0 as an int64-safe value of the same meaning: beyond
    N_q + N_kv every one reaches past the problem's edge (|q + δ| < N_q + N_kv), so larger values change nothing."""
    return min(x, Nq + Nkv)


def _row_chunks(Nq: int, Nkv: int):
    step = max(1, _CHUNK // max(Nkv, 1))
    for r in range(0, Nq, step):
        yield slice(r, min(Nq, r + step))


@dataclass(frozen=True)
class SlidingWindow(Mask):
    """Query q sees keys q + δ − window_left … q + δ + window_right (δ = N_kv − N_q; −1: unbounded)."""

    window_left: int = -1
    window_right: int = -1
    name = "sliding-window"

    def __post_init__(self) -> None:
        object.__setattr__(self, "window_left", check_int("window_left", self.window_left, min=-1))
        object.__setattr__(self, "window_right", check_int("window_right", self.window_right, min=-1))

    def bounds(self, q: np.ndarray, Nq: int, Nkv: int) -> tuple[np.ndarray, np.ndarray]:
        c = q + (Nkv - Nq)
        lo = np.zeros_like(c) if self.window_left < 0 else c - _cap(self.window_left, Nq, Nkv)
        hi = np.full_like(c, Nkv - 1) if self.window_right < 0 else c + _cap(self.window_right, Nq, Nkv)
        return lo, hi

    def allowed(self, q: np.ndarray, k: np.ndarray, Nq: int, Nkv: int) -> np.ndarray:
        lo, hi = self.bounds(q, Nq, Nkv)
        return (k >= lo) & (k <= hi)

    def pairs(self, Nq: int, Nkv: int) -> int:
        """Closed form :func:`window_pairs`."""
        Nq, Nkv = self._sizes(Nq, Nkv)
        return window_pairs(Nq, Nkv, self.window_left, self.window_right)


@dataclass(frozen=True)
class Causal(SlidingWindow):
    """Bottom-right causal: query q sees keys k ≤ q + N_kv − N_q (the window (−1, 0))."""

    window_left: int = field(default=-1, init=False)
    window_right: int = field(default=0, init=False)
    name = "causal"


@dataclass(frozen=True)
class PrefixLM(Mask):
    """Every query sees the first ``prefix`` keys; beyond them, causally (bottom-right)."""

    prefix: int
    name = "prefix-lm"

    def __post_init__(self) -> None:
        object.__setattr__(self, "prefix", check_int("prefix", self.prefix, min=0))

    def bounds(self, q: np.ndarray, Nq: int, Nkv: int) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros_like(q), np.maximum(_cap(self.prefix, Nq, Nkv) - 1, q + (Nkv - Nq))

    def allowed(self, q: np.ndarray, k: np.ndarray, Nq: int, Nkv: int) -> np.ndarray:
        return (k < _cap(self.prefix, Nq, Nkv)) | (k <= q + (Nkv - Nq))

    def pairs(self, Nq: int, Nkv: int) -> int:
        """Closed form :func:`prefix_pairs`."""
        Nq, Nkv = self._sizes(Nq, Nkv)
        return prefix_pairs(Nq, Nkv, self.prefix)


@dataclass(frozen=True)
class Document(Mask):
    """Packed sequences: ``cu_seqlens`` = [0, s₁, s₁ + s₂, …, N] (strictly increasing, ending at N = N_q = N_kv);
    a query sees the keys of its own sequence."""

    cu_seqlens: tuple[int, ...]
    name = "document"

    def __init__(self, cu_seqlens: Any) -> None:
        want = "strictly increasing integers starting at 0, at least one sequence"
        try:
            cu = tuple(check_int("cu_seqlens", x) for x in cu_seqlens)
        except (TypeError, InvalidParameter):  # not iterable, or an entry that is not an integer (1.5, "2")
            raise InvalidParameter("cu_seqlens", cu_seqlens, want) from None
        if len(cu) < 2 or cu[0] != 0 or any(b <= a for a, b in zip(cu, cu[1:], strict=False)):
            raise InvalidParameter("cu_seqlens", list(cu), want)
        object.__setattr__(self, "cu_seqlens", cu)

    def check(self, Nq: int, Nkv: int) -> None:
        if Nq != Nkv or self.cu_seqlens[-1] != Nq:
            raise InvalidParameter("cu_seqlens", list(self.cu_seqlens), f"ending at N = N_q = N_kv (here N_q={Nq}, N_kv={Nkv})")

    def _doc(self, i: np.ndarray) -> np.ndarray:
        return np.searchsorted(np.asarray(self.cu_seqlens), i, side="right") - 1

    def bounds(self, q: np.ndarray, Nq: int, Nkv: int) -> tuple[np.ndarray, np.ndarray]:
        cu = np.asarray(self.cu_seqlens)
        d = self._doc(q)
        return cu[d], cu[d + 1] - 1

    def allowed(self, q: np.ndarray, k: np.ndarray, Nq: int, Nkv: int) -> np.ndarray:
        return self._doc(q) == self._doc(k)

    def pairs(self, Nq: int, Nkv: int) -> int:
        """Closed form: Σ over sequences of length²."""
        Nq, Nkv = self._sizes(Nq, Nkv)
        return sum((b - a) ** 2 for a, b in zip(self.cu_seqlens, self.cu_seqlens[1:], strict=False))


@dataclass(frozen=True)
class BlockSparse(Mask):
    """A boolean ``layout`` of ⌈N_q/block_q⌉ × ⌈N_kv/block_kv⌉ blocks: the pairs of a True block are allowed."""

    layout: Any
    block_q: int
    block_kv: int
    name = "block-sparse"

    def __post_init__(self) -> None:
        object.__setattr__(self, "block_q", check_int("block_q", self.block_q, min=1))
        object.__setattr__(self, "block_kv", check_int("block_kv", self.block_kv, min=1))
        lay = np.asarray(self.layout)
        if lay.ndim != 2 or lay.dtype != bool:
            raise InvalidParameter("layout", getattr(lay, "shape", lay), "a 2-D boolean array of blocks")
        object.__setattr__(self, "layout", lay)

    def check(self, Nq: int, Nkv: int) -> None:
        want = (-(-Nq // self.block_q), -(-Nkv // self.block_kv))
        if self.layout.shape != want:
            raise InvalidParameter("layout", self.layout.shape, f"shape {want} (⌈N_q/block_q⌉, ⌈N_kv/block_kv⌉)")

    def allowed(self, q: np.ndarray, k: np.ndarray, Nq: int, Nkv: int) -> np.ndarray:
        return self.layout[q // _cap(self.block_q, Nq, Nkv), k // _cap(self.block_kv, Nq, Nkv)]

    def pairs(self, Nq: int, Nkv: int) -> int:
        """Closed form: Σ over True blocks of their (edge-clipped) area."""
        Nq, Nkv = self._sizes(Nq, Nkv)
        bq, bk = _cap(self.block_q, Nq, Nkv), _cap(self.block_kv, Nq, Nkv)
        rq = np.minimum(bq, Nq - bq * np.arange(self.layout.shape[0]))
        rk = np.minimum(bk, Nkv - bk * np.arange(self.layout.shape[1]))
        return int((self.layout * np.outer(rq, rk)).sum())


@dataclass(frozen=True)
class _Combined(Mask):
    """Two masks combined (:class:`And`, :class:`Or`); each operand must be a :class:`Mask`."""

    a: Mask
    b: Mask

    def __post_init__(self) -> None:
        for m in (self.a, self.b):
            if not isinstance(m, Mask):
                raise InvalidParameter("mask", m, "a Mask (a named family, a MaskMod, or an And/Or of them)")

    def check(self, Nq: int, Nkv: int) -> None:
        self.a.check(Nq, Nkv)
        self.b.check(Nq, Nkv)


@dataclass(frozen=True)
class And(_Combined):
    name = "and"

    def allowed(self, q: np.ndarray, k: np.ndarray, Nq: int, Nkv: int) -> np.ndarray:
        return self.a.allowed(q, k, Nq, Nkv) & self.b.allowed(q, k, Nq, Nkv)

    def bounds(self, q: np.ndarray, Nq: int, Nkv: int) -> tuple[np.ndarray, np.ndarray] | None:
        x, y = self.a.bounds(q, Nq, Nkv), self.b.bounds(q, Nq, Nkv)
        if x is None or y is None:
            return None
        return np.maximum(x[0], y[0]), np.minimum(x[1], y[1])  # an intersection of intervals, still monotone


@dataclass(frozen=True)
class Or(_Combined):
    name = "or"

    def allowed(self, q: np.ndarray, k: np.ndarray, Nq: int, Nkv: int) -> np.ndarray:
        return self.a.allowed(q, k, Nq, Nkv) | self.b.allowed(q, k, Nq, Nkv)


class MaskMod(Mask):
    """FlexAttention's ``mask_mod(b, h, q_idx, kv_idx)`` at one (batch, head)."""

    name = "mask_mod"

    def __init__(self, fn: Callable[..., Any], b: int = 0, h: int = 0) -> None:
        try:
            params = inspect.signature(fn).parameters
        except (TypeError, ValueError):
            params = None
        if not callable(fn) or params is None or len(params) != 4:
            raise InvalidParameter("mask_mod", getattr(fn, "__name__", fn), "a function mask_mod(b, h, q_idx, kv_idx) -> bool")
        self.fn, self.b, self.h = fn, b, h

    def __repr__(self) -> str:  # the function's name, not its address: stable across runs (``attnio run --json``)
        return f"MaskMod({getattr(self.fn, '__qualname__', type(self.fn).__name__)}, b={self.b}, h={self.h})"

    def allowed(self, q: np.ndarray, k: np.ndarray, Nq: int, Nkv: int) -> np.ndarray:
        shape = np.broadcast_shapes(q.shape, k.shape)
        try:
            out = self.fn(self.b, self.h, q, k)
        except (TypeError, ValueError):  # a scalar predicate (e.g. bool(q >= k)): evaluated pair by pair below
            out = None
        if out is not None and np.shape(out) == () and _is_bool(out):
            out = np.full(shape, bool(out))  # a constant predicate
        if _broadcasts(out, shape):  # depends on one index only (k < 3: a row): one call, broadcast
            out = np.broadcast_to(out, shape)
        if out is None or np.shape(out) != shape:
            out = np.vectorize(lambda i, j: self._bool(self.fn(self.b, self.h, int(i), int(j))), otypes=[bool])(q, k)
        if np.asarray(out).dtype != bool:  # an int or a string read as truthy would silently change the mask
            self._bool(out)
        return np.broadcast_to(np.asarray(out, dtype=bool), shape)

    def _bool(self, v: Any) -> bool:
        if not _is_bool(v):
            raise InvalidParameter("mask_mod", getattr(self.fn, "__name__", self.fn),
                                   f"a predicate returning booleans (it returned {type(v).__name__})")
        return bool(v)


def _broadcasts(out: Any, shape: tuple[int, ...]) -> bool:
    """``out`` a boolean array of the same rank as ``shape`` that broadcasts to it (but is not already it)."""
    if not (isinstance(out, np.ndarray) and out.dtype == bool and out.ndim == len(shape) and out.shape != shape):
        return False
    try:
        return np.broadcast_shapes(out.shape, shape) == shape
    except ValueError:
        return False


def _is_bool(v: Any) -> bool:
    return isinstance(v, bool | np.bool_) or (isinstance(v, np.ndarray) and v.dtype == bool)


@dataclass(frozen=True)
class BlockMask:
    """Per tile (Q block i, K/V block j): ``kinds`` EMPTY/PARTIAL/FULL and ``span`` the number of key rows of
    the tile that some row of Q block i needs, counted as one contiguous range (first needed key to last);
    ``start``: the first needed key of each non-empty tile (a schedule loads keys [start, start + span))."""

    B_r: int
    B_c: int
    kinds: np.ndarray
    span: np.ndarray
    start: np.ndarray
    load: str = "span"  # LOADS: "tile" makes span each non-empty tile's width and start its first key

    @property
    def counts(self) -> dict[str, int]:
        return {"full": int((self.kinds == FULL).sum()), "partial": int((self.kinds == PARTIAL).sum()),
                "empty": int((self.kinds == EMPTY).sum())}

    @property
    def nonzero_fraction(self) -> float:
        return float((self.kinds != EMPTY).mean())

    @property
    def kv_rows(self) -> int:
        """Σ over non-empty tiles of their needed key span: the K/V rows an FA-2 forward loads."""
        return int(self.span.sum())

    @property
    def active_q_blocks(self) -> int:
        return int((self.kinds != EMPTY).any(axis=1).sum())

    @property
    def active(self) -> np.ndarray:
        """Per Q block: whether one of its tiles is non-empty (the block is read and computed)."""
        return (self.kinds != EMPTY).any(axis=1)

    def row(self, i: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """Q block ``i``'s tiles from tile ``j0`` on: (j0, kinds, start, span), as :meth:`BlockRows.row`."""
        return 0, self.kinds[i], self.start[i], self.span[i]


@dataclass(frozen=True)
class BlockRows:
    """An interval mask's block mask one Q block at a time, with no T_r × T_c array: what a schedule and the
    count of FlashAttention-2 need (:meth:`Mask.block_rows`). ``active``: per Q block, whether it sees a key;
    ``kv_rows``: Σ over the non-empty tiles of their needed key span (:attr:`BlockMask.kv_rows`), in O(N_q);
    :meth:`row` gives block i's tiles over its reach only (the tiles from its first needed key to its last).

    >>> br = Causal().block_rows(4, 4, 2, 2)
    >>> br.active.tolist(), br.kv_rows, br.row(1)[0], br.row(1)[1].tolist()
    ([True, True], 6, 0, [2, 1])
    """

    B_r: int
    B_c: int
    Nq: int
    Nkv: int
    lo: np.ndarray  # per query row, clipped to [0, N_kv − 1]; a row that sees no key has lo > hi
    hi: np.ndarray
    load: str = "span"  # LOADS

    @property
    def active(self) -> np.ndarray:
        ok = self.lo <= self.hi
        r0 = np.arange(0, self.Nq, self.B_r)
        return np.add.reduceat(ok.astype(np.int64), r0) > 0

    @property
    def kv_rows(self) -> int:
        """Σ over Q blocks of Σ over their non-empty tiles of the needed span: per block, the union of its rows'
        key ranges (monotone, so it breaks only where lo_{i+1} > hi_i + 1), plus each gap between two of its
        rows that starts and ends in one tile (the span runs from a tile's first needed key to its last).
        ``load="tile"``: Σ over Q blocks of the widths of the tiles the union touches (each row's tiles
        lo // B_c … hi // B_c, less those the block's previous row already touched: the ranges are monotone)."""
        lo, hi, B_c = self.lo, self.hi, self.B_c
        ok = lo <= hi
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            return 0
        lo, hi = lo[idx], hi[idx]
        new_block = np.ones(idx.size, dtype=bool)  # a row with no predecessor in its Q block
        new_block[1:] = idx[1:] // self.B_r != idx[:-1] // self.B_r
        if self.load == "tile":
            t_lo, t_hi = lo // B_c, hi // B_c
            prev_t = np.where(new_block, -1, np.concatenate(([-1], t_hi[:-1])))
            first_new = np.maximum(t_lo, prev_t + 1)  # the row's tiles first_new … t_hi are new to its block
            width = np.minimum((t_hi + 1) * B_c, self.Nkv) - first_new * B_c
            return int(np.where(first_new <= t_hi, width, 0).sum())
        prev_hi = np.where(new_block, -1, np.concatenate(([-1], hi[:-1])))
        covered = np.maximum(hi - np.maximum(lo, prev_hi + 1) + 1, 0)
        gap = np.where(new_block, 0, np.maximum(lo - prev_hi - 1, 0))
        same_tile = (prev_hi // B_c) == (lo // B_c)
        return int(covered.sum() + (gap * same_tile).sum())

    @property
    def q_rows(self) -> int:
        """Query rows of the Q blocks that see a key (what FA-2 reads of Q per head)."""
        r0 = np.arange(0, self.Nq, self.B_r)
        rows = np.minimum(self.B_r, self.Nq - r0)
        return int((rows * self.active).sum())

    def row(self, i: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """(j0, kinds, start, span) of Q block ``i``'s tiles j0, j0 + 1, …: exactly :meth:`Mask.blocks`' row i
        over the block's reach (every tile outside it is empty); empty arrays when the block sees no key."""
        r0, r1 = i * self.B_r, min(self.Nq, (i + 1) * self.B_r)
        lo, hi = self.lo, self.hi
        ok = np.flatnonzero(lo[r0:r1] <= hi[r0:r1])
        if ok.size == 0:
            z = np.zeros(0, dtype=np.int64)
            return 0, z.astype(np.int8), z, z
        j0, j1 = int(lo[r0 + ok[0]]) // self.B_c, int(hi[r0 + ok[-1]]) // self.B_c + 1
        kinds, span, start = _tile_classes(lo[r0:r1], hi[r0:r1], np.array([0]), np.array([r1 - r0]), j0, j1,
                                           self.B_c, self.Nkv, self.load)
        return j0, kinds[0], start[0], span[0]


def _cu_seqlens(mask: Mask) -> tuple[int, ...] | None:
    """The cu_seqlens of the :class:`Document` in ``mask`` (itself, or an operand of an ``&``), else None."""
    if isinstance(mask, Document):
        return mask.cu_seqlens
    if isinstance(mask, And):
        return _cu_seqlens(mask.a) or _cu_seqlens(mask.b)
    return None


@dataclass(frozen=True)
class VarlenRows:
    """A document mask walked as FlashAttention-2's varlen API tiles it: each sequence [a, b) of ``cu_seqlens``
    is its own problem, its Q blocks of B_r rows and its K/V tiles of B_c keys starting at a (the last of each
    cut at b), where the packed tiling (:class:`BlockRows`) starts them at multiples of B_r and B_c. Q blocks are
    numbered across the sequences in order; ``row(i)`` gives keys in global positions and :meth:`origin` the
    first key of block i's tiles.

    Whole-tile loads, sequences of 3 and 5 tokens, 2 × 2 tiles: varlen, each of sequence 1's 2 Q blocks loads
    its 3 keys and each of sequence 2's 3 blocks its 5 (21 K/V rows); packed, the blocks load 2, 4, 3 and 3
    whole tiles (24).

    >>> v = Document([0, 3, 8]).block_rows(8, 8, 2, 2, "tile", documents="varlen")
    >>> [(r.start, r.stop) for r in v.q_blocks()], v.kv_rows, Document([0, 3, 8]).block_rows(8, 8, 2, 2, "tile").kv_rows
    ([(0, 2), (2, 3), (3, 5), (5, 7), (7, 8)], 21, 24)
    """

    B_r: int
    B_c: int
    cu_seqlens: tuple[int, ...]
    lo: np.ndarray  # per query row, clipped to [0, N_kv − 1] (global key positions)
    hi: np.ndarray
    load: str = "span"

    @cached_property
    def _docs(self) -> list[tuple[int, BlockRows]]:
        out = []
        for a, b in zip(self.cu_seqlens, self.cu_seqlens[1:], strict=False):
            lo, hi = np.maximum(self.lo[a:b], a) - a, np.minimum(self.hi[a:b], b - 1) - a
            out.append((a, BlockRows(self.B_r, self.B_c, b - a, b - a, lo, hi, self.load)))
        return out

    def q_blocks(self) -> list[slice]:
        """The Q blocks' rows, in order: each sequence's blocks of B_r rows from its start."""
        return [slice(a + r, min(b, a + r + self.B_r)) for a, b in zip(self.cu_seqlens, self.cu_seqlens[1:], strict=False)
                for r in range(0, b - a, self.B_r)]

    @property
    def active(self) -> np.ndarray:
        return np.concatenate([br.active for _, br in self._docs])

    @property
    def kv_rows(self) -> int:
        return sum(br.kv_rows for _, br in self._docs)

    @property
    def q_rows(self) -> int:
        return sum(br.q_rows for _, br in self._docs)

    @cached_property
    def _first_block(self) -> np.ndarray:
        """The index of each sequence's first Q block."""
        return np.concatenate(([0], np.cumsum([-(-br.Nq // self.B_r) for _, br in self._docs])))

    def _locate(self, i: int) -> tuple[int, BlockRows, int]:
        k = int(np.searchsorted(self._first_block, i, side="right")) - 1
        if not 0 <= k < len(self._docs):
            raise IndexError(i)
        a, br = self._docs[k]
        return a, br, i - int(self._first_block[k])

    def origin(self, i: int) -> int:
        """The first key of Q block i's sequence: its K/V tiles start there."""
        return self._locate(i)[0]

    def row(self, i: int) -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
        """(j0, kinds, start, span) of Q block i's tiles, tiles numbered from its sequence's start, ``start`` in
        global key positions."""
        a, br, k = self._locate(i)
        j0, kinds, start, span = br.row(k)
        return j0, kinds, np.where(span > 0, start + a, 0), span


def _reach(lo: np.ndarray, hi: np.ndarray, r0: np.ndarray, r1: np.ndarray, c0: np.ndarray, c1: np.ndarray
           ) -> tuple[np.ndarray, np.ndarray]:
    """For row blocks [r0, r1) of rows with key ranges [lo, hi] (clipped; lo > hi: the row sees nothing) and key
    tiles [c0, c1): the first row of the block that sees a key of the tile (the first with hi ≥ c0, hi
    non-decreasing) and the last (the last with lo ≤ c1 − 1); first > last: none."""
    ok = lo <= hi  # rows that see some key; lo and hi are monotone, so these rows form one range
    big = np.iinfo(np.int64).max // 4
    hi_mono = np.maximum.accumulate(np.where(ok, hi, -big))  # a row that sees nothing must not reach a tile
    lo_mono = np.minimum.accumulate(np.where(ok, lo, big)[::-1])[::-1]
    first = np.maximum(r0[:, None], np.searchsorted(hi_mono, c0[None, :], side="left"))
    last = np.minimum(r1[:, None] - 1, np.searchsorted(lo_mono, c1[None, :] - 1, side="right") - 1)
    return first, last


def _clipped(b: tuple[np.ndarray, np.ndarray], Nkv: int) -> tuple[np.ndarray, np.ndarray]:
    return np.maximum(b[0], 0).astype(np.int64), np.minimum(b[1], Nkv - 1).astype(np.int64)


def _tile_classes(lo: np.ndarray, hi: np.ndarray, r0: np.ndarray, r1: np.ndarray, j0: int, j1: int, B_c: int,
                  Nkv: int, load: str = "span") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kinds, span, start) of row blocks [r0, r1) × key tiles j0 … j1 − 1, in closed form: row i's keys in tile
    columns [c0, c1) are [max(lo_i, c0), min(hi_i, c1 − 1)]. The tile is full iff lo at its last row ≤ c0 and hi
    at its first row ≥ c1 − 1; its needed span runs from max(c0, lo of its first row that sees a key of the tile)
    to min(c1 − 1, hi of the last such row); ``load="tile"``: the whole tile, [c0, c1)."""
    c0 = np.arange(j0, j1) * B_c
    c1 = np.minimum(c0 + B_c, Nkv)
    first, last = _reach(lo, hi, r0, r1, c0, c1)
    ok = lo <= hi
    nonempty = first <= last
    fi = np.clip(first, 0, lo.size - 1)
    la = np.clip(last, 0, lo.size - 1)
    start = np.maximum(c0[None, :], lo[fi])
    stop = np.minimum(c1[None, :] - 1, hi[la])
    if load == "tile":
        start, stop = np.broadcast_to(c0[None, :], nonempty.shape), np.broadcast_to(c1[None, :] - 1, nonempty.shape)
    span = np.where(nonempty, np.maximum(stop - start + 1, 0), 0)
    full = nonempty & (lo[r1 - 1][:, None] <= c0[None, :]) & (hi[r0][:, None] >= c1[None, :] - 1) & ok[r0][:, None] & ok[r1 - 1][:, None]
    kinds = np.where(full, FULL, np.where(nonempty, PARTIAL, EMPTY))
    return kinds.astype(np.int8), span.astype(np.int64), np.where(nonempty, start, 0).astype(np.int64)


def _interval_blocks(b: tuple[np.ndarray, np.ndarray], Nq: int, Nkv: int, B_r: int, B_c: int, load: str = "span"
                     ) -> BlockMask:
    """Closed form per tile for an interval mask (lo, hi non-decreasing; :func:`_tile_classes`).
    Work: O(N_q + tiles), none per pair."""
    lo, hi = _clipped(b, Nkv)
    r0 = np.arange(-(-Nq // B_r)) * B_r
    kinds, span, start = _tile_classes(lo, hi, r0, np.minimum(r0 + B_r, Nq), 0, -(-Nkv // B_c), B_c, Nkv, load)
    return BlockMask(B_r, B_c, kinds, span, start, load)


def _dense_blocks(mask: Mask, Nq: int, Nkv: int, B_r: int, B_c: int, load: str = "span") -> BlockMask:
    """A general mask, evaluated one Q block (all key tiles) at a time, vectorised: O(N_q·N_kv) predicate calls."""
    Tr, Tc = -(-Nq // B_r), -(-Nkv // B_c)
    kinds = np.zeros((Tr, Tc), dtype=np.int8)
    span = np.zeros((Tr, Tc), dtype=np.int64)
    start = np.zeros((Tr, Tc), dtype=np.int64)
    pad = Tc * B_c - Nkv
    for i in range(Tr):
        rows = slice(i * B_r, min(Nq, (i + 1) * B_r))
        a = mask._dense(rows, slice(0, Nkv), Nq, Nkv)
        any_col = np.pad(a.any(axis=0), (0, pad)).reshape(Tc, B_c)
        all_col = np.pad(a.all(axis=0), (0, pad), constant_values=True).reshape(Tc, B_c)
        nz = any_col.any(axis=1)
        first = np.argmax(any_col, axis=1)
        last = B_c - 1 - np.argmax(any_col[:, ::-1], axis=1)
        c0 = np.arange(Tc) * B_c
        if load == "tile":
            first, last = np.zeros(Tc, dtype=np.int64), np.minimum(B_c, Nkv - c0) - 1
        span[i] = np.where(nz, last - first + 1, 0)
        start[i] = np.where(nz, c0 + first, 0)
        kinds[i] = np.where(all_col.all(axis=1), FULL, np.where(nz, PARTIAL, EMPTY))
    return BlockMask(B_r, B_c, kinds, span, start, load)


# -- counts and bounds of masked attention ---------------------------------------------------------------------
# The block mask's counts as symbols, and the masked FA-2 count and the masked bounds per unit as expressions in
# them: the numeric functions below evaluate these, and attnio.solver.claims.masks proves bound ≤ count with them.
PAIRS = sym("mask_P", lo=0, doc="pair count P of one head: the (query, key) pairs the mask allows")
Q_ROWS = sym("mask_q_rows", lo=0, doc="query rows of one head in Q blocks with a non-empty tile (read by FA-2)")
KV_ROWS = sym("mask_kv_rows", lo=0, doc="Σ over the non-empty tiles of one head of the K/V rows of the tile's span")
ROWS2 = sym("mask_rows2", lo=0, doc="query rows of one head that see ≥ 2 keys")
KEYS2 = sym("mask_keys2", lo=0, doc="keys seen by a query row that sees ≥ 2 keys")
KEYS1 = sym("mask_keys1", lo=0, doc="keys seen by some query row")

#: FA-2 forward per unit (g query heads sharing K/V; g = 1 per query head): reads and writes, docs/masks.md.
FLASH2_READS = g * Q_ROWS * d + KV_ROWS * (d + dv)
FLASH2_WRITES = g * Nq * (dv + 1)
#: The trivial bound per unit: Q rows seeing ≥ 2 keys and every O row per query head; K, V seen per unit.
TRIVIAL_UNIT = g * (ROWS2 * d + Nq * dv) + KEYS2 * d + KEYS1 * dv
#: B1_P and B2_P per unit without their −M (paid once per workload): c·g·P·d²/M.
B1_UNIT = g * PAIRS * d**2 / M
B2_UNIT = 2 * g * PAIRS * d**2 / M


def _unit_env(w: Any, g_: int, **counts: int) -> dict[str, int]:
    return {"Nq": w.Nq, "d": w.d, "dv": w.dv, "M": w.M, "g": g_, **{f"mask_{k}": v for k, v in counts.items()}}


def _row_stats(mask: Mask, Nq: int, Nkv: int) -> tuple[int, int, int]:
    """(rows that see ≥ 2 keys, keys seen by such a row, keys seen by any row) of one head."""
    b = mask.bounds(np.arange(Nq), Nq, Nkv)
    if b is not None:
        lo, hi = np.maximum(b[0], 0), np.minimum(b[1], Nkv - 1)
        n = np.maximum(hi - lo + 1, 0)
        many, any_ = n >= 2, n >= 1
        def covered(sel: np.ndarray) -> int:  # |∪ [lo_i, hi_i]| over the selected rows (monotone intervals)
            if not sel.any():
                return 0
            l, h = lo[sel], hi[sel]
            reach = np.maximum.accumulate(h)
            starts = np.maximum(l, np.concatenate(([l[0]], reach[:-1] + 1)))
            return int(np.maximum(h - starts + 1, 0).sum())
        return int(many.sum()), covered(many), covered(any_)
    rows2 = 0
    k2 = np.zeros(Nkv, dtype=bool)
    k1 = np.zeros(Nkv, dtype=bool)
    for rows in _row_chunks(Nq, Nkv):
        a = mask._dense(rows, slice(0, Nkv), Nq, Nkv)
        cnt = a.sum(axis=1)
        rows2 += int((cnt >= 2).sum())
        k2 |= a[cnt >= 2].any(axis=0)
        k1 |= a.any(axis=0)
    return rows2, int(k2.sum()), int(k1.sum())


def trivial_masked_words(w: Any, mask: Mask) -> int:
    """The trivial bound of masked attention (derived here, docs/masks.md): every output word is written once
    (a row that sees no key still ends as zeros in slow memory); a Q row is read when it sees ≥ 2 keys (with one
    key its softmax is 1 and O_i is that key's V row); a K row when some such row sees it; a V row when any row
    sees it. Q and O per query head, K and V per K/V head."""
    r2, k2, k1 = _row_stats(mask, w.Nq, w.Nkv)
    return w.kv_heads_total * evaluate_int(TRIVIAL_UNIT, _unit_env(w, w.groups, rows2=r2, keys2=k2, keys1=k1))


def masked_lower_bound(w: Any, mask: Mask) -> tuple[str, Fraction]:
    """The largest lower bound (words) for the masked workload: the trivial bound above, or B1_P / B2_P
    (docs/bounds/workloads.md) with the mask's pair count P (they count required pairs, whatever their
    pattern): P·d²/M − M for M ≥ 2d², 2P·d²/M − M for M ≥ 4d² and d_v = d."""
    env = _unit_env(w, w.groups, P=mask.pairs(w.Nq, w.Nkv))
    cands = {"masks.trivial": Fraction(trivial_masked_words(w, mask))}
    if w.M >= 2 * w.d * w.d:
        cands["masks.b1"] = w.kv_heads_total * Fraction(evaluate(B1_UNIT, env)) - w.M
    if w.M >= 4 * w.d * w.d and w.dv == w.d:
        cands["masks.b2"] = w.kv_heads_total * Fraction(evaluate(B2_UNIT, env)) - w.M
    best = max(cands, key=lambda k: (cands[k], k))
    return best, cands[best]


def flash2_masked_words(w: Any, mask: Mask, B_r: int, B_c: int, *, grouped: bool, load: str = "span",
                        documents: str = "packed") -> tuple[int, int]:
    """(reads, writes) of FlashAttention-2's forward under ``mask`` (derived here, docs/masks.md), the block
    mask's counts in place of the causal sums: a Q block of B_r positions (of each of the g heads of a group
    when ``grouped``) is read only when one of its tiles is non-empty; in each non-empty tile it reads the K/V
    rows of the tile's needed span (``load="tile"``: the whole tile); empty tiles are skipped; every O row and
    its logsumexp is written. ``documents="varlen"``: each sequence tiled from its own start (:class:`VarlenRows`)."""
    bm = mask.block_rows(w.Nq, w.Nkv, B_r, B_c, load, documents)
    if isinstance(bm, VarlenRows):
        q_rows = bm.q_rows
    else:
        active = bm.active
        rows = np.minimum(B_r, w.Nq - B_r * np.arange(active.size))
        q_rows = int((rows * active).sum())
    env = _unit_env(w, w.groups if grouped else 1, q_rows=q_rows, kv_rows=bm.kv_rows)
    units = w.kv_heads_total if grouped else w.query_heads_total
    return units * evaluate_int(FLASH2_READS, env), units * evaluate_int(FLASH2_WRITES, env)


def flash2_bwd_masked_words(w: Any, mask: Mask, B_c: int, *, grouped: bool = True) -> tuple[int, int]:
    """(reads, writes) of FlashAttention-2's backward (attnio's flash2-bwd workload schedule, docs/costs.md) under
    ``mask``, its visited query rows per K/V block (:meth:`Mask.kv_block_rows`) in place of the causal sums:
    per unit (a K/V head and its g query heads) the D pass reads O and dO and writes D; dQ is initialised; each
    K/V block of B_c keys (read once; dK, dV written once) visits the query rows that need it, reading Q, dO, L, D
    and dQ and writing dQ per visited row. ``grouped=False``: the per-head schedule (K/V read per query head,
    partial dK/dV read back)."""
    R = int(mask.kv_block_rows(w.Nq, w.Nkv, B_c).sum())
    g, d, dv = w.groups, w.d, w.dv
    q_reads = g * (2 * w.Nq * dv + R * (2 * d + dv + 2))
    q_writes = g * (w.Nq + w.Nq * d + R * d)
    kv = w.Nkv * (d + dv)
    reads, writes = (q_reads + kv, q_writes + kv) if grouped else (q_reads + (2 * g - 1) * kv, q_writes + g * kv)
    return w.kv_heads_total * reads, w.kv_heads_total * writes
