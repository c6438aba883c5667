"""Context parallelism run for real: P = 2, 4, 8 processes on torch.distributed (gloo) over loopback, each running
the same rank code as the simulated machine. Per rank and pass the bytes counted at the collectives equal 8 × the
formula's words (float64), the words equal the formula, and O, dQ, dK, dV equal torch autograd of
scaled_dot_product_attention on the whole sequence. Every process is ended (joined, or killed at the deadline).
Skipped without torch (extra ``oracle``); tiers ``subprocess`` and ``slow`` (tests/conftest.py): starting P
processes that import torch takes tens of seconds on a loaded 2-core machine, so no case fits the fast loop."""

from __future__ import annotations

import multiprocessing

import pytest

from attnio.bounds import distributed as dist
from attnio.core.errors import AttnioError

pytestmark = pytest.mark.oracle


def _jobs(P: int) -> list[dict]:
    from attnio.algorithms.cp_gloo import job

    out = []
    for s in dist.SCHEDULES:
        if s == "hybrid" and P < 4 or s == "attention2d" and P != 4:
            continue  # two levels need P_a >= 2 groups of P_a >= 2; a grid needs P square
        kv = P if s == "ulysses" else 2
        for causal in (False, True):
            out.append(job(s, N=2 * P * 2, d=3, dv=2, heads=2 * kv, kv_heads=kv, batch=1 + causal, causal=causal,
                           backward=True, seed=P, intra=2 if s == "hybrid" else None))
    return out


@pytest.mark.parametrize("P", [2, 4, 8])
def test_gloo_bytes_equal_the_formula_and_outputs_equal_torch_autograd(P: int) -> None:
    pytest.importorskip("torch")
    from attnio.algorithms.cp_gloo import run_gloo

    results = run_gloo(_jobs(P), P=P, timeout_s=540)
    assert len(results) == 2 * (len(dist.SCHEDULES) - (P < 4) - (P != 4))
    for r in results:
        for p, f in r["formula_words"].items():
            assert r["words_sent"][p] == [f] * P, (r["job"], p)
            assert r["words_received"][p] == [f] * P, (r["job"], p)
            assert r["bytes_sent"][p] == [8 * f] * P, (r["job"], p)
            assert r["bytes_received"][p] == [8 * f] * P, (r["job"], p)
        assert set(r["errors"]) == {"O", "dQ", "dK", "dV"}
        assert max(r["errors"].values()) < 1e-10, (r["job"], r["errors"])
    assert not multiprocessing.active_children()


def test_a_run_past_its_deadline_is_killed_with_every_process() -> None:
    """A deadline shorter than the processes' start: the call raises, naming the deadline, and leaves no process."""
    pytest.importorskip("torch")
    from attnio.algorithms.cp_gloo import job, run_gloo

    with pytest.raises(AttnioError, match="did not finish within 0.5 s"):
        run_gloo([job("ring", N=4, d=1)], P=2, timeout_s=0.5)
    assert not multiprocessing.active_children()
