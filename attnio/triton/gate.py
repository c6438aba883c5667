"""Triton kernels in the gate and the report: named (kernel, workload) configurations whose counted bytes go
into the baseline (section ``triton``) and into the report's "Triton kernels" section.

One registration point, :func:`register`: attnio's own kernels register themselves (``attnio.triton.kernels``),
and ``attnio gate --kernels FILE.py`` imports a user's file that calls it. :func:`gate_entries` counts every
registered configuration (``{"triton": {key: {...}}}``, or ``{"unavailable": [...]}`` without Triton);
:func:`compare` fails when a configuration's counted bytes grow or it disappears; :func:`rows` are the
report's rows (counted, formula, bound, attnio's best schedule, ratios).

>>> base = {"triton": {"k|N=8": {"reads_bytes": 10, "writes_bytes": 2, "total_bytes": 12}}}
>>> cur = {"triton": {"k|N=8": {"reads_bytes": 11, "writes_bytes": 2, "total_bytes": 13}}}
>>> compare(base, cur)
(['triton k|N=8: reads_bytes 10 -> 11 (+1 bytes)', 'triton k|N=8: total_bytes 12 -> 13 (+1 bytes)'], [])
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnio.core.errors import InvalidParameter

FIELDS = ("reads_bytes", "writes_bytes", "total_bytes")


@dataclass(frozen=True)
class GateKernel:
    """One named configuration: a launcher (attnio.triton.check's convention), a workload (``Workload.build``
    keywords), and optionally the kernel's exact formula in bytes (a function of the Workload)."""

    name: str
    launch: Callable[..., Any]
    workload: dict[str, Any]
    formula: Callable[[Any], int] | None = None
    tags: tuple[str, ...] = field(default=())

    @property
    def key(self) -> str:
        w = self.build()
        return (f"{self.name}|b={w.batch}|H={w.heads}|Hkv={w.kv_heads}|Nq={w.Nq}|Nkv={w.Nkv}|d={w.d}|dv={w.dv}"
                f"|causal={int(w.causal)}|{w.dtype}|M={w.M}")

    def build(self) -> Any:
        from attnio.core.workload import Workload

        kw = dict(self.workload)
        if not any(k in kw for k in ("M", "smem", "gpu")):
            kw["gpu"] = "h100"
        return Workload.build(**kw)


_REGISTRY: dict[str, GateKernel] = {}


def register(name: str, launch: Callable[..., Any], *, formula: Callable[[Any], int] | None = None,
             tags: tuple[str, ...] = (), **workload: Any) -> GateKernel:
    """Register ``launch`` at one workload under ``name`` (the registration point of the gate and report)."""
    if not callable(launch):
        raise InvalidParameter("launch", launch, "a launcher function")
    entry = GateKernel(name, launch, dict(workload), formula, tuple(tags))
    entry.build()  # validate now, not at gate time
    _REGISTRY[entry.key] = entry
    return entry


def registered() -> list[GateKernel]:
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def unregister(key: str) -> None:
    _REGISTRY.pop(key, None)


def available() -> str | None:
    """None when Triton's interpreter can count here, else why not. Turns the interpreter on first: Triton reads
    ``TRITON_INTERPRET`` when it is imported, so it must be set before (the gate and the report count on the CPU)."""
    os.environ["TRITON_INTERPRET"] = "1"
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401
    except ImportError as e:
        return f"triton or torch not installed ({e.name})"
    from attnio.triton.count import TESTED_TRITON_VERSIONS, triton_version

    if triton_version() not in TESTED_TRITON_VERSIONS:
        return f"Triton {triton_version()} is untested (tested: {', '.join(TESTED_TRITON_VERSIONS)})"
    return None


def _load_builtin() -> None:
    """attnio's own kernels register on import (when the package has any)."""
    os.environ["TRITON_INTERPRET"] = "1"
    import importlib

    importlib.import_module("attnio.triton.kernels")


def measure(entries: list[GateKernel] | None = None) -> list[tuple[GateKernel, Any]]:
    """(entry, attnio.triton.check result) of every registered configuration."""
    from attnio.triton.check import check

    if entries is None:
        _load_builtin()
        entries = registered()
    return [(e, check(e.launch, e.build())) for e in entries]


def gate_entries(entries: list[GateKernel] | None = None) -> dict[str, Any]:
    """The baseline section ``triton``: key -> counted reads/writes/total bytes (exact, deterministic)."""
    why = available()
    if why is not None:
        return {"unavailable": [f"triton: {why}"]}
    return {"triton": {e.key: {"reads_bytes": r.traffic.reads_total_bytes, "writes_bytes": r.traffic.writes_total_bytes,
                               "total_bytes": r.total_bytes} for e, r in measure(entries)}}


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
        notes.append("triton: kernels not counted in this run (Triton unavailable): not gated")
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
