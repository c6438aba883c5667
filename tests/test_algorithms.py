"""Every exact algorithm computes attention: output vs the float64 reference, softmax stability, flash1's
audit-mode working set, the `auto` choice, and bad input.

Error measure throughout: ``max|O − O_ref| / max|O_ref|`` (max-abs error relative to the largest reference
entry), against ``attnio.algorithms.reference.attention`` in float64, which must be ≤ 1e-10.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import strategies
from hypothesis import given
from hypothesis import strategies as st

from attnio.algorithms import flash1, registry
from attnio.algorithms.reference import attention
from attnio.algorithms.run import count, run
from attnio.core.errors import InvalidParameter

EXACT = ["flash2", "flash2-square", "flash1", "flash1-fit", "standard", "square_tiling", "square_tiling-io", "kv_stationary", "split_v", "auto"]


def rel_err(out: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(out - ref)) / max(float(np.max(np.abs(ref))), 1e-300))


def inputs(seed: int, N: int, d: int, dv: int, spread: float = 1.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return (
        spread * rng.standard_normal((N, d)),
        spread * rng.standard_normal((N, d)),
        rng.standard_normal((N, dv)),
    )


@pytest.mark.parametrize("name", EXACT)
@given(data=st.data())
def test_output_equals_float64_reference_within_1e_10_relative(name: str, data: st.DataObject) -> None:
    N, d, dv, M, seed = data.draw(strategies.small_points(name, fits=4))
    Q, K, V = inputs(seed, N, d, dv)
    r = run(name, inputs=(Q, K, V), M=M)
    assert rel_err(r.output, attention(Q, K, V)) <= 1e-10, (N, d, dv, M)


@pytest.mark.parametrize("name", EXACT)
def test_output_on_a_non_divisible_medium_case(name: str) -> None:
    N, d, dv = 53, 11, 11 if name != "split_v" else 23
    M = max(registry.get(name).tiling_cls.min_M(N, d, dv), 400)
    Q, K, V = inputs(7, N, d, dv)
    r = run(name, inputs=(Q, K, V), M=M)
    assert rel_err(r.output, attention(Q, K, V)) <= 1e-10


@pytest.mark.parametrize("name", EXACT)
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_softmax_is_stable_for_logits_of_1e4(name: str, sign: float) -> None:
    """Scores of magnitude ~1e4: exp would overflow (e^{1e4} = inf) without the max/logsumexp shifts."""
    N, d = 20, 4
    rng = np.random.default_rng(3)
    Q = rng.standard_normal((N, d))
    K = rng.standard_normal((N, d))
    V = rng.standard_normal((N, d))
    S = Q @ K.T
    scale = sign * 1e4 / float(np.max(np.abs(S)))  # the largest |logit| is exactly 1e4
    M = max(registry.get(name).tiling_cls.min_M(N, d, d), 120)
    r = run(name, inputs=(Q, K, V), M=M, scale=scale)
    ref = attention(Q, K, V, scale=scale)
    assert np.all(np.isfinite(r.output))
    assert rel_err(r.output, ref) <= 1e-10
    with np.errstate(over="ignore"):
        assert np.isinf(np.exp(np.max(np.abs(S * scale))))  # the naive exp(S) really overflows here


def test_square_tiling_is_stable_where_the_published_version_overflows() -> None:
    """Saha–Ye store exp(QKᵀ): at logits ~1e3 that is inf. The stable variant stores logits and L."""
    N, d = 16, 4
    Q, K, V = inputs(5, N, d, d, spread=40.0)
    with np.errstate(over="ignore"):
        assert not np.all(np.isfinite(np.exp(Q @ K.T)))
    r = run("square_tiling", inputs=(Q, K, V), M=64, scale=1.0)
    assert rel_err(r.output, attention(Q, K, V, scale=1.0)) <= 1e-10


@given(st.integers(1, 3000), st.integers(1, 256), st.integers(1, 300_000))
def test_flash1_as_published_peak_equals_its_working_set_formula(N: int, d: int, M: int) -> None:
    """Peak = (b_c + b_r)(d + d_v) + b_r·b_c + 6b_r with b = min(block, N) (derived in algorithms/flash1.py)."""
    m = count("flash1", N=N, d=d, M=M)
    t = flash1.Flash1Tiling.default(N, d, M)
    bc, br = min(t.B_c, N), min(t.B_r, N)
    expected = (bc + br) * 2 * d + br * bc + 6 * br
    assert m.peak_fast_words == expected == flash1.peak_fast_words(N, d, M)
    assert m.overflowed == (expected > M)


def test_flash1_as_published_exceeds_M_by_up_to_a_quarter_near_M_equal_4d2() -> None:
    """Dao et al.'s blocks B_c = ⌈M/4d⌉, B_r = min(B_c, d). For M ≤ 4d² (B_r = B_c = M/4d) the working set is
    M + M²/(16d²) + 6B_r: 1.25·M (plus 6B_r) at M = 4d². Above, B_r = d and it is 3M/4 + 2d² + 6d, which fits
    once M ≳ 8d²."""
    for N, d in [(4096, 64), (8192, 128)]:
        at_4d2 = count("flash1", N=N, d=d, M=4 * d * d)
        assert at_4d2.overflowed and 1.25 < at_4d2.peak_fast_words / (4 * d * d) < 1.3
        at_d2 = count("flash1", N=N, d=d, M=d * d)
        assert at_d2.overflowed and 1.06 < at_d2.peak_fast_words / (d * d) < 1.1
        at_16d2 = count("flash1", N=N, d=d, M=16 * d * d)
        assert not at_16d2.overflowed and at_16d2.peak_fast_words < 16 * d * d


def test_flash1_fit_moves_about_half_of_flash1() -> None:
    """Blocks that fit M: B_c ≈ M/2d instead of M/4d, so about 6N²d²/M instead of 12N²d²/M."""
    N, d, M = 16384, 64, 65536
    a = count("flash1", N=N, d=d, M=M).io_words
    b = count("flash1-fit", N=N, d=d, M=M).io_words
    assert 0.45 < b / a < 0.55


@given(st.integers(1, 2000), st.integers(1, 160), st.integers(0, 200_000), st.booleans())
def test_auto_moves_exactly_the_least_measured_io_of_its_candidates(N: int, d: int, extra: int, wide_v: bool) -> None:
    """Measured on the machine (not from the formulas auto evaluates)."""
    dv = 2 * d if wide_v else d
    M = 4 + extra
    best = {}
    for name in registry.candidates("forward"):
        if M >= registry.get(name).tiling_cls.min_M(N, d, dv):
            best[name] = count(name, N=N, d=d, dv=dv, M=M).io_words
    r = run("auto", N=N, d=d, dv=dv, M=M, count_only=True)
    assert r.measurement.io_words == min(best.values())
    assert best[r.tiling.algorithm] == min(best.values())


def test_auto_reports_its_choice_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    from attnio.cli import main

    assert main(["run", "auto", "--N", "300", "--d", "16", "--M", "2000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["blocks"]["algorithm"] in registry.candidates("forward")
    assert out["max_abs_error"] < 1e-12


@pytest.mark.parametrize("name", [n for n in EXACT if n not in ("flash1",)])
def test_M_below_the_minimum_is_an_invalid_parameter_naming_the_minimum(name: str) -> None:
    lo = registry.get(name).tiling_cls.min_M(10, 8, 8)
    with pytest.raises(InvalidParameter, match=f"M >= {lo}"):
        run(name, N=10, d=8, M=lo - 1, count_only=True)
    run(name, N=10, d=8, M=lo, count_only=True)


def test_peak_is_at_most_M_at_the_minimum_M_for_every_fitting_algorithm() -> None:
    for name in EXACT:
        if registry.get(name).audit:
            continue
        for N, d, dv in [(1, 1, 1), (7, 3, 3), (9, 2, 5), (5, 6, 1)]:
            lo = registry.get(name).tiling_cls.min_M(N, d, dv)
            r = run(name, N=N, d=d, dv=dv, M=lo, seed=0)
            assert r.measurement.peak_fast_words <= lo and not r.measurement.overflowed, (name, N, d, dv)
            assert r.max_abs_error is not None and r.max_abs_error < 1e-12


# --- pinned by mutation testing (tools/mutation.sh, docs/mutation.md): behaviour a surviving mutant changed ---

# --- numerical edge cases of the online softmax ------------------------------------------------------------


_SOFTMAX = [n for n in EXACT if n != "square_tiling-io"]  # the exact schedules and auto


def _rel_err(out: np.ndarray, ref: np.ndarray) -> float:
    return float(np.max(np.abs(out - ref)) / np.max(np.abs(ref)))


@pytest.mark.parametrize("name", _SOFTMAX)
def test_rows_whose_every_logit_is_far_below_zero(name: str) -> None:
    """Every logit in [−2000, −1000]: e^{S} underflows to 0, so a running max that starts anywhere but −∞
    (e.g. at 0) gives ℓ = 0 and 0/0. The reference subtracts the true row max."""
    N, d = 13, 3
    rng = np.random.default_rng(11)
    Q = np.hstack([rng.uniform(0.5, 1.0, (N, d - 1)), np.ones((N, 1))])
    K = np.hstack([rng.uniform(-1.0, 0.0, (N, d - 1)), np.full((N, 1), -1.0)])
    V = rng.standard_normal((N, d))
    scale = 1000.0
    S = scale * Q @ K.T
    assert S.max() < -1000 and S.min() > -3 * 1000
    M = max(registry.get(name).tiling_cls.min_M(N, d, d), 60)
    r = run(name, inputs=(Q, K, V), M=M, scale=scale)
    assert np.all(np.isfinite(r.output))
    assert _rel_err(r.output, attention(Q, K, V, scale=scale)) <= 1e-10
