"""An L2 replay of attnio's FlashAttention-2 forward at tile granularity: requested bytes, 32-byte sectors,
L2 hits and the DRAM bytes left after the L2 (docs/dram.md).

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
write-back; a miss reads the tile's sectors from DRAM (sectored L2); every O and L tile reaches DRAM once
(written once, written back when evicted or at the end). Exact for line-level LRU when tiles are atomic: row
bytes (d·bytes per element) a multiple of the 128-byte line and L's B_r·4 and N_q·4 bytes too, so no line is shared by two
tiles (:mod:`attnio.algorithms.l2_cache`); otherwise a line shared by two tiles is counted in each
(``L2Result.exact`` is False). Not modelled: set associativity, the hash of addresses to L2 slices, replacement
other than LRU, the Infinity Cache / MALL behind an AMD L2, prefetching, and timing (steps advance in lockstep).

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
from collections.abc import Sequence
from dataclasses import dataclass, field

from attnio.algorithms.l2_cache import TileLRU
from attnio.bounds.dram import L2Preset, preset
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int
from attnio.core.workload import Workload

TENSORS = ("Q", "K", "V", "O", "L")
ORDERS = ("qhb", "hqb", "sections")
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


@dataclass
class TensorTraffic:
    """One tensor's bytes: requested by the kernel, in sectors touched, lines accessed and hit in L2, and DRAM."""

    requested_bytes: int = 0
    sectors: int = 0
    lines: int = 0
    hit_lines: int = 0
    dram_read_bytes: int = 0
    dram_write_bytes: int = 0
    sector_bytes: int = 32

    @property
    def sector_efficiency(self) -> float:
        """Requested bytes over the bytes of the sectors touched (1.0: no byte of a sector wasted)."""
        return self.requested_bytes / (self.sectors * self.sector_bytes) if self.sectors else 1.0

    def as_dict(self) -> dict:
        return {"requested_bytes": self.requested_bytes, "sectors": self.sectors, "sector_bytes": self.sectors *
                self.sector_bytes, "sector_efficiency": self.sector_efficiency, "lines": self.lines,
                "hit_lines": self.hit_lines, "dram_read_bytes": self.dram_read_bytes,
                "dram_write_bytes": self.dram_write_bytes}


@dataclass
class L2Result:
    """The replay's answer, per tensor and in all; ``compulsory_bytes``: what an L2 of unbounded size would read
    (each tile's sectors once per partition) plus the writes."""

    preset: str
    l2_lines_per_partition: int
    partitions: int
    slots_per_partition: int
    programs: int
    order: str
    section_heads: int | None
    exact: bool
    tensors: dict[str, TensorTraffic] = field(default_factory=dict)
    compulsory_read_bytes: int = 0
    seconds: float = 0.0

    def _sum(self, attr: str) -> int:
        return sum(getattr(t, attr) for t in self.tensors.values())

    @property
    def requested_bytes(self) -> int:
        return self._sum("requested_bytes")

    @property
    def sector_bytes(self) -> int:
        return sum(t.sectors * t.sector_bytes for t in self.tensors.values())

    @property
    def dram_read_bytes(self) -> int:
        return self._sum("dram_read_bytes")

    @property
    def dram_write_bytes(self) -> int:
        return self._sum("dram_write_bytes")

    @property
    def dram_bytes(self) -> int:
        return self.dram_read_bytes + self.dram_write_bytes

    @property
    def compulsory_bytes(self) -> int:
        return self.compulsory_read_bytes + self.dram_write_bytes

    @property
    def read_lines(self) -> int:
        return sum(t.lines for n, t in self.tensors.items() if n in ("Q", "K", "V"))

    @property
    def miss_lines(self) -> int:
        return self.read_lines - self._sum("hit_lines")

    @property
    def hit_rate(self) -> float:
        """Read-line hits over read-line accesses (writes allocate but are not counted as hits or misses)."""
        return 1 - self.miss_lines / self.read_lines if self.read_lines else 0.0

    def as_dict(self) -> dict:
        return {"preset": self.preset, "l2_lines_per_partition": self.l2_lines_per_partition,
                "partitions": self.partitions, "slots_per_partition": self.slots_per_partition,
                "programs": self.programs, "order": self.order, "section_heads": self.section_heads,
                "exact": self.exact, "requested_bytes": self.requested_bytes, "sector_bytes": self.sector_bytes,
                "dram_read_bytes": self.dram_read_bytes, "dram_write_bytes": self.dram_write_bytes,
                "dram_bytes": self.dram_bytes, "compulsory_bytes": self.compulsory_bytes,
                "hit_rate": self.hit_rate, "miss_lines": self.miss_lines, "seconds": self.seconds,
                "tensors": {n: t.as_dict() for n, t in self.tensors.items()}}


