"""``benchmarks/kernel_gallery.py --formula`` without downloading anything: attnio.triton.formula.fit run through
the gallery's adapter path (``fit_kernel``: the kernel's files loaded by the gallery's loader, the adapter bound,
every count by the gallery's own ``check_shape``) on kernels of tests/kernels_shipped in shipped conventions -- the
packed variable-length one (cu_seqlens, d ≠ d_v) and the dense serving-engine one, whose generated
``launch_metadata`` is called with a real launch's grid and arguments --, a basis missing a term reported as not
fitted, and the Markdown and report section rendered from a fixture."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from test_gallery import SHIPPED_FORMULA, TESTS, _gallery, shipped_attention  # noqa: E402
from triton_env import import_triton  # noqa: E402

from attnio.reports import section_gallery  # noqa: E402
from attnio.reports.render import Section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def shipped_varlen(m, q, k, v, o, cu_seqlens, max_seqlen):
    """tests/kernels_shipped's packed variable-length launcher."""
    m[0].varlen(q, k, v, o, cu_seqlens, max_seqlen, q.shape[-1] ** -0.5)


# _attn_varlen (tests/kernels_shipped/kernels.py), derived from its loops independently of the fit: program
# (query block i of 16 rows, sequence of length l, query head) reads the two offsets; a live block (i < cdiv(l, 16))
# reads its Q rows and all l keys of the sequence's K/V head, and writes its O rows; the grid runs cdiv(max l, 16)
# blocks per sequence and head
def varlen_formula(g):
    return {"q": ("H*T*d*W", "0"), **g.kv_reads("H*{w}*W*sum(cdiv(l, 16)*l for l in L)"), "o": ("0", "H*T*dv*W"),
            "cu_seqlens": ("2*len(L)*H*cdiv(max(L), 16)*W", "0")}


def _varlen_kernel(g, lengths=("1", "N_q", "T_r", "T_r*N_kv")):
    return g.Kernel(
        name="shipped-varlen", project="attnio tests", package="(tests)", version="0",
        files=("kernels_shipped/launchers.py",), function="varlen", adapter=shipped_varlen,
        shapes=(dict(heads=2, kv_heads=1, N=1, d=16, dv=32, seqlens=[20, 20]), dict(heads=2, N=1, d=16, seqlens=[5, 20])),
        formula=varlen_formula(g), waste="K and V re-read per query block of 16 rows and per query head",
        fit=g.Fit(block=(16, 16), causal=False, packed=True, lengths=lengths,
                  points={"widths": [(16, 16), (32, 16), (16, 32)], "lengths": [(n, n) for n in (1, 15, 16, 17, 31, 33)]},
                  held_out=(dict(Z=2, H=4, H_kv=2, N=37, d=16, d_v=32), dict(Z=3, H=2, H_kv=1, N=20, d=32, d_v=16))))


@pytest.mark.slow
def test_fit_of_a_packed_varlen_kernel_through_the_gallery_adapter_is_exact_and_equals_the_hand_formula():
    import_triton()
    g = _gallery()
    r = g.fit_kernel(_varlen_kernel(g), TESTS, solver=False)
    assert r["exact"] and len(r["held_out"]) == 2 and all(h["exact"] for h in r["held_out"])
    # K per query head, once per live query block: Z·H·T_r·N·d fp32 words
    assert r["formulas"]["k.reads_bytes"] == "4*H*N_kv*T_r*Z*d"
    assert r["formulas"]["v.reads_bytes"] == "4*H*N_kv*T_r*Z*d_v"
    assert r["formulas"]["cu_seqlens.reads_bytes"] == "8*H*T_r*Z"
    hand = r["hand_formula"]
    # the gallery shape of two equal sequences is described (Z = 2, N = 20); the unequal one is not
    assert hand["equal"] and hand["gallery_shapes"] == 1 and hand["shapes"] == 1 + r["fit_shapes"] + 2
    assert "not fitted" not in g.fit_summary(r) and "= hand formula" in g.fit_summary(r)
    md = "\n".join(g.fit_markdown([{"name": "shipped-varlen", "fit": r}]))
    assert "`k.reads_bytes` = `4*H*N_kv*T_r*Z*d`" in md and "packed batch" in md and "not compared" in md
    assert r["total_bytes"].count("T_r") == 3  # K, V and the offsets grow with the query blocks; Q and O do not


@pytest.mark.slow
def test_a_basis_missing_a_term_is_reported_as_not_fitted_with_no_form():
    import_triton()
    g = _gallery()
    r = g.fit_kernel(_varlen_kernel(g, lengths=("1", "N_q", "T_r")), TESTS, solver=False)  # no T_r·N_kv
    # the design is square (it identifies the basis), so the miss shows at the held-out shapes, named per field
    assert not r["exact"] and "formulas" not in r and not all(h["exact"] for h in r["held_out"])
    assert "k.reads_bytes" in r["error"] and "v.reads_bytes" in r["error"] and "q.reads_bytes" not in r["error"]
    md = "\n".join(g.fit_markdown([{"name": "shipped-varlen", "fit": r}]))
    assert "not fitted" in md and "`k.reads_bytes` =" not in md


