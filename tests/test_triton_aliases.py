"""Kernel files that alias ``triton.language`` builtins at module level (``exp2 = tl.exp2``, ``from
triton.language.math import log2``), as shipped kernel files do (lmdeploy's paged decode: ``tl_exp2 = tl.exp2``):
Triton's interpreter patches only ``triton.language``'s own attributes for a launch, so such a launch raises
"Did you forget to add @triton.jit ?"; under counting, ``attnio.triton.hooks.builtin_aliases`` forwards the
aliases by name for each launch. The kernel (tests/kernels_shipped/aliased.py) is written here."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

from triton_env import import_triton  # noqa: E402

torch, triton = import_triton()

from kernels_shipped import aliased  # noqa: E402

from attnio.core.workload import Workload  # noqa: E402
from attnio.triton.check import check  # noqa: E402


def test_module_level_aliases_of_builtins_run_and_count_as_the_loops_say():
    w = Workload.build(heads=2, kv_heads=1, Nq=20, Nkv=40, d=16, M=4096)
    r = check(aliased.attention, w)
    t = r.traffic
    tr = -(-w.Nq // 16)  # query blocks of 16 rows; K and V read once per block and query head
    assert (t.reads_bytes["q"], t.writes_bytes["o"]) == (4 * 2 * 20 * 16, 4 * 2 * 20 * 16)
    assert t.reads_bytes["k"] == t.reads_bytes["v"] == 4 * 2 * tr * 40 * 16
    assert r.outputs_ok


def test_the_aliases_are_restored_after_the_launch():
    before = (aliased.exp2, aliased.tl_max, aliased.log2)
    check(aliased.attention, Workload.build(heads=1, N=16, d=16, M=4096))
    assert (aliased.exp2, aliased.tl_max, aliased.log2) == before
    assert aliased.exp2 is triton.language.exp2
