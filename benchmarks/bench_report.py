"""Benchmark of ``attnio report`` with no arguments (the default sweep + the z3 verification) against its
budget: 180 s on 2 cores. Prints ratios from one run; never an assertion.

    .venv/bin/python benchmarks/bench_report.py [--workers 2] [--twice]

``--twice`` runs it a second time into another folder and says whether every file is byte-identical.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BUDGET_S = 180.0


def _run(out: Path, workers: int) -> float:
    t0 = time.perf_counter()
    cmd = [sys.executable, "-c", "import sys; from attnio.cli import main; sys.exit(main())", "report", "--out", str(out), "--workers", str(workers), "--no-progress"]
    subprocess.run(cmd, check=True, cwd=Path(__file__).resolve().parents[1])
    return time.perf_counter() - t0


def _files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and "_work" not in p.parts}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--twice", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "a"
        wall = _run(out, a.workers)
        meta = json.loads((out / "_work" / "report-meta.json").read_text())
        claims = meta.get("claim_seconds") or {}
        cpu_claims = sum(v or 0 for v in claims.values())
        slow = sorted(claims.items(), key=lambda kv: -(kv[1] or 0))[:5]
        print(f"attnio report (default sweep + verification), {a.workers} workers, {os.cpu_count()} CPUs here")
        print(f"  wall {wall:.1f} s = {wall / BUDGET_S:.2f} × the {BUDGET_S:.0f} s budget")
        print(f"  sweep + verification {meta['sweep_seconds']:.1f} s ({meta['rows']} rows, {len(claims)} claims); render {meta['render_seconds']:.1f} s")
        print(f"  z3 time summed over claims {cpu_claims:.1f} s = {cpu_claims / max(wall, 1e-9):.2f} × the wall time")
        for k, v in slow:
            print(f"    {v:7.2f} s  {k}")
        if a.twice:
            out2 = Path(tmp) / "b"
            wall2 = _run(out2, a.workers)
            same = _files(out) == _files(out2)
            print(f"  second run {wall2:.1f} s; files byte-identical: {same}")


if __name__ == "__main__":
    main()
