"""Decode (split-KV, paged KV, GQA packing, fp8 K/V, MLA's shared row): measured == formula per tensor, outputs
against the float64 reference, the lower bound below every schedule, and the published rows (docs/serving.md)."""

from __future__ import annotations

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attnio.algorithms.decode import DecodeTiling, run_decode
from attnio.bounds.serving import (
    Decode,
    blocks,
    compulsory_bytes,
    decode_count,
    lower_bound_bytes,
    mla,
    roofline,
    split_heuristic,
)
from attnio.core.errors import InvalidParameter
from attnio.core.workload import GPUS, Workload


@st.composite
def calls(draw):
    kv = draw(st.integers(1, 2))
    g = draw(st.integers(1, 3))
    d = draw(st.one_of(st.integers(1, 5), st.integers(129, 130)))  # 129, 130: two fp8 scale groups per row
    shared = draw(st.booleans())
    dv = draw(st.integers(1, d)) if shared else draw(st.one_of(st.integers(1, 5), st.integers(129, 130)))
    causal = draw(st.booleans())
    nq = draw(st.integers(1, 4))
    nkv = draw(st.integers(nq if causal else 1, 40))  # without a mask s_q > N_kv and N_kv = 1 are valid calls
    w = Workload.build(batch=draw(st.integers(1, 3)), heads=g * kv, kv_heads=kv, Nq=nq, Nkv=nkv, d=d, dv=dv,
                       causal=causal, dtype=draw(st.sampled_from(["bf16", "fp16", "fp32"])),
                       M=draw(st.sampled_from([4096, 1000, 60, 40, 30])))
    # splits and pages above the chunks available (splits > pages, a page longer than N_kv) are drawn too
    kv_dtype = draw(st.sampled_from([None, "fp8"]))
    layouts = ["group128"] + (["head", "tensor"] + (["flashmla"] if shared else []) if kv_dtype == "fp8" else [])
    dec = Decode(splits=draw(st.integers(1, 12)), page=draw(st.one_of(st.none(), st.integers(1, 12), st.integers(41, 50))),
                 kv_dtype=kv_dtype, shared_kv=shared, scales=draw(st.sampled_from(layouts)))
    try:
        blocks(w, dec)
    except InvalidParameter:
        assume(False)  # M below one row and one step: refused (tested below)
    return w, dec


def _measured(r) -> dict[str, tuple[int, int]]:
    return {t: (c.reads_words, c.writes_words) for t, c in r.measurement.per_array.items() if c.reads_words or c.writes_words}


@settings(deadline=None)
@given(calls())
def test_measured_equals_formula_per_tensor_and_output_is_exact(case):
    w, dec = case
    r = run_decode(w, dec, seed=1)
    assert _measured(r) == decode_count(w, dec).words
    assert r.max_abs_error < 1e-9
    assert r.measurement.peak_fast_words <= w.M


@settings(max_examples=30, deadline=None)
@given(calls())
def test_count_only_equals_numeric(case):
    w, dec = case
    assert _measured(run_decode(w, dec, count_only=True)) == _measured(run_decode(w, dec, seed=0))


