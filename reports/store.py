"""The results store: one SQLite file (standard library), one table, one row per configuration.

- ``key`` is UNIQUE (:meth:`reports.grid.Config.key`): appends are ``INSERT OR IGNORE`` inside one
  transaction, so a re-run skips finished rows and two sweeps writing one store never duplicate a row.
- A batch of rows is committed atomically (SQLite's journal): a sweep killed with SIGKILL loses at most the
  batch in flight, never half a row; the re-run redoes it.
- WAL mode and a busy timeout let several processes append at once.

The row itself is stored as canonical JSON (sorted keys) next to the key.

>>> s = Store(":memory:")
>>> s.append([{"key": "a", "io": 1}, {"key": "a", "io": 2}, {"key": "b", "io": 3}])
2
>>> [r["io"] for r in s.rows()]
[1, 3]
"""

from __future__ import annotations

import json
import os
import sqlite3
import tempfile
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT NOT NULL UNIQUE,
    row TEXT NOT NULL
)
"""


class Store:
    def __init__(self, path: str | Path, timeout_s: float = 60.0) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
        self._retry(lambda: self._db.execute("PRAGMA journal_mode=WAL"))
        self._db.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
        self._db.execute("PRAGMA synchronous=FULL")
        self._retry(lambda: self._db.execute(SCHEMA))

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def keys(self) -> set[str]:
        return {k for (k,) in self._db.execute("SELECT key FROM results")}

    def append(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert rows whose key is new, all in one transaction. Returns how many were new."""
        data = [(r["key"], json.dumps(r, sort_keys=True, allow_nan=True)) for r in rows]

        def tx() -> int:
            cur = self._db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                n = 0
                for k, js in data:
                    cur.execute("INSERT OR IGNORE INTO results(key, row) VALUES (?, ?)", (k, js))
                    n += cur.rowcount
                cur.execute("COMMIT")
                return n
            except BaseException:
                cur.execute("ROLLBACK")
                raise

        return self._retry(tx)

    def rows(self) -> list[dict[str, Any]]:
        """Every row, sorted by key (a deterministic order)."""
        return [json.loads(js) for (_, js) in self._db.execute("SELECT key, row FROM results ORDER BY key")]

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def _retry(self, fn: Any, attempts: int = 50) -> Any:
        for i in range(attempts):
            try:
                return fn()
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) and "busy" not in str(e) or i == attempts - 1:
                    raise
                time.sleep(0.05 * (i + 1))
        raise AssertionError("unreachable")


def write_atomic(path: str | Path, text: str) -> None:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=p.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
