"""Check a user's Triton attention kernel against attnio: ``check(launch, workload)``.

attnio makes the inputs for the workload, calls the user's launcher under :func:`count_traffic`, checks its
outputs against attnio's float64 reference, and sets the counted traffic beside the best proved lower bound
for the workload (``bounds.workloads.best_lower_bound``; backward: ``best_backward_lower_bound``, whose bounds that
assume S recomputed are applied only to a kernel that reads no S, P or unnamed tensor, and then labelled) and the exact
count of attnio's best schedule for it (the cheapest of its workload schedules that fit M).

The launcher is a Python function or a ``torch.autograd.Function``; attnio passes the arguments it names (by
parameter name, or mapped by ``args=``/the launcher's ``attnio_args``: ``attnio.triton.launcher``):

- ``q`` (batch, heads, N_q, d), ``k`` (batch, kv_heads, N_kv, d), ``v`` (batch, kv_heads, N_kv, d_v),
  ``o`` (batch, heads, N_q, d_v), zeros: contiguous torch CPU tensors of the workload's dtype (fp32, fp16, bf16),
  standard normal from ``seed``;
- backward (the launcher names any of ``do``, ``dq``, ``dk``, ``dv``): ``o`` holds the forward output and
  ``lse`` (batch, heads, N_q, float32) the natural-log row sums (log Σ_j exp(scale·q·k_j)), ``do`` standard normal,
  ``dq``, ``dk``, ``dv`` zeros (fp32 for accumulation-by-atomics kernels is the launcher's business);
- ``causal`` (bool, bottom-right aligned), ``sm_scale`` or ``scale`` (1/√d), ``workload`` (the Workload).

A forward launcher writes ``o`` or returns the output (a tensor, or a tuple whose first tensor is the output);
a backward launcher writes ``dq``, ``dk``, ``dv``.
Tolerances (max absolute error against float64, inputs standard normal): :data:`TOLERANCE` for 16-bit types; fp32
in the interpreter :data:`INTERPRETER_FP32` relative to max(1, max |reference|).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnio.core.errors import AttnioError, InvalidParameter, Unsupported
from attnio.triton.count import Traffic, count_traffic
from attnio.triton.launcher import BACKWARD_TENSORS, FORWARD_TENSORS, OTHER_PARAMS, PAGED, Launcher, resolve

#: max |out − float64 reference| accepted per dtype on a real GPU (fp32: a GPU's default tl.dot rounds its inputs
#: to tf32)
TOLERANCE: dict[str, float] = {"fp32": 5e-3, "fp16": 2e-2, "bf16": 8e-2}
#: fp32 in Triton's interpreter (where check counts), relative to max(1, max |reference|): the interpreter's fp32
#: tl.dot is an exact fp32 matmul (Triton 3.9: relative errors about 1e-7)
INTERPRETER_FP32 = 1e-5
#: the largest workload (elements of q, k, v and o) attnio makes inputs for: the interpreter runs on the CPU
MAX_ELEMENTS = 1 << 26


class LauncherError(AttnioError, RuntimeError):
    """The user's launcher raised (the message names the exception)."""


