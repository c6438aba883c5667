"""Benchmarks of the polynomial-method approximate attention (algorithms/poly.py). Prints ratios from one run.

1. Count-only at N = 2^20, d = 16, g = 4 (r = 4845), every schedule and the automatic choice: seconds, and the
   ratio to the 2 s target (< 1 is within target).
2. Real arithmetic at N = 2^14, d = 16, ε = 1e-6 (B chosen so that g = 4, and g = 3): seconds and words moved,
   against flash2 at the same M, as ratios poly ÷ flash2; the achieved max error against float64.
3. The crossover B* (bounds.approx.crossover_B) at a few (N, d, M, ε).

    .venv/bin/python benchmarks/bench_poly.py [--quick]

``--quick`` skips the real-arithmetic flash2 run at N = 2^14 (minutes of NumPy on a busy 2-core machine) and
uses N = 2^12 for part 2.
"""

from __future__ import annotations

import argparse
import time

from attnio.algorithms.poly import PolyTiling
from attnio.algorithms.run import run
from attnio.bounds.approx import approx_cost, crossover_B


def count_only_part() -> None:
    N, d, g = 2**20, 16, 4
    print(f"1. count-only, N = 2^20, d = {d}, g = {g}")
    for M, sched in ((90_000, "stream"), (8192, "chunked"), (128, "tiled"), (8192, "auto")):
        t = PolyTiling.for_degree(sched, N=N, d=d, M=M, g=g)
        t0 = time.perf_counter()
        meas = run("poly", N=N, d=d, M=M, tiling=t, count_only=True).measurement
        s = time.perf_counter() - t0
        assert meas.io == approx_cost(t.schedule, N=N, d=d, M=M, r=t.r)
        print(f"   M={M:>6} {sched:>7} → {t.schedule:<7} r={t.r}  io={meas.io_words:.4e} words  {s * 1000:.1f} ms  "
              f"(÷ 2 s target = {s / 2:.5f})")


def numeric_part(N: int) -> None:
    d, M, eps = 16, 65536, 1e-6
    print(f"2. real arithmetic, N = {N}, d = {d}, M = {M}, ε = {eps:g}")
    t0 = time.perf_counter()
    fl = run("flash2", N=N, d=d, M=M, seed=0)
    t_fl = time.perf_counter() - t0
    print(f"   flash2: io={fl.measurement.io_words:.4e} words, {t_fl:.2f} s, max err {fl.max_abs_error:.2e}")
    for B in (0.15, 0.1):
        t0 = time.perf_counter()
        p = run("poly", N=N, d=d, M=M, seed=0, eps=eps, B=B)
        t_p = time.perf_counter() - t0
        tl = p.tiling
        print(f"   poly B={B}: g={tl.g} r={tl.r} schedule={tl.schedule} io={p.measurement.io_words:.4e} words, {t_p:.2f} s, "
              f"max err {p.max_abs_error:.2e} (ε = {eps:g})")
        print(f"      ratios poly ÷ flash2: io {p.measurement.io_words / fl.measurement.io_words:.4f}, time {t_p / t_fl:.3f}")


def crossover_part() -> None:
    print("3. B* where poly stops moving fewer words than flash2 (bounds.approx.crossover_B)")
    for N, d, M, eps in ((2**14, 16, 4096, 1e-3), (2**16, 16, 4096, 1e-3), (2**16, 16, 65536, 1e-6), (2**20, 16, 65536, 1e-6)):
        c = crossover_B(N, d, M, eps)
        print(f"   N=2^{N.bit_length() - 1} d={d} M={M} ε={eps:g}: B* = {c['B']:.5g}  (g {c['g_below']}→{c['g']}, "
              f"r {c['r_below']}→{c['r']}; poly/flash2 io just below: {c['poly_io_below'] / c['flash2_io']:.3f})")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    count_only_part()
    numeric_part(2**12 if a.quick else 2**14)
    crossover_part()


if __name__ == "__main__":
    main()
