"""Registers attnio's built-in backward schedules in :data:`attnio.algorithms.registry_backward.BACKWARD`, and
records what each forward algorithm leaves in slow memory for its backward (``FORWARD_SAVES``)."""

from __future__ import annotations

from attnio.algorithms import auto_bwd, flash1_bwd, flash2_bwd, square_tiling_bwd, standard_bwd
from attnio.algorithms.registry_backward import FORWARD_SAVES, BackwardSpec, register

FORWARD_SAVES.update(
    {
        "flash2": ("L",),
        "flash2-square": ("L",),
        "split_v": ("L",),
        "kv_stationary": ("L",),
        "flash1": ("ell", "m"),
        "flash1-fit": ("ell", "m"),
        "standard": ("S", "P"),
        "square_tiling": ("S", "L"),
        "square_tiling-io": ("S", "L"),  # the same two phases, other tiles: S and L in slow memory
    }
)

register(
    BackwardSpec(
        name="flash2-bwd",
        schedule=flash2_bwd.schedule,
        tiling_cls=flash2_bwd.Flash2BwdTiling,
        summary="FlashAttention-2 backward (Alg. 2): D precomputed, K/V blocks outer, dQ read-updated-written; io-optimal block rule",
        regime="large cache (16N²d²/M, docs/costs.md#flash2-bwd)",
        cost="flash2-bwd",
        forward_of="flash2",
        stats=("L",),
        recomputes_S=True,
    )
)
register(
    BackwardSpec(
        name="flash2-square-bwd",
        schedule=flash2_bwd.schedule,
        tiling_cls=flash2_bwd.Flash2SquareBwdTiling,
        summary="FlashAttention-2 backward with square blocks B_r = B_c (largest that fit M)",
        regime="comparison point for the block rule (never fewer words than flash2-bwd)",
        cost="flash2-square-bwd",
        forward_of="flash2-square",
        stats=("L",),
        recomputes_S=True,
    )
)
register(
    BackwardSpec(
        name="flash1-bwd",
        schedule=flash1_bwd.schedule,
        tiling_cls=flash1_bwd.Flash1BwdTiling,
        summary="FlashAttention Algorithm 4 as published: B_c = ⌈M/4d⌉; dQ read and written per step; dQ, dK, dV zeroed in slow memory",
        regime="large cache (20N²d²/M); working set ≈ 2M: runs in audit mode",
        cost="flash1-bwd",
        forward_of="flash1",
        stats=("ell", "m"),
        recomputes_S=True,
        audit=True,
    )
)
register(
    BackwardSpec(
        name="flash1-fit-bwd",
        schedule=flash1_bwd.schedule,
        tiling_cls=flash1_bwd.Flash1FitBwdTiling,
        summary="FlashAttention Algorithm 4's loop with the largest blocks that fit M",
        regime="large cache (20N²d²/M)",
        cost="flash1-fit-bwd",
        forward_of="flash1-fit",
        stats=("ell", "m"),
        recomputes_S=True,
    )
)
register(
    BackwardSpec(
        name="standard-bwd",
        schedule=standard_bwd.schedule,
        tiling_cls=standard_bwd.StandardBwdTiling,
        summary="Standard backward (FA Alg. 3): reads the forward's P; dP and dS materialised; square tiles",
        regime="baseline, Θ(Nd + N²) once M ≥ 3d² (FA Thm 5)",
        cost="standard-bwd",
        forward_of="standard",
        stats=("P",),
        recomputes_S=False,
    )
)
register(
    BackwardSpec(
        name="square_tiling-bwd",
        schedule=square_tiling_bwd.schedule,
        tiling_cls=square_tiling_bwd.SquareTilingBwdTiling,
        summary="Square-tiled backward (derived here): reads the forward's logits S and logsumexp L; dS materialised",
        regime="small cache, M < d² (Θ(N²d/√M))",
        cost="square_tiling-bwd",
        forward_of="square_tiling",
        stats=("S", "L"),
        recomputes_S=False,
    )
)
register(
    BackwardSpec(
        name="auto-bwd",
        schedule=auto_bwd.schedule,
        tiling_cls=auto_bwd.AutoBwdTiling,
        summary="the backward schedule with the least I/O at (N, d, M), by the exact backward cost formulas",
        regime="any M ≥ 3",
        cost=None,
        forward_of="auto",
        stats=(),  # those of the schedule it chooses
        recomputes_S=False,
    )
)
