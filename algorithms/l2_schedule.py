"""The L2 replay's scheduler and accounting: one path for the tile-level FA-2 replays (:mod:`attnio.algorithms.l2`)
and the replay of a kernel's captured per-program trace (:mod:`attnio.algorithms.l2_trace`), docs/dram.md.

A *program* (thread block) is a sequence of *steps*; a step is a sequence of *accesses*, each an
:data:`Access` tuple ``(tensor, key, lines, mask, sectors, read_bytes, write_bytes, reads, writes)``: the tensor's
index, the key of an atomic block of lines (:class:`attnio.algorithms.l2_cache.SectoredLRU`), its lines, the
sectors requested (a bit mask over the block's sectors, and their count), the bytes the kernel requested, and
whether the access reads and/or writes. The scheduler::

    ids = launch_order(X, Y, Z, order)            # program ids, x fastest: (z·Y + y)·X + x
    for each L2 partition p (program k of the order goes to partition k mod P):
        slots = SMs per partition × occupancy; each slot starts the partition's next program in order
        sync "drift": slot s of S waits round(skew · s / S · L) rounds before its first program's first step
                      (L: that program's steps); "lockstep": no slot waits
        while a slot is busy:                     # one round: every busy slot performs one step, in slot order
            for each busy slot: perform its program's current step (every access through partition p's cache);
                                when that was the program's last step, the slot takes the next program
                                (whose first step runs in the next round)

Drift: the rounds model no timing, so lockstep makes programs that read the same tile read it in the same round,
the most sharing co-resident programs can have (the replay's DRAM bytes are then a lower end). With ``sync="drift"``
the first wave of each launch starts staggered, slot s (of S) ``round(skew · s / S · L)`` rounds late, L the
length in steps of the program it runs; a slot that frees takes the next program at once, as a GPU's dispatcher
does, so the stagger persists (equal lengths) or reshuffles (unequal ones). ``skew`` = 1 (the *drift-max* end)
spreads the starts evenly over a whole program: sharers of a tile read it at evenly spaced times, and the gap
between consecutive sharers' reads is the largest that S evenly spread programs allow for every pair at once.
[lockstep, drift-max] is the replay's bracket (docs/dram.md#lockstep-and-drift).

Launches run one after another (a stream): launch n + 1 starts when every program of launch n has ended; each
partition's cache persists across launches and is flushed (dirty sectors written back) at the end.

Worked example: two programs of 2 steps on one slot, each reading the same 4-line block: the second program's
read hits.

>>> from attnio.algorithms.l2_cache import SectoredLRU
>>> step = ((0, "blk", 4, 0xFFFF, 16, 512, 0, True, False),)
>>> acc = Accounting(["X"], 32)
>>> run_partition([0, 1], 1, lambda pid, pos: [step, step], SectoredLRU(8), acc, {})
>>> t = acc.traffic()["X"]
>>> t.read_lines, t.hit_lines, t.dram_read_bytes, t.requested_bytes
(16, 12, 512, 2048)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field

from attnio.algorithms.l2_cache import SectoredLRU
from attnio.bounds.dram import L2Preset, preset
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int

ORDERS = ("qhb", "hqb", "sections")
#: how resident programs advance: ``"lockstep"`` (all start together, the most sharing) or ``"drift"`` (the first
#: wave's starts staggered over ``skew`` × a program's length; docs/dram.md#lockstep-and-drift)
SYNCS = ("lockstep", "drift")

#: (tensor index, block key, lines, sector mask, sectors, read bytes, write bytes, reads, writes)
Access = tuple[int, Hashable, int, int, int, int, int, bool, bool]


def launch_order(X: int, Y: int, Z: int, order: str | Sequence[int], section: int = 1,
                 q_reverse: bool = False) -> list[int]:
    """Program ids (x fastest: id = (z·Y + y)·X + x; x the Q block, y the head, z the sequence in FA-2's grid) in
    launch order: ``"qhb"`` (the grid order: x fastest, then y, then z), ``"hqb"`` (y fastest, then x, then z),
    ``"sections"`` (y in sections of ``section``, y fastest inside a section, then x, then section, then z), or an
    explicit permutation of the ids. ``q_reverse``: x runs last first.

    >>> launch_order(2, 2, 1, "qhb"), launch_order(2, 2, 1, "hqb"), launch_order(2, 2, 1, "qhb", q_reverse=True)
    ([0, 1, 2, 3], [0, 2, 1, 3], [1, 0, 3, 2])
    """
    n = X * Y * Z
    qs = range(X - 1, -1, -1) if q_reverse else range(X)
    if not isinstance(order, str):
        ids = list(order)
        if sorted(ids) != list(range(n)):
            raise InvalidParameter("order", f"a sequence of {len(ids)} ids", f"a permutation of 0..{n - 1} (every "
                                   f"program of the grid (x, y, z) = ({X}, {Y}, {Z}) exactly once)")
        return ids
    if order == "qhb":
        return [(z * Y + h) * X + i for z in range(Z) for h in range(Y) for i in qs]
    if order == "hqb":
        return [(z * Y + h) * X + i for z in range(Z) for i in qs for h in range(Y)]
    if order == "sections":
        return [(z * Y + h) * X + i for z in range(Z) for s0 in range(0, Y, section) for i in qs
                for h in range(s0, min(s0 + section, Y))]
    raise InvalidParameter("order", order, "one of " + ", ".join(ORDERS) + " or a permutation of the program ids")


@dataclass
class TensorTraffic:
    """One tensor's bytes: requested by the kernel (reads, writes), in sectors touched, lines accessed, read lines
    and those that hit in L2, and DRAM bytes (sectors read on a miss, dirty sectors written back)."""

    requested_read_bytes: int = 0
    requested_write_bytes: int = 0
    sectors: int = 0
    lines: int = 0
    hit_lines: int = 0
    dram_read_bytes: int = 0
    dram_write_bytes: int = 0
    sector_bytes: int = 32
    read_lines: int = 0
    read_sectors: int = 0

    @property
    def requested_bytes(self) -> int:
        return self.requested_read_bytes + self.requested_write_bytes

    @property
    def miss_lines(self) -> int:
        return self.read_lines - self.hit_lines

    @property
    def hit_rate(self) -> float:
        """Read-line hits over read-line accesses (0.0 for a tensor that is only written): a line whose tag is held
        hits even when the sectors asked for come from DRAM (the line-based rate of this replay)."""
        return self.hit_lines / self.read_lines if self.read_lines else 0.0

    @property
    def sector_hit_rate(self) -> float:
        """Read sectors found valid over read sectors requested (0.0 for a tensor that is only written): the
        sector-based rate, a sector fetched from DRAM a miss whatever its line (docs/dram.md#the-replay)."""
        return 1 - self.dram_read_bytes / (self.read_sectors * self.sector_bytes) if self.read_sectors else 0.0

    @property
    def dram_bytes(self) -> int:
        return self.dram_read_bytes + self.dram_write_bytes

    @property
    def sector_efficiency(self) -> float:
        """Requested bytes over the bytes of the sectors touched (1.0: no byte of a sector wasted)."""
        return self.requested_bytes / (self.sectors * self.sector_bytes) if self.sectors else 1.0

    def as_dict(self) -> dict:
        return {"requested_bytes": self.requested_bytes, "requested_read_bytes": self.requested_read_bytes,
                "requested_write_bytes": self.requested_write_bytes, "sectors": self.sectors,
                "sector_bytes": self.sectors * self.sector_bytes, "sector_efficiency": self.sector_efficiency,
                "lines": self.lines, "read_lines": self.read_lines, "hit_lines": self.hit_lines,
                "miss_lines": self.miss_lines, "hit_rate": self.hit_rate, "read_sectors": self.read_sectors,
                "sector_hit_rate": self.sector_hit_rate, "dram_read_bytes": self.dram_read_bytes,
                "dram_write_bytes": self.dram_write_bytes, "dram_bytes": self.dram_bytes}


@dataclass
class L2Result:
    """The replay's answer, per tensor and in all; ``compulsory_bytes``: what an L2 of unbounded size would move
    (each sector read from DRAM the first time a partition reads it, unless that partition wrote it first) plus
    the writes; ``sync`` and ``skew``: how resident programs advanced (module docstring)."""

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
    sync: str = "lockstep"
    skew: float = 0.0

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
        return self._sum("read_lines")

    @property
    def miss_lines(self) -> int:
        return self.read_lines - self._sum("hit_lines")

    @property
    def hit_rate(self) -> float:
        """Read-line hits over read-line accesses (writes allocate but are not counted as hits or misses)."""
        return 1 - self.miss_lines / self.read_lines if self.read_lines else 0.0

    @property
    def sector_hit_rate(self) -> float:
        """Read sectors found valid over read sectors requested (:attr:`TensorTraffic.sector_hit_rate`)."""
        rs = sum(t.read_sectors * t.sector_bytes for t in self.tensors.values())
        return 1 - self.dram_read_bytes / rs if rs else 0.0

    def as_dict(self) -> dict:
        return {"preset": self.preset, "l2_lines_per_partition": self.l2_lines_per_partition,
                "partitions": self.partitions, "slots_per_partition": self.slots_per_partition,
                "programs": self.programs, "order": self.order, "section_heads": self.section_heads,
                "exact": self.exact, "requested_bytes": self.requested_bytes, "sector_bytes": self.sector_bytes,
                "dram_read_bytes": self.dram_read_bytes, "dram_write_bytes": self.dram_write_bytes,
                "dram_bytes": self.dram_bytes, "compulsory_bytes": self.compulsory_bytes,
                "hit_rate": self.hit_rate, "sector_hit_rate": self.sector_hit_rate, "miss_lines": self.miss_lines,
                "seconds": self.seconds,
                "sync": self.sync, "skew": self.skew,
                "tensors": {n: t.as_dict() for n, t in self.tensors.items()}}


class Accounting:
    """Per-tensor running sums of one replay (every partition, every launch)."""

    def __init__(self, names: Sequence[str], sector: int) -> None:
        self.names = list(names)
        self.sector = sector
        n = len(self.names)
        self.rbytes, self.wbytes, self.lines, self.rlines = [0] * n, [0] * n, [0] * n, [0] * n
        self.hits, self.secs, self.fetched, self.written = [0] * n, [0] * n, [0] * n, [0] * n
        self.rsecs = [0] * n  # sectors requested by reads (an atomic's once)
        self.compulsory = 0  # sectors

    def add_written_back(self, cache: object) -> None:
        """Add a flushed cache's written-back sectors (``SectoredLRU.written_back``)."""
        for t, n in cache.written_back.items():  # type: ignore[attr-defined]
            self.written[t] += n

    def traffic(self) -> dict[str, TensorTraffic]:
        s = self.sector
        return {name: TensorTraffic(self.rbytes[t], self.wbytes[t], self.secs[t], self.lines[t], self.hits[t],
                                    self.fetched[t] * s, self.written[t] * s, s, self.rlines[t], self.rsecs[t])
                for t, name in enumerate(self.names)}


def run_partition(queue: Sequence[int], slots: int, program: Callable[[int, int], Iterable[Sequence[Access]]],
                  cache: object, acc: Accounting, seen: dict, skew: float = 0.0) -> None:
    """Run the programs ``queue`` (ids, in launch order) on ``slots`` slots of one partition, in rounds
    (module docstring), through ``cache`` (a :class:`~attnio.algorithms.l2_cache.SectoredLRU`), adding to
    ``acc``; ``program(id, position in queue)`` gives a program's steps; ``seen``: block key -> sectors the
    partition touched so far (for the compulsory reads), kept across launches; ``skew``: 0 lockstep, > 0 the
    first wave's slot s waits round(skew · s / slots · L) rounds, L its program's steps (module docstring).
    Slots past the ``len(queue)``-th never start a program (each start takes one), so only the first
    min(slots, len(queue)) are kept: the same rounds, in memory and time bounded by the programs, not ``slots``."""
    access = cache.access  # type: ignore[attr-defined]
    rbytes, wbytes, lines, rlines, hits, secs, fetched, rsecs = (acc.rbytes, acc.wbytes, acc.lines, acc.rlines,
                                                                 acc.hits, acc.secs, acc.fetched, acc.rsecs)
    n = len(queue)
    nxt = 0
    used = min(slots, n)  # the stagger below still divides by ``slots``
    its: list = [None] * used
    cur: list = [None] * used

    def take(s: int) -> object:
        """The first step of the next non-empty program of the queue, started on slot ``s`` (None: queue done)."""
        nonlocal nxt
        while nxt < n:
            it = iter(program(queue[nxt], nxt))
            nxt += 1
            first = next(it, None)
            if first is not None:
                its[s] = it
                return first
        return None

    busy = 0
    wait = [0] * used
    for s in range(used):
        cur[s] = take(s)
        busy += cur[s] is not None
        if skew and cur[s] is not None:
            rest = list(its[s])  # the program's length decides its slot's delay
            its[s] = iter(rest)
            wait[s] = round(skew * s * (len(rest) + 1) / slots)
    compulsory = 0
    while busy:
        for s in range(used):
            step = cur[s]
            if step is None:
                continue
            if wait[s]:
                wait[s] -= 1
                continue
            for t, key, nl, mask, nsec, rb, wb, rd, wr in step:
                rbytes[t] += rb
                wbytes[t] += wb
                lines[t] += nl
                secs[t] += nsec * (rd + wr)  # an atomic's sectors go both ways, as its requested bytes do
                hit, new = access(key, t, nl, mask, wr)
                if rd:
                    rlines[t] += nl
                    rsecs[t] += nsec
                    if hit:
                        hits[t] += nl
                if new:  # sectors that were not valid: fetched by a read; the first touches are among them
                    if rd:
                        fetched[t] += new.bit_count()
                    prev = seen.get(key, 0)
                    first = new & ~prev
                    if first:
                        seen[key] = prev | first
                        if rd:
                            compulsory += first.bit_count()
            step = next(its[s], None)
            if step is None:
                step = take(s)
                if step is None:
                    busy -= 1
            cur[s] = step
    acc.compulsory += compulsory


def machine(gpu: str | L2Preset, occupancy: int, sms: int | None, l2_bytes: int | None) -> tuple[L2Preset, int, int]:
    """(preset, slots per partition = SMs per partition × ``occupancy``, cache lines per partition); ``sms`` and
    ``l2_bytes`` (per partition) override the preset's. Bad input: InvalidParameter naming it."""
    p = gpu if isinstance(gpu, L2Preset) else preset(gpu)
    occupancy = check_int("occupancy", occupancy, min=1)
    per_part_sms = p.sms_per_partition if sms is None else check_int("sms", sms, min=1)
    l2 = p.l2_bytes_per_partition if l2_bytes is None else check_int("l2_bytes", l2_bytes, min=1)
    if l2 < p.line:
        raise InvalidParameter("l2_bytes", l2, f"at least one {p.line}-byte line")
    return p, per_part_sms * occupancy, l2 // p.line


def sync_skew(sync: str, skew: float) -> float:
    """The scheduler's skew for ``sync`` (``"lockstep"``: 0; ``"drift"``: ``skew``, a fraction in (0, 1] of a
    program's length). Bad input: InvalidParameter naming it.

    >>> sync_skew("lockstep", 1.0), sync_skew("drift", 0.5)
    (0.0, 0.5)
    """
    check_choice("sync", sync, list(SYNCS))
    if isinstance(skew, bool) or not isinstance(skew, int | float) or not 0 < skew <= 1:
        raise InvalidParameter("skew", skew, "a fraction in (0, 1] of a program's length")
    return 0.0 if sync == "lockstep" else float(skew)


def replay_launches(p: L2Preset, cap: int, slots: int, launches: Sequence[tuple[list[int], Callable]],
                    names: Sequence[str], partition: int | None, skew: float = 0.0) -> tuple[Accounting, int]:
    """Every launch (program ids in launch order, program factory) on every partition (or ``partition`` only),
    one cache of ``cap`` lines per partition across the launches, flushed at the end; ``skew`` as
    :func:`run_partition`, for each launch; (accounting, programs replayed)."""
    P = p.partitions
    if partition is not None:
        check_int("partition", partition, min=0, max=P - 1)
    acc = Accounting(names, p.sector)
    programs = 0
    for part in range(P) if partition is None else (partition,):
        cache, seen = SectoredLRU(cap), {}
        for ids, program in launches:
            queue = ids[part::P]
            programs += len(queue)
            run_partition(queue, slots, program, cache, acc, seen, skew)
        cache.flush()
        acc.add_written_back(cache)
    return acc, programs
