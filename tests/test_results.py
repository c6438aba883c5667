"""Results as DataFrames (reports/frames.py, reports/catalog_frames.py, attnio.results/verdicts/catalog_frame):
typed columns that equal the stored rows, the best bound equal to a fresh evaluation, the report's summary and
per-regime tables equal to the old row-by-row computation (kept here as the independent reference), the export
round trip, bad input, and the layer rule that only the upper layers import pandas."""

from __future__ import annotations

import ast
import json
import sqlite3
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pandas as pd
import pytest

import attnio
from attnio.cli import main as cli_main
from attnio.core.errors import InvalidParameter
from attnio.reports import compute, sources
from attnio.reports.frames import RATIO_COLUMNS, SWEEP_COLUMNS, ratio_frame, sweep_frame
from attnio.reports.grid import default_grid_dict, grid_from_dict
from attnio.reports.store import InvalidStore, Store
from attnio.reports.sweep import run_config, run_sweep

ROOT = Path(__file__).resolve().parents[1]

# Every reader regime, ties, auto (left out of the wins), an audit-mode algorithm (left out of the summary),
# d_v ≠ d (left out of the summary), real arithmetic at small N, approximate runs; and one error row (a grid drops
# a configuration below an algorithm's minimum M, so the fixture appends one run directly, as test_sweep does).
SMALL_GRID = {
    "numeric_max_N": 64,
    "blocks": [
        {"algorithms": ["flash2", "standard", "split_v", "auto", "square_tiling"], "N": [64, 1024], "d": [16], "M": [128, 1024, 65536]},
        {"algorithms": ["flash2", "standard"], "N": [256], "d": [16], "dv": [8], "M": [1024]},
        {"algorithms": ["flash1"], "N": [1024], "d": [64], "M": [512, 8192]},
        {"algorithms": ["poly"], "N": [64, 1024], "d": [16], "M": [1024], "eps": [0.1], "B": [0.25, 0.5]},
    ],
}


@pytest.fixture(scope="module")
def small_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("results") / "small.sqlite"
    with Store(path) as s:
        run_sweep(grid_from_dict(SMALL_GRID), s, workers=0, progress=False)
        s.append([run_config({"algorithm": "flash2", "N": 8, "d": 4, "M": 5, "dv": 4})])
    return path


@pytest.fixture(scope="module")
def small_rows(small_store: Path) -> list[dict]:
    with Store(small_store) as s:
        return s.rows()


# columns, dtypes, values -------------------------------------------------------------------------------------


def test_columns_and_dtypes_are_the_declared_ones(small_store: Path) -> None:
    f = attnio.results(small_store)
    assert list(f.columns) == list(SWEEP_COLUMNS)
    for c, (_, dtype, _) in SWEEP_COLUMNS.items():
        assert f[c].dtype == pd.api.types.pandas_dtype(dtype), (c, f[c].dtype, dtype)
    r = ratio_frame(Store(small_store))
    assert list(r.columns) == list(RATIO_COLUMNS)
    assert all(r[c].dtype == pd.api.types.pandas_dtype(t) for c, t in RATIO_COLUMNS.items())


def test_every_stored_field_equals_the_decoded_row(small_store: Path, small_rows: list[dict]) -> None:
    f = attnio.results(small_store)
    assert f["key"].tolist() == [r["key"] for r in small_rows]  # sorted by key, one row each
    assert (f["status"] == "ok").sum() < len(f)  # the grid has an error row, and it is kept
    for rec, row in zip(f.to_dict("records"), small_rows, strict=True):
        for c, (field, _, _) in SWEEP_COLUMNS.items():
            if field is None:
                continue
            want, got = row.get(field), rec[c]
            if want is None:
                assert pd.isna(got), (row["key"], c, got)
            else:
                assert got == want and type(want)(got) == want, (row["key"], c, got, want)


