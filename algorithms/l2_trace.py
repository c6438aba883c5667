"""A kernel's per-program access trace at cache-line granularity, and its replay through the L2 model
(docs/dram.md#captured-traces).

:class:`KernelTrace` holds what :mod:`attnio.triton.trace` records under the Triton counter: per launch, per
program (grid index, numbered x fastest: id = (z·Y + y)·X + x), the ordered accesses (one per ``tl.load``,
``tl.store`` or atomic, per tensor it touches), each as the requested read and write bytes and run-length
encoded lines: runs of consecutive 128-byte lines with the same 32-byte sector mask (bit s: sector s of the
line). Line ids are ``storage << 40 | (byte offset in the storage) >> 7``: storages start on a line, as a GPU
allocator's do. All in NumPy arrays.

:func:`replay_trace` schedules the programs with the scheduler of the tile-level replay
(:mod:`attnio.algorithms.l2_schedule`: launch order, L2 partitions, SMs × occupancy slots, lockstep or drifting rounds; a
step is one access) and runs them through its cache model (:class:`attnio.algorithms.l2_cache.SectoredLRU`).
The blocks the cache keeps are the trace's *atoms*: lines grouped by the exact set of accesses that touch them
(two hashes of 64 bits of that set), so an atom's lines are always accessed together and no line is in two
atoms. Within one access the lines are taken atom by atom, in order of each atom's first line (the order of the
lines of one warp-wide request is not defined by the hardware). Then the block LRU is exactly a line-level
fully associative LRU (docs/dram.md#exactness), with the valid and dirty sectors of each line: hits, DRAM reads
(the requested sectors not valid) and write-backs (dirty sectors, on eviction and at the end) are those of a
sectored line LRU. A compare-and-swap's failed lanes are counted as written sectors (it writes nothing).

Worked example: one program reading 256 bytes (2 lines) twice, one L2 line: the second read misses.

>>> import numpy as np
>>> one = LaunchTrace("k", (1, 1, 1), np.array([0, 2]), np.array([0, 0]), np.array([256, 256]), np.array([0, 0]),
...                   np.array([True, True]), np.array([False, False]), np.array([0, 1, 2]),
...                   np.array([0, 0]), np.array([2, 2]), np.array([15, 15], dtype=np.uint8))
>>> t = KernelTrace(["x"], [one])
>>> t.requested()
{'x': (512, 0)}
>>> r = replay_trace(t, "h100", l2_bytes=128)
>>> r.tensors["x"].hit_lines, r.tensors["x"].dram_read_bytes
(0, 512)
>>> replay_trace(t, "h100").tensors["x"].hit_lines
2
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from attnio.algorithms.l2_schedule import ORDERS, L2Result, launch_order, machine, replay_launches, sync_skew
from attnio.bounds.dram import L2Preset
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int

_POP4 = np.array([bin(i).count("1") for i in range(16)], dtype=np.int64)


@dataclass
class LaunchTrace:
    """One launch: ``kernel``, ``grid`` (X, Y, Z); programs p = 0..X·Y·Z − 1 (x fastest) own the accesses
    ``prog[p]:prog[p + 1]``; access e: ``tensor[e]`` (index into :attr:`KernelTrace.tensors`), requested
    ``read_bytes[e]``, ``write_bytes[e]``, ``reads[e]``, ``writes[e]``, and the runs ``run[e]:run[e + 1]``; run r:
    ``line[r]`` (first line id), ``length[r]`` lines, sector ``mask[r]`` of each of them."""

    kernel: str
    grid: tuple[int, int, int]
    prog: np.ndarray
    tensor: np.ndarray
    read_bytes: np.ndarray
    write_bytes: np.ndarray
    reads: np.ndarray
    writes: np.ndarray
    run: np.ndarray
    line: np.ndarray
    length: np.ndarray
    mask: np.ndarray

    @property
    def programs(self) -> int:
        return len(self.prog) - 1

    @property
    def nbytes(self) -> int:
        """Bytes of the arrays (how compact the trace is)."""
        return sum(getattr(self, f).nbytes for f in ("prog", "tensor", "read_bytes", "write_bytes", "reads",
                                                     "writes", "run", "line", "length", "mask"))


@dataclass
class KernelTrace:
    """The launches of one counted block, in launch order, over the tensors ``tensors`` (the counter's names)."""

    tensors: list[str]
    launches: list[LaunchTrace] = field(default_factory=list)
    line: int = 128
    sector: int = 32

    def requested(self) -> dict[str, tuple[int, int]]:
        """Tensor -> (read bytes, write bytes) requested: the counter's ``reads_bytes`` and ``writes_bytes``."""
        out = {n: [0, 0] for n in self.tensors}
        for la in self.launches:
            for t, n in enumerate(self.tensors):
                sel = la.tensor == t
                out[n][0] += int(la.read_bytes[sel].sum())
                out[n][1] += int(la.write_bytes[sel].sum())
        return {n: (r, w) for n, (r, w) in out.items() if r or w}

    @property
    def accesses(self) -> int:
        return sum(len(la.tensor) for la in self.launches)

    @property
    def nbytes(self) -> int:
        return sum(la.nbytes for la in self.launches)


def _atoms(trace: KernelTrace) -> list[list[tuple]]:
    """Per launch, per access, the tuple of its :data:`~attnio.algorithms.l2_schedule.Access` entries (one per
    atom it touches, module docstring)."""
    runs_line = np.concatenate([la.line for la in trace.launches]).astype(np.int64)
    runs_len = np.concatenate([la.length for la in trace.launches]).astype(np.int64)
    runs_mask = np.concatenate([la.mask for la in trace.launches]).astype(np.int64)
    n_ev = [len(la.tensor) for la in trace.launches]
    ev_runs = np.concatenate([np.diff(la.run) for la in trace.launches]).astype(np.int64)
    ev_of_run = np.repeat(np.arange(sum(n_ev), dtype=np.int64), ev_runs)
    total = int(runs_len.sum())
    starts = np.repeat(np.cumsum(runs_len) - runs_len, runs_len)
    lines = np.repeat(runs_line, runs_len) + (np.arange(total, dtype=np.int64) - starts)
    ev = np.repeat(ev_of_run, runs_len)
    masks = np.repeat(runs_mask, runs_len)
    uniq, inv = np.unique(lines, return_inverse=True)
    order = np.argsort(inv, kind="stable")
    first = np.flatnonzero(np.r_[True, inv[order][1:] != inv[order][:-1]])
    rng = np.random.default_rng(20260101)
    sig = []
    for _ in range(2):  # two 64-bit hashes of the set of accesses touching each line (sums of random weights)
        w_ev = rng.integers(0, 2**64, size=max(sum(n_ev), 1), dtype=np.uint64)
        sig.append(np.add.reduceat(w_ev[ev[order]], first) if len(first) else np.zeros(0, np.uint64))
    _, atom_of_uniq = np.unique(np.stack(sig, axis=1), axis=0, return_inverse=True)
    atom_of_uniq = atom_of_uniq.ravel()
    atom = atom_of_uniq[inv]
    # the atom's first line (its place in an access) and each line's position inside its atom
    n_atoms = int(atom_of_uniq.max()) + 1 if len(atom_of_uniq) else 0
    atom_min = np.full(n_atoms, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(atom_min, atom_of_uniq, uniq)
    srt = np.lexsort((lines, atom_min[atom], ev))
    ev_s, atom_s, mask_s = ev[srt], atom[srt], masks[srt]
    brk = np.flatnonzero(np.r_[True, (ev_s[1:] != ev_s[:-1]) | (atom_s[1:] != atom_s[:-1])])
    seg_end = np.r_[brk[1:], len(ev_s)]
    seg_sectors = np.add.reduceat(_POP4[mask_s], brk) if len(brk) else np.zeros(0, np.int64)
    tensor = np.concatenate([la.tensor for la in trace.launches])
    rb = np.concatenate([la.read_bytes for la in trace.launches])
    wb = np.concatenate([la.write_bytes for la in trace.launches])
    rd = np.concatenate([la.reads for la in trace.launches])
    wr = np.concatenate([la.writes for la in trace.launches])
    per_ev: list[list[tuple]] = [[] for _ in range(sum(n_ev))]
    full = mask_s == 15
    for s0, s1, nsec in zip(brk.tolist(), seg_end.tolist(), seg_sectors.tolist(), strict=True):
        e = int(ev_s[s0])
        n = s1 - s0
        if full[s0:s1].all():
            m = (1 << (4 * n)) - 1
        else:
            nib = mask_s[s0:s1].astype(np.uint8)
            if n % 2:
                nib = np.r_[nib, np.uint8(0)]
            m = int.from_bytes((nib[0::2] | (nib[1::2] << 4)).astype(np.uint8).tobytes(), "little")
        first_seg = not per_ev[e]
        per_ev[e].append((int(tensor[e]), int(atom_s[s0]), n, m, nsec, int(rb[e]) if first_seg else 0,
                          int(wb[e]) if first_seg else 0, bool(rd[e]), bool(wr[e])))
    out, k = [], 0
    for n in n_ev:
        out.append([tuple(x) for x in per_ev[k:k + n]])
        k += n
    return out


def replay_trace(
    trace: KernelTrace, gpu: str | L2Preset, *, order: str | Sequence[int] = "qhb", section_heads: int | None = None,
    q_reverse: bool = False, occupancy: int = 1, sms: int | None = None, l2_bytes: int | None = None,
    partition: int | None = None, sync: str = "lockstep", skew: float = 1.0,
) -> L2Result:
    """Replay ``trace`` through the L2 of ``gpu`` (module docstring): each launch's programs in ``order``
    (:func:`~attnio.algorithms.l2_schedule.launch_order` over its grid: ``"qhb"`` the grid order, x fastest;
    ``"hqb"`` y fastest; ``"sections"`` y in sections of ``section_heads``; or an explicit permutation of the
    program ids, one launch only), one access a step, the launches one after another on one cache per partition.
    ``sms``, ``l2_bytes`` (per partition), ``occupancy``, ``partition``, ``sync`` and ``skew`` as
    :func:`attnio.algorithms.l2.replay`."""
    t0 = time.perf_counter()
    if not isinstance(trace, KernelTrace):
        raise InvalidParameter("trace", type(trace).__name__, "an attnio.algorithms.l2_trace.KernelTrace")
    p, slots, cap = machine(gpu, occupancy, sms, l2_bytes)
    sk = sync_skew(sync, skew)
    if trace.line != p.line or trace.sector != p.sector:
        raise InvalidParameter("trace", f"{trace.line}-byte lines of {trace.sector}-byte sectors",
                               f"the preset's {p.line}-byte lines of {p.sector}-byte sectors")
    if isinstance(order, str):
        check_choice("order", order, list(ORDERS))
    elif len(trace.launches) != 1:
        raise InvalidParameter("order", "a permutation", f"qhb, hqb or sections: the trace has "
                               f"{len(trace.launches)} launches (an explicit order is for one launch)")
    sec = None
    if order == "sections":
        if section_heads is None:
            raise InvalidParameter("section_heads", None, "a positive int (grid y per section) with order sections")
        sec = check_int("section_heads", section_heads, min=1)
    launches = []
    steps = _atoms(trace) if trace.launches else []
    for la, acc in zip(trace.launches, steps, strict=True):
        X, Y, Z = la.grid
        ids = launch_order(X, Y, Z, order, sec or 1, q_reverse)
        prog = la.prog.tolist()

        def program(pid: int, pos: int, acc: list = acc, prog: list = prog) -> list:
            return acc[prog[pid]:prog[pid + 1]]

        launches.append((ids, program))
    acc, programs = replay_launches(p, cap, slots, launches, trace.tensors, partition, sk)
    return L2Result(p.name, cap, p.partitions, slots, programs, order if isinstance(order, str) else "explicit", sec,
                    True, acc.traffic(), acc.compulsory * p.sector, time.perf_counter() - t0, sync, sk)
