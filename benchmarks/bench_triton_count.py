"""Counting overhead: the same Triton launches in Triton's interpreter with and without
``attnio.triton.count_traffic``. Prints the ratio measured in one run; asserts nothing. Target ≤ 1.2×.

    .venv/bin/python benchmarks/bench_triton_count.py [--repeat 5] [--N 128] [--d 32]

The launches: the example causal FlashAttention-2 forward (examples/causal_fa2_noskip.py; B_r = B_c = 32) on
one head, causal, fp32, and a masked vector add (many small accesses: the per-access overhead's worst case).
Times are the least CPU time (``time.process_time``) of ``--repeat`` interleaved runs, one torch thread.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

from attnio.triton import count_traffic  # noqa: E402


@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)


def _example():
    spec = importlib.util.spec_from_file_location("causal_fa2_noskip", ROOT / "examples" / "causal_fa2_noskip.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _time(fn, counted: bool, tensors: dict) -> float:
    t0 = time.process_time()
    if counted:
        with count_traffic(**tensors):
            fn()
    else:
        fn()
    return time.process_time() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--N", type=int, default=128)
    ap.add_argument("--d", type=int, default=32)
    a = ap.parse_args()
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, 1, a.N, a.d, generator=g) for _ in range(3))
    o = torch.empty_like(q)
    launch = _example().launch
    x, y, z = torch.randn(4096, generator=g), torch.randn(4096, generator=g), torch.empty(4096)
    cases = {
        f"causal FA-2 forward (no skip), N={a.N} d={a.d}": (
            lambda: launch(q, k, v, o, causal=True, sm_scale=a.d**-0.5), {"q": q, "k": k, "v": v, "o": o}),
        "masked vector add, 4096 elements, 256 programs of 16 lanes": (
            lambda: _add[(256,)](x, y, z, 4000, BLOCK=16), {"x": x, "y": y, "z": z}),
    }
    for name, (fn, tensors) in cases.items():
        fn()  # warm-up: the interpreter rewrites the kernel's source once
        plain, counted = [], []
        for _ in range(a.repeat):
            plain.append(_time(fn, False, tensors))
            counted.append(_time(fn, True, tensors))
        p, c = min(plain), min(counted)
        print(f"{name}: interpreter {p:.3f} s, counted {c:.3f} s, ratio {c / p:.3f} (target ≤ 1.2)")


if __name__ == "__main__":
    main()