def test_derived_columns(small_store: Path, small_rows: list[dict]) -> None:
    """pass from the registry, regime as the report's row_regime, and the best bound equal to the old way:
    compute.best_lower_bound evaluating every proved lower bound afresh (at d_v = d, the report's points)."""
    f = attnio.results(small_store).set_index("key")
    lows = compute.proved_lower_bounds(sources.all_bounds())
    checked = 0
    for row in small_rows:
        rec = f.loc[row["key"]]
        assert rec["pass"] == "forward"
        assert rec["regime"] == compute.row_regime(row)
        if row["status"] != "ok":
            assert pd.isna(rec["best_bound"]) and pd.isna(rec["ratio"])
            continue
        if row["dv"] == row["d"]:
            best = compute.best_lower_bound(lows, row)
            assert (rec["best_bound_value"], rec["best_bound"]) == best, row["key"]
            assert rec["ratio"] == row["io"] / best[0]
            checked += 1
    assert checked >= 20
    assert set(f["regime"]) == {"small cache", "large cache", "beyond", "approximate"}


def test_where_and_columns_select(small_store: Path) -> None:
    whole = attnio.results(small_store)
    part = attnio.results(small_store, where={"algorithm": "flash2", "N": [64, 256]}, columns=["key", "io", "N"])
    want = whole[(whole["algorithm"] == "flash2") & whole["N"].isin([64, 256])][["key", "io", "N"]].reset_index(drop=True)
    assert len(want) > 3
    pd.testing.assert_frame_equal(part, want)
    assert len(attnio.results(small_store, where={"algorithm": "no-such-algorithm"})) == 0