@settings(deadline=None)
@given(calls())
def test_lower_bound_never_exceeds_a_schedule_and_compulsory_is_q_k_v_o(case):
    w, dec = case
    c = decode_count(w, dec)
    assert lower_bound_bytes(w, dec) <= c.bytes_total
    if w.Nkv >= 2 and dec.scales in ("group128", "flashmla"):  # then the bound is the compulsory traffic plus the fp8 scales (less Q_0 when causal, s_q = N_kv)
        scales = sum(c.words[t][0] // c.T_q * c.bpw[t] for t in ("K_scale", "V_scale") if t in c.words)
        q0 = w.batch * w.heads * w.d * c.bpw["Q"] if w.causal and w.Nq == w.Nkv else 0
        assert lower_bound_bytes(w, dec) == compulsory_bytes(w, dec) + scales - q0


def test_one_key_needs_no_query():
    w = Workload.build(heads=2, Nq=1, Nkv=1, d=4, M=4096)
    r = run_decode(w, Decode(splits=1), seed=3)
    assert r.max_abs_error < 1e-12  # O = V₀ whatever Q is
    assert lower_bound_bytes(w, Decode(splits=1)) == (2 * 4 + 2 * 4) * 4  # V₀ per head read, O written (fp32)


def test_causal_with_as_many_new_tokens_as_keys_needs_no_first_query_row():
    """Bottom-right causal with s_q = N_kv: new token 0 sees key 0 only, so O_0 = V_0 whatever Q_0 is and an exact
    algorithm need not read Q_0; the bound may count only the other s_q − 1 rows of each query head."""
    import numpy as np

    from attnio.algorithms.reference import attention4 as reference

    w = Workload.build(batch=2, heads=4, kv_heads=2, Nq=3, Nkv=3, d=8, causal=True, dtype="bf16", M=4096)
    rng = np.random.default_rng(0)
    Q, K, V = rng.standard_normal((2, 4, 3, 8)), rng.standard_normal((2, 2, 3, 8)), rng.standard_normal((2, 2, 3, 8))
    Q2 = Q.copy()
    Q2[:, :, 0] = rng.standard_normal((2, 4, 8))
    assert np.array_equal(reference(Q, K, V, True)[:, :, 0], reference(Q2, K, V, True)[:, :, 0])
    q0 = w.batch * w.heads * w.d * 2  # row 0 of every query head, bf16
    assert lower_bound_bytes(w, Decode(splits=1)) == compulsory_bytes(w, Decode(splits=1)) - q0


def test_lower_bound_does_not_depend_on_the_schedule_fitting_or_its_row_blocks():
    """The bound is about every exact algorithm: with one key it is V₀ per K/V head plus O, also when the
    schedule's packed rows need two row blocks (M = 60) or do not fit at all (M = 21)."""
    for M in (60, 21, 4096):
        w = Workload.build(heads=4, kv_heads=1, Nq=1, Nkv=1, d=8, M=M)  # fp32
        assert lower_bound_bytes(w, Decode(splits=1)) == (1 * 8 + 4 * 8) * 4
        w = Workload.build(heads=4, kv_heads=1, Nq=1, Nkv=64, d=8, M=M)
        assert lower_bound_bytes(w, Decode(splits=1)) == (4 * 8 + 64 * 8 * 2 + 4 * 8) * 4
    w = Workload.build(heads=4, kv_heads=1, Nq=1, Nkv=1, d=8, M=60)
    assert DecodeTiling.default(w, Decode(splits=1)).T_q == 2


def test_kv_bytes_do_not_depend_on_the_page_size_apart_from_the_block_table():
    w = Workload.build(batch=4, heads=8, kv_heads=2, Nq=1, Nkv=1000, d=16, dtype="bf16", M=1 << 16)
    counts = [decode_count(w, Decode(splits=4, page=p)) for p in (1, 8, 16, 256)]
    no_table = [{t: v for t, v in c.words.items() if t != "BT"} for c in counts]
    assert all(x == no_table[0] for x in no_table)
    assert [c.words["BT"][0] for c in counts] == [8 * -(-1000 // p) for p in (1, 8, 16, 256)]


@settings(deadline=None)
@given(calls(), st.integers(1, 50))
def test_page_size_changes_only_the_block_table_unless_it_changes_the_splits_or_row_blocks(case, page2):
    """The page-size claim of docs/serving.md, as precisely as it holds: two page sizes (or a contiguous cache)
    with the same effective split count and the same row blocks move the same words apart from the block table.
    A page size can change either: fewer pages than splits give fewer splits (page-aligned chunks), and a page
    too long to sit beside all R packed rows (each step is one page) gives more row blocks, each streaming K/V."""
    w, dec = case
    other = Decode(dec.splits, page2, dec.kv_dtype, dec.shared_kv, scales=dec.scales)
    try:
        blocks(w, other)
    except InvalidParameter:
        assume(False)
    a, b = decode_count(w, dec), decode_count(w, other)
    apart = lambda c: {t: v for t, v in c.words.items() if t != "BT"}  # noqa: E731
    assert (apart(a) == apart(b)) == ((a.splits, a.T_q) == (b.splits, b.T_q))


def test_a_page_size_can_change_the_splits_or_the_row_blocks():
    """The two exceptions to "only the block table changes", each a real case (docs/serving.md)."""
    w = Workload.build(heads=8, kv_heads=1, Nq=1, Nkv=1000, d=128, dtype="bf16", gpu="h100")
    assert [decode_count(w, Decode(splits=4, page=p)).splits for p in (None, 256, 512)] == [4, 4, 2]
    w = Workload.build(heads=128, kv_heads=1, Nq=1, Nkv=4096, d=128, dtype="bf16", gpu="h100")
    assert [decode_count(w, Decode(splits=1, page=p)).T_q for p in (None, 256, 512)] == [1, 1, 2]


def test_gqa_packing_scales_kv_with_kv_heads_not_query_heads():
    mha = Workload.build(heads=32, kv_heads=32, Nq=1, Nkv=4096, d=128, dtype="bf16", M=1 << 16)
    gqa = Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=4096, d=128, dtype="bf16", M=1 << 16)
    k = lambda w: decode_count(w, Decode(splits=1)).words["K"][0]  # noqa: E731
    assert k(mha) == 4 * k(gqa)


def test_split_heuristic_fills_the_sms_and_splits_cost_partials():
    w = Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=32768, d=128, dtype="bf16", gpu="h200")
    s = split_heuristic(w, "h200")
    assert s == 17 and w.batch * w.kv_heads * s >= 132 > w.batch * w.kv_heads * (s - 1)
    one, many = decode_count(w, Decode(splits=1)), decode_count(w, Decode(gpu="h200"))
    extra = many.bytes_total - one.bytes_total
    R = 4  # g·s_q
    assert extra == 8 * ((s - 1) * R * 128 * 2 + 2 * s * R * 128 * 4 + 2 * s * R * 4)  # Q re-reads, O/LSE partials


def test_rows_that_do_not_fit_are_taken_in_blocks_each_streaming_kv():
    w = Workload.build(heads=4, kv_heads=1, Nq=1, Nkv=64, d=8, M=60)  # one row + one step = 8+8+3+1+8 = 28
    t = DecodeTiling.default(w, Decode(splits=1))
    assert (t.R, t.B_q, t.T_q) == (4, 2, 2)
    assert decode_count(w, Decode(splits=1)).words["K"] == (2 * 64 * 8, 0)


def test_mla_absorbed_reads_one_latent_row_per_token_for_all_heads():
    w, dec = mla("absorbed", batch=2, heads=16, Nq=1, Nkv=256)
    c = decode_count(w, dec)
    assert c.words["K"] == (2 * 256 * 576, 0) and "V" not in c.words
    nw, ndec = mla("naive", batch=2, heads=16, Nq=1, Nkv=256)
    assert decode_count(nw, ndec).words["V"] == (2 * 16 * 256 * 128, 0)
    r = run_decode(*mla("absorbed", batch=1, heads=3, Nq=2, Nkv=9, M=20000), seed=2)
    assert r.max_abs_error < 1e-9


def test_roofline_ridge_and_achieved_bandwidth():
    w = Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=32768, d=128, dtype="bf16", gpu="h200")
    r = roofline(w, Decode(splits=1), "h200", time_s=1e-4)
    assert r.bound == "memory" and r.ridge == GPUS["h200"].bf16_flops / GPUS["h200"].hbm_bytes_per_s
    assert r.achieved_bytes_per_s == compulsory_bytes(w, Decode(splits=1)) / 1e-4
    w_mla, dec = mla("absorbed", batch=1, heads=256, Nq=1, Nkv=32768)
    assert roofline(w_mla, dec, "h200").bound == "compute"
    with pytest.raises(InvalidParameter, match="time"):
        roofline(w, Decode(splits=1), "h200", time_s=0)


