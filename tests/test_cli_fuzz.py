"""A seeded, in-process fuzz of the command line, and a table of broken input files.

Every subcommand is driven with argument vectors mixing valid values, edge values (0, -1, 2³¹, 10³⁰, 10⁴⁰⁰),
garbage ("x", "1e3", "nan", ""), dropped required options and unknown options. The contract checked on every
vector: no traceback escapes; the exit code is 0 or 2; an exit 2 prints exactly one line on stderr; a ``--json``
exit 0 prints one JSON object on stdout.

Slow paths are kept out so that the CI run stays well under a minute: ``run`` does arithmetic only on small
sizes (or on sizes it must refuse), ``pebble`` always gets a time limit of at most 0.1 s, ``sweep`` runs a
two-configuration count-only grid in this process, ``gate`` sees only baselines and options it must refuse
before collecting anything, ``verify`` only ``--list`` and unknown claims, ``report`` only refused options.

Examples: the Hypothesis profile's (``ci``: 200, derandomized; ``nightly``: 1,000), or ``ATTNIO_FUZZ_EXAMPLES``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import example, given, seed, settings
from hypothesis import strategies as st

from attnio.cli import main

ALGORITHMS = ["auto", "flash1", "flash1-fit", "flash2", "flash2-square", "kv_stationary", "poly", "split_v",
              "square_tiling", "standard"]

EDGE = ["0", "-1", "1", "2", "3", "2147483648", "9223372036854775808", "1" + "0" * 30, "1" + "0" * 400, "x", "",
        "1e3", "2**10", "nan", "inf", "-inf", "0.5", " 7", "0x10", "1_000", "٣", "-0", "1" * 5000]
SMALL = st.integers(-2, 40).map(str)
TINY = st.integers(-1, 4).map(str)
FLOATS = ["0.1", "0.5", "1", "1.5", "0", "-0.1", "nan", "inf", "1e-300", "1e300", "x", "0.25", "1e155"]
JUNK = [["--frobnicate"], ["stray"], ["--json", "--json"], ["--N"], ["--"], ["-x"], ["--help=3"]]

_store_ids = itertools.count()


def _examples() -> int | None:
    n = os.environ.get("ATTNIO_FUZZ_EXAMPLES")
    return int(n) if n else None


# files ---------------------------------------------------------------------------------------------------


GOOD_GRID = {"numeric_max_N": 0, "blocks": [{"algorithms": ["flash2"], "N": [16, 64], "d": [4], "M": [128]}]}


def _sqlite_store(path: Path) -> bytes:
    from attnio.reports.store import Store

    with Store(path) as s:
        s.append([{"key": str(i), "io": i, "pad": "x" * 2000} for i in range(200)])
    return path.read_bytes()


def broken_files(root: Path) -> dict[str, dict[str, Path]]:
    """Broken stores, baselines and grid files (and a few good ones), written into ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    good = _sqlite_store(root / "good.sqlite")
    stores = {
        "garbage": b"this is not a database at all" * 10,
        "one-byte": b"S",
        "header-only": good[:16],
        "truncated": good[: len(good) // 2],
        "zeroed-pages": good[:4096] + b"\0" * (len(good) - 4096),
        "corrupt-pages": good[:5000] + b"\xff" * 4000 + good[9000:],
        "json-text": b'{"schema": 1, "io": {}}',
    }
    other = root / "other.sqlite"
    db = sqlite3.connect(other)
    db.execute("CREATE TABLE t (x)")
    db.commit()
    db.close()
    stores_p = {k: root / f"store-{k}.sqlite" for k in stores}
    for k, b in stores.items():
        stores_p[k].write_bytes(b)
    stores_p["foreign-tables"] = other
    (root / "a-folder.sqlite").mkdir(exist_ok=True)
    stores_p["a-folder"] = root / "a-folder.sqlite"

    deep = b"[" * 100_000 + b"]" * 100_000
    baselines = {
        "not-json": b"\x00\xff garbage",
        "truncated-json": b'{"schema": 1, "io": {',
        "wrong-schema": b'{"schema": 99, "io": {}}',
        "a-list": b"[1, 2, 3]",
        "io-entry-string": b'{"schema": 1, "io": {"k": "many"}}',
        "formula-number": b'{"schema": 1, "io": {}, "formulas": {"flash2": 3}}',
        "bounds-entry-list": b'{"schema": 1, "io": {}, "bounds": {"b": [1, 2]}}',
        "constants-wrong-type": b'{"schema": 1, "io": {}, "constants": {"c": {"lower_constant": {"x": 1}}}}',
        "verdict-string": b'{"schema": 1, "io": {}, "verdicts": {"c1": "proved"}}',
        "deeply-nested": b'{"schema": 1, "io": ' + deep + b"}",
        "nested-expr": b'{"schema": 1, "io": {}, "bounds": {"b": {"kind": "lower", "expr": ' + b"[" * 500 + b"]" * 500 + b"}}}",
        "utf16": '{"schema": 1, "io": {}}'.encode("utf-16"),
    }
    baselines_p = {k: root / f"baseline-{k}.json" for k in baselines}
    for k, b in baselines.items():
        baselines_p[k].write_bytes(b)

    grids = {
        "not-json.json": b"{{{",
        "not-toml.toml": b"[[blocks]\nalgorithms = [",
        "deep.json": b'{"blocks": ' + deep + b"}",
        "deep.toml": b"blocks = " + b"[" * 5000 + b"]" * 5000 + b"\n",
        "latin1.json": '{"blocks": "é"}'.encode("latin-1"),
        "list.json": b"[]",
        "blocks-number.json": b'{"blocks": 3}',
        "N-string.json": b'{"blocks": [{"algorithms": ["flash2"], "N": ["8"], "d": [2], "M": [64]}]}',
        "N-nested.json": b'{"blocks": [{"algorithms": ["flash2"], "N": [[8]], "d": [2], "M": [64]}]}',
        "N-inf.json": b'{"blocks": [{"algorithms": ["flash2"], "N": [1e400], "d": [2], "M": [64]}]}',
        "bad-import.json": b'{"imports": ["no.such.module"], "blocks": [{"algorithms": ["flash2"], "N": [8], "d": [2], "M": [64]}]}',
        "wrong-suffix.yaml": b"blocks: []",
    }
    grids_p = {k: root / f"grid-{k}" for k in grids}
    for k, b in grids.items():
        grids_p[k].write_bytes(b)
    (root / "grid-folder.json").mkdir(exist_ok=True)
    grids_p["a-folder.json"] = root / "grid-folder.json"
    (root / "grid-good.json").write_text(json.dumps(GOOD_GRID))
    return {"store": stores_p, "baseline": baselines_p, "grid": grids_p}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Path]]:
    return broken_files(tmp_path_factory.mktemp("broken"))


