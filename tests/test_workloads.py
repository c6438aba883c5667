"""Workloads (batch, heads, GQA/MQA, N_q ≠ N_kv, causal masks, bytes, GPU presets): the machine's measured counts
equal the exact workload formulas (bounds/costs.py WORKLOAD_FORMULAS, docs/costs.md#workloads), real runs equal
count-only runs, outputs equal the float64 reference (K/V heads repeated over their groups, bottom-right causal
mask), peaks fit M, and bad workloads are InvalidParameter / Unsupported naming the parameter.

Error measure: max|O − O_ref| / max|O_ref| ≤ 1e-10 (O_ref from attnio.algorithms.reference.attention4).
"""

from __future__ import annotations

import numpy as np
import pytest
import strategies
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.algorithms import registry
from attnio.algorithms.reference import attention4 as reference
from attnio.algorithms.run import count, run
from attnio.bounds.costs import cost, workload_cost
from attnio.core.errors import InvalidParameter, Unsupported
from attnio.core.workload import DTYPES, GPUS, Workload, parse_bytes

SCHEDULES = [(a, s) for s in registry.SCHEDULES for a in registry.with_schedule(s)]


def min_M(name: str, schedule: str, d: int, dv: int, g: int) -> int:
    if name == "flash2":
        return max(d, dv) + (g if schedule == "grouped" else 1) * (d + dv + 4)
    if name == "flash1-fit":
        return 2 * (d + dv) + 7
    return 4


def workloads(name: str, schedule: str, **kw: int) -> st.SearchStrategy[Workload]:
    return strategies.workloads(lambda d, dv, g: min_M(name, schedule, d, dv, g), **kw)


@pytest.mark.parametrize(("name", "schedule"), SCHEDULES)
@given(data=st.data())
def test_count_only_workload_counts_equal_the_formula_exactly(name: str, schedule: str, data: st.DataObject) -> None:
    w = data.draw(workloads(name, schedule, max_N=3000, max_d=160, max_heads=6, max_M_factor=300))
    r = run(name, w, schedule=schedule, count_only=True)
    assert r.measurement.io == workload_cost(name, w, schedule), w
    assert r.io_bytes == r.measurement.io_words * DTYPES[w.dtype]
    if name != "flash1":  # published blocks: audit mode (tests/test_algorithms.py checks its peak)
        assert r.measurement.peak_fast_words <= w.M and not r.measurement.overflowed


@pytest.mark.parametrize(("name", "schedule"), SCHEDULES)
@settings(max_examples=25)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_real_workload_runs_equal_count_only_and_the_float64_reference(name: str, schedule: str, data: st.DataObject, seed: int) -> None:
    w = data.draw(workloads(name, schedule, max_N=18, max_d=6, max_heads=3, max_M_factor=20))
    real = run(name, w, schedule=schedule, seed=seed)
    fast = run(name, w, schedule=schedule, count_only=True)
    assert real.measurement.per_array == fast.measurement.per_array, w
    assert real.measurement.peak_fast_words == fast.measurement.peak_fast_words
    Q, K, V = _inputs(w, seed)
    ref = reference(Q, K, V, w.causal)
    assert float(np.max(np.abs(real.output - ref)) / np.max(np.abs(ref))) <= 1e-10, w


