"""attnio.triton.formula on attnio's Triton kernels (attnio/triton/kernels/pinned.py, fp32): for each kernel and
mask, from one run, the fit shapes, the fit seconds (every count of the factorial design plus the exact solve),
the held-out seconds and whether every held-out field is exact, and the tightest c of formula ≤ c × best lower
bound proved by z3 at d = 128 over 1024 ≤ N ≤ 2²⁰ with its seconds; asserts nothing
(docs/triton-formula.md).

    .venv/bin/python benchmarks/bench_triton_formula.py [--no-solver]
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attnio.triton.formula import fit  # noqa: E402
from attnio.triton.kernels import pinned  # noqa: E402

RUNS = (("fa2_grouped", False, None), ("fa2_grouped", True, None), ("fa2_per_head", True, None),
        ("square_tiling", False, 4096), ("square_tiling", True, 4096), ("fa2_bwd", False, None), ("fa2_bwd", True, None))


def main() -> None:
    solver = "--no-solver" not in sys.argv
    print(f"{'kernel':<14} {'mask':<7} {'shapes':>6} {'fit s':>7} {'held-out s':>10} {'exact':>5} {'c (z3)':>10} {'z3 s':>6}")
    for name, causal, M in RUNS:
        f = fit(getattr(pinned, name), causal=causal)
        held = sum(h.seconds for h in f.held_out)
        c, secs = "", ""
        if solver and f.exact:
            t0 = time.perf_counter()
            cmp = f.compare(d=128, M=M)
            secs = f"{time.perf_counter() - t0:.1f}"
            t = cmp.tightest
            c = f"{float(t['constant'].split('/')[0]) / float((t['constant'] + '/1').split('/')[1]):.2f}" \
                if t["status"] == "proved" else f"not proved ({t['status']})"
        print(f"{name:<14} {'causal' if causal else 'none':<7} {len(f.fit_shapes):>6} {f.fit_seconds:>7.1f} {held:>10.1f} "
              f"{'yes' if f.exact else 'NO':>5} {c:>10} {secs:>6}", flush=True)


if __name__ == "__main__":
    main()