@dataclass
class KernelCheck:
    """What :func:`check` returns (``as_dict()`` for JSON)."""

    workload: Any
    direction: str  # "forward" or "backward"
    traffic: Traffic
    lower_bound_id: str
    lower_bound_words: int
    best_schedule: str
    best_words: int
    best_per_array: dict[str, tuple[int, int]]
    max_abs_error: dict[str, float]
    tolerance: float
    dominates: str
    seconds: float
    notes: list[str] = field(default_factory=list)
    lower_bound_assumes: str = ""  # what the bound's model assumes of the kernel, said beside the ratio ("" if nothing)

    @property
    def bytes_per_word(self) -> int:
        return int(self.workload.bytes_per_word)

    @property
    def total_bytes(self) -> int:
        return self.traffic.total_bytes

    @property
    def lower_bound_bytes(self) -> int:
        return self.workload.io_bytes(self.lower_bound_words)

    @property
    def best_bytes(self) -> int:
        return self.workload.io_bytes(self.best_words)

    @property
    def ratio_to_bound(self) -> float:
        return _ratio(self.total_bytes, self.lower_bound_bytes)

    @property
    def ratio_to_best(self) -> float:
        return _ratio(self.total_bytes, self.best_bytes)

    @property
    def aliases(self) -> dict[str, list[str]]:
        """Counted tensor -> every other name it had: the launcher's parameters that received it and each
        ``<kernel>.<argument>`` it was passed as, in every launch."""
        return {n: list(a) for n, a in sorted(getattr(self.traffic, "aliases", {}).items()) if a}

    @property
    def outputs_ok(self) -> bool:
        return all(e <= self.tolerance for e in self.max_abs_error.values())

    def as_dict(self) -> dict[str, Any]:
        return {
            "workload": self.workload.as_dict(),
            "direction": self.direction,
            "counted": self.traffic.as_dict(),
            "launches": self.traffic.launches,
            "aliases": self.aliases,
            "total_bytes": self.total_bytes,
            "lower_bound": {"id": self.lower_bound_id, "words": self.lower_bound_words, "bytes": self.lower_bound_bytes,
                            "assumes": self.lower_bound_assumes},
            "best_schedule": {
                "name": self.best_schedule,
                "words": self.best_words,
                "bytes": self.best_bytes,
                "per_array": {k: {"reads": r, "writes": w} for k, (r, w) in self.best_per_array.items()},
            },
            "ratio_to_lower_bound": self.ratio_to_bound,
            "ratio_to_best_schedule": self.ratio_to_best,
            "max_abs_error": self.max_abs_error,
            "tolerance": self.tolerance,
            "outputs_ok": self.outputs_ok,
            "dominates": self.dominates,
            "notes": self.notes,
            "seconds": self.seconds,
        }

    def frame(self) -> Any:
        """The counted traffic as a pandas DataFrame, one row per tensor: ``tensor``, ``role`` (attnio's array,
        :func:`role_of`; <NA> if none), ``read_words``, ``written_words``, ``read_bytes``, ``written_bytes``,
        ``touched``, and ``best_read_words`` / ``best_written_words``: what attnio's best schedule moves for that
        array (repeated on each tensor of one array). Roles come from the naming conventions only: the ``roles``
        given to :func:`check` are not kept in the result, so a tensor only they place shows role <NA>. The
        check's totals are in ``frame.attrs``: ``total_bytes``,
        ``lower_bound`` (id), ``lower_bound_bytes``, ``best_schedule``, ``best_bytes``, ``ratio_to_bound``,
        ``ratio_to_best``, ``outputs_ok``."""
        import pandas as pd

        t = self.traffic
        rows = []
        for n in t.names:
            role = _role(t, n, None)
            best = self.best_per_array.get(role) if role is not None else None
            rows.append({"tensor": n, "role": role, "read_words": t.reads_words.get(n, 0), "written_words": t.writes_words.get(n, 0),
                         "read_bytes": t.reads_bytes.get(n, 0), "written_bytes": t.writes_bytes.get(n, 0), "touched": t.touched.get(n, 0),
                         "best_read_words": None if best is None else best[0], "best_written_words": None if best is None else best[1]})
        cols = {"tensor": "string", "role": "string", "read_words": "Int64", "written_words": "Int64", "read_bytes": "Int64",
                "written_bytes": "Int64", "touched": "Int64", "best_read_words": "Int64", "best_written_words": "Int64"}
        f = pd.DataFrame(rows, columns=list(cols)).astype(cols)
        f.attrs.update(total_bytes=self.total_bytes, lower_bound=self.lower_bound_id, lower_bound_bytes=self.lower_bound_bytes,
                       best_schedule=self.best_schedule, best_bytes=self.best_bytes, ratio_to_bound=self.ratio_to_bound,
                       ratio_to_best=self.ratio_to_best, outputs_ok=self.outputs_ok)
        return f

    def lines(self) -> list[str]:
        w = self.workload
        out = [
            f"{self.direction} of {w.batch}×{w.heads} heads ({w.kv_heads} K/V){' causal' if w.causal else ''}, "
            f"Nq={w.Nq} Nkv={w.Nkv} d={w.d} dv={w.dv} {w.dtype}, M={w.M:,d} words ({w.memory}); "
            f"launches: {', '.join(self.traffic.launches) or 'none'}",
            f"  {'tensor':<24} {'read bytes':>14} {'written bytes':>14} {'touched':>10}",
        ]
        t = self.traffic
        for n in t.names:
            out.append(f"  {n:<24} {t.reads_bytes.get(n, 0):>14,d} {t.writes_bytes.get(n, 0):>14,d} {t.touched.get(n, 0):>10,d}"
                       + (f"  also {', '.join(self.aliases[n])}" if n in self.aliases else ""))
        out += [
            f"  {'total':<24} {t.total_bytes:>29,d} bytes",
            f"  best lower bound ({self.lower_bound_id}): {self.lower_bound_bytes:,d} bytes; counted ÷ bound = {self.ratio_to_bound:.3f}"
            + (f" ({self.lower_bound_assumes})" if self.lower_bound_assumes else ""),
            f"  attnio's best schedule ({self.best_schedule}): {self.best_bytes:,d} bytes; counted ÷ best = {self.ratio_to_best:.3f}",
            "  outputs: " + ", ".join(f"max |{k} − ref| = {e:.2e}" for k, e in self.max_abs_error.items())
            + f" (tolerance {self.tolerance:g}, {'ok' if self.outputs_ok else 'WRONG'})",
            f"  {self.dominates}",
        ]
        out += [f"  note: {n}" for n in self.notes]
        return out