def _inputs(w: Workload, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    from attnio.algorithms.run import random_inputs

    return random_inputs(w, seed)


@given(st.integers(1, 2000), st.integers(1, 128), st.integers(1, 128), st.integers(0, 10**6))
def test_a_plain_one_head_workload_costs_what_the_one_head_formula_says(N: int, d: int, dv: int, extra: int) -> None:
    """With batch = heads = 1, N_q = N_kv and no mask, every workload formula is the original cost formula."""
    for name in registry.with_schedule("per-head"):
        M = min_M(name, "per-head", d, dv, 1) + extra
        w = Workload.build(N=N, d=d, dv=dv, M=M)
        assert workload_cost(name, w) == cost(name, N=N, d=d, dv=dv, M=M), name


@given(st.integers(1, 3000), st.integers(1, 128), st.integers(1, 8), st.integers(0, 10**6))
def test_per_head_plain_workloads_are_heads_times_one_head(N: int, d: int, heads: int, extra: int) -> None:
    M = 3 * d + 4 + extra
    w = Workload.build(batch=2, heads=heads, N=N, d=d, M=M)
    assert run("flash2", w, schedule="per-head", count_only=True).measurement.io_words == 2 * heads * count("flash2", N=N, d=d, M=M).io_words


@given(st.integers(1, 4000), st.integers(1, 128), st.integers(1, 8), st.integers(0, 200_000))
def test_causal_flash2_reads_at_least_half_and_at_most_half_plus_one_pass_of_kv(N: int, d: int, g: int, extra: int) -> None:
    """Causal K/V traffic Σ_i e_i lies in [N(T_r + 1)/2, N·T_r/2 + N]: FlashAttention-2's 'about half the blocks'."""
    for schedule in ("per-head", "grouped"):
        w = Workload.build(heads=g, kv_heads=1, N=N, d=d, M=3 * d + 4 + g * (2 * d + 4) + extra, causal=True)
        full = Workload.build(heads=g, kv_heads=1, N=N, d=d, M=w.M)
        kv_c = run("flash2", w, schedule=schedule, count_only=True).measurement.per_array["K"].reads_words
        kv_f = run("flash2", full, schedule=schedule, count_only=True).measurement.per_array["K"].reads_words
        units = g if schedule == "per-head" else 1
        T_r = kv_f // (units * N * d)
        assert units * N * d * (T_r + 1) <= 2 * kv_c <= units * N * d * (T_r + 2)


def test_grouped_flash2_reads_kv_once_per_group_when_decoding() -> None:
    """Decoding (N_q = 1 … 16 against a long cache): the grouped schedule reads each K/V head once, the per-head
    schedule once per query head: a saving of exactly g on the K/V words."""
    for Nq in (1, 4, 16):
        w = Workload.build(batch=2, heads=32, kv_heads=8, Nq=Nq, Nkv=4096, d=128, causal=True, dtype="bf16", gpu="h100")
        ph = run("flash2", w, schedule="per-head", count_only=True).measurement.per_array
        gr = run("flash2", w, schedule="grouped", count_only=True).measurement.per_array
        assert ph["K"].reads_words == 4 * gr["K"].reads_words == 2 * 32 * 4096 * 128
        assert ph["Q"].reads_words == gr["Q"].reads_words


def test_grouped_flash2_saves_nothing_in_long_prefill_up_to_ceilings() -> None:
    """With N_q ≫ a, a Q block holds ⌊a/g⌋ positions of g heads instead of a positions of one: the K/V passes
    ⌈N/⌊a/g⌋⌉ ≈ g·⌈N/a⌉ (derived in docs/costs.md#workloads); only ceilings differ."""
    w = Workload.build(heads=32, kv_heads=8, N=32768, d=128, causal=True, dtype="bf16", gpu="h100")
    ph = workload_cost("flash2", w, "per-head").io_words
    gr = workload_cost("flash2", w, "grouped").io_words
    assert 0.95 < gr / ph < 1.05


def test_workload_worked_numbers_from_the_docstring() -> None:
    w = Workload.build(N=4, d=2, M=14, causal=True)
    assert workload_cost("flash2", w).reads_words == 8 + 10 * 4
    w = Workload.build(heads=4, kv_heads=1, Nq=2, Nkv=8, d=2, M=40)
    assert workload_cost("flash2", w, "per-head").reads_words == 144
    assert workload_cost("flash2", w, "grouped").reads_words == 80


# ---------------------------------------------------------------------------------------------- validation
def test_memory_presets_and_bytes() -> None:
    assert Workload.build(N=8, d=4, gpu="a100", dtype="fp16").M == 192 * 1024 // 2
    assert Workload.build(N=8, d=4, gpu="h100", dtype="fp32").M == 228 * 1024 // 4
    assert Workload.build(N=8, d=4, gpu="h200", dtype="fp8").M == GPUS["h200"].smem_bytes
    assert Workload.build(N=8, d=4, smem="192KiB", dtype="bf16").M == 98304
    assert Workload.build(N=8, d=4, smem="192KB", dtype="fp32").M == 48000
    assert Workload.build(N=8, d=4, smem=1000, dtype="fp32").M == 250
    assert parse_bytes("1MiB") == 2**20


@pytest.mark.parametrize(
    ("kw", "param"),
    [
        ({"N": 8, "d": 4}, "M"),  # no memory
        ({"N": 8, "d": 4, "M": 100, "gpu": "a100"}, "M"),  # two memories
        ({"N": 8, "d": 4, "gpu": "v100"}, "gpu"),
        ({"N": 8, "d": 4, "smem": "lots"}, "smem"),
        ({"N": 8, "d": 4, "smem": 1, "dtype": "fp32"}, "smem"),  # less than one word
        ({"N": 8, "d": 4, "M": 100, "dtype": "fp64"}, "dtype"),
        ({"N": 8, "d": 4, "M": 100, "heads": 6, "kv_heads": 4}, "kv_heads"),
        ({"Nq": 9, "Nkv": 8, "d": 4, "M": 100, "causal": True}, "Nq"),
        ({"d": 4, "M": 100}, "N"),
        ({"N": 0, "d": 4, "M": 100}, "Nq"),
        ({"N": 8, "d": 4, "M": 100, "batch": 0}, "batch"),
        ({"N": 8, "d": 4, "M": 100, "causal": "False"}, "causal"),  # a string was read as truthy: causal
        ({"N": 8, "d": 4, "M": 100, "causal": 2}, "causal"),
        ({"N": 8, "d": 4, "M": 100, "causal": None}, "causal"),
    ],
)
def test_bad_workloads_name_the_parameter(kw: dict, param: str) -> None:
    with pytest.raises(InvalidParameter) as e:
        Workload.build(**kw)
    assert e.value.name == param


def test_integral_floats_are_stored_as_integers() -> None:
    """check_int accepts 16.0 as 16: the workload must hold the int (floats gave float counts, IOCount(192.0, 80.0),
    and tracebacks from the formulas and the machine: 'cannot round ... exactly', 'float object cannot be
    interpreted as an integer')."""
    import attnio

    w = Workload.build(batch=2.0, heads=8.0, kv_heads=2.0, Nq=4.0, Nkv=100.0, d=4.0, dv=2.0, M=4096.0)
    assert w == Workload.build(batch=2, heads=8, kv_heads=2, Nq=4, Nkv=100, d=4, dv=2, M=4096)
    assert all(type(getattr(w, k)) is int for k in ("batch", "heads", "kv_heads", "Nq", "Nkv", "d", "dv", "M"))
    w = Workload.build(N=16.0, d=4.0, M=200)
    assert attnio.count("flash2", w) == attnio.cost("flash2", w) == attnio.count("flash2", N=16, d=4, M=200)
    assert attnio.run("flash2", w, seed=0).max_abs_error < 1e-9


def test_unsupported_combinations_say_so() -> None:
    causal = Workload.build(N=8, d=4, M=200, causal=True)
    with pytest.raises(Unsupported):
        run("kv_stationary", causal, schedule="per-head", count_only=True)
    with pytest.raises(Unsupported):
        run("flash1", Workload.build(heads=2, kv_heads=1, N=8, d=4, M=200), schedule="grouped")
    with pytest.raises(InvalidParameter, match="M >= "):
        run("flash2", Workload.build(heads=8, kv_heads=1, N=8, d=4, M=40), schedule="grouped")
    with pytest.raises(InvalidParameter):
        run("flash2", causal, schedule="by-token")


def test_given_inputs_of_the_wrong_shape_are_rejected() -> None:
    w = Workload.build(heads=2, N=4, d=2, M=100)
    Q = np.zeros((1, 2, 4, 2))
    with pytest.raises(InvalidParameter, match="K.shape"):
        run("flash2", w, schedule="per-head", inputs=(Q, np.zeros((1, 2, 5, 2)), np.zeros((1, 2, 4, 2))))


# ---------------------------------------------------------------------------------------------- CLI
def _json_run(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    import json

    from attnio.cli import main

    assert main(["run", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_cli_workload_json_has_bytes_and_the_workload(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json_run(capsys, "flash2", "--N", "40", "--d", "8", "--heads", "4", "--kv-heads", "2", "--causal", "--dtype", "bf16", "--smem", "2KiB")
    w = Workload.build(heads=4, kv_heads=2, N=40, d=8, causal=True, dtype="bf16", smem="2KiB")
    assert out["workload"]["M"] == 1024 and out["workload"]["groups"] == 2 and out["workload"]["causal"] is True
    assert (out["reads"], out["writes"]) == astuple(workload_cost("flash2", w))
    assert out["io_bytes"] == 2 * out["io"] and out["max_abs_error"] < 1e-12


def astuple(c) -> tuple[int, int]:
    return c.reads_words, c.writes_words


def test_cli_nq_nkv_gpu_and_best_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["flash2", "--Nq", "4", "--Nkv", "5000", "--d", "128", "--heads", "32", "--kv-heads", "8", "--causal", "--dtype", "bf16", "--gpu", "h100", "--count-only"]
    best = _json_run(capsys, *argv, "--schedule", "best")
    per_head = _json_run(capsys, *argv)
    assert best["schedule"] == "grouped" and per_head["schedule"] == "per-head"
    assert best["workload"]["M"] == 228 * 1024 // 2
    assert per_head["per_array"]["K"]["reads"] == 4 * best["per_array"]["K"]["reads"]


def test_cli_plain_run_json_gains_io_bytes_in_fp32(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json_run(capsys, "flash2", "--N", "30", "--d", "4", "--M", "200")
    assert out["io_bytes"] == 4 * out["io"] and out["workload"]["dtype"] == "fp32" and out["workload"]["heads"] == 1


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["--N", "8", "--d", "4"], "exactly one of M"),
        (["--N", "8", "--d", "4", "--M", "100", "--gpu", "a100"], "exactly one of M"),
        (["--N", "8", "--d", "4", "--M", "100", "--heads", "3", "--kv-heads", "2"], "kv_heads=2"),
        (["--Nq", "9", "--Nkv", "8", "--d", "4", "--M", "100", "--causal"], "Nq=9"),
        (["--N", "8", "--d", "4", "--smem", "12 parsecs"], "smem="),
    ],
)
def test_cli_bad_workloads_are_one_line_and_exit_2(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    from attnio.cli import main

    assert main(["run", "flash2", *argv]) == 2
    err = capsys.readouterr().err
    assert needle in err and err.count("\n") == 1


@pytest.mark.parametrize("name", ["flash1", "flash1-fit", "standard", "square_tiling"])
@given(data=st.data())
def test_causal_formulas_without_z3_claims_respect_the_bounds_on_examples(name: str, data: st.DataObject) -> None:
    """solver/claims/workloads.py NO_Z3: z3 times out on one-step claims about these causal formulas (they are proved
    as chains of links instead, causal_forward_claims); Hypothesis also checks what the chains conclude: unit count
    ≥ the trivial bound, and (M ≥ 2d²) ≥ P·d²/M, (M ≥ 4d², d_v = d) ≥ 2P·d²/M."""
    from attnio.bounds.expr import evaluate
    from attnio.bounds.workloads import PAIRS_CAUSAL, TRIVIAL

    w = data.draw(workloads(name, "per-head", max_N=4000, max_d=128, max_heads=1, max_M_factor=400))
    w = Workload.build(Nq=min(w.Nq, w.Nkv), Nkv=w.Nkv, d=w.d, dv=w.dv, M=w.M, causal=True)
    io = workload_cost(name, w).io_words
    env = {"Nq": w.Nq, "Nkv": w.Nkv, "d": w.d, "dv": w.dv, "g": 1, "M": w.M}
    if w.Nkv >= 2:
        assert io >= evaluate(TRIVIAL.expr, env)
    P = evaluate(PAIRS_CAUSAL, env)
    if name != "flash1" and w.M >= 2 * w.d**2:
        assert io >= P * w.d**2 / w.M
    if name != "flash1" and w.M >= 4 * w.d**2 and w.dv == w.d:
        assert io >= 2 * P * w.d**2 / w.M


def _workload_claims() -> list:
    from attnio.solver.claims import workloads as claims_workloads

    return claims_workloads.claims()


@pytest.mark.parametrize("claim", _workload_claims(), ids=lambda c: c.id)
def test_every_workload_claim_is_proved_by_z3(claim) -> None:
    from attnio.solver.verify import verify_claim

    v = verify_claim(claim)
    assert v.status == "proved", (claim.id, v.status, v.reason, v.counterexample)


def test_workload_claims_are_in_the_aggregate_and_the_catalog_has_the_bounds() -> None:
    from attnio.bounds.catalog import all_bounds
    from attnio.solver.claims import all_claims

    ids = {c.id for c in all_claims()}
    assert {"workloads.causal.half.upper", "workloads.grouped.decode", "workloads.b1.rearrange"} <= ids
    assert {"workloads.trivial", "workloads.b1.causal", "workloads.b2.rect"} <= {b.id for b in all_bounds()}


def test_cli_workload_training_step_is_heads_times_one_head_with_bytes(capsys: pytest.CaptureFixture[str]) -> None:
    out = _json_run(capsys, "flash2", "--N", "50", "--d", "8", "--heads", "3", "--batch", "2", "--dtype", "fp16", "--M", "400", "--backward", "--count-only")
    one = run("flash2", pass_="step", N=50, d=8, M=400, count_only=True).as_dict()
    for part in ("forward", "backward", "total"):
        assert out[part]["io"] == 6 * one[part]["io"]
        assert out[part]["io_bytes"] == 2 * out[part]["io"]
    assert out["workload"]["heads"] == 3


def test_cli_workload_training_step_refuses_causal_and_gqa_without_a_workload_backward(capsys: pytest.CaptureFixture[str]) -> None:
    """flash2 has a workload backward (tests/test_workloads_bwd.py); flash1's backward runs one head: plain only."""
    from attnio.cli import main

    assert main(["run", "flash1", "--N", "50", "--d", "8", "--M", "400", "--backward", "--causal"]) == 2
    assert main(["run", "flash1", "--N", "50", "--d", "8", "--M", "400", "--backward", "--heads", "2", "--kv-heads", "1"]) == 2
    assert capsys.readouterr().err.count("one-head backward") == 2
    assert main(["run", "flash2", "--N", "50", "--d", "8", "--M", "400", "--backward", "--causal", "--count-only"]) == 0


def test_report_workloads_section_builds_and_its_figures_are_consistent() -> None:
    from attnio.reports import report
    from attnio.reports.section_workloads import decode_rows, model_rows

    s = report.section_workloads.section(None)
    assert s.title == "Workloads" and len([b for b in s.blocks if b[0] == "table"]) == 6  # + training step, K/V traffic
    assert report.section_workloads.section in report.SECTIONS
    for r in model_rows():
        assert r["ratio"] >= 1  # no schedule below a proved lower bound
    for r in decode_rows(gpus=("h100",)):
        assert 3.9 < r["saving"] <= 4 and 1 <= r["ratio"] < 1.01
    from attnio.reports.section_workloads import causal_half_rows

    for r in causal_half_rows():  # K words: exactly (T_r + 1)/(2T_r) when B_r·T_r = N, within 1/(2T_r) otherwise
        assert 0.5 + 1 / (2 * r["T_r"]) - 1e-12 <= r["kv_ratio"] <= 0.5 + 1 / r["T_r"]


@pytest.mark.parametrize("name", ["kv_stationary", "split_v", "flash2-square", "auto"])
def test_other_algorithms_run_plain_workloads_per_head(name: str) -> None:
    """Algorithms without a workload schedule of their own: heads × one head, counts and output."""
    w = Workload.build(batch=2, heads=4, kv_heads=2, N=23, d=5, M=400)
    fast = run(name, w, schedule="per-head", count_only=True).measurement
    assert fast.io_words == 8 * count(name, N=23, d=5, M=400).io_words
    real = run(name, w, schedule="per-head", seed=3)
    assert real.measurement.io == fast.io and real.max_abs_error < 1e-12


def test_causal_trivial_bound_drops_q_row_0_because_the_output_does_not_depend_on_it() -> None:
    """workloads.trivial.causal counts one Q row per head fewer: with δ = 0 query row 0 sees key 0 only, so no
    output depends on Q_0 (changing it leaves O unchanged), while with δ ≥ 1 it does (so the plain count is then
    needed, and the causal bound is the weaker, still valid, one)."""
    from attnio.bounds.workloads import TRIVIAL, TRIVIAL_CAUSAL, best_lower_bound, trivial_words

    rng = np.random.default_rng(7)
    Q, K, V = (rng.standard_normal((1, 1, 6, 4)) for _ in range(3))  # (batch, heads, N, d)
    Q2 = Q.copy()
    Q2[0, 0, 0] = rng.standard_normal(4) * 10
    assert np.array_equal(reference(Q, K, V, causal=True), reference(Q2, K, V, causal=True))
    Kx, Vx = (rng.standard_normal((1, 1, 7, 4)) for _ in range(2))  # δ = 1: row 0 sees two keys
    assert not np.allclose(reference(Q, Kx, Vx, causal=True), reference(Q2, Kx, Vx, causal=True))
    w = Workload.build(heads=4, kv_heads=2, N=8, d=2, M=64, causal=True)
    plain = Workload.build(heads=4, kv_heads=2, N=8, d=2, M=64)
    assert trivial_words(plain) - trivial_words(w) == w.query_heads_total * w.d
    assert best_lower_bound(w)[0] in {TRIVIAL_CAUSAL.id, "workloads.b1.causal", "workloads.b2.causal"}
    assert best_lower_bound(plain)[0] != TRIVIAL_CAUSAL.id and TRIVIAL.id != TRIVIAL_CAUSAL.id
