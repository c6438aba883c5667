"""The proof record: what z3 and cvc5 answered on each claim of the catalog, and under which encoding.

The committed record (reports/crosscheck.json, written by ``attnio verify --solver both --record
reports/crosscheck.json``) holds a header and one entry per claim::

    {"schema": 2, "solver": "z3+cvc5",
     "versions": {"z3": "4.15.4", "cvc5": "1.3.1"},      # the solvers that answered
     "encoding": "<sha256 of the encoding's sources>",    # encoding_digest()
     "claims": {"sy.meet": {"fingerprint": "...", "status": "proved",
                            "solvers": {"z3": "proved", "cvc5": "proved"}}, ...}}

An entry is **fresh** while the claim's fingerprint (:func:`attnio.solver.verify.fingerprint`: its statement and
its symbols' domains) is the one recorded, both solvers proved it, and the header is the one of this
installation: the same solver versions and the same encoding digest (a change to the translator, the engine,
the relaxations, the formulas, the verifier or the expression trees makes every entry stale). ``attnio verify
--stale`` proves only the claims whose entry is not fresh; with ``--record`` it merges their verdicts into the
record. The record is evidence of runs, never an input to a verdict.

>>> stale({"schema": 2, "claims": {}}, {"a": "f1"}, {"versions": {}, "encoding": "x"})
['a']
>>> rec = {"schema": 2, "versions": {}, "encoding": "x",
...        "claims": {"a": {"fingerprint": "f1", "status": "proved", "solvers": {"z3": "proved", "cvc5": "proved"}}}}
>>> stale(rec, {"a": "f1", "b": "f2"}, {"versions": {}, "encoding": "x"})
['b']
>>> stale(rec, {"a": "f1"}, {"versions": {}, "encoding": "y"})  # the encoding changed: every claim
['a']
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

SCHEMA = 2
# The modules whose text decides what a claim means to a solver (package-relative module names). A change to
# any of them makes every entry of the record stale.
ENCODING_MODULES = (
    "attnio.solver.translator",
    "attnio.solver.engine",
    "attnio.solver.relax",
    "attnio.solver.logic",
    "attnio.solver.verify",
    "attnio.bounds.expr",
)


def encoding_digest() -> str:
    """sha256 over the source files of :data:`ENCODING_MODULES` (each file's name and bytes, in that order)."""
    import importlib.util

    h = hashlib.sha256()
    for name in ENCODING_MODULES:
        spec = importlib.util.find_spec(name)
        assert spec is not None and spec.origin is not None, name
        h.update(name.encode() + b"\0" + Path(spec.origin).read_bytes() + b"\0")
    return h.hexdigest()


def solver_versions() -> dict[str, str]:
    """The versions of z3 and cvc5 installed here ("missing" for one that is not)."""
    out: dict[str, str] = {}
    try:
        import z3

        out["z3"] = z3.get_version_string()
    except ImportError:
        out["z3"] = "missing"
    try:
        import cvc5

        out["cvc5"] = str(cvc5.__version__)
    except ImportError:
        out["cvc5"] = "missing"
    return out


def header() -> dict[str, Any]:
    """The header a record written here would carry: solver versions and encoding digest."""
    return {"versions": solver_versions(), "encoding": encoding_digest()}


def current_fingerprints() -> dict[str, str]:
    """claim id -> fingerprint, for every claim of the catalog as it is now."""
    from attnio.solver.claims import all_claims
    from attnio.solver.verify import fingerprint

    return {c.id: fingerprint(c) for c in all_claims()}


def load(path: str | Path) -> dict[str, Any] | None:
    """The record at ``path``, or None when there is none or it is not a record (then every claim is stale)."""
    p = Path(path)
    if not p.is_file():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("claims"), dict):
        return None
    return data


def header_matches(record: Mapping[str, Any] | None, here: Mapping[str, Any]) -> bool:
    """True when ``record`` was written by this schema, these solver versions and this encoding."""
    return (record is not None and record.get("schema") == SCHEMA and record.get("versions") == here["versions"]
            and record.get("encoding") == here["encoding"])


def entry_fresh(entry: object, fp: str) -> bool:
    """One entry: the fingerprint recorded is ``fp`` and z3 and cvc5 both proved the claim."""
    if not isinstance(entry, dict) or entry.get("fingerprint") != fp or entry.get("status") != "proved":
        return False
    solvers = entry.get("solvers") or {}
    return solvers.get("z3") == "proved" and solvers.get("cvc5") == "proved"


def stale(record: Mapping[str, Any] | None, current: Mapping[str, str], here: Mapping[str, Any]) -> list[str]:
    """The ids of ``current`` (id -> fingerprint) whose entry is missing, changed or not proved by both solvers;
    all of them when the record's header is not ``here`` (another schema, solver version or encoding)."""
    if not header_matches(record, here):
        return sorted(current)
    assert record is not None
    claims = record["claims"]
    return sorted(i for i, fp in current.items() if not entry_fresh(claims.get(i), fp))


def entry(fp: str, status: str, solvers: Mapping[str, str]) -> dict[str, Any]:
    return {"fingerprint": fp, "status": status, "solvers": dict(solvers)}


def merged(record: Mapping[str, Any] | None, verdicts: Iterable[Any], current: Mapping[str, str],
           here: Mapping[str, Any]) -> dict[str, Any]:
    """The record after a run: the entries of ``record`` that are still fresh, the ``verdicts`` of this run (each
    with its claim's current fingerprint) replacing theirs, claims no longer in ``current`` dropped, and the
    header ``here``. A record whose header differs keeps none of its entries."""
    keep: dict[str, Any] = {}
    if header_matches(record, here):
        assert record is not None
        keep = {i: e for i, e in record["claims"].items() if i in current and entry_fresh(e, current[i])}
    for v in verdicts:
        keep[v.id] = entry(current[v.id], v.status, v.solvers)
    return {"schema": SCHEMA, "solver": "z3+cvc5", **here, "claims": dict(sorted(keep.items()))}


def dumps(record: Mapping[str, Any]) -> str:
    return json.dumps(record, indent=1, sort_keys=True) + "\n"
