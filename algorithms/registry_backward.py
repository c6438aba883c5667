"""The table of backward-pass schedules: name -> :class:`BackwardSpec`, apart from the forward
:data:`attnio.algorithms.registry.REGISTRY` (so the forward's listings, sweeps and reports are unchanged).

A backward schedule runs on the same machine as the forward ones. Its inputs start in slow memory: Q, K
(N×d), V, O, dO (N×d_v) and the statistics the forward saved (``stats``: ``("L",)`` the logsumexp of FA-2,
``("ell", "m")`` the row sums and maxima of FA-1, ``("P",)`` the probabilities of standard attention,
``("S", "L")`` the logits and logsumexp of Saha–Ye's square tiling). Its outputs dQ, dK (N×d) and dV (N×d_v)
must end in slow memory. ``forward_of`` names the forward algorithm whose training step it completes
(``attnio run <forward> --backward``).

This module imports no schedule: :mod:`attnio.algorithms.builtin_backward` fills the table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from attnio.errors import InvalidParameter


@dataclass(frozen=True)
class BackwardSpec:
    """A backward schedule on the machine.

    ``schedule(machine, inputs, tiling, scale) -> (dQ, dK, dV)`` runs it, where ``inputs`` maps "Q", "K",
    "V", "O", "dO" and the names in ``stats`` to slow arrays. ``tiling_cls.default(N, d, M, dv)`` and
    ``tiling_cls.min_M(N, d, dv)`` as for forward specs. ``cost`` names its exact formula in
    ``attnio.bounds.costs.BACKWARD_FORMULAS``. ``recomputes_S``: the schedule forms every score S_ij from
    Q and K itself (the CDAG of the backward lower bound ``constants.bwd.sdp``).
    """

    name: str
    schedule: Callable[..., Any]
    tiling_cls: Any
    summary: str
    regime: str
    cost: str | None
    forward_of: str
    stats: tuple[str, ...]
    recomputes_S: bool
    audit: bool = False
    supports_dv: bool = True


BACKWARD: dict[str, BackwardSpec] = {}

# What each forward algorithm leaves in slow memory besides O (its scratch arrays), by name of slow array.
FORWARD_SAVES: dict[str, tuple[str, ...]] = {}


def register(spec: BackwardSpec) -> BackwardSpec:
    assert spec.name not in BACKWARD or BACKWARD[spec.name] == spec, f"backward {spec.name} registered twice"
    BACKWARD[spec.name] = spec
    return spec


def get(name: str) -> BackwardSpec:
    if name not in BACKWARD:
        raise InvalidParameter("algorithm", name, "one of the backward schedules " + ", ".join(sorted(BACKWARD)))
    return BACKWARD[name]


def names() -> list[str]:
    return sorted(BACKWARD)


def backward_of(forward: str) -> str:
    """The backward schedule that completes ``forward``'s training step."""
    for spec in BACKWARD.values():
        if spec.forward_of == forward:
            return spec.name
    raise InvalidParameter(
        "algorithm", forward, "a forward algorithm with a backward: " + ", ".join(sorted(s.forward_of for s in BACKWARD.values()))
    )
