"""The pebbling benchmark through the sweep machinery: cases in, rows in the resumable store, a JSON table out.

Each :class:`attnio.solver.pebble.benchmark.Case` is a sweep row of kind ``"pebble"`` (reports/sweep.py runs it
with :func:`attnio.solver.pebble.benchmark.run_case`), so local workers, a Dask cluster (``scheduler``) and the
store's resume work unchanged: a bigger machine extends the table by passing more cases.

>>> from attnio.reports.store import Store, write_atomic
>>> from attnio.solver.pebble.benchmark import Case
>>> s = Store(":memory:")
>>> [r["opt"] for r in run_cases([Case(2, 1, 8, "one-shot", time_limit_s=5)], s, workers=0)]
[8]
>>> len(run_cases([Case(2, 1, 8, "one-shot", time_limit_s=5)], s, workers=0))  # resumed: nothing re-run
1
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attnio.reports.grid import Grid
from attnio.reports.store import Store, write_atomic
from attnio.reports.sweep import run_sweep


def run_cases(cases, store: Store, *, workers: int | None = None, scheduler: str | None = None,
              progress: bool = False) -> list[dict[str, Any]]:
    """Run the cases not yet in ``store``; return every case's row, in the order given."""
    run_sweep(Grid(configs=tuple(cases)), store, workers=workers, scheduler=scheduler, batch_size=1, progress=progress)
    by_key = {r["key"]: r for r in store.rows()}
    return [by_key[c.key()] for c in cases if c.key() in by_key]


def write_json(rows: list[dict[str, Any]], path: str | Path, meta: dict[str, Any]) -> None:
    """Write ``{"meta": …, "rows": …}`` atomically (:func:`attnio.reports.store.write_atomic`)."""
    write_atomic(path, json.dumps({"meta": meta, "rows": rows}, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
