"""attnio's FA-2 forward counted at production shape: programs that differ only by a base offset counted once.

The FA-2 forward (:mod:`attnio.triton.kernels.fa2_fwd`) runs a grid (T_r Q blocks) × (units: batch·H_kv
grouped, batch·H per-head). :func:`count` counts it per tensor without running every program, by running, in
Triton's interpreter under :func:`attnio.triton.count_traffic`, one program at a time
(:func:`attnio.triton.hooks.programs_only`) on a *witness*: the workload with at most 2 batches and 2 K/V heads
(same N_q, N_kv, d, d_v, group size, dtype and blocks), so that its tensors fit in memory::

    unit axis:  run programs (i, 0) and (i, U_w − 1) of the witness for i in {0, 1}: per tensor, their read
                and write address multisets must be equal up to one shift of the base (checked, else Mismatch);
                then every unit counts as unit 0 (extrapolated to the workload's units)
    pid_m axis: T_r ≤ SMALL: run every (i, 0)                                       -> "all T_r programs"
                else: fit c(i) = a + b·i per tensor and field from i = 0, 1; run i = 2 and `verify`
                seeded random i in [3, T_r − 2] and check c(i) (else Mismatch); run i = T_r − 1 (the
                last block, partial when B_r ∤ N_q) exactly; Σ_i c(i) over i < T_r − 1 in closed form
    total       = units × Σ_i (per-program count of unit 0)

Nothing is assumed: the shift equality and the affine fit are checked on the programs named in ``method``,
and a failed check raises :class:`Mismatch` (no count). What is *not* checked is the affine law on the
programs that were not run; tests/test_triton_scale.py compares with the full run on every small shape
Hypothesis draws. ``touched`` (distinct elements) is not produced: only reads and writes, words and bytes.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnio.core.counts import IOCount
from attnio.core.errors import AttnioError
from attnio.core.workload import Workload

#: pid_m counts up to this many programs are run in full (no fit)
SMALL = 6
FIELDS = ("reads_bytes", "writes_bytes", "reads_words", "writes_words")


class Mismatch(AttnioError, RuntimeError):
    """A sampled program did not behave as the extrapolation needs (not offset-only, or not affine in pid_m)."""


@dataclass
class ScaledCount:
    """Per-tensor counts of the whole launch (as :class:`attnio.triton.Tally`'s fields, without ``touched``),
    how they were obtained (``method``: ``"full"`` or ``"sampled: ..."``), the programs run and the seconds."""

    reads_bytes: dict[str, int]
    writes_bytes: dict[str, int]
    reads_words: dict[str, int]
    writes_words: dict[str, int]
    method: str
    programs_run: int
    programs_total: int
    seconds: float = 0.0
    witness: dict[str, int] = field(default_factory=dict)

    def io_count(self, tensor: str | None = None) -> IOCount:
        if tensor is None:
            return IOCount(sum(self.reads_words.values()), sum(self.writes_words.values()))
        return IOCount(self.reads_words.get(tensor, 0), self.writes_words.get(tensor, 0))

    def as_dict(self) -> dict[str, Any]:
        names = sorted(set(self.reads_words) | set(self.writes_words))
        return {
            "tensors": {n: {f: getattr(self, f).get(n, 0) for f in FIELDS} for n in names},
            "total_bytes": sum(self.reads_bytes.values()) + sum(self.writes_bytes.values()),
            "method": self.method,
            "programs_run": self.programs_run,
            "programs_total": self.programs_total,
            "seconds": round(self.seconds, 3),
            "witness": self.witness,
        }


def witness(w: Workload) -> Workload:
    """The workload with at most 2 batches and 2 K/V heads (group size kept): what :func:`count` runs."""
    kv = min(w.kv_heads, 2)
    return Workload.build(batch=min(w.batch, 2), heads=kv * w.groups, kv_heads=kv, Nq=w.Nq, Nkv=w.Nkv, d=w.d,
                          dv=w.dv, causal=w.causal, dtype=w.dtype, M=w.M)


def _tensors(w: Workload) -> dict[str, Any]:
    """q, k, v, o, lse of ``w`` (zeros: the kernel's addresses do not depend on the values)."""
    import torch

    from attnio.triton.kernels.fa2_fwd import buffers
    from attnio.triton.kernels.measure import TORCH_DTYPES

    dt = getattr(torch, TORCH_DTYPES[w.dtype])
    t = {"q": torch.zeros((w.batch, w.heads, w.Nq, w.d), dtype=dt),
         "k": torch.zeros((w.batch, w.kv_heads, w.Nkv, w.d), dtype=dt),
         "v": torch.zeros((w.batch, w.kv_heads, w.Nkv, w.dv), dtype=dt)}
    q = t["q"]
    t.update(buffers(w, q))
    return t


class _Programs:
    """Runs chosen programs of one FA-2 launch under counting; per program: per tensor [rb, wb, rw, ww], and
    (when asked) its read and write addresses per tensor."""

    def __init__(self, w: Workload, block: tuple[int, int], schedule: str) -> None:
        self.w, self.block, self.schedule = w, block, schedule
        self.tensors = _tensors(w)

    def run(self, programs: list[tuple[int, int]], addresses: bool = False) -> dict[tuple[int, int], Any]:
        from attnio.triton import count as count_mod
        from attnio.triton.hooks import programs_only
        from attnio.triton.kernels.fa2_fwd import fa2_forward

        want = set(programs)
        out: dict[tuple[int, int], Any] = {}
        state: dict[str, Any] = {}

        def around(idx: tuple[int, int, int], begin: bool) -> None:
            c = count_mod._ACTIVE[-1]
            if begin:
                state["before"] = {k: list(v) for k, v in c.acc.sums.items()}
                c.record = [] if addresses else None
                return
            before = state["before"]
            per: dict[str, list[int]] = {}
            for oid, s in c.acc.sums.items():
                b = before.get(oid, [0, 0, 0, 0])
                o = c.owners[oid]
                d = [s[j] - b[j] for j in range(4)]
                words = [d[2], d[3]] if not o.elsize else [d[0] // o.elsize, d[1] // o.elsize]
                row = per.setdefault(o.name, [0, 0, 0, 0])
                for j, x in enumerate((d[0], d[1], *words)):
                    row[j] += x
            rec = None
            if addresses:
                rec = {}
                for owner, addrs, reads, writes in c.record:
                    for oid in np.unique(owner):
                        a = addrs[owner == oid]
                        name = c.owners[int(oid)].name
                        for kind, on in (("r", reads), ("w", writes)):
                            if on:
                                rec.setdefault((name, kind), []).append(a)
                rec = {k: np.sort(np.concatenate(v)) for k, v in rec.items()}
                c.record = None
            out[(idx[0], idx[1])] = (per, rec)

        t = self.tensors
        with count_mod.count_traffic(**t), programs_only(lambda idx: (idx[0], idx[1]) in want, around):
            fa2_forward(t["q"], t["k"], t["v"], causal=self.w.causal, block=self.block, schedule=self.schedule,
                        o=t["o"], lse=t["lse"])
        if set(out) != want:
            raise Mismatch(f"programs {sorted(want - set(out))} did not run (the grid is "
                           f"{-(-self.w.Nq // self.block[0])} Q blocks)")
        return out


def _shift_equal(a: dict[Any, np.ndarray], b: dict[Any, np.ndarray]) -> str | None:
    """None when every (tensor, read/write) address multiset of ``a`` equals ``b``'s up to one shift, else why."""
    if set(a) != set(b):
        return f"different tensors touched: {sorted(a)} vs {sorted(b)}"
    for k in sorted(a):
        x, y = a[k], b[k]
        if len(x) != len(y):
            return f"{k}: {len(x)} vs {len(y)} lanes"
        if len(x) and len(np.unique(y - x)) != 1:
            return f"{k}: addresses differ by more than a base shift"
    return None


def _vec(per: dict[str, list[int]], names: list[str]) -> np.ndarray:
    return np.array([per.get(n, [0, 0, 0, 0]) for n in names], dtype=object)


def count(w: Workload, *, block: tuple[int, int] | None = None, schedule: str = "grouped", verify: int = 1,
          seed: int = 0) -> ScaledCount:
    """attnio's FA-2 forward on ``w`` (blocks ``block`` = (B_r, B_c), or attnio's io-optimal rule at w.M),
    counted per tensor by the offset and pid_m extrapolation of the module docstring. ``verify``: random
    interior Q blocks run to check the affine law (besides i = 2; each costs up to T_r inner steps under causal masking). Raises :class:`Mismatch` when a
    check fails."""
    from attnio.triton.kernels.fa2_fwd import blocks

    t0 = time.perf_counter()
    if block is None:
        block = blocks(w, schedule)
    B_r = block[0]
    T_r = -(-w.Nq // B_r)
    units = (w.kv_heads_total if schedule == "grouped" else w.query_heads_total)
    wit = witness(w)
    U_w = wit.kv_heads_total if schedule == "grouped" else wit.query_heads_total
    runner = _Programs(wit, block, schedule)

    # the unit axis: offset-only, checked on Q blocks 0 and 1 of the first and last witness unit
    probe_i = sorted({0, min(1, T_r - 1)})
    notes = []
    if U_w > 1:
        got = runner.run([(i, u) for i in probe_i for u in (0, U_w - 1)], addresses=True)
        for i in probe_i:
            why = _shift_equal(got[(i, 0)][1], got[(i, U_w - 1)][1])
            if why:
                raise Mismatch(f"units 0 and {U_w - 1} of Q block {i} are not offset-only: {why}")
        base = {i: got[(i, 0)][0] for i in probe_i}
        notes.append(f"units offset-only (checked: units 0 and {U_w - 1} at Q blocks {probe_i} of a "
                     f"batch {wit.batch}, kv_heads {wit.kv_heads} witness), x{units} units")
        run_count = 2 * len(probe_i)
    else:
        base = {k[0]: p for k, (p, _) in runner.run([(i, 0) for i in probe_i]).items()}
        notes.append(f"1 unit in the witness (offsets unchecked), x{units} units")
        run_count = len(probe_i)

    if T_r <= SMALL:
        rest = [i for i in range(T_r) if i not in base]
        if rest:
            base.update({k[0]: p for k, (p, _) in runner.run([(i, 0) for i in rest]).items()})
        run_count += len(rest)
        names = sorted({n for p in base.values() for n in p})
        per_unit = sum((_vec(base[i], names) for i in range(T_r)), np.zeros((len(names), 4), dtype=object))
        notes.append(f"pid_m: all {T_r} Q blocks run")
        method = "full" if units == 1 else "sampled: " + "; ".join(notes)  # one unit: every program ran
    else:
        rng = random.Random(seed)
        interior = list(range(3, T_r - 1))
        checks = sorted({2} | set(rng.sample(interior, min(verify, len(interior)))))
        got = runner.run([(i, 0) for i in [*checks, T_r - 1]])
        run_count += len(checks) + 1
        names = sorted({n for p in [*base.values(), *(p for p, _ in got.values())] for n in p})
        a = _vec(base[0], names)
        b = _vec(base[1], names) - a
        for i in checks:
            if not (_vec(got[(i, 0)][0], names) == a + b * i).all():
                raise Mismatch(f"Q block {i}'s count is not affine in pid_m (fitted on blocks 0 and 1)")
        n = T_r - 1  # Σ_{i<n} (a + b·i)
        per_unit = a * n + b * (n * (n - 1) // 2) + _vec(got[(T_r - 1, 0)][0], names)
        notes.append(f"pid_m: affine in i fitted on Q blocks 0, 1, checked on {checks}, block {T_r - 1} run, "
                     f"{T_r} blocks")
        method = "sampled: " + "; ".join(notes)
    total = per_unit * units
    res = {f: {n: int(total[k, j]) for k, n in enumerate(names)} for j, f in enumerate(FIELDS)}
    return ScaledCount(**res, method=method, programs_run=run_count, programs_total=T_r * units,
                       seconds=time.perf_counter() - t0,
                       witness={"batch": wit.batch, "heads": wit.heads, "kv_heads": wit.kv_heads})
