"""The L2 replay (algorithms/l2.py) against published measurements, and its speed, from one run (docs/dram.md).

0. Speed: a causal 32k prefill, 32 heads, d = 128 bf16, H100 preset, 128 × 128 tiles; target 60 s (ratio < 1
   is within target).
1. FlashAttention Figure 2 (A100, GPT-2 medium attention: batch 64, 16 heads, N = 1024, d = 64, fp16): the
   FA-2 forward's and backward's (algorithms/l2.py replay_backward, 128 x 128 blocks, each on a cold L2)
   requested and predicted DRAM bytes against the paper's 4.4 GB (forward + backward of FA-1); then FA-1's own
   schedule (algorithms/l2_flash1.py: Algorithm 1 and 4, one program per (sequence, head), attnio's published
   blocks B_r = 64, B_c = 384), whose requested bytes are attnio's exact flash1 + flash1-bwd count (4.605 GB).
2. ROCm/FlyDSL PR #919 (MI355X, S = 65536, H = 64, D = 128, bf16, non-causal): two launch orders, hit rate and
   L2 misses (128-byte lines) against the published 2.36% / 8.593e9 and 93.62% / 5.611e8. One XCD is replayed
   and the misses are multiplied by 8: both orders deal the 8 XCDs symmetric shares.
3. FlashAttention-3's sections (H100, 16 heads, N = 16384, d = 128 bf16, non-causal): DRAM ÷ compulsory as the
   section grows from 1 head to all 16; FA-3's rule picks 4 (4 × 8 MiB of K/V in its 32 MiB budget).
4. Sawtooth (arXiv 2601.16032): non-compulsory DRAM reads with forward vs alternating K/V traversal (odd waves
   reversed) on the H100 preset, d = 128 bf16, non-causal: one head of N = 131072 (its K/V, 64 MiB, exceeds the
   50 MiB L2: the long-sequence regime) and two heads of N = 65536.
5. A captured trace (attnio/triton/trace.py, algorithms/l2_trace.py): attnio's FA-2 forward Triton kernel, 4 heads,
   N = 256, d = 64 fp16, 64 x 64 blocks: the interpreter's time to count it (tracing off), to count and capture
   the trace, and to replay the trace on the H100 preset; replay ÷ interpreter. And the counter's speed with
   tracing off against the counter before the trace hook existed (attnio/triton/count.py at commit 8348104,
   read with git; skipped outside a git checkout), CPU time, min of 5 interleaved runs each, and the cost of the
   hook's one test per access.

6. The bracket (docs/dram.md#lockstep-and-drift): rows 1-4 at both ends of the scheduler's sync, lockstep (the
   most sharing resident programs can have) and drift-max (sync="drift", skew=1: the first wave's starts spread
   over a whole program), and whether each published number falls inside [lockstep, drift-max].
   ``--write-report-data`` runs only this and writes it, atomically, to reports/dram.json (the report's "What
   reaches DRAM" section reads it; minutes on this machine, in 3 processes); with ``--only-fa1`` it computes only
   the FA-1 row of FA Fig. 2 (about a minute) and puts it into the existing reports/dram.json after the FA-2 row,
   the other rows kept as they are.

7. ``--drift-sweep`` (only this): 150 random small forward cases (seeded), lockstep against sync="drift": on how
   many drift reads less from DRAM, and by how much at most (docs/dram.md#lockstep-and-drift: not monotone).

    .venv/bin/python benchmarks/bench_l2.py [--skip-flydsl] [--only-trace] [--write-report-data [--only-fa1]]
                                            [--drift-sweep]
"""

from __future__ import annotations

import sys
import time

from attnio.algorithms.l2 import fa3_section_heads, replay, replay_backward
from attnio.algorithms.l2_flash1 import fa1_blocks, replay_flash1, replay_flash1_backward
from attnio.core.workload import Workload


