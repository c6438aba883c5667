"""Bring your own algorithm: the example of docs/byo-algorithm.md, run end to end in a fresh pytest process,
and the checker catching a wrong claim and a wrong formula."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "byo-algorithm.md"


def _doc_files() -> dict[str, str]:
    """The code blocks of the doc that start with ``# file: NAME``."""
    out = {}
    for block in re.findall(r"```(?:python|toml)\n(.*?)```", DOC.read_text(), flags=re.S):
        first, _, rest = block.partition("\n")
        m = re.fullmatch(r"# file: (\S+)", first.strip())
        if m:
            out[m.group(1)] = rest
    return out


@pytest.fixture
def user_dir(tmp_path: Path) -> Path:
    files = _doc_files()
    assert set(files) == {"my_algo.py", "test_my_algo.py", "byo-grid.toml"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(cwd)}
    env.pop("CI", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


def test_doc_example_end_to_end_check_store_and_report(user_dir: Path) -> None:
    out = _pytest(user_dir, "test_my_algo.py", "--attnio-store", "byo.sqlite", "--attnio-report", "byo-report")
    assert out.returncode == 0, out.stdout + out.stderr
    db = sqlite3.connect(user_dir / "byo.sqlite")
    rows = [json.loads(r) for (r,) in db.execute("SELECT row FROM results")]
    db.close()
    assert len(rows) > 20 and all(r["algorithm"] == "my_rowwise" and r["status"] == "ok" for r in rows)
    assert all(r["io"] == r["formula_io"] for r in rows)
    md = (user_dir / "byo-report" / "REPORT.md").read_text()
    assert "| my_rowwise |" in md and (user_dir / "byo-report" / "report.html").is_file()


def test_doc_example_sweep_with_a_grid_file_that_imports_the_algorithm(user_dir: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(user_dir)}
    cli = [sys.executable, "-c", "import sys; from attnio.cli import main; sys.exit(main())"]
    out = subprocess.run([*cli, "sweep", "--grid", "byo-grid.toml", "--store", "byo.sqlite", "--workers", "0", "--no-progress"], cwd=user_dir, capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    assert "16 configurations" in out.stdout and "0 recorded as errors" in out.stdout, out.stdout


WRONG = '''
import my_algo  # noqa: F401
from attnio.bounds.costs import FORMULAS, CostFormula
from attnio.bounds.symbols import M, N, d


def test_claim_too_small(attnio_check):
    attnio_check("my_rowwise", claimed_upper=2 * N**2 * d)


def test_formula_off_by_one_word(attnio_check, monkeypatch):
    f = FORMULAS["my_rowwise"]
    monkeypatch.setitem(FORMULAS, "my_rowwise", CostFormula(f.algorithm, f.reads, f.writes + 1, f.valid, f.blocks, f.derivation, f.leading))
    attnio_check("my_rowwise")
'''


def test_checker_fails_a_wrong_claim_and_a_wrong_formula_with_readable_lines(user_dir: Path) -> None:
    (user_dir / "test_wrong.py").write_text(WRONG)
    out = _pytest(user_dir, "test_wrong.py")
    assert out.returncode == 1, out.stdout
    assert "2 failed" in out.stdout
    assert "> claimed upper bound" in out.stdout
    assert re.search(r"formula IOCount\(reads_words=\d+, writes_words=\d+\) != measured", out.stdout)


def test_checker_in_process_reports_its_checks(monkeypatch: pytest.MonkeyPatch, user_dir: Path) -> None:
    from attnio.algorithms import registry
    from attnio.bounds import costs
    from attnio.testing.pytest_plugin import check_algorithm

    monkeypatch.syspath_prepend(str(user_dir))
    monkeypatch.setattr(registry, "REGISTRY", dict(registry.REGISTRY))  # the user's registration stays here
    monkeypatch.setattr(costs, "FORMULAS", dict(costs.FORMULAS))
    sys.modules.pop("my_algo", None)
    try:
        import my_algo  # noqa: F401

        res = check_algorithm("my_rowwise", configs=[(5, 2, 9), (7, 4, 40)], large_N=(64,))
    finally:
        sys.modules.pop("my_algo", None)
    assert res.ok, res.problems
    assert len(res.rows) == 3 and res.checks >= 3 * 2 + 3


def test_registering_a_different_algorithm_under_a_taken_name_is_an_invalid_parameter() -> None:
    import dataclasses

    from attnio.algorithms import registry
    from attnio.core.errors import InvalidParameter

    spec = registry.get("flash2")
    assert registry.register(spec) is spec  # the same spec again is allowed (re-import of a module)
    with pytest.raises(InvalidParameter, match="not registered yet"):
        registry.register(dataclasses.replace(spec, summary="another flash2"))
    assert registry.get("flash2") is spec
