"""attnio.triton.formula on attnio's Triton kernels (Triton's interpreter; skipped without triton and torch):
the fitted closed forms are exact on held-out shapes and equal the kernels' derived counts, and the generated
launch_metadata gives the counted bytes of a real launch."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest
from triton_env import import_triton

torch, triton = import_triton()

from attnio.core.workload import Workload  # noqa: E402
from attnio.triton import formula_basis as fb  # noqa: E402
from attnio.triton.formula import fit  # noqa: E402
from attnio.triton.kernels import pinned  # noqa: E402

_FITS: dict = {}


def _fit(launch, causal, **kw):
    key = (launch.__name__, causal, tuple(sorted(kw.items())))
    if key not in _FITS:
        _FITS[key] = fit(launch, causal=causal, **kw)
    return _FITS[key]


@pytest.mark.slow
@pytest.mark.parametrize("causal", [False, True])
def test_fa2_forward_fit_is_exact_on_held_out_shapes_and_equals_the_derived_count(causal):
    from attnio.triton.kernels.fa2_fwd import traffic

    f = _fit(pinned.fa2_grouped, causal)
    assert f.exact, [h.mismatches for h in f.held_out]
    assert all(h["N_q"] % f.block[0] for h in (x.shape for x in f.held_out[:2]))  # partial last Q blocks held out
    for s in ({"Z": 2, "H": 8, "H_kv": 2, "N_q": 300, "N_kv": 517, "d": 128, "d_v": 64},
              {"Z": 1, "H": 32, "H_kv": 8, "N_q": 4096, "N_kv": 4096, "d": 128, "d_v": 128}):
        w = Workload.build(batch=s["Z"], heads=s["H"], kv_heads=s["H_kv"], Nq=s["N_q"], Nkv=s["N_kv"], d=s["d"],
                           dv=s["d_v"], causal=causal, M=1 << 20)
        want = traffic(w, f.block[0], "grouped")
        tot = f.evaluate(**s)["total"]
        assert (tot["reads_words"], tot["writes_words"]) == (want.reads_words, want.writes_words)
    basis = "SE" if causal else "T_r*N_kv"
    assert f.coefficients[("k", "reads_words")] == {("Z*H_kv", "d", basis): 1}


def _derived(kernel, s, causal, block):
    """The kernel's own derived count in words (its module's formula), at shape s."""
    from attnio.triton.kernels import fa2_bwd, fa2_fwd, square_tiling

    w = Workload.build(batch=s["Z"], heads=s["H"], kv_heads=s["H_kv"], Nq=s["N_q"], Nkv=s["N_kv"], d=s["d"],
                       dv=s["d_v"], causal=causal, M=1 << 20)
    if kernel == "fa2_per_head":
        return fa2_fwd.traffic(w, block[0], "per-head")
    if kernel == "square_tiling":
        return square_tiling.traffic(w, block[0])
    return fa2_bwd.exact_count(batch=s["Z"], heads=s["H"], kv_heads=s["H_kv"], Nq=s["N_q"], Nkv=s["N_kv"], d=s["d"],
                               dv=s["d_v"], causal=causal, B_c=block[1])


@pytest.mark.slow
@pytest.mark.parametrize("kernel", ["fa2_per_head", "square_tiling", "fa2_bwd"])
@pytest.mark.parametrize("causal", [False, True])
def test_fit_of_each_kernel_is_exact_and_equals_its_derived_count(kernel, causal):
    """Each of attnio's other kernels (one to two minutes a fit on two busy cores): exact on the held-out shapes,
    and its total words at production shapes (far outside the fit) equal the kernel module's derived count."""
    f = _fit(getattr(pinned, kernel), causal)
    assert f.exact, [h.mismatches for h in f.held_out]
    for s in ({"Z": 2, "H": 8, "H_kv": 2, "N_q": 300, "N_kv": 517, "d": 128, "d_v": 64},
              {"Z": 1, "H": 32, "H_kv": 8, "N_q": 4096, "N_kv": 4096, "d": 128, "d_v": 128}):
        want = _derived(kernel, s, causal, f.block)
        tot = f.evaluate(**s)["total"]
        assert (tot["reads_words"], tot["writes_words"]) == (want.reads_words, want.writes_words), s


