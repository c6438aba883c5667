"""attnio.triton.scale: the fast count of a launcher equals the full interpreter run (every program) on small shapes
Hypothesis draws, for attnio's FA-2 forward and backward, square tiling and the shipped-shape kernels (dense,
varlen, paged, token pool, split-KV with its combine); a paged decode extrapolated along N_kv equals its full run;
kernels built to break the laws raise Mismatch; the grid law refuses extents it cannot extrapolate (Triton's
interpreter; skipped without triton and torch)."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from triton_env import import_triton

torch, triton = import_triton()

import scale_kernels  # noqa: E402
from kernels_shipped import launchers  # noqa: E402

from attnio.core.workload import Workload  # noqa: E402
from attnio.triton import scale  # noqa: E402
from attnio.triton.fake_gpu import fake_gpu  # noqa: E402
from attnio.triton.kernels.fa2_bwd import exact_count  # noqa: E402
from attnio.triton.kernels.fa2_fwd import traffic  # noqa: E402
from attnio.triton.programs import shift_equal  # noqa: E402
from attnio.triton.scale_fit import Counts, fit_axis, grid_law  # noqa: E402

NAMES = {"query": "q", "key": "k", "value": "v", "out": "o", "softmax_scale": "sm_scale"}


def same(got: scale.ScaledCount, full) -> None:  # noqa: ANN001
    for f in scale.FIELDS:
        assert getattr(got, f) == {n: x for n, x in getattr(full, f).items() if x or n in getattr(got, f)}, f


# ------------------------------------------------------------------------------------------ FA-2 forward (default)


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), kv_heads=st.integers(1, 3), group=st.sampled_from([1, 2]), N=st.integers(1, 140),
       causal=st.booleans(), schedule=st.sampled_from(["grouped", "per-head"]))
def test_sampled_equals_full_run(batch, kv_heads, group, N, causal, schedule):
    w = Workload.build(batch=batch, heads=kv_heads * group, kv_heads=kv_heads, N=N, d=16, causal=causal, M=4000)
    block = (16, 16)
    got = scale.count(w, block=block, schedule=schedule)
    same(got, scale.full_count(w, block=block, schedule=schedule))
    assert got.io_count() == traffic(w, block[0], schedule)
    units = w.kv_heads_total if schedule == "grouped" else w.query_heads_total
    assert got.programs_total == -(-N // 16) * units
    assert got.method == "full" if got.programs_run == got.programs_total and batch <= 2 and kv_heads <= 2 \
        else got.method.startswith("sampled: ")


def test_sampled_equals_full_run_on_one_small_causal_gqa_shape():
    """The default tier's comparison (the Hypothesis one above is in the slow tier)."""
    w = Workload.build(batch=1, heads=4, kv_heads=2, N=112, d=16, causal=True, M=4000)
    got = scale.count(w, block=(16, 16))
    same(got, scale.full_count(w, block=(16, 16)))
    assert got.method.startswith("sampled: ") and got.programs_run < got.programs_total


def test_sampled_method_names_its_programs_and_json():
    w = Workload.build(batch=3, heads=2, kv_heads=2, N=130, d=16, causal=True, M=4000)
    got = scale.count(w, block=(16, 16), seed=3)
    d = got.as_dict()
    m = d["method"]
    assert m.startswith("sampled: witness batch 2, kv_heads 2 (grids also at (1, 1), (1, 2), (2, 1))")
    assert "unit axes y = 1·batch·kv_heads (extents at the workload extrapolated by that law)" in m
    assert "grid 9×6×1 (witness 9×4×1)" in m and "[0..7] affine (checked on 2, " in m and "[8] run" in m
    assert d["programs_run"] < d["programs_total"] == 9 * 6
    assert d["launches"][0]["kernel"] == "_fa2_fwd" and d["launches"][0]["unit_axes"] == ["y"]
    assert d["tensors"]["lse"]["writes_words"] == 3 * 2 * 130


def test_default_block_and_schedule_are_only_for_the_default_launcher():
    w = Workload.build(N=32, d=16, M=4000)
    with pytest.raises(scale.InvalidParameter, match="block"):
        scale.count(w, launch=scale_kernels.probe(0), block=(16, 16))


# ------------------------------------------------------------------------------------------ attnio's other kernels


@settings(max_examples=5, deadline=None)
@given(batch=st.integers(1, 3), kv_heads=st.integers(1, 3), group=st.sampled_from([1, 2]), Nq=st.integers(1, 90),
       extra=st.integers(0, 40), causal=st.booleans())
