"""The test tiers of tests/conftest.py: every entry of its TIERS table names a test file, or a test function
defined in that file, so a renamed or moved test cannot silently lose its marker."""

from __future__ import annotations

import re
from pathlib import Path

import conftest
import pytest

HERE = Path(__file__).parent


@pytest.mark.parametrize("mark, entry", [(m, e) for m, es in conftest.TIERS.items() for e in es])
def test_every_tier_entry_names_an_existing_test(mark: str, entry: str) -> None:
    file, _, name = entry.partition("::")
    path = HERE / file
    assert path.is_file(), f"{mark}: {file} does not exist"
    if name:
        assert re.search(rf"^def {re.escape(name)}\(", path.read_text(encoding="utf-8"), re.M), f"{mark}: no test {name} in {file}"


def test_the_tiers_are_the_registered_markers() -> None:
    text = (HERE.parent / "pyproject.toml").read_text(encoding="utf-8")
    for mark in conftest.TIERS:
        assert re.search(rf'^\s*"{mark}: ', text, re.M), f"{mark} is not registered in pyproject's markers"
