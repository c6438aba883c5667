"""``auto`` and ``auto-bwd``: the exact schedule of a pass with the least I/O at (N, d, M[, d_v]), chosen by
evaluating the exact cost formulas of ``attnio.bounds.costs`` (which tests/test_counts.py and
tests/test_backward.py check against the machine), then run as itself.

Candidates are the specs of the pass with an ``auto_rank`` (:func:`attnio.algorithms.registry.candidates`)
whose working set fits M (``flash1`` and ``flash1-bwd`` as published overflow M, so they are not candidates).
Ties go to the lower rank. The tiling records the choice:

>>> from attnio.algorithms.run import run
>>> r = run("auto", N=64, d=8, M=200, count_only=True)
>>> r.tiling.algorithm, r.measurement.io_words == choose("forward", 64, 8, 200)[1].io_words
('flash2', True)
>>> choose("forward", 1024, 128, 4096)[0]     # small cache, M < d²: square tiles (the rule derived here) win
'square_tiling-io'

``stats`` restricts the backward choice to schedules whose saved statistics are among those given (for a
training step: what the forward left in slow memory).

>>> choose("backward", 4096, 64, 65536)[0]       # two passes, dQ written once: 14N²d²/M against flash2-bwd's 16
'flash2-2pass-bwd'
>>> choose("backward", 4096, 256, 4096)[0]       # small cache: streamed output tiles, reading the forward's S
'square_tiling-io-bwd'
>>> choose("backward", 4096, 256, 4096, stats=("L",))[0]
'flash2-2pass-bwd'
>>> choose("backward", 29, 5, 300)[0]            # small N: pass 2's K, V reads cost more than dQ's traffic saves;
'flash2-fused-bwd'
>>> # flash2-bwd's loop with D formed and dQ started on each row's first visit is cheaper than flash2-bwd itself
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from attnio.algorithms import registry
from attnio.algorithms.machine import Machine
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter


def choose(pass_: str, N: int, d: int, M: int, dv: int | None = None, stats: tuple[str, ...] | None = None) -> tuple[str, IOCount]:
    """The candidate of ``pass_`` with the least reads + writes (by its exact formula), and that count."""
    from attnio.bounds.costs import backward_cost, cost

    formula = cost if pass_ == "forward" else backward_cost
    best: tuple[str, IOCount] | None = None
    mins = []
    for name in registry.candidates(pass_):
        spec = registry.get(name)
        if stats is not None and not set(spec.stats) <= set(stats):
            continue
        lo = spec.tiling_cls.min_M(N, d, dv)
        mins.append(lo)
        if M < lo:
            continue
        c = formula(spec.cost, N=N, d=d, M=M, dv=dv)
        if best is None or c.io_words < best[1].io_words:
            best = (name, c)
    if best is None:
        if not mins:
            raise InvalidParameter("stats", stats, "statistics that some backward schedule reads (L; ell, m; P; S, L)")
        who = "auto" if pass_ == "forward" else "auto-bwd"
        raise InvalidParameter("M", M, f"M >= {min(mins)} for {who} (no candidate {'algorithm' if pass_ == 'forward' else 'backward'} fits below that)")
    return best


@dataclass(frozen=True)
class AutoTiling:
    """The algorithm ``auto`` chose and that algorithm's own tiling."""

    algorithm: str
    tiling: Any
    pass_: ClassVar[str] = "forward"

    @classmethod
    def min_M(cls, N: int, d: int, dv: int | None = None) -> int:
        return min(registry.get(n).tiling_cls.min_M(N, d, dv) for n in registry.candidates(cls.pass_))

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None, stats: tuple[str, ...] | None = None) -> AutoTiling:
        name, _ = choose(cls.pass_, N, d, M, dv, stats)
        return cls(name, registry.get(name).tiling_cls.default(N, d, M, dv))


@dataclass(frozen=True)
class AutoBwdTiling(AutoTiling):
    """The backward schedule ``auto-bwd`` chose and that schedule's own tiling."""

    pass_: ClassVar[str] = "backward"


def schedule(m: Machine, *args: Any) -> Any:
    """Run the chosen schedule: ``(Q, K, V, tiling, scale)`` forward, ``(inputs, tiling, scale)`` backward."""
    *ins, t, scale = args
    return registry.get(t.algorithm).schedule(m, *ins, t.tiling, scale)
