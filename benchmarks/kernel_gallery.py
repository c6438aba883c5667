"""A gallery of third-party Triton attention kernels, counted as they ship.

Each kernel of :data:`GALLERY` is fetched at run time by its published package name and pinned version
(``pip download --no-deps NAME==VERSION``), unpacked into a cache outside the repository (``--cache``, default
``~/.cache/attnio/gallery``) and loaded from its own file, unmodified: no third-party code is kept in this
repository. Its module is imported under its package name with empty stand-ins for the parent packages (whose
``__init__`` files would import the rest of the project), so the file's sibling imports load the real sibling
files; imports the file needs but this machine lacks are fake modules, listed per kernel and counted in its
adapter's lines. The adapter (a launcher in attnio's convention, ``attnio.triton.check``) calls the shipped entry
point; it is at most 10 lines with its fake modules.

For every kernel and shape, ``attnio.triton.check`` counts every byte in Triton's interpreter and the gallery
writes, per tensor, the counted read and written bytes, the compulsory bytes (Q, K, V read once, O written once),
and the formula derived here from the kernel's loop structure (:attr:`Kernel.formula`, Python expressions in
bytes over the shape's variables), which must equal the count exactly (✓), with the best proved lower bound and
attnio's best schedule for the workload and each ratio, and what the kernel moves beyond the compulsory bytes.
Exits 1 when a formula misses a count (✗) or a kernel fails (and then writes nothing); otherwise the command
line, the package versions and the results go to ``docs/gallery.md`` and ``reports/gallery.json`` (both written
atomically; not with ``--only`` or ``--no-write``).

    .venv/bin/python benchmarks/kernel_gallery.py [--only NAME ...] [--cache DIR] [--no-write] [--formula [--no-solver]]

``--formula``: for each kernel with a :class:`Fit`, ``attnio.triton.formula.fit`` through its adapter (every
count by :func:`check_shape`), the held-out check, the fitted form against the hand formula at every gallery,
fit and held-out shape it describes (a disagreement fails the run), z3's least c of formula ≤ c × best lower
bound for 1024 ≤ N ≤ 2²⁰ at d = 128 (anything else reads "not proved"), and, where :attr:`Fit.metadata` names
a kernel, its generated ``launch_metadata`` against a real launch's counted bytes (:func:`metadata_check`). A fit
that fails is written with its reason (the byte fields that miss, the term the basis lacks), never a form.

Shape variables of the formulas: B (batch), H, Hkv, g = H/Hkv, Nq, Nkv, d, dv, causal, e (bytes per element of
q), L (list of sequence lengths of a packed variable-length batch; T = sum(L) tokens), P (page size), W = 4
(bytes of an fp32/int32 word), cdiv, and the kernel's own constants (:attr:`Kernel.consts`).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.util
import json
import math
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import types
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("TRITON_INTERPRET", "1")

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("ATTNIO_GALLERY_CACHE", Path.home() / ".cache" / "attnio" / "gallery"))
#: fast-memory words for attnio's best schedule and the bound (one GPU SM's 64K fp32 registers)
M_WORDS = 65536
#: what every compulsory tensor's role moves: inputs read once, the output written once
COMPULSORY = {"Q": "r", "K": "r", "V": "r", "O": "w"}


@dataclass
class Fit:
    """How ``--formula`` fits a kernel's closed form with ``attnio.triton.formula.fit`` through its adapter: the
    pinned ``block`` (B_r, B_c), the mask, the basis (``widths``, ``lengths``; units Z·H, Z·H_kv), candidate
    ``points`` per axis where the kernel takes only some shapes (see ``formula.design``), the ``held_out`` shapes
    (fit's keywords; none a design point), ``packed``: the fit's batch Z becomes a packed batch of Z sequences
    of N_q = N_kv tokens (the kernel takes cu_seqlens), and ``metadata``: the kernel whose ``launch_metadata`` is
    generated and tested against a real launch's counted bytes; ``page_size``: K and V in a paged cache;
    ``splits``: the kernel's pinned key splits S (the length NE); ``missing``: the term the basis lacks, for a
    kernel whose fit is expected to fail (said beside its error)."""

    block: tuple[int, int]
    causal: bool
    lengths: tuple[str, ...]
    widths: tuple[str, ...] = ("1", "d", "d_v")
    points: dict[str, list[tuple[int, ...]]] = field(default_factory=dict)
    held_out: tuple[dict[str, int], ...] = ()
    packed: bool = False
    metadata: str | None = None
    page_size: int | None = None  # K and V in a paged cache of this page size (the kernel takes one)
    splits: int | None = None  # the kernel's key splits S (length NE: the non-empty splits)
    missing: str = ""  # where the fit is expected to fail: the term the basis lacks (shown beside the error)


@dataclass
class Kernel:
    """One gallery entry: ``package==version``'s ``files`` (paths inside the unpacked distribution, loaded as
    ``mods[0..]``), the shipped entry point ``function`` the ``adapter`` calls, ``fakes`` (module -> attributes)
    for imports the file needs and this machine lacks, ``pins`` (kernel attribute -> config) for autotuned
    kernels, the ``shapes`` (Workload.build keywords, plus ``seqlens`` for a packed batch or ``page_size``),
    ``formula`` (tensor -> (read bytes, written bytes) as Python expressions), ``waste`` (what moves beyond the
    compulsory bytes), ``output`` (the tensor holding the output: ``o``, or ``<kernel>.<argument>`` when the
    entry point allocates it)."""

    name: str
    project: str
    package: str
    version: str
    files: tuple[str, ...]
    function: str
    adapter: Callable[..., Any]
    shapes: tuple[dict[str, Any], ...]
    formula: dict[str, tuple[str, str]]
    waste: str
    consts: dict[str, Any] = field(default_factory=dict)
    fakes: dict[str, dict[str, Any]] = field(default_factory=dict)
    fake_lines: int = 0
    pins: dict[str, dict[str, Any]] = field(default_factory=dict)
    output: str = "o"
    roles: dict[str, str] = field(default_factory=dict)
    args: dict[str, str] | None = None
    note: str = ""  # what else was found (outputs over tolerance and why)
    compulsory: dict[str, str] | None = None  # tensor -> compulsory bytes, where the defaults do not apply
    fake_gpu: int | None = None  # run under attnio.triton.fake_gpu(arch=...) (132 SMs) when the launcher asks the GPU
    fit: Fit | None = None  # how ``--formula`` fits its closed form (None: not fitted)

    @property
    def adapter_lines(self) -> int:
        """Source lines of the adapter (its def and body, without its docstring) plus the lines of its fake
        modules."""
        import ast
        import inspect
        import textwrap

        fn = ast.parse(textwrap.dedent(inspect.getsource(self.adapter))).body[0]
        lines = fn.end_lineno - fn.lineno + 1
        first = fn.body[0]
        if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
            lines -= first.end_lineno - first.lineno + 1
        return lines + self.fake_lines


# ---------------------------------------------------------------- fetching and loading


def fetch(package: str, version: str, cache: Path = CACHE) -> Path:
    """The unpacked distribution of ``package==version`` under ``cache`` (downloaded with ``pip download --no-deps``
    on first use; a wheel is unzipped, an sdist untarred)."""
    dest = cache / "src" / f"{package}-{version}"
    if (dest / ".complete").is_file():
        return dest
    dl = cache / "dl"
    dl.mkdir(parents=True, exist_ok=True)
    prefix = f"{package.replace('-', '_').lower()}_{version}"

    def archives() -> list[Path]:  # NAME-VERSION-... .whl, NAME-VERSION.tar.gz or .zip (names normalized)
        return [p for p in dl.iterdir() if p.suffix in (".whl", ".gz", ".zip")
                and p.name.replace("-", "_").lower().startswith(prefix)
                and p.name.replace("-", "_").lower()[len(prefix):][:1] in ("_", ".")]

    found = archives()
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", f"{package}=={version}", "-d", str(dl)],
                       check=True)
        found = archives()
    if not found:
        raise RuntimeError(f"pip download {package}=={version} left no file in {dl}")
    archive = sorted(found)[0]
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=dest.parent, prefix=".unpack."))  # same file system: the rename is atomic
    if archive.suffix in (".whl", ".zip"):
        with zipfile.ZipFile(archive) as z:
            z.extractall(tmp, [n for n in z.namelist() if n.endswith(".py")])
    else:
        with tarfile.open(archive) as t:
            t.extractall(tmp, [m for m in t.getmembers() if m.name.endswith(".py")], filter="data")
        inner = [p for p in tmp.iterdir() if p.is_dir()]
        if len(inner) == 1:  # an sdist's top folder
            tmp = inner[0]
    (tmp / ".complete").write_text(archive.name + "\n")
    if dest.exists():
        import shutil

        shutil.rmtree(dest)
    os.replace(tmp, dest)
    return dest


def load_file(root: Path, rel: str, fakes: dict[str, dict[str, Any]] | None = None) -> types.ModuleType:
    """Import ``root/rel`` under its dotted package name; parent packages not yet imported are empty stand-ins
    whose ``__path__`` is their real folder (sibling imports load the real files, no ``__init__`` runs);
    ``fakes`` (module -> attributes) go into ``sys.modules`` first."""
    for name, attrs in (fakes or {}).items():
        m = types.ModuleType(name)
        m.__dict__.update(attrs)
        sys.modules[name] = m
    parts = Path(rel).with_suffix("").parts
    for i in range(1, len(parts)):
        pkg = ".".join(parts[:i])
        if pkg not in sys.modules or getattr(sys.modules[pkg], "__file__", None) is None and pkg not in (fakes or {}):
            m = types.ModuleType(pkg)
            m.__path__ = [str(root.joinpath(*parts[:i]))]
            sys.modules[pkg] = m
    modname = ".".join(parts)
    spec = importlib.util.spec_from_file_location(modname, root / rel)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    spec.loader.exec_module(module)
    return module


def bind(kernel: Kernel, mods: list[types.ModuleType]) -> Callable[..., Any]:
    """The kernel's launcher for ``attnio.triton.check``: its adapter with the loaded modules bound first."""
    launch = functools.partial(kernel.adapter, mods)
    launch.__qualname__ = launch.__name__ = kernel.name  # type: ignore[attr-defined]
    return launch


