"""attnio's Triton FA-2 backward (attnio/triton/kernels/fa2_bwd.py) counted in Triton's interpreter at three
workloads (float32, attnio's random inputs and float64 reference). Prints, from one run each: counted words
(both launches) ÷ attnio's exact ``flash2-bwd`` workload formula (grouped), ÷ the best proved backward lower
bound (bounds/workloads.py), the largest absolute gradient error and the seconds; asserts nothing. Measured as
its siblings are (attnio.triton.kernels.measure).

    .venv/bin/python benchmarks/bench_triton_bwd.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attnio.core.workload import Workload  # noqa: E402
from attnio.triton.kernels.measure import measure  # noqa: E402

WORKLOADS = (
    Workload.build(heads=2, N=128, d=32, causal=True, M=4096),
    Workload.build(heads=4, kv_heads=1, Nq=64, Nkv=128, d=16, M=2048),
    Workload.build(batch=2, heads=4, kv_heads=2, Nq=96, Nkv=160, d=32, dv=16, causal=True, M=8192),
)


def main() -> None:
    print(f"{'workload (fp32)':58} {'counted':>10} {'formula':>10} {'c/f':>5} {'lower bound':>12} {'c/lb':>6} "
          f"{'max abs err':>11} {'s':>6}")
    for w in WORKLOADS:
        t0 = time.perf_counter()
        m = measure("flash2-bwd", w)
        seconds = time.perf_counter() - t0
        name = (f"b={w.batch} H={w.heads} Hkv={w.kv_heads} Nq={w.Nq} Nkv={w.Nkv} d={w.d} dv={w.dv} "
                f"{'causal' if w.causal else 'full'} M={w.M}")
        print(f"{name:58} {m.counted.io_words:>10} {m.formula.io_words:>10} {str(m.counted_over_formula):>5} "
              f"{float(m.bound_words):>12.0f} {float(m.counted_over_bound):>6.2f} {m.max_abs_error:>11.1e} "
              f"{seconds:>6.2f}  ({m.bound_id})")


if __name__ == "__main__":
    main()
