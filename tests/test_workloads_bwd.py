"""Backward pass and training step of workloads (causal masks, N_q ≠ N_kv, GQA/MQA; algorithms/workloads_bwd.py):
measured counts equal the exact formulas (bounds/costs.py WORKLOAD_BACKWARD_FORMULAS, docs/costs.md#workloads),
real runs equal count-only runs, gradients equal the float64 reference backward, peaks fit M, and the schedules
without a workload backward say so.

Error measure: max|X − X_ref| / max|X_ref| ≤ 1e-10 for X = dQ, dK, dV (X_ref from attnio.algorithms.reference.attention4_backward).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import strategies
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.algorithms.reference import attention4 as reference
from attnio.algorithms.reference import attention4_backward as reference_backward
from attnio.algorithms.reference import attention_backward
from attnio.algorithms.registry import SCHEDULES
from attnio.algorithms.run import random_inputs, run
from attnio.bounds.costs import backward_cost, workload_backward_cost, workload_cost
from attnio.core.errors import Unsupported
from attnio.core.workload import DTYPES, Workload


def workloads(**kw: int) -> st.SearchStrategy[Workload]:
    return strategies.workloads(lambda d, dv, g: 4 * d + 3 * dv + 4, per_group=False, **kw)


BACKWARDS = ("flash2-bwd", "flash2-fused-bwd")


@pytest.mark.parametrize("name", BACKWARDS)
@pytest.mark.parametrize("schedule", SCHEDULES)
@given(data=st.data())
def test_count_only_backward_counts_equal_the_formula_exactly(name: str, schedule: str, data: st.DataObject) -> None:
    w = data.draw(workloads(max_N=3000, max_d=160, max_heads=6, max_M_factor=300))
    r = run(name, w, schedule=schedule, count_only=True)
    assert r.measurement.io == workload_backward_cost(name, w, schedule), w
    assert r.measurement.peak_fast_words <= w.M and not r.measurement.overflowed
    assert r.io_bytes == r.measurement.io_words * DTYPES[w.dtype]


@given(data=st.data())
def test_fused_backward_saves_exactly_its_fixed_terms_and_under_a_causal_mask_at_least_them(data: st.DataObject) -> None:
    w = data.draw(workloads(max_N=3000, max_d=160, max_heads=6, max_M_factor=300))
    for schedule in SCHEDULES:
        r = run("flash2-bwd", w, schedule=schedule, count_only=True)
        old, new = r.measurement, run("flash2-fused-bwd", w, schedule=schedule, count_only=True).measurement
        heads, T_c = w.query_heads_total, -(-w.Nkv // r.tiling.B_c)  # one D pass, one dQ initialisation per query head
        fixed = (heads * w.Nq * (w.d + w.dv + 1), heads * w.Nq * (w.d + (T_c == 1)))
        saved = (old.reads_words - new.reads_words, old.writes_words - new.writes_words)
        if w.causal:  # full K/V blocks first: the later blocks start later, so also fewer later visits (never more)
            assert saved[0] >= fixed[0] and saved[1] >= fixed[1], w
        else:  # the same visits (T_c·N_q rows per head)
            assert saved == fixed, w


@pytest.mark.parametrize("name", BACKWARDS)
@pytest.mark.parametrize("schedule", SCHEDULES)
@settings(max_examples=30)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_real_backward_runs_equal_count_only_and_the_float64_reference(name: str, schedule: str, data: st.DataObject, seed: int) -> None:
    w = data.draw(workloads(max_N=14, max_d=5, max_heads=3, max_M_factor=20))
    real = run(name, w, schedule=schedule, seed=seed)
    fast = run(name, w, schedule=schedule, count_only=True)
    assert real.measurement.per_array == fast.measurement.per_array, w
    assert real.measurement.peak_fast_words == fast.measurement.peak_fast_words
    assert max(real.rel_errors.values()) <= 1e-10, (w, real.rel_errors)


@settings(max_examples=30)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 9), st.integers(1, 5), st.integers(0, 2**32 - 1))
def test_reference_backward_without_a_mask_is_the_one_head_gradient_summed_over_the_group(kv: int, g: int, N: int, d: int, seed: int) -> None:
    """The 4-D reference against the one-head analytic backward (attention_backward), dK/dV summed over g heads."""
    w = Workload.build(heads=kv * g, kv_heads=kv, N=N, d=d, M=1000)
    Q, K, V = random_inputs(w, seed)
    dO = random_inputs(w, seed, grad=True)[3]
    dQ, dK, dV = reference_backward(Q, K, V, dO, causal=False)
    for h in range(w.heads):
        q, k, v = attention_backward(Q[0, h], K[0, h // g], V[0, h // g], dO[0, h])
        np.testing.assert_allclose(dQ[0, h], q, rtol=1e-12, atol=1e-12)
    for k in range(kv):
        parts = [attention_backward(Q[0, h], K[0, k], V[0, k], dO[0, h]) for h in range(k * g, (k + 1) * g)]
        np.testing.assert_allclose(dK[0, k], sum(p[1] for p in parts), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(dV[0, k], sum(p[2] for p in parts), rtol=1e-12, atol=1e-12)


def test_reference_backward_with_a_causal_mask_matches_finite_differences() -> None:
    """Central differences of ⟨dO, O(Q, K, V)⟩ on a small causal GQA workload with N_q < N_kv."""

    w = Workload.build(heads=2, kv_heads=1, Nq=3, Nkv=5, d=2, M=1000, causal=True)
    Q, K, V = random_inputs(w, 3)
    dO = random_inputs(w, 3, grad=True)[3]
    grads = reference_backward(Q, K, V, dO, causal=True)
    h = 1e-6
    for which, X in enumerate((Q, K, V)):
        for idx in np.ndindex(X.shape):
            args = [Q.copy(), K.copy(), V.copy()]
            args[which][idx] += h
            up = float(np.sum(dO * reference(*args, causal=True)))
            args[which][idx] -= 2 * h
            down = float(np.sum(dO * reference(*args, causal=True)))
            assert abs((up - down) / (2 * h) - grads[which][idx]) < 1e-7, (which, idx)


@given(st.integers(1, 3000), st.integers(1, 128), st.integers(0, 10**6))
def test_a_plain_one_head_workload_backward_costs_the_one_head_formula(N: int, d: int, extra: int) -> None:
    M = 7 * d + 4 + extra
    w = Workload.build(N=N, d=d, M=M)
    for s in SCHEDULES:
        assert workload_backward_cost("flash2-bwd", w, s) == backward_cost("flash2-bwd", N=N, d=d, M=M)


@given(st.integers(1, 3000), st.integers(1, 128), st.integers(1, 8), st.integers(0, 10**6))
def test_per_head_backward_costs_exactly_the_extra_kv_traffic_of_the_grouped_one(N: int, d: int, g: int, extra: int) -> None:
    """Per-head − grouped = (g − 1)·N_kv(d + d_v) K/V reads + (g − 1)·N_kv(d + d_v) partial dK/dV reads and as many
    writes, per K/V head: measured, compared with the difference stated in docs/costs.md#workloads."""
    w = Workload.build(heads=2 * g, kv_heads=2, N=N, d=d, M=7 * d + 4 + extra, causal=True)
    ph = run("flash2-bwd", w, schedule="per-head", count_only=True).measurement
    gr = run("flash2-bwd", w, schedule="grouped", count_only=True).measurement
    kv = 2 * N * (2 * d)
    assert ph.reads_words - gr.reads_words == 2 * (g - 1) * kv
    assert ph.writes_words - gr.writes_words == (g - 1) * kv


