"""The public API at the package root: every name in ``__all__`` resolves, is documented and typed; importing
attnio (or its small base modules) loads neither the solver nor the machine; the README's Python example runs."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

import attnio

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_resolves_and_has_a_docstring() -> None:
    assert sorted(attnio.__all__) == sorted(set(attnio.__all__))
    for name in attnio.__all__:
        obj = getattr(attnio, name)
        assert inspect.getdoc(obj), name
        if inspect.isfunction(obj):
            hints = inspect.get_annotations(obj)
            assert "return" in hints, name
    assert set(attnio.__all__) <= set(dir(attnio))
    with pytest.raises(AttributeError):
        attnio.no_such_name  # noqa: B018


def test_import_of_the_base_modules_loads_no_layer() -> None:
    code = (
        "import sys, attnio, attnio.core.errors, attnio.core.counts, attnio.core.validate; "
        "print(sorted(m for m in sys.modules if m.startswith(('attnio.algorithms', 'attnio.solver', 'attnio.bounds', 'attnio.reports', 'z3'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_count_equals_cost_and_run_matches_both() -> None:
    c = attnio.count("flash2", N=1000, d=64, M=8192)
    assert isinstance(c, attnio.IOCount) and c == attnio.cost("flash2", N=1000, d=64, M=8192)
    r = attnio.run("square_tiling", N=40, d=8, M=64, seed=0)
    assert r.measurement.io == attnio.cost("square_tiling", N=40, d=8, M=64) and r.max_abs_error < 1e-9


@pytest.mark.parametrize("name", ["flash1-bwd", "standard-bwd", "square_tiling-bwd", "flash2-square-bwd",
                                  "kv_stationary", "split_v", "flash2-square", "square_tiling-io"])
def test_cost_of_a_workload_run_per_head_is_what_count_measures(name: str) -> None:
    """count(name, w) runs a schedule with no workload formula per head on a plain workload (N_q = N_kv, no mask;
    a backward also kv_heads = heads): cost(name, w) gives the same figure, batch·H × the one-head formula."""
    from attnio.core.workload import Workload

    for w in (Workload.build(batch=2, heads=3, N=24, d=4, M=160), Workload.build(heads=1, N=40, d=8, M=640)):
        assert attnio.cost(name, w) == attnio.count(name, w) == attnio.count(name, w, schedule="per-head")
    if not name.endswith("-bwd"):  # a forward runs per head on grouped K/V heads too
        w = Workload.build(batch=2, heads=4, kv_heads=2, N=24, d=4, M=160)
        assert attnio.cost(name, w) == attnio.count(name, w)


def test_cost_refuses_what_count_refuses_naming_the_backward_formulas() -> None:
    from attnio.core.workload import Workload

    for kw in ({"kv_heads": 1}, {"causal": True}):
        w = Workload.build(heads=2, N=24, d=4, M=160, **kw)
        with pytest.raises(attnio.InvalidParameter, match="a backward with a workload formula"):
            attnio.cost("flash1-bwd", w)


def test_catalog_bound_claims_and_errors() -> None:
    ids = [b.id for b in attnio.catalog()]
    assert ids == sorted(ids) and "sy.thm3.5" in ids
    assert attnio.bound("sy.thm3.5").attained_by == ("square_tiling",)
    assert [c.id for c in attnio.claims(about="sy.thm3.5")] == ["tight.square_tiling"]
    with pytest.raises(attnio.InvalidParameter, match="bound='nope'"):
        attnio.bound("nope")
    with pytest.raises(attnio.InvalidParameter, match="M=3"):
        attnio.count("square_tiling", N=8, d=4, M=3)
    (v,) = attnio.verify("tight.square_tiling")
    assert v.status == "proved" and v.constant == "33/2"


def _readme_python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_python_example_runs() -> None:
    blocks = _readme_python_blocks()
    assert blocks and all("import attnio" in b for b in blocks)
    for code in blocks:
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