def _tolerance(dtype: str, ref_max: float) -> float:
    """The accepted max |out − reference| in the interpreter: :data:`INTERPRETER_FP32` × max(1, max |ref|) for
    fp32, :data:`TOLERANCE` for 16-bit types."""
    if dtype == "fp32":
        return INTERPRETER_FP32 * max(1.0, ref_max)
    return TOLERANCE.get(dtype, 0.0)


def _ratio(counted: int, reference: int) -> float:
    """counted ÷ reference, or infinity where the reference is 0."""
    return counted / reference if reference else math.inf


def _torch_dtype(w: Any) -> Any:
    import torch

    dtypes = {"fp32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}
    if w.dtype not in dtypes:
        raise Unsupported(f"dtype {w.dtype} has no CPU interpreter path here; use one of {', '.join(dtypes)}")
    return dtypes[w.dtype]


def _scale(w: Any) -> float:
    return 1.0 / math.sqrt(w.d)


def make_inputs(w: Any, names: tuple[str, ...], seed: int = 0) -> dict[str, Any]:
    """The tensors a launcher asks for (module docstring), made for ``w``."""
    import torch

    from attnio.algorithms.reference import attention4 as reference
    from attnio.algorithms.run import random_inputs

    dt = _torch_dtype(w)
    Q, K, V = random_inputs(w, seed)
    t = {"q": torch.tensor(Q, dtype=dt), "k": torch.tensor(K, dtype=dt), "v": torch.tensor(V, dtype=dt)}
    if any(n in names for n in ("do", "dq", "dk", "dv")):
        q64, k64, v64 = (x.to(torch.float64) for x in (t["q"], t["k"], t["v"]))
        O = reference(q64.numpy(), k64.numpy(), v64.numpy(), w.causal)
        t["o"] = torch.tensor(O, dtype=dt)
        t["lse"] = _lse(q64, k64, w).to(torch.float32)
        rng = np.random.default_rng(seed + 1)
        t["do"] = torch.tensor(rng.standard_normal((w.batch, w.heads, w.Nq, w.dv)), dtype=dt)
        t["dq"], t["dk"], t["dv"] = (torch.zeros_like(t[x]) for x in ("q", "k", "v"))
    else:
        t["o"] = torch.zeros((w.batch, w.heads, w.Nq, w.dv), dtype=dt)
    return {n: t[n] for n in names if n in t}


def _scores(q64: Any, k64: Any, w: Any) -> Any:
    import torch

    g = w.heads // w.kv_heads
    s = torch.einsum("bhid,bhjd->bhij", q64, k64.repeat_interleave(g, dim=1)) * _scale(w)
    if w.causal:
        mask = torch.arange(w.Nkv)[None, :] > torch.arange(w.Nq)[:, None] + (w.Nkv - w.Nq)
        s = s.masked_fill(mask, float("-inf"))
    return s


def _lse(q64: Any, k64: Any, w: Any) -> Any:
    return _scores(q64, k64, w).logsumexp(dim=-1)


def _grads(t: dict[str, Any], w: Any) -> dict[str, Any]:
    """dq, dk, dv of the float64 reference by torch autograd (K/V gradients summed over each group)."""
    import torch

    q, k, v = (t[x].detach().to(torch.float64).requires_grad_(True) for x in ("q", "k", "v"))
    g = w.heads // w.kv_heads
    o = torch.softmax(_scores(q, k, w), dim=-1) @ v.repeat_interleave(g, dim=1)
    o.backward(t["do"].to(torch.float64))
    return {"dq": q.grad, "dk": k.grad, "dv": v.grad}


def launcher_params(launch: Callable[..., Any], args: dict[str, str] | None = None) -> tuple[tuple[str, ...], list[str]]:
    """(tensor names the launcher asks for, other inputs it takes), after mapping its parameter names
    (``attnio.triton.launcher.resolve``); bad signatures are InvalidParameter."""
    lau = resolve(launch, args)
    ins = lau.inputs
    return tuple(n for n in BACKWARD_TENSORS if n in ins), [n for n in OTHER_PARAMS if n in ins]


def _call(lau: Launcher, tensors: dict[str, Any], w: Any, causal: bool | None = None,
          extra: dict[str, Any] | None = None) -> Traffic:
    values: dict[str, Any] = dict(tensors) | dict(extra or {})
    values |= {"causal": w.causal if causal is None else causal, "sm_scale": _scale(w), "scale": _scale(w),
               "workload": w}
    missing = [n for n in lau.inputs if n not in values]
    if missing:
        raise InvalidParameter("launch", f"{lau.name} taking {', '.join(missing)}",
                               f"a launcher taking inputs this check makes: {', '.join(sorted(values))}")
    counted = {n: values[n] for n in lau.inputs if hasattr(values[n], "data_ptr")}
    with count_traffic(**counted) as t:
        try:
            ret = lau.call(values)
        except AttnioError:
            raise
        except Exception as e:  # the user's launcher failed: one clear error naming it
            hint = ("; under fake_gpu (--fake-gpu cuda:90) CUDA allocations and is_cuda are served on the CPU"
                    if "cuda" in f"{e}".lower() and not _fake_gpu_on() else "")
            raise LauncherError(f"launcher {lau.name!r} raised {type(e).__name__}: {e}{hint}") from e
    t.returned = ret  # type: ignore[attr-defined]
    for a in set(lau.params.values()):  # the launcher's own parameter names are aliases too
        for p in lau.names_of(a):
            if a in counted and p != a and p not in t.aliases.setdefault(a, []):
                t.aliases[a].insert(0, p)
    return t


def _fake_gpu_on() -> bool:
    """Whether a fake_gpu block is active (torch.Tensor.is_cuda replaced)."""
    import torch

    return "is_cuda" in vars(torch.Tensor)


def _best_forward(w: Any) -> tuple[str, int, dict[str, tuple[int, int]]]:
    from attnio.algorithms.run import run

    cands = [("flash2", "per-head"), ("flash2", "grouped"), ("flash1-fit", "per-head"), ("square_tiling", "per-head"),
             ("standard", "per-head")]
    return _cheapest(w, cands, lambda a, w, **kw: run(a, w, pass_="forward", **kw))


def _best_backward(w: Any) -> tuple[str, int, dict[str, tuple[int, int]]]:
    from attnio.algorithms import registry
    from attnio.algorithms.run import run

    cands = [(b, s) for s in ("per-head", "grouped") for b in registry.with_schedule(s, "backward")]
    return _cheapest(w, cands, lambda a, w, **kw: run(a, w, pass_="backward", **kw))


def _cheapest(w: Any, cands: list[tuple[str, str]], runner: Callable[..., Any]) -> tuple[str, int, dict[str, tuple[int, int]]]:
    best = None
    for alg, sched in cands:
        if sched == "grouped" and w.groups == 1:
            continue
        try:
            m = runner(alg, w, schedule=sched, count_only=True).measurement
        except (InvalidParameter, Unsupported):  # M below the schedule's minimum, or no such schedule
            continue
        key = (m.io_words, alg, sched)
        if best is None or key < best[0]:
            best = (key, m)
    if best is None:
        raise Unsupported(f"no attnio schedule fits this workload (M={w.M} words)")
    (io, alg, sched), m = best
    return f"{alg} ({sched})", io, {k: (v.reads_words, v.writes_words) for k, v in m.per_array.items()}


#: attnio's array for each tensor name, by convention (case-insensitive): a launcher's parameter name, or the
#: argument name of a tensor that count_traffic attributes to ``<kernel>.<argument>`` (a kernel's own scratch
#: and statistics). A launcher's ``attnio_roles`` attribute or ``check(roles=...)`` names others, e.g. the Triton
#: tutorial's base-2 row statistics ``{"_attn_fwd.M": "L"}`` ("m" alone is ambiguous: FA-1's running max).
ROLE_NAMES: dict[str, str] = {
    "q": "Q", "k": "K", "v": "V", "o": "O", "out": "O",
    "l": "L", "lse": "L", "logsumexp": "L", "softmax_lse": "L",  # one logsumexp per query row
    "d": "D", "delta": "D",  # the backward's rowsum(dO ∘ O)
    "s": "S", "logits": "S", "scores": "S",  # the scaled logits QKᵀ (square tiling, standard)
    "p": "P", "probs": "P",  # the softmax (standard)
    "do": "dO", "dq": "dQ", "dk": "dK", "dv": "dV",
    "k_cache": "K", "v_cache": "V",  # a paged K/V cache (check(..., page_size=...))
}
#: what the sentence calls each group of arrays, and which direction it compares (r, w or rw: both)
GROUPS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("Q is read", ("Q",), "r"), ("K and V are read", ("K", "V"), "r"), ("O is written", ("O",), "w"),
    ("O is read", ("O",), "r"), ("dO is read", ("dO",), "r"), ("dQ, dK and dV are written", ("dQ", "dK", "dV"), "w"),
    ("dQ is read", ("dQ",), "r"), ("the logsumexp L is moved", ("L",), "rw"), ("D is moved", ("D",), "rw"),
    ("the logits S are moved", ("S",), "rw"), ("the probabilities P are moved", ("P",), "rw"),
)


