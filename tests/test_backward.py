"""The backward pass: per-array traffic as derived (bounds/costs.py, BACKWARD_FORMULAS; docs/costs.md#backward),
flash1-bwd as published reports its audited peak, dQ, dK, dV equal the float64 analytic backward to 1e-10
relative, logits of ±1e4 stay finite, the training step adds up, and bad input is rejected. Its counts
(measured = formula, count-only = real, peak ≤ M, more M never costs more) are checked with the forward's, in
tests/test_counts.py.

Error measure: ``max|X − X_ref| / max(max|X_ref|, 10⁻³·μ_X)`` for X in dQ, dK, dV, where μ_X is the size of
the products summed into X (|scale|·max|dO|·max|V|·max|K| for dQ, the same with Q for dK, max|dO| for dV).
The floor only matters where the exact gradient vanishes (N = 1: softmax is constant, dQ = dK = 0 exactly,
and any schedule returns rounding noise of size ~10⁻¹⁶·μ); elsewhere it is the plain relative error.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import strategies
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.algorithms import auto, flash1_bwd, registry
from attnio.algorithms.reference import attention_backward
from attnio.algorithms.run import count, run
from attnio.bounds.costs import BACKWARD_FORMULAS, backward_cost
from attnio.core.errors import InvalidParameter, Unsupported

# Every backward schedule with a formula (tests/test_counts.py checks that they are every registered one, and
# their counts: measured = formula, real = count-only, more M never costs more).
WITH_FORMULA = sorted(BACKWARD_FORMULAS)
ALL = WITH_FORMULA + ["auto-bwd"]


def rel_err(out: np.ndarray, ref: np.ndarray, mu: float = 0.0) -> float:
    return float(np.max(np.abs(out - ref)) / max(float(np.max(np.abs(ref))), 1e-3 * mu, 1e-300))


def grad_errors(outs, Q, K, V, dO, scale=None) -> list[float]:
    sc = 1.0 / np.sqrt(Q.shape[1]) if scale is None else scale
    refs = attention_backward(Q, K, V, dO, scale=scale)
    base = abs(sc) * np.max(np.abs(dO)) * np.max(np.abs(V))
    mus = (base * np.max(np.abs(K)), base * np.max(np.abs(Q)), float(np.max(np.abs(dO))))
    return [rel_err(np.asarray(x), r, mu) for x, r, mu in zip(outs, refs, mus, strict=True)]


def test_real_equals_count_only_on_a_larger_non_divisible_case() -> None:
    for name in ALL:
        N, d, dv = 67, 13, 17
        M = registry.get(name).tiling_cls.min_M(N, d, dv) * 5 + 3
        real = run(name, N=N, d=d, dv=dv, M=M, seed=1)
        fast = count(name, N=N, d=d, dv=dv, M=M)
        assert real.measurement.io == fast.io and real.measurement.per_array == fast.per_array, name
        assert max(real.rel_errors.values()) <= 1e-10, name


@pytest.mark.parametrize("name", ALL)
@given(data=st.data())
def test_gradients_equal_the_float64_analytic_backward_within_1e_10_relative(name: str, data: st.DataObject) -> None:
    N, d, dv, M, seed = data.draw(strategies.small_points(name, fits=6))
    rng = np.random.default_rng(seed)
    Q, K, V, dO = rng.standard_normal((N, d)), rng.standard_normal((N, d)), rng.standard_normal((N, dv)), rng.standard_normal((N, dv))
    r = run(name, inputs=(Q, K, V, dO), M=M, check=False)
    assert max(grad_errors(r.outputs, Q, K, V, dO)) <= 1e-10, (N, d, dv, M, grad_errors(r.outputs, Q, K, V, dO))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_backward_is_stable_for_logits_of_1e4(name: str, sign: float) -> None:
    """The largest |logit| is exactly 1e4: exp(S) would overflow without the saved max / logsumexp."""
    N, d = 20, 4
    rng = np.random.default_rng(3)
    Q, K, V, dO = (rng.standard_normal((N, d)) for _ in range(4))
    scale = sign * 1e4 / float(np.max(np.abs(Q @ K.T)))
    M = max(registry.get(name).tiling_cls.min_M(N, d, d), 150)
    r = run(name, inputs=(Q, K, V, dO), M=M, scale=scale, check=False)
    assert all(np.all(np.isfinite(x)) for x in r.outputs)
    assert max(grad_errors(r.outputs, Q, K, V, dO, scale)) <= 1e-10


@given(st.integers(1, 300), st.integers(1, 40), st.integers(1, 40), st.integers(1, 20000))
def test_flash1_bwd_as_published_reports_its_working_set_and_overflows_exactly_when_it_exceeds_M(N: int, d: int, dv: int, M: int) -> None:
    meas = count("flash1-bwd", N=N, d=d, dv=dv, M=M)
    peak = flash1_bwd.peak_fast_words(N, d, M, dv)
    assert meas.peak_fast_words == peak
    assert meas.overflowed == (peak > M)


def test_flash1_bwd_as_published_never_fits_at_realistic_sizes() -> None:
    """Alg. 4's B_c = ⌈M/4d⌉ budgets four blocks; the backward holds eight (≈ 2M for M ≤ 4d²)."""
    for M in (4096, 16384, 65536, 262144):
        meas = count("flash1-bwd", N=4096, d=64, M=M)
        assert meas.overflowed and meas.peak_fast_words > 1.4 * M, M


