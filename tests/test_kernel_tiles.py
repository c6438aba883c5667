"""Kernel tiles and whole-tile loads (bounds/kernel_tiles.py, ``load="tile"``, docs/masks.md#kernel-tiles):
masked FA-2 counts at a kernel's tiles against FlashAttention-2's own loop bounds, written here independently."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attnio.algorithms.run import run
from attnio.bounds.kernel_tiles import kernel_tiles
from attnio.bounds.masks import Causal, Document, SlidingWindow, flash2_masked_words
from attnio.core.errors import InvalidParameter
from attnio.core.workload import Workload


def _c_div(a: int, b: int) -> int:
    """C's integer division (truncation toward zero), as the CUDA source computes it."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def fa2_window(Nkv: int, left: int, right: int) -> tuple[int, int]:
    """FlashAttention-2's window sides as its kernel uses them (flash_api.cpp, set_params_fprop): −1 on one side
    becomes seqlen_k when the other side is bounded. That is unbounded only while every row's q + δ + seqlen_k
    reaches key N_kv − 1 (δ ≥ −1): with N_q > N_kv + 1 the first rows see fewer keys than attnio's −1 gives."""
    if left < 0 and right >= 0:
        left = Nkv
    if left >= 0 and right < 0:
        right = Nkv
    return left, right


