"""Registers attnio's built-in algorithms in :data:`algorithms.registry.REGISTRY`."""

from __future__ import annotations

from algorithms import flash2
from algorithms.registry import AlgorithmSpec, register

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
