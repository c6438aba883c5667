"""Run chosen programs of a launcher's launches under counting: per program, its traffic per tensor and, when
asked, a digest of its accesses (what :mod:`attnio.triton.scale` compares and extrapolates).

:class:`Runner` holds a launcher and its inputs (made once). :meth:`Runner.run` calls the launcher under
:func:`attnio.triton.count_traffic` and :func:`attnio.triton.hooks.programs_only`: launch ℓ (0, 1, … in launch
order) runs only the programs ``want[ℓ]`` names (grid indices (x, y, z)); the others do nothing (they write
nothing either: a later launch reads what the skipped programs would have written as it was, so a kernel whose
*addresses* depend on values another launch writes is not counted right this way). It returns every launch's
kernel name and grid, and per program run ``[read bytes, written bytes, read words, written words]`` per tensor.

An access digest (programs in ``digest``) is, per (tensor, "r"/"w"), the list of that program's accesses in
order, each as (lowest address, lanes, a 128-bit BLAKE2 hash of the addresses minus the lowest): two programs
whose digests agree access for access, with one base shift per (tensor, direction), read and write the same
multisets of addresses up to that shift (:func:`shift_equal`; equal hashes stand for equal offset patterns).
A tensor is one allocation, not one name: distinct tensors that share a name (a quantization kernel's
``Output`` allocated once for Q's int8 copy and once for K's, which GQA then indexes by different heads) are
digested apart, the first to be accessed in the program under its name, the next as "name #2", and so on, so
each gets its own base shift.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnio.core.errors import AttnioError
from attnio.triton.launcher import Launcher

Index = tuple[int, int, int]
Key = tuple[int, Index]  # (launch, program index)


class LauncherFailed(AttnioError, RuntimeError):
    """The launcher raised while a fast count ran it (the message names the exception)."""


@dataclass
class Ran:
    """What one :meth:`Runner.run` saw: launches (kernel name, grid) in order, per program run its counts
    (tensor -> [rb, wb, rw, ww]) and, for the programs asked, its access digest."""

    launches: list[tuple[str, Index]] = field(default_factory=list)
    counts: dict[Key, dict[str, list[int]]] = field(default_factory=dict)
    digests: dict[Key, dict[tuple[str, str], list[tuple[int, int, bytes]]]] = field(default_factory=dict)


class _Digest:
    """Stands in for the counter's ``record`` list: each access appended is digested at once (not kept)."""

    def __init__(self, owners: list[Any]) -> None:
        self.owners = owners
        self.out: dict[tuple[str, str], list[tuple[int, int, bytes]]] = {}
        self.labels: dict[int, str] = {}  # owner id -> its name, "name #2", ... (module docstring)

    def append(self, item: tuple[np.ndarray, np.ndarray, bool, bool]) -> None:
        owner, addrs, reads, writes = item
        first = int(owner[0])
        groups = [(first, addrs)] if (owner == first).all() else [(int(o), addrs[owner == o]) for o in np.unique(owner)]
        for oid, a in groups:
            base = int(a.min())
            h = hashlib.blake2b((a - base).tobytes(), digest_size=16).digest()
            name = self.labels.get(oid)
            if name is None:
                name = self.owners[oid].name
                same = sum(1 for x in self.labels if self.owners[x].name == name)
                name = self.labels[oid] = name if not same else f"{name} #{same + 1}"
            for kind, on in (("r", reads), ("w", writes)):
                if on:
                    self.out.setdefault((name, kind), []).append((base, len(a), h))


