"""Registers attnio's built-in algorithms, forward and backward, in :data:`attnio.algorithms.registry.REGISTRY`:
one row per algorithm, its facts as the fields of its :class:`~attnio.algorithms.registry.AlgorithmSpec`.

Every exact built-in schedule is costed by the formula named after it (``attnio.bounds.costs``) and runs with
d_v ≠ d (:func:`_exact`); ``auto``, ``auto-bwd`` and the approximate ``poly`` are written out in full.
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

from attnio.algorithms import (
    auto,
    flash1,
    flash1_bwd,
    flash2,
    flash2_2pass_bwd,
    flash2_bwd,
    flash2_fused_bwd,
    kv_stationary,
    poly,
    split_v,
    square_tiling,
    square_tiling_bwd,
    square_tiling_io,
    square_tiling_io_bwd,
    standard,
    standard_bwd,
)
from attnio.algorithms.registry import AlgorithmSpec, register

PER_HEAD = ("per-head",)
BOTH = ("per-head", "grouped")


def _exact(name: str, module: ModuleType, tiling_cls: Any, summary: str, regime: str, **facts: Any) -> None:
    """Register the exact schedule ``module.schedule`` as ``name``, costed by the formula of that name."""
    register(AlgorithmSpec(name, module.schedule, tiling_cls, summary, regime, cost=name, supports_dv=True, **facts))


# Each forward (what it saves for a backward, the backward completing its training step, its place among auto's
# candidates, its workload schedules), then that backward (the forward statistics it reads, whether it
# recomputes S from Q and K, its place among auto-bwd's candidates).
_exact("flash2", flash2, flash2.Flash2Tiling, saves=("L",), backward="flash2-bwd", auto_rank=0, workload_schedules=BOTH, masks=True,
       summary="FlashAttention-2 forward: Q blocks outer, O/ℓ/m resident, K/V streamed; io-optimal block rule",
       regime="large cache, M ≥ d² (Θ(N²d²/M), optimal by Saha–Ye Thm 3.1/4.8)")
_exact("flash2-bwd", flash2_bwd, flash2_bwd.Flash2BwdTiling, pass_="backward", stats=("L",), recomputes_S=True, auto_rank=0, workload_schedules=BOTH, masks=True,
       summary="FlashAttention-2 backward (Alg. 2): D precomputed, K/V blocks outer, dQ read-updated-written; io-optimal block rule",
       regime="large cache (16N²d²/M, docs/costs.md#flash2-bwd)")
_exact("flash2-fused-bwd", flash2_fused_bwd, flash2_fused_bwd.Flash2FusedBwdTiling, pass_="backward", stats=("L",), recomputes_S=True, auto_rank=7,
       workload_schedules=BOTH,
       summary="FlashAttention-2 backward with D formed and dQ started at zero on each row's first visit (derived here): no D pass, no dQ initialisation",
       regime="large cache (16N²d²/M, docs/costs.md#flash2-fused-bwd); never more words than flash2-bwd")
_exact("flash2-2pass-bwd", flash2_2pass_bwd, flash2_2pass_bwd.Flash2TwoPassBwdTiling, pass_="backward", stats=("L",), recomputes_S=True, auto_rank=5,
       summary="Two-pass FlashAttention backward (derived here): dK, dV with K/V blocks resident, then dQ with Q blocks resident, written once",
       regime="large cache (14N²d²/M, docs/costs.md#flash2-2pass-bwd)")
_exact("flash2-square", flash2, flash2.Flash2SquareTiling, saves=("L",), backward="flash2-square-bwd", auto_rank=2,
       summary="FlashAttention-2 forward with square blocks B_r = B_c (largest that fit M)",
       regime="comparison point for the block rule: never fewer words than flash2 (≈ 6–12·N²d²/M for M ≤ 16d², → 2N²d/√M)")
_exact("flash2-square-bwd", flash2_bwd, flash2_bwd.Flash2SquareBwdTiling, pass_="backward", stats=("L",), recomputes_S=True, auto_rank=1,
       summary="FlashAttention-2 backward with square blocks B_r = B_c (largest that fit M)",
       regime="comparison point for the block rule (never fewer words than flash2-bwd)")
_exact("flash1", flash1, flash1.Flash1Tiling, audit=True, saves=("ell", "m"), backward="flash1-bwd", workload_schedules=PER_HEAD,
       summary="FlashAttention Algorithm 1 as published: K/V blocks outer, O/ℓ/m read and written per step; B_c = ⌈M/4d⌉",
       regime="large cache, d ≤ M ≤ Nd (Θ(N²d²/M), FA Thm 2); working set up to ≈ 1.25·M (exceeds M for M ≲ 8d²): runs in audit mode")
_exact("flash1-bwd", flash1_bwd, flash1_bwd.Flash1BwdTiling, pass_="backward", stats=("ell", "m"), recomputes_S=True, audit=True,
       summary="FlashAttention Algorithm 4 as published: B_c = ⌈M/4d⌉; dQ read and written per step; dQ, dK, dV zeroed in slow memory",
       regime="large cache (20N²d²/M); working set ≈ 2M: runs in audit mode")
_exact("flash1-fit", flash1, flash1.Flash1FitTiling, saves=("ell", "m"), backward="flash1-fit-bwd", auto_rank=4, workload_schedules=PER_HEAD,
       summary="FlashAttention Algorithm 1's loop with the largest blocks that fit M",
       regime="large cache (≈ 6N²d²/M, docs/costs.md#flash1)")
_exact("flash1-fit-bwd", flash1_bwd, flash1_bwd.Flash1FitBwdTiling, pass_="backward", stats=("ell", "m"), recomputes_S=True, auto_rank=2,
       summary="FlashAttention Algorithm 4's loop with the largest blocks that fit M",
       regime="large cache (20N²d²/M)")
_exact("standard", standard, standard.StandardTiling, saves=("S", "P"), backward="standard-bwd", auto_rank=7, workload_schedules=PER_HEAD,
       summary="Standard attention: S = QKᵀ and P = softmax(S) materialised in slow memory, square tiles",
       regime="baseline, Θ(Nd + N²) once M ≥ 3d² (FA Thm 2); Θ(N²d/√M) below")
_exact("standard-bwd", standard_bwd, standard_bwd.StandardBwdTiling, pass_="backward", stats=("P",), auto_rank=4,
       summary="Standard backward (FA Alg. 3): reads the forward's P; dP and dS materialised; square tiles",
       regime="baseline, Θ(Nd + N²) once M ≥ 3d² (FA Thm 5)")
_exact("square_tiling", square_tiling, square_tiling.SquareTiling, saves=("S", "L"), backward="square_tiling-bwd", auto_rank=6, workload_schedules=PER_HEAD,
       summary="Saha–Ye Algorithm 1 (SquareTilingAttention), B = ⌊√(M/4)⌋, stable (logits + logsumexp)",
       regime="small cache, M < d² (Θ(N²d/√M), optimal for standard matmul by Saha–Ye Thm 3.1)")
_exact("square_tiling-bwd", square_tiling_bwd, square_tiling_bwd.SquareTilingBwdTiling, pass_="backward", stats=("S", "L"), auto_rank=3,
       summary="Square-tiled backward (derived here): reads the forward's logits S and logsumexp L; dS materialised",
       regime="small cache, M < d² (Θ(N²d/√M))")
_exact("square_tiling-io-bwd", square_tiling_io_bwd, square_tiling_io_bwd.SquareTilingIOBwdTiling, pass_="backward", stats=("S", "L"), auto_rank=6,
       summary="Square-tiled backward with B×B output tiles and the inner dimension streamed (derived here): reads the forward's S and L; dS materialised",
       regime="small cache, M < d² (≈ 8N²d/√M + 2N², √3 below square_tiling-bwd's leading term)")
_exact("square_tiling-io", square_tiling_io, square_tiling_io.SquareTilingIO, saves=("S", "L"), auto_rank=5,
       summary="Saha–Ye's two phases (S and logsumexp written, then exp(S − L)·V) with ≈√M×√M output tiles and the inner dimension streamed; tile rule derived here",
       regime="small cache, M < d² (≈ 4N²d/√M + N², half the paper rule's 8N²d/√M)")  # the same two phases as square_tiling, other tiles: S and L in slow memory
_exact("kv_stationary", kv_stationary, kv_stationary.KVStationaryTiling, saves=("L",), auto_rank=3,
       summary="K/V blocks held, Q streamed, partial O and logsumexp read and written per K/V block",
       regime="reference point for the large cache (≈ 6N²d²/M)")
_exact("split_v", split_v, split_v.SplitVTiling, saves=("L",), auto_rank=1,
       summary="FA-2 loop holding O for d_k of the d_v value columns at a time, S recomputed per column group",
       regime="large cache with d_v > d_k (≈ 4N²d_k d_v/M); equals flash2 when d_v ≤ d_k")
register(AlgorithmSpec("auto", auto.schedule, auto.AutoTiling,
                       "the exact algorithm with the least I/O at (N, d, M), by the exact cost formulas",
                       "any M ≥ 4", cost=None, supports_dv=True))
register(AlgorithmSpec("poly", poly.schedule, poly.PolyTiling,
                       "APPROXIMATE (error ≤ ε): polynomial method (Alman–Song), rank r = C(d+g, g); stream / chunked / tiled, auto",
                       "near-linear in N while r < N: 4Nd (M ≥ r(d+2)+2d), ≈ 3Nrd²/M + 2Nd, ≈ 4Nrd/√M + 2Nr (M < d²); derived here, docs/approx.md",
                       cost=None, approximate=True))  # exact formulas in bounds.approx (they need r), checked by tests/test_poly.py

register(AlgorithmSpec("auto-bwd", auto.schedule, auto.AutoBwdTiling,
                       "the backward schedule with the least I/O at (N, d, M), by the exact backward cost formulas",
                       "any M ≥ 3", cost=None, supports_dv=True, pass_="backward",
                       stats=(), recomputes_S=False))  # stats: those of the schedule it chooses
