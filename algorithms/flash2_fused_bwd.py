"""FlashAttention-2's backward with the D pass and the dQ initialisation fused into the first K/V block
(``flash2-fused-bwd``, derived here, docs/costs.md#flash2-fused-bwd): the loop of ``flash2-bwd``
(:mod:`attnio.algorithms.flash2_bwd`, Dao 2023, arXiv 2307.08691, Algorithm 2) with the same block rule, whose
first K/V block forms D_i = rowsum(dO_i ∘ O_i) from the O_i it reads and starts dQ_i at zero in fast memory.

Inputs in slow memory: Q, K (N×d), V, O, dO (N×d_v) and the logsumexp L (N) the forward saved. Outputs dQ,
dK (N×d), dV (N×d_v). Loop nest (T_c = ⌈N/B_c⌉)::

    for j in 1..T_c:                       # K/V blocks, block 1 first
        load K_j, V_j; dK_j ← 0, dV_j ← 0 in fast memory
        for i in 1..T_r:
            if j = 1:                      # the row block's first visit
                load dO_i; D_i ← 0; for each chunk of ≤ 2d + 1 + 2B_c columns of O_i: load it, D_i += rowsum(dO ∘ O)
                write D_i (only when T_c > 1: a later block reads it); load Q_i, L_i; dQ_i ← 0 in fast memory
            else:
                load Q_i, dO_i, dQ_i, L_i, D_i                                       # as flash2-bwd
            S = scale·Q_i K_jᵀ; P = exp(S − L_i); dV_j += PᵀdO_i; dS = P ∘ (dO_i V_jᵀ − D_i)
            dQ_i += scale·dS K_j; write dQ_i; dK_j += scale·dSᵀQ_i
        write dK_j, dV_j

So no separate D pass (flash2-bwd's 2N·d_v reads and N writes), no dQ ← 0 written to slow memory (N·d writes)
and no read of those zeros at the first visit (N·d reads), and no D read there (N reads): O is read once, at the
first visit. Fast memory: the inner step's working set of flash2-bwd, ``2B_c(d + d_v) + B_r(2d + d_v + 2) +
2B_r·B_c ≤ M``; while D_i is formed only dO_i, D_i and one O chunk of ≤ 2d + 1 + 2B_c columns are held beside
the K/V block, which is no more than the step's Q_i, dQ_i, L_i and score tiles, so the peak is the same.

Block rule: flash2-bwd's (``c = ⌊(M − 2d − d_v − 2)/(2d + 2d_v + 2)⌋``, T_c = ⌈N/c⌉, B_c = ⌈N/T_c⌉, B_r from
the space left); needs M ≥ 4d + 3d_v + 4.

Exact count (derived here, docs/costs.md#flash2-fused-bwd):
reads = N·d_v + N(d + d_v) + T_c·N(d + d_v + 1) + (T_c − 1)·N(d + 1),
writes = min(T_c − 1, 1)·N + T_c·N·d + N(d + d_v).
Against flash2-bwd: N(d + d_v + 1) fewer reads and N·d (+ N when T_c = 1) fewer writes, for any M.

Worked count, N = 4, d = 2, M = 30 (c = 2, T_c = 2, B_c = 2, B_r = 1, as flash2-bwd's): reads = 8 + 16 +
2·4·5 + 4·3 = 76, writes = 4 + 16 + 16 = 36 (flash2-bwd: 96 and 44); peak 28 (flash2-bwd's).

>>> from attnio.algorithms.run import run
>>> r = run("flash2-fused-bwd", N=4, d=2, M=30, seed=0)
>>> m = r.measurement
>>> (r.tiling, m.reads_words, m.writes_words, m.peak_fast_words, max(r.rel_errors.values()) < 1e-12)
(Flash2FusedBwdTiling(B_r=1, B_c=2), 76, 36, 28, True)

Workloads (:mod:`attnio.algorithms.workloads_bwd`, no mask or a causal one, both schedules): the same change per
query head; under a causal mask K/V block 1 still visits every query row, so it is every row's first visit. Block
rule there: T_c − 1 **full** blocks of B_c = min(c, N_kv) K/V rows, the remainder last (flash2-bwd balances them,
B_c = ⌈N_kv/T_c⌉). Without a mask the count depends only on T_c, so nothing changes; under a causal mask block j
is visited by the rows from max(0, j·B_c − δ), so the larger stride skips more rows (GPT-2 medium, h100: 1,719
visited rows per head instead of 2,046).
"""

from __future__ import annotations

from dataclasses import dataclass

from attnio.algorithms.flash2_bwd import Flash2BwdTiling, kv_loop
from attnio.algorithms.machine import Machine, SlowArray


@dataclass(frozen=True)
class Flash2FusedBwdTiling(Flash2BwdTiling, name="flash2-fused-bwd"):
    """B_r query rows per Q block, B_c key/value rows per K/V block; flash2-bwd's io-optimal rule."""


def outputs(m: Machine, ins: dict[str, SlowArray], q_rows: int, kv_rows: int) -> dict[str, SlowArray]:
    """dQ, dK, dV and D in slow memory, none written yet (no initialisation, no D pass); ``ins`` with them."""
    d, dv = ins["Q"].shape[1], ins["V"].shape[1]
    a = dict(ins)
    a["dQ"] = m.slow("dQ", (q_rows, d), role="output")
    a["dK"] = m.slow("dK", (kv_rows, d), role="output")
    a["dV"] = m.slow("dV", (kv_rows, dv), role="output")
    a["D"] = m.slow("D", (q_rows,))
    return a


def schedule(m: Machine, ins: dict[str, SlowArray], t: Flash2FusedBwdTiling, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    """The one-head, unmasked loop (module docstring)."""
    a = outputs(m, ins, ins["Q"].shape[0], ins["K"].shape[0])
    kv_loop(m, a, t.B_r, t.B_c, scale, fused=True)
    return a["dQ"], a["dK"], a["dV"]
