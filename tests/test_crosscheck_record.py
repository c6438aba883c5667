"""The committed cvc5 record (reports/crosscheck.json, written by `attnio verify --solver both --record
reports/crosscheck.json`) against the claims as they are now. These tests do not run cvc5 (that takes minutes):
they check that the record is not stale, so a change to any claim, or to a symbol's domain, fails here until
the second opinion is re-run and the record committed; and that cvc5 disagreed with z3 nowhere in it.
"""

from __future__ import annotations

import json
from pathlib import Path

from attnio.reports import sources
from attnio.solver.claims import all_claims
from attnio.solver.verify import fingerprint

RECORD = Path(__file__).resolve().parent.parent / "reports" / "crosscheck.json"


def test_committed_cvc5_record_is_fresh_for_every_current_claim_without_running_cvc5() -> None:
    s = sources.crosscheck_summary(str(RECORD))
    assert s is not None, f"{RECORD} missing or unreadable"
    assert s["stale"] == [], f"claims new or changed since the cvc5 record (re-run the record): {s['stale']}"
    assert s["z3_proved"] == s["claims"] == len(all_claims())


def test_committed_cvc5_record_has_no_disagreement_and_no_claim_it_does_not_know() -> None:
    rec = json.loads(RECORD.read_text(encoding="utf-8"))["claims"]
    current = {c.id: fingerprint(c) for c in all_claims()}
    assert set(rec) == set(current), sorted(set(rec) ^ set(current))
    answers = {i: r["solvers"].get("cvc5") for i, r in rec.items()}
    assert "disagrees" not in answers.values(), [i for i, a in answers.items() if a == "disagrees"]
    assert all(r["status"] == "proved" for r in rec.values())