def test_fa2_backward_fast_equals_full_run(batch, kv_heads, group, Nq, extra, causal):
    w = Workload.build(batch=batch, heads=kv_heads * group, kv_heads=kv_heads, Nq=Nq, Nkv=Nq + extra, d=16,
                       causal=causal, M=4000)
    launch = scale_kernels.backward(16, 16)
    got = scale.count(w, launch=launch)
    same(got, scale.full_count(w, launch=launch))
    assert got.io_count() == exact_count(batch=batch, heads=w.heads, kv_heads=kv_heads, Nq=Nq, Nkv=w.Nkv, d=16,
                                         dv=16, causal=causal, B_c=16)


def test_fa2_backward_fast_on_one_shape_fits_the_block_axis():
    """Default tier: 7 K/V blocks (> SMALL: fitted) of a causal GQA backward with N_kv > N_q (a diagonal)."""
    w = Workload.build(batch=3, heads=2, kv_heads=1, Nq=70, Nkv=112, d=16, causal=True, M=4000)
    launch = scale_kernels.backward(16, 16)
    got = scale.count(w, launch=launch)
    same(got, scale.full_count(w, launch=launch))
    assert [x["kernel"] for x in got.launches] == ["fa2_bwd_preprocess", "fa2_bwd_main"]
    assert "affine" in got.launches[1]["pieces"] and got.programs_run < got.programs_total
    # K/V block 6 visits 2 query blocks, block 0 all 5: the main launch is fitted from the right
    assert got.launches[1]["pieces"].startswith("found from the right (program T−1 moved fewer words than program 0)")


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), kv_heads=st.integers(1, 2), group=st.sampled_from([1, 2]), N=st.integers(1, 120),
       causal=st.booleans())
def test_square_tiling_fast_equals_full_run(batch, kv_heads, group, N, causal):
    w = Workload.build(batch=batch, heads=kv_heads * group, kv_heads=kv_heads, N=N, d=16, causal=causal, M=4000)
    launch = scale_kernels.square(16)
    same(scale.count(w, launch=launch), scale.full_count(w, launch=launch))


# ------------------------------------------------------------------------------------------ shipped-shape kernels


@settings(max_examples=4, deadline=None)
@given(batch=st.integers(1, 3), kv_heads=st.integers(1, 2), group=st.sampled_from([1, 2]), N=st.integers(1, 120),
       kind=st.sampled_from(["dense", "varlen", "paged", "token_pool", "split"]))
def test_shipped_kernels_fast_equal_full_run(batch, kv_heads, group, N, kind):
    w = Workload.build(batch=batch, heads=kv_heads * group, kv_heads=kv_heads, N=N, d=16, M=4000)
    _shipped_case(w, kind)


def _shipped_case(w: Workload, kind: str) -> scale.ScaledCount:
    kw = {"dense": {"launch": launchers.attention, "args": NAMES}, "varlen": {"launch": launchers.varlen},
          "paged": {"launch": launchers.paged, "page_size": 16}, "token_pool": {"launch": launchers.token_pool,
                                                                               "page_size": 1},
          "split": {"launch": launchers.by_sm_count}}[kind]
    with fake_gpu("cuda", 90, sm_count=10**6):  # by_sm_count splits the keys in two below half the SMs
        got = scale.count(w, **kw)
        same(got, scale.full_count(w, **kw))
    return got


def test_split_kv_and_its_combine_counted_as_two_launches():
    """Default tier: the split-KV launch (grid T_r × heads × 2 splits: a short block axis run in full) and the
    combine, at 3 batches (extrapolated from 2)."""
    w = Workload.build(batch=3, heads=2, kv_heads=1, N=40, d=16, M=4000)
    got = _shipped_case(w, "split")
    assert [x["kernel"] for x in got.launches] == ["_attn", "_combine"]
    assert got.launches[0]["grid"] == [3, 6, 2] and "z=1: " in got.launches[0]["pieces"]


def test_varlen_has_two_unit_axes_and_paged_reads_through_the_identity_table():
    w = Workload.build(batch=3, heads=4, kv_heads=2, N=24, d=16, M=4000)
    got = _shipped_case(w, "varlen")
    assert got.launches[0]["unit_axes"] == ["y", "z"] and got.launches[0]["law"] == "y = 1·batch, z = 2·kv_heads"
    _shipped_case(w, "paged")


