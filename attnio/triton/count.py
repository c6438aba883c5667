"""Exact global-memory traffic of Triton kernels run by Triton's interpreter (``TRITON_INTERPRET=1``).

Every global access the interpreter makes goes through four entry points of its native module: ``load``
(plain, masked, atomic-load, block-pointer and tensor-descriptor loads all end there, with the boundary mask
already applied), ``store`` (likewise), ``atomic_rmw`` and ``atomic_cas``. :func:`count_traffic` stands in front
of them for the duration of a ``with`` block (the hooks: :mod:`attnio.triton.hooks`, which also refuses any
native entry point it has not reviewed) and counts, per tensor, the *active* lanes of each access:

- a load lane is one read; a store lane one write; an rmw lane one read and one write; a cas lane one read,
  and one write where it succeeded (the old value equals the comparand, bit for bit);
- a re-read counts again (there is no cache in the model); launches accumulate;
- words are elements of the tensor's dtype; bytes are the bytes the lanes request (words x element size when the
  kernel reads the tensor in its own dtype).

Attribution: an address that is the start of an element of a named tensor goes to that tensor (the one with
the fewest elements when views share storage; q, k, v as interleaved views of one qkv tensor are told apart
exactly); otherwise to a kernel argument's element (``<kernel>.<argument>``); otherwise to the smallest
enclosing address range (named, then arguments, then their storages); an address outside all of these is an
out-of-bounds access (:class:`OutOfBounds`, as a GPU would fault), or, with ``strict=False``, ``unattributed``.
Nothing is dropped.

The count is the kernel's *requested* traffic: the two-level model's slow-memory I/O of the kernel as written,
with no L2, no sectors and no coalescing (docs/triton.md).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from attnio.core.counts import IOCount
from attnio.core.errors import AttnioError, InvalidParameter, Unsupported
from attnio.triton.hooks import (
    TritonSetupError,
    UntestedTriton,
    autotune_configs,
    interpret_enabled,
    patched,
    probe,
    replaced_configs,
    require_tested,
    triton_version,
)

#: The Triton releases whose interpreter internals this module was tested against (tests/test_triton_count.py).
#: Another release is counted only after the structural probe and the self-test pass (:func:`check_triton_version`).
TESTED_TRITON_VERSIONS: tuple[str, ...] = ("3.5.1", "3.9.0")

UNATTRIBUTED = "unattributed"
_NOTHING = object()

#: tensors with more elements than this that are contiguous are looked up by arithmetic (a dense range) instead of
#: an element table (memory: 8 bytes per element per table)
TABLE_LIMIT = 1 << 22


class OutOfBounds(AttnioError, RuntimeError):
    """An active lane addressed memory outside every tensor the launch knows (a GPU would fault)."""

    def __init__(self, kernel: str, kind: str, address: int, nearest: str, offset_elements: int, numel: int,
                 lanes: int) -> None:
        self.kernel, self.kind, self.address = kernel, kind, address
        self.tensor, self.offset, self.numel, self.lanes = nearest, offset_elements, numel, lanes
        super().__init__(
            f"kernel {kernel!r}: unmasked out-of-bounds {kind} of tensor {nearest!r} at element offset "
            f"{offset_elements} (valid offsets 0..{numel - 1}); {lanes} active lane(s) outside every tensor "
            f"of the launch (a GPU would fault)"
        )


#: Triton version -> how it was accepted in this process ("tested", or "probed" for an untested one that passed
#: the probe and the self-test)
_ACCEPTED: dict[str, str] = {}


def check_triton_version() -> str:
    """The installed Triton's version once attnio can count with it, else :class:`UntestedTriton` naming why.

    A tested version (:data:`TESTED_TRITON_VERSIONS`) must pass :func:`attnio.triton.hooks.probe`. Another
    must pass the probe and :func:`self_test` (tiny kernels with known counts); it is then counted with an
    :class:`UntestedTritonWarning`, or refused under ``ATTNIO_REQUIRE_TRITON=1``. Decided once per process."""
    try:
        version = triton_version()
    except ImportError:
        raise Unsupported("Triton is not installed: pip install -e '.[triton]'") from None
    tested = version in TESTED_TRITON_VERSIONS
    label = f"Triton {version}" + ("" if tested else f" is untested (tested versions are {', '.join(TESTED_TRITON_VERSIONS)})")
    if not tested and require_tested():
        raise UntestedTriton(f"{label}: ATTNIO_REQUIRE_TRITON=1 requires a tested one")
    if version in _ACCEPTED:
        return version
    problems = probe()
    if not problems and not tested:
        if not interpret_enabled():
            raise TritonSetupError(f"{label}: its self-test runs in Triton's interpreter; set TRITON_INTERPRET=1 "
                                   f"before importing triton")
        problems = self_test()
    if problems:
        raise UntestedTriton(f"{label}: its interpreter changed where attnio counts, so counting could miss "
                             f"traffic: {'; '.join(problems)}")
    if not tested:
        warnings.warn(UntestedTritonWarning(
            f"{label}; its interpreter passed attnio's structural probe and self-test, so kernels are counted"),
            stacklevel=3)
    _ACCEPTED[version] = "tested" if tested else "probed"
    return version


class UntestedTritonWarning(UserWarning):
    """Counting with a Triton that is not tested but passed the probe and the self-test."""


def self_test() -> list[str]:
    """Run tiny kernels with known counts (masked load and store over two launches, an atomic add, an atomic
    compare-and-swap) under the hooks; what differs from the known counts (empty: nothing). Needs
    ``TRITON_INTERPRET`` on; about a tenth of a second."""
    from attnio.triton import selftest

    def counting(**tensors: Any) -> Any:
        return _counting(tensors, strict=True)

    try:
        return selftest.run(counting)
    except Exception as e:  # a hook that no longer fits makes the kernels fail: that is a finding, not a crash
        return [f"the self-test's kernels fail under the hooks: {type(e).__name__}: {e}"]


# ---------------------------------------------------------------------------------------------------- tallies


class MissingTensor(InvalidParameter, KeyError):
    """A tensor name that was not counted (neither named nor seen): names the valid ones."""

    __str__ = Exception.__str__


class _PerTensor(dict):
    """tensor name -> count; a name that was not counted is an error naming the counted ones."""

    def __missing__(self, key: str) -> int:
        raise MissingTensor("tensor", key, f"one of the counted tensors {sorted(self)}")


@dataclass
class _Owner:
    """One attribution target: a named tensor, a kernel argument, a storage range, or ``unattributed``."""

    name: str
    elsize: int  # bytes per element of the tensor's dtype (0 for ``unattributed``)
    numel: int
    lo: int = 0  # byte range [lo, hi) of its elements (storage range for a storage owner)
    hi: int = 0
    elems: np.ndarray | None = None  # sorted distinct element start addresses (None: range only)
    named: bool = False  # a tensor named by the caller (wins over kernel arguments)
    dense: bool = False  # a contiguous tensor kept as a range: element i at lo + i·elsize
    source: tuple[Any, ...] = ()  # the tensor's key (_tensor_key) its elements were computed from; () for a range

    def signature(self) -> tuple[Any, ...]:
        """Everything an :class:`_Index` reads of this owner (the key a reused index is found by)."""
        return (self.elsize, self.numel, self.lo, self.hi, self.named, self.dense, self.source)


@dataclass
class Tally:
    """Per-tensor counts: ``reads_bytes``, ``writes_bytes``, ``reads_words``, ``writes_words``, ``touched``
    (distinct elements read or written), each a dict tensor name -> int, with totals."""

    reads_bytes: dict[str, int] = field(default_factory=_PerTensor)
    writes_bytes: dict[str, int] = field(default_factory=_PerTensor)
    reads_words: dict[str, int] = field(default_factory=_PerTensor)
    writes_words: dict[str, int] = field(default_factory=_PerTensor)
    touched: dict[str, int] = field(default_factory=_PerTensor)

    @property
    def total_bytes(self) -> int:
        return sum(self.reads_bytes.values()) + sum(self.writes_bytes.values())

    @property
    def reads_total_bytes(self) -> int:
        return sum(self.reads_bytes.values())

    @property
    def writes_total_bytes(self) -> int:
        return sum(self.writes_bytes.values())

    @property
    def unattributed_bytes(self) -> int:
        return self.reads_bytes.get(UNATTRIBUTED, 0) + self.writes_bytes.get(UNATTRIBUTED, 0)

    def io_count(self, tensor: str | None = None) -> IOCount:
        """attnio's :class:`IOCount` (words) of one tensor, or of all tensors together (``tensor=None``)."""
        if tensor is None:
            return IOCount(sum(self.reads_words.values()), sum(self.writes_words.values()))
        if tensor not in self.reads_words and tensor not in self.writes_words:
            raise InvalidParameter("tensor", tensor, f"one of the counted tensors {sorted(self.names)}")
        return IOCount(self.reads_words.get(tensor, 0), self.writes_words.get(tensor, 0))

    @property
    def names(self) -> list[str]:
        return sorted(set(self.reads_bytes) | set(self.writes_bytes))

    def as_dict(self) -> dict[str, Any]:
        return {
            "tensors": {
                n: {
                    "reads_bytes": self.reads_bytes.get(n, 0),
                    "writes_bytes": self.writes_bytes.get(n, 0),
                    "reads_words": self.reads_words.get(n, 0),
                    "writes_words": self.writes_words.get(n, 0),
                    "touched": self.touched.get(n, 0),
                }
                for n in self.names
            },
            "total_bytes": self.total_bytes,
            "unattributed_bytes": self.unattributed_bytes,
        }