def test_fp8_tensor_rate_only_when_both_mma_operands_are_fp8():
    """A bf16 query against an fp8 cache multiplies in bf16 (the fp8 MMA takes two fp8 operands): bf16 ridge."""
    p = GPUS["h200"]
    w = Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=4096, d=128, dtype="bf16", gpu="h200")
    assert roofline(w, Decode(splits=1, kv_dtype="fp8"), "h200").ridge == p.bf16_flops / p.hbm_bytes_per_s
    w8 = Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=4096, d=128, dtype="fp8", gpu="h200")
    assert roofline(w8, Decode(splits=1), "h200").ridge == p.fp8_flops / p.hbm_bytes_per_s


def test_a_page_longer_than_the_cache_is_one_page_of_n_kv_tokens():
    """A page longer than N_kv holds N_kv tokens: every step loads at most N_kv rows, so the block rule must not
    ask M for a step of the page's nominal length (page 100000 at N_kv = 64 was refused, 'M >= 12900260')."""
    w = Workload.build(heads=32, kv_heads=8, Nq=1, Nkv=64, d=128, dtype="bf16", gpu="h100")
    want = decode_count(w, Decode(splits=1, page=64))
    for page in (65, 256, 100000):
        c = decode_count(w, Decode(splits=1, page=page))
        assert (c.words, c.T_q) == (want.words, want.T_q)
        assert _measured(run_decode(w, Decode(splits=1, page=page), count_only=True)) == want.words
        assert DecodeTiling.default(w, Decode(splits=1, page=page)).B_c == 64
    w = Workload.build(heads=4, kv_heads=1, Nq=1, Nkv=3, d=2, M=40)  # numeric: the machine holds it in M
    r = run_decode(w, Decode(splits=1, page=50), seed=0)
    assert r.max_abs_error < 1e-12 and r.measurement.peak_fast_words <= 40
    # the physical cache holds the page's N_kv valid rows, not 2**40 rows of padding (a MemoryError before)
    r = run_decode(w, Decode(splits=1, page=2**40), seed=0)
    assert r.max_abs_error < 1e-12 and _measured(r) == decode_count(w, Decode(splits=1, page=50)).words


