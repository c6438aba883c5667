"""Every docstring example of the installed package, run under the module's one import name.

pytest's ``--doctest-modules`` would import ``bounds/costs.py`` a second time as ``bounds.costs`` (from its path);
the package installs it as ``attnio.bounds.costs`` only, so the examples are collected here from the package
itself: one module object per file.
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


def _module_names() -> list[str]:
    names: set[str] = set()
    for root in ROOTS:
        pkg = importlib.import_module(root)
        names.add(root)
        for info in pkgutil.walk_packages(pkg.__path__, root + "."):
            if not info.name.endswith(".__main__"):  # ``python -m`` entry points run the command on import
                names.add(info.name)
    return sorted(names)


def _with_examples(name: str) -> bool:
    module = importlib.import_module(name)
    return any(t.examples for t in doctest.DocTestFinder().find(module, name))


MODULES = [n for n in _module_names() if _with_examples(n)]


def test_doctests_were_found():
    # the examples of the schedules and formulas are part of the documentation: losing them is a failure
    assert len(MODULES) >= 10, MODULES
    assert attnio.__name__ == "attnio"


@pytest.mark.parametrize("name", MODULES)
def test_doctest(name: str) -> None:
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tests = finder.find(module, name)  # globals: a copy of the module's, as pytest gives
    out: list[str] = []
    for t in sorted(tests, key=lambda t: t.name):
        runner.run(t, out=out.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(out)
