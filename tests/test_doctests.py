"""Every docstring example of the installed package, run under the module's one import name.

pytest's ``--doctest-modules`` would import ``bounds/costs.py`` a second time as ``bounds.costs`` (from its path);
the package installs it as ``attnio.bounds.costs`` only, so the examples are collected here from the package
itself: one module object per file.

A module that cannot be imported because an optional package is not installed (the extras of pyproject.toml:
Triton and torch, CuPy, OR-Tools, cvc5) is collected and skipped, naming the package; any other import error
fails.
"""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import attnio

# The top-level package and the design card's folders mapped into it (pyproject.toml, [tool.setuptools]).
ROOTS = ("attnio", "attnio.bounds", "attnio.algorithms", "attnio.solver", "attnio.reports")
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
# the packages of pyproject.toml's optional extras: a module needing one that is not installed is skipped
OPTIONAL = ("triton", "torch", "cupy", "ortools", "cvc5")
MISSING: dict[str, str] = {}  # module -> the optional package its import did not find


def _module_names() -> list[str]:
    names: set[str] = set()
    for root in ROOTS:
        pkg = importlib.import_module(root)
        names.add(root)
        for info in pkgutil.walk_packages(pkg.__path__, root + "."):
            if not info.name.endswith(".__main__"):  # ``python -m`` entry points run the command on import
                names.add(info.name)
    return sorted(names)


def _optional_missing(e: ModuleNotFoundError) -> str | None:
    top = (e.name or "").split(".")[0]
    return top if top in OPTIONAL else None


def _with_examples(name: str) -> bool:
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as e:
        if (missing := _optional_missing(e)) is None:
            raise
        MISSING[name] = missing
        return True  # collected, then skipped with the package named
    return any(t.examples for t in doctest.DocTestFinder().find(module, name))


MODULES = [n for n in _module_names() if _with_examples(n)]


def test_doctests_were_found():
    # the examples of the schedules and formulas are part of the documentation: losing them is a failure
    assert len(MODULES) >= 10, MODULES
    assert attnio.__name__ == "attnio"


@pytest.mark.parametrize("name", MODULES)
def test_doctest(name: str) -> None:
    if name in MISSING:
        pytest.skip(f"{name} needs {MISSING[name]}, an optional package that is not installed")
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tests = finder.find(module, name)  # globals: a copy of the module's, as pytest gives
    out: list[str] = []
    for t in sorted(tests, key=lambda t: t.name):
        runner.run(t, out=out.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(out)
