"""Row offsets, bottom-right causal masks and the tiles of any mask, for the schedules that run over heads
(docs/workloads.md, docs/masks.md).

Slow memory holds a workload row-stacked (query head h at rows h·N_q, K/V head k at rows k·N_kv); a schedule
shifts a tile of one head by that head's offset. Under a causal mask query row i sees key rows j ≤ i + δ,
δ = N_kv − N_q ≥ 0 (FlashAttention-2 ≥ 2.1). Under any mask (``attnio.bounds.masks``) a schedule visits the
tiles its block mask says are non-empty (:func:`kv_segments`, :func:`q_range`) and masks the partial ones
(:func:`mask_tile`).

>>> shift(slice(0, 2), 4), crosses(slice(0, 2), slice(0, 2), 0), crosses(slice(2, 4), slice(0, 2), 0)
(slice(4, 6, None), True, False)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np


def shift(s: slice, off: int) -> slice:
    return slice(s.start + off, s.stop + off)


def each(extent: int, size: int) -> Iterator[slice]:
    """Every tile of range(extent), also in count-only mode (for loops whose body depends on the tile index)."""
    for t in range(-(-extent // size)):
        yield slice(t * size, min(extent, (t + 1) * size))


def row_tiles(m: Any, Nq: int, Nkv: int, b: int, delta: int | None) -> Iterator[tuple[slice, int]]:
    """The row tiles of b query rows of one head's N_q × N_kv scores, each with the key rows [0, ext) it covers:
    all N_kv without a mask (``delta`` None); under a bottom-right causal mask e_i + δ, which depends on the tile,
    so every tile is visited, also in count-only mode."""
    for rows in (m.tiles if delta is None else each)(Nq, b):
        yield rows, Nkv if delta is None else rows.stop + delta


def mask(S: Any, rows: slice, cols: slice, delta: int) -> None:
    """Causal mask of a tile crossing the diagonal: logits of key j > query i + δ become −∞ (in place)."""
    r = np.arange(rows.start, rows.stop)[:, None]
    c = np.arange(cols.start, cols.stop)[None, :]
    S[np.broadcast_to(c > r + delta, S.shape)] = -np.inf


def crosses(rows: slice, cols: slice, delta: int) -> bool:
    """True when some key of ``cols`` lies above the diagonal for some query of ``rows``."""
    return cols.stop - 1 > rows.start + delta


def q_blocks(m: Any, Nq: int, B_r: int, cols: slice, delta: int | None, q_off: int = 0) -> Iterator[tuple[slice, slice]]:
    """The Q blocks a K/V block ``cols`` visits, as (rows of the head, rows in slow memory at offset ``q_off``):
    all N_q rows without a mask (``delta`` None), else the rows i ≥ c_j − δ that see its first key."""
    start = 0 if delta is None else max(0, cols.start - delta)
    return q_range(m, start, Nq - start, B_r, q_off)


def q_range(m: Any, start: int, rows: int, B_r: int, q_off: int = 0) -> Iterator[tuple[slice, slice]]:
    """The query rows [start, start + rows) in blocks of B_r, as (rows of the head, rows in slow memory at
    offset ``q_off``); one representative per block shape in count-only mode (:meth:`Machine.tiles`)."""
    for r0 in m.tiles(rows, B_r):
        r = shift(r0, start)
        yield r, shift(r, q_off)


def kv_segments(m: Any, bm: Any, i: int) -> Iterator[tuple[slice, bool]]:
    """The K/V tiles Q block ``i`` of the block mask ``bm`` (a :class:`~attnio.bounds.masks.BlockMask` or
    :class:`~attnio.bounds.masks.BlockRows`) visits, in order, each with whether it is partial
    (to be masked): every non-empty tile j, as its needed key rows [start, start + span). Consecutive tiles needed
    from their first key form one contiguous key range (ended by a tile needed only in part), walked in B_c-tiles
    by :meth:`Machine.tiles` (one representative per tile shape in count-only mode); a tile needed from a later
    key is visited alone."""
    from attnio.bounds.masks import EMPTY, PARTIAL

    j0, kinds, start, span = bm.row(i)  # the block's tiles j0, j0 + 1, …; every other tile is empty
    B_c = bm.B_c
    off = bm.origin(i) if hasattr(bm, "origin") else 0  # varlen: the tiles start at the sequence's first key
    some = kinds != EMPTY
    joins = some & (start == off + (j0 + np.arange(len(kinds))) * B_c)  # needed from its first key
    link = joins[:-1] & (span[:-1] == B_c) & joins[1:]  # tile j's run goes on into tile j + 1
    ends = np.flatnonzero(~np.append(link, False))
    for j in np.flatnonzero(some & ~np.insert(link, 0, False)):  # the first tile of each segment
        if not joins[j]:
            yield slice(int(start[j]), int(start[j] + span[j])), bool(kinds[j] == PARTIAL)
            continue
        k = ends[np.searchsorted(ends, j)]
        a = off + (j0 + int(j)) * B_c
        for t in m.tiles(int(start[k] + span[k]) - a, B_c):
            c = shift(t, a)
            yield c, bool(kinds[(c.start - off) // B_c - j0] == PARTIAL)


def mask_tile(S: Any, rows: slice, cols: slice, mask: Any, Nq: int, Nkv: int) -> bool:
    """Logits of the pairs of the tile (rows × cols) that ``mask`` does not allow become −∞ (in place); the mask
    is evaluated on the tile's index grid (vectorised). True when it allows every pair (S unchanged)."""
    q = np.arange(rows.start, rows.stop)[:, None]
    k = np.arange(cols.start, cols.stop)[None, :]
    ok = np.broadcast_to(np.asarray(mask.allowed(q, k, Nq, Nkv), dtype=bool), S.shape)
    S[~ok] = -np.inf
    return bool(ok.all())


def mask_if_crossing(S: Any, rows: slice, cols: slice, delta: int | None) -> None:
    """Mask the logits tile S (rows × cols) where it crosses the diagonal; ``delta`` None: no mask."""
    if delta is not None and crosses(rows, cols, delta):
        mask(S, rows, cols, delta)