def test_key_ranges_read_in_threads_give_the_same_frame(small_store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from attnio.reports import frames

    with Store(small_store) as s:
        whole = s.frame()
        monkeypatch.setattr(frames, "CHUNK_ROWS", 7)
        monkeypatch.setattr(frames.os, "cpu_count", lambda: 4)
        pd.testing.assert_frame_equal(s.frame(), whole)


# the report's figures from the frames == the old row-by-row computation --------------------------------------


def _old_summaries(rows: list[dict], bounds: list) -> dict[str, tuple]:
    """The report's summary as it was computed before the frames (lists of dicts), kept as the reference."""
    ok = [r for r in rows if r.get("status") == "ok"]
    groups: dict[tuple, list[dict]] = defaultdict(list)
    for r in ok:
        if r["dv"] == r["d"] and not compute._audit(r["algorithm"]):
            groups[(r["N"], r["d"], r["M"], r.get("eps"), r.get("B"))].append(r)
    lows = compute.proved_lower_bounds(bounds)
    configs: dict[str, int] = defaultdict(int)
    wins: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    points: dict[str, list[tuple]] = defaultdict(list)
    for (N, d, M, eps, B), rs in groups.items():
        rs = [r for r in rs if r["algorithm"] != "auto"] or rs
        best = min(rs, key=lambda r: (r["io"], r["algorithm"]))
        winners = sorted(r["algorithm"] for r in rs if r["io"] == best["io"])
        reg = compute.row_regime(best)
        configs[reg] += 1
        for a in winners:
            wins[reg][a] += 1
        found = compute.best_lower_bound(lows, best)
        if found is not None:
            key = f"N={N} d={d} M={M}" + (f" ε={eps} B={B}" if eps is not None else "")
            points[reg].append((N, d, M, key, " = ".join(winners), best["io"], found[1], found[0], best.get("schedule"), best.get("r")))
    out = {}
    for reg in configs:
        pts = points[reg]
        largest = max(pts, key=lambda p: (p[0], p[1], p[2], p[3])) if pts else None
        median = statistics.median(p[5] / p[7] for p in pts) if pts else None
        out[reg] = (configs[reg], dict(wins[reg]), sorted(pts), median, largest)
    return out


def _new_summaries(rows: list[dict], bounds: list) -> dict[str, tuple]:
    out = {}
    for s in compute.regime_summaries(compute.Context(rows, None), bounds):
        if not s.configs:
            continue
        pts = sorted((p.N, p.d, p.M, p.key, p.schedule, p.io, p.bound, p.bound_value, p.variant, p.r) for p in s.points)
        big = s.largest
        largest = None if big is None else (big.N, big.d, big.M, big.key, big.schedule, big.io, big.bound, big.bound_value, big.variant, big.r)
        out[s.regime] = (s.configs, s.wins, pts, s.median_ratio, largest)
    return out


def _old_ratio_stats(rows: list[dict], regime: str, ids: set[str]) -> list[tuple]:
    stats: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in rows:
        if r.get("status") == "ok" and compute.row_regime(r) == regime:
            for bid, ratio in (r.get("ratios") or {}).items():
                if bid in ids:
                    stats[(r["algorithm"], bid)].append(ratio)
    return [(a, b, len(v), statistics.median(v), max(v), min(v)) for (a, b), v in sorted(stats.items())]


def _check_same_figures(rows: list[dict]) -> int:
    bounds = sources.all_bounds()
    old, new = _old_summaries(rows, bounds), _new_summaries(rows, bounds)
    assert new == old
    ctx = compute.Context(sorted(rows, key=lambda r: r["key"]), None)
    n = 0
    for regime, bs in compute.bounds_by_regime(bounds).items():
        stats = compute.ratio_stats(ctx.frames[1], regime, [b.id for b in bs])
        got = [(t.algorithm, t.bound, int(t.configs), t.median, t.max, t.min) for t in stats.reset_index().itertuples(index=False)]
        assert got == _old_ratio_stats(rows, regime, {b.id for b in bs}), regime
        n += len(got)
    return n


def test_report_figures_from_frames_equal_the_old_computation(small_rows: list[dict]) -> None:
    assert _check_same_figures(small_rows) > 10
    assert len(_new_summaries(small_rows, sources.all_bounds())) == 4


@pytest.mark.slow
def test_report_figures_from_frames_equal_the_old_computation_on_the_default_sweep() -> None:
    """The default grid (count-only: the same counts), as attnio.results() sweeps it."""
    with Store(":memory:") as s:
        run_sweep(grid_from_dict({**default_grid_dict(), "numeric_max_N": 0}), s, workers=0, progress=False)
        rows = s.rows()
    assert len(rows) > 400
    assert _check_same_figures(rows) > 50


# verdicts and the catalog ---------------------------------------------------------------------------------


def test_verdicts_from_the_record_without_a_solver() -> None:
    v = attnio.verdicts()
    claims = attnio.claims()
    assert v["id"].tolist() == sorted(c.id for c in claims)
    assert list(v.columns) == ["id", "kind", "claim", "about", "verdict", "z3", "cvc5", "source"]
    assert set(v["source"]) == {"record (crosscheck.json)"}
    summary = sources.crosscheck_summary(str(ROOT / "reports" / "crosscheck.json"))
    assert summary is not None
    assert sorted(v.loc[v["verdict"] == "stale", "id"]) == summary["stale"]
    assert int((v["z3"] == "proved").sum()) == summary["z3_proved"]
    assert int((v["cvc5"] == "proved").sum()) == summary["cvc5_proved"]


def test_verdicts_of_a_changed_claim_are_stale(tmp_path: Path) -> None:
    rec = json.loads((ROOT / "reports" / "crosscheck.json").read_text(encoding="utf-8"))
    cid = sorted(rec["claims"])[0]
    rec["claims"][cid]["fingerprint"] = "0" * 16
    p = tmp_path / "rec.json"
    p.write_text(json.dumps(rec), encoding="utf-8")
    from attnio.reports.catalog_frames import verdict_frame

    v = verdict_frame("record", [cid], record=p)
    assert v["verdict"].tolist() == ["stale"] and pd.isna(v["z3"].iloc[0])


@pytest.mark.solver
def test_verdicts_from_a_verify_run() -> None:
    cid = "coverage.saha-ye"
    v = attnio.verdicts(cid, source="verify")
    assert v["id"].tolist() == [cid] and v["verdict"].tolist() == ["proved"] and v["source"].tolist() == ["verify (z3)"]


def test_catalog_frame_bounds_and_claims() -> None:
    b = attnio.catalog_frame()
    assert b["id"].tolist() == sorted(x.id for x in attnio.catalog())
    assert b["explicit"].dtype == "boolean" and b["claims"].dtype == "Int64"
    about: dict[str, int] = defaultdict(int)
    for c in attnio.claims():
        for i in c.about:
            about[i] += 1
    assert dict(zip(b["id"], b["claims"], strict=True)) == {x.id: about.get(x.id, 0) for x in attnio.catalog()}
    c = attnio.catalog_frame("claims")
    assert len(c) == len(attnio.claims()) and c["id"].is_monotonic_increasing


# export ---------------------------------------------------------------------------------------------------


def _grid_file(tmp_path: Path) -> Path:
    g = tmp_path / "g.json"
    g.write_text(json.dumps({"numeric_max_N": 8, "blocks": [{"algorithms": ["flash2", "poly"][:1], "N": [8, 512], "d": [2, 8], "M": [48, 400]}]}), encoding="utf-8")
    return g


def test_export_csv_round_trip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    store, out = tmp_path / "s.sqlite", tmp_path / "out" / "results.csv"
    rc = cli_main(["sweep", "--grid", str(_grid_file(tmp_path)), "--store", str(store), "--workers", "0", "--no-progress", "--export", str(out)])
    assert rc == 0 and "wrote 8 rows" in capsys.readouterr().out
    back = pd.read_csv(out, dtype={c: t for c, (_, t, _) in SWEEP_COLUMNS.items()})
    pd.testing.assert_frame_equal(back, attnio.results(store), check_exact=True)
    assert [p.name for p in out.parent.iterdir()] == ["results.csv"]  # no temporary file left


def test_export_parquet_round_trip(tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    store, out = tmp_path / "s.sqlite", tmp_path / "results.parquet"
    assert cli_main(["sweep", "--grid", str(_grid_file(tmp_path)), "--store", str(store), "--workers", "0", "--no-progress", "--export", str(out)]) == 0
    pd.testing.assert_frame_equal(pd.read_parquet(out), attnio.results(store), check_dtype=False)


def test_export_parquet_without_pyarrow_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a))
    store = tmp_path / "s.sqlite"
    rc = cli_main(["sweep", "--grid", str(_grid_file(tmp_path)), "--store", str(store), "--workers", "0", "--no-progress", "--export", str(tmp_path / "r.parquet")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "pyarrow" in err
    assert not store.exists()  # checked before anything ran


def test_export_bad_name_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = cli_main(["sweep", "--grid", str(_grid_file(tmp_path)), "--store", str(tmp_path / "s.sqlite"), "--workers", "0", "--no-progress", "--export", str(tmp_path / "r.xlsx")])
    err = capsys.readouterr().err
    assert rc == 2 and len(err.strip().splitlines()) == 1 and "export" in err and "r.xlsx" in err and ".csv" in err


# bad input ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kw", "name", "value"), [
    ({"where": {"nosuch": 1}}, "where", "nosuch"),
    ({"columns": ["io", "nosuch"]}, "columns", "nosuch"),
    ({"columns": "io"}, "columns", "io"),
    ({"where": [("io", 1)]}, "where", [("io", 1)]),
])
def test_unknown_column_names_the_parameter_value_and_range(small_store: Path, kw: dict, name: str, value: object) -> None:
    with pytest.raises(InvalidParameter) as e:
        attnio.results(small_store, **kw)
    assert (e.value.name, e.value.value) == (name, value)
    assert len(str(e.value).splitlines()) == 1
    if name in ("where", "columns") and isinstance(value, str) and value == "nosuch":
        assert "algorithm" in e.value.valid and "ratio" in e.value.valid


