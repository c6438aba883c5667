"""attnio's Triton FA-2 backward (attnio/triton/kernels/fa2_bwd.py) counted in Triton's interpreter at three
workloads. Prints, from one run each: counted words (both launches) ÷ attnio's exact ``flash2-bwd`` workload
formula (grouped), and ÷ the best proved backward lower bound (bounds/workloads.py); asserts nothing.

    .venv/bin/python benchmarks/bench_triton_bwd.py
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402
from attnio.bounds.costs import workload_backward_cost  # noqa: E402
from attnio.bounds.workloads import best_backward_lower_bound  # noqa: E402

from attnio.triton import count_traffic  # noqa: E402
from attnio.triton.kernels.fa2_bwd import fa2_backward  # noqa: E402
from attnio.workload import Workload  # noqa: E402

WORKLOADS = (
    Workload.build(heads=2, N=128, d=32, causal=True, M=4096),
    Workload.build(heads=4, kv_heads=1, Nq=64, Nkv=128, d=16, M=2048),
    Workload.build(batch=2, heads=4, kv_heads=2, Nq=96, Nkv=160, d=32, dv=16, causal=True, M=8192),
)


def tensors(w: Workload) -> dict[str, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    q = torch.randn(w.batch, w.heads, w.Nq, w.d, generator=g)
    k = torch.randn(w.batch, w.kv_heads, w.Nkv, w.d, generator=g)
    v = torch.randn(w.batch, w.kv_heads, w.Nkv, w.dv, generator=g)
    do = torch.randn(w.batch, w.heads, w.Nq, w.dv, generator=g)
    s = w.d**-0.5 * q @ k.repeat_interleave(w.groups, 1).transpose(-1, -2)
    if w.causal:
        s = s.masked_fill(torch.arange(w.Nkv)[None, :] > torch.arange(w.Nq)[:, None] + (w.Nkv - w.Nq), float("-inf"))
    o = torch.softmax(s, -1) @ v.repeat_interleave(w.groups, 1)
    return {"q": q, "k": k, "v": v, "o": o, "do": do, "lse": torch.logsumexp(s, -1)}


def main() -> None:
    print(f"{'workload':58} {'counted':>10} {'formula':>10} {'c/f':>6} {'==':>5} {'lower bound':>12} {'c/lb':>6} {'s':>6}")
    for w in WORKLOADS:
        t = tensors(w)
        t0 = time.perf_counter()
        with count_traffic(**t) as c:
            fa2_backward(t["q"], t["k"], t["v"], t["o"], t["do"], t["lse"], causal=w.causal, M=w.M)
        secs = time.perf_counter() - t0
        counted = c.io_count().io_words
        formula = workload_backward_cost("flash2-bwd", w).io_words
        lb_id, lb = best_backward_lower_bound(w)
        name = (f"b={w.batch} H={w.heads} Hkv={w.kv_heads} Nq={w.Nq} Nkv={w.Nkv} d={w.d} dv={w.dv} "
                f"{'causal' if w.causal else 'full'} M={w.M}")
        print(f"{name:58} {counted:>10} {formula:>10} {counted / formula:>6.3f} {str(counted == formula):>5} {float(lb):>12.0f} "
              f"{counted / float(lb):>6.2f} {secs:>6.2f}  ({lb_id})")


if __name__ == "__main__":
    main()
