"""Registers attnio's built-in algorithms in :data:`algorithms.registry.REGISTRY`."""

from __future__ import annotations

from attnio.algorithms import (
    auto,
    flash1,
    flash2,
    kv_stationary,
    poly,
    split_v,
    square_tiling,
    square_tiling_io,
    standard,
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