@given(st.integers(1, 3000), st.integers(1, 150), st.integers(0, 200000))
def test_auto_bwd_runs_the_measured_argmin(N: int, d: int, extra: int) -> None:
    M = 5 + extra
    r = count("auto-bwd", N=N, d=d, M=M)
    fits = [n for n in registry.candidates("backward") if registry.get(n).tiling_cls.min_M(N, d, d) <= M]
    measured = {n: count(n, N=N, d=d, M=M).io_words for n in fits}
    assert r.io_words == min(measured.values())


@given(st.integers(1, 3000), st.integers(1, 150), st.integers(0, 200000))
def test_flash2_bwd_block_rule_is_never_beaten_by_the_square_rule(N: int, d: int, extra: int) -> None:
    M = registry.get("flash2-bwd").tiling_cls.min_M(N, d, d) + extra
    assert backward_cost("flash2-bwd", N=N, d=d, M=M).io_words <= backward_cost("flash2-square-bwd", N=N, d=d, M=M).io_words


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def test_per_array_traffic_matches_the_derivations_line_by_line() -> None:
    """docs/costs.md#backward, array by array, at N=101, d=13, dv=13 (no block size divides)."""
    N, d = 101, 13
    io = lambda name, M: count(name, N=N, d=d, M=M).per_array  # noqa: E731

    M = 800  # flash2-bwd: c = ⌊(800 − 41)/54⌋ = 14, T_c = 8
    p, T_c = io("flash2-bwd", M), ceil_div(N, (M - 3 * d - 2) // (4 * d + 2))
    assert T_c == 8
    assert (p["O"].reads_words, p["D"].writes_words, p["D"].reads_words) == (N * d, N, T_c * N)
    assert (p["dO"].reads_words, p["K"].reads_words, p["V"].reads_words) == (N * d + T_c * N * d, N * d, N * d)
    assert (p["Q"].reads_words, p["L"].reads_words) == (T_c * N * d, T_c * N)
    assert (p["dQ"].reads_words, p["dQ"].writes_words) == (T_c * N * d, (1 + T_c) * N * d)
    assert (p["dK"].writes_words, p["dV"].writes_words, p["dK"].reads_words) == (N * d, N * d, 0)

    M = 800  # flash2-2pass-bwd: pass 1 c = ⌊(800 − 28)/54⌋ = 14, T_c = 8; pass 2 a = ⌊(800 − 26)/43⌋ = 18, T_r2 = 6
    p, T_c, T_r2 = io("flash2-2pass-bwd", M), ceil_div(N, (M - 2 * d - 2) // (4 * d + 2)), ceil_div(N, (M - 2 * d) // (3 * d + 4))
    assert (T_c, T_r2) == (8, 6)
    assert (p["O"].reads_words, p["D"].writes_words, p["D"].reads_words) == (N * d, N, T_c * N + N)
    assert (p["dO"].reads_words, p["Q"].reads_words, p["L"].reads_words) == (N * d + T_c * N * d + N * d, T_c * N * d + N * d, T_c * N + N)
    assert (p["K"].reads_words, p["V"].reads_words) == (N * d + T_r2 * N * d, N * d + T_r2 * N * d)
    assert (p["dQ"].reads_words, p["dQ"].writes_words) == (0, N * d)  # dQ written once, never read
    assert (p["dK"].writes_words, p["dV"].writes_words, p["dK"].reads_words, p["dV"].reads_words) == (N * d, N * d, 0, 0)

    M = 500  # flash1-bwd: B_c = ⌈500/52⌉ = 10, T_c = 11
    p, T_c = io("flash1-bwd", M), ceil_div(N, ceil_div(M, 4 * d))
    assert (p["O"].reads_words, p["dO"].reads_words, p["ell"].reads_words) == (T_c * N * d, T_c * N * d, T_c * N)
    assert (p["dQ"].writes_words, p["dK"].writes_words, p["dV"].writes_words) == ((1 + T_c) * N * d, 2 * N * d, 2 * N * d)

    M, b = 300, 10  # standard-bwd: b = ⌊√100⌋ = 10, T = 11, T_d = T_v = 2
    p, T, Td = io("standard-bwd", M), ceil_div(N, b), ceil_div(d, b)
    assert (p["P"].reads_words, p["dP"].writes_words, p["dP"].reads_words) == (Td * N * N + 2 * N * N, N * N, 2 * N * N)
    assert (p["dS"].writes_words, p["dS"].reads_words) == (N * N, 2 * Td * N * N)
    assert (p["dO"].reads_words, p["V"].reads_words, p["K"].reads_words) == (2 * T * N * d, T * N * d, T * N * d)

    M, B = 300, 9  # square_tiling-bwd: B = ⌊(⌊√901⌋ − 1)/3⌋ = 9, T = 12, T_d = T_v = 2
    p, T, Td = io("square_tiling-bwd", M), ceil_div(N, B), ceil_div(d, B)
    assert (p["S"].reads_words, p["L"].reads_words) == (N * N + Td * N * N, N + T * Td * N)
    assert (p["dS"].writes_words, p["dS"].reads_words, p["D"].reads_words) == (N * N, 2 * Td * N * N, N)
    assert (p["dO"].reads_words, p["V"].reads_words) == (N * d + T * N * d + T * N * d, T * N * d)


@pytest.mark.parametrize("forward,backward", [("flash2", "flash2-bwd"), ("flash2-square", "flash2-square-bwd"), ("flash1", "flash1-bwd"),
                                              ("flash1-fit", "flash1-fit-bwd"), ("standard", "standard-bwd"),
                                              ("square_tiling", "square_tiling-bwd")])
def test_training_step_pairs_each_forward_with_its_backward_and_adds_up(forward: str, backward: str) -> None:
    s = run(forward, pass_="step", N=29, d=5, M=300, seed=2)
    assert s.backward.algorithm == backward
    out = s.as_dict()
    for key in ("reads", "writes", "io"):
        assert out["total"][key] == out["forward"][key] + out["backward"][key]
    assert out["total"]["peak_fast_words"] == max(out["forward"]["peak_fast_words"], out["backward"]["peak_fast_words"])
    assert max(s.backward.rel_errors.values()) <= 1e-10
    json.dumps(out, default=str)


def test_training_step_with_auto_uses_the_statistics_its_forward_saved() -> None:
    for N, d, M in [(4096, 64, 65536), (4096, 256, 4096), (64, 8, 60)]:
        s = run("auto", pass_="step", N=N, d=d, M=M, count_only=True)
        chosen_fwd = s.forward.tiling.algorithm
        chosen_bwd = s.backward.tiling.algorithm
        saves = registry.get(chosen_fwd).saves
        assert set(registry.get(chosen_bwd).stats) <= set(saves), (N, d, M, chosen_fwd, chosen_bwd)
        assert s.backward.measurement.io == auto.choose("backward", N, d, M, stats=saves)[1]


def test_bad_input_is_rejected_with_the_parameter_named() -> None:
    with pytest.raises(InvalidParameter, match="algorithm"):
        run("flash3-bwd", N=4, d=2, M=100)
    for name in WITH_FORMULA:
        lo = registry.get(name).tiling_cls.min_M(10, 8, 8)
        if lo <= 1:
            continue
        with pytest.raises(InvalidParameter, match="M"):
            count(name, N=10, d=8, M=lo - 1)
        with pytest.raises(InvalidParameter, match="M"):
            backward_cost(name, N=10, d=8, M=lo - 1)
        count(name, N=10, d=8, M=lo)
    with pytest.raises(InvalidParameter, match="dO"):
        Q = np.ones((3, 2))
        run("flash2-bwd", inputs=(Q, Q, Q, np.ones((3, 5))), M=100)
    with pytest.raises(Unsupported):
        run("poly", pass_="step", N=8, d=2, M=1000, count_only=True)


def test_cli_training_step_json_holds_forward_backward_and_total(capsys: pytest.CaptureFixture) -> None:
    from attnio.cli import main

    assert main(["run", "flash2", "--backward", "--N", "4096", "--d", "64", "--M", "65536", "--count-only", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"forward", "backward", "total", "workload", "mask"} and out["mask"] is None  # unmasked
    assert (out["forward"]["algorithm"], out["backward"]["algorithm"]) == ("flash2", "flash2-bwd")
    for part in ("forward", "backward", "total"):
        assert {"reads", "writes", "io", "peak_fast_words"} <= set(out[part])
    assert out["backward"]["io"] == backward_cost("flash2-bwd", N=4096, d=64, M=65536).io_words
    assert out["total"]["io"] == out["forward"]["io"] + out["backward"]["io"]
    assert main(["run", "standard", "--backward", "--N", "20", "--d", "4", "--M", "48"]) == 0
    text = capsys.readouterr().out
    assert "standard-bwd" in text and "total (training step)" in text and "dQ rel. error" in text
    assert main(["run", "flash1-bwd", "--N", "20", "--d", "4", "--M", "48", "--json"]) == 0
    alone = json.loads(capsys.readouterr().out)
    assert alone["algorithm"] == "flash1-bwd" and alone["overflowed"] is True


def test_cli_algorithms_backward_lists_the_backward_table_and_leaves_the_forward_listing_alone(capsys: pytest.CaptureFixture) -> None:
    from attnio.cli import main

    assert main(["algorithms", "--backward", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["algorithms"]
    assert [r["name"] for r in rows] == registry.names("backward")
    assert all(r["reads"] for r in rows if r["name"] != "auto-bwd")
    assert main(["algorithms", "--json"]) == 0
    assert [r["name"] for r in json.loads(capsys.readouterr().out)["algorithms"]] == registry.names()


def test_report_section_lists_the_backward_constants_and_the_training_step() -> None:
    from attnio.reports.figures import GATE_SOURCES
    from attnio.reports.report import Section
    from attnio.reports.section_backward import fill

    verdicts = [{"id": "backward.tight.flash2-bwd", "verdict": "proved", "constant": "96"}]
    s = fill(Section("Backward pass and training step"), verdicts)
    tables = [b for b in s.blocks if b[0] == "table"]
    text = " ".join(b[1] for b in s.blocks if b[0] == "p")
    consts = next(t for t in tables if "flash2-bwd ÷ bound" in t[1])
    assert len(consts[2]) == 6 and all(r[3] == "flash2-2pass-bwd" for r in consts[2])  # 14N²d²/M against flash2-bwd's 16
    assert any(t[2] == [["backward.tight.flash2-bwd", "proved", "96"]] for t in tables)
    measured = next(t for t in tables if "= formula" in t[1])
    assert all(r[5] == "yes" for r in measured[2])  # every measured count equals its formula
    assert "ratio 1.158" in text
    g = GATE_SOURCES["backward"]()  # the gate's backward figures (its bounds are the catalog's)
    assert set(g) == {"io", "formulas", "constants"} and all(k.startswith("bwd:") for k in g["formulas"])


def test_every_forward_auto_can_choose_records_what_it_saves_for_the_backward() -> None:
    # auto's training step pairs the forward it chose with a backward that reads what that forward saved:
    # a forward candidate missing from FORWARD_SAVES would leave auto-bwd with no statistics at all.

    assert set(registry.candidates("forward")) <= set(registry.forward_saves()), set(registry.candidates("forward")) - set(registry.forward_saves())


@settings(max_examples=40)
@given(st.integers(1, 60), st.integers(1, 12), st.integers(1, 12), st.integers(0, 3000))
def test_flash2_2pass_bwd_peak_is_the_larger_pass_working_set_and_fits_M(N: int, d: int, dv: int, extra: int) -> None:
    """The peak is the largest of the D pass's, pass 1's and pass 2's working sets, and never exceeds M."""
    cls = registry.get("flash2-2pass-bwd").tiling_cls
    M = cls.min_M(N, d, dv) + extra
    t = cls.default(N, d, M, dv)
    m = count("flash2-2pass-bwd", N=N, d=d, dv=dv, M=M)
    assert m.peak_fast_words == cls.fast_words(t, N, d, dv, M) <= M
