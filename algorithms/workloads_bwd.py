"""Backward schedules over a whole :class:`~attnio.core.workload.Workload` (batch × heads, grouped K/V heads,
N_q ≠ N_kv, bottom-right causal masks) (docs/costs.md#workloads, docs/workloads.md). A training step of a
workload is ``run(forward, workload, pass_="step")`` (:mod:`attnio.algorithms.run`).

Slow memory holds the workload row-stacked as in :mod:`attnio.algorithms.workloads`: Q, O, dO (and dQ) are
(batch·H·N_q) × width, K, V (and dK, dV) are (batch·H_kv·N_kv) × width, L (the forward's logsumexp) is batch·H·N_q;
query head h uses K/V head ⌊h/g⌋, g = H/H_kv. Inputs Q, K, V, O, dO, L start in slow memory; dQ, dK, dV end there.

``flash2-bwd`` (FlashAttention-2, Dao 2023, arXiv 2307.08691, Algorithm 2) with the io-optimal block rule of
``algorithms/flash2_bwd.py`` on N_kv key rows: c = ⌊(M − 2d − d_v − 2)/(2d + 2d_v + 2)⌋, T_c = ⌈N_kv/c⌉,
B_c = ⌈N_kv/T_c⌉, B_r = min(N_q, ⌊(M − 2B_c(d + d_v))/(2d + d_v + 2 + 2B_c)⌋). Loop nest, per K/V head::

    dQ ← 0 for every query row; D = rowsum(dO ∘ O) for every query row     (once, all heads)
    for j in 1..T_c (K/V block j: key rows [c_j, c_j + B_c), c_j = (j − 1)·B_c):
        load K_j, V_j; dK_j ← 0, dV_j ← 0 in fast memory
        for each query head h of the group (grouped: all g heads here; per-head: see below):
            for the Q blocks i of rows [s_j, N_q), s_j = max(0, c_j − δ) under a causal mask, else 0
            (a mask: of the rows [first_j, first_j + R_j) that need a key of block j, Mask.kv_block_range):
                load Q_{h,i}, dO_{h,i}, dQ_{h,i}, L_{h,i}, D_{h,i}
                S = scale·Q_{h,i}K_jᵀ (−∞ where the mask forbids: causal, key > query + δ); P = exp(S − L_{h,i})
                dV_j += PᵀdO_{h,i}; dS = P ∘ (dO_{h,i}V_jᵀ − D_{h,i})
                dQ_{h,i} += scale·dS K_j; write dQ_{h,i}; dK_j += scale·dSᵀQ_{h,i}
        write dK_j, dV_j

Causal masks are bottom-right aligned (δ = N_kv − N_q ≥ 0). A K/V block j is needed only by the query rows
i ≥ c_j − δ (the rows that see its first key), so the inner loop starts there: the Q blocks wholly above the
diagonal are skipped, and only the tiles crossing it are masked (FlashAttention-2 §3.1.1, the backward's
mirror image of the forward's causal loop). Every visited row sees key c_j, so no tile is wholly masked.
Any mask (``run("flash2-bwd", w, mask=...)``, docs/masks.md; causal is its ``Causal()`` case): K/V block j
visits the contiguous query rows from the first to the last that need one of its keys, and every tile the mask
does not wholly allow is masked; a row that sees no key at all (L = −∞) gets P = 0, so zero gradients.
Count: ``bounds.masks.flash2_bwd_masked_words``.

Schedules (``schedule=``):

- ``"grouped"``: one K/V loop per K/V head; K_j, V_j stay in fast memory while the Q blocks of *all g query
  heads* of the group stream past, and dK_j, dV_j accumulate the contributions of every head in fast memory
  before their one write. K/V read once and dK/dV written once per K/V head. The heads pass through one at a
  time, so the working set is the one-head one: ``2B_c(d + d_v) + B_r(2d + d_v + 2) + 2B_r·B_c ≤ M``.
- ``"per-head"``: the one-head loop for each query head in turn (K/V read by each of the g heads). The heads'
  contributions to dK, dV are combined **in slow memory**: the first head of a group writes its dK_j, dV_j;
  each later head, after its inner loop, frees K_j, V_j, reads the partial sums dK_j, dV_j of the heads before it
  (B_c(d + d_v) reads), adds its own in fast memory, and writes the sums back (B_c(d + d_v) writes). So per group
  K/V are read g times, dK/dV read g − 1 times and written g times. Peak: 2B_c(d + d_v) ≤ M while combining.

Exact count per K/V head (derived here, docs/costs.md#workloads): with R the Q rows one head visits over all
K/V blocks (R = T_c·N_q without a mask; Σ_j (N_q − max(0, c_j − δ)) with one),

- grouped:  reads = g(2N_q·d_v + R(2d + d_v + 2)) + N_kv(d + d_v), writes = g(N_q + N_q·d + R·d) + N_kv(d + d_v);
- per-head: reads = g(2N_q·d_v + R(2d + d_v + 2)) + (2g − 1)N_kv(d + d_v), writes = g(N_q + N_q·d + R·d + N_kv(d + d_v)).

Worked count, causal, N_q = N_kv = 4, d = 2, M = 30 (c = 2, T_c = 2, B_c = 2, B_r = 1): block 0 visits rows
0..3, block 1 rows 2..3, R = 6. reads = 16 + 6·8 + 16 = 80, writes = 4 + 8 + 12 + 16 = 40 (without the mask
R = 8: 96 and 44, the one-head flash2-bwd count).

>>> from attnio.algorithms.run import run
>>> from attnio.core.workload import Workload
>>> r = run("flash2-bwd", Workload.build(N=4, d=2, M=30, causal=True), seed=0)
>>> (r.measurement.reads_words, r.measurement.writes_words, max(r.rel_errors.values()) < 1e-12)
(80, 40, True)

GQA, H = 2 query heads on one K/V head (same sizes, no mask): grouped reads 2(16 + 8·8) + 16 = 176, writes
2(4 + 8 + 16) + 16 = 72; per-head reads 176 + 16 + 16 = 208 (K/V read again, the first head's dK/dV read back),
writes 72 + 16 = 88 (dK/dV written by each head).

>>> w = Workload.build(heads=2, kv_heads=1, N=4, d=2, M=30)
>>> [run("flash2-bwd", w, schedule=s, count_only=True).measurement.io for s in ("grouped", "per-head")]
[IOCount(reads_words=176, writes_words=72), IOCount(reads_words=208, writes_words=88)]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from attnio.algorithms import flash2_bwd as flash2_bwd_mod
from attnio.algorithms import flash2_fused_bwd as flash2_fused_bwd_mod
from attnio.algorithms.backend import to_numpy
from attnio.algorithms.machine import Machine, SlowArray
from attnio.algorithms.reference import attention4_backward, attention4_saved, default_scale, rel_error
from attnio.algorithms.workloads import WorkloadTiling
from attnio.bounds import blocks
from attnio.bounds.masks import Causal, Mask
from attnio.core.errors import InvalidParameter
from attnio.core.workload import Workload


def bwd_tiling(algorithm: str, w: Workload, schedule: str = "grouped") -> WorkloadTiling:
    """The block rule of the workload backward; InvalidParameter naming M when M is too small."""
    Nq, Nkv, d, dv, M = w.Nq, w.Nkv, w.d, w.dv, w.M
    budget = blocks.flash2_bwd(d, dv)  # the one-head working set: the heads pass through one at a time
    if M < budget.min_M:
        raise InvalidParameter("M", M, f"M >= {budget.min_M} for {algorithm} (one row each of K, V, dK, dV, Q, dQ, dO, 2 statistics, 2 scores)")
    if algorithm == "flash2-fused-bwd":  # full blocks of c K/V rows first, the remainder last (causal: fewer visits)
        B_c = min(budget.resident(M, "cols"), Nkv)
        return WorkloadTiling(algorithm, schedule, min(Nq, (M - B_c * budget.cols) // (budget.rows + budget.pair * B_c)), B_c)
    return WorkloadTiling(algorithm, schedule, *budget.io_optimal(Nkv, M, side="cols", N_other=Nq))


# ---------------------------------------------------------------------------------------------- schedule
def _first_then_rest(m: Machine, g: int) -> Iterator[int]:
    """Head 0 of a group, then heads 1..g−1 (one representative of those in count-only mode)."""
    yield 0
    for s in m.tiles(g - 1, 1):
        yield 1 + s.start


def flash2_bwd(m: Machine, a: dict[str, SlowArray], w: Workload, t: WorkloadTiling, scale: float,
               mask: Mask | None = None, fused: bool = False) -> tuple[SlowArray, ...]:
    """The FA-2 backward over the workload; ``mask`` (or ``w.causal``, the :class:`~attnio.bounds.masks.Causal`
    mask): K/V block j visits the query rows :meth:`~attnio.bounds.masks.Mask.kv_block_range` gives, masking the
    tiles the mask does not wholly allow. ``fused`` (``flash2-fused-bwd``, no mask or a causal one): no D pass
    and no dQ initialisation; each query row's first visit (K/V block 1, which every row needs) forms D from O
    and starts dQ at zero in fast memory (:mod:`attnio.algorithms.flash2_fused_bwd`)."""
    Hk, Nq, Nkv, g = w.kv_heads_total, w.Nq, w.Nkv, w.groups
    a = (flash2_fused_bwd_mod if fused else flash2_bwd_mod).outputs(m, a, w.query_heads_total * Nq, Hk * Nkv)
    mask = Causal() if w.causal else mask
    if fused and not (mask is None or isinstance(mask, Causal)):
        raise InvalidParameter("mask", mask, "none or a causal one for flash2-fused-bwd (K/V block 1 must visit every query row)")
    visit = None if mask is None else mask.kv_block_range(Nq, Nkv, t.B_c)
    kw = {"Nq": Nq, "Nkv": Nkv, "mask": mask, "visit": visit, "fused": fused}
    for ks in m.tiles(Hk, 1):
        k = ks.start
        if t.schedule == "grouped":
            flash2_bwd_mod.kv_loop(m, a, t.B_r, t.B_c, scale, q_offs=tuple((k * g + j) * Nq for j in range(g)), kv_off=k * Nkv, **kw)
        else:
            for j in _first_then_rest(m, g):
                flash2_bwd_mod.kv_loop(m, a, t.B_r, t.B_c, scale, q_offs=((k * g + j) * Nq,), kv_off=k * Nkv, combine=j > 0, **kw)
    return a["dQ"], a["dK"], a["dV"]


def flash2_fused_bwd(m: Machine, a: dict[str, SlowArray], w: Workload, t: WorkloadTiling, scale: float,
                     mask: Mask | None = None) -> tuple[SlowArray, ...]:
    """:func:`flash2_bwd` with the D pass and the dQ initialisation fused into each row's first visit."""
    return flash2_bwd(m, a, w, t, scale, mask, fused=True)


