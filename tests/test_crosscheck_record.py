"""The proof record (reports/crosscheck.json, :mod:`attnio.solver.record`; written by `attnio verify --solver both
--record reports/crosscheck.json`, brought up to date by `attnio verify --stale --solver both --record
reports/crosscheck.json`) against the claims and the encoding as they are now.

The freshness tests call no solver: they check that every claim of the catalog has an entry whose fingerprint is
the claim's now, proved by z3 and by cvc5, under the encoding digest of the sources as they are now, so a change
to any claim, a symbol's domain or the translator fails here until the record is brought up to date. The
per-claim re-proofs themselves run in CI (`attnio verify --stale --solver both`, .ci/run) for the claims a change
touched, and over the whole catalog in the nightly run (tools/nightly.sh). The `--stale` tests run a fake
verifier that records what it was asked to prove.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from attnio.cli import main
from attnio.reports import sources
from attnio.solver import record
from attnio.solver.claims import all_claims
from attnio.solver.verify import Verdict, fingerprint

RECORD = Path(__file__).resolve().parent.parent / "reports" / "crosscheck.json"
REGENERATE = "attnio verify --stale --solver both --record reports/crosscheck.json"


def test_committed_record_is_fresh_for_every_current_claim_without_running_a_solver() -> None:
    rec = record.load(RECORD)
    assert rec is not None, f"{RECORD} missing or unreadable"
    assert rec.get("schema") == record.SCHEMA, f"record schema {rec.get('schema')!r}, not {record.SCHEMA}: run `{REGENERATE}`"
    assert rec.get("encoding") == record.encoding_digest(), (
        f"the encoding (solver/record.py ENCODING_MODULES) changed since the record: run `{REGENERATE}`")
    current = {c.id: fingerprint(c) for c in all_claims()}
    bad = sorted(i for i, fp in current.items() if not record.entry_fresh(rec["claims"].get(i), fp))
    assert bad == [], f"claims new, changed or not proved by both solvers since the record (run `{REGENERATE}`): {bad}"
    assert set(rec["claims"]) == set(current), f"entries of removed claims: {sorted(set(rec['claims']) - set(current))}"
    assert set(rec.get("versions") or {}) == {"z3", "cvc5"}


def test_committed_record_has_no_disagreement() -> None:
    rec = json.loads(RECORD.read_text(encoding="utf-8"))["claims"]
    answers = {i: r["solvers"].get("cvc5") for i, r in rec.items()}
    assert "disagrees" not in answers.values(), [i for i, a in answers.items() if a == "disagrees"]
    assert all(r["status"] == "proved" and r["solvers"].get("z3") == "proved" for r in rec.values())


def test_the_report_counts_the_record_only_under_this_encoding() -> None:
    s = sources.crosscheck_summary(str(RECORD))
    assert s is not None
    if s["header_matches"]:
        assert s["stale"] == [] and s["z3_proved"] == s["cvc5_proved"] == s["claims"] == len(all_claims())
    else:  # other solver versions here than the record's: nothing counted, every claim named stale
        assert s["cvc5_proved"] == 0 and len(s["stale"]) == s["claims"]


def test_encoding_digest_covers_each_encoding_module(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import importlib.util
    from copy import copy as dataclass_copy

    before = record.encoding_digest()
    assert len(before) == 64 and before == record.encoding_digest()
    spec = importlib.util.find_spec("attnio.solver.translator")
    copy = tmp_path / "translator.py"
    copy.write_bytes(Path(spec.origin).read_bytes() + b"\n# one more line\n")
    real = importlib.util.find_spec

    def find(name: str, *a: object):
        s = real(name, *a)
        if name == "attnio.solver.translator":  # a copy: find_spec returns the imported module's own __spec__
            s = dataclass_copy(s)
            s.origin = str(copy)
        return s

    monkeypatch.setattr(importlib.util, "find_spec", find)
    assert record.encoding_digest() != before
    assert set(record.ENCODING_MODULES) >= {"attnio.solver.translator", "attnio.solver.engine", "attnio.solver.relax",
                                            "attnio.solver.logic", "attnio.solver.verify", "attnio.bounds.expr"}


class _FakeVerifier:
    """Stands for :func:`attnio.solver.verify.verify_all`: remembers the ids it was asked for, proves them all
    (or refutes those in ``refute``)."""

    def __init__(self, refute: tuple[str, ...] = ()) -> None:
        self.asked: list[list[str]] = []
        self.refute = refute

    def __call__(self, ids, solver="z3", jobs=None, about=None):  # type: ignore[no-untyped-def]
        ids = list(ids)
        self.asked.append(ids)
        out = []
        for i in ids:
            st = "refuted" if i in self.refute else "proved"
            solvers = {"z3": st, "cvc5": "proved"} if st == "proved" and solver == "both" else {"z3": st}
            out.append(Verdict(i, "inequality", i, st, 0.0, solver=solver, solvers=solvers))
        return out


def _stale_run(rec: Path, capsys: pytest.CaptureFixture, *extra: str) -> tuple[int, dict]:
    code = main(["verify", "--stale", "--solver", "both", "--record", str(rec), "--json", *extra])
    return code, json.loads(capsys.readouterr().out)


def test_stale_proves_only_missing_or_changed_claims_and_updates_the_record_atomically(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from attnio.solver import verify

    fps = {"a": "f1", "b": "f2", "c": "f3"}
    monkeypatch.setattr(record, "current_fingerprints", lambda: dict(fps))
    monkeypatch.setattr(record, "header", lambda: {"versions": {"z3": "9", "cvc5": "9"}, "encoding": "e1"})
    fake = _FakeVerifier()
    monkeypatch.setattr(verify, "verify_all", fake)
    rec = tmp_path / "proofs.json"

    assert _stale_run(rec, capsys)[0] == 0  # no record: every claim
    assert fake.asked == [["a", "b", "c"]]
    assert list(tmp_path.iterdir()) == [rec]  # written in place of nothing, no temporary left
    data = json.loads(rec.read_text())
    assert (data["schema"], data["encoding"], data["versions"]) == (record.SCHEMA, "e1", {"z3": "9", "cvc5": "9"})
    assert data["claims"]["b"] == {"fingerprint": "f2", "status": "proved", "solvers": {"z3": "proved", "cvc5": "proved"}}

    code, out = _stale_run(rec, capsys)  # fresh: no solver call, the file unchanged
    assert (code, out["stale"], out["claims"], len(fake.asked)) == (0, [], 0, 1)

    fps["b"] = "f2x"  # one claim changed, one added, one removed
    fps["d"] = "f4"
    del fps["c"]
    assert _stale_run(rec, capsys)[0] == 0
    assert fake.asked[-1] == ["b", "d"]
    data = json.loads(rec.read_text())
    assert sorted(data["claims"]) == ["a", "b", "d"] and data["claims"]["b"]["fingerprint"] == "f2x"

    monkeypatch.setattr(record, "header", lambda: {"versions": {"z3": "9", "cvc5": "9"}, "encoding": "e2"})
    assert _stale_run(rec, capsys)[0] == 0  # the encoding changed: every claim again
    assert fake.asked[-1] == ["a", "b", "d"] and json.loads(rec.read_text())["encoding"] == "e2"
    monkeypatch.setattr(record, "header", lambda: {"versions": {"z3": "10", "cvc5": "9"}, "encoding": "e2"})
    assert _stale_run(rec, capsys)[0] == 0  # a solver version changed: every claim again
    assert fake.asked[-1] == ["a", "b", "d"]


def test_stale_fails_on_a_claim_not_proved_and_keeps_it_stale(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    from attnio.solver import verify

    monkeypatch.setattr(record, "current_fingerprints", lambda: {"a": "f1", "b": "f2"})
    monkeypatch.setattr(record, "header", lambda: {"versions": {"z3": "9", "cvc5": "9"}, "encoding": "e1"})
    fake = _FakeVerifier(refute=("b",))
    monkeypatch.setattr(verify, "verify_all", fake)
    rec = tmp_path / "proofs.json"
    code, out = _stale_run(rec, capsys)
    assert code == 1 and out["failed"] == 1
    assert json.loads(rec.read_text())["claims"]["b"]["status"] == "refuted"
    _stale_run(rec, capsys)
    assert fake.asked[-1] == ["b"]  # a refuted entry is never fresh
    # without --record the default record is read and nothing is written
    monkeypatch.chdir(tmp_path)
    assert main(["verify", "--stale", "--solver", "z3"]) == 1  # b refuted
    assert fake.asked[-1] == ["a", "b"] and not (tmp_path / "reports").exists()
    assert "no record" in capsys.readouterr().out
    assert main(["verify", "--stale", "--claim", "a"]) == 2


def test_the_report_reads_the_record_without_cvc5_installed(monkeypatch) -> None:
    """The README's first command installs z3 only: the report still counts the committed record (a solver not
    installed here cannot disagree with it), while a different installed version makes every entry stale."""
    from attnio.reports.sources import crosscheck_summary
    from attnio.solver import record

    versions = record.solver_versions()
    monkeypatch.setattr(record, "solver_versions", lambda: {**versions, "cvc5": "missing"})
    s = crosscheck_summary()
    assert s is not None and s["header_matches"] and not s["stale"] and s["cvc5_proved"] == s["claims"]
    monkeypatch.setattr(record, "solver_versions", lambda: {**versions, "cvc5": "0.0.1"})
    s = crosscheck_summary()
    assert not s["header_matches"] and len(s["stale"]) == s["claims"] and s["cvc5_proved"] == 0