def role_of(name: str, roles: dict[str, str] | None = None) -> str | None:
    """attnio's array for the counted tensor ``name`` (declared ``roles`` first, then :data:`ROLE_NAMES` on the
    name, or on its argument part for ``<kernel>.<argument>``), or None.

    >>> [role_of(n) for n in ("q", "lse", "_fa2_fwd.L", "_square_tiling.S", "fa2_bwd_preprocess.D", "tmp")]
    ['Q', 'L', 'L', 'S', 'D', None]
    >>> role_of("_attn_fwd.M", {"_attn_fwd.M": "L"})
    'L'
    """
    if roles and name in roles:
        return roles[name]
    return ROLE_NAMES.get(name.rpartition(".")[2].lower())


def _role(t: Traffic, name: str, roles: dict[str, str] | None) -> str | None:
    """:func:`role_of` the counted tensor ``name``, else of the first of its aliases that has one."""
    for n in [name, *getattr(t, "aliases", {}).get(name, [])]:
        r = role_of(n, roles)
        if r is not None:
            return r
    return None


def per_array(t: Traffic, roles: dict[str, str] | None = None) -> tuple[dict[str, list[int]], dict[str, int]]:
    """({attnio array: [read words, written words, read bytes, written bytes]}, {unmapped tensor: words moved})
    of the counted traffic ``t``, each tensor mapped by :func:`role_of` (several tensors may share an array)."""
    arrays: dict[str, list[int]] = {}
    other: dict[str, int] = {}
    for n in t.names:
        r, wr = t.reads_words.get(n, 0), t.writes_words.get(n, 0)
        a = _role(t, n, roles)
        if a is None:
            if r + wr:
                other[n] = r + wr
            continue
        acc = arrays.setdefault(a, [0, 0, 0, 0])
        for i, x in enumerate((r, wr, t.reads_bytes.get(n, 0), t.writes_bytes.get(n, 0))):
            acc[i] += x
    return arrays, other


