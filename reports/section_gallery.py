"""The report's "Gallery of shipped Triton kernels" section: third-party Triton attention kernels, fetched by
pinned package version and counted in Triton's interpreter by ``benchmarks/kernel_gallery.py``, which stores its
results in ``reports/gallery.json`` (docs/gallery.md). This section renders that committed file; it downloads
and counts nothing. Without the file it says so in one line.

:func:`section` is the report's section function (one entry in ``reports/report.py``'s ``SECTIONS``);
:func:`build` takes the section-builder class and the results (for tests, a fixture).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from attnio.reports.compute import Context
from attnio.reports.render import Section

#: where benchmarks/kernel_gallery.py stores its results
GALLERY_JSON = Path(__file__).resolve().parent / "gallery.json"
HEADERS = ["kernel", "project", "package", "file: function", "adapter lines", "shape", "counted bytes", "÷ compulsory",
           "best lower bound", "÷ bound", "attnio's best schedule", "÷ best", "formula", "outputs"]


def load(path: Path = GALLERY_JSON) -> dict[str, Any] | None:
    """The gallery's stored results, or None when the file is missing."""
    if not path.is_file():
        return None
    return json.loads(path.read_text())


def section(ctx: Context) -> Section:
    """The report's section function."""
    return build(Section, load())


def _ratio(x: Any) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isinf(x)) else f"{x:.3f}"


def build(section_cls: Any, data: dict[str, Any] | None) -> Any:
    """The section, built with ``section_cls`` from the gallery's results ``data`` (None: not run)."""
    s = section_cls("Gallery of shipped Triton kernels")
    if data is None:
        s.p("reports/gallery.json is missing: run `benchmarks/kernel_gallery.py` (it downloads the kernels' packages).")
        return s
    ks = data.get("kernels", [])
    projects = sorted({k["project"] for k in ks})
    bad = [k["name"] for k in ks if not k["formula_ok"]]
    s.p(
        f"{len(ks)} Triton attention kernels from {len(projects)} projects ({', '.join(projects)}), each fetched by "
        "its published package and pinned version and run unmodified in Triton's interpreter "
        f"(Triton {data.get('triton')}; `{data.get('command')}`; docs/gallery.md). Every byte is counted per active "
        "lane; each tensor's count is compared with a formula derived from the kernel's loop structure: "
        + ("all equal at every shape." if not bad else f"MISSED by {', '.join(bad)}.")
        + " Compulsory bytes: Q, K, V read once and the output written once; the best lower bound and attnio's "
        f"best schedule at M = {data.get('M', 0):,d} words."
    )
    rows = []
    for k in ks:
        for sh in k["shapes"]:
            rows.append([k["name"], k["project"], f"{k['package']}=={k['version']}",
                         f"{', '.join(k['files'])}: {k['function']}", k["adapter_lines"], sh["label"],
                         f"{sh['total_bytes']:,d}", _ratio(sh["ratio_to_compulsory"]),
                         f"{sh['lower_bound']} {sh['lower_bound_bytes']:,d}", _ratio(sh["ratio_to_lower_bound"]),
                         f"{sh['best_schedule']} {sh['best_bytes']:,d}", _ratio(sh["ratio_to_best_schedule"]),
                         "✓" if sh["formula_ok"] else "✗", "ok" if sh["outputs_ok"] else "over tolerance"])
    s.table(HEADERS, rows)
    s.table(["kernel", "what moves beyond the compulsory bytes", "note"],
            [[k["name"], k["waste"], k.get("note") or None] for k in ks])
    fitted = [k for k in ks if k.get("fit")]
    if fitted:
        s.p("Fitted closed forms (`--formula`, docs/gallery.md#fitted-closed-forms): attnio.triton.formula.fit through "
            "each kernel's adapter, exact on held-out shapes, compared with the hand-derived formula at every gallery, "
            "fit and held-out shape it describes, and the least c of formula ≤ c × best lower bound for "
            "1024 ≤ N ≤ 2²⁰ at d = 128 proved by z3 (anything else reads \"not proved\"); a kernel whose fit "
            "failed shows why, never a form.")
        s.table(FIT_HEADERS, [_fit_row(k["name"], k["fit"]) for k in fitted])
    return s


FIT_HEADERS = ["kernel", "mask, blocks", "fit shapes", "fit s", "held out", "= hand formula", "total bytes (fitted)",
               "vs best bound (z3)"]


def _fit_row(name: str, f: dict[str, Any]) -> list[Any]:
    if not f.get("exact"):
        return [name, "—", f.get("fit_shapes"), f.get("fit_seconds"), f"not fitted: {f.get('error')}", "—", "—", "—"]
    h, t = f["hand_formula"], f.get("compare", {}).get("tightest", {})
    c = "not proved" if t.get("status") != "proved" else f"within {_const(t['constant']):.2f}×, proved by z3"
    q = f.get("compare", {}).get("setting", {}).get("N_q")
    c += "" if q is None else f" (N_q = {q}, N_kv = N: a decode)"
    total = f.get("total_bytes") or " + ".join(f"{v}" for key, v in f["formulas"].items() if v != "0")
    return [name, f"{'causal' if f['causal'] else 'no mask'}, {tuple(f['block'])}", f["fit_shapes"], f["fit_seconds"],
            f"{len(f['held_out'])} ✓", f"{'✓' if h['equal'] else '✗'} at {h['shapes']} shapes", total, c]


def _const(x: str) -> float:
    from fractions import Fraction

    return float(Fraction(x))