# ---------------------------------------------------------------- counting one shape


def workload_of(shape: dict[str, Any]) -> Any:
    from attnio.core.workload import Workload

    kw = {k: v for k, v in shape.items() if k not in ("seqlens", "page_size")}
    return Workload.build(M=M_WORDS, **kw)


def variables(kernel: Kernel, shape: dict[str, Any], w: Any) -> dict[str, Any]:
    """The names a formula may use (module docstring)."""
    L = list(shape.get("seqlens") or [])
    v = {"B": w.batch, "H": w.heads, "Hkv": w.kv_heads, "g": w.heads // w.kv_heads, "Nq": w.Nq, "Nkv": w.Nkv,
         "d": w.d, "dv": w.dv, "causal": w.causal, "e": w.bytes_per_word, "W": 4, "L": L, "T": sum(L),
         "P": shape.get("page_size"), "cdiv": lambda a, b: -(-a // b), "min": min, "max": max, "sum": sum,
         "range": range, "len": len}
    for k, x in kernel.consts.items():  # a string constant is an expression of the shape (a launch parameter)
        v[k] = evaluate(x, v) if isinstance(x, str) else x
    return v


def evaluate(expr: str, names: dict[str, Any]) -> int:
    """A formula expression's value (an int; a float result that is not an integer is an error)."""
    x = eval(expr, {"__builtins__": {}, **names})  # noqa: S307 - the gallery's own table (globals: comprehensions see them)
    if int(x) != x:
        raise ValueError(f"formula {expr!r} is not an integer: {x}")
    return int(x)


def _compulsory(name: str, output: str, w: Any) -> tuple[int, int]:
    """(read, written) bytes a tensor must move at least once: Q, K, V read once, the output written once."""
    e = w.bytes_per_word
    if name == output:
        return 0, w.batch * w.heads * w.Nq * w.dv * e
    if name in ("q",):
        return w.batch * w.heads * w.Nq * w.d * e, 0
    if name in ("k", "k_cache"):
        return w.batch * w.kv_heads * w.Nkv * w.d * e, 0
    if name in ("v", "v_cache"):
        return w.batch * w.kv_heads * w.Nkv * w.dv * e, 0
    return 0, 0


def measure(kernel: Kernel, launch: Callable[..., Any], shape: dict[str, Any]) -> dict[str, Any]:
    """Count ``launch`` on one shape with ``attnio.triton.check`` and set each tensor beside its formula and its
    compulsory bytes; the totals beside the best lower bound and attnio's best schedule."""
    from attnio.triton.check import role_of

    w = workload_of(shape)
    L = shape.get("seqlens")
    cu = None if not L else [sum(L[:i]) for i in range(len(L) + 1)]
    r = check_shape(kernel, launch, shape)
    t = r.traffic
    names = variables(kernel, shape, w)
    if L:  # a packed batch: compulsory bytes are the sums over its sequences
        from attnio.core.workload import Ragged

        seqs = Ragged.from_cu_seqlens(cu).sequences(w)
    else:
        seqs = [w]
    rows, ok = [], True
    for n in sorted(set(t.names) | set(kernel.formula)):
        rd, wr = t.reads_bytes.get(n, 0), t.writes_bytes.get(n, 0)
        fr, fw = (evaluate(x, names) for x in kernel.formula.get(n, ("0", "0")))
        if kernel.compulsory is not None:
            cr, cw = evaluate(kernel.compulsory.get(n, "0"), names), 0
        else:
            cr = sum(_compulsory(n, kernel.output, s)[0] for s in seqs)
            cw = sum(_compulsory(n, kernel.output, s)[1] for s in seqs)
        good = (rd, wr) == (fr, fw)
        ok &= good
        role = "O" if n == kernel.output else role_of(n, kernel.roles)  # by its own name, not its aliases
        best = r.best_per_array.get(role) if role else None  # words of attnio's best schedule for that array
        rows.append({"tensor": n, "role": role, "read_bytes": rd, "written_bytes": wr,
                     "formula_read_bytes": fr, "formula_written_bytes": fw, "compulsory_bytes": cr + cw,
                     "excess_bytes": rd + wr - cr - cw, "formula_ok": good,
                     "ratio_to_compulsory": (rd + wr) / (cr + cw) if cr + cw else None,
                     "best_array_bytes": None if best is None else (best[0] + best[1]) * w.bytes_per_word})
    comp = sum(x["compulsory_bytes"] for x in rows)
    return {
        "shape": {k: v for k, v in shape.items()}, "label": label(shape), "formula_ok": ok, "tensors": rows,
        "total_bytes": r.total_bytes, "compulsory_bytes": comp, "lower_bound": r.lower_bound_id,
        "lower_bound_bytes": r.lower_bound_bytes, "best_schedule": r.best_schedule, "best_bytes": r.best_bytes,
        "ratio_to_compulsory": r.total_bytes / comp if comp else None, "ratio_to_lower_bound": r.ratio_to_bound,
        "ratio_to_best_schedule": r.ratio_to_best, "max_abs_error": r.max_abs_error, "tolerance": r.tolerance,
        "outputs_ok": r.outputs_ok, "dominates": r.dominates, "launches": sorted(set(t.launches)),
        "seconds": round(r.seconds, 2),
    }


def check_shape(kernel: Kernel, launch: Callable[..., Any], shape: dict[str, Any]) -> Any:
    """``attnio.triton.check`` of ``launch`` at one gallery shape, under the kernel's pins and fake GPU."""
    from attnio.triton import pin_config
    from attnio.triton.check import check

    L = shape.get("seqlens")
    cu = None if not L else [sum(L[:i]) for i in range(len(L) + 1)]
    with contextlib.ExitStack() as stack:
        if kernel.fake_gpu is not None:
            from attnio.triton.fake_gpu import fake_gpu

            stack.enter_context(fake_gpu(arch=kernel.fake_gpu))
        for kfn, cfg in kernel.pins.items():
            stack.enter_context(pin_config(_attr(launch, kfn), **cfg))
        return check(launch, workload_of(shape), cu_seqlens=cu, page_size=shape.get("page_size"),
                     roles=kernel.roles or None, args=kernel.args)


def _attr(launch: Any, path: str) -> Any:
    """``mods[i].name`` for a pin's ``"i.name"``."""
    i, _, name = path.partition(".")
    return getattr(launch.args[0][int(i)], name)


def label(shape: dict[str, Any]) -> str:
    s = shape
    heads = f"H={s.get('heads', 1)}" + (f"/{s['kv_heads']}" if s.get("kv_heads", s.get("heads", 1)) != s.get("heads", 1) else "")
    n = f"N={s['N']}" if "N" in s else f"Nq={s.get('Nq')} Nkv={s.get('Nkv')}"
    if s.get("seqlens"):
        n = "seqlens=" + "+".join(map(str, s["seqlens"]))
    extra = f" page={s['page_size']}" if s.get("page_size") else ""
    b = f"B={s['batch']} " if s.get("batch", 1) != 1 else ""
    return f"{b}{heads} {n} d={s.get('d')}{' causal' if s.get('causal') else ''} {s.get('dtype', 'fp32')}{extra}"


def run_kernel(kernel: Kernel, root: Path) -> dict[str, Any]:
    """Load the kernel's files from the unpacked distribution ``root`` and measure every shape."""
    mods = [load_file(root, f, kernel.fakes) for f in kernel.files]
    launch = bind(kernel, mods)
    shapes = [measure(kernel, launch, s) for s in kernel.shapes]
    return {
        "name": kernel.name, "project": kernel.project, "package": kernel.package, "version": kernel.version,
        "files": list(kernel.files), "function": kernel.function, "adapter_lines": kernel.adapter_lines,
        "fakes": sorted(kernel.fakes), "pins": {k: dict(v) for k, v in kernel.pins.items()},
        "consts": dict(kernel.consts), "fake_gpu": kernel.fake_gpu,
        "formula": {k: list(v) for k, v in kernel.formula.items()}, "waste": kernel.waste, "note": kernel.note,
        "formula_ok": all(s["formula_ok"] for s in shapes), "shapes": shapes,
    }


# ---------------------------------------------------------------- fitted closed forms (--formula)


def gallery_shape(spec: Fit, w: Any) -> dict[str, Any]:
    """The gallery shape (Workload.build keywords, ``seqlens`` for a packed batch) of a fit workload ``w``."""
    base = {"heads": w.heads, "kv_heads": w.kv_heads, "d": w.d, "dv": w.dv, "causal": w.causal, "dtype": w.dtype}
    if spec.packed:
        if w.Nq != w.Nkv:
            raise ValueError(f"a packed batch has N_q = N_kv (got {w.Nq}, {w.Nkv})")
        return {**base, "N": 1, "seqlens": [w.Nq] * w.batch}
    return {**base, "batch": w.batch, "Nq": w.Nq, "Nkv": w.Nkv} | ({"page_size": spec.page_size} if spec.page_size else {})


def fit_shape(spec: Fit, shape: dict[str, Any]) -> dict[str, int] | None:
    """The fit's keywords (Z, H, H_kv, N_q, N_kv, d, d_v) of a gallery shape, or None when the fitted form does
    not describe it (another mask, unequal sequences of a packed batch, d ≠ d_v without d_v in the basis)."""
    w = workload_of(shape)
    if w.causal != spec.causal or (w.d != w.dv and "d_v" not in spec.widths) or shape.get("page_size") != spec.page_size:
        return None
    L = shape.get("seqlens") or []
    if spec.packed != bool(L) or (L and len(set(L)) != 1):
        return None
    if L:
        return {"Z": len(L), "H": w.heads, "H_kv": w.kv_heads, "N_q": L[0], "N_kv": L[0], "d": w.d, "d_v": w.dv}
    return {"Z": w.batch, "H": w.heads, "H_kv": w.kv_heads, "N_q": w.Nq, "N_kv": w.Nkv, "d": w.d, "d_v": w.dv}


def hand_vs_fit(kernel: Kernel, f: Any, shape: dict[str, Any], fs: dict[str, int]) -> list[str]:
    """Tensors whose hand-derived formula (:attr:`Kernel.formula`) differs from the fitted form at one shape."""
    names = variables(kernel, shape, workload_of(shape))
    got = f.evaluate(**fs)
    bad = []
    for n in sorted((set(got) - {"total"}) | set(kernel.formula)):
        hand = tuple(evaluate(x, names) for x in kernel.formula.get(n, ("0", "0")))
        fitted = (got.get(n, {}).get("reads_bytes", 0), got.get(n, {}).get("writes_bytes", 0))
        if hand != fitted:
            bad.append(f"{n} hand {hand} fitted {fitted}")
    return bad


def metadata_check(kernel: Kernel, launch: Callable[..., Any], f: Any, shape: dict[str, Any]) -> dict[str, Any]:
    """Generate ``launch_metadata`` for the fit's kernel and call it, as Triton does, with the grid and the
    arguments by name captured from a real launch at ``shape``; its bytes against that launch's counted bytes."""
    import dataclasses

    from attnio.triton import pin_config

    mod_i, _, kname = kernel.fit.metadata.partition(".")  # "0._attn_fwd": mods[0]._attn_fwd
    mod = launch.args[0][int(mod_i)]
    real = getattr(mod, kname)
    hook = f.launch_metadata(kname)
    names, seen = list(real.arg_names), []

    class Recorder:
        def __getitem__(self, grid: Any) -> Any:
            def run(*a: Any, **kw: Any) -> Any:
                seen.append((grid, dict(zip(names, a, strict=False)) | kw))
                return real[grid](*a, **kw)
            return run

    with contextlib.ExitStack() as stack:
        for kfn, cfg in kernel.pins.items():
            stack.enter_context(pin_config(_attr(launch, kfn), **cfg))
        setattr(mod, kname, Recorder())
        try:
            r = check_shape(dataclasses.replace(kernel, pins={}), launch, shape)
        finally:
            setattr(mod, kname, real)
    (grid, args), = seen
    meta = hook(grid, None, args)
    counted = int(r.traffic.per_launch[kname].total_bytes)
    return {"kernel": kname, "shape": label(shape), "hook_bytes": meta["bytes"], "counted_bytes": counted,
            "equal": meta["bytes"] == counted, "source": f.launch_metadata_source(kname)}


def fit_kernel(kernel: Kernel, root: Path, solver: bool = True) -> dict[str, Any]:
    """Fit the kernel's closed form through its adapter (:class:`Fit`), check it on held-out shapes, compare it
    with the hand-derived formula at every gallery shape it describes and at every fit and held-out shape, and
    (``solver``) prove with z3 the least c of formula ≤ c × best lower bound for 1024 ≤ N ≤ 2²⁰ at d = 128."""
    from attnio.core.workload import Workload
    from attnio.triton import formula_basis as fb
    from attnio.triton.formula import FitError, fit

    spec = kernel.fit
    mods = [load_file(root, f, kernel.fakes) for f in kernel.files]
    launch = bind(kernel, mods)
    dtype = kernel.shapes[0].get("dtype", "fp32")
    out: dict[str, Any] = {"name": kernel.name, "project": kernel.project, "block": list(spec.block),
                           "causal": spec.causal, "dtype": dtype, "widths": list(spec.widths),
                           "lengths": list(spec.lengths), "packed": spec.packed}
    if spec.splits is not None:
        out["splits"] = spec.splits

    def counter(lau: Any, w: Any) -> Any:
        return check_shape(kernel, lau, gallery_shape(spec, w)).traffic

    try:
        f = fit(launch, causal=spec.causal, block=spec.block, dtype=dtype, widths=spec.widths, lengths=spec.lengths,
                points=spec.points or None, counter=counter, check=False, splits=spec.splits)
    except FitError as e:
        return {**out, "exact": False, "error": str(e) + (f"; {spec.missing}" if spec.missing else "")}
    f.check(list(spec.held_out))
    out.update(fit_shapes=len(f.fit_shapes), fit_seconds=round(f.fit_seconds, 1),
               held_out=[{"shape": h.shape, "exact": h.ok, "mismatches": {k: list(v) for k, v in h.mismatches.items()},
                          "seconds": round(h.seconds, 1)} for h in f.held_out], exact=f.exact)
    if not f.exact:
        bad = sorted({k for h in f.held_out for k in h.mismatches if k.endswith("_bytes") and not k.startswith("launch:")})
        out["error"] = (f"held-out counts of {', '.join(bad)} differ from the fitted form (no form printed): a term "
                        f"outside the basis (widths {', '.join(spec.widths)}; lengths {', '.join(spec.lengths)})"
                        + (f"; {spec.missing}" if spec.missing else ""))
        return out
    out["formulas"] = {f"{t}.{x}": f.text(t, x) for t in f.tensors for x in ("reads_bytes", "writes_bytes")
                       if (t, x) in f.coefficients}
    import sympy as sp

    out["total_bytes"] = str(sp.expand(sum((f.sympy(t, x) for t in f.tensors for x in ("reads_bytes", "writes_bytes")),
                                           sp.Integer(0))))
    if {fs["Z"] for fs in [*f.fit_shapes, *(h.shape for h in f.held_out)]} == {1}:
        out["Z"] = 1  # fitted and held out on one sequence only (an adapter that takes batch 1)
    used = {n for terms in f.coefficients.values() for (_, _, ln) in terms for n in fb.named_in(ln)}
    out["definitions"] = {n: d for n, d in f.as_dict()["definitions"].items() if n in used}
    agree, checked = [], 0
    gallery_hits = 0
    for s in kernel.shapes:
        fs = fit_shape(spec, s)
        if fs is None:
            continue
        gallery_hits += 1
        checked += 1
        agree += [f"{label(s)}: {b}" for b in hand_vs_fit(kernel, f, s, fs)]
    for fs in [*f.fit_shapes, *(h.shape for h in f.held_out)]:
        w = Workload.build(batch=fs["Z"], heads=fs["H"], kv_heads=fs["H_kv"], Nq=fs["N_q"], Nkv=fs["N_kv"],
                           d=fs["d"], dv=fs["d_v"], causal=spec.causal, dtype=dtype, M=M_WORDS)
        checked += 1
        agree += [f"{fs}: {b}" for b in hand_vs_fit(kernel, f, gallery_shape(spec, w), fs)]
    out["hand_formula"] = {"gallery_shapes": gallery_hits, "shapes": checked, "equal": not agree,
                           "differences": agree[:10]}
    if spec.metadata:
        s = next(s for s in kernel.shapes if fit_shape(spec, s) is not None)
        out["launch_metadata"] = metadata_check(kernel, launch, f, s)
    if solver:
        t0 = time.perf_counter()
        try:
            cmp = f.compare(d=128, N_lo=1024, N_hi=1 << 20)
            out["compare"] = {**cmp.as_dict(), "seconds": round(time.perf_counter() - t0, 1)}
        except Exception as e:  # reported as not proved, never as a constant
            out["compare"] = {"tightest": {"status": "error", "reason": f"{type(e).__name__}: {e}"},
                              "seconds": round(time.perf_counter() - t0, 1)}
    return out


def fit_summary(fr: dict[str, Any]) -> str:
    """One line: fit shapes and seconds, held-out ✓, agreement with the hand formula, the proved c."""
    if not fr.get("exact"):
        return f"not fitted: {fr.get('error')}"
    hand = fr["hand_formula"]
    meta = fr.get("launch_metadata")
    return (f"{fr['fit_shapes']} shapes in {fr['fit_seconds']:.0f} s, held out {len(fr['held_out'])} ✓, "
            f"= hand formula at {hand['shapes']} shapes ({hand['gallery_shapes']} of the gallery's) "
            f"{'✓' if hand['equal'] else '✗ ' + '; '.join(hand['differences'][:3])}"
            + (f", launch_metadata {meta['hook_bytes']:,d} B = counted {meta['counted_bytes']:,d} B "
               f"{'✓' if meta['equal'] else '✗'}" if meta else "") + f"; {proved_c(fr.get('compare'))}")


def proved_c(cmp: dict[str, Any] | None) -> str:
    """"within c× of the best bound, proved by z3" or "not proved (status)"."""
    if not cmp:
        return "not compared"
    t = cmp.get("tightest", {})
    if t.get("status") != "proved":
        return f"not proved ({t.get('status')})"
    from fractions import Fraction

    return f"within {float(Fraction(t['constant'])):.2f}× of the best bound, proved by z3"


# ---------------------------------------------------------------- output


def _r(x: Any) -> str:
    return "—" if x is None or (isinstance(x, float) and math.isinf(x)) else f"{x:.3f}"


def markdown(data: dict[str, Any]) -> str:
    """docs/gallery.md from the gallery's results."""
    ks = data["kernels"]
    out = [
        "# Gallery: third-party Triton attention kernels, counted as they ship",
        "",
        "Written by `benchmarks/kernel_gallery.py` (do not edit by hand). Command:",
        "",
        f"    {data['command']}",
        "",
        f"Triton {data['triton']} interpreter, torch {data['torch']}; {data['wall_seconds']:.0f} s wall. Each "
        "package is downloaded at run time (`pip download --no-deps NAME==VERSION`) into a cache outside the "
        "repository and its kernel file imported unmodified; nothing of it is kept here. Bytes are counted per "
        "active lane by `attnio.triton.check` (requested bytes: no cache, a re-read counts again). The formula "
        "of each tensor (Python, bytes) is derived here from the kernel's loop structure and must equal the "
        "count at every shape. Compulsory bytes: Q, K, V read once, the output written once. Best lower bound "
        f"and attnio's best schedule at M = {data['M']:,d} words (bounds/workloads.py `best_lower_bound`; "
        "attnio's workload schedules).",
        "",
        "| kernel | project | package | file: function | adapter lines | shapes | formula |",
        "|---|---|---|---|---|---|---|",
    ]
    for k in ks:
        out.append(f"| {k['name']} | {k['project']} | `{k['package']}=={k['version']}` | "
                   f"{', '.join('`' + f + '`' for f in k['files'])}: `{k['function']}` | {k['adapter_lines']}"
                   f"{' (fakes: ' + ', '.join(k['fakes']) + ')' if k['fakes'] else ''} | {len(k['shapes'])} | "
                   f"{'✓' if k['formula_ok'] else '✗'} |")
    out += fit_markdown(ks)
    for k in ks:
        out += ["", f"## {k['name']} ({k['project']}, `{k['package']}=={k['version']}`)", "",
                f"`{'`, `'.join(k['files'])}`: `{k['function']}`. Adapter {k['adapter_lines']} lines"
                + (f", fake modules {', '.join('`' + f + '`' for f in k['fakes'])}" if k["fakes"] else "")
                + (f"; pinned configs {k['pins']}" if k["pins"] else "") + ".", "",
                f"What moves beyond the compulsory bytes: {k['waste']}", ""] + ([f"Note: {k['note']}", ""] if k.get("note") else []) + [
                "Formula (bytes; " + (", ".join(f"{a} = {b}" for a, b in k["consts"].items()) or "no constants") + "):", ""]
        out += [f"- `{t}`: read `{r}`, written `{w}`" for t, (r, w) in k["formula"].items()]
        out += ["", "| shape | tensor (array) | read B | written B | formula | compulsory B | ÷ compulsory | excess B | "
                "attnio's best schedule, its array B |", "|---|---|---|---|---|---|---|---|---|"]
        for s in k["shapes"]:
            for t in s["tensors"]:
                best = t.get("best_array_bytes")
                out.append(f"| {s['label']} | {t['tensor']}{' (' + t['role'] + ')' if t.get('role') else ''} | "
                           f"{t['read_bytes']:,d} | {t['written_bytes']:,d} | "
                           f"{'✓' if t['formula_ok'] else '✗ ' + format(t['formula_read_bytes'], ',d') + ' / ' + format(t['formula_written_bytes'], ',d')} | "
                           f"{t['compulsory_bytes']:,d} | {_r(t.get('ratio_to_compulsory'))} | {t['excess_bytes']:,d} | "
                           f"{'—' if best is None else format(best, ',d')} |")
        out += ["", "| shape | counted B | ÷ compulsory | best lower bound (B) | ÷ bound | attnio's best schedule (B) | ÷ best | max abs error (tol) |",
                "|---|---|---|---|---|---|---|---|"]
        for s in k["shapes"]:
            err = ", ".join(f"{n} {e:.1e}" for n, e in s["max_abs_error"].items())
            out.append(f"| {s['label']} | {s['total_bytes']:,d} | {_r(s['ratio_to_compulsory'])} | {s['lower_bound']} "
                       f"{s['lower_bound_bytes']:,d} | {_r(s['ratio_to_lower_bound'])} | {s['best_schedule']} "
                       f"{s['best_bytes']:,d} | {_r(s['ratio_to_best_schedule'])} | {err} ({s['tolerance']:.1g}"
                       f"{'' if s['outputs_ok'] else ', over'}) |")
    return "\n".join(out) + "\n"


def fit_markdown(ks: list[dict[str, Any]]) -> list[str]:
    """The "Fitted closed forms" part of docs/gallery.md (``--formula``): nothing when no kernel was fitted."""
    fitted = [k for k in ks if k.get("fit")]
    if not fitted:
        return []
    out = ["", "## Fitted closed forms", "",
           "`--formula`: `attnio.triton.formula.fit` (docs/triton-formula.md) runs each kernel through its gallery "
           "adapter at the shapes of a factorial design (a packed-batch kernel gets Z sequences of N tokens), "
           "solves exactly for every tensor's bytes in the basis named below, and checks the solve at held-out "
           "shapes; a form that misses any held-out count is not printed. The fitted form is then evaluated "
           "against the hand-derived formula of the kernel's section (two independent derivations) at every "
           "gallery shape it describes and at every fit and held-out shape. Solver: the least c with "
           "formula ≤ c × attnio's best lower bound for 1024 ≤ N_q = N_kv = N ≤ 2²⁰ (a decode kernel, fitted at "
           "N_q = 1: N_q = 1 and N_kv = N) at d = d_v = 128, one head, proved by z3 (attnio.triton.formula_compare); anything but proved reads \"not proved\".", "",
           "| kernel | mask, blocks (B_r, B_c) | basis (widths; lengths) | fit shapes | fit s | held out | = hand formula | solver |",
           "|---|---|---|---|---|---|---|---|"]
    for k in fitted:
        f = k["fit"]
        if not f.get("exact"):
            out.append(f"| {k['name']} | {'causal' if f.get('causal') else 'no mask'}, {tuple(f.get('block', ()))} | "
                       f"{', '.join(f.get('widths', []))}; {', '.join(f.get('lengths', []))} | "
                       f"{f.get('fit_shapes', '—')} | {f.get('fit_seconds', '—')} | not fitted: {f.get('error')} | — | — |")
            continue
        h = f["hand_formula"]
        out.append(f"| {k['name']} | {'causal' if f['causal'] else 'no mask'}, {tuple(f['block'])}"
                   f"{', packed batch' if f['packed'] else ''} | {', '.join(f['widths'])}; {', '.join(f['lengths'])} | "
                   f"{f['fit_shapes']} | {f['fit_seconds']:.1f} | {len(f['held_out'])} ✓ | "
                   f"{'✓' if h['equal'] else '✗'} at {h['shapes']} shapes ({h['gallery_shapes']} of the gallery's) | "
                   f"{proved_c(f.get('compare'))} |")
    for k in fitted:
        f = k["fit"]
        if not f.get("exact"):
            continue
        out += ["", f"### {k['name']}: fitted form ({'causal' if f['causal'] else 'no mask'}, {f['dtype']}, "
                f"B_r = {f['block'][0]}, B_c = {f['block'][1]})", "",
                "Bytes per call; Z sequences (batch), H query heads, T_r = ⌈N_q/B_r⌉, T_c = ⌈N_kv/B_c⌉"
                + (", d = d_v (the kernel takes one head width)" if "d_v" not in f["widths"] else "")
                + (", N_q = N_kv = N (a packed batch of Z sequences of N tokens)" if f["packed"] else "")
                + "".join(f"; {n} = {d}" for n, d in f["definitions"].items())
                + (f"; S = {f['splits']}" if f.get("splits") else "")
                + ("; fitted at Z = 1 only (one sequence)" if f.get("Z") == 1 else "") + ".", ""]
        out += [f"- `{key}` = `{v}`" for key, v in f["formulas"].items() if v != "0"]
        out += [f"- total = `{f['total_bytes']}`"]
        out += ["", "Held out: " + "; ".join(
            ", ".join(f"{a}={b}" for a, b in h["shape"].items()) + f" ✓ ({h['seconds']:.1f} s)" for h in f["held_out"])]
        c = f.get("compare")
        if c and c.get("tightest", {}).get("status") == "proved":
            out += ["", f"Solver: formula ≤ {c['tightest']['constant']} × max({', '.join(c['bounds'])}) for "
                    f"1024 ≤ N ≤ 2²⁰{_lengths(c)}, proved by z3 ({c['tightest']['reason']}); {c['threshold']['text']}; "
                    f"{'; '.join(c['notes'])}; {c['seconds']:.1f} s."]
        elif c:
            out += ["", f"Solver: not proved ({c.get('tightest', {}).get('status')}: {c.get('tightest', {}).get('reason')})."]
        m = f.get("launch_metadata")
        if m:
            out += ["", f"`launch_metadata` generated for `{m['kernel']}` and called as Triton calls it, with the grid "
                    f"and the arguments of a real launch at {m['shape']}: {m['hook_bytes']:,d} bytes, counted "
                    f"{m['counted_bytes']:,d} {'✓' if m['equal'] else '✗'}:", "", "```python",
                    m["source"].rstrip(), "```"]
    return out


def _lengths(c: dict[str, Any]) -> str:
    """Where the comparison held N_q fixed (a decode kernel): which N_q."""
    q = c.get("setting", {}).get("N_q")
    return "" if q is None else f" (N_q = {q}, N_kv = N)"


def run(gallery: list[Kernel], a: argparse.Namespace, argv: list[str] | None = None) -> int:
    import torch
    import triton

    t0 = time.perf_counter()
    names = {k.name for k in gallery}
    bad = [n for n in a.only if n not in names]
    if bad:
        print(f"kernel_gallery: error: --only {bad[0]}: one of {', '.join(sorted(names))}", file=sys.stderr)
        return 2
    results, failed = [], 0
    for k in gallery:
        if a.only and k.name not in a.only:
            continue
        t1 = time.perf_counter()
        try:
            res = run_kernel(k, fetch(k.package, k.version, a.cache))
        except Exception as e:  # one kernel's failure is reported, the others still run
            print(f"✗ {k.name}: {type(e).__name__}: {' '.join(str(e).split())[:400]}")
            failed += 1
            continue
        results.append(res)
        mark = "✓" if res["formula_ok"] else "✗"
        failed += not res["formula_ok"]
        print(f"{mark} {k.name:<28} {k.package}=={k.version:<10} {len(res['shapes'])} shapes, adapter "
              f"{res['adapter_lines']} lines, {time.perf_counter() - t1:.0f} s")
        for s in res["shapes"]:
            print(f"    {s['label']:<44} {s['total_bytes']:>12,d} B  ÷compulsory {_r(s['ratio_to_compulsory'])}  "
                  f"÷bound {_r(s['ratio_to_lower_bound'])}  ÷best {_r(s['ratio_to_best_schedule'])}"
                  + ("" if s["formula_ok"] else "  FORMULA MISS: " + ", ".join(
                      f"{t['tensor']} {t['read_bytes']}/{t['written_bytes']} vs {t['formula_read_bytes']}/{t['formula_written_bytes']}"
                      for t in s["tensors"] if not t["formula_ok"])))
        if getattr(a, "formula", False) and k.fit is not None:
            t1 = time.perf_counter()
            try:
                fr = fit_kernel(k, fetch(k.package, k.version, a.cache), solver=not a.no_solver)
            except Exception as e:  # reported in the gallery as not fitted
                fr = {"name": k.name, "exact": False, "error": f"{type(e).__name__}: {' '.join(str(e).split())[:400]}"}
            res["fit"] = fr
            hand = fr.get("hand_formula", {})
            meta = fr.get("launch_metadata")
            failed += bool(hand) and not hand.get("equal")  # two derivations that disagree: an error
            failed += bool(meta) and not meta.get("equal")
            print(f"  fit {fit_summary(fr)}; {time.perf_counter() - t1:.0f} s")
    data = {"command": "TRITON_INTERPRET=1 .venv/bin/python benchmarks/kernel_gallery.py"
            + (" --formula" if getattr(a, "formula", False) else "") + (" --no-solver" if getattr(a, "no_solver", False) else "")
            + "".join(f" --only {n}" for n in a.only), "triton": triton.__version__,
            "torch": torch.__version__.split("+")[0], "M": M_WORDS, "wall_seconds": round(time.perf_counter() - t0, 1),
            "kernels": results}
    print(f"{len(results)} kernels from {len({r['project'] for r in results})} projects, "
          f"{sum(len(r['shapes']) for r in results)} shapes, {failed} failed, {data['wall_seconds']:.0f} s")
    if failed and not a.no_write:
        print("docs/gallery.md and reports/gallery.json not written: a kernel failed or missed its formula")
    if not a.no_write and not a.only and not failed:
        from attnio.reports.store import write_atomic

        write_atomic(ROOT / "reports" / "gallery.json", json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        write_atomic(ROOT / "docs" / "gallery.md", markdown(data))
    return 1 if failed else 0


# ---------------------------------------------------------------- the gallery table
# Adapters: launchers in attnio's convention (attnio.triton.check); ``m`` is the list of the kernel's loaded files.


def sage_per_block(m, q, k, v):
    """SageAttention's int8-QK forward: quantize Q (sm_scale·log2 e folded in) and K per block, then attend."""
    qi, qs, ki, ks = m[0].per_block_int8(q, k)
    return m[1].forward(qi, ki, v, qs, ks)


def sage_varlen(m, q, k, v, cu_seqlens, max_seqlen):
    """SageAttention's packed variable-length int8-QK forward (queries and keys of the same sequences)."""
    qi, qs, ki, ks, cq, ck = m[0].per_block_int8(q, k, cu_seqlens, cu_seqlens, max_seqlen, max_seqlen)
    return m[1].forward(qi, ki, v, cu_seqlens, cu_seqlens, max_seqlen, qs, ks, cq, ck)


def sglang_prefill(m, q, k, v, o, cu_seqlens, max_seqlen, causal):
    """sglang's packed-batch prefill: sequence starts and lengths from cu_seqlens."""
    m[0].context_attention_fwd(q, k, v, o, cu_seqlens[:-1], cu_seqlens.diff(), max_seqlen, is_causal=causal)


def sglang_decode(m, q, o, k_cache, v_cache, kv_indptr, kv_indices):
    """sglang's decode over a token pool (page size 1), S = 4 key splits for every sequence."""
    B, H, _, dv = o.shape
    f32, S = m[0].torch.float32, 4
    logits, lse = q.new_empty((B, H, S, dv), dtype=f32), q.new_empty((B, H, S), dtype=f32)
    m[0].decode_attention_fwd(q[:, :, 0], k_cache[:, 0], v_cache[:, 0], o[:, :, 0], kv_indptr, kv_indices, logits,
                              lse, kv_indptr.new_full((B,), S), S, q.shape[-1] ** -0.5, 1.0, 1.0)


_SGLANG_DECODE_FAKES = {"sglang.srt.environ": {"envs": None},
                        "sglang.srt.utils": {"is_hip": lambda: False, "is_gfx95_supported": lambda: False,
                                             "is_gfx1250_supported": lambda: False, "get_device_core_count": lambda *a: 0}}
# sglang grouped decode (Nq = 1, g = H/Hkv ≤ 16 query heads per K/V head, S splits of LS = cdiv(cdiv(Nkv, S), 32)·32
# keys, NE = cdiv(Nkv, LS) of them non-empty): stage 1, program (sequence, K/V head, split) reads the sequence's
# two offsets and its split count; a non-empty split reads the group's g query rows, one token index per key and
# the K and V rows of its keys, and writes g fp32 partial outputs and log-sum-exps. Stage 2, program (sequence,
# query head), reads the offsets and split count, the NE partials and their lse, and writes O.
def _sglang_decode(stage1: str) -> dict[str, tuple[str, str]]:
    """The decode formula with stage 1's kernel name (grouped: ``_fwd_grouped_kernel_stage1``; MHA, g = 1:
    ``_fwd_kernel_stage1``, one program per query head: the same loops with Hkv = H)."""
    return {
        "q": ("B*H*NE*d*e", "0"),
        "k_cache": ("B*Hkv*Nkv*d*e", "0"),
        "v_cache": ("B*Hkv*Nkv*dv*e", "0"),
        "kv_indices": ("B*Hkv*Nkv*W", "0"),
        "kv_indptr": ("2*B*(Hkv*S + H)*W", "0"),
        f"{stage1}.num_kv_splits": ("B*(Hkv*S + H)*W", "0"),
        f"{stage1}.Att_Out": ("B*H*NE*dv*W", "B*H*NE*dv*W"),
        f"{stage1}.Att_Lse": ("B*H*NE*W", "B*H*NE*W"),
        "o": ("0", "B*H*dv*e"),
    }

def flag_gems_sdpa(m, q, k, v, causal):
    """FlagGems' scaled_dot_product_attention forward (GQA enabled); returns (o, M), o first."""
    return m[0].scaled_dot_product_attention_forward(q, k, v, is_causal=causal, enable_gqa=True)


_FG_RUNTIME = {"get_tuned_config": lambda name: [], "torch_device_fn": types.SimpleNamespace(device=lambda d: contextlib.nullcontext())}
_FLAG_GEMS = {"flag_gems": {"runtime": types.SimpleNamespace(**_FG_RUNTIME)}, "flag_gems.runtime": _FG_RUNTIME,
              "flag_gems.config": {"use_c_extension": False},
              "flag_gems.ops.flash_api": {"mha_fwd": None, "mha_varlan_fwd": None, "mha_varlan_fwd_opt": None},
              "flag_gems.ops.flash_kernel": {"keep": lambda cfg, must_keep=None: True},
              "flag_gems.utils": {"libentry": lambda: (lambda f: f), "libtuner": __import__("triton").autotune}}
# FlagGems (the Triton tutorial's forward): program (query block i of BM rows, batch·head) reads its Q block, the
# key rows [0, Nkv) (causal, Nq = Nkv: [0, BM·i) off the band, then the diagonal block [BM·i, BM·(i+1)) masked to
# Nkv) of its K/V head, K and V per query head, and writes its O block and the rows' base-2 logsumexp M (fp32).
def key_rows(block: str, packed: bool = False) -> str:
    """The key rows the query blocks of ``block`` rows load, summed over the blocks (of every sequence ``l`` of a
    packed batch): all of them, or under the causal mask those up to the end of the block's diagonal."""
    if packed:
        return f"sum(min(l, {block}*(i + 1)) if causal else l for l in L for i in range(cdiv(l, {block})))"
    return f"sum(min(Nkv, {block}*(i + 1)) if causal else Nkv for i in range(cdiv(Nq, {block})))"


def kv_reads(form: str, k: str = "k", v: str = "v") -> dict[str, tuple[str, str]]:
    """K and V read alike: ``form`` with its width ``{w}`` d for ``k`` and dv for ``v``, nothing written."""
    return {k: (form.format(w="d"), "0"), v: (form.format(w="dv"), "0")}


_KR = key_rows("BM")
_FLAG_GEMS_SDPA = {"q": ("B*H*Nq*d*e", "0"), **kv_reads(f"B*H*{_KR}*{{w}}*e"), "_attn_fwd.M": ("0", "B*H*Nq*W"),
                   "_attn_fwd.Out": ("0", "B*H*Nq*dv*e")}

_SGLANG_UTILS = {"sglang.srt.utils": {"is_cuda": lambda: False, "is_hip": lambda: False}}

# sage: per (batch, query head) program i of cdiv(Nq, BM) query blocks. The quantization kernel reads Q and K
# once and writes their int8 copies (both counted as its Output) and one fp32 scale per block of BM (Q) and BN
# (K) rows. The attention kernel reads its int8 Q block and its Q scale, then the key rows [0, Nkv) (causal:
# [0, min(Nkv, BM·(i+1))), the diagonal block of BM keys included) as int8 K and fp16 V, and one K scale per
# BN keys (causal: (i+1)·BM/BN of them, the diagonal's two unmasked); it writes its own output tensor.
_SAGE = {
    "q": ("B*H*Nq*d*e", "0"),
    "k": ("B*Hkv*Nkv*d*e", "0"),
    "v": (f"B*H*{_KR}*dv*e", "0"),
    "quant_per_block_int8_kernel.Output": (f"B*H*Nq*d + B*H*{_KR}*d", "B*H*Nq*d + B*Hkv*Nkv*d"),
    "quant_per_block_int8_kernel.Scale": (
        "B*H*W*sum(1 + ((i + 1)*BM//BN if causal else cdiv(Nkv, BN)) for i in range(cdiv(Nq, BM)))",
        "B*(H*cdiv(Nq, BM) + Hkv*cdiv(Nkv, BN))*W"),
    "_attn_fwd.Out": ("0", "B*H*Nq*dv*e"),
}
# sage varlen: as sage per block, per sequence l of the packed batch; the grids run cdiv(max l, BLK) blocks per
# head and sequence, and a program past its sequence's end reads its sequence's two offsets and returns. An active
# quantization program also reads its sequence's scale offset; an active attention program reads the sequence's
# key offsets, its Q and K scale offsets, then as per block (NA = Σ cdiv(l, BM) active query blocks per head);
# causal: key rows [0, min(l, BM·(i+1))) and (i+1)·BM/BN K scales, two for the diagonal block even past the
# sequence's end (the shapes keep cdiv(l, BN) even, so those reads stay inside the sequence's scales).
_SAGE_VARLEN = {
    "q": ("H*T*d*e", "0"),
    "k": ("Hkv*T*d*e", "0"),
    "v": (f"H*dv*e*{key_rows('BM', packed=True)}", "0"),
    "cu_seqlens": ("W*(2*len(L)*(H*cdiv(max(L), BM) + Hkv*cdiv(max(L), BN)) + 2*len(L)*H*cdiv(max(L), BM) + 2*H*NA)", "0"),
    "quant_per_block_int8_kernel.cu_seqlens_scale": ("8*(H*NA + Hkv*NK + 2*H*NA)", "0"),  # int64 (torch.cumsum)
    "quant_per_block_int8_kernel.Output": (f"H*T*d + H*d*{key_rows('BM', packed=True)}", "H*T*d + Hkv*T*d"),
    "quant_per_block_int8_kernel.Scale": (
        "H*W*sum(1 + ((i + 1)*BM//BN if causal else cdiv(l, BN)) for l in L for i in range(cdiv(l, BM)))",
        "(H*NA + Hkv*NK)*W"),
    "_attn_fwd.Out": ("0", "H*T*dv*e"),
}
# sglang prefill: per sequence l, query head and query block i < cdiv(l, BLOCK): Q block, the key rows
# [0, l) (causal: [0, min(l, BLOCK·(i+1)))), K and V per query head; every program of the grid
# (batch, H, cdiv(max l, BLOCK)) reads its sequence's start and length, also past its sequence's end
_SGLANG_PREFILL = {"q": ("H*T*d*e", "0"), **kv_reads("H*{w}*e*" + key_rows("BLOCK", packed=True)), "o": ("0", "H*T*dv*e"),
                   **dict.fromkeys(("cu_seqlens", "_fwd_kernel.B_Seqlen"), ("len(L)*H*cdiv(max(L), BLOCK)*W", "0"))}

def lmdeploy_paged_decode(m, q, k_cache, v_cache, seq_lens, block_table):
    """lmdeploy's paged decode (one query token per sequence, pages in 'bshd' layout); returns (B, H, 1, dv).
    (Its file's module-level aliases ``tl_exp2 = tl.exp2`` run under counting: attnio.triton.hooks.builtin_aliases.)"""
    return m[0].flash_attn_with_kvcache(q[:, :, 0], k_cache, v_cache, seq_lens, block_table).unsqueeze(2)


_LMDEPLOY = {"lmdeploy.messages": {"QuantPolicy": __import__("enum").IntEnum("QuantPolicy", "NONE INT4 INT8 FP8 FP8_E5M2 TURBO_QUANT")},
             "lmdeploy.utils": {"get_logger": __import__("logging").getLogger}}
# lmdeploy paged decode (Nq = 1): grid (Hkv K/V heads, S splits, B); program (kv head, split s) loads the g query
# rows of its group, one sequence length, and for each page j of its range [s·BPC, min((s+1)·BPC, nb)) (nb pages,
# BPC = cdiv(nb, S) per split) one block-table entry and the whole page of K and V (P rows, unmasked: rows past
# Nkv in the last page are read too); it writes g·dv fp32 partial outputs when its range is not empty and the
# running max and sum (2 words per head) always. The reduce (per query head) reads the S maxima and sums and the
# NE non-empty partials and writes O. S is lmdeploy's _get_split_k for the fake 132-SM sm80 (sm90 would take the PDL path, which the interpreter lacks).
_LMDEPLOY_DECODE = {
    "q": ("B*H*S*d*e", "0"),
    **kv_reads("B*Hkv*nb*P*{w}*e", "k_cache", "v_cache"),
    "seq_lens": ("B*Hkv*S*W", "0"),
    "block_table": ("B*Hkv*nb*W", "0"),
    "_fwd_grouped_split_kernel.acc_out_ptr": ("B*H*(2*S + NE*dv)*W", "B*H*(NE*dv + 2*S)*W"),
    "_reduce_split_kernel.out_ptr": ("0", "B*H*dv*e"),
}

def vllm_prefix_prefill(m, q, k, v, o, k_cache, v_cache, block_table, seq_lens):
    """vLLM's prefix prefill, one sequence: Nkv − Nq keys from the paged cache (viewed in vLLM's layouts, K
    [pages, Hkv, d/8, P, 8], V [pages, Hkv, d, P]), the last Nq keys and the queries as (tokens, heads, d) views."""
    C, t = k.shape[2] - q.shape[2], (lambda a: a[0].transpose(0, 1))
    kc, vc = k_cache.unflatten(3, (-1, 8)).permute(0, 2, 3, 1, 4), v_cache.permute(0, 2, 3, 1)
    m[0].context_attention_fwd(t(q), t(k[:, :, C:]), t(v[:, :, C:]), t(o), "auto", kc, vc, block_table,
                               seq_lens * 0, seq_lens, seq_lens - q.shape[2], q.shape[2])


# vLLM prefix prefill (batch 1, C = Nkv − Nq cached keys, BLOCK = 64 below sm80): program (head, query block i
# of TR = cdiv(Nq, BLOCK)) reads the sequence's context length, length and start, its Q block, then the C cached
# keys (one block-table entry per key, not per page, and the K and V rows from the cache), then the new keys
# [0, min(Nq, BLOCK·(i+1))) from k and v (the diagonal block whole); it writes its O block. K/V per query head.
_VLLM_PREFIX = {
    "q": ("H*Nq*d*e", "0"),
    **kv_reads("H*{w}*e*sum(min(Nq, BLOCK*(i + 1)) for i in range(TR))"),
    **kv_reads("H*TR*(Nkv - Nq)*{w}*e", "k_cache", "v_cache"),
    "block_table": ("H*TR*(Nkv - Nq)*W", "0"),
    **dict.fromkeys(("seq_lens", "_fwd_kernel.B_Start_Loc", "_fwd_kernel.B_Ctxlen"), ("H*TR*W", "0")),
    "o": ("0", "H*Nq*dv*e"),
}

_SAGE_NOTE = ("outputs: the attention kernel loads a partial last key block without `other=` and does not set "
              "the scores of its masked lanes to −∞, so when a sequence's N_kv is not a multiple of 64 the padded "
              "keys enter the softmax (error against float64 0.30 at seqlens 200 + 70; on one sequence, measured "
              "here, 0.082 at N = 200 against 0.013 at N = 192); at multiples of 64 the error is int8 "
              "quantization's (0.011 to 0.041 here, over the fp16 tolerance 0.02 in the causal shapes). Counts do "
              "not depend on it.")
_SAGE_WASTE = ("K (int8: half the bytes of fp16) and V are read once per query block of 128 rows and per query "
               "head (a GQA group re-reads them per head); the int8 copies of Q and K are written and read back")

# what the entries of one package share (the two sglang decodes also their file, adapter and launch constants)
_SAGE_PACKAGE = {"project": "SageAttention", "package": "sageattention", "version": "1.0.6"}
_SAGE_VARLEN_CONSTS = {"BM": 128, "BN": 64, "NA": "sum(cdiv(l, BM) for l in L)", "NK": "sum(cdiv(l, BN) for l in L)"}
_SGLANG_DECODE_ENTRY = {"project": "sglang", "package": "sglang", "version": "0.5.23",
                        "files": ("sglang/kernels/ops/attention/decode_attention.py",), "adapter": sglang_decode,
                        "fakes": _SGLANG_DECODE_FAKES, "fake_lines": 2,
                        "consts": {"S": 4, "LS": "cdiv(cdiv(Nkv, S), 32)*32", "NE": "cdiv(Nkv, LS)"}}

GALLERY: list[Kernel] = [
    Kernel(
        name="sage-int8-per-block", **_SAGE_PACKAGE,
        files=("sageattention/quant_per_block.py", "sageattention/attn_qk_int8_per_block.py"),
        function="quant_per_block.per_block_int8 + attn_qk_int8_per_block.forward", adapter=sage_per_block,
        consts={"BM": 128, "BN": 64},
        shapes=(dict(heads=2, N=256, d=64, dtype="fp16"), dict(heads=4, kv_heads=2, N=192, d=128, dtype="fp16"),
                dict(heads=2, Nq=64, Nkv=320, d=64, dtype="fp16")),
        formula=_SAGE, waste=_SAGE_WASTE, note=_SAGE_NOTE, output="_attn_fwd.Out",
        fit=Fit(block=(128, 64), causal=False, widths=("1", "d"), points={"widths": [(64, 64), (128, 128)]},
                lengths=("1", "N_q", "N_kv", "T_r", "T_c", "T_r*N_kv", "T_r*T_c"),
                held_out=(dict(Z=2, H=4, H_kv=2, N_q=131, N_kv=200, d=64), dict(Z=1, H=3, H_kv=1, N_q=61, N_kv=129, d=64),
                          dict(Z=2, H=2, H_kv=2, N_q=257, N_kv=257, d=64)))),
    Kernel(
        name="sage-int8-per-block-causal", **_SAGE_PACKAGE,
        files=("sageattention/quant_per_block.py", "sageattention/attn_qk_int8_per_block_causal.py"),
        function="quant_per_block.per_block_int8 + attn_qk_int8_per_block_causal.forward", adapter=sage_per_block,
        consts={"BM": 128, "BN": 64},
        shapes=(dict(heads=2, N=256, d=64, causal=True, dtype="fp16"),
                dict(heads=4, kv_heads=1, N=384, d=128, causal=True, dtype="fp16")),
        formula=_SAGE, waste=_SAGE_WASTE + "; causal: the diagonal block of 128 keys is loaded whole (two BN "
        "blocks), the blocks above it are skipped", note=_SAGE_NOTE, output="_attn_fwd.Out"),
    Kernel(
        name="sage-int8-varlen", **_SAGE_PACKAGE,
        files=("sageattention/quant_per_block_varlen.py", "sageattention/attn_qk_int8_block_varlen.py"),
        function="quant_per_block_varlen.per_block_int8 + attn_qk_int8_block_varlen.forward", adapter=sage_varlen,
        consts=_SAGE_VARLEN_CONSTS,
        shapes=(dict(heads=2, N=1, d=64, dtype="fp16", seqlens=[200, 70]),
                dict(heads=4, kv_heads=2, N=1, d=128, dtype="fp16", seqlens=[130, 256, 40])),
        formula=_SAGE_VARLEN, output="_attn_fwd.Out",
        waste=_SAGE_WASTE + "; programs past a sequence's end read its offsets and return", note=_SAGE_NOTE),
    Kernel(
        name="sage-int8-varlen-causal", **_SAGE_PACKAGE,
        files=("sageattention/quant_per_block_varlen.py", "sageattention/attn_qk_int8_per_block_causal_varlen.py"),
        function="quant_per_block_varlen.per_block_int8 + attn_qk_int8_per_block_causal_varlen.forward",
        adapter=sage_varlen,
        consts=_SAGE_VARLEN_CONSTS,
        shapes=(dict(heads=2, N=1, d=64, causal=True, dtype="fp16", seqlens=[200, 70]),
                dict(heads=4, kv_heads=1, N=1, d=128, causal=True, dtype="fp16", seqlens=[256, 100])),
        formula=_SAGE_VARLEN, output="_attn_fwd.Out",
        waste=_SAGE_WASTE + "; causal: the diagonal block of 128 keys is read (masked to the sequence), the "
              "blocks above it skipped; programs past a sequence's end read its offsets and return",
        note="the diagonal block always reads two K scales; with cdiv(l, 64) odd, the last sequence's last "
             "block reads one past the scales (attnio's check stops it as out of bounds), so the shapes keep "
             "it even. Padded keys lie above the diagonal, so the causal mask hides them."),
    Kernel(
        name="sglang-prefill", project="sglang", package="sglang", version="0.5.23",
        files=("sglang/kernels/ops/attention/prefill_attention.py",), function="context_attention_fwd",
        adapter=sglang_prefill, fakes=_SGLANG_UTILS, fake_lines=1, consts={"BLOCK": 64},
        shapes=(dict(heads=2, N=1, d=64, dtype="fp16", seqlens=[100, 37]),
                dict(heads=4, kv_heads=2, N=1, d=64, causal=True, dtype="fp16", seqlens=[130, 64]),
                dict(heads=2, N=1, d=128, causal=True, dtype="fp16", seqlens=[256])),
        formula=_SGLANG_PREFILL,
        fit=Fit(block=(64, 64), causal=True, packed=True, widths=("1", "d"), lengths=("1", "N_q", "T_r", "SE"),
                points={"widths": [(16, 16), (24, 24)], "lengths": [(n, n) for n in (1, 63, 64, 65, 127, 129, 191)]},
                held_out=(dict(Z=2, H=4, H_kv=2, N=131, d=24), dict(Z=1, H=3, H_kv=1, N=61, d=16),
                          dict(Z=3, H=2, H_kv=2, N=193, d=40))),
        waste="K and V are read once per query block of 64 rows and per query head (no GQA sharing); causal: "
              "the diagonal block is read whole and blocks above it skipped; programs past a sequence's end "
              "still read its start and length"),
    Kernel(
        name="sglang-decode-grouped", function="decode_attention_fwd", **_SGLANG_DECODE_ENTRY,
        shapes=(dict(heads=8, kv_heads=2, Nq=1, Nkv=200, d=64, dtype="fp16", page_size=1),
                dict(heads=4, kv_heads=2, Nq=1, Nkv=256, d=128, dtype="fp16", page_size=1, batch=2),
                dict(heads=8, kv_heads=1, Nq=1, Nkv=50, d=64, dtype="fp16", page_size=1)),
        formula=_sglang_decode("_fwd_grouped_kernel_stage1"),
        # NE = cdiv(Nkv, LS) with LS = cdiv(cdiv(Nkv, S), 32)·32 is the basis's ⌈T_c/⌈T_c/S⌉⌉ at B_c = 32
        # (⌈⌈N/S⌉/32⌉ = ⌈N/(32·S)⌉ = ⌈T_c/S⌉): q is read and the partial outputs written per non-empty split
        fit=Fit(block=(1, 32), causal=False, page_size=1, splits=4, widths=("1", "d"),
                lengths=("1", "N_kv", "T_c", "NE"),
                points={"units": [(1, 2, 1), (1, 4, 1), (1, 4, 2), (2, 4, 2)], "widths": [(16, 16), (32, 32)],
                        "lengths": [(1, n) for n in (1, 31, 32, 33, 63, 65, 97, 129)]},  # g > 1: the grouped kernel
                held_out=(dict(Z=2, H=4, H_kv=2, N_q=1, N_kv=150, d=16), dict(Z=1, H=8, H_kv=1, N_q=1, N_kv=77, d=32),
                          dict(Z=1, H=4, H_kv=2, N_q=1, N_kv=300, d=16))),
        waste="split-K: each non-empty split re-reads the group's query rows and writes fp32 partial outputs "
              "and log-sum-exps that stage 2 reads back; one int32 token index is read per key and K/V head; "
              "K and V are read once per K/V head (the GQA group shares them)"),
    Kernel(
        name="sglang-decode-mha", function="decode_attention_fwd (g = 1)", **_SGLANG_DECODE_ENTRY,
        shapes=(dict(heads=4, Nq=1, Nkv=200, d=64, dtype="fp16", page_size=1),
                dict(heads=2, Nq=1, Nkv=300, d=128, dtype="fp16", page_size=1, batch=2),
                dict(heads=4, Nq=1, Nkv=20, d=64, dtype="fp16", page_size=1)),
        formula=_sglang_decode("_fwd_kernel_stage1"),
        waste="split-K: each non-empty split re-reads its query row and writes fp32 partial outputs and "
              "log-sum-exps that stage 2 reads back; one int32 token index is read per key and head"),
    Kernel(
        name="flag-gems-sdpa", project="FlagGems", package="flag-gems", version="5.0.2",
        files=("flag_gems/ops/attention.py",), function="scaled_dot_product_attention_forward",
        adapter=flag_gems_sdpa, fakes=_FLAG_GEMS, fake_lines=7, pins={"0._attn_fwd": {"BLOCK_M": 64, "BLOCK_N": 32}},
        consts={"BM": 64, "BN": 32}, roles={"_attn_fwd.M": "L"},
        shapes=(dict(heads=2, N=200, d=64, dtype="fp16"), dict(heads=4, kv_heads=2, N=256, d=128, causal=True, dtype="fp16"),
                dict(heads=2, Nq=64, Nkv=300, d=64, dtype="fp16"), dict(heads=4, kv_heads=1, N=130, d=64, causal=True, dtype="fp16")),
        formula=_FLAG_GEMS_SDPA, output="_attn_fwd.Out",
        fit=Fit(block=(64, 32), causal=False, widths=("1", "d"), points={"widths": [(32, 32), (64, 64)]},
                lengths=("1", "N_q", "N_kv", "T_r", "T_c", "T_r*N_kv", "T_r*T_c"), metadata="0._attn_fwd",
                held_out=(dict(Z=2, H=4, H_kv=2, N_q=131, N_kv=168, d=32), dict(Z=1, H=3, H_kv=1, N_q=61, N_kv=65, d=64),
                          dict(Z=3, H=2, H_kv=1, N_q=193, N_kv=193, d=32))),
        waste="K and V are read once per query block of 64 rows and per query head (a GQA group re-reads them "
              "per head); causal: the diagonal block is read whole and the blocks above it skipped; the fp32 "
              "row statistics M are written for the backward"),
    Kernel(
        name="vllm-prefix-prefill", project="vLLM", package="vllm", version="0.6.3",
        files=("vllm/attention/ops/prefix_prefill.py",), function="context_attention_fwd",
        adapter=vllm_prefix_prefill, fake_lines=1,
        fakes={"vllm.platforms": {"current_platform": types.SimpleNamespace(has_device_capability=lambda c: False)}},
        consts={"BLOCK": 64, "TR": "cdiv(Nq, BLOCK)"},
        shapes=(dict(heads=2, Nq=100, Nkv=228, d=64, causal=True, dtype="fp16", page_size=16),
                dict(heads=4, kv_heads=2, Nq=64, Nkv=200, d=128, causal=True, dtype="fp16", page_size=32),
                dict(heads=2, Nq=130, Nkv=130, d=64, causal=True, dtype="fp16", page_size=16)),
        formula=_VLLM_PREFIX,
        # one sequence (the adapter's batch is 1: Z = 1); every query block reads the δ = Nkv − Nq cached keys
        # (T_r·N_kv − T_r·N_q) beside the new keys of the causal band (SE − T_r·δ); d = dv, a multiple of 8
        fit=Fit(block=(64, 64), causal=True, page_size=16, widths=("1", "d"),
                lengths=("1", "N_q", "T_r", "SE", "T_r*N_kv", "T_r*N_q"),
                points={"units": [(1, 1, 1), (1, 2, 1), (1, 2, 2)], "widths": [(16, 16), (32, 32)]},
                held_out=(dict(Z=1, H=4, H_kv=2, N_q=70, N_kv=200, d=16), dict(Z=1, H=3, H_kv=1, N_q=61, N_kv=61, d=32),
                          dict(Z=1, H=2, H_kv=2, N_q=129, N_kv=150, d=24))),
        compulsory={"q": "H*Nq*d*e", "k": "Hkv*Nq*d*e", "v": "Hkv*Nq*dv*e", "k_cache": "Hkv*(Nkv - Nq)*d*e",
                    "v_cache": "Hkv*(Nkv - Nq)*dv*e", "o": "H*Nq*dv*e"},
        waste="the cached prefix and the new keys are read once per query block of 64 rows and per query head "
              "(no GQA sharing); one block-table entry is read per cached key (not per page); the diagonal "
              "block of new keys is read whole"),
    Kernel(
        name="lmdeploy-paged-decode", project="lmdeploy", package="lmdeploy", version="0.18.0",
        files=("lmdeploy/pytorch/kernels/cuda/pagedattention.py",), function="flash_attn_with_kvcache",
        adapter=lmdeploy_paged_decode, fakes=_LMDEPLOY, fake_lines=2, fake_gpu=80,
        consts={"S": "max(min(1 << ((264 // Hkv + (1 << (B - 1).bit_length()) - 1) // (1 << (B - 1).bit_length())).bit_length() - 1, 128), 4)",
                "nb": "cdiv(Nkv, P)", "BPC": "cdiv(nb, S)", "NE": "cdiv(nb, BPC)"},
        shapes=(dict(heads=8, kv_heads=2, Nq=1, Nkv=200, d=64, dtype="fp16", page_size=16),
                dict(heads=4, Nq=1, Nkv=256, d=128, dtype="fp16", page_size=32, batch=2),
                dict(heads=8, kv_heads=1, Nq=1, Nkv=500, d=64, dtype="fp16", page_size=16)),
        formula=_LMDEPLOY_DECODE, output="_reduce_split_kernel.out_ptr",
        waste="split-K: each of the S splits re-reads the group's query rows and writes fp32 partial outputs "
              "(dv + 2 words per head and split) that the reduce reads back; whole pages are read, rows past "
              "the sequence's end included; K and V are read once per K/V head (the GQA group shares them)"),
]


if __name__ == "__main__":
    _ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    _ap.add_argument("--only", action="append", default=[], metavar="NAME", help="run only these kernels")
    _ap.add_argument("--cache", type=Path, default=CACHE, help="where packages are downloaded and unpacked")
    _ap.add_argument("--formula", action="store_true", help="also fit each kernel's closed form (attnio.triton.formula.fit "
                     "through its adapter), check it held out and against the hand formula, and compare it with z3")
    _ap.add_argument("--no-solver", action="store_true", help="with --formula: no z3 comparison")
    _ap.add_argument("--no-write", action="store_true", help="print only; write neither docs/gallery.md nor reports/gallery.json")
    sys.exit(run(GALLERY, _ap.parse_args()))
