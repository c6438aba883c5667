"""Decode (split-KV, paged KV, GQA packing, fp8 K/V, MLA's shared row): measured == formula per tensor, outputs
against the float64 reference, the lower bound below every schedule, and the published rows (docs/serving.md)."""

from __future__ import annotations

import pytest
from attnio.algorithms.decode import DecodeTiling, run_decode
from attnio.bounds.serving import Decode, compulsory_bytes, decode_count, lower_bound_bytes, split_heuristic
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.errors import InvalidParameter
from attnio.workload import Workload


@st.composite
def calls(draw):
    kv = draw(st.integers(1, 2))
    g = draw(st.integers(1, 3))
    d = draw(st.integers(1, 5))
    shared = draw(st.booleans())
    dv = draw(st.integers(1, d)) if shared else draw(st.integers(1, 5))
    nq = draw(st.integers(1, 3))
    nkv = draw(st.integers(nq, 40))
    w = Workload.build(batch=draw(st.integers(1, 2)), heads=g * kv, kv_heads=kv, Nq=nq, Nkv=nkv, d=d, dv=dv,
                       causal=draw(st.booleans()), dtype=draw(st.sampled_from(["bf16", "fp16", "fp32"])), M=4096)
    dec = Decode(splits=draw(st.integers(1, 6)), page=draw(st.one_of(st.none(), st.integers(1, 8))),
                 kv_dtype=draw(st.sampled_from([None, "fp8"])), shared_kv=shared)
    return w, dec


def _measured(r) -> dict[str, tuple[int, int]]:
    return {t: (c.reads_words, c.writes_words) for t, c in r.measurement.per_array.items() if c.reads_words or c.writes_words}


@settings(max_examples=60, deadline=None)
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


@settings(max_examples=200, deadline=None)
@given(calls())
def test_lower_bound_never_exceeds_a_schedule_and_compulsory_is_q_k_v_o(case):
    w, dec = case
    c = decode_count(w, dec)
    assert lower_bound_bytes(w, dec) <= c.bytes_total
    if w.Nkv >= 2:  # then the bound is the compulsory traffic plus the fp8 scales
        scales = sum(c.words[t][0] * c.bpw[t] for t in ("K_scale", "V_scale") if t in c.words)
        assert lower_bound_bytes(w, dec) == compulsory_bytes(w, dec) + scales


def test_one_key_needs_no_query():
    w = Workload.build(heads=2, Nq=1, Nkv=1, d=4, M=4096)
    r = run_decode(w, Decode(splits=1), seed=3)
    assert r.max_abs_error < 1e-12  # O = V₀ whatever Q is
    assert lower_bound_bytes(w, Decode(splits=1)) == (2 * 4 + 2 * 4) * 4  # V₀ per head read, O written (fp32)


def test_kv_bytes_do_not_depend_on_the_page_size_apart_from_the_block_table():
    w = Workload.build(batch=4, heads=8, kv_heads=2, Nq=1, Nkv=1000, d=16, dtype="bf16", M=1 << 16)
    counts = [decode_count(w, Decode(splits=4, page=p)) for p in (1, 8, 16, 256)]
    no_table = [{t: v for t, v in c.words.items() if t != "BT"} for c in counts]
    assert all(x == no_table[0] for x in no_table)
    assert [c.words["BT"][0] for c in counts] == [8 * -(-1000 // p) for p in (1, 8, 16, 256)]


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


def test_tiling_refuses_a_fast_memory_too_small_naming_M():
    w = Workload.build(heads=4, kv_heads=1, Nq=1, Nkv=64, d=8, M=40)
    with pytest.raises(InvalidParameter, match="M=40"):
        DecodeTiling.default(w, Decode(splits=1))


@pytest.mark.parametrize(
    "kw, name",
    [({"splits": 0}, "splits"), ({"splits": 1, "page": 0}, "page"), ({"splits": 1, "kv_dtype": "int4"}, "kv_dtype"),
     ({}, "splits"), ({"gpu": "v100"}, "gpu")],
)
def test_bad_decode_parameters_name_the_parameter(kw, name):
    with pytest.raises(InvalidParameter, match=name):
        Decode(**kw)
