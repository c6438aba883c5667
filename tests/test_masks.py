"""Masks as data (bounds/masks.py): closed-form pair counts and block masks against the dense predicate, z3 on
small cases, bad input."""

from __future__ import annotations

import time

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from attnio.bounds.masks import (
    EMPTY,
    FULL,
    LOADS,
    PARTIAL,
    And,
    BlockSparse,
    Causal,
    Document,
    MaskMod,
    Or,
    PrefixLM,
    SlidingWindow,
)
from attnio.core.errors import InvalidParameter


@st.composite
def masks(draw, Nq: int, Nkv: int):
    kind = draw(st.sampled_from(["causal", "window", "prefix", "document", "sparse", "mod", "and", "or"]))
    if kind == "causal":
        return Causal()
    if kind == "window":
        return SlidingWindow(draw(st.integers(-1, Nkv + 1)), draw(st.integers(-1, Nkv + 1)))
    if kind == "prefix":
        return PrefixLM(draw(st.integers(0, Nkv + 2)))
    if kind == "document":
        if Nq != Nkv:
            return Causal()
        cuts = sorted(draw(st.sets(st.integers(1, Nq - 1), max_size=4))) if Nq > 1 else []
        return Document([0, *cuts, Nq])
    if kind == "sparse":
        bq, bk = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        shape = (-(-Nq // bq), -(-Nkv // bk))
        lay = np.array(draw(st.lists(st.booleans(), min_size=shape[0] * shape[1], max_size=shape[0] * shape[1]))).reshape(shape)
        return BlockSparse(lay.astype(bool), bq, bk)
    if kind == "mod":
        m = draw(st.integers(1, 3))
        return MaskMod(lambda b, h, q, k: (q + k) % m == 0)
    a, b = draw(masks(Nq, Nkv)), draw(masks(Nq, Nkv))
    return a & b if kind == "and" else a | b


@st.composite
def cases(draw):
    Nq = draw(st.integers(1, 12))
    Nkv = draw(st.integers(1, 12))
    return Nq, Nkv, draw(masks(Nq, Nkv)), draw(st.integers(1, 5)), draw(st.integers(1, 5))


def _brute_blocks(dense: np.ndarray, B_r: int, B_c: int, load: str = "span") -> tuple[np.ndarray, np.ndarray]:
    Nq, Nkv = dense.shape
    Tr, Tc = -(-Nq // B_r), -(-Nkv // B_c)
    kinds, span, start = np.zeros((Tr, Tc), int), np.zeros((Tr, Tc), int), np.zeros((Tr, Tc), int)
    for i in range(Tr):
        for j in range(Tc):
            t = dense[i * B_r:(i + 1) * B_r, j * B_c:(j + 1) * B_c]
            cols = np.flatnonzero(t.any(axis=0))
            kinds[i, j] = FULL if t.all() else PARTIAL if t.any() else EMPTY
            if load == "tile":  # the whole tile: its columns, the last one cut at N_kv
                cols = np.arange(t.shape[1]) if cols.size else cols
            span[i, j] = cols[-1] - cols[0] + 1 if cols.size else 0
            start[i, j] = j * B_c + cols[0] if cols.size else 0
    return kinds, span, start


@pytest.mark.parametrize("load", LOADS)
@settings(deadline=None)
@given(cases())
def test_pairs_and_block_mask_equal_the_dense_predicate(load, case):
    Nq, Nkv, mask, B_r, B_c = case
    dense = mask.dense(Nq, Nkv)
    assert mask.pairs(Nq, Nkv) == int(dense.sum())
    kinds, span, start = _brute_blocks(dense, B_r, B_c, load)
    bm = mask.blocks(Nq, Nkv, B_r, B_c, load)
    assert bm.kinds.tolist() == kinds.tolist()
    assert bm.span.tolist() == span.tolist()
    assert bm.start.tolist() == start.tolist()


@pytest.mark.parametrize("load", LOADS)
@given(cases())
def test_block_rows_walk_the_block_mask_one_q_block_at_a_time(load, case):
    """The O(N_q) block rows (interval masks: no T_r × T_c array) give the same tiles, active blocks and loaded
    K/V rows as the full block mask, which the test above pins to the dense predicate, under either load."""
    Nq, Nkv, mask, B_r, B_c = case
    bm, br = mask.blocks(Nq, Nkv, B_r, B_c, load), mask.block_rows(Nq, Nkv, B_r, B_c, load)
    assert br.active.tolist() == bm.active.tolist()
    assert br.kv_rows == bm.kv_rows
    for i in range(bm.kinds.shape[0]):
        j0, kinds, start, span = br.row(i)
        n = len(kinds)
        outside = np.r_[bm.kinds[i, :j0], bm.kinds[i, j0 + n:]]
        assert (outside == EMPTY).all()
        assert kinds.tolist() == bm.kinds[i, j0:j0 + n].tolist()
        assert start.tolist() == bm.start[i, j0:j0 + n].tolist()
        assert span.tolist() == bm.span[i, j0:j0 + n].tolist()


def test_closed_forms_are_the_familiar_counts():
    assert Causal().pairs(8, 8) == 36 and Causal().pairs(3, 8) == 3 * 8 - 3  # N_q·N_kv − N_q(N_q − 1)/2
    assert SlidingWindow(-1, -1).pairs(5, 7) == 35
    assert Document([0, 3, 7]).pairs(7, 7) == 9 + 16
    assert (Document([0, 3, 7]) & Causal()).pairs(7, 7) == 6 + 10
    assert PrefixLM(3).pairs(6, 6) == 3 * 3 + 4 + 5 + 6


class _Z3Ops:
    """z3 terms for the closed forms of bounds/masks.py (the same code that computes them)."""

    def __init__(self, z3):
        self.z3 = z3

    def max(self, a, b):
        return self.z3.If(a >= b, a, b)

    def min(self, a, b):
        return self.z3.If(a <= b, a, b)

    def ite(self, c, a, b):
        return self.z3.If(c, a, b)

    def half(self, x):
        return x / 2  # z3 integer division; the products halved are even


@pytest.mark.parametrize("family", ["window", "prefix"])
def test_closed_forms_proved_by_z3_against_the_definition_on_all_small_cases(family):
    """For every N_q, N_kv ≤ 6, z3 proves, for every window −1 … 8 (prefix 0 … 8) at once, the closed form (the
    same Python function, run on z3 terms) equal to the definition's pair count, a double sum of the
    predicate: unsat of their difference; a planted wrong form is refuted."""
    z3 = pytest.importorskip("z3")
    from attnio.bounds.masks import prefix_pairs, window_pairs

    n, ops = 6, _Z3Ops(z3)
    L, R = z3.Ints("L R")
    for Nq in range(1, n + 1):
        for Nkv in range(1, n + 1):
            def inside(i: int, j: int, Nq: int = Nq, Nkv: int = Nkv):
                c = i + Nkv - Nq
                if family == "window":
                    return z3.And(z3.Or(L == -1, j >= c - L), z3.Or(R == -1, j <= c + R))
                return z3.Or(j < L, j <= c)

            definition = z3.Sum([z3.If(inside(i, j), 1, 0) for i in range(Nq) for j in range(Nkv)])
            closed = window_pairs(Nq, Nkv, L, R, ops) if family == "window" else prefix_pairs(Nq, Nkv, L, ops)
            dom = [L >= (-1 if family == "window" else 0), L <= 8, R >= -1, R <= 8]
            s = z3.Solver()
            s.add(*dom, definition != closed)
            assert s.check() == z3.unsat, (Nq, Nkv, s.model())
    s = z3.Solver()  # a deliberately wrong form is refuted
    s.add(L >= 0, L <= 8, R >= -1, R <= 8, z3.Sum([z3.If(z3.Or(j < L, j <= i), 1, 0) for i in range(3) for j in range(3)])
          != prefix_pairs(3, 3, L, ops) + z3.If(L == 2, 1, 0))
    assert s.check() == z3.sat


def test_named_family_block_mask_at_two_to_the_17_counts_its_tiles_in_closed_form_time_printed_only():
    t0 = time.perf_counter()
    bm = SlidingWindow(4096, 0).blocks(1 << 17, 1 << 17, 128, 128)
    elapsed = time.perf_counter() - t0
    assert bm.counts["full"] + bm.counts["partial"] + bm.counts["empty"] == 1024 * 1024
    assert bm.counts["partial"] == 1024 + (1024 - 32)  # the diagonal tiles, and the left edge once the window (32 tiles) starts
    print(f"block mask at N = 2^17: {elapsed:.3f} s")  # measured, not asserted (benchmarks/bench_masks.py)


@pytest.mark.parametrize(
    "make, name",
    [(lambda: SlidingWindow(-2, 0), "window_left"), (lambda: SlidingWindow(0, -5), "window_right"),
     (lambda: Document([0, 3, 3, 5]), "cu_seqlens"), (lambda: Document([1, 5]), "cu_seqlens"),
     (lambda: PrefixLM(-1), "prefix"), (lambda: MaskMod(lambda q, k: q >= k), "mask_mod"),
     (lambda: MaskMod(42), "mask_mod"), (lambda: BlockSparse(np.ones((2, 2)), 2, 2), "layout"),
     (lambda: Document([0, 1.5, 3]), "cu_seqlens"), (lambda: Document(["0", "2"]), "cu_seqlens"),
     (lambda: Document(5), "cu_seqlens"), (lambda: SlidingWindow(1.5, 0), "window_left"),
     (lambda: BlockSparse(np.ones((2, 2), dtype=bool), 1.5, 2), "block_q"),
     (lambda: And(Causal(), 3), "mask"), (lambda: Or(3, Causal()), "mask")],
)
def test_bad_masks_name_the_parameter(make, name):
    with pytest.raises(InvalidParameter, match=name):
        make()


@pytest.mark.parametrize("call, name", [(lambda: Causal().pairs(0, 3), "Nq"), (lambda: Causal().blocks(-1, 3, 1, 1), "Nq"),
                                        (lambda: Causal().pairs(2.5, 3), "Nq"), (lambda: PrefixLM(2).dense(3, 0), "Nkv"),
                                        (lambda: SlidingWindow(1, 1).kv_block_rows(3, 0, 1), "Nkv"),
                                        (lambda: Causal().kv_block_rows(8, 8, 0), "B_c"),  # was a ZeroDivisionError
                                        (lambda: MaskMod(lambda b, h, q, k: q >= k).kv_block_range(8, 8, -2), "B_c")])
def test_sizes_below_one_name_the_parameter(call, name):
    with pytest.raises(InvalidParameter, match=name):
        call()


def test_integral_floats_are_stored_as_integers():
    """check_int accepts 2.0 as 2: the mask must then hold the int, not index with a float."""
    assert SlidingWindow(2.0, 0) == SlidingWindow(2, 0) and type(SlidingWindow(2.0, 0).pairs(5, 5)) is int
    lay = np.array([[True, False], [False, True]])
    assert BlockSparse(lay, 2.0, 2).dense(4, 4).tolist() == BlockSparse(lay, 2, 2).dense(4, 4).tolist()
    assert Document([0.0, 2.0, 3.0]).cu_seqlens == (0, 2, 3) and PrefixLM(2.0).prefix == 2


@pytest.mark.parametrize("mask", [Causal(), SlidingWindow(2, 1), Document([0, 3, 8]), PrefixLM(3),
                                  MaskMod(lambda b, h, q, k: q >= k), BlockSparse(np.eye(4, dtype=bool), 2, 2)])
def test_integral_float_sizes_are_used_as_integers(mask):
    """N_q = 8.0 passes check_int as 8: every derived figure must then be the int one (floats gave P = 36.0, block
    masks ended in 'arrays used as indices must be of integer type', mask_mod ones in a TypeError)."""
    P = mask.pairs(8.0, 8.0)
    assert P == mask.pairs(8, 8) and type(P) is int
    assert mask.blocks(8.0, 8.0, 2.0, 3.0).kinds.tolist() == mask.blocks(8, 8, 2, 3).kinds.tolist()
    rows = mask.kv_block_rows(8.0, 8.0, 3.0)
    assert rows.tolist() == mask.kv_block_rows(8, 8, 3).tolist() and rows.dtype.kind == "i"
    assert mask.dense(8.0, 8.0).tolist() == mask.dense(8, 8).tolist()


@pytest.mark.parametrize("huge, same", [
    (SlidingWindow(0, 2**63 - 1), SlidingWindow(0, -1)), (SlidingWindow(2**63 - 1, 0), Causal()),
    (SlidingWindow(2**70, 2**70), SlidingWindow(-1, -1)), (SlidingWindow(-1, 2**63 - 8), SlidingWindow(-1, -1)),
    (PrefixLM(2**70), SlidingWindow(-1, -1)), (PrefixLM(2**63 - 1), SlidingWindow(-1, -1)),
    (BlockSparse(np.ones((1, 1), dtype=bool), 2**70, 2**63 - 1), SlidingWindow(-1, -1)),
    (SlidingWindow(2**70, 0) | PrefixLM(3), PrefixLM(3))])
def test_parameters_wider_than_the_problem_mean_unbounded_without_overflow(huge, same):
    """A window, prefix or block wider than the N_q × N_kv problem is valid and means "every key on that side":
    no int64 overflow (an OverflowError, or a window that silently wraps around to a wrong mask)."""
    for Nq, Nkv in ((8, 8), (3, 8)):
        want = same.dense(Nq, Nkv)
        assert huge.dense(Nq, Nkv).tolist() == want.tolist()
        assert huge.pairs(Nq, Nkv) == int(want.sum())
        assert huge.blocks(Nq, Nkv, 2, 3).kinds.tolist() == same.blocks(Nq, Nkv, 2, 3).kinds.tolist()
        assert huge.kv_block_rows(Nq, Nkv, 3).tolist() == same.kv_block_rows(Nq, Nkv, 3).tolist()


def test_document_must_end_at_N():
    with pytest.raises(InvalidParameter, match="cu_seqlens"):
        Document([0, 3, 5]).pairs(6, 6)


@pytest.mark.parametrize("fn", [lambda b, h, q, k: (q + k) % 2, lambda b, h, q, k: int(q >= k),
                                lambda b, h, q, k: "yes"])
def test_mask_mod_returning_non_booleans_is_refused(fn):
    """(q + k) % 2 is an int, not a predicate: read as truthy it would silently flip the mask's meaning."""
    with pytest.raises(InvalidParameter, match="mask_mod"):
        MaskMod(fn).dense(3, 3)


def test_constant_mask_mod_broadcasts():
    assert MaskMod(lambda b, h, q, k: True).pairs(3, 4) == 12


def test_mask_mod_depending_on_one_index_is_broadcast_not_evaluated_pair_by_pair():
    """k < 3 returns a (1, N_kv) array: it broadcasts to the tile, so one vectorised call suffices (it used to fall
    back to one Python call per pair, N_q·N_kv calls)."""
    calls = []

    def keys_below_3(b, h, q, k):
        calls.append(1)
        return k < 3

    m = MaskMod(keys_below_3)
    assert m.dense(5, 6).tolist() == [[j < 3 for j in range(6)] for _ in range(5)]
    assert len(calls) == 1
    assert MaskMod(lambda b, h, q, k: q % 2 == 0).pairs(4, 5) == 2 * 5


def test_scalar_mask_mod_is_evaluated_pair_by_pair():
    m = MaskMod(lambda b, h, q, k: bool(q >= k))  # not vectorised: bool() of an array raises, so it is called per pair
    assert m.pairs(4, 4) == 10


@st.composite
def workloads_and_masks(draw):
    from attnio.core.workload import Workload

    kv, g = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    Nkv = draw(st.integers(1, 24))
    Nq = draw(st.integers(1, Nkv))
    d = draw(st.integers(1, 4))
    dv = draw(st.sampled_from([d, draw(st.integers(1, 4))]))
    w = Workload.build(batch=draw(st.integers(1, 2)), heads=g * kv, kv_heads=kv, Nq=Nq, Nkv=Nkv, d=d, dv=dv,
                       M=draw(st.integers(2 * d + 2 * dv + 8, 400)))
    return w, draw(masks(Nq, Nkv))


def _causal_case(case, tiling_fn, algorithm: str, schedule: str):
    """The drawn workload made causal and its schedule's tiling (examples below its least M are discarded)."""
    from dataclasses import replace

    w = replace(case[0], causal=True)
    try:
        return w, tiling_fn(algorithm, w, schedule)
    except InvalidParameter:
        assume(False)  # M below the schedule's least working set


@settings(deadline=None)
@given(workloads_and_masks(), st.sampled_from(["per-head", "grouped"]))
def test_causal_mask_reproduces_the_causal_workload_formula(case, schedule):
    """The block-mask formula with the Causal mask equals attnio's causal flash2 workload formula exactly."""
    from attnio.algorithms.workloads import tiling
    from attnio.bounds.costs import workload_cost
    from attnio.bounds.masks import flash2_masked_words

    w, t = _causal_case(case, tiling, "flash2", schedule)
    c = workload_cost("flash2", w, schedule)
    assert flash2_masked_words(w, Causal(), t.B_r, t.B_c, grouped=schedule == "grouped") == (c.reads_words, c.writes_words)


@settings(deadline=None)
@given(workloads_and_masks(), st.sampled_from(["per-head", "grouped"]))
def test_causal_mask_reproduces_the_causal_workload_backward_formula(case, schedule):
    """The same for the backward: the visited-rows formula with Causal() equals the causal flash2-bwd formula."""
    from attnio.algorithms.workloads_bwd import bwd_tiling
    from attnio.bounds.costs import workload_backward_cost
    from attnio.bounds.masks import flash2_bwd_masked_words

    w, t = _causal_case(case, bwd_tiling, "flash2-bwd", schedule)
    c = workload_backward_cost("flash2-bwd", w, schedule)
    assert flash2_bwd_masked_words(w, Causal(), t.B_c, grouped=schedule == "grouped") == (c.reads_words, c.writes_words)


@settings(deadline=None)
@given(cases())
def test_kv_block_rows_equal_the_dense_predicate(case):
    Nq, Nkv, mask, _, B_c = case
    dense = mask.dense(Nq, Nkv)
    want = []
    for j in range(-(-Nkv // B_c)):
        rows = np.flatnonzero(dense[:, j * B_c:(j + 1) * B_c].any(axis=1))
        want.append(rows[-1] - rows[0] + 1 if rows.size else 0)
    assert mask.kv_block_rows(Nq, Nkv, B_c).tolist() == want


@settings(deadline=None)
@given(workloads_and_masks(), st.integers(1, 6), st.integers(1, 6), st.booleans())
def test_masked_lower_bounds_never_exceed_the_masked_flash2_count(case, B_r, B_c, grouped):
    from attnio.bounds.masks import flash2_masked_words, masked_lower_bound, trivial_masked_words

    w, mask = case
    reads, writes = flash2_masked_words(w, mask, B_r, B_c, grouped=grouped)
    _, lb = masked_lower_bound(w, mask)
    assert trivial_masked_words(w, mask) <= lb <= reads + writes
    # whole-tile loads read at least the spans; a document mask tiled per sequence (varlen) is still a schedule
    tile = flash2_masked_words(w, mask, B_r, B_c, grouped=grouped, load="tile")
    assert reads <= tile[0] and writes == tile[1]
    if isinstance(mask, Document):
        varlen = flash2_masked_words(w, mask, B_r, B_c, grouped=grouped, load="tile", documents="varlen")
        assert lb <= sum(varlen)


def test_masked_trivial_bound_is_the_causal_trivial_bound_at_delta_zero():
    from attnio.bounds.masks import trivial_masked_words
    from attnio.bounds.workloads import trivial_words
    from attnio.core.workload import Workload

    for n in (2, 5, 64):
        w = Workload.build(heads=4, kv_heads=2, N=n, d=8, M=4096, causal=True)
        assert trivial_masked_words(w, Causal()) == trivial_words(w)
