"""The claims with their verdicts, and the bounds catalog, as pandas DataFrames (``attnio.verdicts()``,
``attnio.catalog_frame()``); the sweep's rows are :mod:`attnio.reports.frames`.

Verdicts come from one of two sources, and the frame's ``source`` column says which: the committed proof record
reports/crosscheck.json (no solver runs; a claim changed since it was recorded is ``stale``), or a verification
run now.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pandas as pd

from attnio.core.errors import InvalidParameter

VERDICT_SOURCES = ("record", "verify")
RECORD = "crosscheck.json"  # reports/crosscheck.json: `attnio verify --solver both --record reports/crosscheck.json`


def verdict_frame(source: str = "record", claim_ids: Iterable[str] | str | None = None, *, solver: str = "z3",
                  record: Any = None) -> pd.DataFrame:
    """The claims with their verdicts, one row per claim, sorted by id: ``id``, ``kind``, ``claim`` (its
    statement), ``about`` (the bounds it is about, a list), ``verdict``, ``z3``, ``cvc5`` (each solver's answer),
    ``source``.

    ``source="record"``: the committed proof record (reports/crosscheck.json, or ``record``), without running a
    solver; a claim whose fingerprint no longer matches the record (new or changed since) has verdict ``stale``.
    ``source="verify"``: run the solver now (``solver``: z3, cvc5 or both; every claim takes minutes)."""
    from pathlib import Path

    from attnio.solver.claims import all_claims
    from attnio.solver.verify import SOLVERS, verify_all

    if source not in VERDICT_SOURCES:
        raise InvalidParameter("source", source, "one of " + ", ".join(VERDICT_SOURCES))
    if solver not in SOLVERS:
        raise InvalidParameter("solver", solver, "one of " + ", ".join(SOLVERS))
    ids = [claim_ids] if isinstance(claim_ids, str) else None if claim_ids is None else list(claim_ids)
    cs = {c.id: c for c in all_claims()}
    for i in ids or ():
        if i not in cs:
            raise InvalidParameter("claim", i, "a claim id (attnio.claims() lists them)")
    rows = []
    if source == "verify":
        for v in verify_all(ids, solver=solver):
            rows.append({"id": v.id, "kind": v.kind, "claim": v.description, "about": sorted(v.about), "verdict": v.status,
                         "z3": v.solvers.get("z3"), "cvc5": v.solvers.get("cvc5"), "source": f"verify ({solver})"})
    else:
        import json

        from attnio.solver.verify import fingerprint

        path = Path(record) if record is not None else Path(__file__).resolve().parent / RECORD
        try:
            rec = json.loads(path.read_text(encoding="utf-8"))["claims"]
            if not isinstance(rec, dict):
                raise TypeError("claims is not an object")
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise InvalidParameter("record", str(path), f"a proof record written by `attnio verify --record` ({type(e).__name__})") from None
        for cid in ids if ids is not None else sorted(cs):
            c, r = cs[cid], rec.get(cid)
            fresh = isinstance(r, dict) and r.get("fingerprint") == fingerprint(c)
            answers = (r.get("solvers") or {}) if fresh else {}
            rows.append({"id": cid, "kind": c.kind, "claim": c.description, "about": sorted(c.about),
                         "verdict": r.get("status") if fresh else "stale", "z3": answers.get("z3"), "cvc5": answers.get("cvc5"),
                         "source": f"record ({path.name})"})
    cols = {"id": "string", "kind": "string", "claim": "string", "about": "object", "verdict": "string", "z3": "string", "cvc5": "string", "source": "string"}
    f = pd.DataFrame(rows, columns=list(cols)).astype(cols)
    return f.sort_values("id", kind="stable").reset_index(drop=True)


def catalog_frame(what: str = "bounds") -> pd.DataFrame:
    """The catalog as a frame, one row per bound (``what="bounds"``) or per claim (``what="claims"``), sorted by id.

    Bounds: ``id``, ``kind``, ``model``, ``cdag``, ``computation``, ``statement``, ``formula``, ``regime``,
    ``explicit``, ``constant`` (text), ``provenance``, ``status``, ``doc``, ``attained_by`` (a list), ``regimes``
    (the reader's regimes it speaks about, as the report groups them), ``claims`` (how many claims are about it).
    Claims: ``id``, ``kind``, ``claim``, ``about`` (a list), ``provenance``."""
    from attnio.bounds.expr import to_text
    from attnio.reports import compute, sources
    from attnio.solver.claims import all_claims

    if what not in ("bounds", "claims"):
        raise InvalidParameter("what", what, "one of bounds, claims")
    cs = all_claims()
    if what == "claims":
        cols = {"id": "string", "kind": "string", "claim": "string", "about": "object", "provenance": "string"}
        rows = [{"id": c.id, "kind": c.kind, "claim": c.description, "about": sorted(c.about), "provenance": getattr(c, "provenance", "") or None} for c in cs]
    else:
        n_claims: dict[str, int] = {}
        for c in cs:
            for b in c.about:
                n_claims[b] = n_claims.get(b, 0) + 1
        cols = {"id": "string", "kind": "string", "model": "string", "cdag": "string", "computation": "string", "statement": "string",
                "formula": "string", "regime": "string", "explicit": "boolean", "constant": "string", "provenance": "string",
                "status": "string", "doc": "string", "attained_by": "object", "regimes": "object", "claims": "Int64"}
        rows = [{"id": b.id, "kind": b.kind, "model": b.model, "cdag": b.cdag, "computation": b.computation, "statement": b.statement,
                 "formula": to_text(b.expr), "regime": " ∧ ".join(str(r) for r in b.regime) or "all", "explicit": b.explicit,
                 "constant": None if b.constant is None else str(b.constant), "provenance": b.provenance, "status": b.status,
                 "doc": b.doc, "attained_by": list(b.attained_by), "regimes": compute.bound_regimes(b), "claims": n_claims.get(b.id, 0)}
                for b in sources.all_bounds()]
    f = pd.DataFrame(rows, columns=list(cols)).astype(cols)
    return f.sort_values("id", kind="stable").reset_index(drop=True)