class _Acc:
    """Running sums of one scope (all launches, or one kernel name): owner id -> [rb, wb, rlanes, wlanes]."""

    def __init__(self) -> None:
        self.sums: dict[int, list[int]] = {}
        self.touched: dict[int, np.ndarray] = {}  # owner id -> bool per element (element owners only)
        self.touched_other: dict[int, set[int]] = {}  # owner id -> distinct addresses (range owners)

    def add(self, oid: int, rb: int, wb: int, rl: int, wl: int) -> None:
        s = self.sums.setdefault(oid, [0, 0, 0, 0])
        s[0] += rb
        s[1] += wb
        s[2] += rl
        s[3] += wl

    def tally(self, owners: list[_Owner], named: list[str] = ()) -> Tally:
        t = Tally()
        for n in named:  # every named tensor is reported, untouched ones with zeros
            for f in (t.reads_bytes, t.writes_bytes, t.reads_words, t.writes_words, t.touched):
                f[n] = 0
        for oid, (rb, wb, rl, wl) in sorted(self.sums.items()):
            o = owners[oid]
            t.reads_bytes[o.name] = t.reads_bytes.get(o.name, 0) + rb
            t.writes_bytes[o.name] = t.writes_bytes.get(o.name, 0) + wb
            rw = rb // o.elsize if o.elsize else rl
            ww = wb // o.elsize if o.elsize else wl
            t.reads_words[o.name] = t.reads_words.get(o.name, 0) + rw
            t.writes_words[o.name] = t.writes_words.get(o.name, 0) + ww
            n = 0
            if oid in self.touched:
                n += int(self.touched[oid].sum())
            n += len(self.touched_other.get(oid, ()))
            t.touched[o.name] = t.touched.get(o.name, 0) + n
        return t