def _dominates(t: Traffic, best_name: str, best: dict[str, tuple[int, int]],
               roles: dict[str, str] | None = None) -> tuple[str, tuple[str, ...] | None]:
    """The sentence saying how the kernel's traffic compares with attnio's best schedule, array by array (in
    words), and the arrays of the group that moves the most in excess (None when none does)."""
    counted, other = per_array(t, roles)
    arrays = set(counted) | set(best)
    same = all(tuple(counted.get(a, [0, 0])[:2]) == tuple(best.get(a, (0, 0))) for a in arrays)
    if same and not other:
        return f"matches attnio's best schedule ({best_name}) word for word", None
    covered = {(a, d) for _, names, rw in GROUPS for a in names for d in rw}
    groups = list(GROUPS) + [(f"{a} is moved", (a,), "rw") for a in sorted(arrays)
                             if not {(a, "r"), (a, "w")} <= covered]
    worst = None
    for label, names, rw in groups:
        got = sum(sum(counted.get(a, [0, 0])[i] for i in (0, 1) if "rw"[i] in rw) for a in names)
        ref = sum(sum(best.get(a, (0, 0))[i] for i in (0, 1) if "rw"[i] in rw) for a in names)
        if got - ref > 0 and (worst is None or got - ref > worst[0]):
            worst = (got - ref, label, got, ref, names)
    if other:
        name, words = max(other.items(), key=lambda kv: (kv[1], kv[0]))
        if worst is None or words > worst[0]:
            b = t.reads_bytes.get(name, 0) + t.writes_bytes.get(name, 0)
            return (f"{name} (not an array of attnio's schedules; name its role with roles= or the launcher's "
                    f"attnio_roles) moves {b:,d} bytes, the largest excess over attnio's best schedule ({best_name})"), None
    total = sum(v[0] + v[1] for v in counted.values()) + sum(other.values())
    tie = "; the same total as attnio's best schedule" if total == sum(r + w for r, w in best.values()) else ""
    if worst is None:
        return f"no array moves more than in attnio's best schedule ({best_name}){tie}", None
    excess, label, got, ref, names = worst
    if ref == 0:
        return f"{label}: {got:,d} words that attnio's best schedule ({best_name}) does not move{tie}", names
    return f"{label} {got / ref:.1f}× more than by attnio's best schedule ({best_name}){tie}", names


