"""The one table of algorithms, forward and backward: name -> :class:`AlgorithmSpec`. No plugin machinery beyond
this dict. A fact about an algorithm is a field of its spec (what a forward saves, its backward, whether
``auto`` may pick it, whether a backward recomputes S, which workload schedules it has), never a list of names
kept elsewhere; the functions below are the queries on the table (docs/architecture.md).

This module imports no schedule: the package (``attnio.algorithms``) fills the table with the built-in
algorithms when it is first imported (:mod:`attnio.algorithms.builtin`).

A user's own algorithm is added with :func:`register` (see docs/byo-algorithm.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from attnio.core.errors import InvalidParameter


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


PASSES = ("forward", "backward")
#: workload schedules: each query head in turn, or a K/V tile shared by the g query heads of its group.
SCHEDULES = ("per-head", "grouped")


@dataclass(frozen=True)
class AlgorithmSpec:
    """An attention schedule on the machine.

    A forward (``pass_="forward"``): ``schedule(machine, Q, K, V, tiling, scale) -> O``. A backward
    (``pass_="backward"``): ``schedule(machine, inputs, tiling, scale) -> (dQ, dK, dV)``, where ``inputs`` maps
    "Q", "K", "V", "O", "dO" and the names in ``stats`` to slow arrays (dQ, dK, dV must end in slow memory).
    ``tiling_cls`` follows :class:`Tiling` (``default(N, d, M, dv)`` gives its block sizes, ``min_M(N, d, dv)``
    the least M it runs with). ``cost`` names its exact cost formula in ``attnio.bounds.costs`` (None for a
    user's algorithm without one). ``audit`` runs it in audit mode (as published it can exceed M).
    ``supports_dv``: runs with d_v ≠ d. ``approximate``: its output is within an error target ε of attention,
    not exact; it takes ``eps``/``B``/``beta`` and its tiling class draws bounded inputs (``prepare_inputs``).

    Facts used elsewhere: ``saves`` (forward) the statistics it leaves in slow memory for a backward (``L`` the
    logsumexp of FA-2; ``ell, m`` the row sums and maxima of FA-1; ``S, P`` of standard attention; ``S, L`` of
    Saha–Ye's square tiling); ``backward`` (forward) the backward schedule completing its training step (None:
    ``auto-bwd`` over ``saves``); ``stats`` (backward) the statistics it reads; ``recomputes_S`` (backward) it
    forms every score S_ij from Q and K itself (the CDAG of the backward lower bound ``constants.bwd.sdp``);
    ``auto_rank`` its place among ``auto``'s candidates of its pass (ties go to the lower rank; None: never
    picked); ``workload_schedules`` the workload schedules of its own (causal masks, N_q ≠ N_kv, GQA; empty:
    plain workloads only, one head at a time); ``masks``: those schedules take any mask of
    ``attnio.bounds.masks`` (``run(..., mask=...)``), skipping its empty tiles and masking its partial ones.
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
    pass_: str = "forward"
    saves: tuple[str, ...] = ()
    backward: str | None = None
    stats: tuple[str, ...] = ()
    recomputes_S: bool = False
    auto_rank: int | None = None
    workload_schedules: tuple[str, ...] = ()
    masks: bool = False

    def __post_init__(self) -> None:
        if self.pass_ not in PASSES:
            raise InvalidParameter("pass_", self.pass_, "one of " + ", ".join(PASSES))
        for s in self.workload_schedules:
            if s not in SCHEDULES:
                raise InvalidParameter("workload_schedules", self.workload_schedules, "schedules among " + ", ".join(SCHEDULES))


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


def get(name: str, pass_: str | None = None) -> AlgorithmSpec:
    """The spec registered as ``name`` (of pass ``pass_`` when given); an unknown name raises InvalidParameter
    listing the known ones."""
    if name not in REGISTRY or (pass_ is not None and REGISTRY[name].pass_ != pass_):
        raise InvalidParameter("algorithm", name, "one of " + ", ".join(names(pass_) if pass_ else sorted(REGISTRY)))
    return REGISTRY[name]


def names(pass_: str = "forward") -> list[str]:
    """The names of the algorithms of one pass, sorted."""
    return sorted(n for n, s in REGISTRY.items() if s.pass_ == pass_)


def candidates(pass_: str) -> list[str]:
    """The algorithms ``auto`` (``auto-bwd``) chooses among, by ``auto_rank``."""
    specs = [s for s in REGISTRY.values() if s.pass_ == pass_ and s.auto_rank is not None]
    return [s.name for s in sorted(specs, key=lambda s: s.auto_rank)]  # type: ignore[arg-type,return-value]


def with_schedule(schedule: str, pass_: str = "forward") -> list[str]:
    """The algorithms of ``pass_`` with a workload schedule ``schedule`` of their own, sorted."""
    return sorted(n for n, s in REGISTRY.items() if s.pass_ == pass_ and schedule in s.workload_schedules)


def with_masks(pass_: str = "forward") -> list[str]:
    """The algorithms of ``pass_`` whose workload schedules take any mask, sorted."""
    return sorted(n for n, s in REGISTRY.items() if s.pass_ == pass_ and s.masks)


def forward_saves() -> dict[str, tuple[str, ...]]:
    """What each exact forward leaves in slow memory for a backward (forwards that save nothing are left out)."""
    return {n: s.saves for n, s in REGISTRY.items() if s.pass_ == "forward" and s.saves}


def forward_of(backward: str) -> str | None:
    """The forward whose training step the backward ``backward`` completes (None: none names it)."""
    return next((n for n, s in REGISTRY.items() if s.backward == backward), None)
