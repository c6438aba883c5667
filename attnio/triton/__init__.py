"""Triton kernels, counted: the exact global-memory traffic of any Triton kernel run by Triton's interpreter on
the CPU (``TRITON_INTERPRET=1``), and attnio's own Triton attention kernels (``attnio.triton.kernels``).

- :func:`count_traffic`: a context manager counting every global access of the kernels launched inside it;
- :func:`pin_config`: pin an autotuned kernel to one config so that a count is deterministic;
- :func:`fake_gpu`: a CPU stand-in (off by default) for kernel files that query the GPU at import or launch;
- :mod:`attnio.triton.scale`: attnio's FA-2 forward counted at production shape from sampled programs (its
  ``method`` says how);
- :func:`check`: a user's launcher on an attnio workload: counts, bound, attnio's best schedule, correctness;
- :data:`TESTED_TRITON_VERSIONS`, :func:`check_triton_version` (a tested Triton, or another that passes the
  structural probe of the hooks and their self-test: :mod:`attnio.triton.hooks`).

Importing this package imports neither Triton nor torch and registers nothing; counting needs both
(``pip install -e '.[triton]'``). See docs/triton.md.
"""

from __future__ import annotations

from attnio.triton.count import (
    TESTED_TRITON_VERSIONS,
    UNATTRIBUTED,
    OutOfBounds,
    Tally,
    Traffic,
    TritonSetupError,
    UntestedTriton,
    UntestedTritonWarning,
    check_triton_version,
    count_traffic,
    pin_config,
)
from attnio.triton.fake_gpu import fake_gpu


def check(launch, workload, **kwargs):  # noqa: ANN001, ANN003, ANN201
    """:func:`attnio.triton.check.check` (imported on first use: it loads attnio's schedules)."""
    from attnio.triton.check import check as _check

    return _check(launch, workload, **kwargs)


__all__ = [
    "TESTED_TRITON_VERSIONS",
    "UNATTRIBUTED",
    "OutOfBounds",
    "Tally",
    "Traffic",
    "TritonSetupError",
    "UntestedTriton",
    "UntestedTritonWarning",
    "check_triton_version",
    "check",
    "count_traffic",
    "fake_gpu",
    "pin_config",
]
