"""attnio: how many words attention must move between fast and slow memory, and how many real algorithms move.

The public API (everything else is internal and may change):

- :func:`run`: run an attention algorithm on the two-level memory machine (real arithmetic or count-only);
- :func:`count`: the words an algorithm moves at (N, d, M), measured on the machine (an :class:`IOCount`);
- :func:`cost`: the same count by the algorithm's exact cost formula, so ``count(...) == cost(...)``;
- :func:`catalog`, :func:`bound`: the bounds catalog (every lower/upper bound of the papers and the exact
  costs), and one bound by id;
- :func:`claims`, :func:`verify`: the claims the solver checks about those bounds, and their z3 verdicts;
- :func:`results`, :func:`verdicts`, :func:`catalog_frame`: a sweep's rows, the claims with their verdicts, and
  the catalog, as pandas DataFrames (docs/results.md);
- :func:`register`, :class:`AlgorithmSpec`: bring your own algorithm (docs/byo-algorithm.md);
- :class:`IOCount`, the count type; the error types :class:`AttnioError`, :class:`InvalidParameter`,
  :class:`Unsupported`, :class:`CapacityExceeded`, :class:`SlowMemoryViolation`.

>>> import attnio
>>> attnio.count("square_tiling", N=4096, d=256, M=4096) == attnio.cost("square_tiling", N=4096, d=256, M=4096)
True

The names are loaded on first use (module ``__getattr__``), so ``import attnio`` and the small base modules
(``attnio.core.errors``, ``attnio.core.counts``, ``attnio.core.validate``) import neither the solver nor the machine.

The project's layers sit at the top level of the repository and install as subpackages: ``bounds/`` is
``attnio.bounds`` (closed-form bounds and exact cost formulas), ``solver/`` is ``attnio.solver`` (z3 checks),
``algorithms/`` is ``attnio.algorithms`` (the machine and the schedules), ``reports/`` is ``attnio.reports``
(sweeps, the report, the CI gate).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "AlgorithmSpec",
    "AttnioError",
    "CapacityExceeded",
    "IOCount",
    "InvalidParameter",
    "SlowMemoryViolation",
    "Unsupported",
    "bound",
    "catalog",
    "catalog_frame",
    "claims",
    "cost",
    "count",
    "l2",
    "register",
    "results",
    "run",
    "verdicts",
    "verify",
]

# name -> the module that defines it (imported on first access of the name)
_WHERE: dict[str, str] = {
    "AlgorithmSpec": "attnio.algorithms.registry",
    "register": "attnio.algorithms.registry",
    "run": "attnio.algorithms.run",
    "count": "attnio.api",
    "cost": "attnio.api",
    "catalog": "attnio.api",
    "bound": "attnio.api",
    "claims": "attnio.api",
    "verify": "attnio.api",
    "results": "attnio.api",
    "verdicts": "attnio.api",
    "catalog_frame": "attnio.api",
    "l2": "attnio.api",
    "IOCount": "attnio.core.counts",
    "AttnioError": "attnio.core.errors",
    "InvalidParameter": "attnio.core.errors",
    "Unsupported": "attnio.core.errors",
    "CapacityExceeded": "attnio.core.errors",
    "SlowMemoryViolation": "attnio.core.errors",
}
assert sorted(_WHERE) == sorted(__all__)

if TYPE_CHECKING:  # for type checkers and editors; at run time the names load lazily
    from attnio.algorithms.registry import AlgorithmSpec, register
    from attnio.algorithms.run import run
    from attnio.api import bound, catalog, catalog_frame, claims, cost, count, l2, results, verdicts, verify
    from attnio.core.counts import IOCount
    from attnio.core.errors import (
        AttnioError,
        CapacityExceeded,
        InvalidParameter,
        SlowMemoryViolation,
        Unsupported,
    )


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module 'attnio' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # later accesses skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