@given(st.integers(2, 4000), st.integers(1, 128), st.integers(0, 200_000))
def test_causal_backward_moves_between_half_and_all_of_the_unmasked_words(N: int, d: int, extra: int) -> None:
    M = 7 * d + 4 + extra
    full = run("flash2-bwd", Workload.build(N=N, d=d, M=M), schedule="grouped", count_only=True)
    half = run("flash2-bwd", Workload.build(N=N, d=d, M=M, causal=True), schedule="grouped", count_only=True)
    f, c = full.measurement.io_words, half.measurement.io_words
    assert f <= 2 * c <= 2 * f
    if N > full.tiling.B_c:  # two or more K/V blocks: some Q rows are skipped
        assert c < f


def test_worked_numbers_from_the_docstring() -> None:
    r = run("flash2-bwd", Workload.build(N=4, d=2, M=30, causal=True), schedule="grouped", seed=0)
    assert (r.measurement.reads_words, r.measurement.writes_words) == (80, 40)
    one = run("flash2-bwd", N=4, d=2, M=30, count_only=True).measurement
    plain = run("flash2-bwd", Workload.build(N=4, d=2, M=30), schedule="grouped", count_only=True).measurement
    assert plain.io == one.io


@pytest.mark.parametrize("schedule", SCHEDULES)
def test_training_step_is_forward_plus_backward_with_the_forward_output(schedule: str) -> None:
    w = Workload.build(batch=2, heads=4, kv_heads=2, Nq=5, Nkv=9, d=3, M=400, causal=True, dtype="bf16")
    ts = run("flash2", w, pass_="step", schedule=schedule, seed=4)
    d = ts.as_dict()
    assert d["total"]["io"] == workload_cost("flash2", w, schedule).io_words + workload_backward_cost("flash2-bwd", w, schedule).io_words
    assert d["total"]["io_bytes"] == 2 * d["total"]["io"]
    assert max(ts.backward.rel_errors.values()) <= 1e-10


