"""Masked FA-2 on the machine (docs/masks.md): ``run("flash2", w, mask=...)`` and ``run("flash2-bwd", w, mask=...)``
skip empty tiles and mask partial ones, for every mask family and both workload schedules. Measured per-array
counts equal the block-mask formulas of bounds/masks.py, count-only equals numeric, outputs and gradients equal
the float64 masked reference, a fully masked row is zero, and bad requests name the parameter."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from test_masks import workloads_and_masks

from attnio.algorithms.reference import attention4, attention4_backward, rel_error
from attnio.algorithms.run import random_inputs, run
from attnio.bounds.masks import (
    EMPTY,
    BlockSparse,
    Causal,
    Document,
    MaskMod,
    SlidingWindow,
    flash2_bwd_masked_words,
    flash2_masked_words,
)
from attnio.core.errors import InvalidParameter, Unsupported
from attnio.core.workload import Workload

SCHEDULES = st.sampled_from(["per-head", "grouped"])


def _counts(r):
    m = r.measurement
    return (m.reads_words, m.writes_words, m.peak_fast_words,
            {k: (v.reads_words, v.writes_words) for k, v in m.per_array.items()})


def _run_or_skip(*args, **kw):
    try:
        return run(*args, **kw)
    except InvalidParameter as e:
        assume(e.name != "M")  # M below the schedule's least working set: not an example
        raise


@settings(deadline=None)
@given(workloads_and_masks(), SCHEDULES)
def test_masked_forward_counts_equal_the_formula_and_outputs_the_reference(case, schedule):
    w, mask = case
    r = _run_or_skip("flash2", w, mask=mask, schedule=schedule, check=False)
    t, g = r.tiling, (w.groups if schedule == "grouped" else 1)
    units = w.kv_heads_total if schedule == "grouped" else w.query_heads_total
    assert (r.measurement.reads_words, r.measurement.writes_words) == flash2_masked_words(
        w, mask, t.B_r, t.B_c, grouped=schedule == "grouped")
    bm = mask.blocks(w.Nq, w.Nkv, t.B_r, t.B_c)  # per array, the formula's terms
    active = (bm.kinds != EMPTY).any(axis=1)
    q_rows = int((np.minimum(t.B_r, w.Nq - t.B_r * np.arange(active.size)) * active).sum())
    pa = {k: (v.reads_words, v.writes_words) for k, v in r.measurement.per_array.items()}
    assert pa == {"Q": (units * g * q_rows * w.d, 0), "K": (units * bm.kv_rows * w.d, 0),
                  "V": (units * bm.kv_rows * w.dv, 0), "O": (0, w.query_heads_total * w.Nq * w.dv),
                  "L": (0, w.query_heads_total * w.Nq)}
    assert r.measurement.peak_fast_words <= w.M and not r.measurement.overflowed
    assert _counts(run("flash2", w, mask=mask, schedule=schedule, count_only=True)) == _counts(r)
    ref = attention4(*random_inputs(w, 0), False, None, mask.dense(w.Nq, w.Nkv))
    assert np.max(np.abs(r.output - ref)) < 1e-9


@settings(deadline=None)
@given(workloads_and_masks(), SCHEDULES)
def test_masked_backward_counts_equal_the_formula_and_gradients_the_reference(case, schedule):
    w, mask = case
    r = _run_or_skip("flash2-bwd", w, mask=mask, schedule=schedule, check=False)
    assert (r.measurement.reads_words, r.measurement.writes_words) == flash2_bwd_masked_words(
        w, mask, r.tiling.B_c, grouped=schedule == "grouped")
    assert r.measurement.peak_fast_words <= w.M and not r.measurement.overflowed
    assert _counts(run("flash2-bwd", w, mask=mask, schedule=schedule, count_only=True)) == _counts(r)
    refs = attention4_backward(*random_inputs(w, 0, grad=True), False, None, mask.dense(w.Nq, w.Nkv))
    for got, want in zip(r.outputs, refs, strict=True):
        assert rel_error(got, want) < 1e-9


@settings(max_examples=40, deadline=None)
@given(workloads_and_masks(), SCHEDULES)
def test_masked_step_is_its_forward_then_its_backward(case, schedule):
    w, mask = case
    s = _run_or_skip("flash2", w, mask=mask, schedule=schedule, pass_="step", count_only=True)
    f = flash2_masked_words(w, mask, s.forward.tiling.B_r, s.forward.tiling.B_c, grouped=schedule == "grouped")
    b = flash2_bwd_masked_words(w, mask, s.backward.tiling.B_c, grouped=schedule == "grouped")
    assert (s.measurement.reads_words, s.measurement.writes_words) == (f[0] + b[0], f[1] + b[1])


@pytest.mark.parametrize("schedule", ["per-head", "grouped"])
def test_the_causal_mask_is_causal_true(schedule):
    """causal=True runs the Causal() case of the masked path: the same counts and outputs as mask=Causal()."""
    w = Workload.build(batch=2, heads=4, kv_heads=2, Nq=9, Nkv=14, d=3, dv=2, M=120)
    for name in ("flash2", "flash2-bwd"):
        a = run(name, replace(w, causal=True), schedule=schedule)
        b = run(name, w, schedule=schedule, mask=Causal())
        assert _counts(a) == _counts(b)
        for x, y in zip(a.outputs, b.outputs, strict=True):
            assert np.array_equal(x, y)


@pytest.mark.parametrize("schedule", ["per-head", "grouped"])
def test_a_fully_masked_row_is_zero(schedule):
    """Rows 1, 4, 7, … see no key (FlexAttention's convention: zero output, and so zero gradients); row 0 of a
    whole Q block may be all empty, which the forward skips without reading it."""
    w = Workload.build(batch=1, heads=2, kv_heads=1, Nq=10, Nkv=10, d=2, M=60)
    mask = MaskMod(lambda b, h, q, k: (q % 3 != 1) & (k <= q))
    f = run("flash2", w, mask=mask, schedule=schedule)
    bw = run("flash2-bwd", w, mask=mask, schedule=schedule)
    dead = np.arange(10) % 3 == 1
    assert np.all(f.output[:, :, dead] == 0) and np.all(np.abs(f.output[:, :, ~dead]) > 0)
    assert np.all(bw.outputs[0][:, :, dead] == 0)  # dQ of a row that sees nothing
    assert f.max_abs_error < 1e-12 and max(bw.rel_errors.values()) < 1e-12
    empty = BlockSparse(np.array([[False, False], [True, True]]), 5, 5)  # the first 5 rows see nothing
    r = run("flash2", w, mask=empty, schedule=schedule)
    assert np.all(r.output[:, :, :5] == 0) and r.max_abs_error < 1e-12
    assert r.measurement.per_array["Q"].reads_words < w.query_heads_total * w.Nq * w.d  # skipped Q blocks: unread


def test_plain_runs_take_a_mask_through_the_workload_schedule():
    r = run("flash2", N=12, d=2, M=60, mask=SlidingWindow(3, 0))
    w = r.workload
    assert r.schedule == "per-head" and r.max_abs_error < 1e-12
    assert (r.measurement.reads_words, r.measurement.writes_words) == flash2_masked_words(
        w, SlidingWindow(3, 0), r.tiling.B_r, r.tiling.B_c, grouped=False)
    Q, K, V = (x[0, 0] for x in random_inputs(w, 3))
    r2 = run("flash2", inputs=(Q, K, V), M=60, mask=SlidingWindow(3, 0))
    assert r2.measurement.io == r.measurement.io and r2.max_abs_error < 1e-12


@pytest.mark.parametrize(
    "kw, exc, name",
    [({"algorithm": "flash2", "causal": True, "mask": Causal()}, InvalidParameter, "mask"),
     ({"algorithm": "flash2", "mask": "causal"}, InvalidParameter, "mask"),
     ({"algorithm": "flash2", "mask": Document([0, 3, 5])}, InvalidParameter, "cu_seqlens"),
     ({"algorithm": "flash1", "mask": SlidingWindow(2, 0)}, Unsupported, "flash1"),
     ({"algorithm": "standard", "mask": SlidingWindow(2, 0)}, Unsupported, "standard"),
     ({"algorithm": "flash2-square-bwd", "mask": SlidingWindow(2, 0)}, Unsupported, "flash2-square-bwd"),
     ({"algorithm": "auto", "mask": SlidingWindow(2, 0), "pass_": "step"}, Unsupported, "auto")],
)
def test_bad_mask_requests_name_the_parameter(kw, exc, name):
    kw = dict(kw)
    w = Workload.build(N=8, d=2, M=200, causal=kw.pop("causal", False))
    with pytest.raises(exc, match=name):
        run(kw.pop("algorithm"), w, count_only=True, **kw)


@pytest.mark.parametrize("mask", [SlidingWindow(2, 1), Causal(), MaskMod(lambda b, h, q, k: q % 4 == k % 4)],
                         ids=lambda m: m.name)
def test_more_queries_than_keys(mask):
    """N_q > N_kv (the Hypothesis workloads have N_q ≤ N_kv): under Causal() the first rows then see no key."""
    w = Workload.build(batch=1, heads=3, kv_heads=1, Nq=19, Nkv=7, d=3, M=90)
    for schedule in ("per-head", "grouped"):
        f = run("flash2", w, mask=mask, schedule=schedule)
        b = run("flash2-bwd", w, mask=mask, schedule=schedule)
        grouped = schedule == "grouped"
        assert (f.measurement.reads_words, f.measurement.writes_words) == flash2_masked_words(w, mask, f.tiling.B_r, f.tiling.B_c, grouped=grouped)
        assert (b.measurement.reads_words, b.measurement.writes_words) == flash2_bwd_masked_words(w, mask, b.tiling.B_c, grouped=grouped)
        assert f.max_abs_error < 1e-9 and max(b.rel_errors.values()) < 1e-9


def test_cli_mask_option(capsys):
    import json

    from attnio.cli import main

    assert main(["run", "flash2", "--N", "16", "--d", "2", "--M", "60", "--mask", "window:3,0", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    w = Workload.build(N=16, d=2, M=60)
    B = out["blocks"]
    assert (out["reads"], out["writes"]) == flash2_masked_words(w, SlidingWindow(3, 0), B["B_r"], B["B_c"], grouped=False)
    assert out["mask"] == "SlidingWindow(window_left=3, window_right=0)"  # the JSON says its counts are masked
    assert main(["run", "flash2", "--N", "16", "--d", "2", "--M", "60", "--mask", "causal", "--backward", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mask"] == out["forward"]["mask"] == out["backward"]["mask"] == "Causal(window_left=-1, window_right=0)"
    assert main(["run", "flash2", "--N", "16", "--d", "2", "--M", "60", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["mask"] is None
    for bad in ("window:x", "window:1", "diagonal:2"):
        assert main(["run", "flash2", "--N", "16", "--d", "2", "--M", "60", "--mask", bad]) == 2
        assert "mask" in capsys.readouterr().err
