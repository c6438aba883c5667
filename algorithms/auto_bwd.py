"""``auto-bwd``: the backward schedule with the least I/O at (N, d, M[, d_v]), chosen by the exact backward
cost formulas (``attnio.bounds.costs.BACKWARD_FORMULAS``, checked against the machine by
tests/test_backward.py), then run as itself. Candidates: the backward schedules that fit M (``flash1-bwd`` as
published overflows M, so it is not one). Ties go to the earlier name in :data:`CANDIDATES`.

``stats`` restricts the choice to schedules whose saved statistics are among those given (for a training
step: what the forward left in slow memory).

>>> choose(4096, 64, 65536)[0]
'flash2-bwd'
>>> choose(4096, 256, 4096)[0]       # small cache: the square-tiled backward reads the forward's S
'square_tiling-bwd'
>>> choose(4096, 256, 4096, stats=("L",))[0]
'flash2-bwd'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attnio.algorithms import registry_backward
from attnio.algorithms.machine import Machine, SlowArray

from attnio.counts import IOCount
from attnio.errors import InvalidParameter

CANDIDATES = ("flash2-bwd", "flash2-square-bwd", "flash1-fit-bwd", "square_tiling-bwd", "standard-bwd")


def choose(N: int, d: int, M: int, dv: int | None = None, stats: tuple[str, ...] | None = None) -> tuple[str, IOCount]:
    """The candidate with the least reads + writes (by its exact formula), and that count."""
    from attnio.bounds.costs import backward_cost

    best: tuple[str, IOCount] | None = None
    mins = []
    for name in CANDIDATES:
        spec = registry_backward.get(name)
        if stats is not None and not set(spec.stats) <= set(stats):
            continue
        lo = spec.tiling_cls.min_M(N, d, dv)
        mins.append(lo)
        if M < lo:
            continue
        c = backward_cost(spec.cost, N=N, d=d, M=M, dv=dv)
        if best is None or c.io_words < best[1].io_words:
            best = (name, c)
    if best is None:
        if not mins:
            raise InvalidParameter("stats", stats, "statistics that some backward schedule reads (L; ell, m; P; S, L)")
        raise InvalidParameter("M", M, f"M >= {min(mins)} for auto-bwd (no candidate backward fits below that)")
    return best


@dataclass(frozen=True)
class AutoBwdTiling:
    """The backward schedule ``auto-bwd`` chose and that schedule's own tiling."""

    algorithm: str
    tiling: Any

    @staticmethod
    def min_M(N: int, d: int, dv: int | None = None) -> int:
        return min(registry_backward.get(n).tiling_cls.min_M(N, d, dv) for n in CANDIDATES)

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None, stats: tuple[str, ...] | None = None) -> AutoBwdTiling:
        name, _ = choose(N, d, M, dv, stats)
        return cls(name, registry_backward.get(name).tiling_cls.default(N, d, M, dv))


def schedule(m: Machine, ins: dict[str, SlowArray], t: AutoBwdTiling, scale: float) -> tuple[SlowArray, SlowArray, SlowArray]:
    return registry_backward.get(t.algorithm).schedule(m, ins, t.tiling, scale)
