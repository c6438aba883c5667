"""The report's "Across devices" section: each context-parallel schedule's exact words per device divided by
DIST-QK, the lower bound on the words the busiest of P processors receives (docs/distributed.md,
docs/bounds/distributed.md).

:func:`section` is the report's section function (one entry in ``reports/report.py``'s ``SECTIONS``). The words
are the closed forms of ``bounds/distributed.py``, equal to the P-device machine's counts and to the bytes counted
on gloo processes (tests/test_distributed.py, tests/test_distributed_gloo.py).
"""

from __future__ import annotations

from typing import Any

from attnio.reports.compute import Context
from attnio.reports.render import Section

#: (N, d, d_v, P): one head, forward; square P for Attention2D, a non-square one beside them
POINTS = ((4096, 64, 64, 4), (32768, 128, 128, 16), (131072, 128, 128, 64), (131072, 128, 64, 64), (131072, 128, 128, 8))
#: the one-head schedules (Ulysses and hybrid split heads: their one-head words are not a one-head schedule's)
SCHEDULES = ("ring", "zigzag", "striped", "allgather", "tokenring", "attention2d")


def rows() -> list[list[Any]]:
    """One row per point: N, d, d_v, P, DIST-QK (words), then each schedule's forward words ÷ the bound."""
    from attnio.bounds import distributed as dist
    from attnio.core.errors import InvalidParameter

    out = []
    for N, d, dv, P in POINTS:
        L = dist.lower_bound(P=P, N=N, d=d)
        row: list[Any] = [N, d, dv, P, f"{L:,.0f}"]
        for s in SCHEDULES:
            try:
                w = dist.per_device(s, P=P, N=N, d=d, dv=dv, heads=1, kv_heads=1)["forward"]
            except InvalidParameter:  # the schedule does not run at this P (Attention2D needs a square P)
                row.append("—")
                continue
            row.append(f"{w / L:.3f}")
        out.append(row)
    return out


def section(ctx: Context) -> Section:
    """The report's section function."""
    s = Section("Across devices")
    s.p(
        "Context parallelism over P devices (docs/distributed.md): each schedule's exact words received per device "
        "in the forward of one head, divided by DIST-QK, min(2Nd/√P − 2Nd/P, N²/P − N²/P²), a lower bound on the "
        "words the busiest of P processors receives when each starts with at most 2Nd/P of the Q and K words "
        "(derived here, docs/bounds/distributed.md; it counts the QKᵀ trees only, so a schedule that also moves V "
        "cannot come within (2d + 2d_v)/(2d) of it). Attention2D's Q and K all-gathers meet the first term exactly."
    )
    s.table(["N", "d", "d_v", "P", "DIST-QK words", *(f"{x} ÷ bound" for x in SCHEDULES)], rows())
    return s