def test_the_default_sweep_checks_its_arguments_before_running() -> None:
    with pytest.raises(InvalidParameter) as e:
        attnio.results(where={"nosuch": 1})  # at once, not after a minute of sweeping
    assert e.value.name == "where"


def test_a_store_that_is_not_attnios(tmp_path: Path) -> None:
    missing = tmp_path / "none.sqlite"
    with pytest.raises(InvalidParameter) as e:
        attnio.results(missing)
    assert e.value.name == "store" and not missing.exists()  # reading never creates a store
    text = tmp_path / "notes.txt"
    text.write_text("not a database\n", encoding="utf-8")
    with pytest.raises(InvalidStore):
        attnio.results(text)
    other = tmp_path / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    with pytest.raises(InvalidStore) as e2:
        attnio.results(other)
    assert e2.value.name == "store" and len(str(e2.value).splitlines()) == 1
    with pytest.raises(InvalidParameter) as e3:
        attnio.verdicts(source="nosuch")
    assert (e3.value.name, e3.value.value) == ("source", "nosuch")
    with pytest.raises(InvalidParameter) as e4:
        attnio.verdicts("no.such.claim")
    assert e4.value.name == "claim"


def test_a_store_with_rows_sqlite_cannot_read_as_json(tmp_path: Path) -> None:
    p = tmp_path / "nan.sqlite"
    with Store(p) as s:
        s.append([{"key": "a", "algorithm": "flash2", "max_abs_error": float("nan")}])
    with pytest.raises(InvalidParameter) as e:
        attnio.results(p)
    assert e.value.name == "store" and "NaN" in str(e.value)


