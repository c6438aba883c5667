"""The report's "Triton kernels" section: the registered Triton kernel configurations (``attnio.triton.gate``),
each counted exactly in Triton's interpreter, beside its formula, the best proved lower bound for its workload
and attnio's best schedule (docs/triton.md).

:func:`section` is the report's section function (one entry in ``reports/report.py``'s ``SECTIONS``);
:func:`build` takes the section-builder class and, for tests, the measured entries.
"""

from __future__ import annotations

from typing import Any

from attnio.reports.compute import Context
from attnio.reports.render import Section

HEADERS = ["kernel", "pass", "workload", "counted bytes", "formula bytes", "counted ÷ formula", "best lower bound",
           "bound bytes", "counted ÷ bound", "attnio's best schedule", "its bytes", "counted ÷ best", "outputs"]


def section(ctx: Context) -> Section:
    """The report's section function."""
    return build(Section)


def build(section_cls: Any, measured: list[tuple[Any, Any]] | None = None) -> Any:
    """The section, built with ``section_cls``; ``measured``: (GateKernel, check result) pairs (default: every
    registered configuration, counted now)."""
    from attnio.triton import gate

    s = section_cls("Triton kernels")
    s.p(
        "Triton kernels counted exactly on the CPU: every global load and store of Triton's interpreter, per "
        "active lane (docs/triton.md). These are the kernels' requested bytes in the two-level model (no L2, no "
        "sectors), beside the kernel's own exact formula, the best proved lower bound for the workload and the "
        "exact count of attnio's best schedule for it; outputs checked against the float64 reference. Forward "
        "kernels first, then backward ones (the bound is then the best backward bound, the schedules attnio's "
        "backward schedules, and the outputs dQ, dK, dV against float64 autograd)."
    )
    why = gate.available() if measured is None else None
    if why is not None:
        s.p(f"Not counted in this run: {why}.")
        return s
    from attnio.triton.hooks import UntestedTriton

    try:
        rows = sorted(gate.rows(measured), key=lambda r: r["direction"] != "forward")  # stable: forward, backward
    except UntestedTriton as e:  # an untested Triton whose hooks changed: not counted, said why
        s.p(f"Not counted in this run: {e}.")
        return s
    if not rows:
        s.p("No Triton kernel configuration is registered (attnio.triton.gate.register).")
        return s
    s.table(HEADERS, [[r["kernel"], r["direction"], r["workload"], r["counted_bytes"], r["formula_bytes"], r["counted_over_formula"],
                       r["lower_bound"], r["lower_bound_bytes"], r["counted_over_bound"], r["best_schedule"],
                       r["best_schedule_bytes"], r["counted_over_best"], "ok" if r["outputs_ok"] else "WRONG"]
                      for r in rows])
    for r in rows:
        s.p(f"{r['kernel']} ({r['workload']}): {r['dominates']}.")
    return s
