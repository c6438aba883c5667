"""The report's "What reaches DRAM" section: published L2 and DRAM measurements beside the L2 replay's bracket
[lockstep, drift-max], the per-preset DRAM and time floors of one shape, and requested vs sector vs DRAM bytes per
tensor at one small shape (docs/dram.md).

:func:`section` is the report's section function (one entry in ``reports/report.py``'s ``SECTIONS``). The
bracket's replays take minutes, so they are not run here: it reads the committed ``reports/dram.json``, written
atomically by ``python benchmarks/bench_l2.py --write-report-data``; without it the section says so in one line.
The floors and the small per-tensor table are computed live (:mod:`attnio.reports.figures`, ``dram_*``; well
under 2 s).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from attnio.reports import committed, figures
from attnio.reports.render import Section

TABLE = Path(__file__).with_name("dram.json")


def _num(x: float) -> str:
    return f"{x:.4g}"


def _fa1_note(r: dict[str, Any]) -> str:
    """The FA-1 row's sentence: its requested bytes, where the published number falls, how far apart the bracket's
    ends are, and how the lockstep end moves with the L2's capacity (docs/dram.md#flashattention-1s-own-schedule)."""
    verdict = "inside" if r["inside"] else "outside"
    by = r.get("lockstep_GB_by_l2_MiB", {})
    sweep = ", ".join(f"{mib} MiB: {_num(gb)} GB" for mib, gb in sorted(by.items(), key=lambda x: -int(x[0])))
    return (f"{r['source']}, {r['quantity']}: FA-1's schedule requests {_num(r['requested_GB'])} GB (attnio's exact "
            f"flash1 + flash1-bwd count); the replay predicts [{_num(r['lockstep'])}, {_num(r['drift_max'])}] GB, so "
            f"the published {r['published']} is {verdict} the bracket, whose ends differ by "
            f"{100 * abs(r['lockstep'] - r['drift_max']) / r['lockstep']:.1f}%"
            + (f"; the lockstep end by L2 size: {sweep}." if sweep else "."))


def section(ctx: Any = None, path: Path = TABLE) -> Section:
    s = Section("What reaches DRAM")
    s.p("attnio counts requested bytes; a profiler reports what reaches DRAM after the L2 absorbed the re-reads of "
        "co-resident thread blocks, in 32-byte sectors (docs/dram.md). The L2 replay (algorithms/l2.py: one "
        "fully associative sectored LRU per L2 partition, resident blocks interleaved step by step) predicts it at "
        "two ends: **lockstep**, resident blocks advance together, so blocks sharing a K/V tile load it in the same "
        "round (the most sharing they can have); **drift-max**, the first wave's starts spread evenly over a whole "
        "block's length and a freed slot starts its next block at once, so sharers read a tile at evenly spaced "
        "times and reuse depends on the L2 holding it across that distance (docs/dram.md#lockstep-and-drift).")
    data = committed.load(path)
    if data is None:
        s.p("No bracket table (reports/dram.json): run `python benchmarks/bench_l2.py --write-report-data`.")
    else:
        rows = data["rows"]
        s.table(["source", "quantity", "published", "lockstep", "drift-max", "published inside the bracket"],
                [[r["source"], r["quantity"], r["published"], _num(r["lockstep"]), _num(r["drift_max"]),
                  "yes" if r["inside"] else "no"] for r in rows])
        inside = sum(r["inside"] for r in rows)
        s.p(f"{inside} of {len(rows)} published numbers fall inside [lockstep, drift-max] (from "
            f"`{data['meta'].get('command')}`; each row's replay call is in reports/dram.json). The bracket's ends "
            "are two named schedules, not bounds: on small random cases drift can read less than lockstep "
            "(docs/dram.md#lockstep-and-drift).")
        for r in rows:
            if "requested_GB" in r:
                s.p(_fa1_note(r))
    fl = figures.dram_floor_rows()
    s.p("Floors of one forward (32 heads, N = 32768, d = 128, bf16, causal) per L2 preset (bounds/dram.py "
        "`floors`): the largest applicable two-level lower bound at M = the whole L2, and max(DRAM floor ÷ HBM "
        "bandwidth, FLOPs ÷ dense bf16 peak).")
    s.table(["preset", "M (words)", "bound", "DRAM floor bytes", "FLOPs", "time floor µs"],
            [[r["preset"], r["M_words"], r["bound"], r["dram_bytes"], r["flops"], f"{r['time_floor_us']:.1f}"]
             for r in fl])
    lv = figures.dram_levels_rows()
    s.p("Requested vs sector vs DRAM bytes, attnio's flash2 forward, 4 heads, N = 1024, d = 40 fp16 (80-byte rows: "
        "not whole sectors), 128 × 128 tiles, H100 preset (`attnio run flash2 … --l2 h100 [--l2-sync drift]`).")
    s.table(["tensor", "requested B", "sector B", "requested ÷ sector", "DRAM B, lockstep", "DRAM B, drift-max"],
            [[r["tensor"], r["requested"], r["sector"], f"{r['efficiency']:.3f}", r["dram_lockstep"], r["dram_drift"]]
             for r in lv])
    if all(r["dram_lockstep"] == r["dram_drift"] for r in lv):
        s.p("The two ends agree here: the 50 MiB L2 holds every tile of this shape, so every re-read hits however "
            "far apart the sharers run; DRAM is then the sectors of each tile once.")
    return s
