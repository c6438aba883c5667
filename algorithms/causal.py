"""Row offsets and bottom-right causal masks of the schedules that run over heads (docs/workloads.md).

Slow memory holds a workload row-stacked (query head h at rows h·N_q, K/V head k at rows k·N_kv); a schedule
shifts a tile of one head by that head's offset. Under a causal mask query row i sees key rows j ≤ i + δ,
δ = N_kv − N_q ≥ 0 (FlashAttention-2 ≥ 2.1).

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
    for r0 in m.tiles(Nq - start, B_r):
        rows = shift(r0, start)
        yield rows, shift(rows, q_off)


def mask_if_crossing(S: Any, rows: slice, cols: slice, delta: int | None) -> None:
    """Mask the logits tile S (rows × cols) where it crosses the diagonal; ``delta`` None: no mask."""
    if delta is not None and crosses(rows, cols, delta):
        mask(S, rows, cols, delta)