def _row_runs(offsets: range, R: int, unit: int) -> int:
    """Units (lines or sectors) touched by rows of ``R`` bytes at ``offsets``, each row counted on its own."""
    if R % unit == 0 and offsets.start % unit == 0 and offsets.step % unit == 0:
        return len(offsets) * (R // unit)
    return sum(-(-(o + R) // unit) - o // unit for o in offsets)


def _launch(w: Workload, T_r: int, order: str | Sequence[int], section: int, q_reverse: bool) -> list[int]:
    """Program ids (q block fastest: id = (z·H + h)·T_r + i) in launch order."""
    H, B = w.heads, w.batch
    n = B * H * T_r
    qs = range(T_r - 1, -1, -1) if q_reverse else range(T_r)
    if not isinstance(order, str):
        ids = list(order)
        if sorted(ids) != list(range(n)):
            raise InvalidParameter("order", f"a sequence of {len(ids)} ids", f"a permutation of 0..{n - 1} (every "
                                   f"program of the grid of {B} x {H} x {T_r} exactly once)")
        return ids
    if order == "qhb":
        return [(z * H + h) * T_r + i for z in range(B) for h in range(H) for i in qs]
    if order == "hqb":
        return [(z * H + h) * T_r + i for z in range(B) for i in qs for h in range(H)]
    return [(z * H + h) * T_r + i for z in range(B) for s0 in range(0, H, section) for i in qs
            for h in range(s0, min(s0 + section, H))]


def replay(
    w: Workload, gpu: str | L2Preset, *, B_r: int = 128, B_c: int = 128, order: str | Sequence[int] = "qhb",
    section_heads: int | None = None, q_reverse: bool = False, sawtooth: bool = False, occupancy: int = 1,
    sms: int | None = None, l2_bytes: int | None = None, partition: int | None = None,
) -> L2Result:
    """Replay the FA-2 forward of ``w`` through the L2 of ``gpu`` (a name of :data:`attnio.bounds.dram.L2_PRESETS`
    or a preset); ``sms`` and ``l2_bytes`` (per partition) override the preset's; ``section_heads`` (order
    ``"sections"``; None: FlashAttention-3's rule :func:`fa3_section_heads`); ``sawtooth``: a program of an odd
    wave (launch position // slots) reads its K/V blocks last first (arXiv 2601.16032's alternating traversal);
    ``partition``: replay that L2 partition only (the result covers its programs only; where the launch order
    deals the partitions symmetric shares, P times it is the whole GPU)."""
    t0 = time.perf_counter()
    p = gpu if isinstance(gpu, L2Preset) else preset(gpu)
    if not isinstance(w, Workload):
        raise InvalidParameter("workload", w, "an attnio.core.workload.Workload (Workload.build(...))")
    B_r, B_c, occupancy = check_int("B_r", B_r, min=1), check_int("B_c", B_c, min=1), check_int("occupancy", occupancy, min=1)
    if isinstance(order, str):
        check_choice("order", order, list(ORDERS))
    per_part_sms = p.sms_per_partition if sms is None else check_int("sms", sms, min=1)
    l2 = p.l2_bytes_per_partition if l2_bytes is None else check_int("l2_bytes", l2_bytes, min=1)
    if l2 < p.line:
        raise InvalidParameter("l2_bytes", l2, f"at least one {p.line}-byte line")
    cap = l2 // p.line
    bpw = w.bytes_per_word
    H, Hkv, g, Nq, Nkv, B = w.heads, w.kv_heads, w.groups, w.Nq, w.Nkv, w.batch
    T_r, T_c = -(-Nq // B_r), -(-Nkv // B_c)
    sec = None
    if order == "sections":
        sec = fa3_section_heads(Nkv, w.d, bpw, H) if section_heads is None else check_int("section_heads", section_heads, min=1)
    ids = _launch(w, T_r, order, sec or 1, q_reverse)
    line, sector = p.line, p.sector
    Rq, Rv = w.d * bpw, w.dv * bpw
    exact = Rq % line == 0 and Rv % line == 0 and (B_r * 4) % line == 0 and (Nq * 4) % line == 0  # L tiles too

    stats = {t: TensorTraffic(sector_bytes=sector) for t in TENSORS}
    tiles: dict[int, tuple[int, int, int]] = {}  # key -> (tensor index, lines, sectors)

    def tile(t: int, z: int, h: int, blk: int) -> tuple[int, int]:
        """(key, lines) of tile ``blk`` of tensor TENSORS[t] for sequence z, head h (K/V: the K/V head)."""
        key = ((t * B + z) * H + h) * max(T_r, T_c) + blk
        got = tiles.get(key)
        if got is None:
            if t == 4:  # L: (batch, heads, Nq) fp32, one contiguous run per tile
                r0, r1 = blk * B_r, min((blk + 1) * B_r, Nq)
                offs = range(((z * H + h) * Nq + r0) * 4, ((z * H + h) * Nq + r0) * 4 + 1)
                R = (r1 - r0) * 4
            else:
                heads_t, N, R, Bt = (Hkv, Nkv, Rq if t == 1 else Rv, B_c) if t in (1, 2) else (H, Nq, Rq if t == 0 else Rv, B_r)
                r0, r1 = blk * Bt, min((blk + 1) * Bt, N)
                stride = heads_t * R
                start = ((z * N + r0) * heads_t + h) * R
                offs = range(start, start + (r1 - r0) * stride, stride)
            got = tiles[key] = (t, _row_runs(offs, R, line), _row_runs(offs, R, sector))
        return key, got[1]

    def kv_range(i: int) -> tuple[int, int]:
        if not w.causal:
            return 0, T_c
        last = min((i + 1) * B_r, Nq) - 1 + Nkv - Nq
        return 0, (last // B_c + 1 if last >= 0 else 0)

    P = p.partitions
    slots = per_part_sms * occupancy
    lines_acc = [0] * 5
    hit_acc = [0] * 5
    miss_sectors = [0] * 5
    req = [0] * 5
    sec_acc = [0] * 5
    compulsory = 0
    rows_q = [min((i + 1) * B_r, Nq) - i * B_r for i in range(T_r)]
    rows_kv = [min((j + 1) * B_c, Nkv) - j * B_c for j in range(T_c)]
    if partition is not None:
        check_int("partition", partition, min=0, max=P - 1)
    for part in range(P) if partition is None else (partition,):
        queue = ids[part::P]
        access = TileLRU(cap).access
        seen: set[int] = set()
        # slot state: [program position in queue, step, z, h, hk, i, lo, hi, reverse]
        state: list[list[int] | None] = [None] * slots
        nxt = 0

        def start(pos: int, queue: list[int] = queue) -> list[int]:
            pid = queue[pos]
            z, rest = divmod(pid, H * T_r)
            h, i = divmod(rest, T_r)
            lo, hi = kv_range(i)
            rev = int(sawtooth and (pos // slots) % 2 == 1)
            return [0, z, h, h // g, i, lo, hi, rev]

        for s in range(min(slots, len(queue))):
            state[s] = start(s)
        nxt = min(slots, len(queue))
        busy = nxt
        while busy:
            for s in range(slots):
                st = state[s]
                if st is None:
                    continue
                step, z, h, hk, i, lo, hi, rev = st
                n = hi - lo
                if step == 0:
                    acc = ((0, z, h, i, rows_q[i] * Rq),)
                elif step <= n:
                    j = hi - step if rev else lo + step - 1
                    acc = ((1, z, hk, j, rows_kv[j] * Rq), (2, z, hk, j, rows_kv[j] * Rv))
                else:
                    acc = ((3, z, h, i, rows_q[i] * Rv), (4, z, h, i, rows_q[i] * 4))
                for t, tz, th, blk, nbytes in acc:
                    key, nl = tile(t, tz, th, blk)
                    req[t] += nbytes
                    lines_acc[t] += nl
                    sec_acc[t] += tiles[key][2]
                    if access(key, nl):
                        if t < 3:
                            hit_acc[t] += nl
                    elif t < 3:
                        miss_sectors[t] += tiles[key][2]
                        if key not in seen:
                            seen.add(key)
                            compulsory += tiles[key][2] * sector
                if step > n:
                    if nxt < len(queue):
                        state[s] = start(nxt)
                        nxt += 1
                    else:
                        state[s] = None
                        busy -= 1
                else:
                    st[0] = step + 1
    for t, name in enumerate(TENSORS):
        ts = stats[name]
        ts.requested_bytes, ts.sectors, ts.lines = req[t], sec_acc[t], lines_acc[t]
        if t < 3:
            ts.hit_lines, ts.dram_read_bytes = hit_acc[t], miss_sectors[t] * sector
        else:
            ts.dram_write_bytes = sec_acc[t] * sector  # written once each; write-back sends the sectors written
    return L2Result(p.name, cap, P, slots, len(ids) if partition is None else len(ids[partition::P]), order if isinstance(order, str) else "explicit", sec, exact,
                    stats, compulsory, time.perf_counter() - t0)
