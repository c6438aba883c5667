"""A P-device machine: P ranks, each running the same schedule on what it alone holds, joined by links; every word
a rank sends or receives is counted, per rank and per link (src → dst).

A schedule is written once, as the code of one rank against a :class:`Comm` (its rank, P, and four ways to move
arrays); :class:`Cluster` runs P ranks as threads over an in-process communicator, and
:mod:`attnio.algorithms.cp_gloo` runs the same code as P processes over torch.distributed (gloo). A rank computes
only on its own arguments and what its communicator hands it.

The machine models the **link level only**: each rank's memory is unbounded and its local attention's own
two-level I/O is not counted here (docs/distributed.md#model). The moves, each counted where it happens:

- :meth:`Comm.ring_shift`: send x to rank r + k, receive from rank r − k (mod P; k = 1: the ring): |x| each way;
- :meth:`Comm.all_gather`: the ring algorithm, P − 1 shifts: (P − 1)·|x| sent and received, on the ring's links;
- :meth:`Comm.reduce_scatter`: the ring algorithm, P − 1 shifts of a partial sum: (P − 1)·|x|/P each way;
- :meth:`Comm.all_to_all`: slice j of x to rank j directly: (P − 1)·|x|/P each way, |x|/P on each link;
- :meth:`Comm.group_all_to_all`: the same within groups of s consecutive ranks: (s − 1)·|x|/s each way.

>>> import numpy as np
>>> def rank(c):
...     return c.all_gather(np.full((1, 2), float(c.rank)), axis=0)[:, 0].tolist()
>>> cl = Cluster(3)
>>> cl.run(rank)
[[0.0, 1.0, 2.0], [0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]
>>> cl.sent, cl.received, cl.links[(0, 1)], (0, 2) in cl.links
([4, 4, 4], [4, 4, 4], 4, False)
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from attnio.core.errors import AttnioError, InvalidParameter


class Comm:
    """One rank's view of the machine. Subclasses supply :meth:`_exchange` and :meth:`_all_to_all` (the two primitive
    moves) and may replace the collectives by their own (the gloo communicator calls gloo's); the counts are kept
    here: ``sent``, ``received`` (words) and ``links`` (dst → words sent on the link rank → dst)."""

    def __init__(self, rank: int, P: int) -> None:
        self.rank, self.P = rank, P
        self.sent = 0
        self.received = 0
        self.links: dict[int, int] = {}

    def _count(self, dst: int, src: int, words_out: int, words_in: int) -> None:
        self.sent += words_out
        self.received += words_in
        if words_out:
            self.links[dst] = self.links.get(dst, 0) + words_out

    def ring_shift(self, x: np.ndarray, k: int = 1) -> np.ndarray:
        """Send ``x`` to rank r + k and return what rank r − k sent (same shape); every rank shifts by the same k."""
        if k % self.P == 0:
            return x
        return self.exchange(x, (self.rank + k) % self.P, (self.rank - k) % self.P)

    def exchange(self, x: np.ndarray, dst: int, src: int) -> np.ndarray:
        """Send ``x`` to ``dst`` and return what ``src`` sent; every rank exchanges at once, the destinations a
        permutation of the ranks (each rank's ``src`` is the rank whose ``dst`` it is)."""
        y = self._exchange(np.ascontiguousarray(x), dst, src)
        self._count(dst, src, x.size, y.size)
        return y

    def group_all_to_all(self, x: np.ndarray, split_axis: int, cat_axis: int, size: int) -> np.ndarray:
        """:meth:`all_to_all` within this rank's group of ``size`` consecutive ranks (size ∣ P), as size − 1 rounds of
        :meth:`exchange` (round k: slice (i + k) mod size to the group's rank i + k): (size − 1)·|x|/size each way."""
        base, i = self.rank - self.rank % size, self.rank % size
        slices = np.split(x, size, axis=split_axis)
        got: list[Any] = [None] * size
        got[i] = slices[i]
        for k in range(1, size):
            got[(i - k) % size] = self.exchange(slices[(i + k) % size], base + (i + k) % size, base + (i - k) % size)
        return np.concatenate(got, axis=cat_axis)

    def all_gather(self, x: np.ndarray, axis: int) -> np.ndarray:
        """Every rank's ``x`` concatenated in rank order along ``axis`` (ring algorithm)."""
        parts: list[Any] = [None] * self.P
        parts[self.rank] = cur = x
        for s in range(1, self.P):
            cur = self.ring_shift(cur)
            parts[(self.rank - s) % self.P] = cur
        return np.concatenate(parts, axis=axis)

    def reduce_scatter(self, x: np.ndarray, axis: int) -> np.ndarray:
        """The sum over ranks of chunk r of ``x`` (cut into P equal chunks along ``axis``), on rank r (ring
        algorithm: at shift s a rank adds its chunk r − s − 1 to the partial it received and passes it on)."""
        chunks = np.split(x, self.P, axis=axis)
        acc = chunks[(self.rank - 1) % self.P].copy()
        for s in range(1, self.P):
            acc = self.ring_shift(acc) + chunks[(self.rank - s - 1) % self.P]
        return acc

    def group_all_gather(self, x: np.ndarray, axis: int, members: list[int]) -> np.ndarray:
        """:meth:`all_gather` within ``members`` (this rank among them; every group the same size, all running at
        once): a ring over the members, (|members| − 1)·|x| each way."""
        q, i = len(members), members.index(self.rank)
        parts: list[Any] = [None] * q
        parts[i] = cur = x
        for s in range(1, q):
            cur = self.exchange(cur, members[(i + 1) % q], members[(i - 1) % q])
            parts[(i - s) % q] = cur
        return np.concatenate(parts, axis=axis)

    def group_reduce_scatter(self, xs: tuple[np.ndarray, ...], axis: int, members: list[int], combine) -> tuple[np.ndarray, ...]:
        """Ring reduce-scatter within ``members`` of the arrays ``xs`` (each cut into |members| chunks along ``axis``),
        folded by ``combine(received, own)`` (a sum, or a logsumexp merge of partial outputs): member i ends with
        chunk i folded over the group; (|members| − 1)·Σ|x|/|members| each way."""
        q, i = len(members), members.index(self.rank)
        chunks = [np.split(x, q, axis=axis) for x in xs]
        acc = tuple(c[(i - 1) % q] for c in chunks)
        for s in range(1, q):
            got = tuple(self.exchange(a, members[(i + 1) % q], members[(i - 1) % q]) for a in acc)
            acc = combine(got, tuple(c[(i - s - 1) % q] for c in chunks))
        return acc

    def all_to_all(self, x: np.ndarray, split_axis: int, cat_axis: int) -> np.ndarray:
        """Slice j of ``x`` (along ``split_axis``) goes to rank j; the slices received, in rank order, are
        concatenated along ``cat_axis``."""
        slices = [np.ascontiguousarray(s) for s in np.split(x, self.P, axis=split_axis)]
        got = self._all_to_all(slices)
        for j in range(self.P):
            if j != self.rank:
                self._count(j, j, slices[j].size, got[j].size)
        return np.concatenate(got, axis=cat_axis)

    def _exchange(self, x: np.ndarray, dst: int, src: int) -> np.ndarray:
        raise NotImplementedError

    def _all_to_all(self, slices: list[np.ndarray]) -> list[np.ndarray]:
        raise NotImplementedError


class _ThreadComm(Comm):
    def __init__(self, rank: int, cluster: Cluster) -> None:
        super().__init__(rank, cluster.P)
        self._c = cluster

    def _exchange(self, x: np.ndarray, dst: int, src: int) -> np.ndarray:
        c = self._c
        c._box[(self.rank, dst)] = x.copy()
        c._wait()
        y = c._box.pop((src, self.rank))
        c._wait()
        return y

    def _all_to_all(self, slices: list[np.ndarray]) -> list[np.ndarray]:
        c = self._c
        for j, s in enumerate(slices):
            c._box[(self.rank, j)] = s.copy()
        c._wait()
        got = [c._box.pop((j, self.rank)) for j in range(self.P)]
        c._wait()
        return got


class Cluster:
    """P ranks as threads over an in-process communicator. After :meth:`run`: ``sent[r]``, ``received[r]`` (words)
    and ``links[(src, dst)]``. A rank that fails breaks the barrier, so the others stop too (no hang); the first
    error is raised."""

    def __init__(self, P: int, timeout_s: float = 600.0) -> None:
        if not isinstance(P, int) or P < 1:
            raise InvalidParameter("P", P, "an integer >= 1")
        self.P = P
        self._timeout = timeout_s
        self._box: dict[tuple[int, int], np.ndarray] = {}
        self._barrier = threading.Barrier(P)
        self.sent = [0] * P
        self.received = [0] * P
        self.links: dict[tuple[int, int], int] = {}

    def _wait(self) -> None:
        self._barrier.wait(self._timeout)

    def run(self, fn: Callable[[Comm], Any]) -> list[Any]:
        """Run ``fn(comm)`` on every rank; return the P results in rank order."""
        comms = [_ThreadComm(r, self) for r in range(self.P)]
        out: list[Any] = [None] * self.P
        errors: list[BaseException] = []

        def body(r: int) -> None:
            try:
                out[r] = fn(comms[r])
            except BaseException as e:  # noqa: BLE001 (re-raised below, in the caller's thread)
                errors.append(e)
                self._barrier.abort()

        threads = [threading.Thread(target=body, args=(r,), daemon=True) for r in range(self.P)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(self._timeout)
        if any(t.is_alive() for t in threads):
            self._barrier.abort()
            raise AttnioError(f"a rank of the {self.P}-device machine did not finish within {self._timeout} s")
        real = [e for e in errors if not isinstance(e, threading.BrokenBarrierError)]
        if real or errors:
            raise (real or errors)[0]
        for r, c in enumerate(comms):
            self.sent[r] += c.sent
            self.received[r] += c.received
            for dst, w in c.links.items():
                self.links[(r, dst)] = self.links.get((r, dst), 0) + w
        return out
