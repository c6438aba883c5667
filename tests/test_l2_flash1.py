"""The L2 replay of FlashAttention-1's own schedule (algorithms/l2_flash1.py, docs/dram.md): its requested bytes are
attnio's exact flash1 / flash1-bwd counts × bytes per word, and its cache behaviour at the two extremes of L2 size."""

from __future__ import annotations

import pytest

from attnio.algorithms.l2_flash1 import fa1_blocks, replay_flash1, replay_flash1_backward
from attnio.algorithms.run import run
from attnio.core.errors import InvalidParameter
from attnio.core.workload import Workload

CASES = [dict(batch=1, heads=2, N=256, d=64, M=4096), dict(batch=2, heads=2, N=128, d=32, M=2048),
         dict(batch=1, heads=3, N=200, d=64, M=3000)]


@pytest.mark.parametrize("kw", CASES)
def test_requested_bytes_equal_attnio_exact_flash1_counts(kw: dict) -> None:
    w = Workload.build(dtype="fp16", **kw)
    fwd = run("flash1", w, pass_="forward", schedule="per-head", count_only=True)
    bwd = run("flash1-bwd", w, pass_="backward", schedule="per-head", count_only=True)
    f, b = replay_flash1(w, "a100", sms=4), replay_flash1_backward(w, "a100", sms=4)
    assert (fwd.tiling.B_r, fwd.tiling.B_c) == fa1_blocks(w)
    assert f.requested_bytes == 2 * fwd.measurement.io_words
    assert sum(t.requested_read_bytes for t in f.tensors.values()) == 2 * fwd.measurement.reads_words
    assert b.requested_bytes == 2 * bwd.measurement.io_words
    assert sum(t.requested_read_bytes for t in b.tensors.values()) == 2 * bwd.measurement.reads_words


def test_large_l2_reads_inputs_once_small_l2_rereads_everything() -> None:
    # one SM, N = 256, d = 64 fp16, M = 16384: B_r = B_c = 64, T_c = 4 (ℓ, m tiles of 128 B: exact). A 40 MiB L2
    # keeps the head: DRAM reads are Q, K, V once (O, ℓ, m were written first). A 16 KiB L2 is smaller than one
    # sweep of Q, O, ℓ, m (~65 KiB) between a tile's re-reads: every read misses.
    w = Workload.build(heads=1, N=256, d=64, dtype="fp16", M=16384)
    big = replay_flash1(w, "a100", sms=1)
    assert big.exact and big.dram_read_bytes == big.compulsory_read_bytes == 3 * 256 * 128
    assert big.dram_bytes == big.compulsory_bytes
    small = replay_flash1(w, "a100", sms=1, l2_bytes=16 * 1024)
    reads = sum(t.requested_read_bytes for t in small.tensors.values())
    assert small.dram_read_bytes == reads and small.hit_rate == 0.0
    sb = replay_flash1_backward(w, "a100", sms=1, l2_bytes=16 * 1024)
    assert sb.dram_read_bytes == sum(t.requested_read_bytes for t in sb.tensors.values())
    bb = replay_flash1_backward(w, "a100", sms=1)
    # the backward's inputs Q, K, V, O, dO (N·d each), ℓ, m (N each) once from DRAM; dQ, dK, dV written first
    assert bb.dram_read_bytes == bb.compulsory_read_bytes == 2 * (5 * 256 * 64 + 2 * 256)


def test_drift_keeps_requested_bytes_and_causal_is_refused() -> None:
    w = Workload.build(batch=2, heads=2, N=128, d=64, dtype="fp16", M=2048)
    a, b = replay_flash1(w, "a100", sms=2), replay_flash1(w, "a100", sms=2, sync="drift")
    assert a.requested_bytes == b.requested_bytes and a.sector_bytes == b.sector_bytes
    assert b.sync == "drift" and b.skew == 1.0
    with pytest.raises(InvalidParameter, match="causal"):
        replay_flash1(Workload.build(N=128, d=64, dtype="fp16", causal=True, M=2048), "a100")


def test_forward_rereads_hit_exactly_when_the_l2_holds_the_resident_programs_footprint() -> None:
    # docs/dram.md#flashattention-1s-own-schedule: between two reads of O_i a program touches its head's Q, O
    # (32 KiB each at N = 256, d = 64 fp16), ℓ, m (512 B each) and K_{j+1}, V_{j+1} (64 rows: 8 KiB each); with 2
    # programs resident the forward's re-reads all hit iff the L2 holds both footprints (a one-line-smaller L2
    # already misses), at both ends of the bracket.
    w = Workload.build(heads=2, N=256, d=64, dtype="fp16", M=16384)
    footprint = 2 * (2 * 32768 + 2 * 512 + 2 * 8192)
    for sync in ("lockstep", "drift"):
        fits = replay_flash1(w, "a100", sms=2, l2_bytes=footprint, sync=sync)
        assert fits.dram_bytes == fits.compulsory_bytes and fits.tensors["O"].hit_rate == 1.0
    short = replay_flash1(w, "a100", sms=2, l2_bytes=footprint - 128)
    assert short.dram_bytes > fits.dram_bytes and short.tensors["O"].hit_rate < 1.0
