"""The store's frame_columns (reports/store.py, schema version 2): each row's fields packed when it is appended,
a version-1 store migrated on its first open (atomically), and the frame read from them equal to the frame typed
from the objects SQLite's json_extract gives (mixed columns included)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest

from attnio.core.errors import InvalidParameter
from attnio.reports import store as store_mod
from attnio.reports.frames import SWEEP_COLUMNS, sweep_frame
from attnio.reports.grid import grid_from_dict
from attnio.reports.store import Store
from attnio.reports.sweep import run_sweep

GRID = {"numeric_max_N": 0, "blocks": [
    {"algorithms": ["flash2", "standard"], "N": [64, 1024], "d": [16], "M": [128, 65536]},
    {"algorithms": ["poly"], "N": [1024], "d": [16], "M": [1024], "eps": [0.1], "B": [0.5]},
]}


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    with Store(":memory:") as s:
        run_sweep(grid_from_dict(GRID), s, workers=0, progress=False)
        return s.rows()


def _v1_store(path: Path, rows: list[dict]) -> None:
    """A store as version 1 wrote it: one results(key, row) table, user_version 0."""
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE results (key TEXT NOT NULL UNIQUE, row TEXT NOT NULL)")
    db.executemany("INSERT INTO results VALUES (?, ?)", [(r["key"], json.dumps(r, sort_keys=True, allow_nan=True)) for r in rows])
    db.commit()
    db.close()


def _tables(path: Path) -> tuple[list[str], int]:
    db = sqlite3.connect(path)
    try:
        names = sorted(n for (n,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'"))
        return names, db.execute("PRAGMA user_version").fetchone()[0]
    finally:
        db.close()


def test_a_version_1_store_is_migrated_on_first_open_to_the_same_frame(tmp_path: Path, rows: list[dict]) -> None:
    _v1_store(tmp_path / "v1.sqlite", rows)
    assert _tables(tmp_path / "v1.sqlite") == (["results"], 0)
    with Store(tmp_path / "v1.sqlite") as old, Store(tmp_path / "v2.sqlite") as new:
        new.append(rows)
        assert old.count() == new.count() == len(rows) > 5
        pd.testing.assert_frame_equal(sweep_frame(old), sweep_frame(new))
    assert _tables(tmp_path / "v1.sqlite") == (store_mod.TABLES, store_mod.VERSION)
    with Store(tmp_path / "v1.sqlite") as again:  # a second open finds it done, and appends keep both tables level
        again.append([{**rows[0], "key": "z-new", "io": 7}, rows[1]])
        assert again.query("SELECT COUNT(*) FROM frame_columns")[0][0] == again.count() == len(rows) + 1
        assert sweep_frame(again, where={"key": "z-new"})["io"].tolist() == [7]


def test_a_migration_that_fails_leaves_the_version_1_store(tmp_path: Path, rows: list[dict], monkeypatch: pytest.MonkeyPatch) -> None:
    p = tmp_path / "v1.sqlite"
    _v1_store(p, rows)
    real_fill = store_mod._fill

    def fill_then_fail(cur: sqlite3.Cursor, src: str, params: tuple = ()) -> None:
        real_fill(cur, src, params)  # every frame_columns row written, then the process "dies" before COMMIT
        raise KeyboardInterrupt

    monkeypatch.setattr(store_mod, "_fill", fill_then_fail)
    with pytest.raises(KeyboardInterrupt):
        Store(p)
    assert _tables(p) == (["results"], 0)  # rolled back whole: no side table, still version 1
    monkeypatch.setattr(store_mod, "_fill", real_fill)
    with Store(p) as s:
        assert len(sweep_frame(s)) == len(rows)


def test_a_version_1_store_with_a_nan_row_migrates_and_its_frame_says_so(tmp_path: Path, rows: list[dict]) -> None:
    p = tmp_path / "v1.sqlite"
    _v1_store(p, [*rows, {"key": "nan", "algorithm": "flash2", "max_abs_error": float("nan")}])
    with Store(p) as s, pytest.raises(InvalidParameter) as e:
        sweep_frame(s)
    assert e.value.name == "store" and "NaN" in str(e.value)


def test_mixed_columns_are_typed_as_the_objects_sqlite_gives(tmp_path: Path) -> None:
    """A column whose values are not all of its dtype's kind (a real in an integer column, 2 in a flag) is typed
    from the objects json_extract gives, as the frame always typed them: the reference here is that typing."""
    odd = [{"key": "a", "io": 5.0, "eps": 1, "count_only": 2, "seed": 3, "algorithm": "flash2"},
           {"key": "b", "io": 4, "eps": 0.5, "count_only": True, "seed": None, "algorithm": None, "status": "ok"}]
    with Store(tmp_path / "odd.sqlite") as s:
        s.append(odd)
        f = sweep_frame(s)
    assert f["io"].tolist() == [5, 4] and str(f["io"].dtype) == "Int64"
    assert f["eps"].tolist() == [1.0, 0.5] and str(f["eps"].dtype) == "float64"
    assert f["count_only"].isna().tolist() == [True, False] and bool(f["count_only"][1]) is True  # 2 is no flag
    assert f["seed"].isna().tolist() == [False, True] and f["algorithm"].isna().tolist() == [False, True]
    assert [str(f[c].dtype) for c in SWEEP_COLUMNS] == [SWEEP_COLUMNS[c][1] for c in SWEEP_COLUMNS]
    with Store(tmp_path / "text.sqlite") as s:
        s.append([{"key": "a", "N": "many"}])
        with pytest.raises((TypeError, ValueError)):  # text in an integer column: astype refuses it, as before
            sweep_frame(s)


def test_rows_a_version_1_writer_appends_after_the_migration_are_packed_when_read(tmp_path: Path, rows: list[dict]) -> None:
    p = tmp_path / "s.sqlite"
    with Store(p) as s:
        s.append(rows[:3])
        db = sqlite3.connect(p)  # a version-1 writer: results only
        db.executemany("INSERT INTO results VALUES (?, ?)", [(r["key"], json.dumps(r, sort_keys=True)) for r in rows[3:]])
        db.commit()
        db.close()
        assert s.query("SELECT COUNT(*) FROM frame_columns")[0][0] == 3
        f = sweep_frame(s)
        assert f["key"].tolist() == sorted(r["key"] for r in rows)
        assert f["io"].tolist() == [r["io"] for r in sorted(rows, key=lambda r: r["key"])]
        assert s.fill_missing() == 0