def test_integral_float_splits_and_page_are_stored_as_integers():
    """check_int accepts 3.0 as 3: Decode must then hold the int (floats gave float word counts, 8944.0 bytes, and
    a numeric paged run ended in NumPy's AxisError)."""
    w = Workload.build(batch=2, heads=8, kv_heads=2, Nq=1, Nkv=100, d=4, dtype="bf16", M=4096)
    dec = Decode(splits=3.0, page=16.0)
    assert dec == Decode(splits=3, page=16) and type(dec.splits) is int and type(dec.page) is int
    c = decode_count(w, dec)
    assert c.words == decode_count(w, Decode(splits=3, page=16)).words and type(c.bytes_total) is int
    assert run_decode(w, dec, seed=0).max_abs_error < 1e-12


def test_tiling_refuses_a_fast_memory_too_small_naming_M():
    w = Workload.build(heads=4, kv_heads=1, Nq=1, Nkv=64, d=8, M=20)
    with pytest.raises(InvalidParameter, match="M=20"):
        DecodeTiling.default(w, Decode(splits=1))


@pytest.mark.parametrize("call, name", [
    (lambda w, dec: run_decode(w, dec, seed=-1), "seed"), (lambda w, dec: run_decode(w, dec, seed=1.5), "seed"),
    (lambda w, dec: run_decode("w", dec), "workload"), (lambda w, dec: decode_count(w, "dec"), "decode"),
    (lambda w, dec: lower_bound_bytes(w, (2, 16)), "decode"), (lambda w, dec: compulsory_bytes(None, dec), "workload")])
def test_bad_decode_calls_name_the_parameter(call, name):
    """A negative seed reached NumPy (ValueError), a non-Decode an AttributeError: now InvalidParameter."""
    w = Workload.build(heads=2, Nq=1, Nkv=8, d=4, M=4096)
    with pytest.raises(InvalidParameter, match=name):
        call(w, Decode(splits=1))


@pytest.mark.parametrize("figure", [compulsory_bytes, lower_bound_bytes, decode_count, run_decode])
def test_v_wider_than_k_cannot_be_a_slice_of_k_in_any_figure(figure):
    """shared_kv with d_v > d is refused by every figure, not only by the schedule's count (the compulsory bytes
    and the lower bound computed 352 bytes for the impossible call)."""
    w = Workload.build(heads=2, Nq=1, Nkv=8, d=4, dv=8, M=4096)
    with pytest.raises(InvalidParameter, match="dv=8"):
        figure(w, Decode(splits=1, shared_kv=True))


