"""Sweeps: resumable after SIGKILL, consistent under two concurrent writers, the Dask path, grid validation."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from attnio.core.errors import InvalidParameter
from attnio.reports.grid import grid_from_dict, load_grid
from attnio.reports.store import Store
from attnio.reports.sweep import run_config, run_sweep

ROOT = Path(__file__).resolve().parents[1]

# Real arithmetic on N = 160..256 with a small M: each row takes a noticeable fraction of a second, so a
# SIGKILL lands mid-sweep. 12 configurations.
SLOW_GRID = {"numeric_max_N": 1000, "blocks": [{"algorithms": ["flash2"], "N": [96, 128, 160], "d": [8, 16], "M": [72, 96]}]}
FAST_GRID = {"numeric_max_N": 32, "blocks": [{"algorithms": ["flash2"], "N": [8, 32, 512, 4096], "d": [2, 8], "M": [48, 400]}]}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-c", "import sys; from attnio.cli import main; sys.exit(main())", *args]


def _reference(grid_dict: dict) -> dict[str, tuple[int, int, int]]:
    g = grid_from_dict(grid_dict)
    out = {}
    for c in g.configs:
        r = run_config({**c.as_dict(), "count_only": True})
        out[c.key()] = (r["reads"], r["writes"], r["peak_fast_words"])
    return out


def _check_store(path: Path, ref: dict[str, tuple[int, int, int]]) -> None:
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    keys = [k for (k,) in db.execute("SELECT key FROM results")]
    db.close()
    assert len(keys) == len(set(keys)), "a row is duplicated"
    assert sorted(keys) == sorted(ref), "a row is lost or foreign"
    with Store(path) as s:
        for r in s.rows():
            assert r["status"] == "ok", r
            assert (r["reads"], r["writes"], r["peak_fast_words"]) == ref[r["key"]], r["key"]


def _count(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return int(db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        finally:
            db.close()
    except sqlite3.OperationalError:
        return 0


def _wait_until(done, what: str, patience_s: float = 120.0) -> None:
    """Poll ``done()``; ``patience_s`` is how long a stuck run is waited for before the test reports it (a hang
    guard, not a speed requirement)."""
    give_up = time.monotonic() + patience_s
    while not done():
        assert time.monotonic() < give_up, what
        time.sleep(0.02)


def _lock_after_rows(path: Path, rows: int, p: subprocess.Popen) -> tuple[sqlite3.Connection, int]:
    """Wait until the store at ``path`` holds at least ``rows`` rows, and return a connection holding its write
    lock (no other process can commit until it is released) with the row count read under that lock. Each poll
    takes the lock first and reads the count second, and the driver commits one row per transaction, so the
    count returned is between ``rows`` and the first count at or above it that any commit produced."""
    found: list[tuple[sqlite3.Connection, int]] = []

    def poll() -> bool:
        assert p.poll() is None, f"sweep ended before it could be killed: {p.communicate()}"
        if not path.exists():
            return False
        db = sqlite3.connect(path, timeout=60, isolation_level=None)
        try:
            db.execute("BEGIN IMMEDIATE")
            n = int(db.execute("SELECT COUNT(*) FROM results").fetchone()[0])
        except sqlite3.OperationalError:  # the store's table not created yet
            db.close()
            return False
        if n < rows:
            db.execute("ROLLBACK")
            db.close()
            return False
        found.append((db, n))
        return True

    _wait_until(poll, "the sweep made no progress")
    return found[0]


def _session(sid: int) -> list[str]:
    """Live (not zombie) processes of session ``sid``, as "pid cmdline" (Linux /proc)."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            fields = stat[stat.rindex(")") + 2:].split()  # state, ppid, pgrp, session, ...
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError):
            continue
        if int(fields[3]) == sid and fields[0] != "Z":
            out.append(f"{d.name} {cmd[:120]}")
    return out


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")
def test_sigkill_mid_sweep_then_rerun_loses_and_duplicates_nothing(tmp_path: Path) -> None:
    """Kill the sweep once at least 3 of its 12 rows are committed, with the store's write lock held by this
    test from the moment it counts them to after the kill: the driver cannot commit a row in between, so the
    count read is exactly what the killed sweep left. The rerun must then add exactly the missing rows. Each
    row takes a noticeable fraction of a second, so the kill lands mid-sweep; no assertion depends on where."""
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(SLOW_GRID))
    store = tmp_path / "s.sqlite"
    args = _cli("sweep", "--grid", str(grid), "--store", str(store), "--workers", "1", "--batch", "1", "--no-progress")
    p = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    lock = None
    try:
        lock, partial = _lock_after_rows(store, 3, p)
        assert _session(p.pid), "the sweep's pool worker was not seen"
        os.kill(p.pid, signal.SIGKILL)
        p.wait(timeout=60)
        lock.execute("ROLLBACK")
        lock.close()
        lock = None
        # the pool workers and multiprocessing's resource tracker notice the driver's death and exit
        _wait_until(lambda: not _session(p.pid), f"processes of the killed sweep stay alive: {_session(p.pid)}")
    finally:
        if lock is not None:
            lock.close()
        if p.poll() is None:
            os.kill(p.pid, signal.SIGKILL)
            p.wait()
        try:
            os.killpg(p.pid, signal.SIGKILL)  # clean up whatever a failing run left (its own session)
        except ProcessLookupError:
            pass
    assert p.returncode == -signal.SIGKILL
    assert _count(store) == partial >= 3, f"{partial} rows read under the lock, {_count(store)} in the store"
    out = subprocess.run(args, cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert f"{partial} already in" in out.stdout and f"{12 - partial} run now" in out.stdout, out.stdout
    _check_store(store, _reference(SLOW_GRID))


def test_two_sweeps_writing_one_store_at_once_stay_consistent(tmp_path: Path) -> None:
    grid = tmp_path / "grid.json"
    grid.write_text(json.dumps(FAST_GRID))
    store = tmp_path / "s.sqlite"
    args = _cli("sweep", "--grid", str(grid), "--store", str(store), "--workers", "0", "--batch", "1", "--no-progress")
    procs = [subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    outs = [p.communicate(timeout=300) for p in procs]
    for p, (_o, e) in zip(procs, outs, strict=True):
        assert p.returncode == 0, e
    _check_store(store, _reference(FAST_GRID))


def test_rerun_skips_finished_rows_and_runs_the_rest() -> None:
    g = grid_from_dict(FAST_GRID)
    s = Store(":memory:")
    s.append([run_config(c.as_dict()) for c in g.configs[:5]])
    summary = run_sweep(g, s, workers=0, progress=False)
    assert (summary.done_before, summary.ran, s.count()) == (5, len(g.configs) - 5, len(g.configs))


def test_process_pool_gives_the_same_rows_as_in_process(tmp_path: Path) -> None:
    g = grid_from_dict(FAST_GRID)
    a, b = Store(tmp_path / "a.sqlite"), Store(":memory:")
    run_sweep(g, a, workers=2, progress=False)
    run_sweep(g, b, workers=0, progress=False)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731
    assert strip(a.rows()) == strip(b.rows())


def test_dask_local_cluster_on_loopback_gives_the_same_rows() -> None:
    distributed = pytest.importorskip("distributed")
    g = grid_from_dict(FAST_GRID)
    ref = Store(":memory:")
    run_sweep(g, ref, workers=0, progress=False)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None, protocol="tcp", host="127.0.0.1") as cluster:
        s = Store(":memory:")
        summary = run_sweep(g, s, scheduler=cluster.scheduler_address, progress=False)
    assert summary.ran == len(g.configs)
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731
    assert strip(s.rows()) == strip(ref.rows())


def test_rows_carry_configuration_counts_bounds_version_and_timing() -> None:
    r = run_config(grid_from_dict(FAST_GRID).configs[0].as_dict())
    for k in ("algorithm", "N", "d", "dv", "M", "eps", "B", "reads", "writes", "io", "peak_fast_words", "max_abs_error",
              "formula_io", "bounds", "ratios", "backend", "attnio_version", "seconds"):
        assert k in r, k
    assert r["io"] == r["reads"] + r["writes"] == r["formula_io"]


def test_documented_errors_become_rows_not_crashes() -> None:
    r = run_config({"algorithm": "flash2", "N": 8, "d": 4, "M": 5, "dv": 4})  # below flash2's minimum M
    assert r["status"] == "error" and "M=5" in r["error"]


@pytest.mark.parametrize(
    "grid, name, fragment",
    [
        ({"blocks": [{"algorithms": ["flash2"], "N": [8], "d": [2], "M": [-3]}]}, "blocks[0].M", ">= 1"),
        ({"blocks": [{"algorithms": ["flash2"], "N": [8.5], "d": [2], "M": [64]}]}, "blocks[0].N", "integer"),
        ({"blocks": [{"algorithms": ["nope"], "N": [8], "d": [2], "M": [64]}]}, "algorithm", "flash2"),
        ({"blocks": [{"algorithms": ["flash2"], "N": [8], "d": [2], "M": [64], "Mx": [1]}]}, "blocks[0].Mx", "keys are"),
        ({"blocks": [{"algorithms": ["flash2"], "N": [], "d": [2], "M": [64]}]}, "blocks[0].N", "non-empty list"),
        ({"blocks": [{"algorithms": ["flash2"], "N": [8], "d": [2], "M": [64], "eps": [1.5], "B": [1]}]}, "blocks[0].eps", "< 1"),
        ({"blocks": [{"algorithms": ["flash2"], "N": [8], "d": [2], "M": [64], "eps": [0.1], "B": [1]}]}, "blocks[0].eps/B", "exact algorithm"),
        ({"numeric_max_N": -1, "blocks": [{"algorithms": ["flash2"], "N": [8], "d": [2], "M": [64]}]}, "numeric_max_N", ">= 0"),
        ({"blocks": []}, "blocks", "non-empty"),
        ({"blocks": [{"algorithms": ["flash2"], "N": [8], "d": [2], "M": [64], "seed": [2**64]}]}, "blocks[0].seed", "<= 18446744073709551615"),
    ],
)
def test_bad_grid_values_name_parameter_value_and_range(grid: dict, name: str, fragment: str) -> None:
    with pytest.raises(InvalidParameter) as e:
        grid_from_dict(grid)
    assert e.value.name == name and fragment in e.value.valid


def test_bad_grid_files_are_invalid_parameters(tmp_path: Path) -> None:
    bad = tmp_path / "g.toml"
    bad.write_text("[[blocks]\nalgorithms = [")
    with pytest.raises(InvalidParameter, match="well-formed TOML"):
        load_grid(bad)
    with pytest.raises(InvalidParameter, match="existing"):
        load_grid(tmp_path / "missing.json")
    good = tmp_path / "g2.toml"
    good.write_text('numeric_max_N = 8\n[[blocks]]\nalgorithms = ["flash2"]\nN = [8, 16]\nd = [2]\nM = [48]\n')
    assert sorted((c.N, c.count_only) for c in load_grid(good).configs) == [(8, False), (16, True)]


def test_cli_bad_grid_is_one_line_and_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "g.json"
    bad.write_text(json.dumps({"blocks": [{"algorithms": ["flash2"], "N": [0], "d": [2], "M": [64]}]}))
    out = subprocess.run(_cli("sweep", "--grid", str(bad), "--store", str(tmp_path / "s.sqlite")), cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 2
    assert "blocks[0].N=0 is invalid" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize(
    "alg,N,d,M,dv,gone",
    [
        ("square_tiling-io", 16384, 128, 256, 1, ()),  # the referee's row: BSPV was 0.908 of its old form here
        ("flash2", 16384, 32, 16384, 1, ("constants.b3",)),
        ("flash2", 16384, 128, 65536, 1, ("constants.b2",)),
        ("flash2", 1024, 128, 262144, 1, ()),  # 4Nd was 0.506 of this row's count; now 2Nd + 2N·d_v
    ],
)
def test_a_row_at_d_v_not_d_is_divided_only_by_bounds_below_its_exact_count(alg: str, N: int, d: int, M: int, dv: int, gone: tuple) -> None:
    """reports.sweep._bounds applies each bound on its encoded regime, which states d_v = d where the bound needs it:
    at the referee's rows (a user grid's d_v) every ratio is ≥ 1, and B2, B3 no longer apply."""
    from attnio.bounds.catalog import NOT_IO
    from attnio.bounds.costs import cost
    from attnio.reports.grid import Config
    from attnio.reports.sweep import _bounds

    io = cost(alg, N=N, d=d, M=M, dv=dv).io_words
    values, ratios = _bounds(Config(alg, N, d, M, dv, count_only=True), io)
    assert "trivial.4Nd" in ratios and values["trivial.4Nd"] == 2 * N * d + 2 * N * dv
    io_ratios = {k: v for k, v in ratios.items() if k not in NOT_IO}  # NOT_IO: a bound on something else than words
    assert min(io_ratios.values()) >= 1, {k: v for k, v in io_ratios.items() if v < 1}
    assert io_ratios[f"exact.{alg}"] == 1  # the exact entry is the row's own formula at its d_v
    assert not set(gone) & set(values)
    if M <= d * d:
        assert ratios["constants.bspv"] >= 1
