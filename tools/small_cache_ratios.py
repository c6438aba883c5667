"""Print the small-cache ratio table: the best small-cache schedule (square_tiling-io, exact count) over BS and over
the best small-cache bound (BS, BSPV, BSPV-near; docs/bounds/bspv.md), in units of N²d/√M.

Run: ``python tools/small_cache_ratios.py``. The first five rows are the constants table's small-cache points
(N = 4096, d = 128); the rest show M near d² and a second (N, d).
"""

from __future__ import annotations

from attnio.bounds.constants import BS, SMALL_CACHE, SMALL_TABLE_POINTS, small_cache_table

EXTRA = ((4096, 128, 8192), (4096, 128, 12288), (4096, 128, 16384), (65536, 64, 64), (65536, 64, 1024))
ALG = "square_tiling-io"


def main() -> None:
    print("| N | d | M | M/d² | BS | ratio to BS | best bound | its constant | square_tiling-io | ratio |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    points = SMALL_TABLE_POINTS + EXTRA
    for old, new in zip(small_cache_table(points, (ALG,), (BS,)), small_cache_table(points, (ALG,), SMALL_CACHE), strict=True):
        bs_ratio = f"{old.ratios[ALG]:.2f}" if old.bound_constant > 0 else "—"
        print(
            f"| {new.N} | {new.d} | {new.M} | {new.M / new.d**2:g} | {old.bound_constant:.3f} | {bs_ratio} | "
            f"{new.bound.removeprefix('constants.').upper()} | {new.bound_constant:.3f} | {new.schedules[ALG]:.3f} | "
            f"{new.ratios[ALG]:.2f} |"
        )


if __name__ == "__main__":
    main()
