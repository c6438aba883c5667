"""attnio's Triton kernels, forward and backward, counted in Triton's interpreter at three workloads. Prints,
for each registered kernel (attnio.triton.kernels.KERNELS), counted words, attnio's exact formula for the same
schedule and blocks, the best proved lower bound (bounds/workloads.py ``best_lower_bound``; backward
``best_backward_lower_bound``), counted ÷ formula (exactly 1 when the kernel moves what the schedule moves) and
counted ÷ bound, the output error against float64 (backward: the largest over dq, dk, dv), and the seconds of
the counted launch. Asserts nothing.

    TRITON_INTERPRET=1 .venv/bin/python benchmarks/bench_triton_kernels.py [--json]

Workloads (fp32, small enough for the interpreter on a CPU):
1. prefill: batch 1, 4 query heads on 2 K/V heads (GQA), N = 64, d = 32, causal, M = 2048 words;
2. decode-like: batch 1, 8 query heads on 1 K/V head (MQA), N_q = 4, N_kv = 128, d = 32, causal, M = 2048;
3. small cache: batch 1, 2 heads, N = 48, d = 32, not causal, M = 256 < d² = 1024 (square tiling's regime).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

os.environ.setdefault("TRITON_INTERPRET", "1")

from attnio.core.workload import Workload  # noqa: E402
from attnio.triton.kernels import KERNELS  # noqa: E402
from attnio.triton.kernels.measure import measure  # noqa: E402

WORKLOADS = {
    "prefill GQA causal": Workload.build(heads=4, kv_heads=2, N=64, d=32, causal=True, M=2048),
    "decode MQA causal": Workload.build(heads=8, kv_heads=1, Nq=4, Nkv=128, d=32, causal=True, M=2048),
    "small cache M<d^2": Workload.build(heads=2, N=48, d=32, M=256),
}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rows = []
    for wname, w in WORKLOADS.items():
        for kname in sorted(KERNELS):
            t0 = time.perf_counter()
            m = measure(kname, w)
            rows.append({
                "workload": wname, "kernel": kname, "counted_words": m.counted.io_words,
                "formula_words": m.formula.io_words, "bound_id": m.bound_id, "bound_words": float(m.bound_words),
                "counted_over_formula": float(m.counted_over_formula), "counted_over_bound": float(m.counted_over_bound),
                "max_abs_error": m.max_abs_error, "seconds": time.perf_counter() - t0,
            })
    if args.json:
        json.dump(rows, sys.stdout, indent=1)
        print()
        return 0
    print(f"{'workload':<20} {'kernel':<16} {'counted':>10} {'formula':>10} {'c/formula':>9} {'bound':>10} "
          f"{'c/bound':>8} {'max err':>8} {'s':>6}  bound id")
    for r in rows:
        print(f"{r['workload']:<20} {r['kernel']:<16} {r['counted_words']:>10,} {r['formula_words']:>10,} "
              f"{r['counted_over_formula']:>9.4f} {r['bound_words']:>10,.0f} {r['counted_over_bound']:>8.3f} "
              f"{r['max_abs_error']:>8.1e} {r['seconds']:>6.1f}  {r['bound_id']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