def test_other_backward_schedules_are_unsupported_naming_the_schedule_and_option(capsys: pytest.CaptureFixture[str]) -> None:
    from attnio.cli import main

    w = Workload.build(N=8, d=2, M=400, causal=True)
    for name in ("flash1-bwd", "standard-bwd", "square_tiling-bwd"):
        with pytest.raises(Unsupported, match=name):
            run(name, w, schedule="grouped")
    with pytest.raises(Unsupported, match="flash1"):
        run("flash1", w, pass_="step", schedule="grouped")
    assert main(["run", "standard", "--N", "8", "--d", "2", "--M", "400", "--backward", "--causal"]) == 2
    assert main(["run", "flash1", "--N", "8", "--d", "2", "--M", "400", "--backward", "--heads", "2", "--kv-heads", "1"]) == 2
    err = capsys.readouterr().err
    assert "a causal mask" in err and "kv_heads=1 < heads=2" in err and "standard" in err


def test_cli_training_step_of_a_causal_gqa_workload(capsys: pytest.CaptureFixture[str]) -> None:
    from attnio.cli import main

    argv = ["run", "flash2", "--backward", "--causal", "--heads", "8", "--kv-heads", "2", "--N", "300", "--d", "16",
            "--dtype", "bf16", "--M", "3000", "--count-only", "--json"]
    assert main(argv + ["--schedule", "grouped"]) == 0
    out = json.loads(capsys.readouterr().out)
    w = Workload.build(heads=8, kv_heads=2, N=300, d=16, M=3000, causal=True, dtype="bf16")
    assert out["forward"]["io"] == workload_cost("flash2", w, "grouped").io_words
    assert out["backward"]["io"] == workload_backward_cost("flash2-bwd", w, "grouped").io_words
    assert out["total"]["io"] == out["forward"]["io"] + out["backward"]["io"]
    assert out["total"]["io_bytes"] == 2 * out["total"]["io"] and out["backward"]["io_bytes"] == 2 * out["backward"]["io"]
    assert main(argv + ["--schedule", "best"]) == 0
    best = json.loads(capsys.readouterr().out)
    assert best["total"]["io"] <= out["total"]["io"]
    small = ["run", "flash2", "--backward", "--causal", "--heads", "4", "--kv-heads", "2", "--Nq", "5", "--Nkv", "9",
             "--d", "3", "--M", "300"]
    assert main(small) == 0  # a real (numeric) run, per-head by default
    assert "flash2-bwd, per-head" in capsys.readouterr().out


