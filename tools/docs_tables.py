"""Write the catalog's tables into the docs, so a bound's status is stated in one place (its ``Bound`` record).

``python tools/docs_tables.py`` rewrites the text between the markers ``<!-- catalog:NAME -->`` and
``<!-- /catalog:NAME -->`` in README.md and docs/README.md; ``--check`` exits 1 (naming the file) where the text
differs from what the catalog gives (tests/test_docs.py runs the same check).

- ``bounds``: every bound with a derivation page: id, kind, status, page (docs/README.md);
- ``topics``: one row per topic (the id's first part): how many bounds, by status, and their pages (README.md).
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FILES = {"bounds": ROOT / "docs" / "README.md", "topics": ROOT / "README.md"}


def _page(doc: str, rel: str) -> str:
    """A link to ``doc`` (``docs/...``, maybe with an anchor) from a file in folder ``rel``."""
    target = doc if rel == "." else doc.removeprefix("docs/")
    return f"[{doc.removeprefix('docs/')}]({target})"


def bounds_table() -> str:
    from attnio.bounds.catalog import all_bounds

    rows = ["| bound | kind | status | derivation |", "|---|---|---|---|"]
    for b in sorted(all_bounds(), key=lambda b: b.id):
        if b.doc and b.kind != "exact":
            rows.append(f"| `{b.id}` | {b.kind} | {b.status} | {_page(b.doc, 'docs')} |")
    return "\n".join(rows)


def topics_table() -> str:
    from attnio.bounds.catalog import all_bounds

    by: dict[str, list] = defaultdict(list)
    for b in all_bounds():
        by[b.id.split(".")[0]].append(b)
    rows = ["| topic (id prefix) | bounds | status | pages |", "|---|---:|---|---|"]
    for topic in sorted(by):
        bs = by[topic]
        status = ", ".join(f"{n} {s}" for s, n in sorted(Counter(b.status for b in bs).items()))
        pages = sorted({b.doc.split("#")[0] for b in bs if b.doc})
        rows.append(f"| `{topic}` | {len(bs)} | {status} | {', '.join(_page(p, '.') for p in pages) or '—'} |")
    return "\n".join(rows)


TABLES = {"bounds": bounds_table, "topics": topics_table}


def render(text: str, name: str) -> str:
    start, end = f"<!-- catalog:{name} -->", f"<!-- /catalog:{name} -->"
    i, j = text.index(start) + len(start), text.index(end)
    return text[:i] + "\n" + TABLES[name]() + "\n" + text[j:]


def main(argv: list[str]) -> int:
    check = "--check" in argv
    bad = []
    for name, path in FILES.items():
        old = path.read_text()
        new = render(old, name)
        if new != old:
            if check:
                bad.append(str(path.relative_to(ROOT)))
            else:
                tmp = path.with_suffix(".tmp")
                tmp.write_text(new)
                tmp.replace(path)
    for f in bad:
        print(f"{f}: the catalog table is out of date (run python tools/docs_tables.py)", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
