"""The L2 replay (algorithms/l2.py), its LRU (algorithms/l2_cache.py), the presets and the sector claim
(bounds/dram.py, solver/claims/dram.py): hand-computed tiny cases, LRU against a line-by-line brute force,
requested bytes against attnio's own FA-2 count, the sector claim and its counterexample, bad input."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attnio.algorithms.flash2 import Flash2Tiling
from attnio.algorithms.l2 import fa3_section_heads, replay
from attnio.algorithms.l2_cache import LineLRU, TileLRU
from attnio.algorithms.run import run
from attnio.bounds.dram import L2_PRESETS, sectors
from attnio.core.errors import InvalidParameter
from attnio.core.workload import GPUS, Workload


def _w(**kw):
    base = dict(N=512, d=64, dtype="fp16", M=10**6)
    return Workload.build(**{**base, **kw})


def test_cache_larger_than_everything_reads_each_tile_once():
    """2 heads, N = 512, d = 64 fp16: Q, K, V are 64 KiB per head; a 40 MiB L2 reads each once: 3·2·64 KiB."""
    r = replay(_w(heads=2), "a100", B_r=128, B_c=64)
    assert r.exact
    assert r.dram_read_bytes == r.compulsory_read_bytes == 3 * 2 * 512 * 128
    assert r.dram_write_bytes == 2 * 512 * 128 + 2 * 512 * 4  # O (fp16) and L (fp32), written once
    assert r.requested_bytes > r.dram_bytes


def test_cache_of_one_line_reads_everything_requested():
    """An L2 of one 128-byte line: no tile of 64 lines can hit, so DRAM reads = requested (rows are whole lines)."""
    r = replay(_w(heads=2), "a100", B_r=128, B_c=64, l2_bytes=128)
    reads = sum(r.tensors[t].requested_bytes for t in "QKV")
    assert r.dram_read_bytes == reads == 2 * (512 * 128 + 2 * 4 * 512 * 128)  # Q once, K and V once per Q block
    assert r.hit_rate == 0.0


def test_requested_reads_equal_attnios_fa2_count():
    """Per head, non-causal: Q once and K, V once per Q block, attnio's exact flash2 count at the same B_r."""
    w = _w(heads=1, N=256, d=16)
    res = run("flash2", N=256, d=16, M=10**5, tiling=Flash2Tiling(B_r=64, B_c=32), count_only=True)
    r = replay(w, "h100", B_r=64, B_c=32)
    reads_words = sum(r.tensors[t].requested_bytes for t in "QKV") // w.bytes_per_word
    assert reads_words == res.measurement.reads_words
    assert r.tensors["O"].requested_bytes // w.bytes_per_word == 256 * 16


def test_causal_programs_read_only_visible_blocks():
    """Causal N = 256, B_r = B_c = 128: block 0 reads K/V block 0, block 1 reads blocks 0 and 1: 3 K tiles."""
    r = replay(_w(N=256, causal=True), "h100", B_r=128, B_c=128)
    assert r.tensors["K"].requested_bytes == 3 * 128 * 128


def test_sectors_of_unaligned_rows():
    """d = 12 fp16: 24-byte rows. Two heads: a head's rows are 48 bytes apart, half of them straddle a 32-byte
    boundary, each row's sectors counted on its own: efficiency below 1, not exact. One head: the rows are back to
    back, a 64-row tile is one run of 1,536 bytes, 48 whole sectors (counting each row on its own gave 64)."""
    r = replay(_w(d=12, N=128, heads=2), "h100", B_r=64, B_c=64)
    q = r.tensors["Q"]
    assert q.sectors == sum(sectors(48 * k + 24 * h, 24) for k in range(128) for h in range(2))
    assert q.sector_efficiency < 1 and not r.exact
    one = replay(_w(d=12, N=128), "h100", B_r=64, B_c=64).tensors["Q"]
    assert one.sectors == 2 * 48 and one.sectors * 32 == one.requested_bytes
    aligned = replay(_w(d=64, N=128), "h100", B_r=64, B_c=64).tensors["Q"]
    assert aligned.sectors * 32 == aligned.requested_bytes


