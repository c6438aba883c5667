"""Time `attnio verify` over the whole catalog: total seconds, verdict counts, slowest claims.

    .venv/bin/python benchmarks/bench_verify.py [--solver z3|cvc5|both] [--top 10] [--prefix ID-PREFIX]

Prints one run's figures (target: ≤ 60 s on 2 cores, zero unknowns). No assertions: a benchmark, not a test.
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--solver", default="z3", choices=("z3", "cvc5", "both"))
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--prefix", default="", help="only claims whose id starts with this")
    a = p.parse_args()
    from attnio.solver.claims import all_claims
    from attnio.solver.verify import verify_claim

    claims = [c for c in all_claims() if c.id.startswith(a.prefix)]
    t0 = time.perf_counter()
    verdicts = [verify_claim(c, a.solver) for c in claims]
    total = time.perf_counter() - t0
    counts = collections.Counter(v.status for v in verdicts)
    by_module = collections.defaultdict(float)
    for v in verdicts:
        by_module[v.id.split(".")[0]] += v.seconds
    print(f"claims: {len(verdicts)}  solver: {a.solver}  cores: {os.cpu_count()}")
    print(f"total: {total:.1f} s  (target ≤ 60 s: ratio {total / 60:.2f})")
    print("verdicts: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    if a.solver == "both":
        cc = collections.Counter(v.crosscheck for v in verdicts)
        print("cvc5 re-check: " + ", ".join(f"{k} {n}" for k, n in sorted(cc.items(), key=str)))
        print("  not re-proved by cvc5 within its cap: " + ", ".join(v.id for v in verdicts if v.crosscheck != "proved"))
    print("seconds by id prefix: " + ", ".join(f"{k} {s:.1f}" for k, s in sorted(by_module.items(), key=lambda x: -x[1])))
    print(f"slowest {a.top}:")
    for v in sorted(verdicts, key=lambda v: -v.seconds)[: a.top]:
        print(f"  {v.seconds:7.2f} s  {v.status:8s} {v.id}")
    bad = [v for v in verdicts if not v.ok]
    for v in bad:
        print(f"  NOT PROVED: {v.id}: {v.status} {v.reason[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