def test_two_tensors_sharing_a_name_each_get_their_own_base_shift():
    """The staging kernel's two buffers (Q's copy and K's, both ``_stage.Dst``) are read by GQA heads at
    different offsets (query head h at h, its K/V head at h // 2): offset-only per tensor, not per name; the
    unit check compares heads 0 and 3 of the witness, whose Q-copy and K-copy shifts differ."""
    w = Workload.build(batch=3, heads=4, kv_heads=2, N=40, d=16, M=4000)
    got = scale.count(w, launch=launchers.staged)
    same(got, scale.full_count(w, launch=launchers.staged))
    assert [x["kernel"] for x in got.launches] == ["_stage", "_stage", "_attn"]
    assert got.method.startswith("sampled: ") and "offset-only checked" in got.method


def test_paged_counts_equal_check_s_permuted_pages():
    """The identity block table of scale_inputs moves the words check()'s permuted pages move (the shipped paged
    kernel reads each page through the table)."""
    from attnio.triton.check import check

    w = Workload.build(batch=2, heads=2, kv_heads=1, Nq=5, Nkv=40, d=16, M=4000)
    got = scale.count(w, launch=launchers.paged, page_size=16)
    t = check(launchers.paged, w, page_size=16).traffic
    for f in scale.FIELDS:
        assert getattr(got, f) == {n: x for n, x in getattr(t, f).items()}, f


def test_paged_decode_extrapolated_along_n_kv_equals_full_run():
    w = Workload.build(batch=3, heads=4, kv_heads=2, Nq=1, Nkv=296, d=16, M=10**5)
    got = scale.count(w, launch=launchers.paged, page_size=16, length_step=32)
    same(got, scale.full_count(w, launch=launchers.paged, page_size=16))
    assert got.method.startswith("sampled along N_kv: counted at N_kv = 40, 72, 104")
    assert got.programs_total == 3 * 4 and got.launches[0]["grid"] == [1, 12, 1]


# ------------------------------------------------------------------------------------------ what breaks the laws


@pytest.mark.parametrize(("mode", "match"), [
    (1, r"units 0 and 3\) are not offset-only: q \(r\): 1 vs 2 accesses"),
    (2, "not piecewise affine in at most 6 pieces"),
    (3, "program 2's count is not on the line through programs 0 and 1"),
])
def test_a_kernel_built_to_break_the_laws_raises_mismatch(mode, match):
    w = Workload.build(batch=2, heads=2, kv_heads=2, N=16 * 40, d=16, M=4000)
    with pytest.raises(scale.Mismatch, match=match):
        scale.count(w, launch=scale_kernels.probe(mode))


def test_the_probe_kernel_without_extra_loads_is_counted():
    """The control for the test above: MODE 0 satisfies the laws and equals its full run."""
    w = Workload.build(batch=2, heads=2, kv_heads=2, N=16 * 40, d=16, M=4000)
    launch = scale_kernels.probe(0)
    got = scale.count(w, launch=launch)
    same(got, scale.full_count(w, launch=launch))
    assert got.launches[0]["pieces"].startswith("[0..39] affine")


def test_shift_check_rejects_what_is_not_a_base_shift():
    h, g = b"a" * 16, b"b" * 16
    a = {("k", "r"): [(0, 3, h), (64, 3, h)]}
    assert shift_equal(a, {("k", "r"): [(100, 3, h), (164, 3, h)]}) is None
    assert "base shift" in shift_equal(a, {("k", "r"): [(100, 3, h), (172, 3, h)]})
    assert "base shift" in shift_equal(a, {("k", "r"): [(100, 3, h), (164, 3, g)]})
    assert "lanes" in shift_equal(a, {("k", "r"): [(100, 3, h), (164, 2, h)]})
    assert "accesses" in shift_equal(a, {("k", "r"): [(100, 3, h)]})
    assert "tensors" in shift_equal(a, {("v", "r"): [(0, 3, h), (64, 3, h)]})


def test_grid_law_extrapolates_proportional_extents_and_refuses_others():
    g = {(1, 1): [("f", (4, 3, 1))], (2, 1): [("f", (4, 6, 1))], (1, 2): [("f", (4, 6, 1))],
         (2, 2): [("f", (4, 12, 1))]}
    law = grid_law(g, batch=8, kv_heads=5)[0]
    assert law["extent"] == (4, 3 * 8 * 5, 1) and law["units"] == [1] and law["law"] == "y = 3·batch·kv_heads"
    with pytest.raises(scale.Mismatch, match="not proportional to the batch"):
        grid_law(g | {(2, 1): [("f", (4, 7, 1))]}, batch=8, kv_heads=5)
    with pytest.raises(scale.Mismatch, match="not 12 as at the other witnesses"):
        grid_law(g | {(2, 2): [("f", (4, 13, 1))]}, batch=8, kv_heads=5)
    with pytest.raises(scale.Mismatch, match="launches"):
        grid_law(g | {(2, 2): [("f", (4, 12, 1)), ("c", (1, 1, 1))]}, batch=8, kv_heads=5)