@pytest.mark.slow
def test_launch_metadata_gives_the_counted_bytes_of_a_real_launch(monkeypatch):
    """The hook is called, as Triton calls it, with the grid, a metadata stand-in and the kernel's arguments by
    name, captured from a real launch of fa2_fwd; its bytes equal the count of that launch."""
    import inspect

    import attnio.triton as at
    from attnio.triton.kernels import fa2_fwd

    f = _fit(pinned.fa2_grouped, True)
    hook = f.launch_metadata("_fa2_fwd")
    src = f.launch_metadata_source("_fa2_fwd")
    assert src.startswith("def launch_metadata(grid, kernel, args):")
    real = fa2_fwd._fa2_fwd
    names = list(inspect.signature(real.fn).parameters)
    seen = []

    class Recorder:
        def __getitem__(self, grid):
            def run(*a, **kw):
                seen.append((grid, dict(zip(names, a, strict=False)) | kw))
                return real[grid](*a, **kw)
            return run

    monkeypatch.setattr(fa2_fwd, "_fa2_fwd", Recorder())
    monkeypatch.setattr(fa2_fwd, "require_interpreted", lambda kernel, x: None)  # the recorder is no jit function
    q = torch.randn(2, 4, 150, 24)
    k, v = torch.randn(2, 2, 200, 24), torch.randn(2, 2, 200, 40)
    o = torch.empty(2, 4, 150, 40)
    with at.count_traffic(q=q, k=k, v=v, o=o) as t:
        fa2_fwd.fa2_forward(q, k, v, causal=True, block=f.block, o=o)
    (grid, args), = seen
    meta = hook(grid, None, args)
    assert meta["bytes"] == t.total_bytes == f.total_bytes(Z=2, H=4, H_kv=2, N_q=150, N_kv=200, d=24, d_v=40)
    assert meta["name"].startswith("_fa2_fwd")


def test_pinned_block_is_read_from_the_launcher_and_bad_blocks_are_refused():
    from attnio.core.errors import InvalidParameter
    from attnio.triton.formula import _block_of

    _, block = _block_of(pinned.fa2_grouped, None)
    assert block == (64, 32)
    with pytest.raises(InvalidParameter, match="block"):
        _block_of(pinned.fa2_grouped, (0, 4))
    with pytest.raises(InvalidParameter, match="pinned blocks"):
        _block_of(lambda q, k, v, o: None, None)


@pytest.mark.slow
def test_small_fit_of_the_forward_is_exact():
    """A smaller fit (small blocks, a reduced basis that still holds the forward's terms) checked on the
    held-out shapes (about 15 s on two busy cores, most of it the held-out runs)."""
    f = fit(pinned.fa2_per_head, causal=False, block=(16, 16), units=("Z*H",), widths=("1", "d", "d_v"),
            lengths=("N_q", "T_r*N_kv"))
    assert f.exact, [h.mismatches for h in f.held_out]
    assert f.coefficients[("v", "reads_words")] == {("Z*H", "d_v", "T_r*N_kv"): 1}
    assert fb.value(fb.LENGTH["T_r*N_kv"], fb.context(f.held_out[0].shape, f.block)) > 0


@pytest.mark.parametrize("argv, needle", [
    (["--range", "10:5"], "range"),
    (["--block", "64y32"], "block"),
    (["--widths", "1,d,q"], "widths"),
    (["--lengths", "1,N_q,T_r*Q"], "lengths"),
    (["--lengths", "N_q,T_r*N_kv,NE"], "splits=None"),  # NE needs the kernel's splits
    (["--lengths", "N_q,T_r*N_kv,NE", "--splits", "0"], "splits=0"),
])
def test_cli_formula_bad_input_is_one_line_exit_2(argv, needle, capsys):
    from attnio.cli import main

    rc = main(["kernel", "attnio.triton.kernels.pinned:fa2_grouped", "--formula", "--d", "128", *argv])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and needle in err


@pytest.mark.parametrize("argv, needle", [
    (["--l2", "nope"], "l2='nope'"),            # was ignored: exit 0 with an unknown preset
    (["--l2", "h100"], "l2='h100'"),            # was ignored: no replay, exit 0
    (["--fast"], "fast=True"),
    (["--page-size", "16"], "page-size=16"),
    (["--cu-seqlens", "0,5,9"], "cu-seqlens='0,5,9'"),
    (["--l2-order", "hqb"], "l2-order='hqb'"),
    (["--Nq", "64", "--Nkv", "128"], "Nq=64"),  # was ignored: the comparison is at N_q = N_kv over --range
    (["--N", "256"], "N=256"),
    (["--M", "0"], "M=0"),                      # was refused after the fit as "M=['M', 'gpu']"
    (["--heads", "0"], "heads=0"),              # was refused only after the fit (tens of seconds)
])
def test_cli_formula_refuses_options_it_would_ignore_before_the_fit(argv, needle, capsys, monkeypatch):
    """An option --formula does not use and a bad workload option are one line, exit 2, before any fit (the fit
    is replaced by one that fails the test)."""
    from attnio.cli import main
    from attnio.triton import formula

    def no_fit(*a, **k):
        raise AssertionError("the fit ran")

    monkeypatch.setattr(formula, "fit", no_fit)
    rc = main(["kernel", "attnio.triton.kernels.pinned:fa2_grouped", "--formula", "--d", "16", *argv])
    out, err = capsys.readouterr()
    assert rc == 2 and out == "" and len(err.strip().splitlines()) == 1 and needle in err, err


