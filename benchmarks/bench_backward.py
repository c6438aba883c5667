"""Backward-pass benchmarks. Prints ratios measured in one run; asserts nothing.

    .venv/bin/python benchmarks/bench_backward.py [--repeat 3]

1. Count-only ``flash2-bwd`` at N=2^20, d=128, M=2^17. Target ≤ 2 s.
2. Real-arithmetic backward on the machine at N=4096, d=64 vs a one-shot NumPy backward (softmax, PᵀdO, dO·Vᵀ,
   dS, dS·K, dSᵀ·Q on whole matrices). Target ≤ 3×. ``flash2-bwd`` at M = 2^20 (B_c = 2048, B_r = 122: 68 inner
   steps) and at M = 65536, where the io-optimal rule leaves B_r = 5 query rows per step (~14k small steps);
   ``flash2-square-bwd`` at M = 65536 for comparison (more words, fewer steps).
3. The same count for FA-1 vs FA-2 at N=4096, d=64, M=65536 (exact, count-only): the I/O ratio.
Times are the least CPU time of ``--repeat`` interleaved runs, with one BLAS thread (shared machines are noisy).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attnio.algorithms.run import count, run  # noqa: E402
from benchmarks.bench_machine import best_of, interleaved  # noqa: E402  (the one timing helper)


def oneshot_backward(Q, K, V, dO, scale):
    """The analytic backward on whole matrices (float64) from Q, K, V, dO alone: it recomputes the forward's P and
    O, as a standalone backward ``run`` does (it forms O and the saved statistics with the float64 reference before the
    schedule runs, and that time is part of the machine's figure)."""
    S = (Q @ K.T) * scale
    S -= S.max(axis=1, keepdims=True)
    np.exp(S, out=S)
    S /= S.sum(axis=1, keepdims=True)  # P
    O = S @ V
    dV = S.T @ dO
    dP = dO @ V.T
    D = np.einsum("ij,ij->i", dO, O)
    dP -= D[:, None]
    dP *= S
    dP *= scale
    return dP @ K, dP.T @ Q, dV


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()

    t_count = best_of(args.repeat, lambda: count("flash2-bwd", N=2**20, d=128, M=2**17))
    print(f"1. count-only flash2-bwd N=2^20, d=128, M=2^17      = {t_count * 1e3:8.2f} ms  (target <= 2 s)")

    N, d = 4096, 64
    rng = np.random.default_rng(0)
    Q, K, V, dO = (rng.standard_normal((N, d)) for _ in range(4))
    scale = 1 / np.sqrt(d)
    ref = oneshot_backward(Q, K, V, dO, scale)
    cases = [("flash2-bwd", 2**20), ("flash2-bwd", 65536), ("flash2-square-bwd", 65536)]
    for name, M in cases:
        r = run(name, inputs=(Q, K, V, dO), M=M, check=False)
        for x, y in zip(r.outputs, ref, strict=True):
            assert np.max(np.abs(x - y)) <= 1e-10 * np.max(np.abs(y)), name
    times = interleaved(
        args.repeat,
        lambda: oneshot_backward(Q, K, V, dO, scale),
        *[(lambda name=name, M=M: run(name, inputs=(Q, K, V, dO), M=M, check=False)) for name, M in cases],
    )
    t_one = times[0]
    print(f"2. one-shot NumPy backward N={N}, d={d}: {t_one:.3f} s")
    for (name, M), t in zip(cases, times[1:], strict=True):
        tl = run(name, N=N, d=d, M=M, count_only=True).tiling
        print(f"   {name:18s} M={M:8d} {tl}: machine / one-shot = {t / t_one:6.2f}x  (target <= 3; {t:.3f} s)")
    f1 = count("flash1-bwd", N=N, d=d, M=65536).io_words
    f2 = count("flash2-bwd", N=N, d=d, M=65536).io_words
    print(f"3. FA-1 / FA-2 backward I/O at N={N}, d={d}, M=65536: {f1:,d} / {f2:,d} = {f1 / f2:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
