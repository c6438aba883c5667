"""Context parallelism (docs/distributed.md): per schedule and P, the words one device sends, counted on the
simulated P-device machine, by the formula (bounds/distributed.py) and measured on P gloo processes (bytes at the
collectives ÷ 8, float64; causal, H = 2·H_kv with H_kv = 2, Ulysses H_kv = P, hybrid P_a = 2 from P = 4, attention2d at square P), forward and backward, with the ratios counted ÷ formula and gloo ÷ formula (1.000 is
exact), the causal work imbalance and the wall time of each gloo group. First, each one-head schedule's forward words
per device ÷ the lower bound DIST-QK (docs/bounds/distributed.md) at a few (N, d, P). Then the formula at a Llama-style size
(N = 131072, H = 32, H_kv = 8, d = 128, bf16) per schedule, P = 8 (hybrid: groups of 4), with link times on NVLink4 and InfiniBand NDR.

    .venv/bin/python benchmarks/bench_distributed.py [--P 2 4 8] [--no-gloo] [--bound-only]
"""

from __future__ import annotations

import argparse
import time

from attnio.algorithms.context_parallel import distributed, plan
from attnio.bounds import distributed as dist
from attnio.core.errors import InvalidParameter


def jobs_for(P: int) -> list[dict]:
    from attnio.algorithms.cp_gloo import job

    return [job(s, N=4 * P, d=8, heads=2 * (P if s == "ulysses" else 2), kv_heads=P if s == "ulysses" else 2,
                causal=True, backward=True, intra=2 if s == "hybrid" else None)
            for s in dist.SCHEDULES if (s != "hybrid" or P >= 4) and (s != "attention2d" or P in (4, 9, 16))]


BOUND_POINTS = ((4096, 64, 4), (32768, 128, 16), (131072, 128, 64), (131072, 128, 8), (131072, 128, 16),
                (1024, 128, 64))


def bound_table() -> None:
    """Each one-head schedule's exact forward words per device ÷ DIST-QK (docs/bounds/distributed.md), d_v = d."""
    names = [s for s in dist.SCHEDULES if s not in ("ulysses", "hybrid")]  # these two need P | H_kv: not one head
    print("Forward words per device ÷ the lower bound DIST-QK (derived here, docs/bounds/distributed.md); one head, "
          "d_v = d; '-' where the schedule does not run")
    print(f"{'N':>7} {'d':>4} {'P':>3} {'branch':>7} {'bound':>13} " + " ".join(f"{s:>11}" for s in names))
    for N, d, P in BOUND_POINTS:
        L = dist.lower_bound(P=P, N=N, d=d)
        e = dist.lower_bound_entry({}, P=P, N=N, d=d)
        cells = []
        for s in names:
            try:
                w = dist.per_device(s, P=P, N=N, d=d, heads=1, kv_heads=1)["forward"]
                cells.append(f"{w / L:>11.3f}")
            except InvalidParameter:
                cells.append(f"{'-':>11}")
        print(f"{N:>7} {d:>4} {P:>3} {'first' if e['branch'].startswith('2Nd') else 'second':>7} {L:>13,.1f} " + " ".join(cells))
    print()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--P", type=int, nargs="+", default=[2, 4, 8])
    ap.add_argument("--no-gloo", action="store_true")
    ap.add_argument("--bound-only", action="store_true", help="print only the schedule ÷ lower bound table")
    args = ap.parse_args()
    bound_table()
    if args.bound_only:
        return
    print(f"{'schedule':<10} {'P':>2} {'pass':<8} {'counted':>9} {'formula':>9} {'gloo':>9} {'cnt÷f':>6} {'gloo÷f':>6} "
          f"{'imbalance':>9}")
    for P in args.P:
        jobs = jobs_for(P)
        gloo, wall = None, 0.0
        if not args.no_gloo:
            from attnio.algorithms.cp_gloo import run_gloo

            t0 = time.perf_counter()
            gloo = run_gloo(jobs, P=P, timeout_s=600)
            wall = time.perf_counter() - t0
        for i, j in enumerate(jobs):
            r = distributed(j["schedule"], P=P, N=j["N"], d=j["d"], heads=j["heads"], kv_heads=j["kv_heads"],
                            causal=True, backward=True, intra=j["intra"])
            imb = max(r.pairs) * P / sum(r.pairs)
            for p in ("forward", "backward"):
                counted, f = max(r.sent[p]), r.formula[p]
                g = max(gloo[i]["bytes_sent"][p]) // 8 if gloo else None
                gs = f"{g:>9}" if g is not None else f"{'-':>9}"
                gr = f"{g / f:>6.3f}" if g is not None else f"{'-':>6}"
                print(f"{j['schedule']:<10} {P:>2} {p:<8} {counted:>9} {f:>9} {gs} {counted / f:>6.3f} {gr} {imb:>9.3f}")
        if gloo:
            print(f"   gloo group of {P} processes, {len(jobs)} jobs: {wall:.1f} s wall")
    print("\nLlama-style, N = 131072, H = 32, H_kv = 8, d = 128, bf16, causal, P = 8: per device")
    print(f"{'schedule':<10} {'fwd MB':>8} {'bwd MB':>8} {'fwd NVLink4':>12} {'fwd IB-NDR':>11} {'attn (H100)':>12} "
          f"{'imbalance':>9}")
    for s in (x for x in dist.SCHEDULES if x != "attention2d"):
        kw = dict(P=8, N=131072, d=128, heads=32, kv_heads=8, causal=True, backward=True,
                  intra=4 if s == "hybrid" else None)
        a = plan(s, **kw, link="nvlink4")
        b = plan(s, **kw, link="ib-ndr")
        fb = a["formula_bytes"]
        print(f"{s:<10} {fb['forward'] / 1e6:>8.1f} {fb['backward'] / 1e6:>8.1f} {a['times']['forward']['comm_s'] * 1e3:>10.3f}ms "
              f"{b['times']['forward']['comm_s'] * 1e3:>9.3f}ms {a['times']['forward']['compute_s_max'] * 1e3:>10.3f}ms "
              f"{a['imbalance_max_over_mean']:>9.3f}")


if __name__ == "__main__":
    main()
