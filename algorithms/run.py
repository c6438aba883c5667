"""The one runner: ``run(name, workload, pass_=...)`` validates once, picks the schedule and its tiling, runs it
on the machine, and returns one :class:`Result` (docs/architecture.md).

Every kind of run goes through :func:`run`: a forward or a backward schedule alone, or a training step (the
forward, then its backward on the same inputs and the forward's own output); a plain run (one head, N_q = N_kv,
no mask: ``N``, ``d``, ``M`` or 2-D ``inputs``) or a :class:`~attnio.core.workload.Workload` (batch, heads, grouped
K/V heads, N_q ≠ N_kv, causal masks). Inputs are drawn from ``seed`` as 4-D (batch, heads, rows, width) arrays
(Q, K, V; dO from ``seed`` + 1), so a plain run draws exactly the one head of its workload.

>>> r = run("flash2", pass_="step", N=64, d=8, M=400, count_only=True)
>>> r.as_dict()["total"]["io"] == r.forward.measurement.io_words + r.backward.measurement.io_words
True
>>> count("flash2-bwd", N=4, d=2, M=30).io     # a backward name runs its backward
IOCount(reads_words=96, writes_words=44)
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from attnio.algorithms import registry
from attnio.algorithms.backend import get_backend, namespace, to_numpy
from attnio.algorithms.machine import Machine, Measurement
from attnio.algorithms.reference import attention, attention4, attention4_backward, default_scale, rel_error
from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter, Unsupported
from attnio.core.validate import check_choice, check_int, check_run_sizes, check_seed
from attnio.core.workload import Workload

PASSES = ("forward", "backward", "step")


@dataclass(frozen=True)
class Result:
    """One run of any pass. ``schedule`` is None for the plain one-head schedule, else the workload schedule
    (``per-head``, ``grouped``). ``outputs``: (O,) forward, (dQ, dK, dV) backward, numeric mode only (2-D for a
    plain run, 4-D for a workload). ``errors``: ``{"O": max|O − O_ref|}`` forward; per output the relative
    error against the float64 analytic backward. A step's ``parts`` are its forward and backward results; its
    ``measurement`` is their sum (peak: the larger)."""

    algorithm: str
    pass_: str
    workload: Workload
    schedule: str | None
    tiling: Any
    measurement: Measurement
    outputs: tuple[Any, ...] | None
    errors: dict[str, float] | None
    seconds: float
    backend: str = "numpy"
    parts: tuple[Result, Result] | None = None
    mask: Any = None  # the attnio.bounds.masks mask of a masked run (None: unmasked, or causal=True)

    N = property(lambda self: self.workload.Nq)
    d = property(lambda self: self.workload.d)
    dv = property(lambda self: self.workload.dv)
    M = property(lambda self: self.workload.M)

    @property
    def forward(self) -> Result:
        assert self.parts is not None, "only a step has parts"
        return self.parts[0]

    @property
    def backward(self) -> Result:
        assert self.parts is not None, "only a step has parts"
        return self.parts[1]

    @property
    def output(self) -> Any:
        """O of a forward in numeric mode, else None."""
        return self.outputs[0] if self.outputs is not None and self.pass_ == "forward" else None

    @property
    def max_abs_error(self) -> float | None:
        return None if self.errors is None else self.errors.get("O")

    @property
    def rel_errors(self) -> dict[str, float] | None:
        return self.errors if self.pass_ == "backward" else None

    @property
    def io_bytes(self) -> int:
        return self.workload.io_bytes(self.measurement.io_words)

    def as_dict(self) -> dict[str, Any]:
        """The JSON of ``attnio run --json``: a step has ``forward``, ``backward``, ``total`` and ``workload``."""
        w, m = self.workload, self.measurement
        counts = {"reads": m.reads_words, "writes": m.writes_words, "io": m.io_words, "peak_fast_words": m.peak_fast_words}
        counts.update({f"{k}_bytes": w.io_bytes(counts[k]) for k in ("reads", "writes", "io")})
        mask = None if self.mask is None else repr(self.mask)
        if self.parts is not None:
            return {"forward": self.forward.as_dict(), "backward": self.backward.as_dict(), "total": counts, "workload": w.as_dict(),
                    "mask": mask}
        t = self.tiling
        out = {"algorithm": self.algorithm, "pass": self.pass_, "schedule": self.schedule,
               "N": w.Nq, "d": w.d, "dv": w.dv, "M": w.M, "workload": w.as_dict(), "mask": mask, **counts,
               "overflowed": m.overflowed, "blocks": dict(vars(t)) if hasattr(t, "__dict__") else str(t),
               "per_array": {k: {"reads": v.reads_words, "writes": v.writes_words} for k, v in m.per_array.items()}}
        out["max_abs_error" if self.pass_ == "forward" else "rel_errors"] = (
            self.max_abs_error if self.pass_ == "forward" else self.errors)
        out.update(count_only=m.count_only, backend=self.backend, seconds=self.seconds)
        return out


def run(
    algorithm: str,
    workload: Workload | None = None,
    *,
    pass_: str | None = None,
    schedule: str | None = None,
    inputs: tuple[Any, ...] | None = None,
    N: int | None = None,
    d: int | None = None,
    dv: int | None = None,
    M: int | None = None,
    O: Any = None,
    seed: int | None = 0,
    count_only: bool = False,
    tiling: Any = None,
    scale: float | None = None,
    backend: str = "numpy",
    trace: bool = False,
    audit: bool | None = None,
    check: bool = True,
    stats: tuple[str, ...] | None = None,
    eps: float | None = None,
    B: float | None = None,
    beta: float | None = None,
    mask: Any = None,
    load: str = "span",
    documents: str = "packed",
) -> Result:
    """Run ``algorithm`` (``pass_``: ``"forward"``, ``"backward"`` or ``"step"``; default the name's own pass)
    on ``workload``, or on the plain one-head case given by ``N``, ``d``, ``dv``, ``M`` or by 2-D ``inputs``.

    ``inputs``: (Q, K, V) for a forward or a step, (Q, K, V, dO) for a backward; 2-D (N × width) for a plain
    run, 4-D (batch, heads, rows, width) with a workload; else random from ``seed``. ``O``: a backward's forward
    output (default the float64 reference). ``schedule``: a workload schedule (``per-head``, ``grouped``) or
    ``best`` (the cheaper of the algorithm's own; default: the plain schedule for a plain run, else
    ``per-head``). ``tiling``, ``backend``, ``trace``, ``audit``, ``stats`` (the statistics ``auto-bwd`` may
    read) and ``eps``/``B``/``beta`` (approximate algorithms, docs/approx.md) apply to plain runs. ``mask``: an
    ``attnio.bounds.masks`` mask (docs/masks.md) for the workload schedules that take one (``flash2``,
    ``flash2-bwd`` and their step), instead of ``causal=True`` (the :class:`~attnio.bounds.masks.Causal` mask):
    empty tiles are skipped, partial ones masked; a query row that sees no key has a zero output and zero
    gradients (FlexAttention's convention). A plain run (``N``, ``d``, ``M``, 2-D ``inputs``) with a mask runs
    the per-head workload schedule on its one head (outputs 4-D). A flash2 forward workload run (masked or not)
    also takes ``tiling``: a pair (B_r, B_c), or a kernel's tiles by name (``"fa2"``, ``"fa3"``, ``"flex"``:
    :mod:`attnio.bounds.kernel_tiles`), and ``load``: ``"span"`` (the default: the key rows a visited tile's Q
    block needs) or ``"tile"`` (every visited tile whole, as the kernels load it), and ``documents``: ``"packed"``
    (the default: a document mask's tiles global) or ``"varlen"`` (each sequence tiled from its own start, as
    FlashAttention-2's varlen API does); docs/masks.md.

    Validation runs here, once, before anything is drawn or allocated: bad input raises
    :class:`~attnio.core.errors.InvalidParameter` naming the parameter, its value and the valid range; a valid
    request that no schedule covers raises :class:`~attnio.core.errors.Unsupported`.
    """
    spec = registry.get(algorithm)
    pass_ = _check_pass(spec, pass_)
    check_choice("backend", backend, ["numpy", "cupy"])
    seed = check_seed(seed)
    if schedule is not None:
        check_choice("schedule", schedule, [*registry.SCHEDULES, "best"])
    params = {k: v for k, v in (("eps", eps), ("B", B), ("beta", beta)) if v is not None}
    if params and not spec.approximate:
        k = next(iter(params))
        raise InvalidParameter(k, params[k], f"not given: {algorithm} is exact (eps/B/beta are for approximate algorithms)")
    if inputs is not None:
        inputs = tuple(inputs)
        want = 4 if pass_ == "backward" else 3
        if len(inputs) != want:
            raise InvalidParameter("inputs", f"<{len(inputs)} arrays>", f"{want} arrays: " + ("Q, K, V, dO" if want == 4 else "Q, K, V"))
    plain_arrays = inputs is not None and getattr(inputs[0], "ndim", None) != 4
    one_head = mask is not None and plain_arrays and workload is None
    if one_head:  # the masked schedules are workload schedules: the arrays as one head, 4-D
        inputs = tuple(np.asarray(to_numpy(x)).reshape(1, 1, *np.shape(x)) for x in _check_arrays(inputs))
        N, d, dv, plain_arrays = inputs[0].shape[2], inputs[0].shape[3], inputs[2].shape[3], False
    if workload is None:
        if plain_arrays:
            inputs = _check_arrays(inputs)
            N, d, dv = inputs[0].shape[0], inputs[0].shape[1], inputs[2].shape[1]
            backend = namespace(*inputs).__name__
        elif inputs is not None and not one_head:
            raise InvalidParameter("inputs", "<4-D arrays>", "2-D arrays (N × width) without a workload, 4-D ones with one")
        workload = Workload.build(N=check_int("N", N, min=1), d=check_int("d", d, min=1), dv=dv, M=check_int("M", M, min=1))
        plain = schedule is None and mask is None
    else:
        if not isinstance(workload, Workload):
            raise InvalidParameter("workload", workload, "an attnio.core.workload.Workload (Workload.build(...))")
        for k, v in (("N", N), ("d", d), ("dv", dv), ("M", M)):
            if v is not None:
                raise InvalidParameter(k, v, "not given with a workload (the workload carries N, d, d_v and M)")
        if plain_arrays:
            raise InvalidParameter("inputs", "<2-D arrays>", "4-D arrays (batch, heads, rows, width) with a workload")
        plain = schedule is None and _is_plain(workload) and inputs is None and mask is None
    w = workload
    if mask is not None:
        _check_mask(spec, pass_, w, mask)
    if w.dv != w.d and not spec.supports_dv:  # before anything is drawn
        raise Unsupported(f"{algorithm} needs d_v = d (got d={w.d}, dv={w.dv})")
    check_run_sizes(w.Nq, w.d, w.dv, count_only=count_only, Nkv=w.Nkv, heads=w.query_heads_total)
    from attnio.bounds.masks import DOCUMENTS, LOADS

    check_choice("load", load, LOADS)
    check_choice("documents", documents, DOCUMENTS)
    tiles_ok = spec.name == "flash2" and pass_ == "forward" and not plain  # a workload flash2 forward takes tiles
    if load != "span" and not tiles_ok:
        raise InvalidParameter("load", load, "span, unless a flash2 forward workload or masked run (load='tile' applies to its tiles)")
    if documents != "packed" and not (tiles_ok and mask is not None):
        raise InvalidParameter("documents", documents, "packed, unless a flash2 forward masked run (varlen tiles a document mask per sequence)")
    if not plain:
        extra = [k for k, v in (("tiling", None if tiles_ok else tiling), ("stats", stats), ("trace", trace or None), ("audit", audit), *params.items()) if v is not None]
        if extra or backend != "numpy":
            name = extra[0] if extra else "backend"
            raise InvalidParameter(name, tiling if name == "tiling" else backend if name == "backend" else "<given>",
                                   "not given with a workload schedule (it applies to plain one-head runs)")
    req = _Request(w, plain, schedule, inputs, O, seed, count_only, tiling, scale, backend, trace, audit, check, stats, params, mask, load,
                   documents)
    result = _step(spec, req) if pass_ == "step" else _one(spec, pass_, req)
    if mask is None:
        return result
    parts = None if result.parts is None else tuple(replace(p, mask=mask) for p in result.parts)
    return replace(result, mask=mask, parts=parts)


def count(algorithm: str, *, N: int, d: int, M: int, dv: int | None = None, **kw: Any) -> Measurement:
    """Count-only run: the exact counts without arithmetic, for any N (forward and backward names alike)."""
    return run(algorithm, N=N, d=d, M=M, dv=dv, count_only=True, **kw).measurement


# ---------------------------------------------------------------------------------------------- validation
def _check_pass(spec: registry.AlgorithmSpec, pass_: str | None) -> str:
    if pass_ is None:
        return spec.pass_
    check_choice("pass_", pass_, PASSES)
    if spec.pass_ == "backward" and pass_ != "backward":
        raise InvalidParameter("algorithm", spec.name, f"a forward algorithm for pass_={pass_!r} ({spec.name} is a backward schedule)")
    if spec.pass_ == "forward" and pass_ == "backward":
        raise InvalidParameter("algorithm", spec.name, "a backward schedule for pass_='backward' (one of " + ", ".join(registry.names("backward")) + ")")
    return pass_


def _check_mask(spec: registry.AlgorithmSpec, pass_: str, w: Workload, mask: Any) -> None:
    """A mask is a :class:`~attnio.bounds.masks.Mask`, not given with ``causal=True``, that fits N_q × N_kv, for
    an algorithm (and, for a step, its backward) whose workload schedules take masks."""
    from attnio.bounds.masks import Mask

    if not isinstance(mask, Mask):
        raise InvalidParameter("mask", mask, "an attnio.bounds.masks mask (Causal, SlidingWindow, Document, PrefixLM, BlockSparse, MaskMod, a & b, a | b)")
    if w.causal:
        raise InvalidParameter("mask", getattr(mask, "name", mask), "not given with causal=True: give one or the other (causal=True is the Causal() mask)")
    mask.check(w.Nq, w.Nkv)
    names = [spec.name] + ([spec.backward or "auto-bwd"] if pass_ == "step" else [])
    for n in names:
        if n not in registry.REGISTRY or not registry.get(n).masks:
            raise Unsupported(f"{n} has no masked schedule (masked {pass_} schedules: "
                              + ", ".join(registry.with_masks("backward" if pass_ == "backward" else "forward")) + ")")


def _is_plain(w: Workload) -> bool:
    return w.query_heads_total == 1 and w.Nq == w.Nkv and not w.causal


def _check_arrays(arrays: tuple[Any, ...]) -> tuple[Any, ...]:
    names = ("Q", "K", "V", "dO")
    for name, x in zip(names, arrays, strict=False):
        if x is None:
            raise InvalidParameter(name, None, "an N×d array (Q, K and V must all be given)")
        if getattr(x, "ndim", None) != 2:
            raise InvalidParameter(f"{name}.shape", getattr(x, "shape", None), "a 2-D array of shape (N, d)")
        if 0 in x.shape:
            raise InvalidParameter(f"{name}.shape", tuple(x.shape), "N >= 1 and d >= 1")
        xp = namespace(x)
        if not bool(xp.all(xp.isfinite(x))):
            bad = int(x.size - int(xp.isfinite(x).sum()))
            raise InvalidParameter(name, f"<array with {bad} NaN/Inf entries>", "finite values only")
    Q, K, V = arrays[:3]
    if K.shape != Q.shape:
        raise InvalidParameter("K.shape", tuple(K.shape), f"equal to Q.shape={tuple(Q.shape)}")
    if V.shape[0] != Q.shape[0]:
        raise InvalidParameter("V.shape", tuple(V.shape), f"({Q.shape[0]}, dv): as many rows as Q")
    if len(arrays) == 4 and arrays[3].shape != V.shape:
        raise InvalidParameter("dO.shape", tuple(arrays[3].shape), f"equal to V.shape={tuple(V.shape)}")
    return arrays


def check_inputs4(w: Workload, arrays: tuple[Any, ...]) -> tuple[np.ndarray, ...]:
    """4-D (batch, heads, rows, width) inputs of a workload as float64 host arrays; wrong shapes or NaN/Inf raise."""
    shapes = {"Q": (w.batch, w.heads, w.Nq, w.d), "K": (w.batch, w.kv_heads, w.Nkv, w.d),
              "V": (w.batch, w.kv_heads, w.Nkv, w.dv), "dO": (w.batch, w.heads, w.Nq, w.dv)}
    out = []
    for (name, shape), x in zip(shapes.items(), arrays, strict=False):
        x = np.asarray(to_numpy(x), dtype=np.float64)
        if x.shape != shape:
            raise InvalidParameter(f"{name}.shape", x.shape, f"{shape} (batch, heads, rows, width) for this workload")
        if not np.all(np.isfinite(x)):
            raise InvalidParameter(name, "<array with NaN/Inf entries>", "finite values only")
        out.append(x)
    return tuple(out)


def random_inputs(w: Workload, seed: int | None, grad: bool = False) -> tuple[np.ndarray, ...]:
    """Q (batch, H, N_q, d), K (batch, H_kv, N_kv, d), V (batch, H_kv, N_kv, d_v), standard normal from ``seed``;
    with ``grad`` also dO (batch, H, N_q, d_v) from ``seed`` + 1."""
    rng = np.random.default_rng(seed)
    out = (rng.standard_normal((w.batch, w.heads, w.Nq, w.d)), rng.standard_normal((w.batch, w.kv_heads, w.Nkv, w.d)),
           rng.standard_normal((w.batch, w.kv_heads, w.Nkv, w.dv)))
    if grad:
        out += (np.random.default_rng(None if seed is None else seed + 1).standard_normal((w.batch, w.heads, w.Nq, w.dv)),)
    return out


def _arrays4(w: Workload, inputs: tuple[Any, ...] | None, seed: int | None, pass_: str) -> tuple[np.ndarray, ...]:
    return check_inputs4(w, inputs) if inputs is not None else random_inputs(w, seed, grad=pass_ == "backward")


# ---------------------------------------------------------------------------------------------- dispatch
@dataclass(frozen=True)
class _Request:
    w: Workload
    plain: bool  # the plain one-head schedule (no workload schedule asked for)
    schedule: str | None
    inputs: tuple[Any, ...] | None
    O: Any
    seed: int | None
    count_only: bool
    tiling: Any
    scale: float | None
    backend: str
    trace: bool
    audit: bool | None
    check: bool
    stats: tuple[str, ...] | None
    params: dict[str, float]
    mask: Any = None
    load: str = "span"
    documents: str = "packed"


def _one(spec: registry.AlgorithmSpec, pass_: str, r: _Request) -> Result:
    """One pass: the plain schedule, a workload schedule of the algorithm's own, or the plain schedule per head."""
    if r.plain:
        return _plain(spec, pass_, r)
    w = r.w
    if r.schedule == "best":
        cands = spec.workload_schedules or ("per-head",)
        results = []
        for s in cands:
            try:
                results.append(_one(spec, pass_, replace(r, schedule=s)))
            except InvalidParameter:
                if s == cands[0]:
                    raise
        return min(results, key=lambda x: (x.measurement.io_words, x.schedule))
    schedule = r.schedule or "per-head"
    if schedule in spec.workload_schedules:
        from attnio.algorithms import workloads, workloads_bwd

        t0 = time.perf_counter()
        arrays = None if r.count_only else _arrays4(w, r.inputs, r.seed, pass_)
        if pass_ == "forward":
            t, meas, outs, errs = workloads.run_schedule(spec, w, schedule, arrays, r.count_only, r.scale, r.check, r.mask,
                                                         r.tiling, r.load, r.documents)
        else:
            t, meas, outs, errs = workloads_bwd.run_schedule(spec, w, schedule, arrays, r.O, r.count_only, r.scale, r.check, r.mask)
        return Result(spec.name, pass_, w, schedule, t, meas, outs, errs, time.perf_counter() - t0)
    native = registry.with_schedule(schedule, pass_)
    if schedule != "per-head":
        raise Unsupported(f"{spec.name} has no {schedule} (K/V-sharing) schedule; {schedule}: {', '.join(native)}")
    what = [x for x, on in (("a causal mask", w.causal), (f"Nq={w.Nq} != Nkv={w.Nkv}", w.Nq != w.Nkv),
                            (f"kv_heads={w.kv_heads} < heads={w.heads}", pass_ == "backward" and w.kv_heads != w.heads)) if on]
    if what:
        raise Unsupported(f"{spec.name} runs its one-head {pass_} schedule per head: none for {', '.join(what)} "
                          f"(workload {pass_} schedules: {', '.join(native)})")
    return _per_head(spec, pass_, r)


def _plain(spec: registry.AlgorithmSpec, pass_: str, r: _Request) -> Result:
    from attnio.algorithms.run_backward import backward_plain

    w = r.w
    t0 = time.perf_counter()
    if r.count_only or (spec.approximate and r.inputs is None):  # approximate: bounded inputs (prepare_inputs)
        arrays = None
    elif r.inputs is not None and getattr(r.inputs[0], "ndim", None) == 2:
        arrays = r.inputs
    else:
        xp = get_backend(r.backend)
        drawn = random_inputs(w, r.seed, grad=pass_ == "backward") if r.inputs is None else r.inputs
        arrays = tuple(xp.asarray(np.asarray(x).reshape(x.shape[-2:])) for x in drawn)
    run_fn = forward_plain if pass_ == "forward" else backward_plain
    tiling, meas, outs, errs, backend = run_fn(spec, w, arrays, r)
    return Result(spec.name, pass_, w, None, tiling, meas, outs, errs, time.perf_counter() - t0, backend)


def forward_plain(spec: registry.AlgorithmSpec, w: Workload, arrays: tuple[Any, ...] | None, r: _Request) -> tuple[Any, ...]:
    """The plain forward on the machine: (tiling, measurement, outputs, errors, backend)."""
    N, d, dv, M = w.Nq, w.d, w.dv, w.M
    xp = get_backend(r.backend) if arrays is None else namespace(*arrays)
    sc = default_scale(d, r.scale)
    tiling = r.tiling
    if tiling is None:
        tiling = spec.tiling_cls.default(N, d, M, dv, params=r.params) if spec.approximate else spec.tiling_cls.default(N, d, M, dv)
    if spec.approximate and not r.count_only:
        arrays = tiling.prepare_inputs(*(arrays or (None, None, None)), r.seed, N, d, xp)  # bounded inputs (docs/approx.md)
    m = Machine(M, algorithm=spec.name, xp=xp, count_only=r.count_only, audit=spec.audit if r.audit is None else r.audit, trace=r.trace)
    shapes = {"Q": (N, d), "K": (N, d), "V": (N, dv)}
    Qs, Ks, Vs = (m.input(k, s) for k, s in shapes.items()) if r.count_only else (m.input(k, a) for k, a in zip(shapes, arrays, strict=True))
    # overflow in float64 arithmetic is reported once, as an error naming its cause (_check_finite), not as
    # NumPy warnings
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        Os = spec.schedule(m, Qs, Ks, Vs, tiling, sc)
    meas = m.finish()
    outs = errs = None
    if not r.count_only:
        Q, K, V = arrays
        out = m.output_data(Os)
        _check_finite(out, Q, K, sc)
        outs = (out,)
        if r.check:
            ref = attention(Q, K, V, scale=sc)
            errs = {"O": float(np.max(np.abs(to_numpy(out) - ref))) if ref.size else 0.0}
    return tiling, meas, outs, errs, xp.__name__


def _per_head(spec: registry.AlgorithmSpec, pass_: str, r: _Request) -> Result:
    """A plain workload (no mask, N_q = N_kv) with the plain one-head schedule: each query head is one plain run
    on (Q_h, K_⌊h/g⌋, V_⌊h/g⌋); counts add up (count-only: one head's count × batch·H)."""
    w = r.w
    H, g = w.query_heads_total, w.groups
    one_w = Workload.build(N=w.Nq, d=w.d, dv=w.dv, M=w.M, dtype=w.dtype)
    t0 = time.perf_counter()
    if r.count_only:
        one = _plain(spec, pass_, replace(r, w=one_w, inputs=None))
        return Result(spec.name, pass_, w, "per-head", one.tiling, _times(one.measurement, H), None, None, time.perf_counter() - t0)
    arrays = _arrays4(w, r.inputs, r.seed, pass_)
    O4 = None if r.O is None else np.asarray(to_numpy(r.O), dtype=np.float64).reshape(w.batch, w.heads, w.Nq, w.dv)
    parts, meas, tiling = [], None, None
    for b in range(w.batch):
        for h in range(w.heads):
            head = (arrays[0][b, h], arrays[1][b, h // g], arrays[2][b, h // g], *(x[b, h] for x in arrays[3:]))
            one = _plain(spec, pass_, replace(r, w=one_w, inputs=head, check=False, O=None if O4 is None else O4[b, h]))
            parts.append([to_numpy(x) for x in one.outputs])
            meas = one.measurement if meas is None else _plus(meas, one.measurement)
            tiling = one.tiling
    outs = tuple(np.stack([p[i] for p in parts]).reshape(w.batch, w.heads, *parts[0][i].shape) for i in range(len(parts[0])))
    errs = _errors4(pass_, w, arrays, outs, r.scale) if r.check else None
    return Result(spec.name, pass_, w, "per-head", tiling, meas, outs, errs, time.perf_counter() - t0)


def _errors4(pass_: str, w: Workload, arrays: tuple[np.ndarray, ...], outs: tuple[np.ndarray, ...], scale: float | None) -> dict[str, float]:
    """Errors of 4-D outputs against the float64 4-D references (:mod:`attnio.algorithms.reference`)."""
    if pass_ == "forward":
        return {"O": float(np.max(np.abs(outs[0] - attention4(*arrays[:3], w.causal, scale))))}
    refs = attention4_backward(*arrays[:4], w.causal, scale)
    return {n: rel_error(x, ref) for n, x, ref in zip(("dQ", "dK", "dV"), outs, refs, strict=True)}


def _step(spec: registry.AlgorithmSpec, r: _Request) -> Result:
    """The forward, then its backward on the same inputs (dO from seed + 1) and the forward's own output. The
    backward is the spec's ``backward``; without one (and for ``auto``) ``auto-bwd`` over what the forward that
    ran saved. ``schedule="best"``: the schedule with the cheaper whole step."""
    if spec.approximate or not (spec.backward or spec.saves or spec.name == "auto"):
        raise Unsupported(f"{spec.name} has no backward schedule (exact forward algorithms with a backward: "
                          + ", ".join(sorted([*registry.forward_saves(), "auto"])) + ")")
    if r.schedule == "best":
        steps = [_step(spec, replace(r, schedule=s)) for s in spec.workload_schedules or ("per-head",)]
        return min(steps, key=lambda x: (x.measurement.io_words, x.schedule))
    w = r.w
    t0 = time.perf_counter()
    if not r.count_only:
        drawn = random_inputs(w, r.seed, grad=True)
        ins = r.inputs if r.inputs is not None else drawn[:3]
        xp = namespace(ins[0]) if getattr(ins[0], "ndim", 4) == 2 else np
        grad = drawn[3] if getattr(ins[0], "ndim", 4) == 4 else xp.asarray(drawn[3].reshape(drawn[3].shape[-2:]))
        r = replace(r, inputs=(*ins, grad))
    f = _one(spec, "forward", replace(r, inputs=None if r.inputs is None else r.inputs[:3]))
    if spec.name == "auto":
        bname, stats = "auto-bwd", registry.get(f.tiling.algorithm).saves
    else:
        bname, stats = spec.backward or "auto-bwd", None if spec.backward else spec.saves
    b = _one(registry.get(bname), "backward", replace(r, O=None if f.outputs is None else f.outputs[0], stats=stats))
    total = _plus(f.measurement, b.measurement, merge=True)
    return Result(spec.name, "step", w, f.schedule, None, total, None, None, time.perf_counter() - t0, f.backend, (f, b))


# ---------------------------------------------------------------------------------------------- helpers
def _times(a: Measurement, k: int) -> Measurement:
    return Measurement(
        a.algorithm, a.M, IOCount(a.reads_words * k, a.writes_words * k), a.peak_fast_words,
        {n: IOCount(c.reads_words * k, c.writes_words * k) for n, c in a.per_array.items()}, a.overflowed, a.count_only,
    )


def _plus(a: Measurement, b: Measurement, merge: bool = False) -> Measurement:
    keys = dict.fromkeys([*a.per_array, *b.per_array]) if merge else a.per_array
    zero = IOCount(0, 0)
    return Measurement(
        a.algorithm, a.M, a.io + b.io, max(a.peak_fast_words, b.peak_fast_words),
        {n: a.per_array.get(n, zero) + b.per_array.get(n, zero) for n in keys}, a.overflowed or b.overflowed, a.count_only,
    )


def _check_finite(out: Any, Q: Any, K: Any, scale: float) -> None:
    """Finite inputs can still give a NaN/Inf output: logits scale·q_i·k_j beyond float64's range (about
    1.8e308) overflow, and the softmax of two infinite logits is NaN. Raise naming that cause."""
    xp = namespace(out)
    finite = xp.isfinite(out)
    if bool(xp.all(finite)):
        return
    bad = int(out.size - int(finite.sum()))
    with np.errstate(over="ignore"):
        nq = float(np.max(np.linalg.norm(to_numpy(Q), axis=1)))
        nk = float(np.max(np.linalg.norm(to_numpy(K), axis=1)))
        bound = abs(scale) * nq * nk  # Cauchy–Schwarz: |scale·q_i·k_j| <= this
    raise InvalidParameter(
        "Q, K",
        f"<inputs with max |q_i|·|k_j|·scale = {bound:.3g}: {bad} output entries are NaN/Inf>",
        "inputs whose logits scale·q_i·k_j stay within float64's range (|logit| < 1.8e308; the logits overflowed)"
        if not np.isfinite(bound) or bound > 1e300
        else "inputs for which the schedule's float64 arithmetic stays finite",
    )