@settings(max_examples=40, deadline=None)
@given(T=st.integers(4, 40), a=st.integers(0, 10**4), b=st.integers(-100, 100), first=st.integers(0, 10**5),
       last=st.integers(0, 10**5), seed=st.integers(0, 3))
def test_fit_axis_sums_an_affine_axis_with_exceptional_ends_from_the_cheaper_end(T, a, b, first, last, seed):
    """Programs 1..T−2 on a line, programs 0 and T−1 anything: the fit equals the sum whichever end is cheaper,
    asks each program once, and says when it went from the right. Excluded: an exceptional end whose line with
    its neighbour happens to pass through a program of the other end (the fit then checks that line and
    raises, rightly: it cannot tell)."""
    from hypothesis import assume

    def c(i: int) -> int:
        return first if i == 0 else last if i == T - 1 else a + b * i

    def collinear(i: int, j: int, k: int) -> bool:
        return (c(j) - c(i)) * (k - i) == (c(k) - c(i)) * (j - i)

    assume(not (first != a and any(collinear(0, 1, k) for k in (T - 2, T - 1))))
    assume(not (last != a + b * (T - 1) and any(collinear(T - 1, T - 2, k) for k in (0, 1))))
    asked: list[int] = []

    def run(idx: list[int]) -> dict[int, Counts]:
        asked.extend(idx)
        return {i: Counts({"k": (0, 0, c(i), 0)}) for i in idx}

    total, pieces = fit_axis(T, run, verify=1, seed=seed)
    assert total == Counts({"k": (0, 0, sum(c(i) for i in range(T)), 0)})
    assert len(asked) == len(set(asked))
    assert pieces.startswith("found from the right") == (last < first)


def test_counts_arithmetic_ignores_zero_entries():
    a = Counts({"q": (4, 0, 1, 0)})
    assert a * 3 - a == Counts({"q": (8, 0, 2, 0), "k": (0, 0, 0, 0)})


# ------------------------------------------------------------------------------------------ the CLI


def test_cli_fast_prints_the_method_in_json_and_refuses_other_targets(capsys):
    import json

    from attnio.cli import main

    target = "attnio.triton.kernels.fa2_fwd:fa2_forward"
    argv = ["kernel", target, "--N", "112", "--d", "16", "--heads", "2", "--causal", "--M", "4000", "--fast",
            "--block", "16x16", "--json"]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    w = Workload.build(heads=2, N=112, d=16, causal=True, M=4000)
    assert d["method"].startswith("sampled: ")
    assert sum(t["reads_words"] for t in d["tensors"].values()) == traffic(w, 16).reads_words
    assert main([*argv[:-3], "--block", "16by16"]) == 2


def test_cli_fast_counts_a_paged_decode_along_n_kv(capsys):
    import json
    from pathlib import Path

    from attnio.cli import main

    target = f"{Path(__file__).resolve().parent / 'kernels_shipped' / 'launchers.py'}:paged"
    argv = ["kernel", target, "--Nq", "1", "--Nkv", "296", "--d", "16", "--batch", "3", "--heads", "2",
            "--kv-heads", "1", "--page-size", "16", "--fast", "--length-step", "32", "--json"]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["method"].startswith("sampled along N_kv: counted at N_kv = 40, 72, 104")
    # per program: q 16 words (one row), 19 block-table words, 1 seq_lens word, 296 K and V rows of 16
    assert sum(t["reads_words"] for t in d["tensors"].values()) == 6 * (16 + 19 + 1 + 2 * 296 * 16)


def test_cli_counts_a_shape_too_large_for_a_full_run_fast_or_refuses_in_one_line(capsys):
    from pathlib import Path

    from attnio.cli import main

    file = Path(__file__).resolve().parent / "scale_kernels.py"
    big = ["--N", "4096", "--d", "16", "--batch", "64", "--heads", "32"]
    assert main(["kernel", f"{file}:probe_plain", *big]) == 0
    out, _ = capsys.readouterr()
    assert out.startswith("method: sampled: ") and f"total: {2 * 4 * 64 * 32 * 4096 * 16} B" in out
    assert main(["kernel", f"{file}:probe_last_unit_reads_more", *big]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "shape too large for a full run (" in err and "no faster method: launch 0 (_probe)" in err
    assert "not offset-only" in err