def test_an_empty_store_gives_an_empty_typed_frame(tmp_path: Path) -> None:
    with Store(tmp_path / "e.sqlite") as s:
        f = sweep_frame(s)
    assert len(f) == 0 and list(f.columns) == list(SWEEP_COLUMNS) and f["io"].dtype == "Int64"


# layers ---------------------------------------------------------------------------------------------------


def _imports_pandas(path: Path) -> bool:
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "pandas" for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "pandas":
            return True
    return False


def test_only_the_upper_layers_import_pandas() -> None:
    """reports (and the API/CLI above it) may import pandas; attnio.core and the layers below reports never."""
    lower = [ROOT / "attnio" / "core", ROOT / "bounds", ROOT / "solver", ROOT / "algorithms"]
    files = [p for d in lower for p in d.rglob("*.py")]
    assert len(files) > 30
    assert [str(p.relative_to(ROOT)) for p in files if _imports_pandas(p)] == []
    assert _imports_pandas(ROOT / "reports" / "frames.py")  # the scan finds an import where there is one


@pytest.mark.subprocess
def test_import_attnio_and_its_core_load_no_pandas() -> None:
    code = ("import sys, attnio, attnio.core.errors, attnio.core.counts, attnio.core.validate, attnio.core.workload; "
            "attnio.count('flash2', N=64, d=8, M=256); print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True).stdout
    assert out.strip() == "False"


# a Triton kernel check as a frame -------------------------------------------------------------------------


@pytest.mark.slow
def test_kernel_check_frame_is_its_counted_traffic() -> None:
    import importlib.util
    import os

    if os.environ.get("TRITON_INTERPRET") != "1":
        pytest.skip("needs TRITON_INTERPRET=1 before triton is imported")
    pytest.importorskip("torch")
    triton = pytest.importorskip("triton")
    from attnio.core.workload import Workload
    from attnio.triton.count import TESTED_TRITON_VERSIONS

    if triton.__version__ not in TESTED_TRITON_VERSIONS:
        pytest.skip(f"Triton {triton.__version__} is not a tested version")
    from attnio.triton.check import check

    spec = importlib.util.spec_from_file_location("causal_fa2_noskip", ROOT / "examples" / "causal_fa2_noskip.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    r = check(mod.launch, Workload.build(heads=2, kv_heads=1, N=40, d=16, causal=True, gpu="h100"))
    f = r.frame().set_index("tensor")
    t = r.traffic
    assert list(f.index) == list(t.names)
    for n in t.names:
        assert (f.loc[n, "read_bytes"], f.loc[n, "written_bytes"]) == (t.reads_bytes.get(n, 0), t.writes_bytes.get(n, 0))
    assert int(f["read_bytes"].sum() + f["written_bytes"].sum()) == r.total_bytes == f.attrs["total_bytes"]
    assert f.loc["q", "role"] == "Q" and f.loc["q", "best_read_words"] == r.best_per_array["Q"][0]
    assert f.attrs["lower_bound"] == r.lower_bound_id and f.attrs["ratio_to_best"] == r.ratio_to_best
