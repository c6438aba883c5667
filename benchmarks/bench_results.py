"""A large results store into a DataFrame: ``Store.frame()`` (one SQL query over the store's
frame_columns table: plain columns, extracted by SQLite's json_extract and the best bound picked by json_each
once, when each row was appended) against the JSON path (``Store.rows()``: read every row and decode its JSON
into a dict, as a reader of the store did before), on one synthetic store, in one run. Prints the store's build
time (appends, frame_columns included), both times and their ratio; the target is ``Store.frame()`` ≤ 5 s at
10⁶ rows.

    .venv/bin/python benchmarks/bench_results.py            # 10⁶ rows (about a GB of temporary disk)
    .venv/bin/python benchmarks/bench_results.py --rows 100000

The store is built in a temporary folder (removed at the end) from real rows: a count-only sweep of a small grid
(exact algorithms on both sides of M = d², and poly), repeated under new seeds, so each synthetic row has the
size and the fields of a real one (its bounds and ratios included), written by ``Store.append`` as canonical
JSON. The frame is checked against the decoded rows (same keys, same io) after the timing.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from attnio.reports.grid import grid_from_dict
from attnio.reports.store import Store
from attnio.reports.sweep import run_sweep

TEMPLATE_GRID = {
    "numeric_max_N": 0,
    "blocks": [
        {"algorithms": ["flash2", "standard", "square_tiling", "auto"], "N": [256, 4096], "d": [16, 64], "M": [1024, 8192, 65536]},
        {"algorithms": ["poly"], "N": [1024, 4096], "d": [16], "M": [1024, 8192], "eps": [0.1], "B": [0.25, 0.5]},
    ],
}


def templates() -> list[dict]:
    with Store(":memory:") as s:
        run_sweep(grid_from_dict(TEMPLATE_GRID), s, workers=0, progress=False)
        return s.rows()


def build(path: Path, n: int, batch: int = 50_000) -> None:
    base = templates()
    with Store(path) as s:
        done = 0
        while done < n:
            rows = []
            for i in range(done, min(n, done + batch)):
                t = base[i % len(base)]
                seed = i // len(base)
                rows.append({**t, "seed": seed, "key": t["key"].replace("|seed=0|", f"|seed={seed}|")})
            done += s.append(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.sqlite"
        t0 = time.perf_counter()
        build(path, a.rows)
        print(f"built {a.rows:,} rows in {time.perf_counter() - t0:.1f} s ({path.stat().st_size / 2**20:.0f} MiB)")
        with Store(path) as s:
            from attnio.reports import frames

            frames._lows()  # build the bounds catalog once, outside the timings (pandas is imported already)
            t0, c0 = time.perf_counter(), time.process_time()
            frame = s.frame()
            t_frame, c_frame = time.perf_counter() - t0, time.process_time() - c0
            n_cols, keys, io = len(frame.columns), frame["key"].tolist(), frame["io"].tolist()
            del frame
            t0, c0 = time.perf_counter(), time.process_time()
            rows = s.rows()
            t_json, c_json = time.perf_counter() - t0, time.process_time() - c0
        assert len(keys) == len(rows) == a.rows
        assert keys == [r["key"] for r in rows] and io == [r["io"] for r in rows]
        del rows
        print(f"Store.frame():  {t_frame:7.2f} s wall, {c_frame:7.2f} s CPU (all threads)  ({n_cols} typed columns, derived ones included; {os.cpu_count()} CPUs)")
        print(f"Store.rows():   {t_json:7.2f} s wall, {c_json:7.2f} s CPU  (decode every row's JSON into a dict; no frame yet)")
        print(f"ratio rows/frame: {t_json / t_frame:.2f} wall, {c_json / c_frame:.2f} CPU; "
              f"target Store.frame() ≤ 5 s at 10⁶ rows: {'met' if t_frame <= 5 else 'not met'} on this machine ({os.getloadavg()[0]:.1f} load average)")


if __name__ == "__main__":
    main()