def test_report_training_step_rows_are_forward_plus_backward_and_above_the_bounds() -> None:
    """The section's training-step table (reports/section_workloads.py) against separately run counts; it renders."""
    from attnio.reports.render import Section
    from attnio.reports.section_workloads import build, training_rows

    rows = training_rows(gpus=("h100",))
    assert [r["model"] for r in rows] == ["GPT-2 medium", "Llama-style GQA, N = 4096", "Llama-style GQA, N = 32768"]
    for r in rows:
        assert r["ratio"] >= 1 and r["fwd_ratio"] >= 1 and r["bwd_ratio"] >= 1  # no schedule below a bound
        assert r["total_bytes"] == r["forward_bytes"] + r["backward_bytes"]
        assert r["kv_step_grouped_bytes"] <= r["kv_step_per_head_bytes"]
        assert min(r["step_per_head_bytes"], r["step_grouped_bytes"]) == r["total_bytes"]
    w = Workload.build(heads=32, kv_heads=8, N=4096, d=128, causal=True, dtype="bf16", gpu="h100")
    back = min(workload_backward_cost(b, w, "grouped").io_words for b in ("flash2-bwd", "flash2-fused-bwd"))
    assert back < workload_backward_cost("flash2-bwd", w, "grouped").io_words  # the fused backward is the cheaper here
    assert rows[1]["step_grouped_bytes"] == 2 * (workload_cost("flash2", w, "grouped").io_words + back)
    assert rows[1]["best"] == "flash2 + flash2-fused-bwd (grouped)"
    s = build(Section)
    assert any(b[0] == "table" and "training-step bytes" in b[1] for b in s.blocks)


def _chain_claims() -> list:
    from attnio.solver.claims import workloads as cw

    return cw.backward_claims() + cw.causal_bwd_claims() + cw.causal_forward_claims() + cw.causal_half_claims() + cw.grouped_claims()


def test_every_causal_and_backward_workload_formula_has_a_proved_definedness_and_trivial_bound_chain() -> None:
    """Coverage of the chains (solver/claims/workloads.py): each causal forward formula and each backward workload
    formula has a well-definedness claim, a link from its own count, and a trivial-bound link; the pair-count
    bounds have links for every causal formula except flash1 (published blocks: audit mode)."""
    from attnio.bounds.costs import WORKLOAD_BACKWARD_FORMULAS, WORKLOAD_FORMULAS
    from attnio.solver.claims import all_claims
    from attnio.solver.claims.workloads import NO_Z3

    ids = {c.id for c in all_claims()}
    for key in NO_Z3:
        n = WORKLOAD_FORMULAS[key].algorithm.replace("/", ".")
        alg = key[0]
        assert {f"workloads.wd.{n}", f"workloads.causal.count.{alg}"} <= ids, n
        assert f"workloads.causal.{'flash1' if alg.startswith('flash1') else alg}.trivial" in ids
        if alg != "flash1":
            assert {f"workloads.causal.{alg}.b1", f"workloads.causal.{alg}.b2"} <= ids, alg
    for (_, sched, causal), f in WORKLOAD_BACKWARD_FORMULAS.items():
        n = f.algorithm.replace("/", ".")
        assert f"workloads.wd.{n}" in ids and f"workloads.bwd.chain.trivial.{sched}" in ids
        assert (f"workloads.bwd.causal.count.{sched}" if causal else f"workloads.bwd.chain.count.{n}") in ids


@pytest.mark.parametrize("claim", _chain_claims(), ids=lambda c: c.id)
def test_cvc5_re_proves_the_chain_links(claim) -> None:
    """Each link z3 proves (tests/test_workloads.py) is re-proved by cvc5 (verify_claim(..., solver="both"))."""
    pytest.importorskip("cvc5")
    from attnio.solver.verify import verify_claim

    v = verify_claim(claim, solver="both")
    assert v.status == "proved" and v.crosscheck == "proved", (claim.id, v.status, v.crosscheck, v.reason)
