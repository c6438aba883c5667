"""``--json`` on the commands a CI job reads: one JSON object on stdout, the same exit codes as the text form."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnio.cli import main

GRID = {"numeric_max_N": 0, "blocks": [{"algorithms": ["flash2"], "N": [16, 64], "d": [4], "M": [128]}]}


@pytest.fixture
def grid_file(tmp_path: Path) -> Path:
    p = tmp_path / "grid.json"
    p.write_text(json.dumps(GRID))
    return p


def test_sweep_json_summary_counts_runs_and_resumes(tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture) -> None:
    store = str(tmp_path / "s.sqlite")
    argv = ["sweep", "--grid", str(grid_file), "--store", store, "--workers", "0", "--no-progress", "--json"]
    assert main(argv) == 0
    first = json.loads(capsys.readouterr().out)
    assert (first["configurations"], first["ran"], first["already_done"], first["errors"]) == (2, 2, 0, 0)
    assert main(argv) == 0
    second = json.loads(capsys.readouterr().out)
    assert (second["ran"], second["already_done"]) == (0, 2)


@pytest.mark.xdist_group("triton-counts")  # the Triton kernels counted once with test_gate.py's (conftest.triton_once)
@pytest.mark.usefixtures("triton_once")
def test_gate_json_reports_a_planted_regression_with_exit_1(tmp_path: Path, grid_file: Path, capsys: pytest.CaptureFixture) -> None:
    base = tmp_path / "baseline.json"
    common = ["--baseline", str(base), "--grid", str(grid_file), "--workers", "0", "--no-progress", "--no-verify"]
    assert main(["gate", *common, "--update"]) == 0
    capsys.readouterr()
    assert main(["gate", *common, "--json"]) == 0
    ok = json.loads(capsys.readouterr().out)
    assert ok["ok"] is True and ok["problems"] == [] and ok["configurations"] == 2
    data = json.loads(base.read_text())
    key = sorted(data["io"])[0]
    data["io"][key]["reads"] -= 1  # the baseline says one word fewer: this run's count "grew" by one
    base.write_text(json.dumps(data))
    assert main(["gate", *common, "--json"]) == 1
    bad = json.loads(capsys.readouterr().out)
    assert bad["ok"] is False and len(bad["problems"]) == 1 and "+1 words" in bad["problems"][0]


def test_verify_json_lists_each_witness_and_a_vacuous_claim_exits_1(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from attnio.bounds.symbols import M, N, d
    from attnio.solver import verify
    from attnio.solver.claims import Implication, by_id

    assert main(["verify", "--json", "--claim", "sy.meet"]) == 0
    out = json.loads(capsys.readouterr().out)
    (v,) = out["verdicts"]
    assert v["status"] == "proved" and set(v["witness"]) == {"M", "N", "d"}
    assert out["statuses"] == {"proved": 1} and out["proved_by"] == {"z3": 1} and out["witnesses"] == 1
    typo = Implication("typo", "inequality", "N ≤ N² for 4d² ≤ M ≤ d", (4 * d**2 <= M, M <= d), N <= N**2)
    monkeypatch.setattr(verify, "all_claims", lambda: [by_id("sy.meet"), typo])
    assert main(["verify", "--json", "--jobs", "0", "--claim", "typo"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["statuses"] == {"vacuous": 1} and out["verdicts"][0]["witness"] is None


def test_verify_record_needs_both_solvers_and_the_whole_catalog(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rec = tmp_path / "crosscheck.json"
    assert main(["verify", "--record", str(rec)]) == 2  # z3 only: no second opinion to record
    assert main(["verify", "--solver", "both", "--claim", "sy.meet", "--record", str(rec)]) == 2
    err = capsys.readouterr().err
    assert "--record" in err and "--solver both" in err
    assert not rec.exists()


def test_record_written_atomically_and_read_back_with_fingerprints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from attnio.cli.verify import write_record
    from attnio.reports import sources
    from attnio.solver.claims import all_claims, by_id
    from attnio.solver.verify import verify_claim

    rec = tmp_path / "crosscheck.json"
    ids = [c.id for c in all_claims()]
    v = verify_claim(by_id("sy.meet"), "both")
    assert v.solvers == {"z3": "proved", "cvc5": "proved"}
    write_record(str(rec), [v])
    assert list(tmp_path.iterdir()) == [rec]  # no temporary file left behind
    s = sources.crosscheck_summary(str(rec))
    assert s is not None and s["claims"] == len(ids)
    assert s["cvc5_proved"] == 1 and s["z3_proved"] == 1 and "sy.meet" not in s["stale"]
    assert len(s["stale"]) == len(ids) - 1  # every claim the record does not hold counts as not re-checked
    # a claim whose statement changed after the record no longer counts
    data = json.loads(rec.read_text())
    data["claims"]["sy.meet"]["fingerprint"] = "0" * 16
    rec.write_text(json.dumps(data))
    s = sources.crosscheck_summary(str(rec))
    assert s["cvc5_proved"] == 0 and "sy.meet" in s["stale"]
    assert sources.crosscheck_summary(str(tmp_path / "absent.json")) is None
    rec.write_text("{not json")
    assert sources.crosscheck_summary(str(rec)) is None
