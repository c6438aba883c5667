"""The report's "What reaches DRAM" section (reports/section_dram.py) from a fixture bracket table."""

from __future__ import annotations

import json

from attnio.reports.render import render_markdown
from attnio.reports.section_dram import section


def _fixture(tmp_path):  # noqa: ANN001, ANN202
    rows = [{"source": "paper A", "quantity": "DRAM GB", "published": "4.4 GB", "published_interval": [4.4, 4.4],
             "lockstep": 2.03, "drift_max": 2.5, "inside": False, "command": "replay(...)"},
            {"source": "paper B", "quantity": "hit %", "published": "2.36%", "published_interval": [2.36, 2.36],
             "lockstep": 74.93, "drift_max": 0.0, "inside": True, "command": "replay(...)"}]
    p = tmp_path / "dram.json"
    p.write_text(json.dumps({"meta": {"command": "python benchmarks/bench_l2.py --write-report-data"}, "rows": rows}))
    return p


def test_section_renders_the_bracket_rows_from_a_fixture(tmp_path) -> None:
    s = section(None, path=_fixture(tmp_path))
    tables = [b for b in s.blocks if b[0] == "table"]
    bracket = tables[0]
    assert [r[0] for r in bracket[2]] == ["paper A", "paper B"]
    assert [r[-1] for r in bracket[2]] == ["no", "yes"]
    md = render_markdown([s])
    assert "## What reaches DRAM" in md and "1 of 2 published numbers fall inside" in md
    # the live tables: one floor row per preset, one requested-vs-DRAM row per tensor and the total
    from attnio.bounds.dram import L2_PRESETS

    assert len(tables[1][2]) == len(L2_PRESETS)
    assert [r[0] for r in tables[2][2]] == ["Q", "K", "V", "O", "L", "total"]
    assert all(r[1] <= r[2] for r in tables[2][2])  # requested <= sector bytes


def test_section_without_the_table_says_so_in_one_line(tmp_path) -> None:
    s = section(None, path=tmp_path / "absent.json")
    first = [b for b in s.blocks if b[0] == "p"][1]
    assert "No bracket table (reports/dram.json)" in first[1] and "\n" not in first[1]
    assert sum(b[0] == "table" for b in s.blocks) == 2  # floors and the per-tensor table still render


def test_section_is_registered() -> None:
    from attnio.reports import report, section_dram

    assert section_dram.section in report.SECTIONS


def test_section_states_the_fa1_row_with_its_requested_bytes_and_l2_sweep(tmp_path) -> None:
    rows = [{"source": "FA Fig. 2", "quantity": "DRAM GB (FA-1's own schedule)", "published": "4.4 GB",
             "published_interval": [4.4, 4.4], "lockstep": 3.37, "drift_max": 3.354, "inside": False,
             "command": "replay_flash1(...)", "requested_GB": 4.605,
             "lockstep_GB_by_l2_MiB": {"40": 3.37, "32": 4.327, "20": 4.507}}]
    p = tmp_path / "dram.json"
    p.write_text(json.dumps({"meta": {"command": "x"}, "rows": rows}))
    md = render_markdown([section(None, path=p)])
    assert "requests 4.605 GB" in md and "4.4 GB is outside the bracket, whose ends differ by 0.5%" in md
    assert "40 MiB: 3.37 GB, 32 MiB: 4.327 GB, 20 MiB: 4.507 GB" in md
    rows[0]["inside"] = True
    p.write_text(json.dumps({"meta": {"command": "x"}, "rows": rows}))
    assert "4.4 GB is inside the bracket" in render_markdown([section(None, path=p)])