def speed() -> None:
    w = Workload.build(heads=32, N=32768, d=128, dtype="bf16", causal=True, M=10**6)
    t0 = time.perf_counter()
    r = replay(w, "h100")
    t = time.perf_counter() - t0
    print(f"0. causal 32k prefill, 32 heads, H100: {t:.1f} s (target 60 s, ratio {t / 60:.2f}); "
          f"requested {r.requested_bytes / 1e9:.2f} GB, DRAM {r.dram_bytes / 1e9:.3f} GB, hit rate {r.hit_rate:.4f}")


def _fig2_total(label: str, f, b) -> None:
    """One schedule's forward + backward against FlashAttention Fig. 2's 4.4 GB (FA-1, measured)."""
    tot, req = f.dram_bytes + b.dram_bytes, f.requested_bytes + b.requested_bytes
    print(f"1. {label}: predicted DRAM {tot / 1e9:.3f} GB = {tot / 4.4e9:.2f} x the paper's 4.4 GB; "
          f"requested {req / 1e9:.3f} GB = {req / 4.4e9:.2f} x")


def fa1_fig2() -> None:
    w = Workload.build(batch=64, heads=16, N=1024, d=64, dtype="fp16", gpu="a100")
    f = replay(w, "a100", B_r=128, B_c=128)
    b = replay_backward(w, "a100", B_r=128, B_c=128)
    for name, r in (("forward", f), ("backward", b)):
        print(f"1. FA Fig. 2 workload, FA-2 {name} on the A100 preset: requested {r.requested_bytes / 1e9:.3f} GB, "
              f"sectors {r.sector_bytes / 1e9:.3f} GB, predicted DRAM {r.dram_bytes / 1e9:.3f} GB (compulsory "
              f"{r.compulsory_bytes / 1e9:.3f} GB), hit rate {r.hit_rate:.3f} ({r.seconds:.0f} s)")
    _fig2_total("forward + backward", f, b)
    B_r, B_c = fa1_blocks(w)
    f, b = replay_flash1(w, "a100"), replay_flash1_backward(w, "a100")
    for name, r in (("forward", f), ("backward", b)):
        print(f"1. FA-1's own schedule ({B_r} x {B_c} blocks), {name}: requested {r.requested_bytes / 1e9:.3f} GB, "
              f"predicted DRAM {r.dram_bytes / 1e9:.3f} GB (compulsory {r.compulsory_bytes / 1e9:.3f} GB), hit rate "
              f"{r.hit_rate:.3f} ({r.seconds:.0f} s)")
    _fig2_total("FA-1 forward + backward", f, b)


