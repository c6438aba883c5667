"""attnio.triton imports without Triton and torch (a fresh interpreter in which importing either fails, as in
an install without the ``triton`` extra): the package, the kernels' package and registry, the gate, the hooks,
the count cache; the kernel modules themselves raise an ImportError naming the extra. Also: no module of
attnio.triton imports Triton at import time, and importing registers nothing."""

from __future__ import annotations

import subprocess
import sys

import pytest

pytestmark = pytest.mark.subprocess

BLOCK = '''
import sys
sys.modules["triton"] = sys.modules["torch"] = None  # as if not installed: import fails, find_spec says None
'''

CHECK = BLOCK + '''
import attnio.triton, attnio.triton.kernels, attnio.triton.gate, attnio.triton.hooks, attnio.triton.cache
import attnio.triton.kernels.registry, attnio.triton.kernels.measure, attnio.triton.check, attnio.triton.selftest
from attnio.triton import gate
assert [m for m, v in sys.modules.items() if m.split(".")[0] in ("triton", "torch") and v is not None] == []
assert gate.registered() == [] and len(gate.configurations()) == 7
assert gate.available().startswith("triton or torch not installed")
assert "unavailable" in gate.gate_entries()
for mod in ("fa2_fwd", "fa2_bwd", "square_tiling"):
    try:
        __import__("attnio.triton.kernels." + mod)
    except ImportError as e:
        assert "pip install -e '.[triton]'" in str(e), e
    else:
        raise AssertionError(mod + " imported without Triton")
print("ok")
'''


def test_attnio_triton_imports_without_triton_and_torch():
    r = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
