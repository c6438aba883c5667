"""attnio.triton.scale: the sampled count of attnio's FA-2 forward equals the full interpreter run (every program)
on small shapes Hypothesis draws, and its checks fail on a kernel whose programs are not offset-only (Triton's
interpreter; skipped without triton and torch)."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from triton_env import import_triton

torch, triton = import_triton()

import attnio.triton as at  # noqa: E402
from attnio.core.workload import Workload  # noqa: E402
from attnio.triton import scale  # noqa: E402
from attnio.triton.kernels.fa2_fwd import fa2_forward, traffic  # noqa: E402


def full_run(w: Workload, block: tuple[int, int], schedule: str) -> at.Traffic:
    t = scale._tensors(w)
    with at.count_traffic(**t) as full:
        fa2_forward(t["q"], t["k"], t["v"], causal=w.causal, block=block, schedule=schedule, o=t["o"], lse=t["lse"])
    return full


@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 3), kv_heads=st.integers(1, 3), group=st.sampled_from([1, 2]), N=st.integers(1, 140),
       causal=st.booleans(), schedule=st.sampled_from(["grouped", "per-head"]))
def test_sampled_equals_full_run(batch, kv_heads, group, N, causal, schedule):
    w = Workload.build(batch=batch, heads=kv_heads * group, kv_heads=kv_heads, N=N, d=16, causal=causal, M=4000)
    block = (16, 16)
    got = scale.count(w, block=block, schedule=schedule)
    full = full_run(w, block, schedule)
    for f in scale.FIELDS:
        assert getattr(got, f) == dict(getattr(full, f)), f
    assert got.io_count() == traffic(w, block[0], schedule)
    units = w.kv_heads_total if schedule == "grouped" else w.query_heads_total
    assert got.method == "full" if units == 1 and -(-N // 16) <= scale.SMALL else got.method.startswith("sampled: ")
    assert got.programs_total == -(-N // 16) * units


def test_sampled_equals_full_run_on_one_small_causal_gqa_shape():
    """The default tier's comparison (the Hypothesis one above is in the slow tier)."""
    w = Workload.build(batch=1, heads=4, kv_heads=2, N=112, d=16, causal=True, M=4000)
    got = scale.count(w, block=(16, 16))
    full = full_run(w, (16, 16), "grouped")
    for f in scale.FIELDS:
        assert getattr(got, f) == dict(getattr(full, f)), f
    assert got.method.startswith("sampled: ") and got.programs_run < got.programs_total


def test_sampled_method_names_its_programs_and_json():
    w = Workload.build(batch=2, heads=2, kv_heads=2, N=130, d=16, causal=True, M=4000)
    got = scale.count(w, block=(16, 16), seed=3)
    d = got.as_dict()
    assert d["method"].startswith("sampled: ") and "checked on [2, " in d["method"] and "block 8 run" in d["method"]
    assert d["programs_run"] < d["programs_total"] == 9 * 4
    assert d["tensors"]["lse"]["writes_words"] == 2 * 2 * 130


def test_shift_check_rejects_what_is_not_a_base_shift():
    import numpy as np

    a = {("k", "r"): np.array([0, 8, 16])}
    assert scale._shift_equal(a, {("k", "r"): np.array([100, 108, 116])}) is None
    assert "base shift" in scale._shift_equal(a, {("k", "r"): np.array([100, 108, 124])})
    assert "lanes" in scale._shift_equal(a, {("k", "r"): np.array([100, 108])})
    assert "tensors" in scale._shift_equal(a, {("v", "r"): np.array([0, 8, 16])})


def test_affine_check_raises_on_a_wrong_law(monkeypatch):
    """A count that is not affine in pid_m (block 2 doubled) makes count() raise, not extrapolate."""
    real = scale._Programs.run

    def bent(self, programs, addresses=False):
        out = real(self, programs, addresses)
        return {k: ({n: [2 * x for x in v] for n, v in p.items()} if k[0] == 2 else p, r) for k, (p, r) in out.items()}

    monkeypatch.setattr(scale._Programs, "run", bent)
    w = Workload.build(batch=1, heads=1, kv_heads=1, N=16 * 8, d=16, causal=True, M=4000)
    with pytest.raises(scale.Mismatch, match="not affine"):
        scale.count(w, block=(16, 16))


def test_cli_fast_prints_the_method_in_json_and_refuses_other_targets(capsys):
    import json

    from attnio.cli import main

    target = "attnio.triton.kernels.fa2_fwd:fa2_forward"
    argv = ["kernel", target, "--N", "112", "--d", "16", "--heads", "2", "--causal", "--M", "4000", "--fast",
            "--block", "16x16", "--json"]
    assert main(argv) == 0
    d = json.loads(capsys.readouterr().out)
    w = Workload.build(heads=2, N=112, d=16, causal=True, M=4000)
    assert d["method"].startswith("sampled: ")
    assert sum(t["reads_words"] for t in d["tensors"].values()) == traffic(w, 16).reads_words
    assert main(["kernel", "x.py:f", "--N", "16", "--d", "16", "--fast"]) == 2
    assert "target" in capsys.readouterr().err
    assert main([*argv[:-3], "--block", "16by16"]) == 2