def fa2_loop_count(Nq: int, Nkv: int, kBlockM: int, kBlockN: int, left: int, right: int, causal: bool) -> tuple[int, int]:
    """(query rows read, K/V rows read) of one head of FlashAttention-2's forward, from its loop bounds
    (csrc/flash_attn/src/flash_fwd_kernel.h: n_block_min, n_block_max per m_block; flash_api.cpp: -1 on one side
    of a window becomes seqlen_k when the other side is bounded, causal is window_size_right = 0): every K/V block
    n_block_min … n_block_max − 1 is loaded whole (its rows below seqlen_k); a block with n_block_max ≤
    n_block_min writes zeros and reads nothing."""
    is_local = not causal and (left >= 0 or right >= 0)
    if causal:
        left, right = -1, 0
    left, right = fa2_window(Nkv, left, right)
    q_rows = kv_rows = 0
    for m_block in range(-(-Nq // kBlockM)):
        n_min = max(0, _c_div(m_block * kBlockM + Nkv - Nq - left, kBlockN)) if is_local else 0
        n_max = -(-Nkv // kBlockN)
        if causal or is_local:
            n_max = min(n_max, _c_div((m_block + 1) * kBlockM + Nkv - Nq + right + kBlockN - 1, kBlockN))  # cute::ceil_div
        if n_max <= n_min:
            continue
        q_rows += min(kBlockM, Nq - m_block * kBlockM)
        kv_rows += sum(min(kBlockN, Nkv - n * kBlockN) for n in range(n_min, n_max))
    return q_rows, kv_rows


def flex_block_count(dense: np.ndarray, B_r: int, B_c: int) -> tuple[int, int]:
    """(query rows read, K/V rows read) under FlexAttention's rule: a tile is visited when the mask allows some
    pair in it (create_block_mask), and loaded whole; a Q block with no visited tile reads nothing."""
    Nq, Nkv = dense.shape
    q_rows = kv_rows = 0
    for r0 in range(0, Nq, B_r):
        hit = [c0 for c0 in range(0, Nkv, B_c) if dense[r0:r0 + B_r, c0:c0 + B_c].any()]
        q_rows += min(B_r, Nq - r0) if hit else 0
        kv_rows += sum(min(B_c, Nkv - c0) for c0 in hit)
    return q_rows, kv_rows


def _words(q_rows: int, kv_rows: int, d: int) -> int:
    return q_rows * d + kv_rows * 2 * d


@st.composite
def windows(draw):
    Nq, Nkv = draw(st.integers(1, 300)), draw(st.integers(1, 300))
    causal = draw(st.booleans()) and draw(st.booleans())
    left, right = draw(st.integers(-1, 320)), draw(st.integers(-1, 320))
    if draw(st.booleans()):
        left = -1 if draw(st.booleans()) else left
    if draw(st.booleans()):
        right = -1 if draw(st.booleans()) else min(right, 3)
    kBlockM, kBlockN = draw(st.sampled_from([16, 32, 64, 128, 192])), draw(st.sampled_from([16, 32, 48, 64, 80, 128, 176]))
    return Nq, Nkv, causal, left, right, kBlockM, kBlockN


@settings(max_examples=300, deadline=None)
@given(windows())
def test_whole_tile_counts_equal_flashattention2_loop_bounds(case):
    """Random windows and causal masks, Nq ≠ Nkv included: attnio's masked FA-2 count at FA-2's tiles with
    load="tile" == the words of FA-2's own n_block_min … n_block_max loop, for the mask FA-2 computes (its
    window sides, :func:`fa2_window`)."""
    Nq, Nkv, causal, left, right, kBlockM, kBlockN = case
    d = 4
    mask = Causal() if causal else SlidingWindow(*fa2_window(Nkv, left, right))
    w = Workload.build(Nq=Nq, Nkv=Nkv, d=d, M=10**9)
    reads, _ = flash2_masked_words(w, mask, kBlockM, kBlockN, grouped=False, load="tile")
    assert reads == _words(*fa2_loop_count(Nq, Nkv, kBlockM, kBlockN, left, right, causal), d)


@settings(max_examples=150, deadline=None)
@given(st.integers(1, 400), st.sets(st.integers(1, 399), max_size=8), st.sampled_from([16, 64, 128]),
       st.sampled_from([16, 64, 128]))
def test_document_whole_tile_counts_equal_flexattention_block_visits(N, cuts, B_r, B_c):
    """Packed documents: the tiles visited are those with an allowed pair (FlexAttention's block mask), each
    loaded whole; counted here from the dense predicate."""
    mask = Document([0, *sorted(c for c in cuts if c < N), N])
    w = Workload.build(N=N, d=4, M=10**9)
    reads, _ = flash2_masked_words(w, mask, B_r, B_c, grouped=False, load="tile")
    assert reads == _words(*flex_block_count(mask.dense(N, N), B_r, B_c), 4)


@pytest.mark.parametrize("mask", [SlidingWindow(37, 0), Causal(), Document([0, 50, 51, 130, 200])])
def test_machine_measures_the_whole_tile_count_and_stays_exact(mask):
    """On the machine: count-only and numeric runs at given tiles with load="tile" measure the formula, the
    output within 1e-9 of the float64 masked reference; span loads never exceed tile loads."""
    w = Workload.build(heads=2, kv_heads=1, N=200, d=4, M=4000)
    for schedule in ("per-head", "grouped"):
        want = flash2_masked_words(w, mask, 16, 48, grouped=schedule == "grouped", load="tile")
        r = run("flash2", w, mask=mask, schedule=schedule, tiling=(16, 48), load="tile", count_only=True)
        assert (r.measurement.reads_words, r.measurement.writes_words) == want
        n = run("flash2", w, mask=mask, schedule=schedule, tiling=(16, 48), load="tile", seed=1)
        assert (n.measurement.reads_words, n.measurement.writes_words) == want and n.max_abs_error < 1e-9
        span = run("flash2", w, mask=mask, schedule=schedule, tiling=(16, 48), count_only=True).measurement.reads_words
        assert span <= want[0]
        assert r.as_dict()["blocks"]["load"] == "tile" and r.as_dict()["blocks"]["tiles"] == "given"


def test_mistral_window_kv_rows_per_query_row_at_fa2_tiles():
    """Mistral's 4096 window on a 32k cache, d = 128, bf16, H100: K rows read per query row are 9.61 at attnio's
    io-optimal tiles and 30.94 at FA-2's 128 × 64 (the brief's figures), the latter equal to FA-2's loop count."""
    w = Workload.build(N=32768, d=128, gpu="h100", dtype="bf16")
    m = SlidingWindow(4096, 0)
    own = run("flash2", w, mask=m, count_only=True).measurement.per_array["K"].reads_words
    fa2 = run("flash2", w, mask=m, tiling="fa2", load="tile", count_only=True)
    assert fa2.tiling.B_r == 128 and fa2.tiling.B_c == 64
    k = fa2.measurement.per_array["K"].reads_words
    assert (round(own / (32768 * 128), 2), round(k / (32768 * 128), 2)) == (9.61, 30.94)
    assert k == fa2_loop_count(32768, 32768, 128, 64, 4096, 0, False)[1] * 128


def test_presets_follow_the_kernel_sources():
    """The table of docs/masks.md#kernel-tiles, entry by entry."""
    assert [kernel_tiles("fa2", d=d, gpu="a100") for d in (32, 64, 96, 128, 192, 256)] == \
        [(128, 128), (128, 128), (128, 64), (128, 64), (128, 64), (64, 64)]
    assert [kernel_tiles("fa2", d=d, gpu="a6000", causal=c) for d, c in ((96, True), (96, False), (128, True), (128, False))] == \
        [(64, 64), (128, 64), (64, 64), (128, 32)]
    assert [kernel_tiles("fa3", d=d, gpu="h100") for d in (64, 96, 128, 192, 256)] == \
        [(192, 192), (192, 144), (128, 176), (128, 112), (128, 80)]
    assert [kernel_tiles("fa3", d=d, gpu="h200", local=True) for d in (64, 96, 128, 192, 256)] == \
        [(192, 128), (192, 128), (128, 128), (128, 96), (128, 64)]
    assert kernel_tiles("fa3", d=128, gpu="h100", element_size=1) == (128, 224)
    assert kernel_tiles("flex", d=128) == (128, 128)


@pytest.mark.parametrize("call, name", [
    (lambda: kernel_tiles("fa2", d=128), "tiles"),  # no GPU
    (lambda: kernel_tiles("fa3", d=128, gpu="a100"), "gpu"),
    (lambda: kernel_tiles("fa2", d=512, gpu="a100"), "d"),
    (lambda: kernel_tiles("fa2", d=128, gpu="a100", element_size=1), "dtype"),
    (lambda: kernel_tiles("ck", d=128), "tiles"),
    (lambda: run("flash2", N=64, d=4, M=300, mask=Causal(), tiling=(64, 64), count_only=True), "tiling"),  # does not fit
    (lambda: run("flash2", N=64, d=4, M=300, mask=Causal(), tiling=(0, 4), count_only=True), "tiling"),
    (lambda: run("flash2", N=64, d=4, M=300, mask=Causal(), load="whole", count_only=True), "load"),
    (lambda: run("flash2", N=64, d=4, M=300, load="tile", count_only=True), "load"),  # a plain run
    (lambda: run("flash2", N=64, d=4, M=300, mask=Causal(), pass_="step", tiling=(4, 4), count_only=True), "tiling"),
])
def test_bad_tiles_name_the_parameter(call, name):
    with pytest.raises(InvalidParameter) as e:
        call()
    assert e.value.name == name


def test_cli_tiles_and_load(capsys):
    from attnio.cli import main

    args = ["run", "flash2", "--N", "200", "--d", "4", "--M", "4000", "--mask", "window:37,0", "--count-only", "--json"]
    assert main([*args, "--tiles", "16x48", "--load", "tile"]) == 0
    out = json.loads(capsys.readouterr().out)
    w = Workload.build(N=200, d=4, M=4000)
    assert (out["reads"], out["writes"]) == flash2_masked_words(w, SlidingWindow(37, 0), 16, 48, grouped=False, load="tile")
    assert out["blocks"]["load"] == "tile"
    assert main([*args, "--tiles", "16x48"]) == 0  # span loads by default
    assert json.loads(capsys.readouterr().out)["blocks"]["load"] == "span"
    for bad in ("16x", "x4", "0x4", "fa9"):
        assert main([*args, "--tiles", bad]) == 2
        assert "tiles" in capsys.readouterr().err


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(1, 300), min_size=1, max_size=6), st.booleans(), st.sampled_from([16, 64, 128]),
       st.sampled_from([16, 64, 128, 176]))
def test_varlen_documents_equal_flashattention2_varlen_loop_bounds(lengths, causal, kBlockM, kBlockN):
    """FlashAttention-2's varlen API runs each sequence of cu_seqlens as its own problem (its Q blocks and K/V
    blocks from its own start, block_info.h's offsets): the count is the sum of fa2_loop_count over the sequences.
    attnio's documents="varlen" with whole-tile loads equals it, for the document mask and document & causal."""
    cu = np.concatenate([[0], np.cumsum(lengths)]).tolist()
    N = cu[-1]
    mask = Document(cu) & Causal() if causal else Document(cu)
    w = Workload.build(N=N, d=4, M=10**9)
    reads, _ = flash2_masked_words(w, mask, kBlockM, kBlockN, grouped=False, load="tile", documents="varlen")
    q_rows = kv_rows = 0
    for L in lengths:
        q, kv = fa2_loop_count(L, L, kBlockM, kBlockN, -1, 0 if causal else -1, causal)
        q_rows, kv_rows = q_rows + q, kv_rows + kv
    assert reads == _words(q_rows, kv_rows, 4)


@pytest.mark.parametrize("mask", [Document([0, 50, 51, 130, 200]), Document([0, 50, 51, 130, 200]) & Causal()])
@pytest.mark.parametrize("load", ["span", "tile"])
def test_varlen_on_the_machine_measures_the_formula(mask, load):
    w = Workload.build(heads=2, kv_heads=1, N=200, d=4, M=4000)
    for schedule in ("per-head", "grouped"):
        want = flash2_masked_words(w, mask, 16, 48, grouped=schedule == "grouped", load=load, documents="varlen")
        n = run("flash2", w, mask=mask, schedule=schedule, tiling=(16, 48), load=load, documents="varlen", seed=1)
        c = run("flash2", w, mask=mask, schedule=schedule, tiling=(16, 48), load=load, documents="varlen", count_only=True)
        assert (n.measurement.reads_words, n.measurement.writes_words) == want == (c.measurement.reads_words, c.measurement.writes_words)
        assert n.max_abs_error < 1e-9 and n.as_dict()["blocks"]["documents"] == "varlen"


@pytest.mark.parametrize("call", [
    lambda: run("flash2", N=64, d=4, M=300, mask=Causal(), documents="varlen", count_only=True),  # no Document
    lambda: run("flash2", N=64, d=4, M=300, documents="varlen", count_only=True),  # no mask
    lambda: Causal().block_rows(8, 8, 2, 2, documents="varlen"),
    lambda: Document([0, 8]).block_rows(8, 8, 2, 2, documents="ragged"),
])
def test_varlen_needs_a_document_mask(call):
    with pytest.raises(InvalidParameter) as e:
        call()
    assert e.value.name == "documents"


def test_presets_read_the_mask_as_the_kernels_do():
    """FA-2's Is_causal is the window (−1, 0) however it is written (Causal(), SlidingWindow(-1, 0), a document &
    causal mask run per sequence); a window with a bounded side is local (FA-3's 128-key tiles at d = 128)."""
    from attnio.algorithms.workloads import given_tiling

    a6000 = Workload.build(N=4096, d=128, gpu="a6000", dtype="bf16")
    tiles = [given_tiling("flash2", a6000, "per-head", "fa2", "tile", m).B_c
             for m in (None, Causal(), SlidingWindow(-1, 0), Document([0, 100, 4096]) & Causal(), SlidingWindow(100, 0))]
    assert tiles == [32, 64, 64, 64, 32]
    h100 = Workload.build(N=4096, d=128, gpu="h100", dtype="bf16")
    assert [given_tiling("flash2", h100, "per-head", "fa3", "tile", m).B_c
            for m in (None, SlidingWindow(-1, -1), SlidingWindow(100, 0), SlidingWindow(-1, 5))] == [176, 176, 128, 128]
