"""Triton kernel configurations in the gate (baseline section ``triton``) and the report's "Triton kernels"
section, with the example user kernel; baselines are written to a tmp dir. Skipped without triton and torch."""

from __future__ import annotations

import json
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

pytest.importorskip("torch")
triton = pytest.importorskip("triton")

from attnio.reports import gate as report_gate  # noqa: E402

from attnio.triton import gate  # noqa: E402
from attnio.triton.count import TESTED_TRITON_VERSIONS  # noqa: E402

pytestmark = pytest.mark.skipif(
    triton.__version__ not in TESTED_TRITON_VERSIONS or os.environ.get("TRITON_INTERPRET") != "1",
    reason="needs a tested Triton and TRITON_INTERPRET=1 before triton is imported",
)

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "causal_fa2_noskip.py"


def _launch():
    spec = importlib.util.spec_from_file_location("causal_fa2_noskip", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.launch


def _formula(w) -> int:
    """Q read and O written once, K and V read T_r = ⌈N_q/32⌉ times (no block skipped), fp32."""
    Tr = -(-w.Nq // 32)
    return 4 * w.batch * w.heads * (w.Nq * w.d + Tr * w.Nkv * (w.d + w.dv) + w.Nq * w.dv)


@pytest.fixture(scope="module")
def measured():
    entry = gate.register("example-noskip", _launch(), formula=_formula, N=64, d=16, causal=True)
    try:
        yield gate.measure([entry])
    finally:
        gate.unregister(entry.key)


def test_gate_section_holds_exact_counts_and_fails_when_they_grow(measured, tmp_path):
    (entry, r), = measured
    current = {"schema": 1, "io": {}, "triton": gate.gate_entries([entry])["triton"]}
    got = current["triton"][entry.key]
    assert got["total_bytes"] == _formula(entry.build()) == got["reads_bytes"] + got["writes_bytes"]
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(current))
    baseline = report_gate.load_baseline(path)  # the schema accepts the section
    assert report_gate.compare(baseline, current).ok
    smaller = json.loads(json.dumps(current))
    smaller["triton"][entry.key]["total_bytes"] -= 4
    res = report_gate.compare(smaller, current)
    assert res.problems == [f"triton {entry.key}: total_bytes {got['total_bytes'] - 4} -> {got['total_bytes']} (+4 bytes)"]
    larger = json.loads(json.dumps(current))
    larger["triton"][entry.key]["reads_bytes"] += 8
    assert report_gate.compare(larger, current).ok and any("improved" in n for n in report_gate.compare(larger, current).notes)
    assert report_gate.compare(current, {"schema": 1, "io": {}, "triton": {}}).problems == [
        f"triton {entry.key}: configuration missing from this run"]
    assert "not gated" in report_gate.compare(current, {"schema": 1, "io": {}}).notes[-1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": 1, "io": {}, "triton": {"k": {"total_bytes": -1}}}))
    with pytest.raises(report_gate.BaselineError, match="triton"):
        report_gate.load_baseline(bad)


def test_report_section_rows(measured):
    from attnio.reports.render import Section
    from attnio.reports.section_triton import HEADERS, build

    (entry, r), = measured
    s = build(Section, measured)
    assert s.title == "Triton kernels"
    tables = [b for b in s.blocks if b[0] == "table"]
    assert len(tables) == 1 and tables[0][1] == HEADERS and len(tables[0][2]) == 1
    row = gate.rows(measured)[0]
    assert row["counted_bytes"] == row["formula_bytes"] and row["counted_over_formula"] == 1.0
    assert row["counted_over_best"] == r.ratio_to_best and "blocks above the diagonal" in row["dominates"]
    assert "| example-noskip |" in gate.markdown([row])


def test_check_backward_path_with_a_torch_launcher():
    """A launcher asking for do/dq/dk/dv is a backward: gradients against float64 autograd, the backward bound."""
    import torch

    from attnio.triton.check import check
    from attnio.workload import Workload

    def torch_backward(q, k, v, do, dq, dk, dv, causal, sm_scale):
        q_, k_, v_ = (x.detach().double().requires_grad_(True) for x in (q, k, v))
        s = (q_ @ k_.transpose(-1, -2)) * sm_scale
        if causal:
            s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
        (torch.softmax(s, -1) @ v_).backward(do.double())
        dq.copy_(q_.grad)
        dk.copy_(k_.grad)
        dv.copy_(v_.grad)

    w = Workload.build(N=16, d=8, causal=True, gpu="h100")
    r = check(torch_backward, w)
    assert r.direction == "backward" and r.outputs_ok and set(r.max_abs_error) == {"dq", "dk", "dv"}
    assert r.lower_bound_id.startswith("workloads.bwd") and r.best_schedule.startswith("flash2-bwd")
    assert r.traffic.total_bytes == 0 and r.traffic.launches == []  # no Triton kernel ran: nothing counted
