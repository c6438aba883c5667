"""The hooks cannot silently miss traffic (attnio/triton/hooks.py): the structural probe of the interpreter's
native module, the self-test of tiny kernels with known counts, the refusal of a native entry point nobody
reviewed, the policy for untested Triton versions, ``ATTNIO_REQUIRE_TRITON=1``, and the count cache
(attnio/triton/cache.py). Triton's interpreter on the CPU; skipped without triton and torch."""

from __future__ import annotations

import json
import types
import warnings

import pytest
from triton_env import import_triton

torch, triton = import_triton()
import triton.runtime.interpreter as interp  # noqa: E402

import attnio.triton as at  # noqa: E402
from attnio.triton import (  # noqa: E402
    cache,
    gate,  # noqa: E402
    hooks,
)
from attnio.triton import count as count_mod  # noqa: E402
from attnio.triton.selftest_kernels import copy_kernel  # noqa: E402


def _native_copy(**changes) -> types.ModuleType:
    """A stand-in for the interpreter's native module: the real one's attributes, with ``changes`` (None drops)."""
    real = interp._interpreter
    fake = types.ModuleType(real.__name__)
    for n in dir(real):
        if not n.startswith("__"):
            setattr(fake, n, getattr(real, n))
    for n, v in changes.items():
        if v is None:
            delattr(fake, n)
        else:
            setattr(fake, n, v)
    return fake


def test_probe_finds_nothing_changed_in_the_installed_triton():
    assert hooks.probe() == []
    # the memory entry points are exactly the counted ones; the rest were reviewed
    found = hooks.native_callables(interp._interpreter)
    assert set(hooks.MEMORY_OPS) <= found and found - set(hooks.MEMORY_OPS) <= hooks.NON_MEMORY


def test_probe_names_what_changed_in_the_native_module(monkeypatch):
    def load(ptrs, mask, other):  # one argument fewer than the proxy passes
        return None

    fake = _native_copy(prefetch=lambda ptrs: None, atomic_cas=None, load=load)
    monkeypatch.setattr(interp, "_interpreter", fake)
    problems = hooks.probe()
    assert any("new entry point 'prefetch'" in p for p in problems), problems
    assert any("'atomic_cas' is gone" in p for p in problems), problems
    assert any("'load' takes 3 positional arguments; the counter passes 4" in p for p in problems), problems
    assert len(problems) == 3


def test_probe_reads_the_interpreters_source_for_other_routes_to_memory(monkeypatch):
    src = "from .._C.libtriton import interpreter as _interpreter\nfrom .._C.libtriton.interpreter import load\n" \
          "x = _interpreter.prefetch(p)\n"
    monkeypatch.setattr(hooks.inspect, "getsource", lambda obj: src if obj is interp else "")
    problems = hooks.probe()
    assert any("imports its native module another way" in p for p in problems), problems
    assert any("calls _interpreter.prefetch, which is not reviewed" in p for p in problems), problems


def test_an_unreviewed_native_callable_is_refused_not_forwarded():
    fake = _native_copy(prefetch=lambda ptrs: None)
    proxy = hooks.CountingInterpreter(fake, counter=None)
    with pytest.raises(hooks.UnreviewedEntryPoint, match="native 'prefetch'.*would miss traffic"):
        proxy.prefetch  # noqa: B018
    assert proxy.fma_fp32 is fake.fma_fp32  # reviewed: arithmetic, no memory
    assert proxy.RELAXED is fake.RELAXED and proxy.RMW_OP is fake.RMW_OP  # constants and enum types


def test_an_unreviewed_callable_used_during_a_count_fails_the_count(monkeypatch):
    """The interpreter reaching memory through a name the proxy does not count: the launch fails, naming it."""
    monkeypatch.setattr(interp, "_interpreter", _native_copy(fma_fp32=None, prefetch=interp._interpreter.load))
    real_load = interp.InterpreterBuilder.create_masked_load

    def load_through_prefetch(self, ptrs, mask, other, cache_policy, is_volatile):
        interp._interpreter.prefetch  # noqa: B018  (a new route to memory in a later Triton)
        return real_load(self, ptrs, mask, other, cache_policy, is_volatile)

    monkeypatch.setattr(interp.InterpreterBuilder, "create_masked_load", load_through_prefetch)
    x, o = torch.arange(4.0), torch.zeros(4)
    with pytest.raises(Exception, match="prefetch"):
        with at.count_traffic(x=x, o=o):
            copy_kernel[(1,)](x, o, 4, BLOCK=4)