@pytest.mark.slow
def test_launch_metadata_of_a_gallery_fit_gives_the_counted_bytes_of_a_real_launch():
    """The dense shipped kernel (_attn, blocks 16 × 16): the hook generated from the fit is called with the grid
    and the arguments by name recorded from a real launch through the adapter; its bytes equal that launch's
    counted bytes."""
    import_triton()
    g = _gallery()
    k = g.Kernel(
        name="shipped-attention", project="attnio tests", package="(tests)", version="0",
        files=("kernels_shipped/launchers.py",), function="attention", adapter=shipped_attention,
        shapes=(dict(heads=2, kv_heads=1, Nq=20, Nkv=40, d=16, dv=32),), formula=SHIPPED_FORMULA, waste="",
        args={"query": "q", "key": "k", "value": "v", "out": "o"},
        fit=g.Fit(block=(16, 16), causal=False, lengths=("1", "N_q", "N_kv", "T_r", "T_r*N_kv"), metadata="0._attn",
                  points={"widths": [(16, 16), (32, 16), (16, 32)]},
                  held_out=(dict(Z=2, H=4, H_kv=2, N_q=37, N_kv=21, d=16, d_v=32),)))
    r = g.fit_kernel(k, TESTS, solver=False)
    assert r["exact"] and r["hand_formula"]["equal"]
    m = r["launch_metadata"]
    # Q 2·20·16, K and V 2 heads · 2 query blocks · 40 rows · 16 and 32, O 2·20·32, fp32
    assert m["counted_bytes"] == 4 * (2 * 20 * 16 + 2 * 2 * 40 * (16 + 32) + 2 * 20 * 32)
    assert m["equal"] and m["hook_bytes"] == m["counted_bytes"]
    assert m["source"].startswith("def launch_metadata(grid, kernel, args):")


def test_shapes_map_between_the_fit_and_the_gallery():
    from attnio.core.workload import Workload

    g = _gallery()
    spec = g.Fit(block=(16, 16), causal=False, packed=True, lengths=("1",), widths=("1", "d"))
    w = Workload.build(batch=3, heads=2, kv_heads=1, N=20, d=16, dtype="fp16", M=g.M_WORDS)
    s = g.gallery_shape(spec, w)
    assert s["seqlens"] == [20, 20, 20] and s["heads"] == 2 and s["N"] == 1
    assert g.fit_shape(spec, s) == {"Z": 3, "H": 2, "H_kv": 1, "N_q": 20, "N_kv": 20, "d": 16, "d_v": 16}
    assert g.fit_shape(spec, {**s, "seqlens": [20, 5]}) is None  # unequal sequences: not described
    assert g.fit_shape(spec, {**s, "dv": 32}) is None  # d ≠ d_v without d_v in the basis
    assert g.fit_shape(spec, {**s, "causal": True}) is None  # another mask


FIT = {"name": "demo", "exact": True, "causal": False, "block": [64, 32], "packed": False, "dtype": "fp16",
       "widths": ["1", "d"], "lengths": ["N_q", "T_r*N_kv"], "fit_shapes": 12, "fit_seconds": 3.2,
       "held_out": [{"shape": {"Z": 2, "N_q": 131}, "exact": True, "mismatches": {}, "seconds": 1.0}],
       "formulas": {"k.reads_bytes": "2*H*N_kv*T_r*Z*d", "k.writes_bytes": "0"}, "definitions": {},
       "total_bytes": "2*H*N_kv*T_r*Z*d",
       "hand_formula": {"gallery_shapes": 2, "shapes": 15, "equal": True, "differences": []},
       "compare": {"tightest": {"status": "proved", "constant": "354/25", "reason": "r"}, "bounds": ["b"],
                   "threshold": {"text": "t"}, "notes": [], "seconds": 1.0}}


def test_section_and_markdown_show_the_fit_and_never_a_form_that_was_not_fitted():
    kernel = {**__import__("test_gallery").FIXTURE["kernels"][0], "fit": FIT}
    data = {**__import__("test_gallery").FIXTURE, "kernels": [kernel]}
    s = section_gallery.build(Section, data)
    tables = [b for b in s.blocks if b[0] == "table"]
    assert tables[-1][1] == section_gallery.FIT_HEADERS
    row = tables[-1][2][0]
    assert row[0] == "demo" and "✓ at 15 shapes" in row and "within 14.16×, proved by z3" in row
    assert "2*H*N_kv*T_r*Z*d" in row
    bad = {**FIT, "exact": False, "error": "k.reads_bytes has no exact fit in the basis"}
    bad.pop("formulas")
    s = section_gallery.build(Section, {**data, "kernels": [{**kernel, "fit": bad}]})
    row = [b for b in s.blocks if b[0] == "table"][-1][2][0]
    assert "not fitted: k.reads_bytes has no exact fit in the basis" in row and "not proved" not in str(row[-1])
    decode = {**FIT, "compare": {**FIT["compare"], "setting": {"N_q": 1}}}
    assert section_gallery._fit_row("demo", decode)[-1] == "within 14.16×, proved by z3 (N_q = 1, N_kv = N: a decode)"
    unproved = {**FIT, "compare": {"tightest": {"status": "unknown"}}}
    row = section_gallery._fit_row("demo", unproved)
    assert row[-1] == "not proved"
    g = _gallery()
    assert g.proved_c({"tightest": {"status": "unknown"}}) == "not proved (unknown)"
    assert g.proved_c(FIT["compare"]) == "within 14.16× of the best bound, proved by z3"
