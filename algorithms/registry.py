"""The one table of algorithms: name -> :class:`AlgorithmSpec`. No plugin machinery beyond this dict.

This module imports no schedule: the package (``attnio.algorithms``) fills the table with the built-in
algorithms when it is first imported (:mod:`attnio.algorithms.builtin`).

A user's own algorithm is added with :func:`register` (see docs/byo-algorithm.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from attnio.errors import InvalidParameter


@runtime_checkable
class Tiling(Protocol):
    """The one tiling protocol: every algorithm's frozen tiling dataclass has these two class-level functions.

    ``default(N, d, M, dv)`` gives the block sizes the algorithm uses at (N, d, M) with value width ``dv``
    (``None``: d_v = d) and raises InvalidParameter naming M when M is below ``min_M(N, d, dv)``, the least M it
    runs with. An approximate algorithm's ``default`` also takes its error target as a keyword (``params``).
    """

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None) -> Any: ...

    @staticmethod
    def min_M(N: int, d: int, dv: int | None = None) -> int: ...


@dataclass(frozen=True)
class AlgorithmSpec:
    """An attention schedule on the machine.

    ``schedule(machine, Q, K, V, tiling, scale) -> O`` runs it; ``tiling_cls`` follows :class:`Tiling`
    (``default(N, d, M, dv)`` gives its block sizes, ``min_M(N, d, dv)`` the least M it runs with). ``cost``
    names its exact cost formula in ``attnio.bounds.costs`` (None for a user's algorithm without one). ``audit``
    runs it in audit mode (as published it can exceed M). ``supports_dv``: runs with d_v ≠ d. ``approximate``:
    its output is within an error target ε of attention, not exact; it takes ``eps``/``B``/``beta`` and its
    tiling class draws bounded inputs (``prepare_inputs``).
    """

    name: str
    schedule: Callable[..., Any]
    tiling_cls: Any
    summary: str
    regime: str
    cost: str | None
    audit: bool = False
    supports_dv: bool = False
    approximate: bool = False


REGISTRY: dict[str, AlgorithmSpec] = {}


def register(spec: AlgorithmSpec) -> AlgorithmSpec:
    """Add ``spec`` to the table under ``spec.name`` (registering the same spec twice is allowed); returns it."""
    if spec.name in REGISTRY and REGISTRY[spec.name] != spec:
        raise InvalidParameter(
            "algorithm", spec.name, "a name not registered yet (registering the same spec again is allowed; "
            "a different spec under a taken name is not): taken are " + ", ".join(sorted(REGISTRY))
        )
    REGISTRY[spec.name] = spec
    return spec


def get(name: str) -> AlgorithmSpec:
    """The spec registered as ``name``; an unknown name raises InvalidParameter listing the known ones."""
    if name not in REGISTRY:
        raise InvalidParameter("algorithm", name, "one of " + ", ".join(sorted(REGISTRY)))
    return REGISTRY[name]


def names() -> list[str]:
    return sorted(REGISTRY)