def _roles(launch: Callable[..., Any], roles: dict[str, str] | None) -> dict[str, str]:
    """``roles``, or the launcher's ``attnio_roles`` attribute; each entry two strings (else InvalidParameter)."""
    if roles is None:
        roles = dict(getattr(launch, "attnio_roles", None) or {})
    for n, a in roles.items():
        if not isinstance(n, str) or not isinstance(a, str):
            raise InvalidParameter("roles", f"{n!r}: {a!r}", "tensor name -> attnio array name (both strings)")
    return roles


def check(launch: Callable[..., Any], workload: Any, *, seed: int = 0, roles: dict[str, str] | None = None,
          args: dict[str, str] | None = None, cu_seqlens: Any = None, page_size: int | None = None) -> KernelCheck:
    """Count ``launch``'s traffic on ``workload`` (an :class:`attnio.core.workload.Workload`), check its outputs, and
    compare with the best lower bound and attnio's best schedule (module docstring).

    ``roles``: counted tensor name -> attnio array (Q, K, V, O, L, D, S, P, dO, dQ, dK, dV, ...) for tensors the
    conventions of :data:`ROLE_NAMES` do not place; default: the launcher's ``attnio_roles`` attribute.
    ``args``: launcher parameter -> attnio input (``{"query": "q", "key": "k", ...}``) for parameters not named
    by attnio's convention; default: the launcher's ``attnio_args`` attribute (``attnio.triton.launcher``).
    ``launch`` may also be a ``torch.autograd.Function`` subclass or its ``.apply``.
    ``cu_seqlens`` (0, L_1, L_1 + L_2, ...): a packed variable-length forward (:func:`_check_ragged`).
    ``page_size``: K and V in a paged cache (:func:`paged_kv`), forward only."""
    from attnio.bounds.workloads import best_backward_lower_bound, best_lower_bound

    t0 = time.perf_counter()
    w = workload
    notes: list[str] = []
    assumes = ""
    elements = w.batch * (w.heads * w.Nq + w.kv_heads * w.Nkv) * (w.d + w.dv)
    if elements > MAX_ELEMENTS:
        raise InvalidParameter("workload", f"{elements:,d} elements of q, k, v and o",
                               f"at most {MAX_ELEMENTS:,d} (2^26): the interpreter runs the kernel on the CPU")
    lau = resolve(launch, args)
    if cu_seqlens is None and any(n in lau.inputs for n in ("cu_seqlens", "max_seqlen")):
        raise InvalidParameter("cu_seqlens", None, f"the cumulative sequence lengths launcher {lau.name!r} takes "
                               "(check(..., cu_seqlens=[0, L1, L1 + L2, ...]) or --cu-seqlens)")
    if cu_seqlens is not None:
        if page_size is not None or any(n in lau.inputs for n in PAGED):
            raise InvalidParameter("page_size", page_size, "no paged K/V cache with cu_seqlens (not built: a packed "
                                   "variable-length batch has dense packed K and V)")
        return _check_ragged(lau, w, cu_seqlens, seed, roles if roles is not None else getattr(launch, "attnio_roles", None), t0)
    names = tuple(n for n in BACKWARD_TENSORS if n in lau.inputs)
    backward = any(n in names for n in ("do", "dq", "dk", "dv"))
    paged = any(n in lau.inputs for n in PAGED)
    if paged != (page_size is not None) or (paged and backward):
        raise InvalidParameter("page_size", page_size, f"a page size exactly when launcher {lau.name!r} takes a paged "
                               f"K/V cache ({', '.join(PAGED)}), forward only; it takes {', '.join(lau.inputs)}")
    made = make_inputs(w, BACKWARD_TENSORS if backward else FORWARD_TENSORS, seed)
    tensors = {n: made[n] for n in names if n in made}  # one not made is refused in _call
    extra = paged_kv(made["k"], made["v"], w, page_size, seed) if paged else {}
    traffic = _call(lau, tensors, w, extra=extra)
    errors: dict[str, float] = {}
    if backward:
        ref = _grads(make_inputs(w, BACKWARD_TENSORS, seed), w)
        for n in ("dq", "dk", "dv"):
            if n in tensors:
                errors[n] = float((tensors[n].to(ref[n].dtype) - ref[n]).abs().max())
        ref_max = max(float(ref[n].abs().max()) for n in errors) if errors else 0.0
        # the bounds that assume S recomputed (BWD-SdP_P, BWD-slots_P) apply only to a kernel that reads no S, P
        # and no tensor whose role is not named (it could hold S or P); the others hold for every backward
        arrays, unnamed = per_array(traffic, _roles(launch, roles))
        reads_sp = sorted(a for a in ("S", "P") if arrays.get(a, [0])[0] > 0) + sorted(n for n in unnamed if traffic.reads_words.get(n, 0))
        lb_id, lb = best_backward_lower_bound(w, recomputes_S=not reads_sp)
        assumes = "assumes S recomputed (the kernel reads no S, P or unnamed tensor)" if not reads_sp else ""
        if reads_sp:
            notes.append("the kernel reads " + ", ".join(reads_sp) + ": only the backward bounds that hold without S "
                         "recomputed are applied (not BWD-SdP_P, BWD-slots_P)")
        best_name, best_words, best_pa = _best_backward(w)
    else:
        from attnio.algorithms.reference import attention4 as reference

        returned = traffic.returned  # type: ignore[attr-defined]
        if isinstance(returned, (tuple, list)):  # e.g. (o, lse): the first tensor is the output
            returned = next((x for x in returned if hasattr(x, "shape")), None)
        got = returned if hasattr(returned, "shape") else tensors.get("o")
        if got is None:
            raise InvalidParameter("launch", lau.name, "a launcher that writes o or returns the output")
        ref = reference(*(made[n].double().numpy() for n in ("q", "k", "v")), w.causal)
        if tuple(got.shape) != ref.shape:
            raise InvalidParameter("output.shape", tuple(got.shape), f"{ref.shape} (batch, heads, Nq, dv)")
        errors["o"] = float(np.max(np.abs(got.double().numpy() - ref)))
        ref_max = float(np.max(np.abs(ref))) if ref.size else 0.0
        lb_id, lb = best_lower_bound(w)
        best_name, best_words, best_pa = _best_forward(w)
    roles = _roles(launch, roles)
    sentence, group = _dominates(traffic, best_name, best_pa, roles)
    if w.causal and group == ("K", "V"):
        # measured, not assumed: the same launcher without the mask; equal K/V reads = no block is skipped
        plain = _call(lau, make_inputs(w, names, seed), w, causal=False, extra=extra)
        kv, kv_plain = (sum(per_array(x, roles)[0].get(a, [0])[0] for a in ("K", "V")) for x in (traffic, plain))
        if kv >= kv_plain:
            sentence += ": blocks above the diagonal are loaded (K and V reads equal the same kernel's unmasked run)"
        else:
            notes.append(f"the unmasked run of the same kernel reads K and V {kv_plain / kv:.2f}× more: masked blocks are skipped")
    lbw = math.ceil(lb) if lb > 0 else 0
    return KernelCheck(w, "backward" if backward else "forward", traffic, lb_id, lbw, best_name, best_words, best_pa,
                       errors, _tolerance(w.dtype, ref_max), sentence, time.perf_counter() - t0, notes, assumes)