SCHEDULE_FNS = {"flash2-bwd": flash2_bwd, "flash2-fused-bwd": flash2_fused_bwd}


# ---------------------------------------------------------------------------------------------- running
def run_schedule(spec: Any, w: Workload, schedule: str, inputs: tuple[Any, ...] | None, O: Any,
                 count_only: bool, scale: float | None, check: bool, mask: Mask | None = None) -> tuple[Any, ...]:
    """The backward workload schedule ``schedule`` of ``spec`` on the machine (inputs validated and drawn by the
    runner, :func:`attnio.algorithms.run.run`): (tiling, measurement, outputs, errors). ``O``: the forward's
    output (default the float64 reference); L is the float64 reference's logsumexp (its values change no count)."""
    t = bwd_tiling(spec.name, w, schedule)
    sc = default_scale(w.d, scale)
    H, Hk = w.query_heads_total, w.kv_heads_total
    m = Machine(w.M, algorithm=f"{spec.name} ({schedule})", count_only=count_only)
    shapes = {"Q": (H * w.Nq, w.d), "K": (Hk * w.Nkv, w.d), "V": (Hk * w.Nkv, w.dv), "O": (H * w.Nq, w.dv),
              "dO": (H * w.Nq, w.dv), "L": (H * w.Nq,)}
    allowed = None if mask is None or count_only else mask.dense(w.Nq, w.Nkv)
    if count_only:
        ins = {k: m.input(k, s) for k, s in shapes.items()}
    else:
        assert inputs is not None
        Q4, K4, V4, dO4 = inputs
        O_ref, L4 = attention4_saved(Q4, K4, V4, w.causal, scale, allowed)
        O4 = O_ref if O is None else np.asarray(to_numpy(O), dtype=np.float64).reshape(O_ref.shape)
        arrs = {"Q": Q4, "K": K4, "V": V4, "O": O4, "dO": dO4, "L": L4}
        ins = {k: m.input(k, np.ascontiguousarray(arrs[k]).reshape(s)) for k, s in shapes.items()}
    outs = SCHEDULE_FNS[spec.name](m, ins, w, t, sc, *(() if mask is None else (mask,)))
    meas = m.finish()
    if count_only:
        return t, meas, None, None
    q4, k4 = (w.batch, w.heads, w.Nq), (w.batch, w.kv_heads, w.Nkv)
    data = tuple(to_numpy(m.output_data(a)).reshape(*s) for a, s in zip(outs, ((*q4, w.d), (*k4, w.d), (*k4, w.dv)), strict=True))
    errs = None
    if check:
        refs = attention4_backward(*inputs, w.causal, scale, allowed)
        errs = {n: rel_error(x, r) for n, x, r in zip(("dQ", "dK", "dV"), data, refs, strict=True)}
    return t, meas, data, errs
