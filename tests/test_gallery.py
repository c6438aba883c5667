"""The gallery of shipped Triton kernels (benchmarks/kernel_gallery.py) without downloading anything: its
formula-checking path end to end on one of attnio's own kernels in shipped conventions (tests/kernels_shipped,
loaded through the gallery's file-in-package loader), a wrong formula caught, the Markdown it writes, and the
report section rendered from a small fixture and from no file at all."""

from __future__ import annotations

import importlib.util
import os
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from triton_env import import_triton  # noqa: E402

from attnio.reports import section_gallery  # noqa: E402
from attnio.reports.render import Section  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TESTS = Path(__file__).resolve().parent


def _gallery():
    spec = importlib.util.spec_from_file_location("kernel_gallery", ROOT / "benchmarks" / "kernel_gallery.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules["kernel_gallery"] = mod
    spec.loader.exec_module(mod)
    return mod


def shipped_attention(m, query, key, value, out):
    """tests/kernels_shipped's serving-engine launcher (query/key/value names), one key split."""
    m[0].attention(query, key, value, out)


# _attn (tests/kernels_shipped/kernels.py): program (query block i of 16 rows, query head) reads its Q block,
# every K and V row of its head's K/V head (masked past Nkv) and writes its O block
SHIPPED_FORMULA = {
    "q": ("B*H*Nq*d*e", "0"),
    "k": ("B*H*cdiv(Nq, 16)*Nkv*d*e", "0"),
    "v": ("B*H*cdiv(Nq, 16)*Nkv*dv*e", "0"),
    "o": ("0", "B*H*Nq*dv*e"),
}


def _kernel(g, formula):
    return g.Kernel(
        name="shipped-attention", project="attnio tests", package="(tests)", version="0",
        files=("kernels_shipped/launchers.py",), function="attention", adapter=shipped_attention,
        shapes=(dict(heads=2, kv_heads=1, Nq=20, Nkv=40, d=16), dict(heads=2, N=33, d=16, batch=2)),
        formula=formula, waste="K and V re-read per query block of 16 rows and per query head",
        args={"query": "q", "key": "k", "value": "v", "out": "o"})


def test_formula_path_on_a_shipped_convention_kernel_end_to_end():
    import_triton()
    g = _gallery()
    res = g.run_kernel(_kernel(g, SHIPPED_FORMULA), TESTS)
    assert res["formula_ok"] and len(res["shapes"]) == 2
    first = res["shapes"][0]
    rows = {t["tensor"]: t for t in first["tensors"]}
    # H = 2 on 1 K/V head, Nq = 20 (2 query blocks), Nkv = 40, d = 16, fp32: K read 2·2·40·16·4 bytes
    assert rows["k"]["read_bytes"] == 2 * 2 * 40 * 16 * 4 and rows["k"]["compulsory_bytes"] == 40 * 16 * 4
    assert rows["k"]["excess_bytes"] == 3 * 40 * 16 * 4 and rows["k"]["ratio_to_compulsory"] == 4
    assert rows["k"]["role"] == "K" and rows["k"]["compulsory_bytes"] <= rows["k"]["best_array_bytes"] < rows["k"]["read_bytes"]
    assert first["total_bytes"] == sum(t["read_bytes"] + t["written_bytes"] for t in first["tensors"])
    assert first["outputs_ok"] and first["ratio_to_compulsory"] > 1
    md = g.markdown({"command": "cmd", "triton": "x", "torch": "y", "M": g.M_WORDS, "wall_seconds": 1.0, "kernels": [res]})
    assert "| shipped-attention |" in md and "✗" not in md


def test_a_formula_that_misses_the_count_is_marked():
    import_triton()
    g = _gallery()
    wrong = dict(SHIPPED_FORMULA, k=("B*Hkv*Nkv*d*e", "0"))  # K read once per K/V head: not what _attn does
    res = g.run_kernel(_kernel(g, wrong), TESTS)
    assert not res["formula_ok"]
    miss = [t for s in res["shapes"] for t in s["tensors"] if not t["formula_ok"]]
    assert {t["tensor"] for t in miss} == {"k"}
    md = g.markdown({"command": "cmd", "triton": "x", "torch": "y", "M": g.M_WORDS, "wall_seconds": 1.0, "kernels": [res]})
    assert "✗" in md


def test_adapter_lines_count_the_source_and_the_fake_modules():
    g = _gallery()
    k = _kernel(g, SHIPPED_FORMULA)
    assert k.adapter_lines == 2
    k.fake_lines = 3
    assert k.adapter_lines == 5
    assert all(x.adapter_lines <= 10 for x in g.GALLERY)


FIXTURE = {
    "command": "TRITON_INTERPRET=1 .venv/bin/python benchmarks/kernel_gallery.py", "triton": "3.9.0", "M": 65536,
    "kernels": [{
        "name": "demo", "project": "Demo", "package": "demo", "version": "1.2", "files": ["demo/attn.py"],
        "function": "attention", "adapter_lines": 3, "formula_ok": True, "waste": "K re-read per query block",
        "shapes": [{"label": "H=2 N=64 d=64 fp16", "total_bytes": 123456, "ratio_to_compulsory": 1.5,
                    "lower_bound": "workloads.trivial", "lower_bound_bytes": 82304, "ratio_to_lower_bound": 1.5,
                    "best_schedule": "flash2 (per-head)", "best_bytes": 82304, "ratio_to_best_schedule": 1.5,
                    "formula_ok": True, "outputs_ok": True}],
    }],
}


def test_section_renders_the_fixture():
    s = section_gallery.build(Section, FIXTURE)
    tables = [b for b in s.blocks if b[0] == "table"]
    assert tables[0][1] == section_gallery.HEADERS
    row = tables[0][2][0]
    assert row[0] == "demo" and row[2] == "demo==1.2" and "123,456" in row and "✓" in row
    assert tables[1][2][0][:2] == ["demo", "K re-read per query block"]
    assert "1 Triton attention kernels from 1 projects (Demo)" in s.blocks[0][1]


def test_section_says_so_in_one_line_without_the_file(tmp_path):
    s = section_gallery.build(Section, section_gallery.load(tmp_path / "gallery.json"))
    assert len(s.blocks) == 1 and "reports/gallery.json is missing" in s.blocks[0][1]


@pytest.mark.parametrize("bad", [{"formula_ok": False}])
def test_section_names_a_missed_formula(bad):
    data = {**FIXTURE, "kernels": [{**FIXTURE["kernels"][0], **bad}]}
    assert "MISSED by demo" in section_gallery.build(Section, data).blocks[0][1]


def test_fetch_unpacks_a_cached_wheel_and_load_file_imports_a_file_without_its_package_init(tmp_path):
    """No download: the wheel is already in the cache's dl/ folder. The package's __init__ raises, as a heavy
    package's would fail here; the kernel file's sibling import loads the real sibling file."""
    import zipfile

    g = _gallery()
    (tmp_path / "dl").mkdir()
    with zipfile.ZipFile(tmp_path / "dl" / "demo_pkg-1.0-py3-none-any.whl", "w") as z:
        z.writestr("demo_pkg/__init__.py", "raise ImportError('the whole package is not importable here')\n")
        z.writestr("demo_pkg/ops/__init__.py", "raise ImportError('nor this')\n")
        z.writestr("demo_pkg/ops/blocks.py", "BLOCK = 16\n")
        z.writestr("demo_pkg/ops/attn.py", "from .blocks import BLOCK\nfrom demo_pkg.missing import flag\nSIZE = BLOCK + flag\n")
    (tmp_path / "dl" / "demo_pkg-1.01-py3-none-any.whl").write_bytes(b"")  # another version: not taken
    root = g.fetch("demo-pkg", "1.0", tmp_path)
    assert (root / ".complete").read_text().strip() == "demo_pkg-1.0-py3-none-any.whl"
    assert g.fetch("demo-pkg", "1.0", tmp_path) == root  # unpacked once
    mod = g.load_file(root, "demo_pkg/ops/attn.py", {"demo_pkg.missing": {"flag": 1}})
    assert mod.SIZE == 17 and mod.__name__ == "demo_pkg.ops.attn"
    for name in [n for n in sys.modules if n.startswith("demo_pkg")]:
        del sys.modules[name]
