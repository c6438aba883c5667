"""Triton kernels in the gate and the report: named (kernel, workload) configurations whose counted bytes go
into the baseline (section ``triton``) and into the report's "Triton kernels" section.

The configurations are pulled, never pushed at import: :func:`configurations` is attnio's own kernels
(``attnio.triton.kernels.registry.builtin_entries``) plus the user's, registered with :func:`register` (``attnio
gate --kernels FILE.py`` imports a user's file that calls it). :func:`gate_entries` counts every configuration
(``{"triton": {key: {...}}}``, or ``{"unavailable": [...]}`` when Triton cannot count here);
:func:`compare` fails when a configuration's counted bytes grow or it disappears (and, under
``ATTNIO_REQUIRE_TRITON=1``, when Triton did not count); :func:`rows` are the report's rows (counted, formula,
bound, attnio's best schedule, ratios). Counts are cached (``attnio.triton.cache``).

>>> base = {"triton": {"k|N=8": {"reads_bytes": 10, "writes_bytes": 2, "total_bytes": 12}}}
>>> cur = {"triton": {"k|N=8": {"reads_bytes": 11, "writes_bytes": 2, "total_bytes": 13}}}
>>> compare(base, cur)
(['triton k|N=8: reads_bytes 10 -> 11 (+1 bytes)', 'triton k|N=8: total_bytes 12 -> 13 (+1 bytes)'], [])
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from attnio.core.errors import InvalidParameter
from attnio.triton.entry import GateKernel
from attnio.triton.kernels.registry import builtin_entries

FIELDS = ("reads_bytes", "writes_bytes", "total_bytes")

__all__ = ["FIELDS", "GateKernel", "available", "compare", "configurations", "gate_entries", "markdown", "measure",
           "register", "registered", "rows", "unregister"]

_REGISTRY: dict[str, GateKernel] = {}


def register(name: str, launch: Callable[..., Any], *, formula: Callable[[Any], int] | None = None,
             tags: tuple[str, ...] = (), **workload: Any) -> GateKernel:
    """Register ``launch`` at one workload under ``name`` (a user's configuration for the gate and report)."""
    if not callable(launch):
        raise InvalidParameter("launch", launch, "a launcher function")
    entry = GateKernel(name, launch, dict(workload), formula, tuple(tags))
    entry.build()  # validate now, not at gate time
    _REGISTRY[entry.key] = entry
    return entry


def registered() -> list[GateKernel]:
    """The user's registered configurations (:func:`register`), by key."""
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def unregister(key: str) -> None:
    _REGISTRY.pop(key, None)


def configurations() -> list[GateKernel]:
    """Every configuration the gate and the report count, by key: attnio's own kernels and the user's (a user's
    configuration with the key of one of attnio's replaces it)."""
    every = {e.key: e for e in builtin_entries()} | _REGISTRY
    return [every[k] for k in sorted(every)]


def available() -> str | None:
    """None when Triton and torch are installed and ``TRITON_INTERPRET`` is on, else why not. A query: it imports
    nothing and changes nothing (the CLI commands that count set ``TRITON_INTERPRET=1`` before anything
    imports Triton)."""
    from attnio.triton.hooks import interpret_enabled

    for mod in ("torch", "triton"):
        if importlib.util.find_spec(mod) is None:
            return f"triton or torch not installed ({mod}): pip install -e '.[triton]'"
    if not interpret_enabled():
        return "TRITON_INTERPRET=1 is not set (attnio gate and attnio report set it)"
    return None


def measure(entries: list[GateKernel] | None = None) -> list[tuple[GateKernel, Any]]:
    """(entry, attnio.triton.check result) of every configuration (default: :func:`configurations`), counted
    once per process and, for attnio's own kernels, cached on disk (``attnio.triton.cache``)."""
    from attnio.triton import cache
    from attnio.triton.check import check

    out = []
    for e in configurations() if entries is None else entries:
        r = cache.lookup(e)
        if r is None:
            r = check(e.launch, e.build())
            cache.store(e, r)
        out.append((e, r))
    return out


def gate_entries(entries: list[GateKernel] | None = None) -> dict[str, Any]:
    """The baseline section ``triton``: key -> counted reads/writes/total bytes (exact, deterministic); or
    ``{"unavailable": [why]}`` when Triton cannot count here (missing, ``TRITON_INTERPRET`` off, or an untested
    Triton whose hooks changed)."""
    from attnio.triton.hooks import UntestedTriton

    why = available()
    if why is not None:
        return {"unavailable": [f"triton: {why}"]}
    try:
        measured = measure(entries)
    except UntestedTriton as e:
        return {"unavailable": [f"triton: {e}"]}
    return {"triton": {e.key: {"reads_bytes": r.traffic.reads_total_bytes, "writes_bytes": r.traffic.writes_total_bytes,
                               "total_bytes": r.total_bytes} for e, r in measured}}


def compare(baseline: dict[str, Any], current: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(problems, notes): a configuration's bytes grew or it is missing -> problem; fell or new -> note.
    Without Triton in this run (``current`` has no ``triton`` section) the section is not gated: a note."""
    problems: list[str] = []
    notes: list[str] = []
    b, c = baseline.get("triton"), current.get("triton")
    if b is None:
        if c:
            notes.append(f"triton: {len(c)} kernel configurations, none in the baseline")
        return problems, notes
    if c is None:
        from attnio.triton.hooks import require_tested

        why = "; ".join(u for u in current.get("unavailable", []) if u.startswith("triton")) or "Triton unavailable"
        if require_tested():
            problems.append(f"triton: kernels not counted in this run ({why}); ATTNIO_REQUIRE_TRITON=1 requires them")
        else:
            notes.append(f"triton: kernels not counted in this run ({why}): not gated")
        return problems, notes
    for k in sorted(b):
        if k not in c:
            problems.append(f"triton {k}: configuration missing from this run")
            continue
        for f in FIELDS:
            old, new = b[k].get(f), c[k].get(f)
            if old is None or new is None:
                continue
            if new > old:
                problems.append(f"triton {k}: {f} {old} -> {new} (+{new - old} bytes)")
            elif new < old:
                notes.append(f"triton {k}: {f} {old} -> {new} ({new - old} bytes, improved)")
    notes += [f"triton {k}: new configuration" for k in sorted(set(c) - set(b))]
    return problems, notes


def rows(measured: list[tuple[GateKernel, Any]] | None = None) -> list[dict[str, Any]]:
    """The report's "Triton kernels" rows (forward and backward kernels): counted, formula, bound and attnio's best
    schedule (bytes), ratios."""
    out = []
    for e, r in measure() if measured is None else measured:
        formula = e.formula(r.workload) if e.formula is not None else None
        out.append({
            "kernel": e.name,
            "direction": r.direction,
            "workload": e.key.split("|", 1)[1],
            "counted_bytes": r.total_bytes,
            "formula_bytes": formula,
            "counted_over_formula": None if formula is None else r.total_bytes / formula,
            "lower_bound": r.lower_bound_id,
            "lower_bound_bytes": r.lower_bound_bytes,
            "counted_over_bound": r.ratio_to_bound,
            "best_schedule": r.best_schedule,
            "best_schedule_bytes": r.best_bytes,
            "counted_over_best": r.ratio_to_best,
            "outputs_ok": r.outputs_ok,
            "dominates": r.dominates,
        })
    return out


def markdown(table: list[dict[str, Any]]) -> str:
    """The section's Markdown (a table; a sentence when there are no rows)."""
    if not table:
        return "No Triton kernel configurations are registered (attnio.triton.gate.register)."
    head = ("| kernel | pass | workload | counted B | formula B | counted/formula | lower bound B | counted/bound "
            "| best schedule B | counted/best | outputs |\n|---|---|---|---:|---:|---:|---:|---:|---:|---:|---|")
    lines = [head]
    for r in table:
        f = "—" if r["formula_bytes"] is None else f"{r['formula_bytes']:,d}"
        fr = "—" if r["counted_over_formula"] is None else f"{r['counted_over_formula']:.3f}"
        lines.append(
            f"| {r['kernel']} | {r['direction']} | {r['workload']} | {r['counted_bytes']:,d} | {f} | {fr} | {r['lower_bound_bytes']:,d} "
            f"({r['lower_bound']}) | {r['counted_over_bound']:.3f} | {r['best_schedule_bytes']:,d} ({r['best_schedule']}) "
            f"| {r['counted_over_best']:.3f} | {'ok' if r['outputs_ok'] else 'WRONG'} |"
        )
    return "\n".join(lines)
