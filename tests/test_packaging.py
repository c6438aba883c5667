"""The distribution installs exactly one top-level import package, ``attnio``, and keeps its layer contracts.

The design card's folders stay at the repository root and are mapped into ``attnio`` by the build backend
(pyproject.toml); these tests read the built wheel, i.e. what ``pip install .`` puts into site-packages.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # built from a copy of the working tree, so the build writes nothing (build/, *.egg-info) into the repository
    src = tmp_path_factory.mktemp("src")
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "-z"], cwd=ROOT, capture_output=True,
                           check=True).stdout.decode().split("\0")
    for f in filter(None, files):
        if (ROOT / f).is_file():
            (src / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / f, src / f)
    r = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(out), str(src)],
        capture_output=True,
        text=True,
    )
    if r.returncode != 0 and "setuptools" in r.stderr and "No module named" in r.stderr:
        pytest.skip("setuptools is not installed in this environment (pip install -e '.[dev]' brings it)")
    assert r.returncode == 0, r.stderr
    (whl,) = out.glob("attnio-*.whl")
    return whl


def _dist_file(z: zipfile.ZipFile, name: str) -> str:
    (path,) = [n for n in z.namelist() if n.endswith(".dist-info/" + name)]
    return z.read(path).decode()


def test_wheel_installs_one_top_level_package(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        assert _dist_file(z, "top_level.txt").split() == ["attnio"]
        record = [line.split(",")[0] for line in _dist_file(z, "RECORD").splitlines() if line]
    tops = {p.split("/")[0] for p in record}
    assert tops == {"attnio", next(t for t in tops if t.endswith(".dist-info"))}, sorted(tops)
    # the design card's folders are inside the one package, with their data files
    for sub in ("bounds/costs.py", "algorithms/machine.py", "solver/engine.py", "reports/gate.py",
                "algorithms/cuda/flash2.cu", "solver/pebble/solve.py", "cli/run.py"):
        assert f"attnio/{sub}" in record, sub
    for generic in ("bounds", "algorithms", "solver", "reports"):
        assert not any(p.startswith(generic + "/") for p in record), generic


def test_no_generic_top_level_name_is_importable_from_an_installed_attnio(tmp_path: Path) -> None:
    # Outside the repository (whose root would be on sys.path as the working folder), only `attnio` imports.
    code = "import importlib.util as u; print([n for n in ('bounds','algorithms','solver','reports') if u.find_spec(n)])"
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"
    r = subprocess.run([sys.executable, "-c", "import attnio.bounds.costs as c; print(c.__name__)"], cwd=tmp_path,
                       capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "attnio.bounds.costs"


@pytest.mark.skipif(shutil.which("lint-imports") is None and not (Path(sys.executable).parent / "lint-imports").exists(),
                    reason="import-linter not installed (pip install -e '.[dev]')")
def test_layer_contracts_hold_on_the_installed_package() -> None:
    env_path = str(Path(sys.executable).parent)
    r = subprocess.run(["bash", str(ROOT / "tools" / "lint_imports.sh")], capture_output=True, text=True,
                       env={"PATH": env_path + ":/usr/bin:/bin"})
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-2000:]
    assert "0 broken" in r.stdout


def _readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("```bash\n") + len("```bash\n")
    return text[start:text.index("```", start)].strip().splitlines()


def test_ci_runs_the_readme_test_line_as_written() -> None:
    """.ci/run holds the README's second command (the test line: the second line of its first code block) as one
    line of its own, and installs nothing else before it (no `pip install` of an extra that could fail quietly)."""
    first, second = _readme_commands()[:2]
    run = (ROOT / ".ci/run").read_text(encoding="utf-8").splitlines()
    assert second in run, f".ci/run does not run the README's test line: {second}"
    before = run[: run.index(second)]
    assert not [x for x in before if re.search(r"\bpip\b", x) and not x.lstrip().startswith("#")], before
    assert "python -m pytest -q" in second and "[dev," in second and "triton" in second
    assert first.endswith("attnio report") and "triton" in first


def test_the_extras_the_readme_installs_exist() -> None:
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    for line in _readme_commands()[:2]:
        for group in re.findall(r'\.\[([^\]]*)\]', line):
            unknown = [e for e in group.split(",") if e not in extras]
            assert unknown == [], f"README installs unknown extras {unknown}"
    assert any(x.startswith("pytest-xdist") for x in extras["dev"])
