"""``attnio.triton.check``, ``attnio kernel``, the ``attnio_kernel`` fixture, the gate's ``triton`` section (tmp
baselines) and the report's "Triton kernels" section, on the example user kernel (examples/causal_fa2_noskip.py)
and tiny bad kernels; skipped without triton and torch."""

from __future__ import annotations

import json
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from triton_env import import_triton  # noqa: E402

_, triton = import_triton()

from attnio.cli import main  # noqa: E402
from attnio.core.workload import Workload  # noqa: E402
from attnio.reports import gate as report_gate  # noqa: E402
from attnio.triton import gate  # noqa: E402

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "causal_fa2_noskip.py"


def _example():
    spec = importlib.util.spec_from_file_location("causal_fa2_noskip", EXAMPLE)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _noskip_formula(w: Workload) -> dict[str, int]:
    """Bytes per tensor of the example kernel (its ``formula_bytes``, split by tensor): per query head Q read
    once, K and V read T_r = ⌈N_q/B_r⌉ times in full (no block skipped), O written once."""
    Tr = -(-w.Nq // 32)
    H, b = w.batch * w.heads, w.bytes_per_word
    out = {"q": H * w.Nq * w.d * b, "k": H * Tr * w.Nkv * w.d * b, "v": H * Tr * w.Nkv * w.dv * b,
           "o": H * w.Nq * w.dv * b}
    assert sum(out.values()) == _example().formula_bytes(w)
    return out


def test_check_counts_the_example_exactly_and_names_the_unskipped_blocks():
    from attnio.bounds.workloads import best_lower_bound
    from attnio.triton.check import check

    w = Workload.build(heads=2, kv_heads=1, N=40, d=16, causal=True, gpu="h100")  # GQA, a partial block
    r = check(_example().launch, w)
    t = r.traffic
    per = {n: t.reads_bytes[n] + t.writes_bytes[n] for n in ("q", "k", "v", "o")}
    assert per == _noskip_formula(w)
    assert r.outputs_ok and r.max_abs_error["o"] < r.tolerance
    assert r.lower_bound_id == best_lower_bound(w)[0]
    assert r.ratio_to_best == r.total_bytes / r.best_bytes > 1
    assert r.dominates.startswith("K and V are read") and "blocks above the diagonal are loaded" in r.dominates
    d = r.as_dict()
    assert d["total_bytes"] == sum(per.values()) and d["outputs_ok"] is True


def _traffic(**per: tuple[int, int]):
    """A Traffic of fp32 tensors: name -> (read words, written words)."""
    from attnio.triton.count import Traffic

    t = Traffic()
    for n, (r, w) in per.items():
        t.reads_words[n], t.writes_words[n], t.reads_bytes[n], t.writes_bytes[n] = r, w, 4 * r, 4 * w
    return t


def test_dominates_maps_a_kernels_statistics_and_scratch_to_attnios_arrays():
    """A kernel's own lse / logits / D (counted as ``<kernel>.<argument>``) are attnio's L / S / D: a kernel
    that moves what attnio's best schedule moves is said to match it word for word, not to have an excess."""
    from attnio.triton.check import _dominates, role_of

    best = {"Q": (64, 0), "K": (96, 0), "V": (96, 0), "O": (0, 64), "L": (0, 8), "S": (40, 16), "D": (8, 8)}
    same = dict(q=(64, 0), k=(96, 0), v=(96, 0), o=(0, 64))
    kernel_own = {"_fwd.L": (0, 8), "_square_tiling.S": (40, 16), "fa2_bwd_preprocess.D": (8, 8)}
    assert [role_of(n) for n in kernel_own] == ["L", "S", "D"]
    assert _dominates(_traffic(**same, **kernel_own), "x", best) == (
        "matches attnio's best schedule (x) word for word", None)
    # more K and V: named, with the group for the causal diagnosis
    more = dict(same, k=(192, 0), v=(192, 0))
    assert _dominates(_traffic(**more, **kernel_own), "x", best) == (
        "K and V are read 2.0× more than by attnio's best schedule (x)", ("K", "V"))
    # the logits written twice: the excess is named by its role
    twice = dict(kernel_own, **{"_square_tiling.S": (40, 32)})
    assert _dominates(_traffic(**same, **twice), "x", best)[0] == (
        "the logits S are moved 1.3× more than by attnio's best schedule (x)")
    # a tensor with no conventional name is named as such, unless the caller declares its role
    renamed = {"_attn_fwd.M" if n == "_fwd.L" else n: x for n, x in kernel_own.items()}
    sentence, _ = _dominates(_traffic(**same, **renamed), "x", best)
    assert sentence.startswith("_attn_fwd.M (not an array of attnio's schedules;") and "moves 32 bytes" in sentence
    assert _dominates(_traffic(**same, **renamed), "x", best, {"_attn_fwd.M": "L"})[0].endswith("word for word")
    # the same total, moved between arrays: the excess is named, and the tie said
    moved = dict(same, q=(56, 0), k=(104, 0))
    assert _dominates(_traffic(**moved, **kernel_own), "x", best)[0] == (
        "K and V are read 1.0× more than by attnio's best schedule (x); the same total as attnio's best schedule")
    # fewer words everywhere: no excess
    assert _dominates(_traffic(**dict(same, k=(48, 0)), **kernel_own), "x", best)[0] == (
        "no array moves more than in attnio's best schedule (x)")


def test_check_takes_declared_roles_from_the_launcher():
    """``attnio_roles`` on the launcher (or ``roles=``) overrides the naming conventions. Here the output is a
    tensor the launcher makes, so it is counted as the kernel's argument ``_fwd.O``: O by convention."""
    from attnio.core.errors import InvalidParameter
    from attnio.triton.check import check

    launch = _example().launch
    w = Workload.build(N=32, d=16, gpu="h100")

    def returns_own(q, k, v, causal, sm_scale):
        return launch(q, k, v, q.new_zeros(q.shape[:3] + (v.shape[3],)), causal, sm_scale)

    r = check(returns_own, w)
    # O by convention (the kernel writes no logsumexp: nothing moves more than attnio's flash2)
    assert "_fwd.O" in r.traffic.names and r.dominates == "no array moves more than in attnio's best schedule (flash2 (per-head))"
    returns_own.attnio_roles = {"_fwd.O": "dO"}  # deliberately wrong: the declaration wins
    assert check(returns_own, w).dominates.startswith("dO is moved: 512 words that attnio's best schedule")
    with pytest.raises(InvalidParameter, match="roles="):
        check(returns_own, w, roles={"_fwd.O": 3})


def test_fixture_assertions_pass_on_the_formula_and_fail_with_an_actionable_message(attnio_kernel):
    launch = _example().launch
    r = attnio_kernel(launch, N=64, d=16, causal=True)
    w = r.check.workload
    r.assert_equals(_noskip_formula(w))
    r.assert_equals(sum(_noskip_formula(w).values()))
    r.assert_within(r.check.ratio_to_bound, of="lower_bound")
    with pytest.raises(pytest.fail.Exception, match=r"counted .* bytes > 1 × attnio's best schedule .*K and V are read"):
        r.assert_within(1.0, of="best_schedule")
    with pytest.raises(pytest.fail.Exception, match=r"k: counted 8,192 bytes, formula 1 \(\+8,191\)"):
        r.assert_equals({"k": 1})
    # roles pass through to attnio.triton.check (a deliberately wrong one shows that they are used)
    wrong = attnio_kernel(launch, N=64, d=16, causal=True, roles={"k": "dK", "v": "dV"})
    assert wrong.check.dominates.startswith("dK is moved: 2,048 words that attnio's best schedule")  # k: 8,192 bytes


def test_cli_prints_the_table_and_json(capsys):
    assert main(["kernel", f"{EXAMPLE}:launch", "--N", "64", "--d", "16", "--causal"]) == 0
    out = capsys.readouterr().out
    assert "blocks above the diagonal are loaded" in out and "counted ÷ bound" in out
    assert main(["kernel", f"{EXAMPLE}:launch", "--N", "32", "--d", "16", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["total_bytes"] == sum(_noskip_formula(Workload.build(N=32, d=16, gpu="h100")).values())
    assert data["outputs_ok"] is True and data["workload"]["causal"] is False


BAD = '''
import triton, triton.language as tl

@triton.jit
def _copy(x, y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs))  # no mask: reads past the end when n < BLOCK

def raises(q, k, v, o):
    raise ValueError("my launcher is broken")

def out_of_bounds(q, k, v, o):
    _copy[(1,)](q, o, q.numel(), BLOCK=4 * q.numel())

def off_cpu(q, k, v, o):
    m = q.to("meta")
    _copy[(1,)](m, o, q.numel(), BLOCK=q.numel())

def not_a_launcher(x, y):
    pass
'''


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("raises", "launcher 'raises' raised ValueError: my launcher is broken"),
        ("out_of_bounds", "unmasked out-of-bounds read of tensor 'q' at element offset 128"),
        ("off_cpu", "a CPU tensor"),
        ("not_a_launcher", "launch="),
        ("missing", "no callable 'missing'"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(tmp_path, capsys, function, message):
    f = tmp_path / "bad_kernels.py"
    f.write_text(BAD)
    assert main(["kernel", f"{f}:{function}", "--N", "8", "--d", "16"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and message in err, err


def test_cli_missing_file_is_one_line_and_exit_2(tmp_path, capsys):
    missing = tmp_path / "no_such_kernels.py"
    assert main(["kernel", f"{missing}:launch", "--N", "8", "--d", "16", "--json"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and f"{missing} not found" in err, err


LATE_KERNELS = '''
import triton, triton.language as tl

@triton.jit
def _copy(x, y, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

def launch(q, k, v, o):
    _copy[(1,)](q, o, q.numel(), BLOCK=2 * q.numel())
'''


def test_cli_interpret_set_after_the_kernel_module_was_imported(tmp_path, monkeypatch, capsys):
    """The kernel's module was imported (its @triton.jit applied) while TRITON_INTERPRET was off; the user's file
    imports it from there: a GPU kernel the interpreter cannot count, one line and exit 2."""
    import importlib
    import sys

    (tmp_path / "late_kernels.py").write_text(LATE_KERNELS)
    (tmp_path / "uses_late.py").write_text("from late_kernels import launch\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    monkeypatch.delitem(sys.modules, "late_kernels", raising=False)
    importlib.import_module("late_kernels")  # imported before TRITON_INTERPRET=1
    try:
        assert main(["kernel", f"{tmp_path / 'uses_late.py'}:launch", "--N", "8", "--d", "16"]) == 2
    finally:
        sys.modules.pop("late_kernels", None)
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "must be set before the module that defines it" in err, err


def test_cli_refuses_a_workload_too_large_for_the_cpu(capsys):
    assert main(["kernel", f"{EXAMPLE}:launch", "--N", str(10**12), "--d", "16"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "at most 67,108,864 (2^26)" in err


def test_cli_refuses_an_untested_triton_where_a_tested_one_is_required(monkeypatch, capsys):
    from attnio.triton import count as count_mod

    monkeypatch.setattr(count_mod, "_ACCEPTED", {})
    monkeypatch.setattr(triton, "__version__", "9.9.9")
    monkeypatch.setenv("ATTNIO_REQUIRE_TRITON", "1")
    assert main(["kernel", f"{EXAMPLE}:launch", "--N", "8", "--d", "16"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "Triton 9.9.9 is untested" in err and "3.9.0" in err


ASKS_THE_GPU = '''
import torch, triton, triton.language as tl
from triton.runtime import driver

TARGET = driver.active.get_current_target()          # at import, as many kernel files do
MAJOR, MINOR = torch.cuda.get_device_capability()
BLOCK = 64 if (MAJOR, MINOR) >= (9, 0) else 32

@triton.jit
def _copy(x, y, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y + offs, tl.load(x + offs, mask=offs < n), mask=offs < n)

def launch(q, o):
    assert torch.cuda.is_available() and TARGET.backend == "cuda"
    sms = driver.active.utils.get_device_properties(torch.cuda.current_device())["multiprocessor_count"]
    assert sms == 132
    dev = driver.active.get_active_torch_device()
    scratch = torch.empty(q.numel(), device=dev)
    _copy[(triton.cdiv(q.numel(), BLOCK),)](q, scratch, q.numel(), BLOCK=BLOCK)
    o.copy_(scratch.view_as(o))
    return o
'''


def test_fake_gpu_runs_a_file_that_queries_the_gpu_unmodified(tmp_path, capsys):
    from attnio.triton import fake_gpu

    f = tmp_path / "asks_the_gpu.py"
    f.write_text(ASKS_THE_GPU)
    assert main(["kernel", f"{f}:launch", "--N", "8", "--d", "16"]) == 2  # no stand-in: no active driver
    assert "importing" in capsys.readouterr().err
    # counted; a copy is not attention, so the output check fails: exit 1, the counts still printed
    assert main(["kernel", f"{f}:launch", "--N", "8", "--d", "16", "--fake-gpu", "cuda:90", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    per = data["counted"]["tensors"]
    assert per["q"]["reads_bytes"] == 8 * 16 * 4 and per["_copy.y"]["writes_bytes"] == 8 * 16 * 4
    assert data["outputs_ok"] is False
    import torch

    with fake_gpu(arch=80) as drv:
        assert torch.cuda.get_device_capability() == (8, 0) and drv.get_current_target().arch == 80
    assert not torch.cuda.is_available()  # restored


@pytest.fixture(scope="module")
def measured():
    ex = _example()
    entry = gate.register("example-noskip", ex.launch, formula=ex.formula_bytes, N=64, d=16, causal=True)
    try:
        yield gate.measure([entry])
    finally:
        gate.unregister(entry.key)


def test_gate_section_holds_exact_counts_and_fails_when_they_grow(measured, tmp_path):
    (entry, r), = measured
    current = {"schema": 1, "io": {}, "triton": gate.gate_entries([entry])["triton"]}
    got = current["triton"][entry.key]
    assert got["total_bytes"] == _example().formula_bytes(entry.build()) == got["reads_bytes"] + got["writes_bytes"]
    path = tmp_path / "baseline.json"
    path.write_text(json.dumps(current))
    baseline = report_gate.load_baseline(path)  # the schema accepts the section
    assert report_gate.compare(baseline, current).ok
    smaller = json.loads(json.dumps(current))
    smaller["triton"][entry.key]["total_bytes"] -= 4
    res = report_gate.compare(smaller, current)
    assert res.problems == [f"triton {entry.key}: total_bytes {got['total_bytes'] - 4} -> {got['total_bytes']} (+4 bytes)"]
    larger = json.loads(json.dumps(current))
    larger["triton"][entry.key]["reads_bytes"] += 8
    assert report_gate.compare(larger, current).ok and any("improved" in n for n in report_gate.compare(larger, current).notes)
    assert report_gate.compare(current, {"schema": 1, "io": {}, "triton": {}}).problems == [
        f"triton {entry.key}: configuration missing from this run"]
    assert "not gated" in report_gate.compare(current, {"schema": 1, "io": {}}).notes[-1]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"schema": 1, "io": {}, "triton": {"k": {"total_bytes": -1}}}))
    with pytest.raises(report_gate.BaselineError, match="triton"):
        report_gate.load_baseline(bad)


def test_report_section_rows(measured):
    from attnio.reports.render import Section
    from attnio.reports.section_triton import HEADERS, build

    (entry, r), = measured
    s = build(Section, measured)
    assert s.title == "Triton kernels"
    tables = [b for b in s.blocks if b[0] == "table"]
    assert len(tables) == 1 and tables[0][1] == HEADERS and len(tables[0][2]) == 1
    row = gate.rows(measured)[0]
    assert row["counted_bytes"] == row["formula_bytes"] and row["counted_over_formula"] == 1.0
    assert row["counted_over_best"] == r.ratio_to_best and "blocks above the diagonal" in row["dominates"]
    assert "| example-noskip |" in gate.markdown([row])


def test_report_section_lists_forward_then_backward_kernels(measured):
    """attnio's FA-2 backward (registry entry flash2-bwd) in the section beside a forward: counted == formula,
    the backward bound, attnio's best backward schedule word for word."""
    from attnio.reports.render import Section
    from attnio.reports.section_triton import HEADERS, build
    from attnio.triton.kernels import KERNELS, gate_launcher

    spec = KERNELS["flash2-bwd"]
    bwd = gate.GateKernel("flash2-bwd", gate_launcher(spec), {"heads": 2, "kv_heads": 1, "Nq": 5, "Nkv": 8, "d": 4,
                                                              "causal": True, "M": 60}, formula=lambda w: 4 * spec.expected(w).io_words)
    both = gate.measure([bwd]) + list(measured)  # backward given first
    [table] = [b for b in build(Section, both).blocks if b[0] == "table"]
    assert table[1] == HEADERS and [(r[0], r[1]) for r in table[2]] == [("example-noskip", "forward"), ("flash2-bwd", "backward")]
    row = dict(zip(HEADERS, table[2][1], strict=True))  # cells as the section prints them
    assert row["counted bytes"] == row["formula bytes"] and float(row["counted ÷ formula"]) == 1
    # attnio's best backward is the fused schedule (no D pass, no dQ initialisation), which the kernel's loop is not
    assert row["best lower bound"].startswith("workloads.bwd") and row["attnio's best schedule"] == "flash2-fused-bwd (grouped)"
    assert int(row["its bytes"]) < int(row["counted bytes"])
    assert float(row["counted ÷ bound"]) > 1 and row["outputs"] == "ok"
    assert "| flash2-bwd | backward |" in gate.markdown(gate.rows(both))


def test_a_launcher_returning_a_tuple_is_checked_on_its_first_tensor():
    from attnio.triton.check import check

    launch = _example().launch
    w = Workload.build(N=32, d=16, gpu="h100")

    def returns_tuple(q, k, v, causal, sm_scale):
        o = q.new_zeros(q.shape[:3] + (v.shape[3],))
        return launch(q, k, v, o, causal, sm_scale), "lse"

    r = check(returns_tuple, w)
    assert r.outputs_ok and r.traffic.writes_bytes["_fwd.O"] == 32 * 16 * 4  # an unnamed argument


def test_check_backward_path_with_a_torch_launcher():
    """A launcher asking for do/dq/dk/dv is a backward: gradients against float64 autograd, the backward bound."""
    import torch

    from attnio.core.workload import Workload
    from attnio.triton.check import check

    def torch_backward(q, k, v, do, dq, dk, dv, causal, sm_scale):
        q_, k_, v_ = (x.detach().double().requires_grad_(True) for x in (q, k, v))
        s = (q_ @ k_.transpose(-1, -2)) * sm_scale
        if causal:
            s = s.masked_fill(torch.ones_like(s, dtype=torch.bool).triu(1), float("-inf"))
        (torch.softmax(s, -1) @ v_).backward(do.double())
        dq.copy_(q_.grad)
        dk.copy_(k_.grad)
        dv.copy_(v_.grad)

    w = Workload.build(N=16, d=8, causal=True, gpu="h100")
    r = check(torch_backward, w)
    assert r.direction == "backward" and r.outputs_ok and set(r.max_abs_error) == {"dq", "dk", "dv"}
    assert r.lower_bound_id.startswith("workloads.bwd") and r.best_schedule.startswith("flash2-fused-bwd")
    assert r.traffic.total_bytes == 0 and r.traffic.launches == []  # no Triton kernel ran: nothing counted


def test_attnio_gate_kernels_fails_when_a_registered_kernel_moves_more(tmp_path, monkeypatch, capsys):
    """End to end through ``attnio gate --kernels FILE.py``; the rest of the gate's figures are left out."""
    f = tmp_path / "my_gate_kernels.py"
    f.write_text(
        "import importlib.util\n"
        "from attnio.triton import gate\n"
        f"spec = importlib.util.spec_from_file_location('ex_for_gate', {str(EXAMPLE)!r})\n"
        "ex = importlib.util.module_from_spec(spec); spec.loader.exec_module(ex)\n"
        "gate.register('user-noskip', ex.launch, formula=ex.formula_bytes, N=32, d=16, causal=True)\n"
    )
    monkeypatch.setattr(gate, "_REGISTRY", {})
    monkeypatch.setattr(report_gate, "collect", lambda *a, **k: {"schema": 1, "io": {}, **gate.gate_entries(gate.registered())})
    base = tmp_path / "baseline.json"
    argv = ["gate", "--baseline", str(base), "--no-progress", "--no-verify", "--kernels", str(f)]
    assert main(argv + ["--update"]) == 0
    recorded = json.loads(base.read_text())["triton"]
    (key, entry), = recorded.items()
    assert key.startswith("user-noskip|") and entry["total_bytes"] == _example().formula_bytes(Workload.build(N=32, d=16, gpu="h100"))
    capsys.readouterr()
    assert main(argv) == 0
    entry["total_bytes"] -= 1  # the baseline moved less: this run's count grew
    base.write_text(json.dumps({"schema": 1, "io": {}, "triton": recorded}))
    assert main(argv) == 1
    assert f"triton {key}: total_bytes" in capsys.readouterr().err
    assert main(["gate", "--baseline", str(base), "--kernels", str(tmp_path / "missing.py")]) == 2


def test_cli_fast_and_formula_options_name_the_option_and_length_step_needs_fast(capsys):
    """--length-step without --fast (or with --formula) was ignored (exit 0): now refused like --block; --fast
    --schedule per-head on a non-attnio launcher said 'block=None is invalid' and now names the schedule; errors
    from the library name the CLI option (--arg, --length-step), not its parameter (args, length_step); an explicit
    --l2-order that is not a permutation names the grid in Triton's (x, y, z) order; --widths with a repeated or
    an empty name is bad input (exit 2; it was exit 1 after the fit, or the default basis)."""
    base = ["kernel", f"{EXAMPLE}:launch", "--N", "64", "--d", "16"]
    cases = [(["--length-step", "4"], "length-step=4", "only with --fast"),
             (["--formula", "--length-step", "4"], "length-step=4", "only with --fast"),
             (["--fast", "--schedule", "per-head"], "schedule='per-head'", "only with attnio.triton"),
             (["--fast", "--length-step", "0"], "length-step=0", "length-step >= 1"),
             (["--arg", "foo=bar"], "arg='foo=bar'", "an attnio input"),
             (["--l2", "h100", "--l2-order", "0,1,1"], "l2-order='0,1,1'", "grid (x, y, z) = (2, 1, 1)")]
    for extra, name, why in cases:
        assert main([*base, *extra]) == 2, extra
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and name in err and why in err, (extra, err)
    for widths, name in (("1,d,d", "widths=('1', 'd', 'd')"), ("", "widths=['']")):
        assert main(["kernel", f"{EXAMPLE}:launch", "--d", "16", "--formula", "--no-solver", "--block", "32x32",
                     "--widths", widths]) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and name in err and "distinct names among" in err, (widths, err)


def test_cli_formula_on_a_power_of_two_kernel_names_the_shape_and_the_way_out(capsys):
    """The example's tl.arange(0, D) needs a power-of-two width; the default design counts d = 3: the error was
    the interpreter's bare ValueError; now one line naming the shape and how to choose power-of-two widths."""
    assert main(["kernel", f"{EXAMPLE}:launch", "--d", "16", "--formula", "--no-solver", "--block", "32x32"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "counting the shape Z=" in err and "power of 2" in err and "points={'widths'" in err, err