def test_self_test_passes_and_catches_a_hook_that_misses_stores(monkeypatch):
    assert count_mod.self_test() == []
    real_store = hooks.CountingInterpreter.store

    def uncounted_store(self, ptrs, value, mask):
        return self._real.store(ptrs, value, mask)

    monkeypatch.setattr(hooks.CountingInterpreter, "store", uncounted_store)
    problems = count_mod.self_test()
    assert problems and "masked load and store" in problems[0], problems
    monkeypatch.setattr(hooks.CountingInterpreter, "store", real_store)


def test_untested_version_counts_with_a_warning_when_probe_and_self_test_pass(monkeypatch):
    monkeypatch.setattr(count_mod, "_ACCEPTED", {})
    monkeypatch.setattr(triton, "__version__", "9.9.9")
    monkeypatch.delenv("ATTNIO_REQUIRE_TRITON", raising=False)
    x, o = torch.arange(10.0), torch.zeros(10)
    with pytest.warns(at.UntestedTritonWarning, match="9.9.9 is untested.*passed attnio's structural probe and self-test"):
        with at.count_traffic(x=x, o=o) as t:
            copy_kernel[(3,)](x, o, 10, BLOCK=4)
    assert t.reads_words["x"] == 10 and t.writes_words["o"] == 10
    assert count_mod._ACCEPTED == {"9.9.9": "probed"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # decided once per process: no second probe, no second warning
        with at.count_traffic(x=x, o=o):
            pass


def test_untested_version_whose_interpreter_changed_is_refused_naming_the_change(monkeypatch):
    monkeypatch.setattr(count_mod, "_ACCEPTED", {})
    monkeypatch.setattr(triton, "__version__", "9.9.9")
    monkeypatch.delenv("ATTNIO_REQUIRE_TRITON", raising=False)
    monkeypatch.setattr(interp, "_interpreter", _native_copy(prefetch=lambda ptrs: None))
    with pytest.raises(at.UntestedTriton, match=r"9\.9\.9 is untested.*could miss traffic.*'prefetch'"):
        with at.count_traffic():
            pass


def test_a_tested_version_whose_interpreter_changed_is_refused_too(monkeypatch):
    monkeypatch.setattr(count_mod, "_ACCEPTED", {})
    monkeypatch.setattr(triton, "__version__", "3.9.0")
    monkeypatch.setattr(interp, "_interpreter", _native_copy(store=None))
    with pytest.raises(at.UntestedTriton, match=r"Triton 3\.9\.0: .*'store' is gone"):
        with at.count_traffic():
            pass


def test_require_triton_makes_an_untested_or_uncounted_triton_a_gate_failure(monkeypatch):
    base = {"triton": {"k|N=8": {"reads_bytes": 10, "writes_bytes": 2, "total_bytes": 12}}}
    current = {"unavailable": ["triton: triton or torch not installed (triton)"]}
    monkeypatch.delenv("ATTNIO_REQUIRE_TRITON", raising=False)
    problems, notes = gate.compare(base, current)
    assert problems == [] and "not installed (triton)" in notes[0] and "not gated" in notes[0]
    monkeypatch.setenv("ATTNIO_REQUIRE_TRITON", "1")
    problems, notes = gate.compare(base, current)
    assert len(problems) == 1 and "ATTNIO_REQUIRE_TRITON=1 requires them" in problems[0] and notes == []


def test_available_is_a_query(monkeypatch):
    import os

    monkeypatch.setenv("TRITON_INTERPRET", "1")
    before = dict(os.environ)
    assert gate.available() is None and dict(os.environ) == before  # asking sets nothing
    monkeypatch.setenv("TRITON_INTERPRET", "0")  # (not the knob: setting it leaves an override behind)
    before = dict(os.environ)
    assert "TRITON_INTERPRET=1 is not set" in gate.available() and dict(os.environ) == before
    assert "TRITON_INTERPRET=1 is not set" in gate.gate_entries()["unavailable"][0]


# ---------------------------------------------------------------------------------------------------- the cache


def _synthetic_check():
    """A KernelCheck as attnio.triton.check makes it, with a small hand-made Traffic (no launch)."""
    from attnio.core.workload import Workload
    from attnio.triton.check import KernelCheck
    from attnio.triton.count import Tally, Traffic

    t = Traffic()
    for f, v in (("reads_bytes", {"q": 64, "k": 128}), ("writes_bytes", {"q": 0, "k": 0, "o": 64}),
                 ("reads_words", {"q": 16, "k": 32}), ("writes_words", {"q": 0, "k": 0, "o": 16}),
                 ("touched", {"q": 16, "k": 16, "o": 16})):
        getattr(t, f).update(v)
    t.per_launch = {"_fwd": Tally()}
    t.per_launch["_fwd"].reads_bytes.update({"q": 64})
    t.launches = ["_fwd"]
    w = Workload.build(N=4, d=4, M=64)
    return KernelCheck(w, "forward", t, "workloads.trivial", 48, "flash2 (per-head)", 48, {"Q": (16, 0)},
                       {"o": 1e-7}, 1e-5, "matches", 0.5, ["a note"])


def test_cache_round_trips_on_disk_and_a_changed_source_hash_misses(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("ATTNIO_CACHE", "1")
    monkeypatch.setattr(cache, "_MEMORY", {})
    [entry] = [e for e in gate.configurations() if e.name == "square_tiling"]
    assert entry.sources and cache.lookup(entry) is None
    r = _synthetic_check()
    cache.store(entry, r)
    files = list((tmp_path / "attnio" / "triton").glob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["traffic"]["launches"] == ["_fwd"]
    assert not list((tmp_path / "attnio" / "triton").glob(".*.tmp"))  # written atomically: no leftovers
    monkeypatch.setattr(cache, "_MEMORY", {})  # a new process: read from disk
    back = cache.lookup(entry)
    assert back is not None and back.workload == entry.build()
    assert back.traffic.as_dict() == r.traffic.as_dict() and back.traffic.launches == ["_fwd"]
    assert back.traffic.per_launch["_fwd"].reads_bytes == {"q": 64}
    assert (back.total_bytes, back.best_per_array, back.dominates, back.notes) == (r.total_bytes, r.best_per_array, r.dominates, r.notes)
    # a changed kernel source is another key: a miss, in memory and on disk
    real = cache.source_hash
    monkeypatch.setattr(cache, "source_hash", lambda mods: "0" * 64 if mods == entry.sources else real(mods))
    assert cache.lookup(entry) is None
    monkeypatch.setattr(cache, "source_hash", real)
    assert cache.lookup(entry) is not None
    # another Triton version is another key
    monkeypatch.setattr(triton, "__version__", "0.0.0")
    assert cache.lookup(entry) is None


def test_cache_off_keeps_nothing_on_disk_and_user_entries_are_never_cached(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setenv("ATTNIO_CACHE", "0")
    monkeypatch.setattr(cache, "_MEMORY", {})
    [entry] = [e for e in gate.configurations() if e.name == "square_tiling"]
    cache.store(entry, _synthetic_check())
    assert not (tmp_path / "attnio").exists() and cache.lookup(entry) is not None  # this process only
    user = gate.GateKernel("mine", print, {"N": 4, "d": 4, "M": 64})
    cache.store(user, _synthetic_check())
    assert cache.key(user) is None and cache.lookup(user) is None


def test_measure_is_counted_once_per_process(monkeypatch):
    """gate.measure reads the cache: a second call launches nothing (counted by how often check runs)."""
    from attnio.triton import check as check_mod

    monkeypatch.setattr(cache, "_MEMORY", {})
    [entry] = [e for e in gate.configurations() if e.name == "flash2-grouped" and e.build().Nq == 4]  # the quickest
    calls = []
    real = check_mod.check
    monkeypatch.setattr(check_mod, "check", lambda *a, **k: calls.append(1) or real(*a, **k))
    [(_, first)] = gate.measure([entry])
    [(_, second)] = gate.measure([entry])
    assert len(calls) == 1 and second is first and first.total_bytes == entry.formula(entry.build())


def test_a_kernel_module_imported_before_triton_interpret_says_so(monkeypatch):
    """attnio's kernels are module-level @triton.jit: compiled for the GPU when their module was imported without
    TRITON_INTERPRET, a launcher given CPU tensors says what to do (the interpreted ones pass)."""
    from attnio.core.errors import Unsupported
    from attnio.triton.kernels import _common, fa2_fwd

    x = torch.zeros(2)
    _common.require_interpreted(fa2_fwd._fa2_fwd, x)  # imported with TRITON_INTERPRET=1 (tests/conftest.py)
    monkeypatch.setenv("TRITON_INTERPRET", "0")  # (not the knob: setting it leaves an override behind)
    gpu_kernel = triton.jit(fa2_fwd._fa2_fwd.fn)
    with pytest.raises(Unsupported, match="set TRITON_INTERPRET=1 before attnio.triton.kernels.fa2_fwd"):
        _common.require_interpreted(gpu_kernel, x)
