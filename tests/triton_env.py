"""Triton and torch for the Triton test files: the file is skipped when either is not installed, except under
``ATTNIO_REQUIRE_TRITON=1`` (CI sets it), where a missing one fails the file. An untested Triton is not skipped:
counting itself decides (it runs the hooks' probe and self-test, or refuses; under ``ATTNIO_REQUIRE_TRITON=1``
it refuses)."""

from __future__ import annotations

from typing import Any

import pytest

from attnio.triton.hooks import require_tested as required


def import_triton() -> tuple[Any, Any]:
    """(torch, triton), or the calling test file skipped (failed under ATTNIO_REQUIRE_TRITON=1) without them."""
    if required():
        import torch
        import triton

        return torch, triton
    return pytest.importorskip("torch"), pytest.importorskip("triton")
