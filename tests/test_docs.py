"""The docs agree with the catalog: one place for each fact (a bound's status is its ``Bound`` record's).

- the generated tables (README.md by topic, docs/README.md by bound) are what the catalog gives;
- a page's "Status:" line states the catalog status of every catalog id it names;
- no page, docstring or comment calls a refereed bound "not (yet) refereed" near its id;
- every docs page is reachable from the index (docs/README.md), directly or as a bound's derivation page.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from attnio.bounds.catalog import all_bounds

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
STATUS = {b.id: b.status for b in all_bounds()}


def _normal(status: str) -> str:
    return status.replace("derived here, refereed", "derived here (refereed)")


def test_the_generated_tables_are_current() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "docs_tables.py"), "--check"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


def _status_paragraphs() -> list[tuple[Path, str]]:
    out = []
    for page in sorted(DOCS.rglob("*.md")):
        text = page.read_text()
        for m in re.finditer(r"Status: \*\*(.+?)\*\*(.*?)(?:\n\n|$)", text, re.S):
            out.append((page, m.group(0)))
    return out


def test_each_status_line_states_the_catalog_status_of_the_ids_it_names() -> None:
    checked = 0
    for page, para in _status_paragraphs():
        said = _normal(re.match(r"Status: \*\*(.+?)\*\*", para).group(1).strip())
        named = re.search(r"catalog ids? (.*?)(?:model|;|\)|$)", para, re.S)  # the ids the page derives
        ids = [i for i in re.findall(r"`([a-z0-9_.*-]+)`", named.group(1)) if i in STATUS] if named else []
        for i in ids:
            assert _normal(STATUS[i]) == said, f"{page.relative_to(ROOT)} says {said!r} of {i}; the catalog: {STATUS[i]!r}"
            checked += 1
    assert checked >= 12, checked  # the derivation pages name their ids in the status line


def test_no_refereed_bound_is_called_unrefereed_near_its_id() -> None:
    refereed = [i for i, s in STATUS.items() if "refereed" in s]
    files = [*DOCS.rglob("*.md"), *(ROOT / "solver").rglob("*.py"), *(ROOT / "bounds").rglob("*.py"), ROOT / "README.md"]
    bad = []
    for f in files:
        lines = f.read_text().splitlines()
        for n, line in enumerate(lines):
            if re.search(r"not (yet )?refereed", line, re.I):
                near = " ".join(lines[max(0, n - 1): n + 2])
                bad += [f"{f.relative_to(ROOT)}:{n + 1}: {i}" for i in refereed if re.search(rf"`?{re.escape(i)}\b", near)]
    assert not bad, bad


def test_every_page_is_reachable_from_the_index() -> None:
    index = (DOCS / "README.md").read_text()
    linked = {(DOCS / m).resolve() for m in re.findall(r"\]\(([^)#]+)", index)}
    derivations = {(ROOT / b.doc.split("#")[0]).resolve() for b in all_bounds() if b.doc}
    pages = {p.resolve() for p in DOCS.rglob("*.md")} - {(DOCS / "README.md").resolve()}
    missing = sorted(str(p.relative_to(ROOT)) for p in pages - linked - derivations)
    # derivation pages that no bound names (supporting pages) must be linked from the index or from a bound's page
    from_pages = {(p.parent / m).resolve() for p in derivations | linked if p.exists()
                  for m in re.findall(r"\]\(([^)#:]+\.md)", p.read_text())}
    missing = [m for m in missing if (ROOT / m).resolve() not in from_pages]
    assert not missing, missing
