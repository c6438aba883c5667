"""Time `attnio verify` over the whole catalog: total seconds, ratios to the targets and to the previous figures,
verdict counts, slowest claims.

    .venv/bin/python benchmarks/bench_verify.py [--solver z3|cvc5|both] [--jobs N] [--top 10] [--prefix ID-PREFIX]

Targets: z3 only ≤ 20 s on 2 cores; ``--solver both`` ≤ 300 s with every claim re-proved by cvc5. Previous
figures (sequential, one process, wall-clock caps): 33.7 s for z3 only; 516 s for both, 122 of 150 claims
re-proved by cvc5; the last landing's (433 claims, 2 jobs): 20.3 s for z3 only, 216 s for both with 432 of 433
re-proved by cvc5. Prints wall-clock and CPU seconds (this process and its workers): on a shared, loaded machine
the wall-clock figure is pessimistic and the CPU figure is the one to compare across runs. No assertions: a
benchmark, not a test.
"""

from __future__ import annotations

import argparse
import collections
import os
import resource
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

TARGET_S = {"z3": 20.0, "both": 300.0, "cvc5": 300.0}
PREVIOUS_S = {"z3": 33.7, "both": 516.0}
PREVIOUS_CVC5 = (122, 150)
# the last landing's figures, on the 433-claim catalog (2 jobs, 2 cores): z3 only 20.3 s; both 216 s, cvc5 432 of 433
LAST_S = {"z3": 20.3, "both": 216.0}


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--solver", default="z3", choices=("z3", "cvc5", "both"))
    p.add_argument("--jobs", type=int, default=None, help="worker processes (default: the CPUs available)")
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--prefix", default="", help="only claims whose id starts with this")
    a = p.parse_args()
    from attnio.solver.claims import all_claims
    from attnio.solver.verify import default_jobs, verify_all

    ids = [c.id for c in all_claims() if c.id.startswith(a.prefix)]
    jobs = default_jobs() if a.jobs is None else a.jobs
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    t0, c0 = time.perf_counter(), _cpu()
    verdicts = verify_all(ids, solver=a.solver, jobs=jobs)
    total, cpu = time.perf_counter() - t0, _cpu() - c0
    counts = collections.Counter(v.status for v in verdicts)
    by_module = collections.defaultdict(float)
    for v in verdicts:
        by_module[v.id.split(".")[0]] += v.seconds
    print(f"claims: {len(verdicts)}  solver: {a.solver}  jobs: {jobs}  cores: {os.cpu_count()}  load average: {load:.1f}")
    print(f"wall: {total:.1f} s  cpu: {cpu:.1f} s  (cpu / jobs: {cpu / max(jobs, 1):.1f} s)")
    target = TARGET_S[a.solver]
    print(f"  wall / target {target:.0f} s: {total / target:.2f}   (cpu / jobs) / target: {cpu / max(jobs, 1) / target:.2f}")
    if a.solver in PREVIOUS_S and not a.prefix:
        prev = PREVIOUS_S[a.solver]
        print(f"  wall / previous {prev} s: {total / prev:.2f}   (cpu / jobs) / previous: {cpu / max(jobs, 1) / prev:.2f}")
        last = LAST_S[a.solver]
        print(f"  wall / last landing {last} s (433 claims): {total / last:.2f}")
    print("verdicts: " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    print(f"non-vacuity witnesses: {sum(v.witness is not None for v in verdicts)} of {len(verdicts)}; "
          f"unjustified assumptions: {sum(bool(v.assumed) for v in verdicts)}")
    if a.solver == "both":
        cc = collections.Counter(v.crosscheck for v in verdicts)
        n = cc.get("proved", 0)
        print("cvc5 re-check: " + ", ".join(f"{k} {n} " for k, n in sorted(cc.items(), key=str)))
        print(f"  cvc5 re-proved {n} of {len(verdicts)} ({n / max(len(verdicts), 1):.0%}; previously "
              f"{PREVIOUS_CVC5[0]} of {PREVIOUS_CVC5[1]}, {PREVIOUS_CVC5[0] / PREVIOUS_CVC5[1]:.0%})")
        missing = [v.id for v in verdicts if v.crosscheck != "proved"]
        if missing:
            print("  not re-proved by cvc5: " + ", ".join(missing))
    print("seconds by id prefix: " + ", ".join(f"{k} {s:.1f}" for k, s in sorted(by_module.items(), key=lambda x: -x[1])))
    print(f"slowest {a.top}:")
    for v in sorted(verdicts, key=lambda v: -v.seconds)[: a.top]:
        print(f"  {v.seconds:7.2f} s  {v.status:8s} {v.id}")
    for v in verdicts:
        if not v.ok:
            print(f"  NOT PROVED: {v.id}: {v.status} {v.reason[:160]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
