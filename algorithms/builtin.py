"""Registers attnio's built-in algorithms, forward and backward, in :data:`attnio.algorithms.registry.REGISTRY`."""

from __future__ import annotations

from attnio.algorithms import (
    auto,
    flash1,
    flash1_bwd,
    flash2,
    flash2_bwd,
    kv_stationary,
    poly,
    split_v,
    square_tiling,
    square_tiling_bwd,
    square_tiling_io,
    standard,
    standard_bwd,
)
from attnio.algorithms.registry import AlgorithmSpec, register

register(
    AlgorithmSpec(
        name="flash2",
        schedule=flash2.schedule,
        tiling_cls=flash2.Flash2Tiling,
        summary="FlashAttention-2 forward: Q blocks outer, O/ℓ/m resident, K/V streamed; io-optimal block rule",
        regime="large cache, M ≥ d² (Θ(N²d²/M), optimal by Saha–Ye Thm 3.1/4.8)",
        cost="flash2",
        supports_dv=True,
        saves=("L",),
        backward="flash2-bwd",
        auto_rank=0,
        workload_schedules=("per-head", "grouped"),
        masks=True,
    )
)
register(
    AlgorithmSpec(
        name="flash2-square",
        schedule=flash2.schedule,
        tiling_cls=flash2.Flash2SquareTiling,
        summary="FlashAttention-2 forward with square blocks B_r = B_c (largest that fit M)",
        regime="comparison point for the block rule: never fewer words than flash2 (≈ 6–12·N²d²/M for M ≤ 16d², → 2N²d/√M)",
        cost="flash2-square",
        supports_dv=True,
        saves=("L",),
        backward="flash2-square-bwd",
        auto_rank=2,
    )
)
register(
    AlgorithmSpec(
        name="flash1",
        schedule=flash1.schedule,
        tiling_cls=flash1.Flash1Tiling,
        summary="FlashAttention Algorithm 1 as published: K/V blocks outer, O/ℓ/m read and written per step; B_c = ⌈M/4d⌉",
        regime="large cache, d ≤ M ≤ Nd (Θ(N²d²/M), FA Thm 2); working set up to ≈ 1.25·M (exceeds M for M ≲ 8d²): runs in audit mode",
        cost="flash1",
        audit=True,
        supports_dv=True,
        saves=("ell", "m"),
        backward="flash1-bwd",
        workload_schedules=("per-head",),
    )
)
register(
    AlgorithmSpec(
        name="flash1-fit",
        schedule=flash1.schedule,
        tiling_cls=flash1.Flash1FitTiling,
        summary="FlashAttention Algorithm 1's loop with the largest blocks that fit M",
        regime="large cache (≈ 6N²d²/M, docs/costs.md#flash1)",
        cost="flash1-fit",
        supports_dv=True,
        saves=("ell", "m"),
        backward="flash1-fit-bwd",
        auto_rank=4,
        workload_schedules=("per-head",),
    )
)
register(
    AlgorithmSpec(
        name="standard",
        schedule=standard.schedule,
        tiling_cls=standard.StandardTiling,
        summary="Standard attention: S = QKᵀ and P = softmax(S) materialised in slow memory, square tiles",
        regime="baseline, Θ(Nd + N²) once M ≥ 3d² (FA Thm 2); Θ(N²d/√M) below",
        cost="standard",
        supports_dv=True,
        saves=("S", "P"),
        backward="standard-bwd",
        auto_rank=7,
        workload_schedules=("per-head",),
    )
)
register(
    AlgorithmSpec(
        name="square_tiling",
        schedule=square_tiling.schedule,
        tiling_cls=square_tiling.SquareTiling,
        summary="Saha–Ye Algorithm 1 (SquareTilingAttention), B = ⌊√(M/4)⌋, stable (logits + logsumexp)",
        regime="small cache, M < d² (Θ(N²d/√M), optimal for standard matmul by Saha–Ye Thm 3.1)",
        cost="square_tiling",
        supports_dv=True,
        saves=("S", "L"),
        backward="square_tiling-bwd",
        auto_rank=6,
        workload_schedules=("per-head",),
    )
)
register(
    AlgorithmSpec(
        name="square_tiling-io",
        schedule=square_tiling_io.schedule,
        tiling_cls=square_tiling_io.SquareTilingIO,
        summary="Saha–Ye's two phases (S and logsumexp written, then exp(S − L)·V) with ≈√M×√M output tiles and the inner dimension streamed; tile rule derived here",
        regime="small cache, M < d² (≈ 4N²d/√M + N², half the paper rule's 8N²d/√M)",
        cost="square_tiling-io",
        supports_dv=True,
        saves=("S", "L"),  # the same two phases as square_tiling, other tiles: S and L in slow memory
        auto_rank=5,
    )
)
register(
    AlgorithmSpec(
        name="kv_stationary",
        schedule=kv_stationary.schedule,
        tiling_cls=kv_stationary.KVStationaryTiling,
        summary="K/V blocks held, Q streamed, partial O and logsumexp read and written per K/V block",
        regime="reference point for the large cache (≈ 6N²d²/M)",
        cost="kv_stationary",
        supports_dv=True,
        saves=("L",),
        auto_rank=3,
    )
)
register(
    AlgorithmSpec(
        name="split_v",
        schedule=split_v.schedule,
        tiling_cls=split_v.SplitVTiling,
        summary="FA-2 loop holding O for d_k of the d_v value columns at a time, S recomputed per column group",
        regime="large cache with d_v > d_k (≈ 4N²d_k d_v/M); equals flash2 when d_v ≤ d_k",
        cost="split_v",
        supports_dv=True,
        saves=("L",),
        auto_rank=1,
    )
)
register(
    AlgorithmSpec(
        name="auto",
        schedule=auto.schedule,
        tiling_cls=auto.AutoTiling,
        summary="the exact algorithm with the least I/O at (N, d, M), by the exact cost formulas",
        regime="any M ≥ 4",
        cost=None,
        supports_dv=True,
    )
)
register(
    AlgorithmSpec(
        name="poly",
        schedule=poly.schedule,
        tiling_cls=poly.PolyTiling,
        summary="APPROXIMATE (error ≤ ε): polynomial method (Alman–Song), rank r = C(d+g, g); stream / chunked / tiled, auto",
        regime="near-linear in N while r < N: 4Nd (M ≥ r(d+2)+2d), ≈ 4Nrd²/M + 2Nd, ≈ 4Nrd/√M + 2Nr (M < d²); derived here, docs/approx.md",
        cost=None,  # exact formulas in bounds.approx (they need r), checked by tests/test_poly.py
        approximate=True,
    )
)
register(
    AlgorithmSpec(
        name="flash2-bwd",
        schedule=flash2_bwd.schedule,
        tiling_cls=flash2_bwd.Flash2BwdTiling,
        summary="FlashAttention-2 backward (Alg. 2): D precomputed, K/V blocks outer, dQ read-updated-written; io-optimal block rule",
        regime="large cache (16N²d²/M, docs/costs.md#flash2-bwd)",
        cost="flash2-bwd",
        supports_dv=True,
        pass_="backward",
        stats=("L",),
        recomputes_S=True,
        auto_rank=0,
        workload_schedules=("per-head", "grouped"),
        masks=True,
    )
)
register(
    AlgorithmSpec(
        name="flash2-square-bwd",
        schedule=flash2_bwd.schedule,
        tiling_cls=flash2_bwd.Flash2SquareBwdTiling,
        summary="FlashAttention-2 backward with square blocks B_r = B_c (largest that fit M)",
        regime="comparison point for the block rule (never fewer words than flash2-bwd)",
        cost="flash2-square-bwd",
        supports_dv=True,
        pass_="backward",
        stats=("L",),
        recomputes_S=True,
        auto_rank=1,
    )
)
register(
    AlgorithmSpec(
        name="flash1-bwd",
        schedule=flash1_bwd.schedule,
        tiling_cls=flash1_bwd.Flash1BwdTiling,
        summary="FlashAttention Algorithm 4 as published: B_c = ⌈M/4d⌉; dQ read and written per step; dQ, dK, dV zeroed in slow memory",
        regime="large cache (20N²d²/M); working set ≈ 2M: runs in audit mode",
        cost="flash1-bwd",
        supports_dv=True,
        pass_="backward",
        stats=("ell", "m"),
        recomputes_S=True,
        audit=True,
    )
)
register(
    AlgorithmSpec(
        name="flash1-fit-bwd",
        schedule=flash1_bwd.schedule,
        tiling_cls=flash1_bwd.Flash1FitBwdTiling,
        summary="FlashAttention Algorithm 4's loop with the largest blocks that fit M",
        regime="large cache (20N²d²/M)",
        cost="flash1-fit-bwd",
        supports_dv=True,
        pass_="backward",
        stats=("ell", "m"),
        recomputes_S=True,
        auto_rank=2,
    )
)
register(
    AlgorithmSpec(
        name="standard-bwd",
        schedule=standard_bwd.schedule,
        tiling_cls=standard_bwd.StandardBwdTiling,
        summary="Standard backward (FA Alg. 3): reads the forward's P; dP and dS materialised; square tiles",
        regime="baseline, Θ(Nd + N²) once M ≥ 3d² (FA Thm 5)",
        cost="standard-bwd",
        supports_dv=True,
        pass_="backward",
        stats=("P",),
        recomputes_S=False,
        auto_rank=4,
    )
)
register(
    AlgorithmSpec(
        name="square_tiling-bwd",
        schedule=square_tiling_bwd.schedule,
        tiling_cls=square_tiling_bwd.SquareTilingBwdTiling,
        summary="Square-tiled backward (derived here): reads the forward's logits S and logsumexp L; dS materialised",
        regime="small cache, M < d² (Θ(N²d/√M))",
        cost="square_tiling-bwd",
        supports_dv=True,
        pass_="backward",
        stats=("S", "L"),
        recomputes_S=False,
        auto_rank=3,
    )
)
register(
    AlgorithmSpec(
        name="auto-bwd",
        schedule=auto.schedule,
        tiling_cls=auto.AutoBwdTiling,
        summary="the backward schedule with the least I/O at (N, d, M), by the exact backward cost formulas",
        regime="any M ≥ 3",
        cost=None,
        supports_dv=True,
        pass_="backward",
        stats=(),  # those of the schedule it chooses
        recomputes_S=False,
    )
)
