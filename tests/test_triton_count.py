"""attnio.triton.count_traffic on tiny hand-written Triton kernels, each count derived by hand (Triton's
interpreter on the CPU; skipped without triton and torch)."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest
from triton_env import import_triton

torch, triton = import_triton()
import triton.language as tl  # noqa: E402

import attnio.triton as at  # noqa: E402
from attnio.core.counts import IOCount  # noqa: E402
from attnio.core.errors import InvalidParameter, Unsupported  # noqa: E402

# the atomic kernels are the self-test's own (attnio.triton.selftest runs them under the hooks too)
from attnio.triton.selftest_kernels import add_kernel as atomic_add_kernel  # noqa: E402
from attnio.triton.selftest_kernels import cas_kernel  # noqa: E402


@triton.jit
def add_kernel(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def reread_kernel(x_ptr, out_ptr, n, REPEAT: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    m = offs < n
    acc = tl.zeros([BLOCK], tl.float32)
    for _ in range(REPEAT):
        acc += tl.load(x_ptr + offs, mask=m)
    tl.store(out_ptr + offs, acc, mask=m)


@triton.jit
def strided_kernel(x_ptr, out_ptr, rows, cols, stride_r, stride_c, BR: tl.constexpr, BC: tl.constexpr):
    r = tl.arange(0, BR)[:, None]
    c = tl.arange(0, BC)[None, :]
    m = (r < rows) & (c < cols)
    x = tl.load(x_ptr + r * stride_r + c * stride_c, mask=m)
    tl.store(out_ptr + r * cols + c, x, mask=m)


@triton.jit
def raw_pointer_kernel(addr, out_ptr, BLOCK: tl.constexpr):
    p = addr.to(tl.pointer_type(tl.float32))
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(p + offs))


def test_masked_vector_add_counts_active_lanes_and_two_launches_accumulate():
    n, block = 10, 4  # grid 3 -> 12 lanes, 10 active
    x, y, o = torch.arange(float(n)), torch.ones(n), torch.empty(n)
    with at.count_traffic(x=x, y=y, o=o) as t:
        add_kernel[(3,)](x, y, o, n, BLOCK=block)
        add_kernel[(3,)](x, y, o, n, BLOCK=block)
    assert torch.equal(o, x + y)
    assert t.reads_words == {"x": 2 * n, "y": 2 * n, "o": 0}
    assert t.writes_words == {"x": 0, "y": 0, "o": 2 * n}
    assert t.reads_bytes["x"] == 2 * n * 4 and t.writes_bytes["o"] == 2 * n * 4
    assert t.touched == {"x": n, "y": n, "o": n}
    assert t.total_bytes == 3 * 2 * n * 4 and t.unattributed_bytes == 0
    assert t.launches == ["add_kernel", "add_kernel"]
    assert t.per_launch["add_kernel"].reads_words == t.reads_words
    assert t.io_count() == IOCount(4 * n, 2 * n) and t.io_count("o") == IOCount(0, 2 * n)
    with pytest.raises(InvalidParameter, match="tensor='nope'"):
        t.io_count("nope")
    with pytest.raises(KeyError, match=r"tensor='nope' is invalid: valid range is one of the counted tensors \['o', 'x', 'y'\]"):
        t.reads_bytes["nope"]  # a missing named tensor: an InvalidParameter that is also a KeyError
    assert t.writes_words.get("nope") is None


def test_large_contiguous_tensors_kept_as_ranges_count_the_same(monkeypatch):
    from attnio.triton import count as count_mod

    n = 10
    x, y, o = torch.arange(float(n)), torch.ones(n), torch.empty(n)
    results = []
    for limit in (1 << 22, 4):  # element tables, then dense ranges (every tensor above the limit)
        monkeypatch.setattr(count_mod, "TABLE_LIMIT", limit)
        with at.count_traffic(x=x, y=y, o=o) as t:
            add_kernel[(3,)](x, y, o, n, BLOCK=4)
        results.append((t.reads_words, t.writes_words, t.touched))
        with pytest.raises(at.OutOfBounds, match=r"tensor 'x' at element offset 10 \(valid offsets 0..9\)"):
            with at.count_traffic(x=x, y=y, o=o):
                add_kernel[(1,)](x, y, o, 16, BLOCK=16)
    assert results[0] == results[1] == ({"x": n, "y": n, "o": 0}, {"x": 0, "y": 0, "o": n}, {"x": n, "y": n, "o": n})


def test_rereads_count_again_and_fp16_bytes_are_two_per_word():
    n, repeat = 6, 3
    x, o = torch.ones(n, dtype=torch.float16), torch.empty(n, dtype=torch.float32)
    with at.count_traffic(x=x, o=o) as t:
        reread_kernel[(1,)](x, o, n, REPEAT=repeat, BLOCK=8)
    assert t.reads_words["x"] == repeat * n and t.reads_bytes["x"] == 2 * repeat * n
    assert t.touched["x"] == n
    assert t.writes_bytes["o"] == 4 * n


def test_strided_view_and_views_sharing_storage_are_told_apart():
    # q and k are interleaved views of one qkv tensor: their address ranges overlap, their elements do not.
    rows, cols = 5, 3
    qkv = torch.randn(rows, 3, cols)
    q, k = qkv[:, 0], qkv[:, 1]
    o = torch.empty(rows, cols)
    with at.count_traffic(q=q, k=k, qkv=qkv, o=o) as t:
        strided_kernel[(1,)](k, o, rows, cols, k.stride(0), k.stride(1), BR=8, BC=4)
    assert torch.equal(o, k)
    # not q, not qkv: the smallest named tensor holding the element (every named tensor is reported)
    assert t.reads_words == {"q": 0, "k": rows * cols, "qkv": 0, "o": 0}
    assert t.touched["k"] == rows * cols
    # a transposed (column-major) read of a named tensor
    x = torch.randn(cols, rows).t()
    with at.count_traffic(x=x) as t:
        strided_kernel[(1,)](x, o, rows, cols, x.stride(0), x.stride(1), BR=8, BC=4)
    assert torch.equal(o, x) and t.reads_words["x"] == rows * cols
    assert t.writes_words == {"x": 0, "strided_kernel.out_ptr": rows * cols}  # an unnamed argument


def test_atomic_rmw_is_one_read_and_one_write_per_active_lane():
    n = 10
    x, acc = torch.ones(n), torch.zeros(4)
    with at.count_traffic(x=x, acc=acc) as t:
        atomic_add_kernel[(1,)](x, acc, n, BLOCK=16)
    assert acc.tolist() == [3.0, 3.0, 2.0, 2.0]
    assert t.reads_words["acc"] == n and t.writes_words["acc"] == n and t.touched["acc"] == 4


def test_cas_writes_only_where_it_succeeds():
    lock = torch.tensor([0, 1, 0, 1, 0, 1, 0, 0], dtype=torch.int32)
    with at.count_traffic(lock=lock) as t:
        cas_kernel[(1,)](lock, BLOCK=8)
    assert lock.tolist() == [1] * 8
    assert t.reads_words["lock"] == 8 and t.writes_words["lock"] == 5


@pytest.mark.skipif(not hasattr(tl, "make_tensor_descriptor"), reason="this Triton has no tensor descriptors")
def test_tensor_descriptor_load_counts_only_in_bounds_rows():
    @triton.jit
    def desc_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        d = tl.make_tensor_descriptor(x_ptr, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        pid = tl.program_id(0)
        b = d.load([pid * BM, 0])
        r = pid * BM + tl.arange(0, BM)[:, None]
        tl.store(out_ptr + r * BN + tl.arange(0, BN)[None, :], b, mask=r < M)

    M, N = 10, 16  # rows of 64 bytes (descriptor strides must be 16-byte aligned)
    x, o = torch.arange(float(M * N)).reshape(M, N), torch.empty(M, N)
    with at.count_traffic(x=x, o=o) as t:
        desc_kernel[(3,)](x, o, M, N, BM=4, BN=N)  # 12 rows addressed, 10 in bounds
    assert torch.equal(o, x) and t.reads_words["x"] == M * N and t.writes_words["o"] == M * N


@pytest.mark.skipif(
    "have been removed" in (getattr(tl, "make_block_ptr", None).__doc__ or "have been removed"),
    reason="this Triton has no block pointers (removed in 3.9)",
)
def test_block_pointer_load_counts_only_in_bounds_lanes():
    @triton.jit
    def bp_kernel(x_ptr, out_ptr, M, N, BM: tl.constexpr, BN: tl.constexpr):
        pid = tl.program_id(0)
        p = tl.make_block_ptr(x_ptr, shape=(M, N), strides=(N, 1), offsets=(pid * BM, 0), block_shape=(BM, BN),
                              order=(1, 0))
        b = tl.load(p, boundary_check=(0, 1))
        r = pid * BM + tl.arange(0, BM)[:, None]
        c = tl.arange(0, BN)[None, :]
        tl.store(out_ptr + r * N + c, b, mask=(r < M) & (c < N))

    M, N = 10, 3
    x, o = torch.arange(float(M * N)).reshape(M, N), torch.empty(M, N)
    with at.count_traffic(x=x, o=o) as t:
        bp_kernel[(3,)](x, o, M, N, BM=4, BN=4)
    assert torch.equal(o, x) and t.reads_words["x"] == M * N and t.writes_words["o"] == M * N


def test_unattributed_pointer_is_counted_not_dropped_and_strict_mode_faults():
    hidden, o = torch.arange(8.0), torch.empty(8)
    with at.count_traffic(o=o, strict=False) as t:
        raw_pointer_kernel[(1,)](hidden.data_ptr(), o, BLOCK=8)
    assert torch.equal(o, hidden)
    assert t.reads_words == {"o": 0, at.UNATTRIBUTED: 8} and t.unattributed_bytes == 32 and t.total_bytes == 64
    with pytest.raises(at.OutOfBounds, match="kernel 'raw_pointer_kernel'"):
        with at.count_traffic(o=o):
            raw_pointer_kernel[(1,)](hidden.data_ptr(), o, BLOCK=8)


def test_unmasked_out_of_bounds_read_names_the_tensor_and_offset():
    x, y, o = torch.zeros(10), torch.zeros(10), torch.zeros(10)
    with pytest.raises(at.OutOfBounds, match=r"tensor 'x' at element offset 10 \(valid offsets 0..9\)"):
        with at.count_traffic(x=x, y=y, o=o):
            add_kernel[(1,)](x, y, o, 16, BLOCK=16)  # the mask lets lanes 10..15 through


def test_bad_inputs_are_named():
    with pytest.raises(InvalidParameter, match="x="):
        with at.count_traffic(x=[1, 2]):
            pass
    meta = torch.zeros(4, device="meta")
    with pytest.raises(InvalidParameter, match="a CPU tensor"):
        with at.count_traffic(x=meta):
            pass


def test_untested_version_and_late_interpret_are_clear_errors(monkeypatch):
    from attnio.triton import count as count_mod

    monkeypatch.setattr(count_mod, "_ACCEPTED", {})
    monkeypatch.setattr(triton, "__version__", "0.0.1")
    monkeypatch.setenv("ATTNIO_REQUIRE_TRITON", "1")
    with pytest.raises(Unsupported, match=r"Triton 0\.0\.1 is untested \(tested versions are .*ATTNIO_REQUIRE_TRITON=1"):
        with at.count_traffic():
            pass
    monkeypatch.undo()
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    gpu_kernel = triton.jit(add_kernel.fn)  # decorated while TRITON_INTERPRET is off: a GPU kernel
    with pytest.raises(at.TritonSetupError, match="TRITON_INTERPRET=1 is not set"):
        with at.count_traffic():
            pass
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    x = torch.zeros(4)
    with pytest.raises(at.TritonSetupError, match="must be set before the module that defines it"):
        with at.count_traffic(x=x):
            gpu_kernel[(1,)](x, x, x, 4, BLOCK=4)


def test_autotuned_kernel_must_be_pinned_and_pinned_counts_are_deterministic():
    tuned = triton.autotune(
        configs=[triton.Config({"BLOCK": 4}, num_warps=4), triton.Config({"BLOCK": 4}, num_warps=8),
                 triton.Config({"BLOCK": 8})], key=["n"]
    )(triton.jit(add_kernel.fn))
    n = 10
    x, y, o = torch.ones(n), torch.ones(n), torch.empty(n)
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)  # noqa: E731
    with pytest.raises(Unsupported, match="pin one with attnio.triton.pin_config"):
        with at.count_traffic(x=x, y=y, o=o):
            tuned[grid](x, y, o, n)
    for block in (4, 8):
        with at.pin_config(tuned, BLOCK=block), at.count_traffic(x=x, y=y, o=o) as t:
            tuned[grid](x, y, o, n)
        assert t.reads_words == {"x": n, "y": n, "o": 0} and t.launches == ["add_kernel"]
    with at.pin_config(tuned, num_warps=8) as chosen:  # a launch option selects too
        assert chosen.kwargs == {"BLOCK": 4}
    with at.pin_config(tuned, index=2) as chosen:
        assert chosen.kwargs == {"BLOCK": 8}
    assert len(tuned.configs) == 3  # restored
    with pytest.raises(InvalidParameter, match="config="):
        with at.pin_config(tuned, BLOCK=16):
            pass


def _desc_pre_hook(nargs):
    nargs["desc_x"].block_shape = [nargs["BM"], nargs["D"]]
    nargs["desc_o"].block_shape = [nargs["BM"], nargs["D"]]


@triton.autotune([triton.Config({"BM": bm}, num_warps=w, pre_hook=_desc_pre_hook) for bm in (16, 32) for w in (4, 8)],
                 key=["R"])
@triton.jit
def double_rows_kernel(desc_x, desc_o, R, D: tl.constexpr, BM: tl.constexpr):
    pid = tl.program_id(0)
    desc_o.store([pid * BM, 0], desc_x.load([pid * BM, 0]) * 2)


def test_host_tensor_descriptors_autotune_pre_hook_and_fake_gpu_together():
    """The pattern of current third-party attention kernels: host-side tensor descriptors whose block shapes an
    autotune pre-hook sets, a launcher that asks the driver for the target and capability."""
    td = pytest.importorskip("triton.tools.tensor_descriptor")
    q = torch.randn(1, 2, 40, 16)
    o = torch.zeros_like(q)
    R, D = 80, 16
    with at.fake_gpu(arch=90), at.pin_config(double_rows_kernel, BM=32), at.count_traffic(q=q, o=o) as t:
        assert triton.runtime.driver.active.get_current_target().backend == "cuda"
        assert torch.cuda.get_device_capability()[0] >= 9
        dx = td.TensorDescriptor(q, shape=[R, D], strides=[D, 1], block_shape=[1, 1])
        do = td.TensorDescriptor(o, shape=[R, D], strides=[D, 1], block_shape=[1, 1])
        double_rows_kernel[lambda m: (triton.cdiv(R, m["BM"]),)](dx, do, R, D=D)
    assert torch.equal(o, 2 * q)
    # 3 programs of 32 rows address 96 rows; the descriptor's bounds let 80 through
    assert t.reads_words == {"q": R * D, "o": 0} and t.writes_words == {"q": 0, "o": R * D}


def test_a_launch_index_by_insertion_equals_the_sorted_one_and_reused_tables_count_the_same():
    """A launch's address index (the named tensors' with the arguments' elements inserted, count._Index._extend)
    equals the one sorted from scratch, for arguments disjoint from the named tensors (inserted) and overlapping
    them (sorted); under reuse_tables a second count of the same kernel takes the first's tables and counts the
    same."""
    import numpy as np

    from attnio.triton.count import _Counter, _Index, reuse_tables

    base = torch.zeros(64)
    x, y = base[:32], torch.zeros(40)
    scratch = torch.zeros(2, 12)[:, ::3]  # strided, disjoint from the named tensors
    for args in ([("s", scratch)], [("s", scratch), ("xt", base[8:40])], [("s", scratch), ("v", base[::2])]):
        c = _Counter({"x": x, "y": y}, strict=True)
        c.begin_launch("k", args)
        ids = list(range(1, len(c.owners)))
        want = _Index(c.owners, ids)
        for f in ("addrs", "owner", "local"):
            assert np.array_equal(getattr(c.index, f), getattr(want, f)), (args, f)
        assert c.index.spans == want.spans
    out = torch.zeros(40)
    store: dict = {}
    got = []
    for _ in range(2):
        with reuse_tables(store), at.count_traffic(x=x, y=y, out=out) as t:
            add_kernel[(3,)](x, y[:32], out, 32, BLOCK=16)
        got.append(t.as_dict())
        assert any(k[0] == "index" for k in store)
    assert got[0] == got[1] and got[0]["tensors"]["x"]["reads_words"] == 32
