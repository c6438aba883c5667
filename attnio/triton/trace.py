"""Capture a counted Triton kernel's per-program access trace at cache-line granularity (docs/dram.md#captured-traces).

Under :func:`attnio.triton.count_traffic`, :func:`tracing` runs every program of every launch through
:func:`attnio.triton.hooks.programs_only` (to know where each program begins and ends) and sets the counter's
trace hook, which sees every access the counter counts: per program, in order, each access per tensor as its
requested read and write bytes (lanes × element size, as the counter counts them) and its distinct lines
(128 bytes) with the sectors (32 bytes) its lanes touch, run-length encoded
(:class:`attnio.algorithms.l2_trace.KernelTrace`). Only the first counted block inside ``tracing`` is recorded
(:func:`attnio.triton.check` counts a causal kernel a second time without its mask: that one is not).

    with count_traffic(q=q, k=k, v=v, o=o, lse=lse) as traffic, tracing() as trace:
        fa2_forward(q, k, v, block=(64, 64), o=o, lse=lse)
    replay_trace(trace, "h100")           # attnio.algorithms.l2_trace

Off (no ``tracing`` block), the counter pays one ``is None`` test per access (benchmarks/bench_l2.py measures it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np

from attnio.algorithms.l2_trace import KernelTrace, LaunchTrace

LINE, SECTOR = 128, 32


class _Recorder:
    """Builds a :class:`KernelTrace` from the counter's accesses and the program boundaries."""

    def __init__(self, trace: KernelTrace) -> None:
        self.trace = trace
        self.counter: Any = None
        self.launches_seen = 0
        self.launch: dict | None = None  # kernel, programs: {grid idx: (first access, end)}, accesses
        self.program: tuple[int, int, int] | None = None
        self.first = 0
        self.owner_info: dict[int, tuple[int, int, int]] = {}  # owner id -> (tensor index, storage index, base)
        self.storages: list[int] = []
        self.names: dict[str, int] = {}
        self.done: list[LaunchTrace] = []

    # -- program boundaries (programs_only's ``around``)
    def around(self, idx: tuple[int, int, int], begin: bool) -> None:
        from attnio.triton import count as count_mod

        c = count_mod._ACTIVE[-1] if count_mod._ACTIVE else None
        if c is None:
            return
        if self.counter is None:
            self.counter = c
        if c is not self.counter:
            return
        if not begin:
            assert self.launch is not None
            self.launch["programs"][tuple(idx)] = (self.first, len(self.launch["events"]))
            self.program = None
            return
        if c.trace is None:
            c.trace = self.access
        if len(c.launches) != self.launches_seen:  # a new launch began
            self._close_launch()
            self.launches_seen = len(c.launches)
            self.launch = {"kernel": c.kernel, "programs": {}, "events": [], "runs": []}
        self.program = tuple(idx)
        self.first = len(self.launch["events"])  # type: ignore[index]

    def _info(self, oid: int) -> tuple[int, int, int]:
        got = self.owner_info.get(oid)
        if got is None:
            c = self.counter
            o = c.owners[oid]
            t = self.names.setdefault(o.name, len(self.names))
            base, size = None, 0
            for (ptr, nbytes) in c.storage_owner:  # the storage that holds the owner's first element
                if ptr <= o.lo < ptr + max(nbytes, 1) and (base is None or nbytes < size):
                    base, size = ptr, nbytes
            if base is None:  # not a kernel argument's storage: its first element, on a 256-byte boundary
                base = o.lo - o.lo % 256
            if base not in self.storages:
                self.storages.append(base)
            got = self.owner_info[oid] = (t, self.storages.index(base), base)
        return got

    # -- the counter's trace hook
    def access(self, owner: np.ndarray, addrs: np.ndarray, itemsize: int, reads: bool, writes: bool,
               wsel: np.ndarray | None) -> None:
        la = self.launch
        if la is None or self.program is None:
            return
        first = int(owner[0])
        groups = [(first, None)] if (owner == first).all() else [(int(o), owner == o) for o in np.unique(owner)]
        for oid, sel in groups:
            a = addrs if sel is None else addrs[sel]
            t, st, base = self._info(oid)
            lanes = a.size
            wl = lanes if wsel is None else int(wsel.sum() if sel is None else (wsel & sel).sum())
            off = a - base
            u = np.unique((off >> 5) + (np.int64(st) << 42))  # sector ids: storage << 40 lines, 4 sectors a line
            line = u >> 2
            bit = (1 << (u & 3)).astype(np.uint8)
            starts = np.flatnonzero(np.r_[True, line[1:] != line[:-1]])
            ul = line[starts]
            m = np.bitwise_or.reduceat(bit, starts)
            brk = np.flatnonzero(np.r_[True, (np.diff(ul) != 1) | (m[1:] != m[:-1])])
            length = np.diff(np.r_[brk, len(ul)])
            la["events"].append((t, lanes * itemsize if reads else 0, wl * itemsize if writes else 0, reads, writes,
                                 len(brk)))
            la["runs"].append((ul[brk], length, m[brk]))

    def _close_launch(self) -> None:
        la = self.launch
        if la is None:
            return
        self.launch = None
        progs = la["programs"]
        if not progs:
            return
        X, Y, Z = (max(i[k] for i in progs) + 1 for k in range(3))
        ev, runs = la["events"], la["runs"]
        run_start = np.r_[0, np.cumsum([e[5] for e in ev])].astype(np.int64)
        order: list[int] = []
        prog = [0]
        for pid in range(X * Y * Z):
            z, rest = divmod(pid, X * Y)
            y, x = divmod(rest, X)
            e0, e1 = progs.get((x, y, z), (0, 0))
            order += range(e0, e1)
            prog.append(len(order))
        evs = [ev[i] for i in order]
        rs = [runs[i] for i in order]

        def cat(k: int, dt: Any) -> np.ndarray:
            return np.concatenate([r[k] for r in rs]).astype(dt) if rs else np.zeros(0, dt)

        self.done.append(LaunchTrace(
            la["kernel"], (X, Y, Z), np.asarray(prog, dtype=np.int64),
            np.array([e[0] for e in evs], dtype=np.int32), np.array([e[1] for e in evs], dtype=np.int64),
            np.array([e[2] for e in evs], dtype=np.int64), np.array([e[3] for e in evs], dtype=bool),
            np.array([e[4] for e in evs], dtype=bool), np.r_[0, np.cumsum(np.diff(run_start)[order])].astype(np.int64)
            if order else np.zeros(1, np.int64),
            cat(0, np.int64), cat(1, np.int32), cat(2, np.uint8)))

    def finish(self) -> None:
        self._close_launch()
        if self.counter is not None and self.counter.trace == self.access:
            self.counter.trace = None
        self.trace.tensors[:] = sorted(self.names, key=self.names.get)
        self.trace.launches[:] = self.done