class Traffic(Tally):
    """What :func:`count_traffic` yields: the totals over every launch (the :class:`Tally` fields) and
    ``per_launch``: kernel name -> :class:`Tally` (launches of the same kernel accumulate), ``launches``:
    the kernel names in launch order. The fields are filled when the ``with`` block ends."""

    def __init__(self) -> None:
        super().__init__()
        self.per_launch: dict[str, Tally] = {}
        self.launches: list[str] = []
        #: counted tensor name -> every other name it had: each ``<kernel>.<argument>`` it was passed as, in
        #: every launch (an output passed as two pointers has both); a view with the same first element and
        #: size as a named tensor is the named tensor
        self.aliases: dict[str, list[str]] = {}
        #: ``<kernel>.<argument>`` passed a view of a named tensor -> (the named tensor, the view's shape and
        #: strides, the named tensor's shape and strides), from the argument's first launch: the layout the
        #: kernel saw (attnio.triton.formula reads the shape of a launch from it)
        self.layouts: dict[str, tuple[str, tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {}


# ---------------------------------------------------------------------------------------------------- the index


def _element_addresses(t: Any) -> np.ndarray:
    """Sorted distinct start addresses of the elements of the torch tensor ``t``."""
    itemsize = t.element_size()
    base = t.data_ptr()
    if t.numel() == 0:
        return np.zeros(0, dtype=np.int64)
    if t.is_contiguous():
        return base + np.arange(t.numel(), dtype=np.int64) * itemsize
    offs = np.zeros((), dtype=np.int64)
    for size, stride in zip(t.shape, t.stride(), strict=True):
        offs = offs[..., None] + np.arange(size, dtype=np.int64) * stride
    return np.unique(base + offs.ravel() * itemsize)


def _tensor_key(t: Any) -> tuple[Any, ...]:
    return (t.data_ptr(), tuple(t.shape), tuple(t.stride()), str(t.dtype))


#: the (store, used) pairs :func:`reuse_tables` makes active (the innermost is used)
_TABLES: list[tuple[dict[Any, Any], dict[Any, Any]]] = []


@contextlib.contextmanager
def reuse_tables(store: dict[Any, Any]) -> Iterator[None]:
    """Within the block, :func:`count_traffic` takes its element tables and address indexes from ``store``, so
    that a caller counting the same tensors again and again (attnio.triton.programs) builds them once. An entry
    is keyed by everything it is computed from (a table by its tensor's address, shape, strides and dtype; an
    index by its owners' ids and :meth:`_Owner.signature`): a reused entry equals the one a fresh block would
    build. When the block ends, ``store`` keeps the entries the block used and no others (memory: one block's
    tables, 8 bytes per element per table, and indexes, 24 bytes per element)."""
    used: dict[Any, Any] = {}
    _TABLES.append((store, used))
    try:
        yield
    finally:
        _TABLES.pop()
        store.clear()
        store.update(used)


class _Index:
    """Address -> owner for a fixed set of owners: one sorted table of element starts (exact), then ranges."""

    def __init__(self, owners: list[_Owner], ids: list[int], base: tuple[_Index, set[int]] | None = None) -> None:
        # Priority: named tensors before kernel arguments, each by fewest elements (the smallest enclosing range
        # wins), ids as tiebreak.
        elem_ids = [i for i in ids if owners[i].elems is not None]
        elem_ids.sort(key=lambda i: (not owners[i].named, owners[i].numel, i))
        if not (base is not None and self._extend(owners, elem_ids, *base)) and elem_ids:
            addrs = np.concatenate([owners[i].elems for i in elem_ids])
            prio = np.concatenate([np.full(len(owners[i].elems), p, dtype=np.int64) for p, i in enumerate(elem_ids)])
            local = np.concatenate([np.arange(len(owners[i].elems), dtype=np.int64) for i in elem_ids])
            order = np.lexsort((prio, addrs))
            addrs, prio, local = addrs[order], prio[order], local[order]
            keep = np.ones(len(addrs), dtype=bool)
            keep[1:] = addrs[1:] != addrs[:-1]
            self.addrs = addrs[keep]
            self.owner = np.asarray(elem_ids, dtype=np.int64)[prio[keep]]
            self.local = local[keep]
        elif not elem_ids:
            self.addrs = np.zeros(0, dtype=np.int64)
            self.owner = np.zeros(0, dtype=np.int64)
            self.local = np.zeros(0, dtype=np.int64)
        # range fallback: element owners' spans (smallest first), then range-only owners (storages) smallest first
        spans = [i for i in ids if owners[i].hi > owners[i].lo]
        spans.sort(key=lambda i: (owners[i].elems is None and not owners[i].dense, not owners[i].named,
                                  owners[i].hi - owners[i].lo, i))
        self.spans = spans

    def _extend(self, owners: list[_Owner], elem_ids: list[int], base: _Index, base_ids: set[int]) -> bool:
        """The element table as ``base`` (the index of the named owners ``base_ids``) with the other owners'
        elements inserted, when that is the table built from scratch: each of those owners is not named (so
        below every named one) and their elements are distinct from each other and from ``base``'s (so no
        priority decides). False (nothing set) otherwise. It costs a copy of ``base``'s table, not a sort."""
        extra = [i for i in elem_ids if i not in base_ids]
        if any(owners[i].named for i in extra) or not base_ids.issuperset(i for i in elem_ids if owners[i].named):
            return False
        if not extra:
            self.addrs, self.owner, self.local = base.addrs, base.owner, base.local
            return True
        addrs = np.concatenate([owners[i].elems for i in extra])
        order = np.argsort(addrs, kind="stable")
        addrs = addrs[order]
        if (addrs[1:] == addrs[:-1]).any():
            return False
        at = np.searchsorted(base.addrs, addrs)
        if (base.addrs[np.minimum(at, len(base.addrs) - 1)] == addrs).any() if len(base.addrs) else False:
            return False
        owner = np.concatenate([np.full(len(owners[i].elems), i, dtype=np.int64) for i in extra])[order]
        local = np.concatenate([np.arange(len(owners[i].elems), dtype=np.int64) for i in extra])[order]
        self.addrs = np.insert(base.addrs, at, addrs)
        self.owner = np.insert(base.owner, at, owner)
        self.local = np.insert(base.local, at, local)
        return True


# ---------------------------------------------------------------------------------------------------- the counter


_ACTIVE: list[_Counter] = []


class _Counter:
    def __init__(self, named: Mapping[str, Any], strict: bool) -> None:
        self.strict = strict
        #: element tables and indexes by what they are computed from: the ones built or reused by this counter
        #: (``used``) and the ones it may reuse (``store``, under :func:`reuse_tables`)
        self.store, self.used = _TABLES[-1] if _TABLES else ({}, {})
        self.owners: list[_Owner] = [_Owner(UNATTRIBUTED, 0, 0)]
        self.named_ids: list[int] = []
        self.by_key: dict[tuple[Any, ...], int] = {}
        self.same_as_named: dict[tuple[int, int, int], int] = {}  # (first address, numel, elsize) -> named owner
        self.aliases: dict[int, list[str]] = {}  # owner id -> the kernel arguments it was passed as
        self.named_layout: dict[int, tuple[tuple[int, ...], tuple[int, ...]]] = {}  # named owner -> shape, strides
        self.views: dict[str, tuple[int, tuple[int, ...], tuple[int, ...]]] = {}  # Traffic.layouts, by owner id
        for name, t in named.items():
            oid = self._new_tensor_owner(name, t, named=True)
            self.named_ids.append(oid)
            self.by_key.setdefault(_tensor_key(t), oid)
            self.same_as_named.setdefault((t.data_ptr(), t.numel(), t.element_size()), oid)
            self.named_layout[oid] = (tuple(t.shape), tuple(t.stride()))
        self.storage_owner: dict[tuple[int, int], int] = {}
        self.total = _Acc()
        self.per_kernel: dict[str, _Acc] = {}
        self.launches: list[str] = []
        self.kernel = "<outside a launch>"
        self.outside = _Acc()  # accesses outside any launch (none are expected): reported only if any
        self.acc = self.outside
        self.index = self._index(tuple(self.named_ids))
        #: when a list: every access's (owner ids, addresses, reads, writes) is appended (attnio.triton.scale)
        self.record: list[tuple[np.ndarray, np.ndarray, bool, bool]] | None = None
        #: when set: called with every access's (owner ids, addresses, itemsize, reads, writes, write lanes or None)
        #: (attnio.triton.trace); None costs one test per access
        self.trace: Any = None

    def _new_tensor_owner(self, name: str, t: Any, named: bool = False) -> int:
        elsize = t.element_size()
        if t.is_contiguous() and t.numel() > TABLE_LIMIT:
            lo = t.data_ptr()
            self.owners.append(_Owner(name, elsize, t.numel(), lo, lo + t.numel() * elsize, None, named, dense=True))
            return len(self.owners) - 1
        key = _tensor_key(t)
        elems = self._table(("elements", key), lambda: _element_addresses(t))
        lo = int(elems[0]) if len(elems) else 0
        hi = int(elems[-1]) + elsize if len(elems) else 0
        self.owners.append(_Owner(name, elsize, len(elems), lo, hi, elems, named, source=key))
        return len(self.owners) - 1

    def _table(self, key: tuple[Any, ...], build: Any) -> Any:
        got = self.used.get(key)
        if got is None:
            got = self.store.get(key)
            self.used[key] = got = build() if got is None else got
        return got

    def _index(self, ids: tuple[int, ...]) -> _Index:
        """The index of owners ``ids``: a launch's (the named tensors', then its arguments') is the named
        tensors' index with the arguments' elements inserted where that is exact (:meth:`_Index._extend`)."""
        key = ("index", tuple((i, self.owners[i].signature()) for i in ids))
        named = tuple(self.named_ids)
        if ids[:len(named)] != named or len(ids) == len(named):
            return self._table(key, lambda: _Index(self.owners, list(ids)))
        base = self._index(named)
        return self._table(key, lambda: _Index(self.owners, list(ids), (base, set(named))))

    # -- launches
    def begin_launch(self, kernel: str, arg_tensors: list[tuple[str, Any]]) -> None:
        ids = list(self.named_ids)
        for arg, t in arg_tensors:
            _require_cpu(f"{kernel}.{arg}", t)
            key = _tensor_key(t)
            oid = self.by_key.get(key)
            if oid is None:
                oid = self.by_key[key] = self._new_tensor_owner(f"{kernel}.{arg}", t)
            alias = self.same_as_named.get((t.data_ptr(), t.numel(), t.element_size()), oid)
            names = self.aliases.setdefault(alias, [])
            if f"{kernel}.{arg}" not in names:
                names.append(f"{kernel}.{arg}")
            if alias in self.named_layout:
                self.views.setdefault(f"{kernel}.{arg}", (alias, tuple(t.shape), tuple(t.stride())))
            if oid not in ids:
                ids.append(oid)
            st = t.untyped_storage()
            skey = (st.data_ptr(), st.nbytes())
            sid = self.storage_owner.get(skey)
            if sid is None:
                sname = self.owners[oid].name
                self.owners.append(_Owner(sname, t.element_size(), 0, skey[0], skey[0] + skey[1], None))
                sid = self.storage_owner[skey] = len(self.owners) - 1
            if sid not in ids:
                ids.append(sid)
        self.index = self._index(tuple(ids))
        self.kernel = kernel
        self.launches.append(kernel)
        self.acc = self.per_kernel.setdefault(kernel, _Acc())

    def end_launch(self) -> None:
        self.kernel = "<outside a launch>"
        self.acc = self.outside
        self.index = self._index(tuple(self.named_ids))

    # -- accesses
    def classify(self, addrs: np.ndarray, kind: str) -> tuple[np.ndarray, np.ndarray, bool]:
        """owner id per address, the element-table position (-1 where the owner is a range), and whether every
        address hit the element table."""
        idx = self.index
        pos = np.searchsorted(idx.addrs, addrs)
        np.minimum(pos, max(len(idx.addrs) - 1, 0), out=pos)
        if len(idx.addrs):
            hit = idx.addrs[pos] == addrs
        else:
            hit = np.zeros(addrs.shape, dtype=bool)
        if hit.all():
            return idx.owner[pos], pos, True
        owner = np.where(hit, idx.owner[pos] if len(idx.addrs) else 0, -1)
        pos = np.where(hit, pos, -1)
        for oid in idx.spans:
            o = self.owners[oid]
            sel = (owner < 0) & (addrs >= o.lo) & (addrs < o.hi)
            owner[sel] = oid
        miss = owner < 0
        if miss.any():
            if self.strict:
                self._out_of_bounds(addrs[miss], kind)
            owner[miss] = 0
        return owner, pos, False

    def _out_of_bounds(self, bad: np.ndarray, kind: str) -> None:
        a = int(bad[0])
        best = None
        for oid in self.index.spans:
            o = self.owners[oid]
            if o.elems is None and not o.dense:
                continue
            dist = o.lo - a if a < o.lo else a - (o.hi - 1)
            if best is None or dist < best[0]:
                best = (dist, o)
        if best is None:
            raise OutOfBounds(self.kernel, kind, a, "<no tensor>", a, 0, len(bad))
        o = best[1]
        raise OutOfBounds(self.kernel, kind, a, o.name, (a - o.lo) // o.elsize, o.numel, len(bad))

    def access(self, ptrs: np.ndarray, mask: np.ndarray | None, itemsize: int, reads: bool, writes: bool,
               write_mask: np.ndarray | None = None) -> None:
        p = np.asarray(ptrs)
        if p.dtype.itemsize == 8 and p.dtype.kind == "u":
            p = p.view(np.int64)  # addresses < 2**63: a view, no copy
        if mask is not None:
            if not isinstance(mask, np.ndarray):  # Triton 3.5 passes a block pointer's mask as a memoryview
                mask = np.asarray(mask)
            m = mask if (mask.shape == p.shape and mask.dtype == np.bool_) else np.broadcast_to(np.asarray(mask, dtype=bool), p.shape)
            addrs = p[m].astype(np.int64, copy=False)
        else:
            m = None
            addrs = p.ravel().astype(np.int64, copy=False)
        if addrs.size == 0:
            return
        kind = "write" if writes and not reads else "read"
        owner, pos, all_hit = self.classify(addrs, kind)
        wsel = None
        if write_mask is not None:
            wm = np.broadcast_to(np.asarray(write_mask, dtype=bool), p.shape)
            wsel = wm[m] if m is not None else wm.ravel()
        if self.record is not None:
            self.record.append((owner, addrs.copy(), reads, writes))  # every active lane (a cas: tried, not only won)
        if self.trace is not None:
            self.trace(owner, addrs, itemsize, reads, writes, wsel)
        acc_k = self.acc
        first = int(owner[0])
        if (owner == first).all():
            groups = [(first, None)]
        else:
            groups = [(int(o), owner == o) for o in np.unique(owner)]
        for oid, sel in groups:
            lanes = addrs.size if sel is None else int(sel.sum())
            rl = lanes if reads else 0
            if writes:
                wl = lanes if wsel is None else int(wsel.sum() if sel is None else (wsel & sel).sum())
            else:
                wl = 0
            # per kernel only: the totals are the sums (and, for touched, the unions) over kernels (result())
            acc_k.add(oid, rl * itemsize, wl * itemsize, rl, wl)
            self._touch(acc_k, oid, addrs if sel is None else addrs[sel], pos if sel is None else pos[sel], all_hit)

    def _touch(self, acc: _Acc, oid: int, addrs: np.ndarray, pos: np.ndarray, all_hit: bool = False) -> None:
        o = self.owners[oid]
        if o.dense:
            bits = acc.touched.get(oid)
            if bits is None:
                bits = acc.touched[oid] = np.zeros(o.numel, dtype=bool)
            bits[(addrs - o.lo) // o.elsize] = True
        elif o.elems is not None and (all_hit or (pos >= 0).all()):
            bits = acc.touched.get(oid)
            if bits is None:
                bits = acc.touched[oid] = np.zeros(o.numel, dtype=bool)
            bits[self.index.local[pos]] = True
        else:
            acc.touched_other.setdefault(oid, set()).update(addrs.tolist())

    def result(self, into: Traffic) -> None:
        named = [self.owners[i].name for i in self.named_ids]
        if self.outside.sums:
            self.per_kernel["<outside a launch>"] = self.outside
        for acc in self.per_kernel.values():
            for oid, (rb, wb, rl, wl) in acc.sums.items():
                self.total.add(oid, rb, wb, rl, wl)
            for oid, bits in acc.touched.items():
                if oid in self.total.touched:
                    self.total.touched[oid] |= bits
                else:
                    self.total.touched[oid] = bits.copy()
            for oid, addrs in acc.touched_other.items():
                self.total.touched_other.setdefault(oid, set()).update(addrs)
        total = self.total.tally(self.owners, named)
        for f in ("reads_bytes", "writes_bytes", "reads_words", "writes_words", "touched"):
            setattr(into, f, getattr(total, f))
        into.per_launch = {k: acc.tally(self.owners) for k, acc in self.per_kernel.items()}
        into.launches = list(self.launches)
        into.layouts = {a: (self.owners[oid].name, shape, stride, *self.named_layout[oid])
                        for a, (oid, shape, stride) in self.views.items()}
        into.aliases = {}
        for oid, names in self.aliases.items():
            own = self.owners[oid].name
            others = [n for n in names if n != own]
            if others:
                into.aliases.setdefault(own, []).extend(n for n in others if n not in into.aliases[own])


def _require_cpu(name: str, t: Any) -> None:
    dev = getattr(t, "device", None)
    if dev is not None and getattr(dev, "type", "cpu") != "cpu":
        raise InvalidParameter(name, f"a tensor on {dev}", "a CPU tensor (the interpreter counts on the CPU)")


@contextlib.contextmanager
def count_traffic(*, strict: bool = True, **tensors: Any) -> Iterator[Traffic]:
    """Count every global access of the Triton kernels launched inside the ``with`` block.

    ``tensors``: name -> torch CPU tensor, the names the counts are reported under. ``strict``: an active
    access outside every named tensor and kernel argument raises :class:`OutOfBounds` (default) or, when
    False, is counted as ``unattributed``. The yielded :class:`Traffic` is filled when the block ends
    (also when it raises, with what was counted up to then).

    Needs ``TRITON_INTERPRET=1`` in the environment before Triton and the kernels are imported, and a Triton
    attnio can count with (:func:`check_triton_version`). While the block runs, Triton's interpreter classes are
    patched process-wide (``attnio.triton.hooks.patched``): counting is not thread-safe, and blocks cannot nest.
    """
    if not interpret_enabled():
        raise TritonSetupError(
            "TRITON_INTERPRET=1 is not set: set it in the environment before importing triton and the kernels "
            "(counting runs the kernels in Triton's interpreter)"
        )
    check_triton_version()
    with _counting(tensors, strict) as traffic:
        yield traffic


@contextlib.contextmanager
def _counting(tensors: dict[str, Any], strict: bool) -> Iterator[Traffic]:
    """:func:`count_traffic` without the version check (the self-test runs under it)."""
    if _ACTIVE:
        raise TritonSetupError("count_traffic blocks cannot be nested")
    for name, t in tensors.items():
        if not (hasattr(t, "data_ptr") and hasattr(t, "untyped_storage")):
            raise InvalidParameter(name, type(t).__name__, "a torch tensor")
        _require_cpu(name, t)
    counter = _Counter(tensors, strict)
    traffic = Traffic()
    _ACTIVE.append(counter)
    try:
        with patched(counter):
            yield traffic
    finally:
        _ACTIVE.pop()
        counter.result(traffic)


@contextlib.contextmanager
def pin_config(kernel: Any, index: int | None = None, **meta: Any) -> Iterator[Any]:
    """Pin an autotuned kernel (``@triton.autotune``) to one of its configs for the ``with`` block, so that
    a count is deterministic: by position (``index``) or by its meta-parameters (``BLOCK_M=64, ...``)."""
    configs = autotune_configs(kernel)
    if configs is None:
        raise InvalidParameter("kernel", getattr(kernel, "__name__", kernel), "an autotuned kernel (@triton.autotune)")
    if index is not None:
        if not 0 <= index < len(configs):
            raise InvalidParameter("index", index, f"0..{len(configs) - 1} (the kernel's configs)")
        chosen = configs[index]
    else:
        launch_opts = ("num_warps", "num_stages", "num_ctas", "maxnreg")

        def matches(c: Any) -> bool:
            return all((getattr(c, k, None) if k in launch_opts else c.kwargs.get(k, _NOTHING)) == v
                       for k, v in meta.items())

        found = [c for c in configs if matches(c)]
        # configs that differ only in launch options (num_warps, num_stages, ...) run the same kernel in the
        # interpreter: any of them counts the same, the first is taken
        if not found or any(c.kwargs != found[0].kwargs for c in found):
            raise InvalidParameter(
                "config", meta,
                f"meta-parameters matching exactly one kernel variant among {[c.kwargs for c in configs]}",
            )
        chosen = found[0]
    with replaced_configs(kernel, [chosen]):
        yield chosen
