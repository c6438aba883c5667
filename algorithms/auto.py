"""``auto``: the exact algorithm with the least I/O at (N, d, M[, d_v]), chosen by evaluating the exact cost
formulas of ``attnio.bounds.costs`` (which tests/test_counts.py checks against the machine), then run as itself.

Candidates are the exact algorithms whose working set fits M (``flash1`` as published overflows M, so it is
not one). Ties go to the earlier name in :data:`CANDIDATES`. The tiling records the choice:

>>> from attnio.algorithms.run import run
>>> r = run("auto", N=64, d=8, M=200, count_only=True)
>>> r.tiling.algorithm, r.measurement.io_words == choose(64, 8, 200)[1].io_words
('flash2', True)
>>> choose(1024, 128, 4096)[0]        # small cache, M < d²: square tiles (the rule derived here) win
'square_tiling-io'
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from attnio.algorithms import registry
from attnio.algorithms.machine import Machine, SlowArray

from attnio.counts import IOCount
from attnio.errors import InvalidParameter

CANDIDATES = ("flash2", "split_v", "flash2-square", "kv_stationary", "flash1-fit", "square_tiling-io", "square_tiling", "standard")


def choose(N: int, d: int, M: int, dv: int | None = None) -> tuple[str, IOCount]:
    """The candidate with the least reads + writes (by its exact formula), and that count."""
    from attnio.bounds.costs import cost

    best: tuple[str, IOCount] | None = None
    mins = []
    for name in CANDIDATES:
        spec = registry.get(name)
        lo = spec.tiling_cls.min_M(N, d, dv)
        mins.append(lo)
        if M < lo:
            continue
        c = cost(spec.cost, N=N, d=d, M=M, dv=dv)
        if best is None or c.io_words < best[1].io_words:
            best = (name, c)
    if best is None:
        raise InvalidParameter("M", M, f"M >= {min(mins)} for auto (no candidate algorithm fits below that)")
    return best


@dataclass(frozen=True)
class AutoTiling:
    """The algorithm ``auto`` chose and that algorithm's own tiling."""

    algorithm: str
    tiling: Any

    @staticmethod
    def min_M(N: int, d: int, dv: int | None = None) -> int:
        return min(registry.get(n).tiling_cls.min_M(N, d, dv) for n in CANDIDATES)

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None) -> AutoTiling:
        name, _ = choose(N, d, M, dv)
        return cls(name, registry.get(name).tiling_cls.default(N, d, M, dv))


def schedule(m: Machine, Q: SlowArray, K: SlowArray, V: SlowArray, t: AutoTiling, scale: float) -> SlowArray:
    return registry.get(t.algorithm).schedule(m, Q, K, V, t.tiling, scale)