def test_compare_with_M_zero_names_M():
    """f.compare(M=0) names M=0 (it passed gpu as well and was refused as "exactly one of M, smem or gpu"); the
    workload is built before the formula is read, so a stand-in with the mask and dtype is enough."""
    from types import SimpleNamespace

    from attnio.core.errors import InvalidParameter
    from attnio.triton.formula_compare import compare

    with pytest.raises(InvalidParameter, match="M=0 is invalid"):
        compare(SimpleNamespace(causal=False, dtype="fp32"), d=16, M=0)


def test_cli_formula_needs_pinned_blocks(tmp_path, capsys):
    from attnio.cli import main

    f = tmp_path / "unpinned.py"
    f.write_text("def launch(q, k, v, o, causal):\n    pass\n")
    assert main(["kernel", f"{f}:launch", "--formula", "--d", "16"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "pinned blocks" in err


@pytest.mark.slow
def test_cli_refuses_to_print_a_formula_that_fails_a_held_out_shape(capsys):
    """Square tiling without T_v in the width basis: its S reads double at d_v > B, which only the third held-out
    shape has; the command lists the mismatch, prints no formula, and exits 1 (about 40 s)."""
    import json

    from attnio.cli import main

    rc = main(["kernel", "attnio.triton.kernels.pinned:square_tiling", "--formula", "--d", "16", "--widths", "1,d,d_v",
               "--no-solver", "--json"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 1 and not d["exact"] and "formulas" not in d
    bad = [h for h in d["held_out"] if not h["exact"]]
    assert [h["shape"]["d_v"] > 32 for h in bad] == [True] and "_square_tiling.S.reads_words" in bad[0]["mismatches"]


@pytest.mark.slow
def test_split_kv_fit_needs_the_nonempty_splits_and_equals_its_loops():
    """tests/kernels_shipped's split_kv (S = 3 chunks of whole 16-key blocks, empty chunks skipped, then a combine):
    with N_q·NE in the basis the fit is exact on held-out shapes (one with an empty chunk), and equals the
    count read off its loops; with T_c·N_q in its place the same held-out shapes fail and nothing is printed."""
    from kernels_shipped.launchers import split_kv

    points = {"widths": [(16, 16), (32, 16), (16, 32)]}  # the kernel takes power-of-2 widths
    held = [dict(Z=2, H=4, H_kv=2, N_q=20, N_kv=70, d=16, d_v=32), dict(Z=1, H=2, H_kv=2, N_q=5, N_kv=64, d=16, d_v=16)]
    f = fit(split_kv, causal=False, block=(16, 16), lengths=("1", "N_q", "T_r*N_kv", "N_q*NE"), points=points, check=False)
    assert f.splits == 3 and all(h.ok for h in f.check(held)), [h.mismatches for h in f.held_out]
    base = dict(Z=2, H=8, H_kv=2, N_q=100, d=128, d_v=64)
    # N_kv -> non-empty chunks: T_c = 6 tiles in chunks of 2 (3); T_c = 4 in chunks of 2 (2: the third is empty);
    # T_c = 2 in chunks of 1 (2); T_c = 8 in chunks of 3 (3)
    for n, ne in ((90, 3), (64, 2), (49, 2), (17, 2), (113, 3)):
        s = {**base, "N_kv": n}
        BH, Tr, e = s["Z"] * s["H"], -(-s["N_q"] // 16), f.evaluate(**s)
        assert fb.value(fb.LENGTH["NE"], fb.context(s, (16, 16), 3)) == ne
        assert e["q"]["reads_words"] == BH * ne * s["N_q"] * s["d"]  # the Q block once per non-empty chunk
        assert e["k"]["reads_words"] == BH * Tr * s["N_kv"] * s["d"]  # each key once per query block
        assert e["_attn.O"] == {x: BH * ne * s["N_q"] * s["d_v"] for x in ("reads_words", "writes_words")} | \
            {x: 4 * BH * ne * s["N_q"] * s["d_v"] for x in ("reads_bytes", "writes_bytes")}
        assert e["o"]["writes_words"] == BH * s["N_q"] * s["d_v"]
    g = fit(split_kv, causal=False, block=(16, 16), lengths=("1", "N_q", "T_r*N_kv", "T_c*N_q"), points=points, check=False)
    bad = g.check(held)
    assert not g.exact and any("q.reads_bytes" in h.mismatches for h in bad)
    assert "no formula printed" in "\n".join(g.lines())


@pytest.mark.slow
def test_prefix_prefill_fit_needs_query_blocks_times_query_rows():
    """tests/kernels_shipped's prefix (causal, blocks 16 × 16, pages of 16): every query block gathers the
    δ = N_kv − N_q cached keys (one block-table word each), then the new keys of its causal band from k and v. With
    T_r·N_kv and T_r·N_q beside SE the fit is exact on held-out shapes and equals those loops; without T_r·N_q the
    cache's T_r·δ has no form and the same held-out shapes fail."""
    from kernels_shipped.launchers import prefix

    from attnio.triton.check import check

    def counter(launch, w):
        return check(launch, w, page_size=16).traffic

    kw = dict(causal=True, block=(16, 16), points={"widths": [(16, 16), (32, 16), (16, 32)]}, counter=counter,
              check=False)
    held = [dict(Z=2, H=4, H_kv=2, N_q=20, N_kv=53, d=16, d_v=32), dict(Z=1, H=3, H_kv=1, N_q=37, N_kv=37, d=32, d_v=16)]
    lengths = ("1", "N_q", "T_r", "SE", "T_r*N_kv")
    f = fit(prefix, lengths=(*lengths, "T_r*N_q"), **kw)
    assert all(h.ok for h in f.check(held)), [h.mismatches for h in f.held_out]
    s = dict(Z=2, H=8, H_kv=2, N_q=100, N_kv=612, d=128, d_v=64)
    BH, Tr, delta, e = 16, 7, 512, f.evaluate(**s)
    band = sum(min(100, 16 * (i + 1)) for i in range(Tr))  # new keys the query blocks read
    assert e["k_cache"]["reads_words"] == BH * Tr * delta * 128 and e["block_table"]["reads_words"] == BH * Tr * delta
    assert e["k"]["reads_words"] == BH * band * 128 and e["v"]["reads_words"] == BH * band * 64
    assert e["seq_lens"]["reads_words"] == BH * Tr and e["o"]["writes_words"] == BH * 100 * 64
    g = fit(prefix, lengths=lengths, **kw)
    bad = g.check(held)
    assert not g.exact and any("k_cache.reads_bytes" in h.mismatches for h in bad)


def _viewing_launcher(view):
    """The example kernel (examples/causal_fa2_noskip.py) launched on views of q, k, v, o made by ``view``; the
    kernel's arguments of each launch kept in ``launch.seen``."""
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "examples" / "causal_fa2_noskip.py"
    spec = importlib.util.spec_from_file_location("causal_fa2_noskip_views", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def launch(q, k, v, o, causal, sm_scale):
        batch, heads, Nq, d = q.shape
        kv_heads, Nkv, dv = k.shape[1], k.shape[2], v.shape[3]
        args = {"Q": view(q), "K": view(k), "V": view(v), "O": view(o)}
        launch.seen.append(args)
        mod._fwd[(triton.cdiv(Nq, 32), batch * heads)](args["Q"], args["K"], args["V"], args["O"], Nq, Nkv,
                                                       heads // kv_heads, sm_scale, CAUSAL=causal, D=d, DV=dv,
                                                       BLOCK_M=32, BLOCK_N=32)
        return o

    launch.seen, launch.attnio_block = [], (32, 32)
    return launch


def test_launch_metadata_reads_the_layout_the_kernel_saw_or_refuses():
    """The hook assumed the kernel's own arguments laid out (Z, H, N, d): on q.transpose(1, 2) views it returned
    102,912 B for a launch that moves 274,432 B; on q.reshape(-1, N, d) views it raised IndexError when called.
    Now the transposed views are read in their own order (the hook gives the counted bytes of a real launch), and
    the flattened ones, whose Z and H are merged, are refused when the hook is generated (NotImplementedError)."""
    from attnio.core.errors import Unsupported
    from attnio.triton.formula import measure

    shape = {"Z": 2, "H": 4, "H_kv": 2, "N_q": 67, "N_kv": 67, "d": 16, "d_v": 16}
    held_out = [{**shape, "N_kv": 70}]  # every dimension above 1: decides the layout
    pts = {"widths": [(16, 16), (32, 32), (64, 64)]}  # tl.arange(0, D): powers of two
    for view, readable in ((lambda t: t.transpose(1, 2), True), (lambda t: t.reshape(-1, *t.shape[2:]), False)):
        launch = _viewing_launcher(view)
        f = fit(launch, causal=False, widths=("1", "d"), points=pts, check=False)
        f.check(held_out)
        assert f.exact, [h.mismatches for h in f.held_out]
        if not readable:
            with pytest.raises(Unsupported, match="Z, H, H_kv cannot be read"):
                f.launch_metadata_source()
            continue
        counted = measure(launch, shape, causal=False)[("launch:_fwd", "bytes")]
        assert f.launch_metadata()((3, 8, 1), None, launch.seen[-1])["bytes"] == counted == 274_432
