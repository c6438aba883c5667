"""The test tiers of tests/conftest.py: every entry of its TIERS and SAMPLED tables names a test file, or a test
function defined in that file, so a renamed or moved test cannot silently lose its marker (one test, listing
every bad entry)."""

from __future__ import annotations

import re
from pathlib import Path

import conftest

HERE = Path(__file__).parent


def _bad(mark: str, entry: str) -> str | None:
    file, _, name = entry.partition("::")
    path = HERE / file
    if not path.is_file():
        return f"{mark}: {file} does not exist"
    if name and not re.search(rf"^def {re.escape(name)}\(", path.read_text(encoding="utf-8"), re.M):
        return f"{mark}: no test {name} in {file}"
    return None


def test_every_tier_and_sample_entry_names_an_existing_test() -> None:
    entries = [(m, e) for m, es in conftest.TIERS.items() for e in es]
    entries += [("sampled", e) for e in conftest.SAMPLED]
    bad = [b for m, e in entries if (b := _bad(m, e)) is not None]
    assert bad == [], "\n".join(bad)
    assert all(n >= 1 for n in conftest.SAMPLED.values()), conftest.SAMPLED


def test_the_tiers_are_the_registered_markers() -> None:
    text = (HERE.parent / "pyproject.toml").read_text(encoding="utf-8")
    missing = [m for m in [*conftest.TIERS, "nightly"] if not re.search(rf'^\s*"{m}: ', text, re.M)]
    assert missing == [], f"not registered in pyproject's markers: {missing}"


def test_the_sample_keeps_first_and_last_evenly_spread() -> None:
    assert conftest._sample(10, 3) == {0, 4, 9}
    assert conftest._sample(2, 3) == {0, 1} and conftest._sample(5, 1) == {0}
    assert conftest._sample(599, 2) == {0, 598}