# the contract ----------------------------------------------------------------------------------------------


def call(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as e:  # --help / --version
            rc = e.code if isinstance(e.code, int) else 0
    return rc, out.getvalue(), err.getvalue()


def check_contract(argv: list[str], rc: int, out: str, err: str) -> None:
    assert "Traceback" not in err, (argv, err)
    assert rc in (0, 2), (argv, rc, err[-2000:])
    if rc == 2:
        assert err.count("\n") == 1 and err.strip(), (argv, err)
    if rc == 0 and "--json" in argv and "--help" not in argv:
        assert isinstance(json.loads(out), dict), (argv, out[:200])


# argument vectors ------------------------------------------------------------------------------------------


EDGES = st.sampled_from(EDGE)


def mostly(valid, edge=EDGES, p_edge: float = 0.12):
    """``valid`` values, and an edge or garbage value with probability ``p_edge``."""
    return PERCENT.flatmap(lambda u: edge if u < 100 * p_edge else valid)


# a percentile drawn about uniformly (Hypothesis's integers and floats favour boundary values such as 0)
PERCENT = st.sampled_from(range(100))


def chance(draw, p: float) -> bool:
    """True with probability about ``p``."""
    return draw(PERCENT) < 100 * p


def _opt(draw, name: str, values, p_drop: float = 0.3) -> list[str]:
    if chance(draw, p_drop):
        return []
    return [name, draw(values)]


@st.composite
def run_argv(draw) -> list[str]:
    count_only = chance(draw, 0.75)
    # arithmetic only at small sizes, or at sizes a numeric run must refuse before allocating anything
    if count_only:  # any size: counts need no arithmetic
        size = mostly(st.one_of(st.integers(1, 64), st.integers(1, 10**6), st.sampled_from([2**20, 10**30, 10**400])).map(str))
    else:
        size = mostly(st.integers(1, 24).map(str), st.sampled_from(
            [v for v in EDGE if v not in ("2", "3", "1_000", "0x10", "1e3")] + ["16777217", "16385"]))
    alg = draw(mostly(st.sampled_from(ALGORITHMS), st.sampled_from(["nope", "", "FLASH2"]), 0.05))
    a = ["run", alg]
    N, d = _opt(draw, "--N", size, 0), _opt(draw, "--d", size, 0)  # missing ones: other_argv
    a += N + d
    try:
        dd = int(d[1])
    except (IndexError, ValueError):
        dd = 8
    # M: often enough for every algorithm at this d (square tiling wants 4(d+1)²-ish), sometimes anything
    lo = 8 * abs(dd) + 64
    fits = st.integers(lo, lo + 8 * (abs(dd) + 2) ** 2) if abs(dd) < 10**6 else st.just(10**40)
    a += _opt(draw, "--M", mostly(st.one_of(fits, fits, st.integers(1, 40), st.integers(10**5, 10**40)).map(str)), 0)
    a += _opt(draw, "--dv", size, 0.7) + _opt(draw, "--seed", mostly(st.integers(0, 2**64).map(str)), 0.6)
    a += _opt(draw, "--backend", st.sampled_from(["numpy", "numpy", "cupy", "tpu"]), 0.7)
    if alg == "poly" or chance(draw, 0.1):
        a += _opt(draw, "--eps", st.sampled_from(FLOATS), 0.2) + _opt(draw, "--B", st.sampled_from(FLOATS), 0.2)
    if count_only:
        a.append("--count-only")
    return a


@st.composite
def pebble_argv(draw) -> list[str]:
    size = mostly(st.integers(1, 3).map(str), st.sampled_from(["12", "46", "47", "10000000000", "x", "-5", "0"]), 0.2)
    a = ["pebble"] + _opt(draw, "--N", size, 0) + _opt(draw, "--d", size, 0)
    a += _opt(draw, "--M", mostly(st.integers(1, 40).map(str)), 0)
    a += _opt(draw, "--graph", mostly(st.sampled_from(["attention", "matmul"]), st.just("tree")), 0.6)
    for k in ("--m", "--k", "--n"):
        a += _opt(draw, k, size, 0.85)
    a += _opt(draw, "--tree", mostly(st.sampled_from(["balanced", "chain"]), st.just("oak")), 0.7)
    a += _opt(draw, "--engine", mostly(st.sampled_from(["astar", "astar", "z3"]), st.sampled_from(["cpsat", "sat"])), 0.6)
    a += _opt(draw, "--horizon", mostly(st.integers(1, 12).map(str), st.sampled_from(["100000", "x", "0", "-1"])), 0.4)
    # never the default 60 s: at most 0.1 s, or a value that must be refused
    a += ["--time-limit", draw(mostly(st.sampled_from(["0.05", "0.1", "0.02"]), st.sampled_from(["0", "-1", "nan", "inf", "x"]), 0.2))]
    a += _opt(draw, "--max-states", mostly(st.sampled_from(["1", "100", "100000"]), st.sampled_from(["0", "-3", "x"])), 0.7)
    for flag in ("--no-recompute", "--schedule"):
        if draw(st.booleans()):
            a.append(flag)
    return a


@st.composite
def sweep_argv(draw, files) -> list[str]:
    grids = files["grid"]
    grid = draw(st.sampled_from([str(grids["not-json.json"].parent / "grid-good.json")] * 20 + [str(p) for p in grids.values()] + ["missing.json"]))
    stores = [str(p) for p in files["store"].values()]
    store = draw(st.sampled_from(["new"] * 20 + stores))
    if store == "new":
        store = str(files["store"]["garbage"].parent / f"fuzz-{next(_store_ids)}.sqlite")
    a = ["sweep", "--grid", grid, "--store", store, "--no-progress"]
    a += _opt(draw, "--workers", mostly(st.just("0"), st.sampled_from(["-1", "x", "1e3"]), 0.2), 0.0)
    a += _opt(draw, "--batch", mostly(st.sampled_from(["1", "2", "64"]), st.sampled_from(["0", "-4", "x"]), 0.2), 0.5)
    a += _opt(draw, "--scheduler", st.sampled_from(["nope", "host:8786", ""]), 0.85)
    return a


@st.composite
def gate_argv(draw, files) -> list[str]:
    base = draw(st.sampled_from([str(p) for p in files["baseline"].values()] + ["missing-baseline.json"]))
    a = ["gate", "--baseline", base, "--no-progress", "--no-verify"]
    a += _opt(draw, "--grid", st.sampled_from([str(p) for p in files["grid"].values()]), 0.5)
    a += _opt(draw, "--workers", st.sampled_from(["0", "-1", "x"]), 0.5)
    return a


@st.composite
def other_argv(draw) -> list[str]:
    return draw(st.sampled_from([
        [], ["algorithms"], ["bounds"], ["algorithms", "--json"], ["bounds", "--json"], ["verify", "--list"],
        ["verify", "--claim", "no.such.claim"], ["verify", "--solver", "yices"], ["report", "--workers", "x"],
        ["report", "--store", "no/such/store.sqlite"], ["report", "--grid"], ["nope"], ["--version"], ["-h"],
        ["run"], ["run", "flash2"], ["pebble"], ["sweep", "--workers"], ["gate", "--bogus"],
    ]))


def argv_strategy(files):
    base = st.one_of(run_argv(), run_argv(), run_argv(), pebble_argv(), pebble_argv(), sweep_argv(files),
                     sweep_argv(files), gate_argv(files), other_argv())

    @st.composite
    def with_extras(draw) -> list[str]:
        a = draw(base)
        if a and chance(draw, 0.05):
            a = a + draw(st.sampled_from(JUNK))
        if a and a[0] in ("run", "pebble", "sweep", "gate", "algorithms", "bounds") and draw(st.booleans()):
            a = a + ["--json"]
        return a

    return with_extras()


def test_cli_fuzz_no_traceback_exit_0_or_2_one_line_errors_json_objects(files) -> None:
    examples = _examples() or settings.default.max_examples
    ran: list[tuple[str, int]] = []
    good_grid = str(files["grid"]["not-json.json"].parent / "grid-good.json")
    new_store = str(files["grid"]["not-json.json"].parent / "fuzz-explicit.sqlite")

    # explicit vectors first: each command's work is reached at least once, whatever the draws
    @example(["run", "flash2", "--N", "64", "--d", "8", "--M", "1024", "--json"])
    @example(["run", "poly", "--N", "32", "--d", "4", "--M", "4096", "--eps", "0.1", "--B", "0.5", "--count-only", "--json"])
    @example(["pebble", "--N", "2", "--d", "1", "--M", "9", "--time-limit", "0.1", "--json"])
    @example(["sweep", "--grid", good_grid, "--store", new_store, "--workers", "0", "--no-progress", "--json"])
    @seed(int(os.environ.get("ATTNIO_FUZZ_SEED", "20261201")))
    @settings(max_examples=examples)
    @given(argv_strategy(files))
    def fuzz(argv: list[str]) -> None:
        rc, out, err = call(argv)
        check_contract(argv, rc, out, err)
        ran.append((argv[0] if argv else "", rc))

    fuzz()
    assert len(ran) >= examples, f"only {len(ran)} of {examples} argument vectors ran"
    assert {c for c, rc in ran[:4] if rc == 0} == {"run", "pebble", "sweep"}, ran[:4]
    # the drawn vectors reach the commands' work, not only their refusals
    assert sum(rc == 0 for _, rc in ran[4:]) >= 0.1 * len(ran[4:]), sorted(set(ran))


# broken files: exit 2, one line, the file unchanged ------------------------------------------------------------


def _sha(p: Path) -> str:
    if p.is_dir():
        return "folder:" + ",".join(sorted(x.name for x in p.iterdir()))
    return hashlib.sha256(p.read_bytes()).hexdigest()


def _cases() -> list[tuple[str, str]]:
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = broken_files(Path(d))
        return [(kind, name) for kind in ("store", "baseline", "grid") for name in f[kind]]


@pytest.mark.parametrize("kind, name", _cases(), ids=lambda x: x)
def test_broken_file_exits_2_with_one_line_and_is_left_unchanged(files, kind: str, name: str, tmp_path: Path) -> None:
    p = files[kind][name]
    good_grid = str(p.parent / "grid-good.json")
    argv = {
        "store": ["sweep", "--grid", good_grid, "--store", str(p), "--workers", "0", "--no-progress"],
        "baseline": ["gate", "--baseline", str(p), "--grid", good_grid, "--workers", "0", "--no-progress", "--no-verify"],
        "grid": ["sweep", "--grid", str(p), "--store", str(tmp_path / "s.sqlite"), "--workers", "0", "--no-progress"],
    }[kind]
    before = _sha(p)
    siblings = sorted(x.name for x in p.parent.iterdir())
    rc, out, err = call(argv)
    assert rc == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert str(p) in err or p.name in err, err
    if kind == "store":
        assert "is not a valid attnio store" in err, err
    assert _sha(p) == before, "the refused file was changed"
    assert sorted(x.name for x in p.parent.iterdir()) == siblings, "files were created next to the refused one"
