"""Captured per-program traces (attnio/triton/trace.py) and their L2 replay (algorithms/l2_trace.py): the trace's
requested bytes equal the counter's; the replay of attnio's FA-2 forward and backward Triton kernels equals the
tile-level replay of the same schedule (algorithms/l2.py, steps="access") exactly where tiles fill whole lines;
block steps (K_j and V_j one step) against the trace within a stated tolerance; the trace replay against a
line-by-line sectored LRU written separately, on synthetic traces Hypothesis draws; bad input; the CLI."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import json  # noqa: E402
from collections import OrderedDict  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from triton_env import import_triton  # noqa: E402

from attnio.algorithms.l2 import BWD_TENSORS, TENSORS, replay, replay_backward  # noqa: E402
from attnio.algorithms.l2_trace import KernelTrace, LaunchTrace, replay_trace  # noqa: E402
from attnio.core.errors import InvalidParameter  # noqa: E402
from attnio.core.workload import Workload  # noqa: E402

FWD_NAMES = dict(zip(TENSORS, ["q", "k", "v", "o", "lse"], strict=True))
BWD_NAMES = dict(zip(BWD_TENSORS, ["q", "k", "v", "o", "do", "lse", "fa2_bwd_preprocess.D", "dq", "dk", "dv"],
                     strict=True))
EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "causal_fa2_noskip.py"


def _fields(t) -> tuple:
    return (t.requested_read_bytes, t.requested_write_bytes, t.sectors, t.lines, t.read_lines, t.hit_lines,
            t.dram_read_bytes, t.dram_write_bytes)


def _same(trace_result, tile_result, names) -> None:
    for tile_name, trace_name in names.items():
        assert _fields(trace_result.tensors[trace_name]) == _fields(tile_result.tensors[tile_name]), tile_name
    assert trace_result.compulsory_read_bytes == tile_result.compulsory_read_bytes


@pytest.fixture(scope="module")
def fwd():
    """4 query heads on 2 K/V heads, N = 128, d = 64 fp16 (128-byte rows), 32 x 32 blocks, non-causal."""
    import_triton()
    from attnio.triton.trace import capture_fa2

    w = Workload.build(heads=4, kv_heads=2, N=128, d=64, dtype="fp16", M=10**6)
    return (w, *capture_fa2(w, 32, 32))


def test_trace_requested_bytes_equal_the_counters(fwd):
    w, traffic, trace = fwd
    assert trace.requested() == {n: (traffic.reads_bytes[n], traffic.writes_bytes[n]) for n in traffic.names}
    assert [la.grid for la in trace.launches] == [(4, 4, 1)]  # 4 Q blocks x 4 heads
    assert trace.nbytes < 100_000  # run-length: a (32-row, 128-byte) tile of one head is 32 runs of one line


MACHINES = [dict(), dict(sms=2, l2_bytes=16 * 1024), dict(sms=3, l2_bytes=24 * 1024, order="hqb"),
            dict(sms=2, occupancy=2, l2_bytes=40 * 1024), dict(sms=4, l2_bytes=8 * 1024, q_reverse=True),
            dict(sms=2, l2_bytes=32 * 1024, order="sections", section_heads=2), dict(sms=1, l2_bytes=128)]


@pytest.mark.parametrize("kw", MACHINES)
def test_forward_trace_replay_equals_the_tile_replay(fwd, kw):
    """Rows of 128 bytes, L tiles of 32·4 bytes, every tile whole lines: the captured trace replayed access by
    access equals the tile-level replay with one tile access a step, on every field, for every order, occupancy
    and cache size (the grid (Q block, head) is the tile replay's qhb numbering)."""
    w, _, trace = fwd
    tile = replay(w, "h100", B_r=32, B_c=32, steps="access", **kw)
    assert tile.exact
    _same(replay_trace(trace, "h100", **kw), tile, FWD_NAMES)


def test_forward_trace_replay_equals_the_tile_replay_on_xcd_partitions(fwd):
    """MI300X: 8 L2 partitions, program k to partition k mod 8 (a launch of 16 programs: 2 per partition)."""
    w, _, trace = fwd
    kw = dict(sms=1, l2_bytes=8 * 1024)
    tile = replay(w, "mi300x", B_r=32, B_c=32, steps="access", **kw)
    got = replay_trace(trace, "mi300x", **kw)
    assert got.partitions == 8 and got.programs == 16
    _same(got, tile, FWD_NAMES)
    _same(replay_trace(trace, "mi300x", partition=3, **kw),
          replay(w, "mi300x", B_r=32, B_c=32, steps="access", partition=3, **kw), FWD_NAMES)


@pytest.mark.parametrize("kw", MACHINES[1:5])
def test_drift_trace_replay_equals_the_tile_replay(fwd, kw):
    """sync="drift" goes through the same scheduler for a trace and for tiles: with one access a step the two
    replays stagger the same programs by the same rounds and agree on every field (docs/dram.md#lockstep-and-drift)."""
    w, _, trace = fwd
    for skew in (0.5, 1.0):
        tile = replay(w, "h100", B_r=32, B_c=32, steps="access", sync="drift", skew=skew, **kw)
        _same(replay_trace(trace, "h100", sync="drift", skew=skew, **kw), tile, FWD_NAMES)


@pytest.mark.parametrize("kw", MACHINES[:5])
def test_block_steps_within_5_percent_of_the_trace_on_these_five_machines(fwd, kw):
    """The tile replay's default steps (K_j and V_j together, O and L together) interleave programs differently
    from one access a step: requested and sector bytes are equal, DRAM bytes within 5% on these cases (equal here;
    a sweep of 960 thrashing-prone cases finds up to 13% elsewhere, docs/dram.md#captured-traces)."""
    w, _, trace = fwd
    a, b = replay_trace(trace, "h100", **kw), replay(w, "h100", B_r=32, B_c=32, **kw)
    assert a.requested_bytes == b.requested_bytes and a.sector_bytes == b.sector_bytes
    assert abs(a.dram_bytes - b.dram_bytes) <= 0.05 * b.dram_bytes


@pytest.mark.parametrize("causal", [False, True])
def test_backward_trace_replay_equals_the_tile_replay(causal):
    """attnio's FA-2 backward (preprocess + main, dQ by atomic adds): the captured trace, replayed, equals
    replay_backward(steps="access") on every tensor and field; its requested bytes equal the counter's."""
    import_triton()
    from attnio.triton.trace import capture_fa2

    w = Workload.build(heads=2, N=128, d=64, dtype="fp16", M=10**6, causal=causal)
    traffic, trace = capture_fa2(w, 32, 32, backward=True)
    assert trace.requested() == {n: (traffic.reads_bytes[n], traffic.writes_bytes[n]) for n in traffic.names}
    assert [la.kernel for la in trace.launches] == ["fa2_bwd_preprocess", "fa2_bwd_main"]
    for kw in (dict(), dict(sms=2, l2_bytes=16 * 1024), dict(sms=3, l2_bytes=48 * 1024, order="hqb")):
        tile = replay_backward(w, "h100", B_r=32, B_c=32, steps="access", **kw)
        assert tile.exact
        _same(replay_trace(trace, "h100", **kw), tile, BWD_NAMES)


def test_causal_forward_whole_tiles_exact_partial_tiles_request_less():
    """Causal: with B_r = B_c every program's last K/V tile ends on the diagonal, so the kernel's tiles are whole and
    the replays agree exactly; with B_c = 2·B_r the kernel clips its diagonal tile to the key rows the block sees
    (masked lanes move nothing), the tile replay loads it whole: the trace requests less K and V, by the
    masked-out rows of each odd Q block (B_r rows of d·2 bytes each), and reads no more from DRAM."""
    import_triton()
    from attnio.triton.trace import capture_fa2

    w = Workload.build(heads=2, N=128, d=64, dtype="fp16", M=10**6, causal=True)
    _, trace = capture_fa2(w, 32, 32)
    _same(replay_trace(trace, "h100", sms=2, l2_bytes=16 * 1024),
          replay(w, "h100", B_r=32, B_c=32, steps="access", sms=2, l2_bytes=16 * 1024), FWD_NAMES)
    _, trace = capture_fa2(w, 32, 64)
    a, b = replay_trace(trace, "h100"), replay(w, "h100", B_r=32, B_c=64, steps="access")
    masked = 2 * 2 * 32 * 64 * 2  # 2 heads x Q blocks 0 and 2 x 32 rows x 128 bytes
    assert b.tensors["K"].requested_bytes - a.tensors["k"].requested_bytes == masked
    assert a.dram_read_bytes <= b.dram_read_bytes


# ------------------------------------------------------------------ the replay against a line-by-line sectored LRU


def _brute(trace: KernelTrace, slots: int, cap: int) -> dict[str, tuple[int, int, int]]:
    """Per tensor (read-line hits, sectors read from DRAM, sectors written back): every line its own LRU entry with
    valid and dirty sector masks, lockstep rounds of one access per step, launches in sequence, grid order. Lines
    of one access are taken grouped by the exact set of accesses touching them (frozensets, no hashing), groups in
    order of their first line."""
    acc_id, touching = 0, {}
    per_launch = []
    for la in trace.launches:
        accesses = []
        for e in range(len(la.tensor)):
            lines = {}
            for r in range(la.run[e], la.run[e + 1]):
                for k in range(int(la.length[r])):
                    lines[int(la.line[r]) + k] = int(la.mask[r])
            accesses.append((int(la.tensor[e]), lines, bool(la.reads[e]), bool(la.writes[e])))
            for x in lines:
                touching.setdefault(x, set()).add(acc_id)
            acc_id += 1
        per_launch.append((la, accesses))
    group = {x: frozenset(s) for x, s in touching.items()}
    first = {}
    for x in sorted(group):
        first.setdefault(group[x], x)
    names = trace.tensors
    hits, fetched, back = ([0] * len(names) for _ in range(3))
    cache: OrderedDict[int, list[int]] = OrderedDict()

    def touch(t: int, x: int, m: int, rd: bool, wr: bool) -> None:
        e = cache.get(x)
        if e is not None:
            cache.move_to_end(x)
            if rd:
                hits[t] += 1
        else:
            e = cache[x] = [0, 0, t]
            if len(cache) > cap:
                _, (_, dirty, tt) = cache.popitem(last=False)
                back[tt] += bin(dirty).count("1")
        if rd:
            fetched[t] += bin(m & ~e[0]).count("1")
        e[0] |= m
        if wr:
            e[1] |= m

    for la, accesses in per_launch:
        progs = [accesses[la.prog[p]:la.prog[p + 1]] for p in range(la.programs)]
        progs = [p for p in progs if p]
        state = [[p, 0] for p in progs[:slots]]
        nxt = len(state)
        while any(s is not None for s in state):
            for k, s in enumerate(state):
                if s is None:
                    continue
                t, lines, rd, wr = s[0][s[1]]
                for x in sorted(lines, key=lambda x: (first[group[x]], x)):
                    touch(t, x, lines[x], rd, wr)
                s[1] += 1
                if s[1] == len(s[0]):
                    state[k] = [progs[nxt], 0] if nxt < len(progs) else None
                    nxt += nxt < len(progs)
    for _, (_, dirty, tt) in cache.items():
        back[tt] += bin(dirty).count("1")
    return {n: (hits[t], fetched[t], back[t]) for t, n in enumerate(names)}


@st.composite
def traces(draw) -> KernelTrace:
    """1-2 launches of 1-6 programs of 1-4 accesses; each access one of 2 tensors, 1-6 lines of a 12-line range,
    sector masks 1..15, a read, a write or both."""
    launches = []
    for _ in range(draw(st.integers(1, 2))):
        X = draw(st.integers(1, 3))
        Y = draw(st.integers(1, 2))
        prog, tensor, rb, wb, rd, wr, run, line, length, mask = [0], [], [], [], [], [], [0], [], [], []
        for _ in range(X * Y):
            for _ in range(draw(st.integers(1, 4))):
                t = draw(st.integers(0, 1))
                ls = sorted(draw(st.sets(st.integers(0, 11), min_size=1, max_size=6)))
                kind = draw(st.sampled_from(["r", "w", "rw"]))
                for x in ls:
                    line.append((t << 40) | x)
                    length.append(1)
                    mask.append(draw(st.integers(1, 15)))
                tensor.append(t)
                rb.append(32 * len(ls) if "r" in kind else 0)
                wb.append(32 * len(ls) if "w" in kind else 0)
                rd.append("r" in kind)
                wr.append("w" in kind)
                run.append(len(line))
            prog.append(len(tensor))
        launches.append(LaunchTrace("k", (X, Y, 1), np.array(prog), np.array(tensor), np.array(rb), np.array(wb),
                                    np.array(rd), np.array(wr), np.array(run), np.array(line, dtype=np.int64),
                                    np.array(length), np.array(mask, dtype=np.uint8)))
    return KernelTrace(["a", "b"], launches)


@settings(max_examples=60)
@given(traces(), st.integers(1, 3), st.integers(1, 10))
def test_trace_replay_equals_a_line_by_line_sectored_lru(trace, slots, cap):
    r = replay_trace(trace, "h100", sms=slots, l2_bytes=cap * 128)
    ref = _brute(trace, slots, cap)
    got = {n: (t.hit_lines, t.dram_read_bytes // 32, t.dram_write_bytes // 32) for n, t in r.tensors.items()}
    assert got == ref


# ------------------------------------------------------------------------------------------------------ bad input


def _tiny() -> KernelTrace:
    one = LaunchTrace("k", (2, 1, 1), np.array([0, 1, 2]), np.array([0, 0]), np.array([256, 256]),
                      np.array([0, 0]), np.array([True, True]), np.array([False, False]), np.array([0, 1, 2]),
                      np.array([0, 0]), np.array([2, 2]), np.array([15, 15], dtype=np.uint8))
    return KernelTrace(["x"], [one])


@pytest.mark.parametrize("kw, param", [
    (dict(gpu="h900"), "l2"), (dict(l2_bytes=127), "l2_bytes"), (dict(order=[0, 0]), "order"),
    (dict(order=[0]), "order"), (dict(order="zigzag"), "order"), (dict(occupancy=0), "occupancy"),
    (dict(order="sections"), "section_heads"), (dict(sms=0), "sms"),
])
def test_bad_input_names_the_parameter(kw, param):
    with pytest.raises(InvalidParameter) as e:
        replay_trace(_tiny(), kw.pop("gpu", "h100"), **kw)
    assert e.value.name == param


def test_explicit_order_reverses_the_grid():
    """Two programs each reading the same 2 lines: any order hits the second time; a valid permutation runs."""
    r = replay_trace(_tiny(), "h100", order=[1, 0], sms=1)
    assert r.order == "explicit" and r.tensors["x"].hit_lines == 2


# ------------------------------------------------------------------------------------------------------------ CLI


def test_cli_kernel_l2_json_and_bad_input(capsys):
    """attnio kernel … --l2: per tensor requested, sector and DRAM bytes and the hit rate (JSON under "l2");
    requested bytes equal the counted bytes; bad preset, an L2 below one line, an order that does not cover the
    grid: one line, exit 2."""
    import_triton()
    from attnio.cli import main

    base = ["kernel", f"{EXAMPLE}:launch", "--N", "64", "--d", "64", "--heads", "2", "--dtype", "fp16"]
    assert main([*base, "--l2", "h100", "--l2-sms", "2", "--l2-bytes", "8192", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    l2 = out["l2"]
    for n, t in out["counted"]["tensors"].items():
        assert l2["tensors"][n]["requested_bytes"] == t["reads_bytes"] + t["writes_bytes"]
        assert {"sector_bytes", "dram_bytes", "hit_rate"} <= set(l2["tensors"][n])
    assert main([*base, "--l2", "a100"]) == 0
    assert "L2 replay of the captured trace on a100" in capsys.readouterr().out
    for extra, needle in ((["--l2", "h900"], "l2='h900'"), (["--l2", "h100", "--l2-bytes", "100"], "l2-bytes=100"),
                          (["--l2", "h100", "--l2-order", "0,1,1"], "l2-order="),
                          (["--l2", "h100", "--l2-occupancy", "0"], "l2-occupancy=0"),
                          (["--l2", "h100", "--fast"], "without --fast")):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr()
        assert needle in err.err and err.err.count("\n") == 1 and err.out == ""


def test_cli_replay_options_without_l2_are_refused_and_the_order_named_as_given(capsys):
    """A replay option without --l2 was silently ignored (exit 0, no replay): now one line naming it, exit 2, for
    attnio kernel and attnio run; an explicit order that is not a permutation is named as typed ('0,0'), not as
    the replay's parsed sequence."""
    import_triton()
    from attnio.cli import main

    base = ["kernel", f"{EXAMPLE}:launch", "--N", "64", "--d", "16", "--heads", "2"]
    for extra, needle in ((["--l2-order", "hqb"], "l2-order='hqb'"), (["--l2-sms", "3"], "l2-sms=3"),
                          (["--l2-occupancy", "2"], "l2-occupancy=2"), (["--l2-bytes", "8192"], "l2-bytes=8192"),
                          (["--l2-section-heads", "1"], "l2-section-heads=1")):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr()
        assert needle in err.err and "--l2" in err.err and err.err.count("\n") == 1 and err.out == ""
    for extra, needle in ((["--l2-order", "hqb"], "l2-order='hqb'"), (["--l2-occupancy", "2"], "l2-occupancy=2")):
        assert main(["run", "flash2-bwd", "--N", "64", "--d", "16", "--M", "2000", *extra]) == 2
        err = capsys.readouterr()
        assert needle in err.err and err.err.count("\n") == 1 and err.out == ""
    assert main([*base, "--l2", "h100", "--l2-order", "0,0"]) == 2
    err = capsys.readouterr()
    assert "l2-order='0,0'" in err.err and err.out == ""


def test_cli_kernel_formula_and_fast_options_without_their_mode_are_refused(capsys):
    """--block, --range, --widths, --lengths, --splits, --no-solver, --schedule act only with --formula or --fast; given without it they
    were silently ignored (the plain count ran, exit 0). Now one line naming the option, exit 2."""
    import_triton()
    from attnio.cli import main

    base = ["kernel", f"{EXAMPLE}:launch", "--N", "64", "--d", "16"]
    for extra, needle in ((["--block", "64x64"], "block='64x64'"), (["--range", "2:4"], "range='2:4'"),
                          (["--widths", "1,d"], "widths='1,d'"), (["--no-solver"], "no-solver=True"),
                          (["--lengths", "1,N_q"], "lengths='1,N_q'"), (["--splits", "4"], "splits=4"),
                          (["--schedule", "per-head"], "schedule='per-head'"),
                          (["--formula", "--schedule", "per-head"], "schedule='per-head'")):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr()
        assert needle in err.err and "only with --" in err.err and err.err.count("\n") == 1 and err.out == ""


# ------------------------------------------------------------------------------- the backward tile replay, no Triton


@pytest.mark.parametrize("causal, heads, kv", [(False, 2, 2), (True, 4, 2), (True, 2, 1)])
def test_backward_requests_attnios_flash2_bwd_count_and_a_large_l2_reads_each_input_once(causal, heads, kv):
    """fp32 (4-byte words, so L and D, fp32 in the replay, are words too), N_q = 96 < N_kv = 128, d = 32 (128-byte
    rows): the requested bytes are 4 x the exact count of attnio's flash2-bwd schedule as its Triton kernel runs it
    (attnio.triton.kernels.fa2_bwd.exact_count, dQ's atomic adds a read and a write each); with an L2 that holds
    everything, DRAM reads are each input once (Q, K, V, O, dO, L: compulsory) and writes each output and D once."""
    import_triton()
    from attnio.triton.kernels.fa2_bwd import exact_count

    w = Workload.build(heads=heads, kv_heads=kv, Nq=96, Nkv=128, d=32, dtype="fp32", causal=causal, M=10**6)
    r = replay_backward(w, "h100", B_r=32, B_c=32)
    c = exact_count(batch=1, heads=heads, kv_heads=kv, Nq=96, Nkv=128, d=32, dv=32, causal=causal, B_c=32)
    assert r.exact
    assert r.requested_bytes == 4 * (c.reads_words + c.writes_words)
    q, kvb = heads * 96 * 32 * 4, kv * 128 * 32 * 4
    assert r.dram_read_bytes == r.compulsory_read_bytes == 3 * q + 2 * kvb + heads * 96 * 4  # Q, O, dO, K, V, L
    assert r.dram_write_bytes == q + 2 * kvb + heads * 96 * 4  # dQ, dK, dV, D


def test_backward_bad_input():
    w = Workload.build(heads=2, N=64, d=32, dtype="fp16", M=10**6)
    for kw, param in ((dict(order=[0, 1]), "order"), (dict(steps="tile"), "steps"), (dict(l2_bytes=64), "l2_bytes")):
        with pytest.raises(InvalidParameter) as e:
            replay_backward(w, "h100", **kw)
        assert e.value.name == param


def test_cli_run_l2_backward_and_training_step(capsys):
    """attnio run flash2-bwd --l2: the replay's requested bytes are the run's (fp32: L and D are words too);
    flash2 --backward --l2: the forward and backward replays and their DRAM total; flash1 is still refused."""
    from attnio.cli import main

    base = ["--N", "256", "--d", "64", "--heads", "2", "--M", "65536", "--count-only", "--dtype", "fp32", "--json"]
    assert main(["run", "flash2-bwd", *base, "--l2", "h100"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["l2"]["requested_bytes"] == out["io_bytes"] and out["l2"]["pass"] == "backward"
    assert main(["run", "flash2", "--backward", *base, "--l2", "a100"]) == 0
    l2 = json.loads(capsys.readouterr().out)["l2"]
    assert l2["dram_bytes"] == l2["forward"]["dram_bytes"] + l2["backward"]["dram_bytes"] > 0
    assert main(["run", "flash1", *base, "--l2", "h100"]) == 2
    assert "only with flash2" in capsys.readouterr().err


def test_cli_run_l2_with_gqa_replays_the_counted_schedule_or_is_refused(capsys):
    """With kv_heads < heads the forward replay follows the per-head programs and the backward replay the grouped
    ones. attnio run flash2-bwd --heads 4 --kv-heads 2 --l2 counted the per-head schedule (the default) and printed
    the grouped replay: requested 1,315,200 B beside a count of 1,468,800 B at N=200, d=16. Now: the run's
    schedule is replayed (requested = counted bytes) or the command is refused (exit 2, one line)."""
    from attnio.cli import main

    base = ["--N", "200", "--d", "16", "--heads", "4", "--kv-heads", "2", "--M", "3000", "--count-only", "--json",
            "--l2", "h100"]
    for argv, ok in ((["flash2-bwd", "--schedule", "grouped"], True), (["flash2"], True),
                     (["flash2", "--schedule", "per-head"], True), (["flash2-bwd"], False),
                     (["flash2", "--schedule", "grouped"], False), (["flash2", "--backward"], False)):
        rc = main(["run", *argv, *base])
        out, err = capsys.readouterr()
        if ok:
            d = json.loads(out)
            assert rc == 0 and d["l2"]["requested_bytes"] == d["io_bytes"], argv
        else:
            assert rc == 2 and out == "" and err.count("\n") == 1 and "kv_heads=2 < heads=4" in err, argv


# ------------------------------------------------------------------- rows that are not whole sectors, huge slots


def test_contiguous_rows_not_whole_sectors_tile_replay_equals_the_trace():
    """One head, d = 40 fp16: 80-byte rows back to back (stride = row size), not whole sectors. The tile replay
    counted each row's sectors on its own (3 sectors per row, 96 B for 80 requested: a sector two rows share
    counted twice, and fetched twice); the rows of a tile are one contiguous run. The captured trace, replayed
    line-exactly, equals the tile replay on every field, forward and backward, causal or not; with 32-row tiles
    (2,560 B, whole lines) no line is shared by two tiles."""
    import_triton()
    from attnio.triton.trace import capture_fa2

    for causal in (False, True):
        w = Workload.build(N=128, d=40, dtype="fp16", M=10**6, causal=causal)
        _, fwd = capture_fa2(w, 32, 32)
        _, bwd = capture_fa2(w, 32, 32, backward=True)
        for kw in (dict(), dict(sms=2, l2_bytes=4096)):
            tile = replay(w, "h100", B_r=32, B_c=32, steps="access", **kw)
            assert tile.tensors["Q"].sectors * 32 == tile.tensors["Q"].requested_bytes == 128 * 80
            _same(replay_trace(fwd, "h100", **kw), tile, FWD_NAMES)
            _same(replay_trace(bwd, "h100", **kw), replay_backward(w, "h100", B_r=32, B_c=32, steps="access", **kw),
                  BWD_NAMES)


def test_cli_run_l2_rows_not_whole_sectors_read_once():
    """attnio run flash2 --N 1000 --d 40 fp16 --l2 h100: Q is 1000 rows of 80 B read once by one program (one
    head, B_r = 1000): sector and DRAM bytes 80,000 (they were 96,000); the backward's Q at N = 300 likewise
    300 · 80 = 24,000 (it was 28,800)."""
    from attnio.cli import main

    for alg, N in (("flash2", 1000), ("flash2-bwd", 300)):
        argv = ["run", alg, "--N", str(N), "--d", "40", "--dtype", "fp16", "--gpu", "h100", "--count-only",
                "--l2", "h100", "--json"]
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(argv) == 0
        q = json.loads(buf.getvalue())["l2"]["tensors"]["Q"]
        assert q["requested_bytes"] == q["sector_bytes"] == q["dram_read_bytes"] == N * 80, (alg, q)


def test_slots_beyond_the_programs_change_nothing_and_cost_nothing():
    """--l2-occupancy / --l2-sms of 10^15 allocated a list per slot (MemoryError) or looped over every slot each
    round: the slots past the programs never start one, so the replay keeps min(slots, programs); the result is
    the one with every program resident at once (lockstep), and under drift the stagger of 10^15 slots rounds
    to 0 rounds for the few used, which is lockstep too."""
    w = Workload.build(heads=2, N=256, d=64, dtype="fp16", M=10**6)
    every = replay(w, "h100", B_r=32, B_c=32, sms=16)  # 2 heads x 8 q blocks = 16 programs, all resident
    for kw in (dict(sms=10**15), dict(occupancy=10**15), dict(sms=10**15, sync="drift")):
        r = replay(w, "h100", B_r=32, B_c=32, **kw)
        assert {n: _fields(t) for n, t in r.tensors.items()} == {n: _fields(t) for n, t in every.tensors.items()}
    b = replay_backward(w, "h100", B_r=32, B_c=32, occupancy=10**15)
    assert b.dram_bytes == replay_backward(w, "h100", B_r=32, B_c=32, sms=64).dram_bytes


def test_cli_kernel_l2_on_a_shape_too_large_for_a_full_run_is_refused(tmp_path, capsys):
    """A shape too large for a full run takes the fast (sampled) count, which has no trace to replay: --l2 was
    dropped silently (a sampled count printed, exit 0); now one line naming --l2, exit 2, as with --fast."""
    import_triton()
    from attnio.cli import main

    f = tmp_path / "tiny.py"
    f.write_text(TINY)
    assert main(["kernel", f"{f}:launch", "--N", "262145", "--d", "64", "--dtype", "fp16", "--l2", "h100"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "l2='h100'" in err and "too large for a full run" in err


TINY = '''
import triton
import triton.language as tl


@triton.jit
def _copy(Q, O, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    offs = i * BLOCK + tl.arange(0, BLOCK)
    tl.store(O + offs, tl.load(Q + offs))


def launch(q, o):
    _copy[(q.numel() // 8,)](q, o, BLOCK=8)
    return o
'''


def test_sector_hit_rate_is_where_the_trace_and_the_tile_replay_agree():
    """d = 32 fp16 on 4 heads: two heads' 64-byte rows share a 128-byte line. The trace replay's line-based hit
    rate counts the second head's read of a line the first head brought in as a hit, though its sectors come from
    DRAM (0.8333 against the tile replay's 0.6667); the sector-based rate (read sectors found valid over read
    sectors requested) counts DRAM's sectors as misses and is the same in both, as the DRAM bytes are, and equals
    1 − DRAM read bytes ÷ requested read sector bytes. The CLI prints it beside the line rate (text and JSON)."""
    import_triton()
    from attnio.cli import main
    from attnio.triton.trace import capture_fa2

    w = Workload.build(heads=4, N=256, d=32, dtype="fp16", M=10**6)
    _, trace = capture_fa2(w, 64, 64)
    a, b = replay_trace(trace, "h100"), replay(w, "h100", B_r=64, B_c=64, steps="access")
    assert a.hit_rate > b.hit_rate and a.dram_bytes == b.dram_bytes
    assert a.sector_hit_rate == b.sector_hit_rate == 1 - b.dram_read_bytes / sum(
        t.read_sectors * 32 for t in b.tensors.values())
    for n, m in FWD_NAMES.items():
        assert a.tensors[m].sector_hit_rate == b.tensors[n].sector_hit_rate, n
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["run", "flash2", "--N", "256", "--d", "32", "--heads", "4", "--dtype", "fp16", "--M", "4000",
                     "--count-only", "--l2", "h100", "--json"]) == 0
    d = json.loads(buf.getvalue())["l2"]
    assert 0 < d["sector_hit_rate"] < 1 and {"read_sectors", "sector_hit_rate"} <= set(d["tensors"]["K"])
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["run", "flash2", "--N", "256", "--d", "32", "--heads", "4", "--dtype", "fp16", "--M", "4000",
                     "--count-only", "--l2", "h100"]) == 0
    assert f"{d['sector_hit_rate']:.4f} (read sectors)" in buf.getvalue()
