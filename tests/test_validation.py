"""Bad input: every row of the table must raise InvalidParameter naming the parameter, its value and the valid
range; through the CLI the same inputs give one line on stderr, exit code 2 and no traceback."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from attnio.algorithms.run import run
from attnio.cli import main
from attnio.core import validate
from attnio.core.errors import InvalidParameter, Unsupported
from attnio.core.validate import check_choice, check_int, check_real, check_run_sizes, check_seed
from attnio.core.workload import Workload


def bad(fn, *args, **kwargs):  # a row of the table, with an id that reads like the call
    def show(v):
        if isinstance(v, tuple):
            return "(" + ", ".join(map(show, v)) + ")"
        return f"<array {v.shape}>" if isinstance(v, np.ndarray) else repr(v)

    call = ", ".join([*map(repr, args), *(f"{k}={show(v)}" for k, v in kwargs.items())])
    return pytest.param(fn, args, kwargs, id=f"{fn.__name__}({call})")


NAN = np.ones((4, 2))
NAN[1, 1] = np.nan
INF = np.ones((4, 2))
INF[0, 0] = np.inf

BAD_CALLS = [
    bad(check_int, "N", 0, min=1),
    bad(check_int, "N", 2.5, min=1),
    bad(check_int, "N", True, min=1),
    bad(check_int, "N", "8", min=1),
    bad(check_int, "M", 10, min=1, max=5),
    bad(check_real, "eps", 0.0, gt=0, lt=1),
    bad(check_real, "eps", float("nan"), gt=0, lt=1),
    bad(check_real, "eps", "x", gt=0),
    bad(check_real, "B", -1.0, ge=0),
    bad(check_real, "B", 3.0, le=2),
    bad(check_choice, "backend", "tpu", ["numpy", "cupy"]),
    bad(check_run_sizes, 2**20, 64, 64, count_only=False),  # N·d above what a numeric run holds
    bad(check_run_sizes, 4, 2, 2**23, count_only=False),  # N·dv above it
    bad(check_run_sizes, 2**15, 8, 8, count_only=False),  # N above the reference's N×N scores
    bad(check_seed, -1),
    bad(check_seed, 2**64),
    bad(check_seed, 1.5),
    bad(run, "flash2", N=0, d=4, M=100),
    bad(run, "flash2", N=8, d=0, M=100),
    bad(run, "flash2", N=8, d=4, M=0),
    bad(run, "flash2", N=8, d=4, M=10),  # below flash2's minimum
    bad(run, "flash2", N=8.5, d=4, M=100),
    bad(run, "no-such-algorithm", N=8, d=4, M=100),
    bad(run, "flash2", N=8, d=4, M=100, backend="tpu"),
    bad(run, "flash2", inputs=(NAN, np.ones((4, 2)), np.ones((4, 2))), M=100),
    bad(run, "flash2", inputs=(np.ones((4, 2)), INF, np.ones((4, 2))), M=100),
    bad(run, "flash2", inputs=(np.ones((4, 2)), np.ones((5, 2)), np.ones((4, 2))), M=100),
    bad(run, "flash2", inputs=(np.ones((4, 2)), np.ones((4, 2)), np.ones((3, 2))), M=100),
    bad(run, "flash2", inputs=(np.ones(4), np.ones((4, 2)), np.ones((4, 2))), M=100),
    bad(run, "flash2", inputs=(np.ones((4, 2)), None, np.ones((4, 2))), M=100),
    # every pass and every workload path validates: seeds, passes, schedules, sizes, inputs
    bad(run, "flash2-bwd", N=8, d=4, M=100, seed=-1),
    bad(run, "flash2", Workload.build(N=8, d=4, M=100, causal=True), seed=-1),
    bad(run, "flash2-bwd", Workload.build(heads=2, N=8, d=4, M=100, causal=True), seed=2**64),
    bad(run, "flash2", pass_="step", N=8, d=4, M=100, seed=-1),
    bad(run, "flash2", pass_="sideways", N=8, d=4, M=100),
    bad(run, "flash2-bwd", pass_="forward", N=8, d=4, M=100),
    bad(run, "flash2", pass_="backward", N=8, d=4, M=100),
    bad(run, "flash2", Workload.build(N=8, d=4, M=100), schedule="by-token"),
    bad(run, "flash2-bwd", N=2**15, d=2, M=100),  # numeric: the N×N float64 reference is refused before drawing
    bad(run, "flash2", Workload.build(heads=64, N=4096, d=2, M=100)),  # numeric: every head's N×N scores
    bad(run, "flash2-bwd", inputs=(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2)), np.ones((3, 2))), M=100),
    bad(run, "flash2-bwd", inputs=(np.ones((4, 2)), np.ones((4, 2)), np.ones((4, 2))), M=100),
    bad(run, "flash2", Workload.build(N=8, d=4, M=100), inputs=(np.ones((8, 4)), np.ones((8, 4)), np.ones((8, 4)))),
    bad(run, "flash2", Workload.build(heads=2, N=8, d=4, M=100), backend="cupy"),
    bad(run, "flash2", Workload.build(heads=2, N=8, d=4, M=100), M=100),
]


@pytest.mark.parametrize("fn,args,kwargs", BAD_CALLS)
def test_bad_input_raises_invalid_parameter_naming_value_and_range(fn, args, kwargs) -> None:
    with pytest.raises(InvalidParameter) as e:
        fn(*args, **kwargs)
    msg = str(e.value)
    assert e.value.name in msg and "valid range is" in msg and repr(e.value.value) in msg


def test_every_validator_is_seen_to_fail() -> None:
    """Every public ``check_*`` of :mod:`attnio.core.validate` (read from the module, so a new one must join the
    table) has a row above."""
    validators = {n for n, f in vars(validate).items() if n.startswith("check_") and callable(f) and f.__module__ == validate.__name__}
    used = {p.values[0].__name__ for p in BAD_CALLS}
    assert len(validators) >= 5 and validators <= used, sorted(validators - used)


CLI_BAD = [
    ["run", "flash2", "--N", "0", "--d", "4", "--M", "100"],
    ["run", "flash2", "--N", "8", "--d", "4", "--M", "10"],
    ["run", "flash2", "--N", "8", "--d", "x", "--M", "100"],
    ["run", "flash2", "--N", "8", "--d", "4", "--M", "1e3"],
    ["run", "nope", "--N", "8", "--d", "4", "--M", "100"],
    ["run", "flash2", "--N", "8", "--d", "4"],
]


@pytest.mark.parametrize("argv", CLI_BAD, ids=lambda a: " ".join(a))
def test_cli_bad_input_is_one_line_exit_2_no_traceback(argv, capsys) -> None:
    with pytest.raises(SystemExit) as e:  # argparse errors exit themselves
        raise SystemExit(main(argv))
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.strip()
    assert "error" in err.splitlines()[-1]


def test_cli_subprocess_bad_input_prints_no_traceback() -> None:
    p = subprocess.run(
        [sys.executable, "-m", "attnio.cli", "run", "flash2", "--N", "8", "--d", "4", "--M", "10"],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert p.stderr.count("\n") == 1 and "M=10" in p.stderr and "valid range" in p.stderr


def test_unsupported_dv_is_not_implemented_not_invalid() -> None:
    from attnio.algorithms.registry import REGISTRY, AlgorithmSpec, register

    spec = REGISTRY["flash2"]
    register(AlgorithmSpec("toy-no-dv", spec.schedule, spec.tiling_cls, "test only", "-", None))
    try:
        with pytest.raises(Unsupported):
            run("toy-no-dv", N=8, d=4, dv=3, M=200)
    finally:
        del REGISTRY["toy-no-dv"]


# sizes, seeds and the mode ---------------------------------------------------------------------------------

HUGE = str(10**30)


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (["run", "flash2", "--N", "8", "--d", HUGE, "--M", "64"], "use --count-only above N·d = 16777216"),
        (["run", "flash2", "--N", HUGE, "--d", "2", "--M", "64"], "use --count-only above N·d = 16777216"),
        (["run", "flash2", "--N", "8", "--d", "2", "--dv", HUGE, "--M", "64"], "N·dv="),
        (["run", "flash2", "--N", "16385", "--d", "1", "--M", "64"], "use --count-only above N = 16384"),
        (["run", "poly", "--N", "8", "--d", "2", "--dv", HUGE, "--M", "64", "--eps", "0.1", "--B", "0.5"], "needs d_v = d"),
        (["run", "flash2", "--N", "8", "--d", "2", "--M", "64", "--seed", "-1"], "seed=-1 is invalid"),
        (["run", "flash2", "--N", "8", "--d", "2", "--M", "64", "--seed", str(2**64)], "seed=18446744073709551616"),
        (["run", "flash2-bwd", "--N", "8", "--d", "2", "--M", "64", "--seed", "-1"], "seed=-1 is invalid"),
        (["run", "flash2-bwd", "--N", "8", "--d", "2", "--M", "64", "--causal", "--seed", "-1"], "seed=-1 is invalid"),
        (["run", "flash2", "--N", "8", "--d", "2", "--M", "64", "--backward", "--seed", "-1"], "seed=-1 is invalid"),
        (["run", "flash2", "--N", "8", "--d", "2", "--M", "64", "--heads", "2", "--backward", "--seed", "-1"], "seed=-1 is invalid"),
        (["run", "flash2-bwd", "--N", "32768", "--d", "2", "--M", "64"], "use --count-only above N = 16384"),
        ([], "no command given"),
        (["run"], "the following arguments are required"),
        (["run", "flash2", "--N", "x", "--d", "2", "--M", "64"], "'x' is not an integer"),
        (["gate", "--workers", "-1", "--baseline", "missing.json"], "workers=-1"),
    ],
    ids=lambda x: " ".join(x)[:60] if isinstance(x, list) else None,
)
def test_bad_sizes_seeds_and_usage_are_refused_before_anything_is_allocated(argv, fragment, capsys) -> None:
    import resource

    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and fragment in err, err
    assert "see `attnio" in err or "valid range" in err or "needs d_v" in err  # a hint or the valid range
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0 < 200_000  # KiB: nothing of that size drawn


def test_count_only_takes_any_size_including_d_beyond_float_range(capsys) -> None:
    import json

    assert main(["run", "flash2", "--N", "4", "--d", str(10**400), "--M", str(10**401), "--count-only", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["d"] == 10**400 and out["io"] == out["reads"] + out["writes"] > 4 * 10**400


def test_overflowing_logits_are_an_error_naming_the_cause_not_silent_nan() -> None:
    Q = np.full((4, 2), 1e155)  # finite, but q·k = 2e310 overflows float64
    with pytest.raises(InvalidParameter, match="logits overflowed") as e:
        run("flash2", inputs=(Q, Q, np.ones((4, 2))), M=64)
    assert "output entries are NaN/Inf" in str(e.value)
    r = run("flash2", inputs=(Q / 1e150, Q / 1e150, np.ones((4, 2))), M=64)  # large but representable logits are fine
    assert np.isfinite(r.max_abs_error)


def test_bare_attnio_prints_one_line_and_a_hint_on_stderr(capsys) -> None:
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "attnio --help" in err


def test_integral_float_block_sizes_and_counts_are_stored_as_integers() -> None:
    """check_int accepts 4.0 as 4: a tiling and an IOCount must then hold the int (a float tiling gave float
    counts, IOCount(576.0, 80.0), count-only and a TypeError in a numeric run)."""
    from attnio.algorithms.flash2 import Flash2Tiling
    from attnio.core.counts import IOCount

    t = Flash2Tiling(4.0, 2.0)
    assert t == Flash2Tiling(4, 2) and type(t.B_r) is int and type(t.B_c) is int
    want = run("flash2", N=16, d=4, M=200, tiling=Flash2Tiling(4, 2), seed=0).measurement.io
    for count_only in (True, False):
        got = run("flash2", N=16, d=4, M=200, tiling=t, seed=0, count_only=count_only).measurement.io
        assert got == want and type(got.reads_words) is int
    c = IOCount(2.0, 3.0)
    assert type(c.reads_words) is int and type(c.writes_words) is int
