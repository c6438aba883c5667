"""The results store: one SQLite file (standard library), one table, one row per configuration.

- ``key`` is UNIQUE (:meth:`reports.grid.Config.key`): appends are ``INSERT OR IGNORE`` inside one
  transaction, so a re-run skips finished rows and two sweeps writing one store never duplicate a row.
- A batch of rows is committed atomically (SQLite's journal): a sweep killed with SIGKILL loses at most the
  batch in flight, never half a row; the re-run redoes it.
- WAL mode and a busy timeout let several processes append at once.

The row itself is stored as canonical JSON (sorted keys) next to the key. Schema version 2 (``PRAGMA
user_version``) adds side tables: ``frame_columns``, one row per stored row, written in the same transaction,
holding the fields :func:`attnio.reports.frames.sweep_frame` reads (SQLite's own ``json_extract`` of the row, so
exactly what the JSON holds) and the row's best proved lower bound and its value, picked once when the row is
written, packed in one blob (:func:`_fill`); ``frame_strings``, the texts among them, each stored once. A
version-1 store (one results table) gets the side tables filled from its rows on its first open, in one
transaction: a crash leaves it at version 1, never half-migrated.

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
import struct
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from attnio.core.errors import InvalidParameter
from attnio.reports.sweep_columns import TAG_INT, TAG_NULL, TAG_REAL, TAG_TEXT, frame_fields

SCHEMA = """
CREATE TABLE IF NOT EXISTS results (
    key TEXT NOT NULL UNIQUE,
    row TEXT NOT NULL
)
"""
VERSION = 2
TABLES = ["frame_columns", "frame_strings", "results"]


def _lows() -> list[str]:
    from attnio.reports import sources

    return sorted(b.id for b in sources.proved_lower_bounds(sources.all_bounds()))


_SQL: dict[str, Any] = {}


def _sql() -> dict[str, Any]:
    """The side tables' schema and the statement that reads a row's fields (built once: it names the proved
    bounds). The fields are SQLite's own ``json_extract`` of the row, and the best bound is picked by
    ``json_each`` as the frame always picked it, so the packed values are exactly what the JSON holds."""
    if not _SQL:
        fields = frame_fields()
        ids = ", ".join("'" + i.replace("'", "''") + "'" for i in _lows())  # SQL string literals
        best = (f"(SELECT b.key FROM json_each(row, '$.bounds') AS b WHERE b.key IN ({ids}) "
                "AND b.type IN ('integer', 'real') AND b.value > 0 ORDER BY b.value DESC, b.key DESC LIMIT 1)")
        ext = ", ".join(f"json_extract(row, '$.{f}')" for _, f in fields)
        _SQL["extract"] = (f"SELECT key, {ext}, best, json_extract(row, '$.bounds.\"' || best || '\"') "
                           f"FROM (SELECT key, row, {best} AS best FROM {{src}} WHERE json_valid(row) LIMIT -1)")
        _SQL["invalid"] = "SELECT key FROM {src} WHERE NOT json_valid(row)"
        _SQL["schema"] = ["CREATE TABLE IF NOT EXISTS frame_columns (key TEXT NOT NULL PRIMARY KEY, packed BLOB) WITHOUT ROWID",
                          "CREATE TABLE IF NOT EXISTS frame_strings (id INTEGER PRIMARY KEY, text TEXT NOT NULL UNIQUE)"]
        _SQL["n"] = len(fields) + 2
    return _SQL


def _fill(cur: sqlite3.Cursor, src: str, params: tuple[Any, ...] = ()) -> None:
    """frame_columns rows for the rows of ``src`` (a table or a one-row SELECT of key and row): each row's fields
    packed (a row SQLite cannot read as JSON, NaN say, gets NULL, and a frame of the store says so)."""
    sql = _sql()
    n = sql["n"]
    ids: dict[str, int] = {}

    def text_id(t: str) -> int:
        if t not in ids:
            cur.execute("INSERT OR IGNORE INTO frame_strings(text) VALUES (?)", (t,))
            ids[t] = cur.execute("SELECT id FROM frame_strings WHERE text = ?", (t,)).fetchone()[0]
        return ids[t]

    def pack(vals: list[Any]) -> bytes:
        tags, fmt, pay = [], "", []
        for v in vals:
            tag = TAG_NULL if v is None else TAG_INT if isinstance(v, int) else TAG_REAL if isinstance(v, float) else TAG_TEXT
            tags.append(tag)
            fmt += "d" if tag == TAG_REAL else "q"
            pay.append(0 if v is None else text_id(v) if tag == TAG_TEXT else v)
        return struct.pack(f"<{n}B{fmt}", *tags, *pay)

    db = cur.connection
    out = []
    for key, *vals in db.execute(sql["extract"].format(src=src), params):  # its own cursor: cur writes meanwhile
        out.append((key, pack(vals)))
        if len(out) == 10_000:
            cur.executemany("INSERT OR IGNORE INTO frame_columns(key, packed) VALUES (?, ?)", out)
            out = []
    out += [(key, None) for (key,) in db.execute(sql["invalid"].format(src=src), params)]
    cur.executemany("INSERT OR IGNORE INTO frame_columns(key, packed) VALUES (?, ?)", out)


_HEADER = b"SQLite format 3\x00"


class InvalidStore(InvalidParameter):
    """The path given as a store is not an attnio results store (or cannot be opened as one). The file is
    left as it was: nothing is written to it before it has passed :meth:`Store._check`."""

    def __init__(self, path: str, reason: str) -> None:
        self.name, self.value = "store", path
        self.valid = "an attnio results store (an SQLite file with one results(key, row) table) or a new path"
        ValueError.__init__(self, f"{path} is not a valid attnio store ({reason}); it was left unchanged")


class Store:
    def __init__(self, path: str | Path, timeout_s: float = 60.0) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            self._check_path()
        try:
            self._db = sqlite3.connect(self.path, timeout=timeout_s, isolation_level=None)
        except sqlite3.Error as e:
            raise InvalidStore(self.path, f"{type(e).__name__}: {e}") from None
        try:
            self._db.execute(f"PRAGMA busy_timeout={int(timeout_s * 1000)}")
            if self.path != ":memory:":
                self._check()  # reads only: a file that is not a store is never written
            self._retry(lambda: self._db.execute("PRAGMA journal_mode=WAL"))
            self._db.execute("PRAGMA synchronous=FULL")
            self._retry(self._create_or_migrate)
        except sqlite3.DatabaseError as e:
            self._db.close()
            raise InvalidStore(self.path, f"{type(e).__name__}: {e}") from None
        except BaseException:
            self._db.close()
            raise

    def _check_path(self) -> None:
        p = Path(self.path)
        if p.exists() and not p.is_file():
            raise InvalidStore(self.path, "not a regular file")
        if p.is_file():
            try:
                with open(p, "rb") as f:
                    head = f.read(len(_HEADER))
            except OSError as e:
                raise InvalidStore(self.path, f"unreadable: {e.strerror or e}") from None
            if head and head != _HEADER[: len(head)] or 0 < len(head) < len(_HEADER):
                raise InvalidStore(self.path, "not an SQLite database file")
        else:
            try:
                p.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise InvalidStore(self.path, f"its folder cannot be created: {e.strerror or e}") from None

    def _check(self) -> None:
        """An existing file must be an intact SQLite database that is empty or holds exactly attnio's table."""
        tables = self._retry(lambda: self._db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall())
        if not tables:
            return  # a new (or empty) database: the table is created next
        names = sorted(n for n, _ in tables)
        if names not in (["results"], TABLES):
            raise InvalidStore(self.path, "its tables are " + ", ".join(names) + ", not attnio's results table (and its frame_columns)")
        cols = [r[1] for r in self._db.execute("PRAGMA table_info(results)")]
        if cols != ["key", "row"]:
            raise InvalidStore(self.path, f"its results table has columns {cols}, not [key, row]")
        problems = [r[0] for r in self._retry(lambda: self._db.execute("PRAGMA quick_check(1)").fetchall())]
        if problems != ["ok"]:
            raise InvalidStore(self.path, "the database is damaged: " + " ".join(problems[0].split())[:200])

    def _create_or_migrate(self) -> None:
        """Create the tables of a new store, or bring a version-1 store to version 2 (fill frame_columns from its
        rows), in one IMMEDIATE transaction: a second process opening it at once waits, then finds it done."""
        if self._db.execute("PRAGMA user_version").fetchone()[0] == VERSION:
            return
        sql = _sql()
        cur = self._db.cursor()
        cur.execute("BEGIN IMMEDIATE")  # outside the try: a busy store is retried by _retry, nothing to roll back
        try:
            if cur.execute("PRAGMA user_version").fetchone()[0] != VERSION:
                cur.execute(SCHEMA)
                for stmt in sql["schema"]:
                    cur.execute(stmt)
                _fill(cur, "results")
                cur.execute(f"PRAGMA user_version = {VERSION}")
            cur.execute("COMMIT")
        except BaseException:
            cur.execute("ROLLBACK")
            raise

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def keys(self) -> set[str]:
        return {k for (k,) in self._db.execute("SELECT key FROM results")}

    def append(self, rows: Iterable[dict[str, Any]]) -> int:
        """Insert rows whose key is new, all in one transaction (each with its frame_columns row). Returns how
        many were new."""
        data = [(r["key"], json.dumps(r, sort_keys=True, allow_nan=True)) for r in rows]

        def tx() -> int:
            cur = self._db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                # a new row's rowid is one past the largest (SQLite's rule below 2⁶³ rows): the rows past this
                # one are the ones this transaction added, whose fields are packed next, in the same transaction
                last = cur.execute("SELECT ifnull(max(rowid), 0) FROM results").fetchone()[0]
                n = 0
                for k, js in data:
                    cur.execute("INSERT OR IGNORE INTO results(key, row) VALUES (?, ?)", (k, js))
                    n += cur.rowcount
                if n:
                    _fill(cur, "(SELECT key, row FROM results WHERE rowid > ?)", (last,))
                cur.execute("COMMIT")
                return n
            except BaseException:
                cur.execute("ROLLBACK")
                raise

        return self._retry(tx)

    def fill_missing(self) -> int:
        """Pack the rows that have no frame_columns row (appended by a version-1 writer still running when the
        store was migrated), in one transaction; how many. A store whose tables are level is not written."""
        missing = "(SELECT key, row FROM results WHERE key NOT IN (SELECT key FROM frame_columns))"
        if not self._db.execute(f"SELECT COUNT(*) FROM {missing}").fetchone()[0]:
            return 0

        def tx() -> int:
            cur = self._db.cursor()
            cur.execute("BEGIN IMMEDIATE")
            try:
                before = cur.execute("SELECT COUNT(*) FROM frame_columns").fetchone()[0]
                _fill(cur, missing)
                n = cur.execute("SELECT COUNT(*) FROM frame_columns").fetchone()[0] - before
                cur.execute("COMMIT")
                return int(n)
            except BaseException:
                cur.execute("ROLLBACK")
                raise

        return self._retry(tx)

    def rows(self) -> list[dict[str, Any]]:
        """Every row, sorted by key (a deterministic order)."""
        return [json.loads(js) for (_, js) in self._db.execute("SELECT key, row FROM results ORDER BY key")]

    def count(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM results").fetchone()[0])

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """Every row a read-only SQL query over the ``results`` table returns (reports.frames reads the rows'
        fields with SQLite's JSON functions this way)."""
        return self._db.execute(sql, list(params)).fetchall()

    def frame(self, where: dict[str, Any] | None = None, columns: Iterable[str] | None = None) -> Any:
        """Every row as a pandas DataFrame of typed columns: :func:`attnio.reports.frames.sweep_frame`
        (``attnio.results(path)``)."""
        from attnio.reports.frames import sweep_frame

        return sweep_frame(self, where, columns)

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
    """Write ``text`` (UTF-8) to ``path`` atomically (:func:`write_atomic_with`)."""

    def write(tmp: str) -> None:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)

    write_atomic_with(path, write)


def write_atomic_with(path: str | Path, write: Callable[[str], None]) -> None:
    """Let ``write`` fill a temporary file in ``path``'s folder, sync it and rename it over ``path``
    (:func:`os.replace`): a reader sees the old file or the whole new one, never half; on any error the
    temporary file is removed and the error raised."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=p.name + ".", suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        with open(tmp, "rb") as f:
            os.fsync(f.fileno())
        os.replace(tmp, p)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
