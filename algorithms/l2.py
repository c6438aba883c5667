"""An L2 replay of attnio's FlashAttention-2 forward (:func:`replay`) and backward (:func:`replay_backward`) at
tile granularity: requested bytes, 32-byte sectors, L2 hits and the DRAM bytes left after the L2 (docs/dram.md).
The scheduler and the accounting are :mod:`attnio.algorithms.l2_schedule`'s, the cache model
:class:`attnio.algorithms.l2_cache.SectoredLRU`: the same as for a kernel's captured trace
(:mod:`attnio.algorithms.l2_trace`).

One *program* (thread block) is one Q block of one query head of one sequence; its accesses, in order::

    load Q_i (B_r rows of head h)                        # step 0
    for j in the K/V blocks it sees (forward, or reversed: sawtooth):
        load K_j, then V_j (B_c rows of K/V head h // g)  # steps 1..n
    write O_i (B_r rows), write L_i (B_r fp32 logsumexps)  # last step

Tensors are laid out as FlashAttention's kernels take them, (batch, seq, heads, d) for Q, K, V, O (a row of one
head is d·bytes contiguous bytes, rows of a head are heads·d·bytes apart) and (batch, heads, seq) fp32 for L.
Each tile access is the lines (128 B) and sectors (32 B) its rows touch.

Scheduling: programs are numbered in a launch order (``order``: ``"qhb"`` q block fastest, then head, then
sequence, FlashAttention-2's grid; ``"hqb"`` head fastest; ``"sections"``: FlashAttention-3's tile scheduler,
heads in sections of ``section_heads``, head fastest inside a section, then q block, then section, then sequence;
or an explicit permutation of the ``"qhb"`` numbering). Program k goes to L2 partition k mod P (one partition on
NVIDIA parts; one per XCD on MI300-class parts, whose dispatcher deals workgroups round-robin to the XCDs).
Each partition has sms_per_partition × ``occupancy`` slots; a slot runs one program at a time and takes the next
program of its partition, in launch order, when its program ends; resident programs are interleaved step by step
(each round, every busy slot performs one step, in slot order). With ``q_reverse`` the q blocks are launched last
first (causal kernels start the longest rows first).

Cache: one fully associative LRU per partition of ⌊L2 bytes per partition / 128⌋ lines, write-allocate,
write-back, with valid and dirty sectors; a miss reads the tile's sectors from DRAM (sectored L2); every O and L
tile reaches DRAM once (written once, written back when evicted or at the end). Exact for line-level LRU when tiles are atomic: row
bytes (d·bytes per element) a multiple of the 128-byte line and L's B_r·4 and N_q·4 bytes too, so no line is shared by two
tiles (:mod:`attnio.algorithms.l2_cache`); otherwise a line shared by two tiles is counted in each
(``L2Result.exact`` is False). Not modelled: set associativity, the hash of addresses to L2 slices, replacement
other than LRU, the Infinity Cache / MALL behind an AMD L2, prefetching, and timing (steps advance in lockstep, or
staggered with ``sync="drift"``).

Worked example: one head, N = 256, d = 64 fp16, B_r = B_c = 128, one SM: 2 programs of 1 + 2 + 1 steps. Q, K, V
are 2 tiles of 128 rows × 128 B = 128 lines each. With a large L2 the second program's K and V hit: K and V are
read from DRAM once (64 KiB each), requested twice.

>>> from attnio.core.workload import Workload
>>> w = Workload.build(N=256, d=64, dtype="fp16", M=10**6)
>>> r = replay(w, "a100", B_r=128, B_c=128, sms=1)
>>> [(t, r.tensors[t].requested_bytes, r.tensors[t].dram_read_bytes) for t in ("Q", "K", "V")]
[('Q', 32768, 32768), ('K', 65536, 32768), ('V', 65536, 32768)]
>>> r.exact, round(r.hit_rate, 3)
(True, 0.4)
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence

from attnio.algorithms.l2_schedule import (
    ORDERS,
    L2Result,
    TensorTraffic,
    launch_order,
    machine,
    replay_launches,
    sync_skew,
)
from attnio.bounds.dram import L2Preset
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int
from attnio.core.workload import Workload

__all__ = ["ORDERS", "L2Result", "TensorTraffic", "fa3_section_heads", "replay", "replay_backward"]

TENSORS = ("Q", "K", "V", "O", "L")
#: the backward's tensors: its inputs, D (rowsum(dO ∘ O), fp32) and the gradients
BWD_TENSORS = ("Q", "K", "V", "O", "dO", "L", "D", "dQ", "dK", "dV")
STEPS = ("block", "access")
#: FlashAttention-3's L2 budget for a section's K and V (hopper/tile_scheduler.hpp): 32 MiB.
FA3_L2_BUDGET = 32 * 2**20


def fa3_section_heads(Nkv: int, d: int, bytes_per_word: int, heads: int, budget: int = FA3_L2_BUDGET) -> int:
    """FlashAttention-3's heads per section: size_one_kv_head = N_kv·d·bytes·2 (K and V), section =
    2^⌊log2(budget / size_one_kv_head)⌋ heads, at least 1 and at most ``heads``.

    >>> [fa3_section_heads(n, 128, 2, 64) for n in (8192, 32768, 131072)]
    [8, 2, 1]
    """
    one = Nkv * d * bytes_per_word * 2
    s = 1 if one >= budget else 2 ** int(math.floor(math.log2(budget / one)))
    return max(1, min(s, heads))


def _row_runs(offsets: range, R: int, unit: int) -> int:
    """Units (lines or sectors) touched by rows of ``R`` bytes at ``offsets``: rows that follow one another
    (stride ``R``: one head, a tensor's rows back to back) are one run of len(offsets)·R bytes, whose units a row
    boundary inside a unit does not count twice; rows further apart each counted on their own.

    >>> _row_runs(range(0, 240, 80), 80, 32), _row_runs(range(0, 480, 160), 80, 32)
    (8, 9)
    """
    if len(offsets) > 1 and offsets.step == R:
        offsets, R = range(offsets.start, offsets.start + 1), R * len(offsets)
    if R % unit == 0 and offsets.start % unit == 0 and offsets.step % unit == 0:
        return len(offsets) * (R // unit)
    return sum(-(-(o + R) // unit) - o // unit for o in offsets)


class _Tiles:
    """Tile accesses (:data:`attnio.algorithms.l2_schedule.Access`) of one replay, made once and kept.

    ``specs[t]`` = (``"rows"``, heads, N, row bytes): tensor t laid out (batch, seq, heads, width), a tile of rows
    [r0, r1) of head h is r1 − r0 rows of ``row bytes`` at stride heads·row bytes; or (``"stat"``, heads, N, e):
    (batch, heads, seq) of e-byte elements (4: fp32), a tile is one contiguous run. ``block[t]``: the rows of a tile starting at r0 are
    [r0, min(r0 + block[t], N)). A tile's block key is an int made of (t, z, h, r0)."""

    def __init__(self, specs: dict[int, tuple[str, int, int, int]], block: dict[int, int], batch: int, line: int,
                 sector: int) -> None:
        self.specs, self.block, self.line, self.sector = specs, block, line, sector
        self.hmax = max(s[1] for s in specs.values())
        self.nmax = max(s[2] for s in specs.values()) + 1
        self.batch = batch
        self.made: dict[int, tuple] = {}

    def __call__(self, t: int, z: int, h: int, r0: int, rd: bool, wr: bool) -> tuple:
        key = ((t * self.batch + z) * self.hmax + h) * self.nmax + r0
        ck = key * 4 + 2 * rd + wr
        got = self.made.get(ck)
        if got is None:
            layout, heads_t, N, R = self.specs[t]
            r1 = min(r0 + self.block[t], N)
            if layout == "stat":
                offs = range(((z * heads_t + h) * N + r0) * R, ((z * heads_t + h) * N + r0) * R + 1)
                width = (r1 - r0) * R
            else:
                stride = heads_t * R
                start = ((z * N + r0) * heads_t + h) * R
                offs = range(start, start + (r1 - r0) * stride, stride)
                width = R
            nl, ns = _row_runs(offs, width, self.line), _row_runs(offs, width, self.sector)
            nbytes = len(offs) * width
            got = self.made[ck] = (t, key, nl, (1 << ns) - 1, ns, nbytes if rd else 0, nbytes if wr else 0, rd, wr)
        return got


def _setup(gpu: str | L2Preset, w: Workload, B_r: int, B_c: int, order: str | Sequence[int], occupancy: int,
           sms: int | None, l2_bytes: int | None, steps: str) -> tuple:
    if not isinstance(w, Workload):
        raise InvalidParameter("workload", w, "an attnio.core.workload.Workload (Workload.build(...))")
    p, slots, cap = machine(gpu, occupancy, sms, l2_bytes)
    B_r, B_c = check_int("B_r", B_r, min=1), check_int("B_c", B_c, min=1)
    if isinstance(order, str):
        check_choice("order", order, list(ORDERS))
    check_choice("steps", steps, list(STEPS))
    return p, B_r, B_c, slots, cap


def replay(
    w: Workload, gpu: str | L2Preset, *, B_r: int = 128, B_c: int = 128, order: str | Sequence[int] = "qhb",
    section_heads: int | None = None, q_reverse: bool = False, sawtooth: bool = False, occupancy: int = 1,
    sms: int | None = None, l2_bytes: int | None = None, partition: int | None = None, steps: str = "block",
    sync: str = "lockstep", skew: float = 1.0,
) -> L2Result:
    """Replay the FA-2 forward of ``w`` through the L2 of ``gpu`` (a name of :data:`attnio.bounds.dram.L2_PRESETS`
    or a preset); ``sms`` and ``l2_bytes`` (per partition) override the preset's; ``section_heads`` (order
    ``"sections"``; None: FlashAttention-3's rule :func:`fa3_section_heads`); ``sawtooth``: a program of an odd
    wave (launch position // slots) reads its K/V blocks last first (arXiv 2601.16032's alternating traversal);
    ``partition``: replay that L2 partition only (the result covers its programs only; where the launch order
    deals the partitions symmetric shares, P times it is the whole GPU); ``steps``: ``"block"`` (K_j and V_j are
    one step, O and L one step: the module docstring) or ``"access"`` (every tile load or store its own step, as
    a captured kernel trace is replayed, :mod:`attnio.algorithms.l2_trace`); ``sync``: ``"lockstep"`` (resident
    programs advance together: the most sharing) or ``"drift"`` (the first wave's starts staggered over ``skew`` ×
    a program's length; ``skew=1``: the drift-max end), :mod:`attnio.algorithms.l2_schedule`."""
    t0 = time.perf_counter()
    p, B_r, B_c, slots, cap = _setup(gpu, w, B_r, B_c, order, occupancy, sms, l2_bytes, steps)
    bpw = w.bytes_per_word
    H, Hkv, g, Nq, Nkv, B = w.heads, w.kv_heads, w.groups, w.Nq, w.Nkv, w.batch
    T_r, T_c = -(-Nq // B_r), -(-Nkv // B_c)
    sec = None
    if order == "sections":
        sec = fa3_section_heads(Nkv, w.d, bpw, H) if section_heads is None else check_int("section_heads", section_heads, min=1)
    ids = launch_order(T_r, H, B, order, sec or 1, q_reverse)
    line = p.line
    Rq, Rv = w.d * bpw, w.dv * bpw
    exact = Rq % line == 0 and Rv % line == 0 and (B_r * 4) % line == 0 and (Nq * 4) % line == 0  # L tiles too
    tiles = _Tiles({0: ("rows", H, Nq, Rq), 1: ("rows", Hkv, Nkv, Rq), 2: ("rows", Hkv, Nkv, Rv),
                    3: ("rows", H, Nq, Rv), 4: ("stat", H, Nq, 4)},
                   {0: B_r, 1: B_c, 2: B_c, 3: B_r, 4: B_r}, B, line, p.sector)
    split = steps == "access"

    def kv_range(i: int) -> tuple[int, int]:
        if not w.causal:
            return 0, T_c
        last = min((i + 1) * B_r, Nq) - 1 + Nkv - Nq
        return 0, (last // B_c + 1 if last >= 0 else 0)

    def program(pid: int, pos: int) -> Iterator[tuple]:
        z, rest = divmod(pid, H * T_r)
        h, i = divmod(rest, T_r)
        hk = h // g
        lo, hi = kv_range(i)
        yield (tiles(0, z, h, i * B_r, True, False),)
        js = range(hi - 1, lo - 1, -1) if sawtooth and (pos // slots) % 2 == 1 else range(lo, hi)
        for j in js:
            k, v = tiles(1, z, hk, j * B_c, True, False), tiles(2, z, hk, j * B_c, True, False)
            yield from ((k,), (v,)) if split else ((k, v),)
        o, lse = tiles(3, z, h, i * B_r, False, True), tiles(4, z, h, i * B_r, False, True)
        yield from ((o,), (lse,)) if split else ((o, lse),)

    sk = sync_skew(sync, skew)
    acc, programs = replay_launches(p, cap, slots, [(ids, program)], TENSORS, partition, sk)
    return L2Result(p.name, cap, p.partitions, slots, programs, order if isinstance(order, str) else "explicit", sec,
                    exact, acc.traffic(), acc.compulsory * p.sector, time.perf_counter() - t0, sync, sk)


def replay_backward(
    w: Workload, gpu: str | L2Preset, *, B_r: int = 128, B_c: int = 128, order: str | Sequence[int] = "qhb",
    section_heads: int | None = None, occupancy: int = 1, sms: int | None = None, l2_bytes: int | None = None,
    partition: int | None = None, steps: str = "block", sync: str = "lockstep", skew: float = 1.0,
) -> L2Result:
    """Replay the FA-2 backward of ``w`` (the two launches of attnio's ``flash2-bwd`` schedule as its Triton kernel
    runs them, :mod:`attnio.triton.kernels.fa2_bwd`) through the L2 of ``gpu``, on a cold L2::

        preprocess, one program per (block of P rows, head), P = the power of two ≥ min(N_q, 64), at least 16:
            load O_i, dO_i (step) | write D_i, write dQ_i ← 0 (step)
        main, one program per (K/V block j of B_c rows, K/V head):
            load K_j, V_j (step)
            for each query head of the group, for the Q blocks from s_j = max(0, j·B_c − δ) (causal) or 0, B_r rows:
                load Q_i, dO_i, L_i, D_i, read-modify-write dQ_i (an atomic add) (step)
            write dK_j, dV_j (step)

    Layouts: (batch, seq, heads, width) for Q, K, V, O, dO, dQ, dK, dV; (batch, heads, seq) fp32 for L and D.
    dQ is in the element type, fp32 for bf16 (the Triton kernel's choice). A tile is cut into chunks of
    gcd(P, B_r, B_c, δ) rows (the rows where preprocess and main tiles can start), each chunk one cache block;
    the replay is exact (line-level LRU) when every chunk fills whole lines. Launch orders as :func:`replay`
    (x the block, y the head, z the sequence), applied to each launch; ``steps="access"``: every tile access its
    own step; ``sync`` and ``skew`` as :func:`replay` (each launch's first wave staggered). Not modelled: the fp32 dQ accumulator and its conversion of FlashAttention-2's CUDA kernel."""
    t0 = time.perf_counter()
    p, B_r, B_c, slots, cap = _setup(gpu, w, B_r, B_c, order, occupancy, sms, l2_bytes, steps)
    bpw = w.bytes_per_word
    H, Hkv, g, Nq, Nkv, B = w.heads, w.kv_heads, w.groups, w.Nq, w.Nkv, w.batch
    delta = Nkv - Nq
    P_rows = max(16, 1 << (min(Nq, 64) - 1).bit_length())
    T_p, T_c = -(-Nq // P_rows), -(-Nkv // B_c)
    chunk = math.gcd(P_rows, B_r, B_c, delta) if w.causal else math.gcd(P_rows, B_r)
    sec = None
    if order == "sections":
        sec = fa3_section_heads(Nkv, w.d, bpw, Hkv) if section_heads is None else check_int("section_heads", section_heads, min=1)
    dq_bytes = 4 if w.dtype == "bf16" else bpw
    line = p.line
    Rq, Rv, Rdq = w.d * bpw, w.dv * bpw, w.d * dq_bytes
    exact = all(x % line == 0 for x in (Rq, Rv, Rdq, chunk * 4, Nq * 4))
    # BWD_TENSORS: Q K V O dO L D dQ dK dV
    specs = {0: ("rows", H, Nq, Rq), 1: ("rows", Hkv, Nkv, Rq), 2: ("rows", Hkv, Nkv, Rv), 3: ("rows", H, Nq, Rv),
             4: ("rows", H, Nq, Rv), 5: ("stat", H, Nq, 4), 6: ("stat", H, Nq, 4), 7: ("rows", H, Nq, Rdq),
             8: ("rows", Hkv, Nkv, Rq), 9: ("rows", Hkv, Nkv, Rv)}
    blk = {t: (B_c if t in (1, 2, 8, 9) else chunk) for t in specs}
    tiles = _Tiles(specs, blk, B, line, p.sector)
    split = steps == "access"

    def rows(t: int, z: int, h: int, r0: int, r1: int, rd: bool, wr: bool) -> list[tuple]:
        return [tiles(t, z, h, c, rd, wr) for c in range(r0, min(r1, Nq), chunk)]

    def pre(pid: int, pos: int) -> Iterator[tuple]:
        z, rest = divmod(pid, H * T_p)
        h, i = divmod(rest, T_p)
        r0, r1 = i * P_rows, (i + 1) * P_rows
        a = [rows(3, z, h, r0, r1, True, False), rows(4, z, h, r0, r1, True, False),
             rows(6, z, h, r0, r1, False, True), rows(7, z, h, r0, r1, False, True)]
        if split:
            yield from (tuple(x) for x in a)
        else:
            yield tuple(a[0] + a[1])
            yield tuple(a[2] + a[3])

    def main(pid: int, pos: int) -> Iterator[tuple]:
        z, rest = divmod(pid, Hkv * T_c)
        hk, j = divmod(rest, T_c)
        k, v = tiles(1, z, hk, j * B_c, True, False), tiles(2, z, hk, j * B_c, True, False)
        yield from ((k,), (v,)) if split else ((k, v),)
        start = max(j * B_c - delta, 0) if w.causal else 0
        for h in range(hk * g, hk * g + g):
            for r0 in range(start, Nq, B_r):
                a = [rows(t, z, h, r0, r0 + B_r, True, t == 7) for t in (0, 4, 5, 6, 7)]
                if split:
                    yield from (tuple(x) for x in a)
                else:
                    yield tuple(x for y in a for x in y)
        dk, dv = tiles(8, z, hk, j * B_c, False, True), tiles(9, z, hk, j * B_c, False, True)
        yield from ((dk,), (dv,)) if split else ((dk, dv),)

    if not isinstance(order, str):
        raise InvalidParameter("order", "a sequence", "qhb, hqb or sections for the backward (two launches)")
    launches = [(launch_order(T_p, H, B, order, sec or 1), pre), (launch_order(T_c, Hkv, B, order, sec or 1), main)]
    sk = sync_skew(sync, skew)
    acc, programs = replay_launches(p, cap, slots, launches, BWD_TENSORS, partition, sk)
    return L2Result(p.name, cap, p.partitions, slots, programs, order, sec, exact, acc.traffic(),
                    acc.compulsory * p.sector, time.perf_counter() - t0, sync, sk)
