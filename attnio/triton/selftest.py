"""The self-test of the counting hooks: tiny Triton kernels whose counts are known by hand, run under the hooks
(``attnio.triton.count.self_test`` runs it on a Triton that is not tested). The kernels are in
:mod:`attnio.triton.selftest_kernels` (imported on first use: it imports Triton).

Cases (fp32, 4 bytes a word):

- a masked copy, 10 of 12 lanes active, launched twice: x read 20 words, o written 20 words, two launches;
- an atomic add of 10 active lanes of 16: 10 reads and 10 writes of ``acc``;
- an atomic compare-and-swap of 8 lanes, 4 of which hold the comparand: 8 reads, 4 writes of ``lock``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def run(counting: Callable[..., Any]) -> list[str]:
    """What differs from the known counts (empty: nothing); ``counting(**tensors)`` is the counting context."""
    import torch

    from attnio.triton import selftest_kernels as k

    problems: list[str] = []

    def expect(case: str, got: Any, want: Any) -> None:
        if got != want:
            problems.append(f"self-test {case}: counted {got}, known {want}")

    n = 10
    x, o = torch.arange(float(n)), torch.zeros(n)
    with counting(x=x, o=o) as t:
        k.copy_kernel[(3,)](x, o, n, BLOCK=4)
        k.copy_kernel[(3,)](x, o, n, BLOCK=4)
    expect("masked load and store (two launches)",
           (t.reads_words, t.writes_words, t.launches, t.unattributed_bytes),
           ({"x": 2 * n, "o": 0}, {"x": 0, "o": 2 * n}, ["copy_kernel", "copy_kernel"], 0))
    expect("masked copy's values", bool(torch.equal(o, x)), True)

    src, acc = torch.ones(16), torch.zeros(4)
    with counting(src=src, acc=acc) as t:
        k.add_kernel[(1,)](src, acc, n, BLOCK=16)
    expect("atomic rmw", (t.reads_words["acc"], t.writes_words["acc"], t.reads_words["src"]), (n, n, n))
    expect("atomic rmw's values", acc.tolist(), [3.0, 3.0, 2.0, 2.0])

    lock = torch.tensor([0, 1, 0, 1, 0, 1, 0, 1], dtype=torch.int32)
    with counting(lock=lock) as t:
        k.cas_kernel[(1,)](lock, BLOCK=8)
    expect("atomic cas", (t.reads_words["lock"], t.writes_words["lock"]), (8, 4))
    expect("atomic cas's values", lock.tolist(), [1] * 8)
    return problems