def test_launch_order_changes_hits_not_requests():
    """Head-first vs q-first on a small L2: same requested bytes, different DRAM bytes."""
    w = _w(heads=8, N=2048)
    a = replay(w, "h100", order="qhb", sms=4, l2_bytes=256 * 1024)
    b = replay(w, "h100", order="hqb", sms=4, l2_bytes=256 * 1024)
    assert a.requested_bytes == b.requested_bytes and a.dram_bytes != b.dram_bytes


def test_explicit_order_equals_its_named_one():
    w = _w(heads=2, N=512)
    named = replay(w, "a100", order="qhb", sms=2, l2_bytes=64 * 1024)
    explicit = replay(w, "a100", order=list(range(named.programs)), sms=2, l2_bytes=64 * 1024)
    assert explicit.as_dict()["dram_bytes"] == named.dram_bytes


def test_fa3_section_rule():
    assert [fa3_section_heads(n, 128, 2, 64) for n in (8192, 32768, 131072)] == [8, 2, 1]
    assert fa3_section_heads(1024, 64, 2, 4) == 4  # capped at the heads there are


_traces = st.lists(st.tuples(st.integers(0, 7), st.integers(1, 4)), min_size=1, max_size=60)


@given(_traces, st.integers(1, 20))
def test_tile_lru_equals_line_lru_on_atomic_tiles(trace, capacity):
    """Tile k always has the same width (the first seen); its lines are (k, 0..w-1), accessed together."""
    width: dict[int, int] = {}
    tiles, lines = TileLRU(capacity), LineLRU(capacity)
    for k, w in trace:
        w = width.setdefault(k, w)
        hit = tiles.access(k, w)
        line_hits = lines.access_run((k, x) for x in range(w))
        assert line_hits == (w if hit else 0)


def test_presets_have_sources_and_agree_with_the_gpu_table():
    assert set(L2_PRESETS) == {"a100", "h100", "h200", "b200", "mi300x", "mi355x", "l4"}
    for name, p in L2_PRESETS.items():
        assert len(p.source) > 40 and ("datasheet" in p.source or "white" in p.source), name
        assert p.l2_bytes_per_partition >= p.line >= p.sector > 0 and p.sms % p.partitions == 0
        if name in GPUS:
            assert (p.l2_bytes, p.sms, p.hbm_bytes_per_s) == (GPUS[name].l2_bytes, GPUS[name].sm_count,
                                                              GPUS[name].hbm_bytes_per_s)


@pytest.mark.parametrize("kw, param", [
    (dict(gpu="v100"), "l2"),
    (dict(gpu="h100", l2_bytes=64), "l2_bytes"),
    (dict(gpu="h100", order=[0, 1]), "order"),
    (dict(gpu="h100", order="zigzag"), "order"),
    (dict(gpu="h100", occupancy=0), "occupancy"),
])
def test_bad_input_names_the_parameter(kw, param):
    with pytest.raises(InvalidParameter) as e:
        replay(_w(heads=2), kw.pop("gpu"), **kw)
    assert e.value.name == param and "valid range" in str(e.value)


@pytest.mark.solver
def test_sector_claim_is_proved_and_fails_without_alignment():
    from attnio.solver.claims.dram import aligned_rows
    from attnio.solver.verify import verify_claim

    assert verify_claim(aligned_rows()).status == "proved"
    v = verify_claim(aligned_rows(aligned=False, suffix=".unaligned"))
    assert v.status == "refuted" and not v.spurious
    o, R = int(v.counterexample["dram_o"]), int(v.counterexample["dram_R"])
    assert sectors(o, R) != R // 32  # the counterexample is a real one