def _check_ragged(lau: Launcher, w: Any, cu_seqlens: Any, seed: int, roles: dict[str, str] | None,
                  t0: float) -> KernelCheck:
    """:func:`check` of a packed variable-length forward: sequence i (``Ragged.sequences``) has its inputs made
    as a batch-1 workload of its length (seed ``seed + i``), packed into q (tokens, heads, d), k, v (tokens,
    kv_heads, d/dv) and o (tokens, heads, dv); the launcher also gets ``cu_seqlens`` (int32, counted) and
    ``max_seqlen``. The output is checked per sequence; the bound and attnio's best schedule are the sums over
    the sequences (each sequence is its own attention problem)."""
    import torch

    from attnio.algorithms.reference import attention4 as reference
    from attnio.bounds.workloads import best_lower_bound
    from attnio.core.workload import Ragged

    if any(n in lau.inputs for n in ("do", "dq", "dk", "dv", "lse")):
        raise Unsupported(f"launcher {lau.name!r}: a variable-length backward is not checked yet (forward only)")
    rag = Ragged.from_cu_seqlens(cu_seqlens)
    seqs = rag.sequences(w)
    if rag.tokens * (w.heads + w.kv_heads) * (w.d + w.dv) > MAX_ELEMENTS:
        raise InvalidParameter("cu_seqlens", f"{rag.tokens:,d} tokens", f"a workload of at most {MAX_ELEMENTS:,d} elements")
    parts = [make_inputs(wi, FORWARD_TENSORS, seed + i) for i, wi in enumerate(seqs)]
    packed = {n: torch.cat([p[n][0].transpose(0, 1) for p in parts]).contiguous() for n in FORWARD_TENSORS}
    tensors = {n: packed[n] for n in FORWARD_TENSORS if n in lau.inputs}
    extra = {"cu_seqlens": torch.tensor(rag.cu_seqlens, dtype=torch.int32), "max_seqlen": rag.max_seqlen}
    traffic = _call(lau, tensors, w, extra=extra)
    returned = traffic.returned  # type: ignore[attr-defined]
    if isinstance(returned, (tuple, list)):
        returned = next((x for x in returned if hasattr(x, "shape")), None)
    got = returned if hasattr(returned, "shape") else tensors.get("o")
    if got is None:
        raise InvalidParameter("launch", lau.name, "a launcher that writes o or returns the output")
    want = (rag.tokens, w.heads, w.dv)
    if tuple(got.shape) != want:
        raise InvalidParameter("output.shape", tuple(got.shape), f"{want} (tokens, heads, dv)")
    err, ref_max = 0.0, 0.0
    for (a, b), p, wi in zip(zip(rag.cu_seqlens, rag.cu_seqlens[1:], strict=False), parts, seqs, strict=True):
        ref = reference(*(p[n].double().numpy() for n in ("q", "k", "v")), wi.causal)[0].transpose(1, 0, 2)
        err = max(err, float(np.max(np.abs(got[a:b].double().numpy() - ref))))
        ref_max = max(ref_max, float(np.max(np.abs(ref))))
    lb_ids, lb_words, best_words, names = [], 0, 0, []
    best_pa: dict[str, tuple[int, int]] = {}
    for wi in seqs:
        lid, lb = best_lower_bound(wi)
        lb_words += math.ceil(lb) if lb > 0 else 0
        if lid not in lb_ids:
            lb_ids.append(lid)
        bname, bw, pa = _best_forward(wi)
        best_words += bw
        if bname not in names:
            names.append(bname)
        for k, (r, wr) in pa.items():
            r0, w0 = best_pa.get(k, (0, 0))
            best_pa[k] = (r0 + r, w0 + wr)
    best_name = " + ".join(names)
    roles = dict(roles or {})
    sentence, _ = _dominates(traffic, best_name, best_pa, roles)
    notes = [f"packed variable-length batch: {len(seqs)} sequences of lengths {', '.join(map(str, rag.seqlens))} "
             f"({rag.tokens} tokens); bound and best schedule summed over the sequences"]
    return KernelCheck(w, "forward", traffic, " + ".join(lb_ids), lb_words, best_name, best_words, best_pa,
                       {"o": err}, _tolerance(w.dtype, ref_max), sentence, time.perf_counter() - t0, notes)


