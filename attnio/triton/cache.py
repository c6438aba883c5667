"""The count cache of the gate's and the report's Triton configurations (``attnio.triton.gate.measure``):
counting attnio's seven configurations in the interpreter takes about 17 s, and a count depends only on the
kernel's source, the workload, Triton's version and attnio's own counting code.

Key: (the source hash of the kernel's modules, the configuration's key, ``triton.__version__``, the hash of
attnio's code that makes a result: ``attnio.core``, ``attnio.bounds``, ``attnio.algorithms``, ``attnio.triton``).
Results are kept per process and on disk, one JSON file per key under ``$XDG_CACHE_HOME/attnio/triton`` (else
``~/.cache/attnio/triton``), written atomically; ``ATTNIO_CACHE=0`` turns the disk cache off. Only configurations that
name their sources (attnio's own, ``GateKernel.sources``) are cached: a user's launcher may call kernels from
any file, so its configurations are always counted.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import importlib.util
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from attnio.triton.entry import GateKernel

#: packages whose code makes a cached result (counting, checking, bounds, schedules, kernels)
CODE_PACKAGES = ("attnio.core", "attnio.bounds", "attnio.algorithms", "attnio.triton")
FORMAT = 1

_MEMORY: dict[str, Any] = {}


def on_disk() -> bool:
    """Whether results are read from and written to disk (``ATTNIO_CACHE=0``: no)."""
    return os.environ.get("ATTNIO_CACHE", "") != "0"


def directory() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "attnio" / "triton"


def _file_of(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    return Path(spec.origin) if spec is not None and spec.origin else None


def source_hash(modules: tuple[str, ...]) -> str | None:
    """sha256 of the source text of ``modules`` (found without importing them), or None when one is missing."""
    h = hashlib.sha256()
    for m in modules:
        f = _file_of(m)
        if f is None or not f.is_file():
            return None
        h.update(m.encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


@functools.cache
def code_hash() -> str:
    """sha256 of every Python file of :data:`CODE_PACKAGES` (once per process)."""
    h = hashlib.sha256()
    for pkg in CODE_PACKAGES:
        spec = importlib.util.find_spec(pkg)
        for folder in spec.submodule_search_locations or ():
            for f in sorted(Path(folder).rglob("*.py")):
                h.update(str(f.relative_to(folder)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()


def key(entry: GateKernel) -> str | None:
    """The cache key of ``entry``, or None when it is not cached (no sources, or Triton missing)."""
    if not entry.sources:
        return None
    src = source_hash(entry.sources)
    try:
        from attnio.triton.hooks import triton_version

        version = triton_version()
    except ImportError:
        return None
    if src is None:
        return None
    text = json.dumps([FORMAT, src, entry.key, version, code_hash()])
    return hashlib.sha256(text.encode()).hexdigest()


def _encode(r: Any) -> dict[str, Any] | None:
    """A check result as JSON data (None when a field is not JSON data: then it is not written)."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(r):
        v = getattr(r, f.name)
        if f.name == "workload":
            continue
        if f.name == "traffic":
            v = {"totals": v.as_dict(), "per_launch": {k: t.as_dict() for k, t in v.per_launch.items()},
                 "launches": list(v.launches)}
        out[f.name] = v
    try:
        json.dumps(out)
    except (TypeError, ValueError):
        return None
    return out


def _tally(cls: Any, d: dict[str, Any]) -> Any:
    from attnio.triton.count import _PerTensor

    t = cls()
    for f in ("reads_bytes", "writes_bytes", "reads_words", "writes_words", "touched"):
        setattr(t, f, _PerTensor({n: v[f] for n, v in d["tensors"].items()}))
    return t


def _decode(d: dict[str, Any], entry: GateKernel) -> Any:
    from attnio.triton.check import KernelCheck
    from attnio.triton.count import Tally, Traffic

    names = {f.name for f in dataclasses.fields(KernelCheck)}
    if set(d) | {"workload"} != names:
        return None  # written by another version of KernelCheck
    tr = d["traffic"]
    traffic = _tally(Traffic, tr["totals"])
    traffic.per_launch = {k: _tally(Tally, t) for k, t in tr["per_launch"].items()}
    traffic.launches = list(tr["launches"])
    kw = dict(d, workload=entry.build(), traffic=traffic)
    kw["best_per_array"] = {k: tuple(v) for k, v in d["best_per_array"].items()}
    return KernelCheck(**kw)


def lookup(entry: GateKernel) -> Any:
    """The cached check result of ``entry`` (memory, then disk), or None."""
    k = key(entry)
    if k is None:
        return None
    if k in _MEMORY:
        return _MEMORY[k]
    if not on_disk():
        return None
    try:
        data = json.loads((directory() / f"{k}.json").read_text())
        r = _decode(data, entry)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if r is not None:
        _MEMORY[k] = r
    return r


def store(entry: GateKernel, result: Any) -> None:
    """Keep ``result`` for ``entry`` in this process and on disk (atomically; a disk error only skips it)."""
    k = key(entry)
    if k is None:
        return
    _MEMORY[k] = result
    data = _encode(result) if on_disk() else None
    if data is None:
        return
    tmp = None
    try:
        d = directory()
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=f".{k}.", suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            json.dump(data, fh)
        os.replace(tmp, d / f"{k}.json")
        tmp = None
    except OSError:
        return
    finally:
        if tmp is not None:
            Path(tmp).unlink(missing_ok=True)
