"""Triton attention kernels as they ship, counted as they are: the kernels of tests/kernels_shipped/ (written here
in the shapes shipped kernels take) through ``attnio.triton.check`` and ``attnio kernel``, each count equal to a
formula derived from the kernel's loop structure (tests/kernels_shipped/kernels.py); bad input is one line, exit 2.

Formulas (fp32, 4 bytes a word; BH = batch · heads query heads; T_r = ⌈N_q / 16⌉ query blocks; S key splits):
``_attn`` reads its Q block once per split (S · BH · N_q · d), the K and V rows of its key chunk once per query
block (BH · T_r · N_kv · d, masked lanes beyond N_kv not counted) and writes N_q · d_v per head and split; with
S = 2 the combine reads both partial outputs and both lse rows and writes O once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

os.environ.setdefault("TRITON_INTERPRET", "1")

from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from triton_env import import_triton  # noqa: E402

torch, triton = import_triton()

from kernels_shipped import launchers  # noqa: E402

from attnio.cli import main  # noqa: E402
from attnio.core.workload import Ragged, Workload  # noqa: E402
from attnio.triton.check import check  # noqa: E402
from attnio.triton.fake_gpu import fake_gpu  # noqa: E402

PKG = Path(__file__).resolve().parent / "kernels_shipped"
LAUNCHERS = PKG / "launchers.py"
NAMES = {"query": "q", "key": "k", "value": "v", "out": "o", "softmax_scale": "sm_scale"}


def _dense(w: Workload, splits: int = 1) -> dict[str, tuple[int, int]]:
    """tensor -> (read bytes, written bytes) of ``_attn`` (and ``_combine`` when split) on ``w``."""
    BH, Tr = w.batch * w.heads, -(-w.Nq // 16)
    out = {"q": (4 * splits * BH * w.Nq * w.d, 0), "k": (4 * BH * Tr * w.Nkv * w.d, 0),
           "v": (4 * BH * Tr * w.Nkv * w.dv, 0), "o": (0, 4 * BH * w.Nq * w.dv)}
    if splits > 1:
        out["_attn.O"] = (4 * splits * BH * w.Nq * w.dv,) * 2  # partial outputs: written, then read by the combine
        out["_attn.LSE"] = (4 * splits * BH * w.Nq,) * 2
    return out


def _counted(r) -> dict[str, tuple[int, int]]:
    t = r.traffic
    return {n: (t.reads_bytes[n], t.writes_bytes[n]) for n in t.names}


def test_query_key_value_launcher_counted_through_a_mapping_and_through_its_declared_attnio_args():
    w = Workload.build(heads=2, kv_heads=1, N=20, d=16, gpu="h100")  # GQA, a partial block
    r = check(launchers.attention, w, args=NAMES)
    assert _counted(r) == _dense(w) and r.outputs_ok
    assert r.aliases["q"] == ["query", "_attn.Q"] and r.aliases["o"][:2] == ["out", "_attn.O"]
    r2 = check(launchers.attention_declared, w)
    assert _counted(r2) == _dense(w) and r2.outputs_ok


def test_autograd_function_counted_through_apply_or_its_class():
    w = Workload.build(N=17, d=16, gpu="h100")
    for launch in (launchers.FlashFn, launchers.FlashFn.apply):
        r = check(launch, w)
        # o is allocated by forward: it is counted as the kernel's argument O
        assert _counted(r) == {**{n: c for n, c in _dense(w).items() if n != "o"}, "_attn.O": _dense(w)["o"]}
        assert r.outputs_ok and r.aliases["_attn.O"] == ["_attn.O2", "_attn.LSE"]


def test_cuda_allocations_and_is_cuda_served_on_the_cpu_under_fake_gpu():
    w = Workload.build(N=16, d=16, gpu="h100")
    with pytest.raises(Exception, match="launcher 'on_cuda' raised AssertionError: inputs must be on the GPU"):
        check(launchers.on_cuda, w)
    with pytest.raises(Exception, match="CUDA allocations and is_cuda are served on the CPU"):
        check(lambda q, k, v: torch.empty(1, device="cuda"), w)  # the hint names fake_gpu
    with fake_gpu("cuda", 90):
        r = check(launchers.on_cuda, w)
    assert r.outputs_ok and r.traffic.writes_bytes["_attn.O"] == _dense(w)["o"][1]
    assert not torch.zeros(1).is_cuda and torch.empty(1, device="meta").device.type == "meta"  # restored


def test_sm_count_decides_the_path_and_the_split_path_moves_what_its_loops_say():
    w = Workload.build(N=32, d=16, gpu="h100")  # 2 query blocks: split on a 132-SM GPU, not on a 2-SM one
    with fake_gpu("cuda", 90, sm_count=132):
        split = check(launchers.by_sm_count, w)
    with fake_gpu("cuda", 90, sm_count=2):
        plain = check(launchers.by_sm_count, w)
    assert _counted(plain) == _dense(w) and plain.traffic.launches == ["_attn"]
    assert _counted(split) == _dense(w, splits=2) and split.traffic.launches == ["_attn", "_combine"]
    assert split.outputs_ok and plain.outputs_ok
    assert split.aliases["_attn.O"] == ["_attn.O2", "_combine.OP"]


def test_an_output_passed_as_two_pointers_has_both_names():
    w = Workload.build(N=40, d=16, gpu="h100")  # 3 query blocks: 0 and 2 store through O, 1 through O2
    r = check(launchers.two_pointers, w)
    assert _counted(r) == _dense(w) and r.outputs_ok
    assert r.aliases["o"] == ["_attn.O", "_attn.O2", "_attn.LSE"]
    assert r.as_dict()["aliases"]["o"] == r.aliases["o"]
    per = r.traffic.per_launch["_attn"]
    assert per.writes_bytes["o"] == 4 * 40 * 16


def _staged(w: Workload) -> dict[str, tuple[int, int]]:
    """``staged``: the staging copies read Q and K once and write both copies (one name, ``_stage.Dst``), and
    ``_attn`` reads the copies where the dense forward reads Q and K."""
    dense = _dense(w)
    q, k = 4 * w.batch * w.heads * w.Nq * w.d, 4 * w.batch * w.kv_heads * w.Nkv * w.d
    return {"q": (q, 0), "k": (k, 0), "_stage.Dst": (dense["q"][0] + dense["k"][0], q + k), "v": dense["v"],
            "o": dense["o"]}


def test_two_buffers_allocated_by_the_launcher_share_the_staging_kernel_s_name():
    w = Workload.build(batch=2, heads=4, kv_heads=2, Nq=40, Nkv=24, d=16, gpu="h100")
    r = check(launchers.staged, w)
    assert _counted(r) == _staged(w) and r.outputs_ok
    assert r.traffic.launches == ["_stage", "_stage", "_attn"]


def _varlen(cu: list[int], H: int, Hkv: int, d: int) -> dict[str, tuple[int, int]]:
    """tensor -> bytes of ``_attn_varlen``: every program reads 2 offsets; sequence of length L, per query head:
    Q L·d, K and V ⌈L/16⌉·L·d (each live query block reads the sequence's keys), O L·d."""
    lens = [b - a for a, b in zip(cu, cu[1:], strict=False)]
    progs = -(-max(lens) // 16) * len(lens) * H
    kv = sum(-(-L // 16) * L for L in lens) * H * d * 4
    return {"q": (sum(lens) * H * d * 4, 0), "k": (kv, 0), "v": (kv, 0), "o": (0, sum(lens) * H * d * 4),
            "cu_seqlens": (2 * progs * 4, 0)}


def test_packed_varlen_batch_counted_and_bounded_as_the_sum_over_its_sequences():
    from attnio.bounds.workloads import best_lower_bound

    cu = [0, 5, 25, 32]
    w = Workload.build(heads=2, kv_heads=1, N=1, d=16, gpu="h100")
    r = check(launchers.varlen, w, cu_seqlens=cu)
    assert _counted(r) == _varlen(cu, 2, 1, 16) and r.outputs_ok
    seqs = Ragged.from_cu_seqlens(cu).sequences(w)
    assert [s.Nq for s in seqs] == [5, 20, 7]
    assert r.lower_bound_words == sum(best_lower_bound(s)[1] for s in seqs)
    with pytest.raises(Exception, match="cu_seqlens"):
        check(launchers.varlen, w, cu_seqlens=[0, 5, 5])


def test_mappings_and_launchers_attnio_cannot_call_are_refused_before_anything_runs():
    from attnio.core.errors import InvalidParameter
    from attnio.triton.launcher import resolve

    w = Workload.build(N=16, d=16, gpu="h100")
    with pytest.raises(InvalidParameter, match="a parameter of launcher 'attention': it has key, out, query"):
        check(launchers.attention, w, args={"quer": "q"})
    with pytest.raises(InvalidParameter, match="an attnio input among q, k, v"):
        check(launchers.attention, w, args={"query": "queries"})
    with pytest.raises(InvalidParameter, match="cu_seqlens"):
        check(launchers.varlen, w)
    with pytest.raises(InvalidParameter, match="FlashFn taking lse"):
        check(launchers.FlashFn, w, args={"sm_scale": "lse"})  # a forward makes no lse
    lau = resolve(launchers.FlashFn)
    assert lau.positional and lau.order == ("q", "k", "v", "sm_scale") and lau.name == "FlashFn"
    assert resolve(launchers.attention_declared).params == {**launchers.attention_declared.attnio_args}


def test_paged_kv_cache_counted_with_its_block_table():
    from attnio.triton.check import paged_kv

    w = Workload.build(batch=2, heads=2, kv_heads=1, Nq=20, Nkv=40, d=16, gpu="h100")  # a partial last page
    r = check(launchers.paged, w, page_size=16)
    BH, Tr, Tc = 4, 2, 3  # query heads, ⌈20/16⌉ query blocks, ⌈40/16⌉ pages per sequence
    kv = 4 * BH * Tr * w.Nkv * 16  # each program reads its sequence's 40 rows, masked past the end
    assert _counted(r) == {"q": (4 * BH * 20 * 16, 0), "k_cache": (kv, 0), "v_cache": (kv, 0),
                           "o": (0, 4 * BH * 20 * 16), "block_table": (4 * BH * Tr * Tc, 0),
                           "seq_lens": (4 * BH * Tr, 0)}
    assert r.outputs_ok and r.lower_bound_id.startswith("workloads.")
    c = paged_kv(torch.ones(2, 1, 40, 4), torch.ones(2, 1, 40, 4), w, 16)
    assert c["k_cache"].shape == (7, 16, 1, 4) and c["block_table"].reshape(-1).tolist() != list(range(6))
    assert float(c["k_cache"].sum()) == 2 * 40 * 4  # every row of K once, the rest zeros
    with pytest.raises(Exception, match="page_size"):
        check(launchers.paged, w)


def test_token_pool_with_kv_indices_is_the_page_size_1_cache():
    w = Workload.build(batch=2, heads=1, Nq=8, Nkv=20, d=16, gpu="h100")
    r = check(launchers.token_pool, w, page_size=1)
    BH, Tr = 2, 1
    kv = 4 * BH * Tr * 20 * 16
    assert _counted(r) == {"q": (4 * BH * 8 * 16, 0), "k_cache": (kv, 0), "v_cache": (kv, 0), "o": (0, 4 * BH * 8 * 16),
                           "kv_indices": (4 * BH * Tr * 20, 0), "kv_indptr": (4 * 2 * BH * Tr, 0)}
    assert r.outputs_ok and r.aliases["k_cache"][0] == "k_pool"


def _cli(*argv: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, TRITON_INTERPRET="1", ATTNIO_CACHE="0")
    return subprocess.run([sys.executable, "-m", "attnio.cli", "kernel", *argv], capture_output=True, text=True,
                          env=env, cwd=str(PKG.parent.parent), timeout=300)


@pytest.mark.subprocess
@pytest.mark.slow
def test_cli_counts_a_package_file_a_module_path_and_a_fake_gpu_with_sms():
    cu = "0,5,25,32"
    p = _cli(f"{LAUNCHERS}:varlen", "--cu-seqlens", cu, "--heads", "2", "--kv-heads", "1", "--d", "16", "--json")
    assert p.returncode == 0, p.stderr
    got = {n: (c["reads_bytes"], c["writes_bytes"]) for n, c in json.loads(p.stdout)["counted"]["tensors"].items()}
    assert got == _varlen([0, 5, 25, 32], 2, 1, 16)
    args = [f"--arg={a}={b}" for a, b in NAMES.items()]
    p = _cli("kernels_shipped.launchers:attention", "--import-root", "tests", "--N", "20", "--d", "16", *args)
    assert p.returncode == 0, p.stderr
    assert "also query, _attn.Q" in p.stdout
    p = _cli(f"{LAUNCHERS}:by_sm_count", "--N", "32", "--d", "16", "--fake-gpu", "cuda:90,sms=132", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["launches"] == ["_attn", "_combine"]


@pytest.mark.parametrize(
    ("target", "extra", "message"),
    [
        (f"{PKG / 'broken.py'}:launch", [], "RuntimeError: this kernel module cannot be imported"),
        ("kernels_shipped.nope:launch", ["--import-root", str(PKG.parent)], "No module named 'kernels_shipped.nope'"),
        (f"{LAUNCHERS}:attention", ["--arg", "quer=q"], "a parameter of launcher 'attention'"),
        (f"{LAUNCHERS}:attention", [], "attention parameter 'query'"),
        (f"{LAUNCHERS}:on_cuda", [], "launcher 'on_cuda' raised AssertionError"),
        (f"{LAUNCHERS}:by_sm_count", ["--fake-gpu", "cuda:90,sms=0"], "fake-gpu="),
    ],
)
def test_cli_bad_input_is_one_line_naming_the_kernel_and_the_cause(capsys, target, extra, message):
    assert main(["kernel", target, "--N", "16", "--d", "16", *extra]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and message in err, err