def paged_kv(k: Any, v: Any, w: Any, page_size: int, seed: int = 0) -> dict[str, Any]:
    """K and V (batch, kv_heads, N_kv, d/dv) in a paged cache: ``k_cache`` (pages, page_size, kv_heads, d),
    ``v_cache`` (pages, page_size, kv_heads, dv), ``block_table`` (batch, ⌈N_kv / page_size⌉) int32: sequence b's
    j-th page, ``seq_lens`` (batch,) int32 (N_kv each), and the same pages as a flat list: ``kv_indices``
    (the block table's rows one after another) with ``kv_indptr`` (batch + 1,) int32, sequence b's pages being
    ``kv_indices[kv_indptr[b]:kv_indptr[b+1]]``; with ``page_size=1`` this is a token pool. The pages are a permutation (from ``seed``) of
    batch · ⌈N_kv / page_size⌉ pages plus one page no sequence uses; rows past N_kv in a last partial page are 0.

    The compulsory traffic and the bounds are those of the dense workload: the layout moves no K/V word more."""
    import torch

    from attnio.core.validate import check_int

    page_size = check_int("page_size", page_size, min=1)
    B, Hkv, N, d = k.shape
    per = -(-N // page_size)
    pages = B * per + 1
    order = torch.from_numpy(np.random.default_rng(seed + 7).permutation(pages).astype(np.int32))
    table = order[: B * per].reshape(B, per).contiguous()
    caches = []
    for x in (k, v):
        c = torch.zeros((pages, page_size, Hkv, x.shape[3]), dtype=x.dtype)
        padded = torch.zeros((B, Hkv, per * page_size, x.shape[3]), dtype=x.dtype)
        padded[:, :, :N] = x
        c[table.reshape(-1).long()] = padded.reshape(B, Hkv, per, page_size, -1).permute(0, 2, 3, 1, 4).reshape(B * per, page_size, Hkv, -1)
        caches.append(c.contiguous())
    return {"k_cache": caches[0], "v_cache": caches[1], "block_table": table,
            "seq_lens": torch.full((B,), N, dtype=torch.int32),
            "kv_indices": table.reshape(-1).clone(), "kv_indptr": torch.arange(0, B * per + 1, per, dtype=torch.int32)}
