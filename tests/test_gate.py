"""The regression gate: missing/corrupted baseline, planted regressions, --update.

The figures besides the sweep's (the Triton kernels counted on the interpreter above all) are computed once for
the module (:func:`_figures_once`); each collect still runs the sweep and the comparison. The planted
regressions of the default figures are checked with :func:`gate.compare` against one module-wide collect, and
one test runs `attnio gate` end to end on them.
"""

from __future__ import annotations

import argparse
import copy
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from attnio.cli import gate as gate_cmd
from attnio.reports import gate, sources

GRID = {"numeric_max_N": 0, "blocks": [{"algorithms": ["flash2"], "N": [16, 1024], "d": [4, 16], "M": [128, 4096]}]}

# one worker for this module and test_report.py: the Triton count (conftest.triton_measured) is made once
pytestmark = pytest.mark.xdist_group("triton-counts")


@pytest.fixture(scope="module", autouse=True)
def _figures_once(triton_once: None) -> Iterator[None]:
    """The figures besides the sweep's (attnio.reports.figures.gate_entries: deterministic, and seconds to
    compute) computed once per argument for the module; the Triton kernels counted once (conftest.triton_once)."""
    from attnio.reports import figures

    real = figures.gate_entries
    seen: dict[bool, dict] = {}

    def once(*, default_grid: bool = True, **kw: object) -> dict:
        if kw:
            return real(default_grid=default_grid, **kw)
        if default_grid not in seen:
            seen[default_grid] = real(default_grid=default_grid)
        return copy.deepcopy(seen[default_grid])

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(figures, "gate_entries", once)
        yield


@pytest.fixture
def grid_file(tmp_path: Path) -> Path:
    p = tmp_path / "grid.json"
    p.write_text(json.dumps(GRID))
    return p


