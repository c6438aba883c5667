"""Counting attnio's FA-2 forward at production shape: the full interpreter run (every program) against
attnio.triton.scale's sampled count. Prints times and agreement measured in one run; asserts nothing.
Target: the production shape in ≤ 60 s on 2 cores.

    .venv/bin/python benchmarks/bench_triton_scale.py [--small-N 512] [--N 32768] [--skip-production]

Small shape (both run): batch 1, 4 heads, 2 K/V heads, N = --small-N, d = 128, causal, fp16, blocks 64×64;
the two counts are compared per tensor and field. Production shape (only the sampled count runs: the full
run would take days): batch 8, 32 heads, 8 K/V heads, N = --N, d = 128, causal, fp16, blocks 64×64; compared
with the kernel's exact formula (attnio.triton.kernels.fa2_fwd.traffic, derived there). Times are CPU seconds
(``time.process_time``) and wall seconds of one run each.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attnio.core.workload import Workload  # noqa: E402
from attnio.triton import count_traffic, scale  # noqa: E402
from attnio.triton.kernels.fa2_fwd import fa2_forward, traffic  # noqa: E402

BLOCK = (64, 64)


def timed(f):  # noqa: ANN001, ANN201
    c, t = time.process_time(), time.perf_counter()
    out = f()
    return out, time.process_time() - c, time.perf_counter() - t


def full(w: Workload, schedule: str):  # noqa: ANN201
    t = scale._tensors(w)
    with count_traffic(**t) as tr:
        fa2_forward(t["q"], t["k"], t["v"], causal=w.causal, block=BLOCK, schedule=schedule, o=t["o"], lse=t["lse"])
    return tr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small-N", dest="small_N", type=int, default=512)
    ap.add_argument("--N", type=int, default=32768)
    ap.add_argument("--schedule", choices=("grouped", "per-head"), default="grouped")
    ap.add_argument("--skip-production", action="store_true")
    a = ap.parse_args()
    small = Workload.build(batch=1, heads=4, kv_heads=2, N=a.small_N, d=128, causal=True, dtype="fp16", M=10**5)
    f, fc, fw = timed(lambda: full(small, a.schedule))
    s, sc, sw = timed(lambda: scale.count(small, block=BLOCK, schedule=a.schedule))
    agree = all(getattr(s, k) == dict(getattr(f, k)) for k in scale.FIELDS)
    print(f"small (1x4 heads, 2 kv, N={a.small_N}, d=128, causal, {a.schedule}, blocks {BLOCK}):")
    print(f"  full run     {fc:8.2f} CPU-s {fw:8.2f} s   {f.io_count()}")
    print(f"  sampled      {sc:8.2f} CPU-s {sw:8.2f} s   {s.io_count()}  ({s.programs_run}/{s.programs_total} programs)")
    print(f"  per tensor and field equal: {agree}; full/sampled CPU time {fc / sc:.2f}x")
    if a.skip_production:
        return
    prod = Workload.build(batch=8, heads=32, kv_heads=8, N=a.N, d=128, causal=True, dtype="fp16", M=10**5)
    p, pc, pw = timed(lambda: scale.count(prod, block=BLOCK, schedule=a.schedule))
    want = traffic(prod, BLOCK[0], a.schedule)
    print(f"production (8x32 heads, 8 kv, N={a.N}, d=128, causal, {a.schedule}, blocks {BLOCK}):")
    print(f"  sampled      {pc:8.2f} CPU-s {pw:8.2f} s   {p.io_count()}  ({p.programs_run}/{p.programs_total} programs)")
    print(f"  equals fa2_fwd.traffic {want}: {p.io_count() == want}")
    print(f"  method: {p.method}")


if __name__ == "__main__":
    main()