def trace() -> None:
    import os
    import subprocess
    from pathlib import Path

    os.environ["TRITON_INTERPRET"] = "1"
    from attnio.algorithms.l2_trace import replay_trace
    from attnio.triton.count import count_traffic
    from attnio.triton.kernels.fa2_fwd import fa2_forward
    from attnio.triton.trace import capture_fa2, fa2_tensors

    w = Workload.build(heads=4, N=256, d=64, dtype="fp16", M=10**6)
    t = fa2_tensors(w)

    def count(ct) -> tuple[float, float]:  # noqa: ANN001
        """(CPU seconds, wall seconds) of one count: CPU time is less disturbed on a shared machine."""
        t0, w0 = time.process_time(), time.perf_counter()
        with ct(**t):
            fa2_forward(t["q"], t["k"], t["v"], block=(64, 64), schedule="per-head", o=t["o"], lse=t["lse"])
        return time.process_time() - t0, time.perf_counter() - w0

    count(count_traffic)  # warm: Triton's first launch
    root = Path(__file__).resolve().parents[1]
    runs: dict[str, list[tuple[float, float]]] = {"now": []}
    counters = {"now": count_traffic}
    try:
        src = subprocess.run(["git", "-C", str(root), "show", "8348104:attnio/triton/count.py"], capture_output=True,
                             text=True, check=True).stdout
        import types

        for name in ("before", "before, a second copy"):  # two copies: how much the same code varies
            mod = types.ModuleType(f"attnio.triton._count_{len(counters)}")
            sys.modules[mod.__name__] = mod  # its dataclasses look their module up
            exec(compile(src, "count.py@8348104", "exec"), mod.__dict__)  # noqa: S102
            counters[name], runs[name] = mod.count_traffic, []
    except (OSError, subprocess.CalledProcessError):
        pass
    import random

    rng = random.Random(0)
    for _ in range(5):
        names = list(counters)
        rng.shuffle(names)
        for name in names:
            runs[name].append(count(counters[name]))
    wall = min(x[1] for x in runs["now"])
    t0 = time.perf_counter()
    traffic, tr = capture_fa2(w, 64, 64)
    cap = time.perf_counter() - t0
    r = replay_trace(tr, "h100")
    print(f"5. trace of FA-2 forward (4 heads, N = 256, d = 64 fp16, 64 x 64): interpreter count {wall:.2f} s "
          f"(wall, tracing off), count + capture {cap:.2f} s ({tr.accesses} accesses, {tr.nbytes / 1024:.0f} KiB), "
          f"replay {r.seconds:.3f} s: replay / interpreter {r.seconds / wall:.4f}")
    import timeit

    class _C:
        trace = None

    c = _C()
    check = min(timeit.repeat("c.trace is not None", globals={"c": c}, number=100_000, repeat=5)) / 100_000
    print(f"5. the hook's cost when off: one test per access, {check * 1e9:.0f} ns x {tr.accesses} accesses = "
          f"{check * tr.accesses / min(x[0] for x in runs['now']):.1e} of the count's CPU time")
    if "before" in runs:
        med = {k: sorted(x[0] for x in v)[len(v) // 2] for k, v in runs.items()}
        print(f"5. counter CPU time, median of 5 (shuffled): tracing off {med['now']:.3f} s, before the trace hook "
              f"{med['before']:.3f} s: ratio {med['now'] / med['before']:.3f}; the same code twice (noise): ratio "
              f"{med['before, a second copy'] / med['before']:.3f}")
    else:
        print("5. counter before the trace hook: skipped (no git checkout)")


def flydsl() -> None:
    w = Workload.build(heads=64, N=65536, d=128, dtype="bf16", M=10**6)
    published = {"hqb": (2.36, 8.593e9), "qhb": (93.62, 5.611e8)}
    for order, label in (("hqb", "head fastest"), ("qhb", "q block fastest")):
        r = replay(w, "mi355x", order=order, partition=0)
        misses = r.miss_lines * r.partitions
        print(f"2. FlyDSL #919, {label} ({order}): hit rate {100 * r.hit_rate:.2f}%, misses {misses:.4g} lines "
              f"({r.seconds:.0f} s)")
    print(f"   published: baseline {published['hqb'][0]}% / {published['hqb'][1]:.4g}, reordered "
          f"{published['qhb'][0]}% / {published['qhb'][1]:.4g} (which order each used is our reading)")


def sections() -> None:
    w = Workload.build(heads=16, N=16384, d=128, dtype="bf16", M=10**6)
    rule = fa3_section_heads(w.Nkv, w.d, w.bytes_per_word, w.heads)
    for s in (1, 2, 4, 8, 16):
        r = replay(w, "h100", order="sections", section_heads=s)
        mark = "  <- FA-3 rule" if s == rule else ""
        print(f"3. FA-3 sections of {s:2d} heads (K/V {s * 8} MiB, L2 50 MiB): DRAM / compulsory "
              f"{r.dram_bytes / r.compulsory_bytes:.3f}, hit rate {r.hit_rate:.4f}{mark}")
    r = replay(w, "h100", order="sections", section_heads=rule, sms=128)
    print(f"3. FA-3 sections of {rule} heads on 128 SMs (waves align with sections: no wave mixes two): DRAM / "
          f"compulsory {r.dram_bytes / r.compulsory_bytes:.3f}")


def sawtooth() -> None:
    for heads, N in ((1, 131072), (2, 65536)):
        w = Workload.build(heads=heads, N=N, d=128, dtype="bf16", M=10**6)
        out = {}
        for saw in (False, True):
            r = replay(w, "h100", sawtooth=saw)
            out[saw] = r.dram_read_bytes - r.compulsory_read_bytes
        cut = 1 - out[True] / out[False]
        print(f"4. Sawtooth, H100, {heads} head(s), N = {N}: non-compulsory DRAM reads {out[False] / 2**20:.0f} MiB "
              f"forward, {out[True] / 2**20:.0f} MiB alternating: cut {100 * cut:.1f}% (paper: >= 50%)")


def _ends(fn, metric):  # noqa: ANN001, ANN202
    """(lockstep, drift-max) values of ``metric`` over ``fn(sync)``'s result."""
    return tuple(metric(fn(sync)) for sync in ("lockstep", "drift"))


def _row(source: str, quantity: str, published: str, interval: tuple[float, float], ends: tuple[float, float],
         command: str) -> dict:
    lo, hi = min(ends), max(ends)
    return {"source": source, "quantity": quantity, "published": published, "published_interval": list(interval),
            "lockstep": ends[0], "drift_max": ends[1], "inside": lo <= interval[1] and interval[0] <= hi,
            "command": command}


FIG2_SOURCE = "FlashAttention Fig. 2 (A100; b = 64, H = 16, N = 1024, d = 64, fp16)"


def _fig2() -> list[dict]:
    w = Workload.build(batch=64, heads=16, N=1024, d=64, dtype="fp16", gpu="a100")
    fig2 = _ends(lambda sync: (replay(w, "a100", sync=sync), replay_backward(w, "a100", sync=sync)),
                 lambda fb: (fb[0].dram_bytes + fb[1].dram_bytes) / 1e9)
    return [_row(FIG2_SOURCE,
                 "DRAM GB, forward + backward (replay: FA-2, 128 x 128)", "4.4 GB (FA-1)", (4.4, 4.4), fig2,
                 'w = Workload.build(batch=64, heads=16, N=1024, d=64, dtype="fp16"); replay(w, "a100", '
                 'sync="drift").dram_bytes + replay_backward(w, "a100", sync="drift").dram_bytes')]


def _fig2_fa1() -> list[dict]:
    """FA Fig. 2 replayed with FA-1's own schedule (algorithms/l2_flash1.py), at both ends of the bracket."""
    w = Workload.build(batch=64, heads=16, N=1024, d=64, dtype="fp16", gpu="a100")
    B_r, B_c = fa1_blocks(w)
    res = {s: (replay_flash1(w, "a100", sync=s), replay_flash1_backward(w, "a100", sync=s))
           for s in ("lockstep", "drift")}
    ends = tuple((f.dram_bytes + b.dram_bytes) / 1e9 for f, b in res.values())
    f, b = res["lockstep"]
    row = _row(FIG2_SOURCE, f"DRAM GB, forward + backward (replay: FA-1's own schedule, {B_r} x {B_c})",
               "4.4 GB (FA-1)", (4.4, 4.4), ends,
               'w = Workload.build(batch=64, heads=16, N=1024, d=64, dtype="fp16", gpu="a100"); '
               'replay_flash1(w, "a100", sync="drift").dram_bytes + replay_flash1_backward(w, "a100", '
               'sync="drift").dram_bytes')
    row["requested_GB"] = (f.requested_bytes + b.requested_bytes) / 1e9
    row["parts_GB"] = {s: {"forward": fb[0].dram_bytes / 1e9, "backward": fb[1].dram_bytes / 1e9}
                       for s, fb in res.items()}
    # what decides the verdict: the L2's capacity against the forward's 108 resident programs (lockstep)
    row["lockstep_GB_by_l2_MiB"] = {str(mib): (replay_flash1(w, "a100", l2_bytes=mib * 2**20).dram_bytes
                                               + replay_flash1_backward(w, "a100", l2_bytes=mib * 2**20).dram_bytes)
                                    / 1e9 for mib in (40, 32, 20)}
    return [row]


_FLYDSL = {"hqb": ("baseline launch (hqb)", 2.36, 8.593e9), "qhb": ("reordered launch (qhb)", 93.62, 5.611e8)}


def _flydsl(order: str) -> list[dict]:
    label, hit, miss = _FLYDSL[order]
    wf = Workload.build(heads=64, N=65536, d=128, dtype="bf16", M=10**6)
    res = {sync: replay(wf, "mi355x", order=order, partition=0, sync=sync) for sync in ("lockstep", "drift")}
    cmd = (f'replay(Workload.build(heads=64, N=65536, d=128, dtype="bf16"), "mi355x", order="{order}", '
           f'partition=0, sync="drift"): misses x 8')
    src = f"ROCm/FlyDSL PR #919 (MI355X; S = 65536, H = 64, D = 128, bf16), {label}"
    return [_row(src, "L2 hit rate %", f"{hit}%", (hit, hit),
                 tuple(100 * res[s].hit_rate for s in ("lockstep", "drift")), cmd),
            _row(src, "L2 misses (128-byte lines)", f"{miss:.4g}", (miss, miss),
                 tuple(float(res[s].miss_lines * res[s].partitions) for s in ("lockstep", "drift")), cmd)]


def _sections() -> list[dict]:
    ws = Workload.build(heads=16, N=16384, d=128, dtype="bf16", M=10**6)
    rule = fa3_section_heads(ws.Nkv, ws.d, ws.bytes_per_word, ws.heads)
    sec = _ends(lambda sync: replay(ws, "h100", order="sections", section_heads=rule, sync=sync),
                lambda r: r.dram_bytes / r.compulsory_bytes)
    return [_row(f"FA-3 sections (H100; 16 heads, N = 16384, d = 128, bf16), the rule's {rule} heads",
                 "DRAM / compulsory", "sections sized to fit a 32 MB budget (K/V read once: 1.0)", (1.0, 1.0), sec,
                 f'replay(Workload.build(heads=16, N=16384, d=128, dtype="bf16"), "h100", order="sections", '
                 f'section_heads={rule}, sync="drift")')]


def _sawtooth() -> list[dict]:
    wt = Workload.build(heads=1, N=131072, d=128, dtype="bf16", M=10**6)

    def cut(sync: str) -> float:
        nc = {}
        for saw in (False, True):
            r = replay(wt, "h100", sawtooth=saw, sync=sync)
            nc[saw] = r.dram_read_bytes - r.compulsory_read_bytes
        return 100 * (1 - nc[True] / nc[False]) if nc[False] else 0.0

    return [_row("Sawtooth (arXiv 2601.16032; H100, 1 head, N = 131072, d = 128 bf16)",
                 "non-compulsory misses cut by alternating traversal, %", ">= 50%", (50.0, 100.0),
                 (cut("lockstep"), cut("drift")), 'replay(Workload.build(heads=1, N=131072, d=128, dtype="bf16"), '
                 '"h100", sawtooth=True or False, sync="drift")')]


def _job(name: str) -> list[dict]:
    rows = {"fig2": _fig2, "fig2-fa1": _fig2_fa1, "sections": _sections, "sawtooth": _sawtooth}[name]() \
        if not name.startswith("flydsl") \
        else _flydsl(name.split("-")[1])
    for r in rows:
        print(f"6. {r['source']}: {r['quantity']}: published {r['published']}; bracket [lockstep {r['lockstep']:.4g}, "
              f"drift-max {r['drift_max']:.4g}]: {'inside' if r['inside'] else 'outside'}", flush=True)
    return rows


def bracket(skip_flydsl: bool = False, workers: int = 1) -> list[dict]:
    """Every published row at both ends of the bracket (6. in the module docstring); ``workers`` processes."""
    jobs = ["fig2", "fig2-fa1", "sections", "sawtooth"] + ([] if skip_flydsl else ["flydsl-hqb", "flydsl-qhb"])
    if workers == 1:
        return [r for j in jobs for r in _job(j)]
    from concurrent.futures import ProcessPoolExecutor

    longest_first = sorted(jobs, key=lambda j: not j.startswith(("flydsl", "saw")))
    with ProcessPoolExecutor(workers) as ex:
        done = dict(zip(longest_first, ex.map(_job, longest_first), strict=True))
    return [r for j in jobs for r in done[j]]


def drift_sweep(cases: int = 150, seed: int = 1) -> None:
    import random

    rng = random.Random(seed)
    below, causal_below, worst = 0, 0, 0.0
    for _ in range(cases):
        H, N, causal = rng.choice([1, 2, 4]), rng.choice([256, 512]), rng.random() < 0.5
        sms, l2 = rng.randint(1, 8), rng.choice([8, 16, 32, 64, 128]) * 1024
        order, skew = rng.choice(["qhb", "hqb"]), rng.choice([0.25, 0.5, 1.0])
        w = Workload.build(heads=H, N=N, d=64, dtype="fp16", causal=causal, M=10**6)
        kw = dict(B_r=32, B_c=32, sms=sms, l2_bytes=l2, order=order)
        a, b = replay(w, "h100", **kw), replay(w, "h100", sync="drift", skew=skew, **kw)
        if b.dram_bytes < a.dram_bytes:
            below += 1
            causal_below += causal
            worst = max(worst, 1 - b.dram_bytes / a.dram_bytes)
    print(f"7. drift below lockstep on {below} of {cases} random small cases ({causal_below} causal), by up to "
          f"{100 * worst:.1f}%")


def write_report_data(path: str | None = None, only_fa1: bool = False) -> None:
    """Write the bracket rows to reports/dram.json; ``only_fa1``: compute only FA Fig. 2's FA-1 row and put it
    into the existing file after the FA-2 row of the same figure (replacing an older FA-1 row), the rest kept."""
    import json
    from pathlib import Path

    from attnio.reports.store import write_atomic

    t0 = time.perf_counter()
    out = Path(path) if path else Path(__file__).resolve().parents[1] / "reports" / "dram.json"
    if only_fa1:
        old = json.loads(out.read_text())
        new = _job("fig2-fa1")
        rows = [r for r in old["rows"] if "FA-1's own" not in r["quantity"]]
        at = next((k + 1 for k, r in enumerate(rows) if r["source"] == FIG2_SOURCE), 0)
        rows[at:at] = new
        meta = dict(old["meta"], fa1_row={"command": "python benchmarks/bench_l2.py --write-report-data --only-fa1",
                                          "seconds": round(time.perf_counter() - t0)})
        write_atomic(out, json.dumps({"meta": meta, "rows": rows}, indent=1, sort_keys=True, ensure_ascii=False)
                     + "\n")
        print(f"wrote {out} (the FA-1 row only)")
        return
    rows = bracket(workers=3)
    meta = {"command": "python benchmarks/bench_l2.py --write-report-data", "skew": 1.0,
            "seconds": round(time.perf_counter() - t0)}
    write_atomic(out, json.dumps({"meta": meta, "rows": rows}, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    if "--drift-sweep" in sys.argv:
        drift_sweep()
        sys.exit(0)
    if "--write-report-data" in sys.argv:
        write_report_data(only_fa1="--only-fa1" in sys.argv)
        sys.exit(0)
    if "--only-trace" in sys.argv:
        trace()
        sys.exit(0)
    speed()
    fa1_fig2()
    sections()
    sawtooth()
    if "--skip-flydsl" not in sys.argv:
        flydsl()
    bracket(skip_flydsl="--skip-flydsl" in sys.argv)
    trace()