@pytest.fixture
def fake_verdicts(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The verifier's answer, under the test's control (the real solver is another helper's, and slow)."""
    vs = [{"id": "claim.a", "verdict": "proved", "constant": "4", "claim": "", "solver": "z3"},
          {"id": "claim.b", "verdict": "proved", "constant": None, "claim": "", "solver": "z3"}]
    monkeypatch.setattr(sources, "claim_ids", lambda: [v["id"] for v in vs])
    monkeypatch.setattr(sources, "verify_ids", lambda ids: [copy.deepcopy(v) for v in vs if v["id"] in ids])
    return vs


def _gate(baseline: Path, grid: Path, *extra: str) -> int:
    p = argparse.ArgumentParser()
    gate_cmd.add_arguments(p)
    return gate_cmd.main(p.parse_args(["--baseline", str(baseline), "--grid", str(grid), "--workers", "0", "--no-progress", *extra]))


def test_missing_baseline_is_a_clear_error_exit_2(tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture) -> None:
    assert _gate(tmp_path / "none.json", grid_file) == 2
    err = capsys.readouterr().err
    assert "no baseline at" in err and "attnio gate --update" in err and "Traceback" not in err


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"\x00\xff garbage", "not valid JSON"),
        (b'{"schema": 1, "io": {', "not valid JSON"),
        (b'{"schema": 99, "io": {}}', "not an attnio baseline"),
        (b"[1, 2, 3]", "not an attnio baseline"),
        (b'{"schema": 1, "io": {"k": {"reads": "many"}}}', "entry $.io.k is malformed"),
        (b'{"schema": 1, "io": {"k": {"reads": "many", "writes": 2}}}', "entry $.io.k.reads is malformed"),
        (b'{"schema": 1, "io": {"k": {}}}', "entry $.io.k is malformed"),
        (b'{"schema": 1, "io": {}, "bounds": [1]}', "entry $.bounds is malformed"),
        (b'{"schema": 1, "io": {}, "formulas": {"flash2": 3}}', "entry $.formulas.flash2 is malformed"),
        (b'{"schema": 1, "io": {}, "formulas": {"flash2": {"reads": 3, "writes": ["sym", "N"]}}}', "entry $.formulas.flash2.reads is malformed"),
        (b'{"schema": 1, "io": {}, "bounds": {"b": ["lower"]}}', "entry $.bounds.b is malformed"),
        (b'{"schema": 1, "io": {}, "constants": {"N=1|d=1|M=1": "2"}}', "entry $.constants['N=1|d=1|M=1'] is malformed"),
        (b'{"schema": 1, "io": {}, "constants": {"c": {"lower_constant": [1]}}}', "lower_constant is malformed"),
        (b'{"schema": 1, "io": {}, "verdicts": {"c1": "proved"}}', "entry $.verdicts.c1 is malformed"),
        (b'{"schema": 1, "io": {}, "verdicts": {"c1": {"verdict": 1}}}', "entry $.verdicts.c1.verdict is malformed"),
        (b'{"schema": 1, "io": {}, "formulas": {"f": {"reads": ' + b"[" * 100 + b"]" * 100 + b', "writes": []}}}', "nested deeper than 64"),
        (b'{"schema": 1, "io": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    ],
)
def test_corrupted_baseline_is_a_clear_error_exit_2(tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture, monkeypatch: pytest.MonkeyPatch, content: bytes, fragment: str) -> None:
    """The whole baseline is validated (JSON Schema) before any figure is collected or verification runs."""
    from attnio.reports import gate as gate_mod

    def no_collect(*a: object, **k: object) -> None:
        raise AssertionError("collect ran before the baseline was validated")

    monkeypatch.setattr(gate_mod, "collect", no_collect)
    b = tmp_path / "baseline.json"
    b.write_bytes(content)
    assert _gate(b, grid_file) == 2
    err = capsys.readouterr().err
    assert fragment in err and err.count("\n") == 1, err
    assert b.read_bytes() == content


def test_update_then_gate_passes_and_the_file_is_written_atomically(tmp_path: Path, grid_file: Path, fake_verdicts: list) -> None:
    b = tmp_path / "baseline.json"
    assert _gate(b, grid_file, "--update") == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["baseline.json", "grid.json"]  # no temp file left
    data = json.loads(b.read_text())
    assert len(data["io"]) == 8 and data["verdicts"]["claim.a"]["verdict"] == "proved"
    assert _gate(b, grid_file) == 0


def test_planted_one_word_io_regression_fails_the_gate(tmp_path: Path, grid_file: Path, fake_verdicts: list, capsys: pytest.CaptureFixture) -> None:
    b = tmp_path / "baseline.json"
    _gate(b, grid_file, "--update")
    data = json.loads(b.read_text())
    key = sorted(data["io"])[3]
    data["io"][key]["writes"] -= 1  # the baseline moved one word fewer: this run's count grew by one word
    b.write_text(json.dumps(data))
    capsys.readouterr()
    assert _gate(b, grid_file) == 1
    err = capsys.readouterr().err
    assert f"io {key}: writes" in err and "(+1 words)" in err


@pytest.mark.parametrize("now", ["unknown", "vacuous", "refuted", "error"])
def test_planted_lost_proof_fails_the_gate_at_once(tmp_path: Path, grid_file: Path, fake_verdicts: list, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, now: str) -> None:
    b = tmp_path / "baseline.json"
    _gate(b, grid_file, "--update")
    fake_verdicts[1]["verdict"] = now  # the solver no longer proves claim.b (vacuous: its regime became empty)
    calls = []
    real = sources.verify_ids
    monkeypatch.setattr(sources, "verify_ids", lambda ids: calls.extend(ids) or real(ids))
    capsys.readouterr()
    assert _gate(b, grid_file) == 1
    out = capsys.readouterr()
    assert calls.count("claim.b") == 1  # verdicts are deterministic: a lost proof is not re-verified
    assert f"verdict claim.b: proved -> {now} (proof lost)" in out.err


def test_an_improved_count_is_a_note_not_a_failure(tmp_path: Path, grid_file: Path, fake_verdicts: list, capsys: pytest.CaptureFixture) -> None:
    b = tmp_path / "baseline.json"
    _gate(b, grid_file, "--update")
    data = json.loads(b.read_text())
    key = sorted(data["io"])[0]
    data["io"][key]["reads"] += 5
    b.write_text(json.dumps(data))
    assert _gate(b, grid_file) == 0
    assert "improved" in capsys.readouterr().out


def _figures() -> dict:
    from attnio.bounds.expr import to_json
    from attnio.bounds.symbols import M, N, d

    return {
        "schema": 1,
        "io": {"x|N=1": {"reads": 10, "writes": 3}},
        "bounds": {
            "lb": {"kind": "lower", "expr": to_json(N * N * d * d / M), "regime": [to_json(d * d <= M)], "constant": "1/4"},
            "ub": {"kind": "upper", "expr": to_json(4 * N * N * d * d / M), "regime": [], "constant": "4"},
        },
        "verdicts": {"lb": {"verdict": "proved", "constant": "1/4"}},
    }


def test_compare_flags_a_changed_bound_expression_structurally() -> None:
    from attnio.bounds.expr import to_json
    from attnio.bounds.symbols import M, N, d

    base, cur = _figures(), _figures()
    cur["bounds"]["lb"]["expr"] = to_json(N * N * d / M)
    res = gate.compare(base, cur)
    assert len(res.problems) == 1 and res.problems[0].startswith("bounds lb: expr changed")


@pytest.mark.parametrize(
    "where, new, worse",
    [(("bounds", "lb"), "1/8", True), (("bounds", "lb"), "1/2", False), (("bounds", "ub"), "5", True), (("bounds", "ub"), "3", False),
     (("verdicts", "lb"), "1/5", True), (("verdicts", "lb"), None, True)],
)
def test_compare_fails_only_when_a_constant_worsens(where: tuple, new: str | None, worse: bool) -> None:
    base, cur = _figures(), _figures()
    cur[where[0]][where[1]]["constant"] = new
    res = gate.compare(base, cur)
    assert res.ok is not worse, (res.problems, res.notes)


def test_compare_flags_removed_bounds_and_missing_configurations() -> None:
    base, cur = _figures(), _figures()
    del cur["bounds"]["ub"]
    del cur["io"]["x|N=1"]
    probs = gate.compare(base, cur).problems
    assert "bounds ub: removed" in probs and "io x|N=1: configuration missing from this run" in probs


def test_identical_figures_pass_and_new_entries_are_notes() -> None:
    base, cur = _figures(), _figures()
    cur["io"]["y|N=2"] = {"reads": 1, "writes": 1}
    res = gate.compare(base, cur)
    assert res.ok and any("new entries" in n for n in res.notes)


# figures beyond the grid: every formula table, backward and workload counts ------------------------------


@pytest.fixture
def small_default_grid(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gate as run without --grid (every figure source, the workload and backward counts included), over a
    small default grid so the test stays quick."""
    from attnio.reports import grid as grid_mod

    monkeypatch.setattr(grid_mod, "default_grid", lambda: grid_mod.grid_from_dict(GRID))


@pytest.fixture(scope="module")
def default_baseline(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """One baseline written by ``attnio gate --update`` over the small default grid, shared by the tests below
    (each then plants its change in a copy)."""
    from attnio.reports import grid as grid_mod

    b = tmp_path_factory.mktemp("gate") / "baseline.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grid_mod, "default_grid", lambda: grid_mod.grid_from_dict(GRID))
        assert _gate_default(b, "--update") == 0
    return json.loads(b.read_text())


def _gate_default(baseline: Path, *extra: str) -> int:
    p = argparse.ArgumentParser()
    gate_cmd.add_arguments(p)
    return gate_cmd.main(p.parse_args(["--baseline", str(baseline), "--workers", "0", "--no-progress", "--no-verify", *extra]))


def test_the_gate_holds_every_formula_table_and_causal_and_gqa_counts(tmp_path: Path, small_default_grid: None, default_baseline: dict) -> None:
    from attnio.bounds import approx, costs

    b = tmp_path / "baseline.json"
    b.write_text(json.dumps(default_baseline))
    data = gate.load_baseline(b)  # the file is a valid baseline under the schema
    f = data["formulas"]
    assert set(costs.FORMULAS) <= set(f)
    assert {f"bwd:{n}" for n in costs.BACKWARD_FORMULAS} <= set(f)
    assert {f"approx:{n}" for n in approx.FORMULAS} <= set(f)
    for kind, table in (("workload", costs.WORKLOAD_FORMULAS), ("workload-bwd", costs.WORKLOAD_BACKWARD_FORMULAS)):
        assert {f"{kind}:{a}|{s}|{'causal' if c else 'full'}" for a, s, c in table} <= set(f)
    io = data["io"]
    for kind, alg in (("workload", "flash2"), ("workload-bwd", "flash2-bwd")):
        for sched in ("per-head", "grouped"):
            assert f"{kind}:{alg}|{sched}|gqa-prefill-causal" in io and f"{kind}:{alg}|{sched}|gqa-decode-causal" in io
    assert any(k.startswith("flash2-bwd|") for k in io) and len(io) > 8  # backward points beside the grid's rows
    assert _gate_default(b) == 0


@pytest.fixture(scope="module")
def default_current(default_baseline: dict) -> dict:
    """This run's figures over the small default grid (as `attnio gate --no-verify` collects them): one collect
    for the planted regressions below, which compare a changed copy of the baseline with it."""
    from attnio.reports import grid as grid_mod

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(grid_mod, "default_grid", lambda: grid_mod.grid_from_dict(GRID))
        cur = gate.collect(verify=False, workers=0)
    assert gate.compare(default_baseline, cur).ok  # the baseline the CLI wrote is this run's figures
    return cur


@pytest.mark.parametrize(
    "key",
    [
        "workload:flash2|grouped|gqa-decode-causal",  # a GQA schedule, causal
        "workload:flash2|per-head|gqa-prefill",  # a workload schedule without the mask
        "workload:standard|per-head|one-head-causal-odd",  # causal, ceilings
        "workload-bwd:flash2-bwd|grouped|gqa-prefill-causal",  # a workload backward
        "flash2-bwd|N=1000|d=13|dv=13|M=777|eps=-|B=-",  # a plain backward
    ],
)
def test_a_grown_workload_or_backward_count_fails_the_gate(key: str, default_baseline: dict, default_current: dict) -> None:
    data = copy.deepcopy(default_baseline)
    data["io"][key]["reads"] -= 1  # the baseline moved one word fewer: this run's count grew by one word
    res = gate.compare(data, default_current)
    assert not res.ok and [p for p in res.problems if p.startswith(f"io {key}: reads")] == res.problems, res.problems


@pytest.mark.parametrize("key", ["workload:flash2|grouped|causal", "workload-bwd:flash2-bwd|per-head|full", "approx:tiled", "bwd:flash2-bwd"])
def test_a_changed_workload_backward_or_approximate_formula_fails_the_gate(key: str, default_baseline: dict, default_current: dict) -> None:
    from attnio.bounds.expr import to_json
    from attnio.bounds.symbols import N

    data = copy.deepcopy(default_baseline)
    data["formulas"][key]["writes"] = to_json(N)  # the baseline's formula differs from this run's
    res = gate.compare(data, default_current)
    assert not res.ok and any(p.startswith(f"formulas {key}: writes changed") for p in res.problems), res.problems


def test_a_planted_regression_fails_attnio_gate_end_to_end(tmp_path: Path, small_default_grid: None, capsys: pytest.CaptureFixture, default_baseline: dict) -> None:
    """The CLI on a planted grown count and a planted changed formula: exit 1, both named on stderr."""
    from attnio.bounds.expr import to_json
    from attnio.bounds.symbols import N

    b = tmp_path / "baseline.json"
    data = copy.deepcopy(default_baseline)
    data["io"]["workload:flash2|grouped|gqa-decode-causal"]["reads"] -= 1
    data["formulas"]["bwd:flash2-bwd"]["writes"] = to_json(N)
    b.write_text(json.dumps(data))
    capsys.readouterr()
    assert _gate_default(b) == 1
    err = capsys.readouterr().err
    assert "io workload:flash2|grouped|gqa-decode-causal: reads" in err and "formulas bwd:flash2-bwd: writes changed" in err