@contextlib.contextmanager
def tracing() -> Iterator[KernelTrace]:
    """Record the per-program access trace of the first :func:`~attnio.triton.count_traffic` block entered (or
    already active) inside the ``with`` block; the yielded :class:`KernelTrace` is filled when the block ends.
    Every program runs (the grid is the interpreter's); process-wide, not thread-safe."""
    from attnio.triton.hooks import programs_only

    trace = KernelTrace([], [], LINE, SECTOR)
    rec = _Recorder(trace)
    try:
        with programs_only(lambda idx: True, rec.around):
            yield trace
    finally:
        rec.finish()


def fa2_tensors(w: Any, backward: bool = False, seed: int = 0) -> dict[str, Any]:
    """Inputs and outputs of attnio's FA-2 Triton kernels for workload ``w`` in FlashAttention's layout, as the
    tile-level replay (:mod:`attnio.algorithms.l2`) lays them out: q, k, v, o (and do, dq, dk, dv) views of
    (batch, seq, heads, width) storage, lse (batch, heads, seq) fp32. Random values (seeded); backward: o and lse
    from the forward."""
    import torch

    from attnio.triton.kernels.measure import TORCH_DTYPES

    dt = getattr(torch, TORCH_DTYPES[w.dtype])
    g = torch.Generator().manual_seed(seed)

    def bshd(heads: int, n: int, width: int, dtype: Any = dt, rand: bool = True) -> Any:
        x = torch.randn((w.batch, n, heads, width), generator=g) if rand else torch.zeros((w.batch, n, heads, width))
        return x.to(dtype).permute(0, 2, 1, 3)

    t = {"q": bshd(w.heads, w.Nq, w.d), "k": bshd(w.kv_heads, w.Nkv, w.d), "v": bshd(w.kv_heads, w.Nkv, w.dv),
         "o": bshd(w.heads, w.Nq, w.dv, rand=False), "lse": torch.zeros((w.batch, w.heads, w.Nq), dtype=torch.float32)}
    if backward:
        t["do"] = bshd(w.heads, w.Nq, w.dv)
        t["dq"] = bshd(w.heads, w.Nq, w.d, torch.float32 if w.dtype == "bf16" else dt, rand=False)
        t["dk"] = bshd(w.kv_heads, w.Nkv, w.d, rand=False)
        t["dv"] = bshd(w.kv_heads, w.Nkv, w.dv, rand=False)
    return t


def capture_fa2(w: Any, B_r: int, B_c: int, backward: bool = False, seed: int = 0) -> tuple[Any, KernelTrace]:
    """(the counter's :class:`~attnio.triton.count.Traffic`, the trace) of attnio's FA-2 forward (per-head
    schedule, blocks (B_r, B_c)) or backward (B_r, B_c) Triton kernel on ``w`` in :func:`fa2_tensors`' layout.
    The backward's o and lse come from an uncounted forward."""
    from attnio.triton.count import count_traffic
    from attnio.triton.kernels.fa2_fwd import fa2_forward

    t = fa2_tensors(w, backward, seed)
    if not backward:
        with count_traffic(**t) as traffic, tracing() as trace:
            fa2_forward(t["q"], t["k"], t["v"], causal=w.causal, block=(B_r, B_c), schedule="per-head", o=t["o"],
                        lse=t["lse"])
        return traffic, trace
    from attnio.triton.kernels.fa2_bwd import fa2_backward

    fa2_forward(t["q"], t["k"], t["v"], causal=w.causal, block=(B_r, B_c), schedule="per-head", o=t["o"], lse=t["lse"])
    with count_traffic(**t) as traffic, tracing() as trace:
        fa2_backward(t["q"], t["k"], t["v"], t["o"], t["do"], t["lse"], causal=w.causal, B_r=B_r, B_c=B_c,
                     dq=t["dq"], dk=t["dk"], dv=t["dv"])
    return traffic, trace