@pytest.mark.parametrize(
    "kw, name",
    [({"splits": 0}, "splits"), ({"splits": 1, "page": 0}, "page"), ({"splits": 1, "kv_dtype": "int4"}, "kv_dtype"),
     ({}, "splits"), ({"gpu": "v100"}, "gpu"), ({"splits": 1, "shared_kv": "yes"}, "shared_kv")],
)
def test_bad_decode_parameters_name_the_parameter(kw, name):
    with pytest.raises(InvalidParameter, match=name):
        Decode(**kw)


def test_cli_decode_prints_equal_counts_and_json(capsys):
    import json

    from attnio.cli import main

    assert main(["decode", "--Nkv", "4096", "--heads", "32", "--kv-heads", "8", "--gpu", "h200", "--page", "16",
                 "--time-us", "10", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["machine_equals_formula"] is True and out["splits"] == 16  # 17 asked: 256 pages in chunks of 16
    assert out["per_tensor"]["BT"]["reads_words"] == 8 * 4096 // 16
    assert out["roofline"]["achieved_bytes_per_s"] == pytest.approx(out["roofline"]["compulsory_bytes"] / 1e-5, rel=1e-12)


@pytest.mark.parametrize("argv, name", [(["--Nkv", "0"], "Nkv"), (["--Nkv", "8", "--page", "0"], "page"),
                                        (["--Nkv", "8", "--time-us", "-1"], "time"),
                                        (["--Nkv", "8", "--time-us", "inf"], "time"),
                                        (["--Nkv", "8", "--time-us", "nan"], "time"),
                                        (["--Nkv", "8", "--splits", "0"], "splits"),
                                        (["--Nkv", "8", "--heads", "3", "--kv-heads", "2"], "kv_heads"),
                                        (["--Nkv", "8", "--mla", "absorbed", "--dv", "9"], "mla")])
def test_cli_decode_bad_input_is_one_line_and_exit_2(capsys, argv, name):
    from attnio.cli import main

    rc = main(["decode", *argv])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and name in err


def test_paper_decode_rows_match_published_digits(capsys):
    from attnio.cli import main
    from attnio.reports.paper_decode import published_rows

    rows = published_rows()
    assert len(rows) == 9 and all(r["match"] for r in rows)
    fa = [r for r in rows if r["source"].startswith("flash-attention")]
    b, H, Hkv, n, d, bf16 = 32, 32, 4, 65536, 128, 2  # Q + O per query head, K + V per K/V head, each once
    assert {r["compulsory_bytes"] for r in fa} == {b * (H * 2 * d + Hkv * n * 2 * d) * bf16}
    assert main(["paper", "decode"]) == 0 and "not data movement" in capsys.readouterr().out


def test_flashmla_fp8_row_is_656_bytes_per_token():
    """FlashMLA's "FP8 with scale" cache (its README): 512 fp8 latent values, 4 fp32 scales (one per 128 of them),
    64 bf16 RoPE values, 656 bytes per token; attnio's K bytes per token per row block for that layout equal it,
    and the decode lower bound reads each token's 656 bytes once."""
    w, dec = mla("absorbed", batch=2, heads=16, Nq=1, Nkv=1000, kv_dtype="fp8", scales="flashmla")
    c = decode_count(w, dec)
    tokens = w.batch * w.Nkv * c.T_q
    assert sum(c.words[t][0] * c.bpw[t] for t in ("K", "K_rope", "K_scale")) == 656 * tokens
    assert "V" not in c.words and "V_scale" not in c.words  # V is the latent, the row's first 512 channels
    q_o = w.batch * w.heads * (576 + 512) * 2
    assert lower_bound_bytes(w, dec) == 656 * w.batch * w.Nkv + q_o
    # attnio's own fp8 layout quantises all 576 channels with 5 scales: 596 bytes per token
    g = decode_count(*mla("absorbed", batch=2, heads=16, Nq=1, Nkv=1000, kv_dtype="fp8"))
    assert sum(g.words[t][0] * g.bpw[t] for t in ("K", "K_scale")) == 596 * w.batch * w.Nkv * g.T_q


def test_per_head_and_per_tensor_scales_are_read_once_per_program():
    """FlashAttention-3's (batch, K/V head) descales and per-tensor scales: one fp32 for K and one for V per
    program (unit × split × row block), against one per 128 channels of every row: +3.1% of K/V bytes at d = 128."""
    w = Workload.build(batch=2, heads=32, kv_heads=8, Nq=1, Nkv=4096, d=128, dtype="bf16", gpu="h100")
    kv_bytes = 2 * 8 * 4096 * 2 * 128  # fp8 K and V
    for layout, scale_bytes in (("group128", 2 * 8 * 4096 * 2 * 4), ("head", 2 * 8 * 5 * 2 * 4), ("tensor", 2 * 8 * 5 * 2 * 4)):
        c = decode_count(w, Decode(splits=5, kv_dtype="fp8", scales=layout))
        assert c.T_q == 1 and c.words["K"][0] + c.words["V"][0] == kv_bytes
        assert (c.words["K_scale"][0] + c.words["V_scale"][0]) * 4 == scale_bytes
    assert round(2 * 8 * 4096 * 2 * 4 / kv_bytes, 4) == 0.0312
    lb = {s: lower_bound_bytes(w, Decode(splits=5, kv_dtype="fp8", scales=s)) for s in ("head", "tensor")}
    assert lb["head"] - lb["tensor"] == (2 * 8 - 1) * 2 * 4  # a scale per K/V head against one per call


@pytest.mark.parametrize("dec, name", [(lambda: Decode(splits=1, scales="block"), "scales"),
                                       (lambda: Decode(splits=1, kv_dtype="fp8", scales="flashmla"), "scales"),
                                       (lambda: decode_count(Workload.build(Nq=1, Nkv=8, d=4, M=4096),
                                                             Decode(splits=1, scales="head")), "scales")])
def test_bad_scale_layouts_name_the_parameter(dec, name):
    with pytest.raises(InvalidParameter) as e:
        dec()
    assert e.value.name == name


def _fa2_splitkv_reference(w, s: int) -> dict[str, int]:
    """FlashAttention-2's split-KV decode (csrc/flash_attn/src/flash_fwd_kernel.h), written here from its loop
    bounds: n_blocks_per_split = ⌈⌈N_kv/B_N⌉/s⌉; split i covers blocks [i·n, min(⌈N_kv/B_N⌉, (i+1)·n)); an empty
    split (n_block_min ≥ n_block_max) writes zeros to its O_accum and −∞ to its LSE_accum without reading Q; the
    combine reads every split's LSE and O_accum and writes O and softmax_lse; packed rows in blocks of 64."""
    bn = 256 if w.d <= 64 else 128 if w.d <= 128 else 64
    blocks_ = -(-w.Nkv // bn)
    per = -(-blocks_ // s)
    nonempty = sum(1 for i in range(s) if min(blocks_, (i + 1) * per) > i * per)
    R = w.groups * w.Nq
    row_blocks = -(-R // 64)
    units = w.batch * w.kv_heads
    part = units * s * R if s > 1 else 0
    return {"Q": units * nonempty * R * w.d, "K": units * row_blocks * w.Nkv * w.d, "O_part": part * w.dv,
            "LSE_part": part, "LSE": units * R}


@pytest.mark.parametrize("Nkv, s, d", [(32768, 17, 128), (300, 3, 8), (1000, 16, 128), (129, 2, 128), (5000, 7, 256)])
def test_fa2_split_rule_follows_flashattention2_split_kv(Nkv, s, d):
    w = Workload.build(batch=2, heads=32, kv_heads=8, Nq=1, Nkv=Nkv, d=d, dtype="bf16", gpu="h200")
    dec = Decode(splits=s, split_rule="fa2")
    c = decode_count(w, dec)
    want = _fa2_splitkv_reference(w, s)
    got = {"Q": c.words["Q"][0], "K": c.words["K"][0], "O_part": c.words.get("O_part", (0, 0))[1],
           "LSE_part": c.words.get("LSE_part", (0, 0))[1], "LSE": c.words["LSE"][1]}
    assert got == want
    if "O_part" in c.words:
        assert c.words["O_part"][0] == c.words["O_part"][1]  # the combine reads every split written
    # attnio's own rule: no empty split, no LSE written; the published rows use it (test_paper: unchanged)
    own = decode_count(w, Decode(splits=s))
    assert "LSE" not in own.words and own.words.get("O_part", (0, 0))[1] == (2 * 8 * own.splits * 4 * w.dv if own.splits > 1 else 0)


@settings(max_examples=40, deadline=None)
@given(calls(), st.integers(1, 6))
def test_fa2_split_rule_measured_equals_formula(case, s):
    w, dec = case
    dec = Decode(splits=s, kv_dtype=dec.kv_dtype, shared_kv=dec.shared_kv, scales=dec.scales, split_rule="fa2")  # contiguous
    try:
        blocks(w, dec)
    except InvalidParameter:
        assume(False)
    r = run_decode(w, dec, seed=2)
    assert _measured(r) == decode_count(w, dec).words
    assert r.max_abs_error < 1e-9
    assert lower_bound_bytes(w, dec) <= decode_count(w, dec).bytes_total


def test_mla_row_blocks_of_the_kernels_size():
    """MLA absorbed, 128 query heads × 2 new tokens (R = 256) on the H200 preset: attnio's own rule packs as many
    rows as fit (3 blocks of 86), FlashMLA's BLOCK_SIZE_M = 64 (csrc/sm90/decode/dense/config.h) gives 4 blocks,
    4 loads of each cache row."""
    from attnio.core.workload import GPUS

    w, _ = mla("absorbed", batch=1, heads=128, Nq=2, Nkv=4096, M=GPUS["h200"].smem_bytes // 2)
    own = decode_count(w, Decode(splits=1, shared_kv=True))
    kernel = decode_count(w, Decode(splits=1, shared_kv=True, row_block=64))
    assert (own.T_q, kernel.T_q) == (3, 4)
    assert kernel.words["K"][0] == 4 * 4096 * 576 and own.words["K"][0] == 3 * 4096 * 576
    small, _ = mla("absorbed", batch=1, heads=8, Nq=2, Nkv=20, M=10**6)  # on the machine: 16 rows in blocks of 5
    dec = Decode(splits=2, shared_kv=True, row_block=5)
    r = run_decode(small, dec, seed=0)
    assert _measured(r) == decode_count(small, dec).words
    assert r.tiling.T_q == 4 and r.max_abs_error < 1e-9


@pytest.mark.parametrize("make, name", [(lambda: Decode(splits=2, split_rule="flash"), "split_rule"),
                                        (lambda: Decode(splits=2, split_rule="fa2", page=16), "page"),
                                        (lambda: Decode(splits=2, row_block=0), "row_block"),
                                        (lambda: blocks(Workload.build(heads=64, kv_heads=1, Nq=1, Nkv=8, d=64, M=2000),
                                                        Decode(splits=1, row_block=64)), "row_block")])
def test_bad_split_rules_name_the_parameter(make, name):
    with pytest.raises(InvalidParameter) as e:
        make()
    assert e.value.name == name


def test_cli_decode_names_its_conventions(capsys):
    import json

    from attnio.cli import main

    assert main(["decode", "--Nkv", "4096", "--Nq", "2", "--heads", "128", "--mla", "absorbed", "--kv-dtype", "fp8",
                 "--scales", "flashmla", "--row-block", "64", "--splits", "3", "--split-rule", "fa2", "--gpu", "h200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["scales"], out["split_rule"], out["row_blocks"], out["row_block_rows"]) == ("flashmla", "fa2", 4, 64)
    assert out["machine_equals_formula"] is True
    pt = out["per_tensor"]
    per_token = sum(pt[t]["reads_words"] * pt[t]["bytes_per_word"] for t in ("K", "K_rope", "K_scale")) // (4096 * 4)
    assert per_token == 656 and pt["LSE"]["writes_words"] == 256
    assert main(["decode", "--Nkv", "4096", "--heads", "32", "--kv-heads", "8", "--gpu", "h200", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["scales"], out["split_rule"]) == (None, "tokens")  # bf16 K/V: no scales
