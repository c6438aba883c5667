"""Schedules over a whole :class:`~attnio.core.workload.Workload`: batch × heads, grouped K/V heads (GQA/MQA),
N_q ≠ N_kv and causal masks (docs/costs.md#workloads, docs/workloads.md).

Slow memory holds the workload row-stacked: Q and O are (batch·H·N_q) × d (d_v), K and V are
(batch·H_kv·N_kv) × d (d_v); query head h (batch-major) uses K/V head ⌊h/g⌋, g = H/H_kv. Every (query or K/V)
head is one loop iteration, so in count-only mode one representative head stands for all of them
(:meth:`Machine.tiles`).

Causal masks are bottom-right aligned (FlashAttention-2 ≥ 2.1): query row i sees key rows j ≤ i + δ,
δ = N_kv − N_q ≥ 0. A Q block of rows [s, e) therefore needs only the key rows [0, e + δ): K/V tiles start at
0 in steps of B_c and the last one ends at e + δ, so every K/V block wholly above the diagonal is skipped and
only the tiles that cross it are masked (FlashAttention-2 §3.1.1). Every row of a loaded tile sees at least one
key of the first tile, so no softmax row is empty.

Any mask (``run("flash2", w, mask=...)``, ``attnio.bounds.masks``, docs/masks.md; the causal flag is the
``Causal()`` case of the same loop): from the block mask of the B_r × B_c tiles, Q block i visits only its
non-empty tiles j, loading their needed key rows [start_ij, start_ij + span_ij), and masks the partial ones
(the mask evaluated on the tile's index grid); a Q block whose tiles are all empty is not read (its O rows are
written as zeros, its L rows as −∞: a row that sees no key has a zero output, FlexAttention's convention).
Count: ``bounds.masks.flash2_masked_words``.

Schedules (``schedule=``):

- ``flash2``, ``"per-head"``: the FlashAttention-2 loop for each query head (K/V of the group read by each of
  its g heads). Rows per Q block a = ⌊(M − max(d, d_v))/(d + d_v + 4)⌋ (the io-optimal rule of
  ``algorithms/flash2.py``), T_r = ⌈N_q/a⌉, B_r = ⌈N_q/T_r⌉.
- ``flash2``, ``"grouped"``: one loop per K/V head; each Q block holds B_r rows of *all g query heads of the
  group* (g·B_r rows: Q, O, statistics and scores of each), so each K/V tile is loaded once for the g heads.
  B_r from ⌊a/g⌋ (needs a ≥ g). Loop nest::

      for each K/V head (batch·H_kv):
          for i in 1..T_r (T_r = ⌈N_q/⌊a/g⌋⌉, B_r = ⌈N_q/T_r⌉ positions):
              for h in the g query heads: load Q_{h,i}; O_{h,i} ← 0, ℓ, m ← −∞
              for each K/V tile j of [0, N_kv) (causal: of [0, e_i + δ); a mask: its non-empty tiles, their span):
                  load K_j; S_{h,ij} = scale·Q_{h,i}K_jᵀ for every h (partial tiles masked); free K_j
                  load V_j; O_{h,i} += P̃_{h,ij}V_j for every h; free V_j
              write O_{h,i}, L_{h,i} for every h

- ``flash1`` / ``flash1-fit`` (per-head): FlashAttention Algorithm 1; causal: for K/V block j (rows
  [c_j, c_j + B_c)) only the Q rows i ≥ c_j − δ are visited.
- ``standard``, ``square_tiling`` (per-head): S (N_q × N_kv) materialised; causal: row tile i computes,
  stores and reads only the columns [0, e_i + δ), tiles crossing the diagonal masked (−∞ logits).

Worked count, per-head flash2, causal, N_q = N_kv = 4, d = 2, M = 14 (a = 1, T_r = 4, B_r = 1): K/V rows
read 1 + 2 + 3 + 4 = 10, so reads = 8 + 10·4 = 48 (non-causal: 72), writes = 12.

>>> from attnio.algorithms.run import run
>>> from attnio.core.workload import Workload
>>> w = Workload.build(N=4, d=2, M=14, causal=True)
>>> r = run("flash2", w, seed=0)
>>> (r.measurement.reads_words, r.measurement.writes_words, r.max_abs_error < 1e-12)
(48, 12, True)

The same sizes under the sliding window (1, 0) (row q sees keys q − 1 and q; K/V tiles of B_c = 2 keys): the
needed spans are 1, 2, 1 + 1 and 2 key rows, 7 in all, so reads = 8 + 7·4 = 36, writes = 12.

>>> from attnio.bounds.masks import SlidingWindow
>>> r = run("flash2", Workload.build(N=4, d=2, M=14), mask=SlidingWindow(1, 0), seed=0)
>>> (r.measurement.reads_words, r.measurement.writes_words, r.max_abs_error < 1e-12)
(36, 12, True)

Grouped, H = 4 query heads on one K/V head, N_q = 2, N_kv = 8, d = 2, M = 40 (a = 4, ⌊a/g⌋ = 1, T_r = 2):
per-head reads 4·(4 + 1·32) = 144; grouped reads 16 + 2·32 = 80 (K/V read twice, not four times).

>>> w = Workload.build(heads=4, kv_heads=1, Nq=2, Nkv=8, d=2, M=40)
>>> [run("flash2", w, schedule=s, count_only=True).measurement.reads_words for s in ("per-head", "grouped")]
[144, 80]
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from attnio.algorithms import flash1 as flash1_mod
from attnio.algorithms import registry
from attnio.algorithms import square_tiling as square_tiling_mod
from attnio.algorithms import standard as standard_mod
from attnio.algorithms.backend import to_numpy
from attnio.algorithms.causal import crosses, each, kv_segments, mask_tile
from attnio.algorithms.flash2 import block as flash2_block
from attnio.algorithms.flash2 import empty_block
from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.reference import attention4, default_scale
from attnio.bounds import blocks
from attnio.bounds.masks import Causal, Mask
from attnio.core.errors import InvalidParameter
from attnio.core.workload import Workload


# ---------------------------------------------------------------------------------------------- tilings
@dataclass(frozen=True)
class WorkloadTiling:
    """Block sizes of a workload schedule: B_r query positions per Q block (per head), B_c K/V rows per tile
    (``b``: the square tile side of standard / square tiling)."""

    algorithm: str
    schedule: str
    B_r: int
    B_c: int
    load: str = "span"  # what a masked flash2 loads of a visited tile: its needed span, or the whole tile
    tiles: str = "io-optimal"  # where B_r × B_c came from: the block rule, "given", or a kernel preset (fa2, …)
    documents: str = "packed"  # a document mask's tiles: global ("packed") or from each sequence's start ("varlen")


def given_tiling(algorithm: str, w: Workload, schedule: str, tiles: Any, load: str = "span",
                 mask: Mask | None = None, documents: str = "packed") -> WorkloadTiling:
    """The tiling of a flash2 forward workload run told its tiles: ``tiles`` None (the block rule below), a pair
    (B_r, B_c) (B_r positions of each head per Q block, B_c keys per tile), a kernel preset name of
    :mod:`attnio.bounds.kernel_tiles` (its rule at the workload's head dimension, GPU preset, element size and
    mask), or a :class:`WorkloadTiling`; ``load``: ``span`` or ``tile`` (:data:`attnio.bounds.masks.LOADS`). The
    tiles must fit: the working set g·B_r·(d + d_v + 3) + B_c·max(d, d_v) + g·B_r·B_c ≤ M (B_r, B_c clipped to
    N_q, N_kv), else InvalidParameter naming ``tiling``. ``documents``: ``packed`` or ``varlen``
    (:data:`attnio.bounds.masks.DOCUMENTS`; varlen needs a document mask).

    >>> given_tiling("flash2", Workload.build(N=4096, d=128, gpu="h100", dtype="bf16"), "per-head", "fa2", "tile")
    WorkloadTiling(algorithm='flash2', schedule='per-head', B_r=128, B_c=64, load='tile', tiles='fa2', documents='packed')
    """
    from attnio.bounds.kernel_tiles import PRESETS, kernel_tiles
    from attnio.bounds.masks import DOCUMENTS, LOADS, _cu_seqlens
    from attnio.core.validate import check_choice, check_int

    load = check_choice("load", load, LOADS)
    documents = check_choice("documents", documents, DOCUMENTS)
    if documents == "varlen" and (mask is None or _cu_seqlens(mask) is None or mask.bounds(np.arange(1), w.Nq, w.Nkv) is None):
        raise InvalidParameter("documents", documents, "packed unless the mask is a Document (or an interval mask & a Document)")
    if tiles is None:
        return replace(tiling(algorithm, w, schedule), load=load, documents=documents)
    if algorithm != "flash2":
        raise InvalidParameter("tiling", tiles, "not given for " + algorithm + " (workload runs take tiles for flash2's forward)")
    if isinstance(tiles, WorkloadTiling):
        tiles = (tiles.B_r, tiles.B_c)
    if isinstance(tiles, str):
        name = check_choice("tiling", tiles, PRESETS)
        win = _window(mask)  # FA-2/FA-3: causal is the window (−1, 0); local a bounded side
        causal = w.causal or (win is not None and win.window_left < 0 and win.window_right == 0)
        local = win is not None and not causal and (win.window_left >= 0 or win.window_right >= 0)
        gpu = w.memory.split()[1] if w.memory.startswith("gpu ") else None
        B_r, B_c = kernel_tiles(name, d=w.d, dv=w.dv, gpu=gpu, causal=causal, local=local, element_size=w.bytes_per_word)
    else:
        try:
            B_r, B_c = (check_int("tiling", x, min=1) for x in tiles)
        except (TypeError, ValueError):
            raise InvalidParameter("tiling", tiles, "a pair (B_r, B_c) of integers >= 1, a WorkloadTiling, or one of " + ", ".join(PRESETS)) from None
        name = "given"
    g = w.groups if schedule == "grouped" else 1
    f2 = blocks.flash2(w.d, w.dv)
    need = blocks.Budget(g * f2.rows, f2.cols, g * f2.pair).words(min(B_r, w.Nq), min(B_c, w.Nkv))
    if need > w.M:
        raise InvalidParameter("tiling", f"{B_r}x{B_c}", f"tiles whose flash2 {schedule} working set fits M={w.M:,d} words (these need {need:,d})")
    return WorkloadTiling(algorithm, schedule, B_r, B_c, load, name, documents)


def _window(mask: Mask | None) -> Any:
    """The sliding window (Causal included) of ``mask``, itself or an operand of an ``&`` (a document & causal
    mask runs FA-2's causal kernel per sequence), else None."""
    from attnio.bounds.masks import And, SlidingWindow

    if isinstance(mask, SlidingWindow):
        return mask
    if isinstance(mask, And):
        return _window(mask.a) or _window(mask.b)
    return None


def tiling(algorithm: str, w: Workload, schedule: str = "per-head") -> WorkloadTiling:
    """The block rule of each workload schedule (module docstring); InvalidParameter when M is too small."""
    Nq, Nkv, d, dv, M = w.Nq, w.Nkv, w.d, w.dv, w.M
    if algorithm == "flash2":
        g = w.groups if schedule == "grouped" else 1
        f2 = blocks.flash2(d, dv)
        budget = blocks.Budget(g * f2.rows, f2.cols, g * f2.pair)  # g query heads' rows per position
        if M < budget.min_M:
            raise InvalidParameter("M", M, f"M >= {budget.min_M} for flash2 {schedule} (one row of each of the {g} query heads, one K/V row)")
        return WorkloadTiling(algorithm, schedule, *budget.io_optimal(Nq, M, N_other=Nkv))
    if algorithm == "flash1":
        B_c = -(-M // (4 * d))
        return WorkloadTiling(algorithm, schedule, min(B_c, d), B_c)
    if algorithm == "flash1-fit":
        budget = blocks.flash1_fit(d, dv)
        if M < budget.min_M:
            raise InvalidParameter("M", M, f"M >= {budget.min_M} for flash1-fit (one row of K, V, Q, O, one score, 6 statistics)")
        return WorkloadTiling(algorithm, schedule, *budget.io_optimal(Nkv, M, side="cols", N_other=Nq))
    if algorithm == "standard":
        if M < 4:
            raise InvalidParameter("M", M, "M >= 4 for standard (one S tile of 1 word plus m, ℓ, m_new)")
        b = math.isqrt(M // 3)
        return WorkloadTiling(algorithm, schedule, b, b)
    if algorithm == "square_tiling":
        if M < 4:
            raise InvalidParameter("M", M, "M >= 4 for square_tiling (B = floor(sqrt(M/4)) >= 1)")
        b = math.isqrt(M // 4)
        return WorkloadTiling(algorithm, schedule, b, b)
    raise AssertionError(f"{algorithm}: a workload schedule in its spec without a block rule here")


# ---------------------------------------------------------------------------------------------- flash2
def flash2(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, w: Workload, t: WorkloadTiling, scale: float,
           mask: Mask | None = None) -> SlowArray:
    """FA-2 over the workload; ``mask`` (or ``w.causal``, the :class:`~attnio.bounds.masks.Causal` mask): each Q
    block visits the non-empty tiles of the block mask (their needed key rows), masks the partial ones, and a Q
    block whose tiles are all empty reads nothing and writes O = 0, L = −∞."""
    Nq, Nkv, g, dv = w.Nq, w.Nkv, w.groups, w.dv
    O = m.slow("O", (w.query_heads_total * Nq, dv), role="output")
    L = m.slow("L", (w.query_heads_total * Nq,), role="scratch")
    mask = Causal() if w.causal else mask
    B_c = min(t.B_c, Nkv)
    if t.schedule == "per-head":
        units = ((hs.start // g, (hs.start * Nq,)) for hs in m.tiles(w.query_heads_total, 1))
    else:
        units = ((ks.start, tuple((ks.start * g + j) * Nq for j in range(g))) for ks in m.tiles(w.kv_heads_total, 1))
    if mask is None:
        for k, q_offs in units:
            for rows in m.tiles(Nq, t.B_r):
                flash2_block(m, Q, K, V, O, L, rows, B_c, scale, q_offs=q_offs, kv_off=k * Nkv, kv_extent=Nkv)
        return O
    def mask_fn(S: Any, rows: slice, cols: slice) -> None:
        mask_tile(S, rows, cols, mask, Nq, Nkv)
    if w.causal and t.load == "span":  # Causal()'s block mask in closed form, tile by tile: [0, e_i + δ), the diagonal's tiles partial
        delta = Nkv - Nq
        active = np.ones(-(-Nq // t.B_r), dtype=bool)
        def visit(i: int, rows: slice) -> Any:
            return ((c, crosses(rows, c, delta)) for c in m.tiles(rows.stop + delta, B_c))
    else:
        bm = mask.block_rows(Nq, Nkv, t.B_r, B_c, t.load, t.documents)  # one Q block at a time (no T_r × T_c array)
        active = bm.active
        def visit(i: int, rows: slice) -> Any:
            return kv_segments(m, bm, i)
    q_blocks = bm.q_blocks() if t.documents == "varlen" else list(each(Nq, t.B_r))  # varlen: from each sequence's start
    for k, q_offs in units:
        for i, rows in enumerate(q_blocks):
            if not active[i]:
                empty_block(m, O, L, rows, dv, q_offs)
                continue
            flash2_block(m, Q, K, V, O, L, rows, B_c, scale, q_offs=q_offs, kv_off=k * Nkv, tiles=visit(i, rows), mask_tile=mask_fn)
    return O


# ---------------------------------------------------------------------------------------------- flash1
def flash1(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, w: Workload, t: WorkloadTiling, scale: float) -> SlowArray:
    Nq, Nkv, g, H = w.Nq, w.Nkv, w.groups, w.query_heads_total
    O, ell, mx = flash1_mod.statistics(m, H * Nq, w.dv)
    for hs in m.tiles(H, 1):
        flash1_mod.kv_loop(m, Q, K, V, O, ell, mx, t.B_r, t.B_c, scale, q_off=hs.start * Nq, kv_off=(hs.start // g) * Nkv,
                           Nq=Nq, Nkv=Nkv, delta=Nkv - Nq if w.causal else None)
    return O


# ------------------------------------------------------------------------------- standard, square tiling
def standard(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, w: Workload, t: WorkloadTiling, scale: float) -> SlowArray:
    Nq, Nkv, g, H = w.Nq, w.Nkv, w.groups, w.query_heads_total
    O = m.slow("O", (H * Nq, w.dv), role="output")
    S = m.slow("S", (Nq, Nkv))  # one head's scores at a time (reused by every head)
    P = m.slow("P", (Nq, Nkv))
    for hs in m.tiles(H, 1):
        standard_mod.head(m, Q, K, V, O, S, P, t.B_r, scale, q_off=hs.start * Nq, kv_off=(hs.start // g) * Nkv,
                          delta=Nkv - Nq if w.causal else None)
    return O


def square_tiling(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, w: Workload, t: WorkloadTiling, scale: float) -> SlowArray:
    Nq, Nkv, g, H = w.Nq, w.Nkv, w.groups, w.query_heads_total
    O = m.slow("O", (H * Nq, w.dv), role="output")
    S = m.slow("S", (Nq, Nkv))
    L = m.slow("L", (Nq,))
    for hs in m.tiles(H, 1):
        square_tiling_mod.head(m, Q, K, V, O, S, L, t.B_r, scale, q_off=hs.start * Nq, kv_off=(hs.start // g) * Nkv,
                               delta=Nkv - Nq if w.causal else None)
    return O


SCHEDULE_FNS = {"flash2": flash2, "flash1": flash1, "flash1-fit": flash1, "standard": standard, "square_tiling": square_tiling}


# ---------------------------------------------------------------------------------------------- running
def run_schedule(spec: registry.AlgorithmSpec, w: Workload, schedule: str, inputs: tuple[Any, ...] | None,
                 count_only: bool, scale: float | None, check: bool, mask: Mask | None = None, tiles: Any = None,
                 load: str = "span", documents: str = "packed") -> tuple[Any, ...]:
    """The forward workload schedule ``schedule`` of ``spec`` on the machine (inputs validated by the runner,
    :func:`attnio.algorithms.run.run`): (tiling, measurement, outputs, errors). ``mask``: validated by the runner
    (only schedules that take one get one); ``tiles``, ``load``: :func:`given_tiling`."""
    t = given_tiling(spec.name, w, schedule, tiles, load, mask, documents)
    m = Machine(w.M, algorithm=f"{spec.name} ({schedule})", count_only=count_only, audit=spec.audit)
    H, Hk = w.query_heads_total, w.kv_heads_total
    shapes = {"Q": (H * w.Nq, w.d), "K": (Hk * w.Nkv, w.d), "V": (Hk * w.Nkv, w.dv)}
    arrays = inputs  # 4-D, drawn or checked by the runner
    ins = [m.input(k, s if count_only else np.ascontiguousarray(a).reshape(s)) for (k, s), a in zip(shapes.items(), arrays or (0, 0, 0), strict=True)]
    extra = () if mask is None else (mask,)
    O = SCHEDULE_FNS[spec.name](m, *ins, w, t, default_scale(w.d, scale), *extra)
    meas = m.finish()
    if count_only:
        return t, meas, None, None
    out = to_numpy(m.output_data(O)).reshape(w.batch, w.heads, w.Nq, w.dv)
    allowed = None if mask is None else mask.dense(w.Nq, w.Nkv)
    err = {"O": float(np.max(np.abs(out - attention4(*arrays, w.causal, scale, allowed))))} if check else None
    return t, meas, (out,), err