def test_floors_stay_below_the_replay():
    """The DRAM floor (largest two-level bound at M = the whole L2) is a lower bound: the replay's DRAM is above."""
    from attnio.bounds.dram import floors

    for w in (_w(heads=4, N=2048), _w(heads=4, N=2048, causal=True)):
        for gpu in ("h100", "mi300x"):
            f, r = floors(w, gpu), replay(w, gpu)
            assert 0 < f.dram_bytes <= r.dram_bytes and f.seconds > 0


def test_cli_l2_json_matches_the_count(capsys):
    """`attnio run flash2 … --l2 h100 --json`: the replay's requested Q, K, V bytes are the run's reads (non-causal)."""
    import json

    from attnio.cli import main

    assert main(["run", "flash2", "--N", "1024", "--d", "64", "--heads", "2", "--dtype", "bf16", "--M", "20000",
                 "--count-only", "--l2", "h100", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    t = out["l2"]["tensors"]
    assert sum(t[x]["requested_bytes"] for x in "QKV") == out["reads_bytes"]
    assert out["l2"]["dram_bytes"] >= out["l2"]["floors"]["dram_bytes"]


@pytest.mark.parametrize("extra, needle", [
    (["--l2", "v100"], "l2='v100'"),
    (["--l2", "h100", "--l2-order", "zigzag"], "l2-order='zigzag'"),
    (["--l2", "h100", "--l2-occupancy", "0"], "l2-occupancy=0"),
])
def test_cli_l2_bad_input_is_one_line_and_exit_2(extra, needle, capsys):
    from attnio.cli import main

    assert main(["run", "flash2", "--N", "256", "--d", "64", "--M", "20000", "--count-only", *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and "valid range" in err[0]


def test_cli_l2_refuses_other_algorithms(capsys):
    from attnio.cli import main

    assert main(["run", "flash1", "--N", "256", "--d", "64", "--M", "20000", "--count-only", "--l2", "h100"]) == 2
    assert "only with flash2" in capsys.readouterr().err


def _line_replay(w, B_r, B_c, order, sms, l2_lines, sawtooth, partitions=1):
    """A line-by-line replay written separately from algorithms/l2.py: each step's rows turned into byte
    addresses and 128-byte lines, run through LineLRU; returns read-line hits per tensor (Q, K, V)."""
    bpw, H, Hkv, g = w.bytes_per_word, w.heads, w.kv_heads, w.groups
    T_r, T_c = -(-w.Nq // B_r), -(-w.Nkv // B_c)
    grid = [(z, h, i) for z in range(w.batch) for h in range(H) for i in range(T_r)]
    if order == "hqb":
        grid = sorted(grid, key=lambda p: (p[0], p[2], p[1]))

    def lines(tensor, z, h, r0, r1, heads_t, N, width):
        out = []
        for r in range(r0, r1):
            o = ((z * N + r) * heads_t + h) * width * bpw
            out += [(tensor, a // 128) for a in range(o, o + width * bpw, 128)]
        return out

    def steps(pos, prog):
        z, h, i = prog
        r0, r1 = i * B_r, min((i + 1) * B_r, w.Nq)
        hi = T_c if not w.causal else (r1 - 1 + w.Nkv - w.Nq) // B_c + 1
        js = list(range(hi))
        if sawtooth and (pos // sms) % 2:
            js.reverse()
        out = [[("Q", lines("Q", z, h, r0, r1, H, w.Nq, w.d))]]
        for j in js:
            c0, c1 = j * B_c, min((j + 1) * B_c, w.Nkv)
            out.append([("K", lines("K", z, h // g, c0, c1, Hkv, w.Nkv, w.d)),
                        ("V", lines("V", z, h // g, c0, c1, Hkv, w.Nkv, w.dv))])
        lo = ((z * H + h) * w.Nq + r0) * 4  # L: (batch, heads, Nq) fp32
        out.append([("O", lines("O", z, h, r0, r1, H, w.Nq, w.dv)),
                    ("L", [("L", a // 128) for a in range(lo, lo + (r1 - r0) * 4, 128)])])
        return out

    hits = {"Q": 0, "K": 0, "V": 0}
    for part in range(partitions):
        queue = grid[part::partitions]
        cache = LineLRU(l2_lines)
        slots = [(p, steps(p, queue[p]), 0) for p in range(min(sms, len(queue)))]
        nxt = len(slots)
        while any(s is not None for s in slots):
            for k, s in enumerate(slots):
                if s is None:
                    continue
                pos, st, n = s
                for tensor, ls in st[n]:
                    h = cache.access_run(ls)
                    if tensor in hits:
                        hits[tensor] += h
                if n + 1 < len(st):
                    slots[k] = (pos, st, n + 1)
                elif nxt < len(queue):
                    slots[k] = (nxt, steps(nxt, queue[nxt]), 0)
                    nxt += 1
                else:
                    slots[k] = None
    return hits


@given(st.integers(1, 3), st.sampled_from([1, 2]), st.sampled_from([(96, 96), (128, 160)]), st.booleans(),
       st.sampled_from(["qhb", "hqb"]), st.integers(1, 3), st.integers(1, 120), st.booleans(),
       st.sampled_from([(32, 16), (64, 24)]))
def test_replay_equals_a_line_by_line_replay(heads, kv_div, Ns, causal, order, sms, l2_lines, saw, blocks):
    """Rows of 128 bytes (d = 64 fp16), L tiles and one head's L whole lines (B_r, N_q multiples of 32): every tile
    is atomic, so the tile-level replay must give the line-level hits exactly, for every order, interleaving, GQA,
    causal and sawtooth case."""
    kv = heads if heads % kv_div else heads // kv_div
    Nq, Nkv = Ns
    w = Workload.build(heads=heads, kv_heads=kv, Nq=Nq, Nkv=Nkv, d=64, dtype="fp16", causal=causal, M=10**6)
    B_r, B_c = blocks  # (64, 24): partial last Q and K/V blocks
    r = replay(w, "h100", B_r=B_r, B_c=B_c, order=order, sms=sms, l2_bytes=l2_lines * 128, sawtooth=saw)
    assert r.exact
    ref = _line_replay(w, B_r, B_c, order, sms, l2_lines, saw)
    assert {t: r.tensors[t].hit_lines for t in "QKV"} == ref


def test_sections_read_compulsory_while_they_fit_and_more_when_not():
    """4 heads of N = 2048, d = 64 fp16: 512 KiB of K/V per head, a 1.5 MiB L2, 8 SMs (a section of 2 heads is
    4 whole waves). Sections of 1 or 2 heads: DRAM = compulsory; all 4 heads at once (2 MiB of K/V): more."""
    w = _w(heads=4, N=2048)
    ratio = {s: (lambda r: r.dram_bytes / r.compulsory_bytes)(
        replay(w, "h100", order="sections", section_heads=s, sms=8, l2_bytes=3 * 2**19)) for s in (1, 2, 4)}
    assert ratio[1] == ratio[2] == 1.0 < ratio[4]


def test_sawtooth_cuts_non_compulsory_reads_when_kv_exceeds_the_l2():
    """One head, K/V 1 MiB (N = 4096, d = 64 fp16), 8 SMs: forward waves miss all of K/V again; alternating ones
    start where the last wave ended and hit the tail still held, so the cut grows with the share of K/V the L2
    holds: below half at a 768 KiB L2, above half at 896 KiB."""
    w = _w(heads=1, N=4096)

    def cut(l2: int) -> float:
        extra = {saw: (lambda r: r.dram_read_bytes - r.compulsory_read_bytes)(
            replay(w, "h100", sms=8, l2_bytes=l2, sawtooth=saw)) for saw in (False, True)}
        assert extra[False] > 0 and extra[True] >= 0
        return 1 - extra[True] / extra[False]

    assert 0 < cut(768 * 1024) < 0.5 < cut(896 * 1024)
