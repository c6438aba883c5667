"""Shared test setup: Hypothesis profiles, GPU/oracle/nvcc auto-skips."""

from __future__ import annotations

import os
import shutil

import pytest
from hypothesis import HealthCheck, settings

# "ci" is loaded when CI is set: more examples, deterministic, no deadline (shared machines are noisy).
settings.register_profile(
    "ci",
    max_examples=200,
    derandomize=True,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
# "nightly": the long run (ATTNIO_HYPOTHESIS_PROFILE=nightly), e.g. 1,000 command lines in tests/test_cli_fuzz.py.
settings.register_profile(
    "nightly",
    max_examples=1000,
    derandomize=False,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile("dev", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# "mutation": tools/mutation.sh runs the tests once per mutant; few examples, the same ones every run, no saved
# examples carried from one mutant to the next.
settings.register_profile(
    "mutation",
    max_examples=20,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
settings.load_profile(os.environ.get("ATTNIO_HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


def _has_torch() -> bool:
    try:
        import torch  # noqa: F401

        return True
    except Exception:
        return False


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from attnio.algorithms.backend import gpu_available

    skips = {
        "gpu": (gpu_available(), "no CUDA device (or CuPy not installed): GPU test skipped"),
        "oracle": (_has_torch(), "torch not installed: external oracle test skipped (pip install -e '.[oracle]')"),
        "nvcc": (shutil.which("nvcc") is not None, "nvcc not on PATH: CUDA compile test skipped"),
    }
    for item in items:
        for mark, (available, reason) in skips.items():
            if mark in item.keywords and not available:
                item.add_marker(pytest.mark.skip(reason=reason))