def shift_equal(a: dict[tuple[str, str], list[tuple[int, int, bytes]]],
                b: dict[tuple[str, str], list[tuple[int, int, bytes]]]) -> str | None:
    """None when digests ``a`` and ``b`` agree access for access up to one base shift per (tensor, direction),
    else why (one line)."""
    if set(a) != set(b):
        return f"different tensors touched: {sorted(a)} vs {sorted(b)}"
    for k in sorted(a):
        x, y = a[k], b[k]
        if len(x) != len(y):
            return f"{k[0]} ({k[1]}): {len(x)} vs {len(y)} accesses"
        shift = y[0][0] - x[0][0] if x else 0
        for n, ((bx, lx, hx), (by, ly, hy)) in enumerate(zip(x, y, strict=True)):
            if lx != ly:
                return f"{k[0]} ({k[1]}): access {n} has {lx} vs {ly} lanes"
            if hx != hy or by - bx != shift:
                return f"{k[0]} ({k[1]}): access {n}'s addresses differ by more than one base shift"
    return None


class _NoAccess:
    """The counter of a run with no program: launches pass, an access is an error (none can happen)."""

    def begin_launch(self, kernel: str, arg_tensors: list[tuple[str, Any]]) -> None:
        pass

    def end_launch(self) -> None:
        pass

    def access(self, *args: Any, **kwargs: Any) -> None:
        raise AttnioError("an access in a run with no program (attnio.triton.programs)")

    classify = access


class Runner:
    """A launcher with its inputs (attnio input -> value; ``counted``: the tensors named in the counts)."""

    def __init__(self, lau: Launcher, values: dict[str, Any], counted: dict[str, Any]) -> None:
        self.lau, self.values, self.counted = lau, values, counted
        self.calls = 0
        #: the counter's element tables and address indexes, built on the first counted run and reused by the
        #: next ones (attnio.triton.count.reuse_tables: keyed by what they are computed from)
        self.tables: dict[Any, Any] = {}

    def run(self, want: dict[int, set[Index]] | None = None, digest: set[Key] | frozenset[Key] = frozenset()) -> Ran:
        """Call the launcher once, running only the programs ``want`` names per launch (module docstring)."""
        from attnio.triton import count as count_mod
        from attnio.triton.hooks import patched, programs_only

        want = want or {}
        ran = Ran()
        state: dict[str, Any] = {"launch": -1}

        def launch(name: str, grid: Index | None) -> None:
            if grid is None:
                state["launch"] += 1
            else:
                ran.launches.append((name, grid))

        def select(idx: Index) -> bool:
            return tuple(idx) in want.get(state["launch"], ())

        def around(idx: Index, begin: bool) -> None:
            c = count_mod._ACTIVE[-1]
            key = (state["launch"], tuple(idx))
            if begin:
                state["before"] = {k: list(v) for k, v in c.acc.sums.items()}
                c.record = _Digest(c.owners) if key in digest else None
                return
            before = state["before"]
            per: dict[str, list[int]] = {}
            for oid, s in c.acc.sums.items():
                b = before.get(oid, [0, 0, 0, 0])
                o = c.owners[oid]
                d = [s[j] - b[j] for j in range(4)]
                if d == [0, 0, 0, 0]:
                    continue
                words = [d[2], d[3]] if not o.elsize else [d[0] // o.elsize, d[1] // o.elsize]
                row = per.setdefault(o.name, [0, 0, 0, 0])
                for j, x in enumerate((d[0], d[1], *words)):
                    row[j] += x
            ran.counts[key] = per
            if c.record is not None:
                ran.digests[key] = c.record.out
                c.record = None

        self.calls += 1
        # no program to run: the grids only, under the hooks (a GPU-compiled or unpinned autotuned kernel still
        # refused) with a counter that builds no address index (no access can happen)
        counting = count_mod.count_traffic(**self.counted) if want else patched(_NoAccess())
        # zero inputs: a kernel's exp and matmul may overflow; the values are not what is counted
        with count_mod.reuse_tables(self.tables), counting, programs_only(select, around, launch), \
                np.errstate(all="ignore"):
            try:
                self.lau.call(self.values)
            except AttnioError:
                raise
            except Exception as e:  # the user's launcher failed: one clear error naming it
                raise LauncherFailed(f"launcher {self.lau.name!r} raised {type(e).__name__}: {e}") from e
        return ran
