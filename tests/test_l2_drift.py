"""The L2 replay's sync option (algorithms/l2_schedule.py, docs/dram.md#lockstep-and-drift): lockstep is the default
and unchanged, drift staggers the first wave, and the bracket's ends on a case small enough to count by hand."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.algorithms.l2 import replay, replay_backward
from attnio.algorithms.l2_cache import SectoredLRU
from attnio.algorithms.l2_schedule import Accounting, run_partition
from attnio.core.errors import InvalidParameter
from attnio.core.workload import Workload


def _fields(r) -> dict:  # noqa: ANN001
    d = r.as_dict()
    d.pop("seconds")
    return d


def _hand(skew: float) -> tuple[int, int]:
    """Two programs on two slots, each reading block X (4 lines) then block Y (4 lines); an L2 of 4 lines."""
    x = (0, "X", 4, 0xFFFF, 16, 512, 0, True, False)
    y = (0, "Y", 4, 0xFFFF, 16, 512, 0, True, False)
    acc = Accounting(["T"], 32)
    run_partition([0, 1], 2, lambda pid, pos: [(x,), (y,)], SectoredLRU(4), acc, {}, skew)
    t = acc.traffic()["T"]
    return t.dram_read_bytes, t.hit_lines


def test_bracket_ends_on_a_hand_case() -> None:
    # lockstep: round 1 both read X (one miss, one hit), round 2 both read Y: 2 blocks of 512 B from DRAM, 8 hits.
    assert _hand(0.0) == (1024, 8)
    # drift-max: slot 1 waits round(1 * 1/2 * 2) = 1 round: A reads X | A reads Y (evicts X), B reads X (evicts Y) |
    # B reads Y: every read misses, 4 blocks.
    assert _hand(1.0) == (2048, 0)
    # skew 0.25: round(0.25) = 0 rounds, lockstep again
    assert _hand(0.25) == (1024, 8)


def test_lockstep_is_the_default_and_skew_does_not_touch_it() -> None:
    w = Workload.build(heads=2, N=512, d=64, dtype="fp16", causal=True, M=10**6)
    kw = dict(B_r=32, B_c=32, sms=3, l2_bytes=32768)
    base = _fields(replay(w, "h100", **kw))
    assert base == _fields(replay(w, "h100", sync="lockstep", skew=0.5, **kw))
    assert base["sync"] == "lockstep" and base["skew"] == 0.0
    drift = _fields(replay(w, "h100", sync="drift", **kw))
    assert drift["requested_bytes"] == base["requested_bytes"] and drift["sector_bytes"] == base["sector_bytes"]
    assert drift["sync"] == "drift" and drift["skew"] == 1.0


def test_drift_is_deterministic() -> None:
    w = Workload.build(heads=2, N=512, d=64, dtype="fp16", causal=True, M=10**6)
    kw = dict(B_r=32, B_c=32, sms=5, l2_bytes=16384, sync="drift", skew=0.7)
    assert _fields(replay(w, "h100", **kw)) == _fields(replay(w, "h100", **kw))
    b = dict(B_r=32, B_c=32, sms=3, l2_bytes=16384, sync="drift")
    assert _fields(replay_backward(w, "a100", **b)) == _fields(replay_backward(w, "a100", **b))


def test_drift_rereads_what_lockstep_shares() -> None:
    # one head, 16 Q blocks on 16 slots, an L2 of two K/V tiles: lockstep reads each K/V tile once; spread over a
    # program's length, the sharers of a tile are rounds apart and the two-tile L2 has long lost it
    w = Workload.build(heads=1, N=512, d=64, dtype="fp16", M=10**6)
    kw = dict(B_r=32, B_c=32, sms=16, l2_bytes=2 * 32 * 128)
    lock, drift = replay(w, "h100", **kw), replay(w, "h100", sync="drift", **kw)
    assert lock.dram_bytes == lock.compulsory_bytes
    assert drift.dram_bytes > 4 * lock.dram_bytes


@settings(max_examples=30)
@given(st.sampled_from([128, 256, 384, 512]), st.booleans(), st.integers(2, 8), st.integers(0, 32),
       st.floats(0.05, 1.0))
def test_one_wave_one_head_lockstep_is_compulsory_so_drift_is_not_below(N: int, causal: bool, extra_slots: int,
                                                                      extra_lines: int, skew: float) -> None:
    """Where lockstep provably shares all it can: one head, one wave (slots >= Q blocks), an L2 of at least K_j
    and V_j (2 tiles of 32 one-line rows): in round j every sharer reads K_j, V_j right after the first one
    fetched them, so lockstep reads each sector once (= compulsory), and no schedule reads less. Elsewhere
    drift can be below lockstep (docs/dram.md#lockstep-and-drift: 15 of 150 random small cases)."""
    w = Workload.build(heads=1, N=N, d=64, dtype="fp16", causal=causal, M=10**6)
    kw = dict(B_r=32, B_c=32, sms=N // 32 + extra_slots, l2_bytes=(64 + extra_lines) * 128)
    lock, drift = replay(w, "h100", **kw), replay(w, "h100", sync="drift", skew=skew, **kw)
    assert lock.dram_bytes == lock.compulsory_bytes
    assert drift.dram_bytes >= lock.dram_bytes
    assert drift.compulsory_bytes == lock.compulsory_bytes


@pytest.mark.parametrize(("kw", "name"), [(dict(sync="drifting"), "sync"), (dict(sync="drift", skew=0), "skew"),
                                          (dict(sync="drift", skew=1.5), "skew"), (dict(skew=True), "skew")])
def test_bad_sync_or_skew_names_the_parameter(kw: dict, name: str) -> None:
    w = Workload.build(heads=1, N=128, d=64, dtype="fp16", M=10**6)
    with pytest.raises(InvalidParameter, match=name):
        replay(w, "h100", **kw)


def test_cli_run_l2_sync(capsys) -> None:  # noqa: ANN001
    import json

    from attnio.cli import main

    base = ["run", "flash2", "--N", "512", "--d", "64", "--heads", "2", "--dtype", "fp16", "--M", "20000",
            "--count-only", "--l2", "h100"]
    assert main([*base, "--l2-sync", "drift", "--l2-skew", "0.5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)["l2"]
    assert out["sync"] == "drift" and out["skew"] == 0.5
    assert main([*base, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["l2"]["sync"] == "lockstep"
    for extra, needle in ((["--l2-sync", "drifting"], "l2-sync='drifting'"), (["--l2-sync", "drift", "--l2-skew", "0"],
                                                                              "l2-skew=0")):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr()
        assert needle in err.err and err.err.count("\n") == 1 and err.out == ""


def test_cli_kernel_l2_sync_bad_value_is_one_line(capsys) -> None:  # noqa: ANN001
    from pathlib import Path

    from triton_env import import_triton

    import_triton()
    from attnio.cli import main

    example = Path(__file__).resolve().parents[1] / "examples" / "causal_fa2_noskip.py"
    base = ["kernel", f"{example}:launch", "--N", "64", "--d", "64", "--heads", "2", "--dtype", "fp16", "--l2", "h100"]
    for extra, needle in ((["--l2-sync", "async"], "l2-sync='async'"), (["--l2-sync", "drift", "--l2-skew", "1.5"],
                                                                        "l2-skew=1.5")):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr()
        assert needle in err.err and err.err.count("\n") == 1 and err.out == ""
    assert main([*base, "--l2-sync", "drift", "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["l2"]["sync"] == "drift"


def test_cli_skew_and_sync_without_l2_or_drift_are_refused(capsys) -> None:  # noqa: ANN001
    """--l2-sync and --l2-skew without --l2, --l2-skew under the default lockstep, and --l2-section-heads without
    --l2-order sections were silently ignored (exit 0, the same numbers); now one line naming the option, exit 2,
    in attnio kernel and attnio run."""
    from pathlib import Path

    from triton_env import import_triton

    import_triton()
    from attnio.cli import main

    example = Path(__file__).resolve().parents[1] / "examples" / "causal_fa2_noskip.py"
    kernel = ["kernel", f"{example}:launch", "--N", "64", "--d", "16"]
    run = ["run", "flash2", "--N", "256", "--d", "64", "--gpu", "h100", "--count-only"]
    cases = [(kernel, ["--l2-sync", "drift"], "l2-sync='drift'", "only with --l2 PRESET"),
             (kernel, ["--l2-skew", "0.5"], "l2-skew=0.5", "only with --l2 PRESET"),
             (kernel, ["--l2", "h100", "--l2-skew", "0.5"], "l2-skew=0.5", "--l2-sync drift"),
             (kernel, ["--l2", "h100", "--l2-section-heads", "2"], "l2-section-heads=2", "--l2-order sections"),
             (run, ["--l2-sync", "drift"], "l2-sync='drift'", "only with --l2 PRESET"),
             (run, ["--l2-skew", "0.3"], "l2-skew=0.3", "only with --l2 PRESET"),
             (run, ["--l2", "h100", "--l2-skew", "0.3"], "l2-skew=0.3", "--l2-sync drift")]
    for base, extra, name, why in cases:
        assert main([*base, *extra]) == 2, extra
        err = capsys.readouterr()
        assert name in err.err and why in err.err and err.err.count("\n") == 1 and err.out == "", (extra, err.err)
