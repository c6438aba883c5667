"""Every figure of the report and of the gate that is not a row of the sweep, computed in one place.

The forward grid's figures flow grid → sweep → store (reports/sweep.py); everything else the report prints or
the gate guards comes from here, as plain data:

- **runner call sites**: :func:`forward_count`, :func:`backward_count`, :func:`training_step`, :func:`workload_count`,
  :func:`workload_backward_count` and :func:`workload_training` are the only calls from reports/ into the
  algorithms' runners besides the sweep (one function per kind of run, count-only);
- **report figures**: the backward pass (:func:`backward_regime_map`, :func:`backward_measured`,
  :func:`backward_slopes`, :func:`backward_training`) and the workloads (:func:`model_rows`,
  :func:`training_rows`, :func:`decode_rows`, :func:`causal_half_rows`), read by the report's sections;
- **gate figures**: each entry of :data:`GATE_SOURCES` gives some of the gate's sections (``io``,
  ``formulas``, ``bounds``, ``constants``); :func:`gate_entries` merges them for :func:`attnio.reports.gate.collect`.
  The gate covers every formula table (forward, backward, workload forward and backward, approximate) and the
  I/O counts of the backward at fixed points and of named causal and GQA workloads, forward and backward.

A new kind of figure is one registration: a function ``() -> {gate section: {key: entry}}`` decorated with
:func:`gate_source` (keys of its own, prefixed by its kind), and, for the report, a section module that reads
its data from here.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from attnio.bounds.expr import to_json

# runner call sites ---------------------------------------------------------------------------------------


def backward_count(name: str, N: int, d: int, M: int) -> Any:
    """The measurement of a count-only backward run of ``name`` (plain, one head)."""
    from attnio.algorithms.run import run

    return run(name, pass_="backward", N=N, d=d, M=M, count_only=True).measurement


def forward_count(name: str, N: int, d: int, M: int, tiling: Any = None) -> Any:
    """The measurement of a count-only forward run of ``name`` (plain, one head), with its own or the given tiling
    (the sweep runs the grid's forward rows itself, :mod:`attnio.reports.sweep`)."""
    from attnio.algorithms.run import run

    return run(name, N=N, d=d, M=M, count_only=True, tiling=tiling).measurement


def training_step(forward: str, N: int, d: int, M: int, dv: int | None = None) -> Any:
    """A count-only training step (``forward``, then its backward), plain, one head."""
    from attnio.algorithms.run import run

    return run(forward, pass_="step", N=N, d=d, dv=dv, M=M, count_only=True)


def workload_count(algorithm: str, w: Any, schedule: str = "per-head") -> Any:
    """The result (``.measurement``, ``.tiling``) of a count-only forward run over workload ``w``."""
    from attnio.algorithms.run import run

    return run(algorithm, w, pass_="forward", schedule=schedule, count_only=True)


def workload_backward_count(algorithm: str, w: Any, schedule: str) -> Any:
    """The measurement of a count-only backward run over workload ``w``."""
    from attnio.algorithms.run import run

    return run(algorithm, w, pass_="backward", schedule=schedule, count_only=True).measurement


def workload_training(forward: str, w: Any, schedule: str) -> Any:
    """A count-only training step over workload ``w`` (``.forward.measurement``, ``.backward.measurement``)."""
    from attnio.algorithms.run import run

    return run(forward, w, pass_="step", schedule=schedule, count_only=True)


# backward figures ----------------------------------------------------------------------------------------

BWD_MAP_N = 4096
BWD_MAP_DS = [8, 16, 32, 64, 128, 256]
BWD_MAP_MS = [2**k for k in range(6, 21)]
BWD_SLOPE_NS = [2**k for k in range(12, 17)]
BWD_SLOPE_POINTS = [("flash2-bwd", 64, 16384), ("flash1-fit-bwd", 64, 16384), ("square_tiling-bwd", 128, 4096), ("standard-bwd", 64, 16384)]
BWD_MEASURE_POINTS = [(4096, 64, 16384), (4096, 64, 65536), (4096, 128, 4096), (16384, 128, 131072)]
TRAINING_POINT = (4096, 64, 65536)
TRAINING_FORWARDS = ["flash2", "flash2-square", "flash1", "flash1-fit", "standard", "square_tiling", "auto"]
BWD_GATE_POINTS = [(1024, 64, 16384), (4096, 64, 65536), (4096, 128, 4096), (65536, 128, 262144), (1000, 13, 777)]


def _bwd_unit(N: int, d: int, M: int) -> float:
    return N * N * d * d / M


def _fits(name: str, N: int, d: int, M: int) -> bool:
    from attnio.algorithms import registry as reg

    return M >= reg.get(name).tiling_cls.min_M(N, d, d)


def backward_regime_map() -> tuple[dict[tuple[int, int], str], dict[tuple[int, int], str]]:
    """At N = :data:`BWD_MAP_N`, per (d, M): the backward schedule auto picks ("none fits" if none), and the
    largest backward lower bound whose model covers it."""
    from attnio.algorithms import auto
    from attnio.bounds import backward as bb
    from attnio.core.errors import InvalidParameter

    best: dict[tuple[int, int], str] = {}
    tight: dict[tuple[int, int], str] = {}
    for d in BWD_MAP_DS:
        for M in BWD_MAP_MS:
            try:
                name = auto.choose("backward", BWD_MAP_N, d, M)[0]
            except InvalidParameter:  # nothing fits
                name = "none fits"
            best[(d, M)] = name
            tight[(d, M)] = bb.best_lower_bound(BWD_MAP_N, d, M, None if name == "none fits" else name)[0]
    return best, tight


def backward_measured() -> list[dict[str, Any]]:
    """Each backward schedule with a formula at :data:`BWD_MEASURE_POINTS` (where it fits): measured words, the
    formula's, the constant in N²d²/M, the best lower bound covering it."""
    from attnio.bounds import backward as bb
    from attnio.bounds import costs

    rows = []
    for N, d, M in BWD_MEASURE_POINTS:
        for name in sorted(costs.BACKWARD_FORMULAS):
            if not _fits(name, N, d, M):
                continue
            meas = backward_count(name, N, d, M)
            lb_id, lb = bb.best_lower_bound(N, d, M, name)
            rows.append({"N": N, "d": d, "M": M, "name": name, "io": meas.io_words,
                         "equals_formula": meas.io == costs.backward_cost(name, N=N, d=d, M=M),
                         "constant": meas.io_words / _bwd_unit(N, d, M), "bound": lb_id,
                         "ratio": meas.io_words / float(lb) if lb > 0 else None, "overflowed": meas.overflowed})
    return rows


def backward_slopes() -> list[dict[str, Any]]:
    """Log-log slope in N of measured backward I/O over :data:`BWD_SLOPE_NS`, at each :data:`BWD_SLOPE_POINTS`."""
    out = []
    for name, d, M in BWD_SLOPE_POINTS:
        ios = [backward_count(name, N, d, M).io_words for N in BWD_SLOPE_NS]
        slope = (math.log(ios[-1]) - math.log(ios[0])) / (math.log(BWD_SLOPE_NS[-1]) - math.log(BWD_SLOPE_NS[0]))
        out.append({"name": name, "d": d, "M": M, "slope": slope})
    return out


def backward_training() -> dict[str, Any]:
    """Training steps at :data:`TRAINING_POINT`: per forward its backward and words, against the sum of the best
    proved forward bound (B1/B2) and the best backward bound covering flash2-bwd."""
    from attnio.bounds import backward as bb
    from attnio.bounds import constants as cons
    from attnio.bounds import costs, expr
    from attnio.core.errors import AttnioError

    N, d, M = TRAINING_POINT
    env = {"N": N, "d": d, "M": M, "dv": d}
    fwd_lb = max(float(expr.evaluate(b.expr, env)) for b in (cons.B1, cons.B2) if all(r.holds(env) for r in b.regime))
    bwd_lb = float(bb.best_lower_bound(N, d, M, "flash2-bwd")[1])
    rows = []
    for fwd in TRAINING_FORWARDS:
        try:
            st = training_step(fwd, N, d, M)
        except AttnioError as e:  # a forward that does not fit M at this point
            rows.append({"forward": fwd, "error": type(e).__name__})
            continue
        f, b = st.forward.measurement, st.backward.measurement
        rows.append({
            "forward": fwd + (f" → {st.forward.tiling.algorithm}" if fwd == "auto" else ""),
            "backward": st.backward.algorithm + (f" → {st.backward.tiling.algorithm}" if st.backward.algorithm == "auto-bwd" else ""),
            "forward_io": f.io_words, "backward_io": b.io_words, "overflowed": f.overflowed or b.overflowed,
        })
    f1 = costs.backward_cost("flash1-bwd", N=N, d=d, M=M).io_words
    f2 = costs.backward_cost("flash2-bwd", N=N, d=d, M=M).io_words
    return {"N": N, "d": d, "M": M, "forward_bound": fwd_lb, "backward_bound": bwd_lb, "rows": rows, "flash1_bwd": f1, "flash2_bwd": f2}


# workload figures ----------------------------------------------------------------------------------------

GPUS = ("a100", "h100", "h200")
MODELS: tuple[tuple[str, dict[str, int]], ...] = (
    ("GPT-2 medium", {"heads": 16, "kv_heads": 16, "N": 1024, "d": 64}),
    ("Llama-style GQA, N = 4096", {"heads": 32, "kv_heads": 8, "N": 4096, "d": 128}),
    ("Llama-style GQA, N = 32768", {"heads": 32, "kv_heads": 8, "N": 32768, "d": 128}),
)
DECODE_NQ = (1, 2, 4, 8, 16)
DECODE_NKV = 32768
# schedules that fit M (flash1 as published runs in audit mode: its working set exceeds M)
CANDIDATES = (("flash2", "per-head"), ("flash2", "grouped"), ("flash1-fit", "per-head"), ("standard", "per-head"), ("square_tiling", "per-head"))


def _counts(w: Any) -> dict[str, Any]:
    from attnio.core.errors import InvalidParameter

    out = {}
    for alg, sched in CANDIDATES:
        if sched == "grouped" and w.groups == 1:
            continue  # one query head per K/V head: the grouped loop is the per-head loop
        try:
            out[f"{alg} ({sched})"] = workload_count(alg, w, sched).measurement
        except InvalidParameter:  # M below the schedule's minimum
            continue
    return out


def _kv(m: Any) -> int:
    return m.per_array["K"].reads_words + m.per_array["V"].reads_words


def _kv_bwd(m: Any) -> int:
    """K/V words of a backward run: K, V read, partial dK, dV read back (per-head), dK, dV written."""
    return sum(m.per_array[a].reads_words + m.per_array[a].writes_words for a in ("K", "V", "dK", "dV"))


def model_rows(models: tuple[tuple[str, dict[str, int]], ...] = MODELS, gpus: tuple[str, ...] = GPUS) -> list[dict[str, Any]]:
    """One row per (model, GPU): causal, bf16, batch 1 (one sequence, one layer's attention call), forward.

    >>> rows = model_rows(models=(("tiny", dict(heads=4, kv_heads=2, N=256, d=16)),), gpus=("a100",))
    >>> rows[0]["best"].startswith("flash2"), rows[0]["ratio"] >= 1
    (True, True)
    """
    from attnio.bounds.workloads import best_lower_bound
    from attnio.core.workload import Workload

    rows = []
    for model, shape in models:
        for gpu in gpus:
            w = Workload.build(batch=1, causal=True, dtype="bf16", gpu=gpu, **shape)
            c = _counts(w)
            best = min(c, key=lambda k: (c[k].io_words, "grouped" in k, k))
            lb_id, lb = best_lower_bound(w)
            ph, gr = c.get("flash2 (per-head)"), c.get("flash2 (grouped)")
            rows.append(
                {
                    "model": model, "gpu": gpu, "M": w.M, "best": best, "best_bytes": w.io_bytes(c[best].io_words),
                    "bound": lb_id, "bound_bytes": float(lb) * w.bytes_per_word, "ratio": float(c[best].io_words / lb),
                    "kv_per_head_bytes": None if ph is None else w.io_bytes(_kv(ph)),
                    "kv_grouped_bytes": None if gr is None else w.io_bytes(_kv(gr)),
                }
            )
    return rows


#: the backwards a training-step row may pair with the flash2 forward (the cheaper is taken, ties to the first).
TRAINING_BACKWARDS = ("flash2-bwd", "flash2-fused-bwd")


def training_rows(models: tuple[tuple[str, dict[str, int]], ...] = MODELS, gpus: tuple[str, ...] = GPUS,
                  backwards: tuple[str, ...] = TRAINING_BACKWARDS) -> list[dict[str, Any]]:
    """One row per (model, GPU): bytes per training step (forward + backward) of the cheapest flash2 forward +
    backward of ``backwards`` (default :data:`TRAINING_BACKWARDS`) workload schedule (per-head or grouped, causal, bf16, batch 1; ties to
    per-head, then to flash2-bwd), against the forward bound + the backward bound, and the K/V bytes of both
    schedules (the GQA saving) with that backward.

    >>> r = training_rows(models=(("tiny", dict(heads=4, kv_heads=2, N=256, d=16)),), gpus=("a100",))[0]
    >>> r["ratio"] >= 1, r["total_bytes"] == r["forward_bytes"] + r["backward_bytes"]
    (True, True)
    """
    from attnio.bounds.workloads import best_backward_lower_bound, best_lower_bound
    from attnio.core.workload import Workload

    rows = []
    for model, shape in models:
        for gpu in gpus:
            w = Workload.build(batch=1, causal=True, dtype="bf16", gpu=gpu, **shape)
            fwd = {s: workload_count("flash2", w, s).measurement for s in ("per-head", "grouped")}
            bwd = {(s, bw): workload_backward_count(bw, w, s) for s in fwd for bw in backwards}
            back = {s: min(backwards, key=lambda bw, s=s: bwd[(s, bw)].io_words) for s in fwd}  # ties: the first
            steps = {s: (fwd[s], bwd[(s, back[s])]) for s in fwd}  # (forward, backward) measurements
            best = min(steps, key=lambda s: (steps[s][0].io_words + steps[s][1].io_words, s != "per-head"))
            f, b = steps[best]
            fid, flb = best_lower_bound(w)
            bid, blb = best_backward_lower_bound(w)
            ph, gr = steps["per-head"], steps["grouped"]
            kv_ph = _kv(ph[0]) + _kv_bwd(ph[1])
            kv_gr = _kv(gr[0]) + _kv_bwd(gr[1])
            rows.append(
                {
                    "model": model, "gpu": gpu, "M": w.M, "best": f"flash2 + {back[best]} ({best})",
                    "forward_bytes": w.io_bytes(f.io_words), "backward_bytes": w.io_bytes(b.io_words),
                    "total_bytes": w.io_bytes(f.io_words + b.io_words),
                    "bound": f"{fid} + {bid}", "bound_bytes": float(flb + blb) * w.bytes_per_word,
                    "ratio": float((f.io_words + b.io_words) / (flb + blb)),
                    "fwd_ratio": float(f.io_words / flb), "bwd_ratio": float(b.io_words / blb),
                    "kv_fwd_per_head_bytes": w.io_bytes(_kv(ph[0])), "kv_fwd_grouped_bytes": w.io_bytes(_kv(gr[0])),
                    "kv_step_per_head_bytes": w.io_bytes(kv_ph), "kv_step_grouped_bytes": w.io_bytes(kv_gr),
                    "step_per_head_bytes": w.io_bytes(ph[0].io_words + ph[1].io_words),
                    "step_grouped_bytes": w.io_bytes(gr[0].io_words + gr[1].io_words),
                }
            )
    return rows


def decode_rows(gpus: tuple[str, ...] = GPUS) -> list[dict[str, Any]]:
    """Llama-style GQA decoding: N_q = 1 … 16 new tokens against N_kv = 32768 cached, causal, bf16, per token."""
    from attnio.bounds.workloads import best_lower_bound
    from attnio.core.workload import Workload

    rows = []
    for gpu in gpus:
        for nq in DECODE_NQ:
            w = Workload.build(heads=32, kv_heads=8, Nq=nq, Nkv=DECODE_NKV, d=128, causal=True, dtype="bf16", gpu=gpu)
            c = _counts(w)
            ph, gr = c["flash2 (per-head)"], c["flash2 (grouped)"]
            best = min(c, key=lambda k: (c[k].io_words, "grouped" in k, k))
            lb_id, lb = best_lower_bound(w)
            rows.append(
                {
                    "gpu": gpu, "Nq": nq, "per_head_bytes_per_token": w.io_bytes(ph.io_words) / nq,
                    "grouped_bytes_per_token": w.io_bytes(gr.io_words) / nq, "best": best,
                    "bound_bytes_per_token": float(lb) * w.bytes_per_word / nq, "bound": lb_id,
                    "ratio": float(c[best].io_words / lb), "saving": ph.io_words / gr.io_words,
                }
            )
    return rows


def causal_half_rows(gpu: str = "h100") -> list[dict[str, Any]]:
    """Per-head flash2, one head (d = 128, bf16): causal ÷ non-causal words as N/B_r grows (FlashAttention-2 §3.1.1)."""
    from attnio.core.workload import Workload

    rows = []
    for n in (1024, 4096, 32768, 131072):
        c = workload_count("flash2", Workload.build(N=n, d=128, causal=True, dtype="bf16", gpu=gpu))
        f = workload_count("flash2", Workload.build(N=n, d=128, dtype="bf16", gpu=gpu))
        T = -(-n // c.tiling.B_r)
        rows.append({"N": n, "T_r": T, "ratio": c.measurement.io_words / f.measurement.io_words,
                     "kv_ratio": c.measurement.per_array["K"].reads_words / f.measurement.per_array["K"].reads_words})
    return rows


# gate figures --------------------------------------------------------------------------------------------

GateSource = Callable[[], dict[str, dict[str, Any]]]
#: name -> a function giving {gate section: {key: entry}}; keys of one source never collide with another's
GATE_SOURCES: dict[str, GateSource] = {}
#: sources whose ``io`` entries belong to the default grid's run (left out when the gate runs another grid)
DEFAULT_GRID_IO = ("backward", "workloads")


def gate_source(name: str) -> Callable[[GateSource], GateSource]:
    """Register a gate source under ``name`` (the one step that adds a kind of figure to the gate)."""

    def register(fn: GateSource) -> GateSource:
        assert name not in GATE_SOURCES, f"gate source {name} registered twice"
        GATE_SOURCES[name] = fn
        return fn

    return register


def gate_entries(*, default_grid: bool = True, sources: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
    """Every registered source's entries, merged by gate section. ``default_grid=False`` leaves out the ``io``
    entries of :data:`DEFAULT_GRID_IO` (the gate then checks only the grid it was given); ``sources``: a subset."""
    out: dict[str, dict[str, Any]] = {}
    for name, fn in GATE_SOURCES.items():
        if sources is not None and name not in sources:
            continue
        for sect, entries in fn().items():
            if sect == "io" and not default_grid and name in DEFAULT_GRID_IO:
                continue
            into = out.setdefault(sect, {})
            clash = sorted(set(into) & set(entries))
            assert not clash, f"gate source {name} repeats keys of another source: {clash[:3]}"
            into.update(entries)
    return out


def formula_entry(f: Any) -> dict[str, Any]:
    """A cost formula as the gate stores it: reads, writes and validity as expression trees (never text)."""
    return {"reads": to_json(f.reads), "writes": to_json(f.writes), "valid": [to_json(r) for r in f.valid]}


def bound_entry(b: Any) -> dict[str, Any]:
    return {"kind": b.kind, "model": b.model, "explicit": b.explicit, "expr": to_json(b.expr),
            "regime": [to_json(r) for r in b.regime], "constant": None if b.constant is None else str(b.constant)}


def io_entry(m: Any) -> dict[str, int]:
    return {"reads": m.reads_words, "writes": m.writes_words}


@gate_source("forward")
def _forward() -> dict[str, dict[str, Any]]:
    """The exact forward formulas, every catalog bound (the backward's among them), the tight-constants table
    (the grid's I/O is the sweep's)."""
    import json

    from attnio.bounds import costs
    from attnio.reports import sources

    constants: dict[str, Any] = {}
    for r in sources.constants_table():
        if all(k in r for k in ("N", "d", "M", "best_proved_constant", "best_schedule_constant")):
            constants[f"N={r['N']}|d={r['d']}|M={r['M']}"] = {
                "lower_constant": str(r["best_proved_constant"]),  # the best proved lower bound: must not fall
                "upper_constant": str(r["best_schedule_constant"]),  # the cheapest schedule: must not rise
                "best_proved_bound": r.get("best_proved_bound"),
                "best_schedule": r.get("best_schedule"),
            }
        else:
            constants[str(r.get("id") or r.get("name") or json.dumps(r, sort_keys=True))] = r
    return {
        "formulas": {name: formula_entry(f) for name, f in sorted(costs.FORMULAS.items())},
        "bounds": {b.id: bound_entry(b) for b in sources.all_bounds()},
        "constants": constants,
    }


@gate_source("approximate")
def _approximate() -> dict[str, dict[str, Any]]:
    """The approximate algorithm's exact formulas (one per poly schedule), keys ``approx:<schedule>``."""
    from attnio.bounds import approx

    return {"formulas": {f"approx:{name}": formula_entry(f) for name, f in sorted(approx.FORMULAS.items())}}


@gate_source("backward")
def _backward() -> dict[str, dict[str, Any]]:
    """Count-only backward I/O at :data:`BWD_GATE_POINTS` (keyed like the forward's rows), the exact backward
    formulas and the backward constants table (keys ``bwd:`` where they could clash; its bounds are the
    catalog's)."""
    from attnio.algorithms import registry as reg
    from attnio.bounds.costs import BACKWARD_FORMULAS
    from attnio.reports.sources import backward_constants_table

    io: dict[str, Any] = {}
    for name in reg.names("backward"):
        for N, d, M in BWD_GATE_POINTS:
            if _fits(name, N, d, M):
                io[f"{name}|N={N}|d={d}|dv={d}|M={M}|eps=-|B=-"] = io_entry(backward_count(name, N, d, M))
    constants = {
        f"bwd:N={r.N}|d={r.d}|M={r.M}": {
            "lower_constant": str(r.best_bound_constant),
            "upper_constant": str(r.best_schedule_constant),
            "best_proved_bound": r.best_bound,
            "best_schedule": r.best_schedule,
        }
        for r in backward_constants_table()
    }
    return {
        "io": io,
        "formulas": {f"bwd:{name}": formula_entry(f) for name, f in sorted(BACKWARD_FORMULAS.items())},
        "constants": constants,
    }


# Named workloads whose counts the gate guards: causal and not, GQA prefill and decode, one head with odd sizes
# (ceilings), an MHA batch. M in words, fixed (not a GPU preset, whose size may be revised).
GATE_WORKLOADS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("gqa-prefill", {"heads": 8, "kv_heads": 2, "N": 1024, "d": 64, "M": 16384}),
    ("gqa-prefill-causal", {"heads": 8, "kv_heads": 2, "N": 1024, "d": 64, "M": 16384, "causal": True}),
    ("gqa-decode-causal", {"heads": 32, "kv_heads": 8, "Nq": 4, "Nkv": 4096, "d": 128, "M": 116736, "causal": True}),
    ("one-head-causal-odd", {"N": 1000, "d": 13, "M": 777, "causal": True}),
    ("mha-batch-causal", {"batch": 2, "heads": 4, "N": 512, "d": 32, "M": 8192, "causal": True}),
)


def _workload_key(kind: str, alg: str, schedule: str, label: str) -> str:
    return f"{kind}:{alg}|{schedule}|{label}"


@gate_source("workloads")
def _workloads() -> dict[str, dict[str, Any]]:
    """The workload formula tables (forward, backward; keys ``workload:`` / ``workload-bwd:``
    algorithm|schedule|causal), and the count-only I/O of every workload schedule of those tables at each of
    :data:`GATE_WORKLOADS` with the matching mask (where M admits it)."""
    from attnio.bounds import costs
    from attnio.core.errors import InvalidParameter
    from attnio.core.workload import Workload

    formulas: dict[str, Any] = {}
    for kind, table in (("workload", costs.WORKLOAD_FORMULAS), ("workload-bwd", costs.WORKLOAD_BACKWARD_FORMULAS)):
        for (alg, sched, causal), f in sorted(table.items()):
            formulas[f"{kind}:{alg}|{sched}|{'causal' if causal else 'full'}"] = formula_entry(f)
    io: dict[str, Any] = {}
    for label, shape in GATE_WORKLOADS:
        w = Workload.build(**shape)
        for kind, table in (("workload", costs.WORKLOAD_FORMULAS), ("workload-bwd", costs.WORKLOAD_BACKWARD_FORMULAS)):
            for alg, sched, causal in sorted(table):
                if causal != bool(shape.get("causal")) or (sched == "grouped" and w.groups == 1):
                    continue
                try:
                    m = workload_count(alg, w, sched).measurement if kind == "workload" else workload_backward_count(alg, w, sched)
                    io[_workload_key(kind, alg, sched, label)] = io_entry(m)
                except InvalidParameter:  # M below the schedule's minimum for this shape
                    continue
    return {"io": io, "formulas": formulas}


# serving figures (the report's Serving section; docs/serving.md, docs/masks.md) ---------------------------

SERVING_LLAMA = {"heads": 32, "kv_heads": 8, "d": 128}  # a Llama-style GQA layer, batch 1, one new token


def serving_split_rows(nkvs: tuple[int, ...] = (4096, 32768, 131072), gpus: tuple[str, ...] = ("h100", "h200", "b200")) -> list[dict[str, Any]]:
    """Flash-Decoding's split heuristic on each preset: bytes with the heuristic's splits against one split.

    >>> rows = serving_split_rows(nkvs=(4096,), gpus=("h200",))
    >>> rows[0]["splits"], rows[0]["split_over_no_split"] > 1
    (17, True)
    """
    from attnio.bounds.serving import Decode, decode_count, lower_bound_bytes, resolve
    from attnio.core.workload import Workload

    rows = []
    for gpu in gpus:
        for n in nkvs:
            w = Workload.build(**SERVING_LLAMA, Nq=1, Nkv=n, dtype="bf16", gpu=gpu)
            dec = resolve(w, Decode(gpu=gpu))
            c, one = decode_count(w, dec), decode_count(w, Decode(1))
            rows.append({"gpu": gpu, "Nkv": n, "splits": dec.splits, "bytes": c.bytes_total, "no_split_bytes": one.bytes_total,
                         "split_over_no_split": c.bytes_total / one.bytes_total,
                         "over_bound": c.bytes_total / lower_bound_bytes(w, dec)})
    return rows


def serving_page_rows(pages: tuple[int | None, ...] = (None, 1, 16, 256), Nkv: int = 32768) -> list[dict[str, Any]]:
    from attnio.bounds.serving import Decode, decode_count
    from attnio.core.workload import Workload

    w = Workload.build(batch=8, **SERVING_LLAMA, Nq=1, Nkv=Nkv, dtype="bf16", gpu="h200")
    rows = []
    for p in pages:
        c = decode_count(w, Decode(gpu="h200", page=p))
        bt = c.words.get("BT", (0, 0))[0] * c.bpw.get("BT", 0)
        rows.append({"page": p, "splits": c.splits, "bytes": c.bytes_total, "table_bytes": bt, "apart_from_table": c.bytes_total - bt})
    return rows


def serving_mla_rows(Nkv: int = 32768, heads: int = 128, gpu: str = "h200") -> list[dict[str, Any]]:
    from attnio.bounds.serving import decode_count, mla, roofline

    rows = []
    for form in ("absorbed", "naive"):
        for kv in (None, "fp8"):
            w, dec = mla(form, batch=1, heads=heads, Nq=1, Nkv=Nkv, kv_dtype=kv, M=10**7)
            r = roofline(w, dec, gpu)
            rows.append({"form": form, "kv_dtype": kv or "bf16", "bytes": decode_count(w, dec).bytes_total,
                         "flops": r.flops, "intensity": r.intensity, "ridge": r.ridge, "bound": r.bound})
    return rows


def dram_floor_rows(heads: int = 32, N: int = 32768, d: int = 128, causal: bool = True) -> list[dict[str, Any]]:
    """Per L2 preset, the DRAM and time floors of one forward (bounds/dram.py ``floors``, docs/dram.md#floors)."""
    from attnio.bounds.dram import L2_PRESETS, floors
    from attnio.core.workload import Workload

    w = Workload.build(heads=heads, N=N, d=d, dtype="bf16", causal=causal, M=10**6)
    rows = []
    for name in L2_PRESETS:
        f = floors(w, name)
        rows.append({"preset": name, "M_words": f.M_words, "bound": f.bound, "dram_bytes": f.dram_bytes,
                     "flops": f.flops, "time_floor_us": f.seconds * 1e6})
    return rows


def dram_levels_rows(heads: int = 4, N: int = 1024, d: int = 40, gpu: str = "h100") -> list[dict[str, Any]]:
    """Per tensor of attnio's flash2 forward (fp16, 128 x 128 tiles), requested, sector and predicted DRAM bytes
    at both ends of the replay's bracket (algorithms/l2.py ``replay``, lockstep and drift-max); well under 2 s."""
    from attnio.algorithms.l2 import replay
    from attnio.core.workload import Workload

    w = Workload.build(heads=heads, N=N, d=d, dtype="fp16", M=10**6)
    lock, drift = replay(w, gpu), replay(w, gpu, sync="drift")
    rows = []
    for name, t in lock.tensors.items():
        rows.append({"tensor": name, "requested": t.requested_bytes, "sector": t.sectors * t.sector_bytes,
                     "efficiency": t.sector_efficiency, "dram_lockstep": t.dram_bytes,
                     "dram_drift": drift.tensors[name].dram_bytes})
    rows.append({"tensor": "total", "requested": lock.requested_bytes, "sector": lock.sector_bytes,
                 "efficiency": lock.requested_bytes / lock.sector_bytes, "dram_lockstep": lock.dram_bytes,
                 "dram_drift": drift.dram_bytes})
    return rows


def _serving_mask_cases(N: int) -> list[tuple[str, Any]]:
    import numpy as np

    from attnio.bounds.masks import BlockSparse, Causal, Document, PrefixLM, SlidingWindow

    T = -(-N // 128)
    i, j = np.indices((T, T))
    local_global = (np.abs(i - j) <= 1) | (j == 0)  # a band of three 128-blocks and a global first block
    return [
        ("none", SlidingWindow(-1, -1)),
        ("causal", Causal()),
        ("sliding window (1024, 0)", SlidingWindow(1024, 0)),
        ("sliding window (4096, 0)", SlidingWindow(4096, 0)),
        ("document, 4 sequences, causal", Document([0, N // 4, N // 2, 3 * N // 4, N]) & Causal()),
        ("prefix-LM, prefix 1024", PrefixLM(1024)),
        ("block-sparse 128: band ±1 + global column", BlockSparse(local_global, 128, 128)),
    ]


def serving_mask_rows(N: int = 8192, gpu: str = "h100") -> list[dict[str, Any]]:
    """FA-2 forward (grouped, io-optimal blocks) under each mask: its exact words (the block-mask formula) and
    the best masked lower bound, for a Llama-style GQA layer in bf16 on one SM's shared memory."""
    from attnio.algorithms.workloads import tiling
    from attnio.bounds.masks import flash2_masked_words, masked_lower_bound
    from attnio.core.workload import Workload

    w = Workload.build(**SERVING_LLAMA, N=N, dtype="bf16", gpu=gpu)
    t = tiling("flash2", w, "grouped")
    rows = []
    for name, mask in _serving_mask_cases(N):
        bm = mask.blocks(N, N, t.B_r, t.B_c)
        r, wr = flash2_masked_words(w, mask, t.B_r, t.B_c, grouped=True)
        lb_id, lb = masked_lower_bound(w, mask)
        rows.append({"mask": name, "pairs": mask.pairs(N, N), "nonzero_tiles": bm.nonzero_fraction, "words": r + wr,
                     "bound": lb_id, "bound_words": float(lb), "ratio": float((r + wr) / lb)})
    return rows
