"""``attnio kernel PATH.py:FUNCTION``: count a user's Triton attention kernel on the CPU (Triton's interpreter),
check its output, and compare it with the best proved lower bound and attnio's best schedule (docs/triton.md).

FUNCTION is a launcher: a Python function (or a torch.autograd.Function, called through .apply) taking the torch
tensors attnio makes for the workload (by parameter name: q, k, v, o; backward: do, lse, dq, dk, dv; varlen:
cu_seqlens, max_seqlen; and causal, sm_scale, scale, workload; other names mapped with ``--arg query=q`` or the
launcher's ``attnio_args``) and launching the kernels. The target may be ``package.module:FUNCTION``; a file
inside a package is imported under its package name (relative imports work).

Exit 0: counted, outputs within tolerance; 1: outputs wrong (the counts are still printed); 2: bad input (a
missing file or function, a launcher that raises, an untested Triton, a tensor off the CPU, an out-of-bounds
access), as one line on stderr with nothing printed on stdout.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any

from attnio.cli import _kernel_l2
from attnio.cli._common import int_option, print_json

HELP = "count a Triton attention kernel's global-memory traffic on the CPU and compare it with the bounds"
"""The one-line help of ``attnio kernel`` (``attnio --help``, ``attnio kernel --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    from attnio.core.workload import DTYPES, GPUS

    p.add_argument("target", metavar="PATH.py:FUNCTION",
                   help="the launcher: a file and a function in it, or package.module:FUNCTION")
    p.add_argument("--N", type=int_option, default=None, help="sequence length (N_q = N_kv = N)")
    p.add_argument("--d", type=int_option, required=True, help="head width of Q and K")
    p.add_argument("--dv", type=int_option, default=None, help="head width of V and O (default d)")
    p.add_argument("--Nq", type=int_option, default=None, help="query rows (default --N)")
    p.add_argument("--Nkv", type=int_option, default=None, help="key/value rows (default --N)")
    p.add_argument("--batch", type=int_option, default=1, help="batch size (default 1)")
    p.add_argument("--heads", type=int_option, default=1, help="query heads (default 1)")
    p.add_argument("--kv-heads", dest="kv_heads", type=int_option, default=None, help="K/V heads (default heads)")
    p.add_argument("--causal", action="store_true", help="causal mask, bottom-right aligned")
    p.add_argument("--dtype", choices=sorted(d for d in DTYPES if d != "fp8"), default="fp32", help="element type (default fp32)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--M", type=int_option, default=None, help="fast memory in words, for the bound and attnio's schedules")
    g.add_argument("--smem", default=None, help="fast memory in bytes (instead of --M)")
    g.add_argument("--gpu", choices=sorted(GPUS), default=None, help="fast memory = one SM's shared memory (default h100)")
    p.add_argument("--fake-gpu", dest="fake_gpu", default=None, metavar="TARGET:ARCH[,sms=N]",
                   help="a CPU stand-in for a GPU the kernel file queries, e.g. cuda:90 or cuda:80,sms=108; "
                        "device='cuda' allocations land on the CPU (docs/triton.md)")
    p.add_argument("--arg", dest="args", action="append", default=[], metavar="PARAM=INPUT",
                   help="the launcher's parameter PARAM receives attnio's INPUT (q, k, v, o, ...), e.g. query=q")
    p.add_argument("--import-root", dest="import_roots", action="append", default=[], metavar="DIR",
                   help="a folder put on sys.path before the launcher's module is imported")
    p.add_argument("--cu-seqlens", dest="cu_seqlens", default=None, metavar="0,L1,L1+L2,...",
                   help="a packed variable-length batch: cumulative sequence lengths (q, k, v, o are "
                        "(tokens, heads, d)); --N, --Nq, --Nkv and --batch are then taken from it")
    p.add_argument("--page-size", dest="page_size", type=int_option, default=None, metavar="P",
                   help="K and V in a paged cache of P-row pages: the launcher takes k_cache, v_cache, "
                        "block_table, seq_lens")
    p.add_argument("--seed", type=int_option, default=0, help="seed of the inputs (default 0)")
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.add_argument("--fast", action="store_true",
                   help="count by sampled programs (attnio.triton.scale: grids found per launch, units checked "
                        "offset-only, block axes fitted piecewise-affine and checked) instead of running every "
                        "program; no output check. A workload too large for a full run is counted this way "
                        "without --fast")
    p.add_argument("--length-step", dest="length_step", type=int_option, default=None, metavar="S",
                   help="with --fast: also extrapolate along N_kv from N_kv mod S + S, 2S, 3S (a decode whose "
                        "programs loop over the whole sequence; S a multiple of the kernel's blocks and pages)")
    p.add_argument("--block", default=None, metavar="BRxBC",
                   help=f"with --fast and {FAST_TARGET}: the FA-2 forward's blocks (default: attnio's io-optimal "
                        f"rule at M); with --formula: the launcher's pinned blocks (default: its `block` default or "
                        f"attnio_block)")
    p.add_argument("--formula", action="store_true",
                   help="fit the kernel's traffic per tensor as a closed form at small shapes (blocks pinned), "
                        "check it on held-out shapes, and compare it with the best lower bound by z3 at --d "
                        "over --range (docs/triton-formula.md)")
    p.add_argument("--range", dest="n_range", default="1024:1048576", metavar="LO:HI",
                   help="with --formula: the N range of the solver's comparison (default 1024:1048576)")
    p.add_argument("--widths", default=None, metavar="W1,W2,...",
                   help="with --formula: the width basis among 1, d, d_v, T_d, T_v (default: the launcher's "
                        "attnio_widths, else 1,d,d_v)")
    p.add_argument("--lengths", default=None, metavar="L1,L2,...",
                   help="with --formula: the length basis (default: the unmasked or the causal one of "
                        "docs/triton-formula.md#fit); add T_r*N_q for a cached prefix, NE or N_q*NE (with --splits) "
                        "for a split-K kernel that skips its empty splits")
    p.add_argument("--splits", type=int_option, default=None, metavar="S",
                   help="with --formula: the kernel's pinned key splits, for the lengths NE and N_q*NE (default: "
                        "the launcher's attnio_splits)")
    p.add_argument("--no-solver", dest="no_solver", action="store_true",
                   help="with --formula: fit and check only, no z3 comparison")
    p.add_argument("--schedule", choices=("grouped", "per-head"), default="grouped",
                   help=f"with --fast and {FAST_TARGET}: the FA-2 forward's schedule (default grouped)")
    _kernel_l2.add_arguments(p)


#: the target ``--fast`` counts with attnio's own launcher (--block and --schedule: attnio.triton.scale.fa2_launcher)
FAST_TARGET = "attnio.triton.kernels.fa2_fwd:fa2_forward"


def load_module(path: str, what: str = "target") -> Any:
    """Import the Python file ``path`` (TRITON_INTERPRET=1 already set) as a module; errors name it."""
    from attnio.core.errors import InvalidParameter

    file = Path(path)
    if not file.is_file():
        raise InvalidParameter(what, path, f"an existing Python file: {path} not found")
    spec = importlib.util.spec_from_file_location(f"attnio_user_kernel_{file.stem}", file)
    if spec is None or spec.loader is None:
        raise InvalidParameter(what, path, "a Python file (.py)")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and Triton's source lookup want the module registered
    sys.path.insert(0, str(file.resolve().parent))  # the file's own sibling imports
    try:
        spec.loader.exec_module(module)
    except Exception as e:  # the user's file failed to import: name it
        raise KernelInputError(f"importing {path} raised {type(e).__name__}: {e}") from e
    finally:
        sys.path.pop(0)
    return module


def _package_root(file: Path) -> Path | None:
    """The folder that holds the top package of ``file`` (walking up its ``__init__.py`` files), or None when
    ``file``'s folder is not a package."""
    d = file.parent
    if not (d / "__init__.py").is_file():
        return None
    while (d.parent / "__init__.py").is_file() and d.parent != d:
        d = d.parent
    return d.parent


def _import(modname: str, what: str) -> Any:
    """``importlib.import_module(modname)``; what it raises is a KernelInputError naming ``what``."""
    import importlib

    try:
        return importlib.import_module(modname)
    except Exception as e:  # the user's module failed to import: name it and the cause
        raise KernelInputError(f"importing {what} raised {type(e).__name__}: {e}") from e


def load_launcher(target: str, import_roots: list[str] | tuple[str, ...] = ()) -> Any:
    """The launcher named by ``target``: ``PATH.py:FUNCTION`` (a file inside a package is imported under its
    package name, its package root put on sys.path, so its relative imports work), or ``pkg.module:FUNCTION``
    (imported from sys.path, the current folder and ``import_roots``). FUNCTION may be dotted
    (``Attention.apply``). The folders put on sys.path stay there; :func:`_run` restores sys.path."""
    from attnio.core.errors import InvalidParameter

    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise InvalidParameter("target", target, "PATH.py:FUNCTION or package.module:FUNCTION")
    for r in reversed(import_roots):
        if not Path(r).is_dir():
            raise InvalidParameter("import-root", r, "an existing folder")
        sys.path.insert(0, str(Path(r).resolve()))
    file = Path(path)
    if path.endswith(".py") or os.sep in path or file.is_file():
        if not file.is_file():
            raise InvalidParameter("target", path, f"an existing Python file: {path} not found")
        root = _package_root(file.resolve())
        if root is None:
            module = load_module(path)
        else:
            rel = file.resolve().relative_to(root).with_suffix("").parts
            modname = ".".join(rel[:-1] if rel[-1] == "__init__" else rel)
            sys.path.insert(0, str(root))
            module = _import(modname, f"{path} (as {modname}, package root {root})")
    else:
        if not all(p.isidentifier() for p in path.split(".")):
            raise InvalidParameter("target", target, "PATH.py:FUNCTION or package.module:FUNCTION")
        if "" not in sys.path and os.getcwd() not in sys.path:
            sys.path.insert(0, os.getcwd())
        module = _import(path, path)
    fn: Any = module
    for part in name.split("."):
        fn = getattr(fn, part, None)
    if not callable(fn):
        raise InvalidParameter("target", target, f"a function defined in {path}: no callable {name!r} there")
    return fn


class KernelInputError(Exception):
    """Bad input found while importing the user's file."""


#: parameters of the library calls behind ``attnio kernel`` -> the options that set them
_CLI_NAMES = {"args": "arg", "length_step": "length-step"}


def main(args: argparse.Namespace) -> int:
    from attnio.core.errors import AttnioError, InvalidParameter

    os.environ["TRITON_INTERPRET"] = "1"  # before the user's file imports triton and defines its kernels
    try:
        result = _run(args)
    except (AttnioError, KernelInputError) as e:
        if isinstance(e, InvalidParameter) and e.name in _CLI_NAMES:  # name the option the user typed
            e = InvalidParameter(_CLI_NAMES[e.name], e.value, e.valid.replace(e.name, _CLI_NAMES[e.name]))
        print(f"attnio kernel: error: {' '.join(str(e).split())}", file=sys.stderr)
        return 2
    if args.json:
        print_json(result.as_dict())
    else:
        print("\n".join(result.lines()))
    return 0 if result.outputs_ok else 1


def _run(args: argparse.Namespace) -> Any:
    from attnio.core.errors import InvalidParameter
    from attnio.core.workload import Workload
    from attnio.triton.check import check
    from attnio.triton.count import check_triton_version

    check_triton_version()
    _check_mode_options(args)
    gpu = args.gpu if (args.M, args.smem, args.gpu) != (None, None, None) else "h100"
    if getattr(args, "formula", False):
        _check_formula_options(args, gpu)
    cu = None
    if args.cu_seqlens is not None:
        from attnio.core.workload import Ragged

        parts = args.cu_seqlens.split(",")
        if not all(x.strip().isdigit() for x in parts):
            raise InvalidParameter("cu-seqlens", args.cu_seqlens, "comma-separated token offsets, e.g. 0,5,12")
        cu = Ragged.from_cu_seqlens([int(x) for x in parts]).cu_seqlens
        args.N, args.Nq, args.Nkv, args.batch = max(b - a for a, b in zip(cu, cu[1:], strict=False)), None, None, 1
    if getattr(args, "formula", False):
        return _formula(args, gpu)
    w = Workload.build(batch=args.batch, heads=args.heads, kv_heads=args.kv_heads, N=args.N, Nq=args.Nq,
                       Nkv=args.Nkv, d=args.d, dv=args.dv, causal=args.causal, dtype=args.dtype, M=args.M,
                       smem=args.smem, gpu=gpu)
    _kernel_l2.check(args)
    mapping = _mapping(args.args)
    saved = list(sys.path)
    try:
        with _stand_in(args.fake_gpu):
            too_large = _too_large(w) if cu is None else None
            if getattr(args, "fast", False) and cu is not None:
                raise InvalidParameter("cu-seqlens", args.cu_seqlens, "not with --fast (a fast count's packed batch is "
                                       "--batch sequences of --N tokens each)")
            if too_large and args.l2 is not None:
                raise InvalidParameter("l2", args.l2, f"a shape small enough for a full run, not this one: {too_large} "
                                       "(the replay needs every program of one counted run; a fast count samples them)")
            if getattr(args, "fast", False) or too_large:
                return _fast(args, w, mapping, too_large)
            launch = load_launcher(args.target, args.import_roots)
            with _kernel_l2.traced(args) as trace:
                result = check(launch, w, seed=args.seed, args=mapping, cu_seqlens=cu, page_size=args.page_size)
            return _kernel_l2.replayed(result, trace, args)
    finally:
        sys.path[:] = saved


def _too_large(w: Any) -> str | None:
    """Why ``w`` is too large for a full run (attnio.triton.check.MAX_ELEMENTS), or None."""
    from attnio.triton.check import MAX_ELEMENTS

    elements = w.batch * (w.heads * w.Nq + w.kv_heads * w.Nkv) * (w.d + w.dv)
    if elements <= MAX_ELEMENTS:
        return None
    return (f"shape too large for a full run ({elements:,d} elements of q, k, v and o; at most {MAX_ELEMENTS:,d} "
            f"(2^26))")


#: options that act only with --formula or --fast: attribute -> (option, its default, the modes it acts in)
_MODE_OPTIONS = {"n_range": ("range", "1024:1048576", ("formula",)), "widths": ("widths", None, ("formula",)),
                 "lengths": ("lengths", None, ("formula",)), "splits": ("splits", None, ("formula",)),
                 "no_solver": ("no-solver", False, ("formula",)), "block": ("block", None, ("formula", "fast")),
                 "schedule": ("schedule", "grouped", ("fast",)), "length_step": ("length-step", None, ("fast",))}


def _check_mode_options(args: argparse.Namespace) -> None:
    """An option of --formula or --fast given without it is one line naming it, exit 2 (it would be ignored)."""
    from attnio.core.errors import InvalidParameter

    for attr, (option, default, modes) in _MODE_OPTIONS.items():
        value = getattr(args, attr, default)
        if value != default and not any(getattr(args, m, False) for m in modes):
            raise InvalidParameter(option, value, "only with " + " or ".join(f"--{m}" for m in modes)
                                   + " (it would be ignored)")


class _Fast:
    """``--fast``'s result: attnio.triton.scale's count (no output check: the programs not run compute nothing)."""

    outputs_ok = True

    def __init__(self, r: Any) -> None:
        self.r = r

    def as_dict(self) -> dict[str, Any]:
        return self.r.as_dict()

    def lines(self) -> list[str]:
        d = self.r.as_dict()
        out = [f"method: {d['method']}", f"programs run: {d['programs_run']} of {d['programs_total']} "
               f"({d['seconds']} s)"]
        out += [f"  {n}: reads {t['reads_words']} words ({t['reads_bytes']} B), writes {t['writes_words']} "
                f"words ({t['writes_bytes']} B)" for n, t in d["tensors"].items()]
        out.append(f"total: {d['total_bytes']} B")
        return out


def _fast(args: argparse.Namespace, w: Any, mapping: dict[str, str] | None, too_large: str | None) -> _Fast:
    """attnio.triton.scale's count of the target (FAST_TARGET: attnio's FA-2 forward with --block, --schedule).
    A Mismatch, or a witness too large to make, is bad input: "shape too large for a full run, no faster
    method: …" when the shape is too large, else "no faster method: …"."""
    from attnio.core.errors import InvalidParameter
    from attnio.triton import scale

    block = None
    if args.block is not None:
        br, x, bc = args.block.lower().partition("x")
        if not (x and br.isdigit() and bc.isdigit() and int(br) > 0 and int(bc) > 0):
            raise InvalidParameter("block", args.block, "BRxBC with positive integers, e.g. 64x64")
        block = (int(br), int(bc))
    if args.target == FAST_TARGET:
        kw: dict[str, Any] = {"block": block, "schedule": args.schedule}
    else:
        if block is not None or args.schedule != "grouped":
            option, value = ("block", args.block) if block is not None else ("schedule", args.schedule)
            raise InvalidParameter(option, value, f"--block and --schedule only with {FAST_TARGET}")
        kw = {"launch": load_launcher(args.target, args.import_roots), "args": mapping, "page_size": args.page_size}
    lead = f"{too_large}, no faster method" if too_large else "no faster method"
    wit = scale.witness(w)
    elements = wit.batch * (wit.heads * wit.Nq + wit.kv_heads * wit.Nkv) * (wit.d + wit.dv)
    if elements > scale.WITNESS_ELEMENTS:
        raise scale.Mismatch(f"{lead}: its witness (batch {wit.batch}, kv_heads {wit.kv_heads}) has {elements:,d} "
                             f"elements of q, k, v and o (at most {scale.WITNESS_ELEMENTS:,d})")
    try:
        return _Fast(scale.count(w, seed=args.seed, length_step=args.length_step, **kw))
    except scale.Mismatch as e:
        raise scale.Mismatch(f"{lead}: {e}") from None


class _Formula:
    """``--formula``'s result: the fitted formula (printed only when exact on every held-out shape) and the
    solver's comparison. Exit 0 when exact, 1 when a held-out count differs or no exact fit exists."""

    def __init__(self, f: Any, comparison: Any, error: str = "") -> None:
        self.f, self.comparison, self.error = f, comparison, error

    @property
    def outputs_ok(self) -> bool:
        return self.f is not None and self.f.exact

    def as_dict(self) -> dict[str, Any]:
        if self.f is None:
            return {"exact": False, "error": self.error}
        d = self.f.as_dict()
        if not self.f.exact:
            d.pop("formulas")
        d["solver"] = self.comparison.as_dict() if self.comparison is not None else None
        return d

    def lines(self) -> list[str]:
        if self.f is None:
            return [f"no formula: {self.error}"]
        out = self.f.lines()
        if self.comparison is not None:
            out += self.comparison.lines()
        return out


def _parse_block(text: str | None) -> tuple[int, int] | None:
    from attnio.core.errors import InvalidParameter

    if text is None:
        return None
    br, x, bc = text.lower().partition("x")
    if not (x and br.isdigit() and bc.isdigit() and int(br) > 0 and int(bc) > 0):
        raise InvalidParameter("block", text, "BRxBC with positive integers, e.g. 64x64")
    return int(br), int(bc)


#: options ``--formula`` does not take (it fits over every N at small shapes it picks itself): option -> its value
_NOT_WITH_FORMULA = {"fast": "fast", "l2": "l2", "cu_seqlens": "cu-seqlens", "page_size": "page-size", "N": "N",
                     "Nq": "Nq", "Nkv": "Nkv"}


def _check_formula_options(args: argparse.Namespace, gpu: str | None) -> None:
    """``--formula``'s options before the fit (which takes tens of seconds): no option it would ignore, and the
    workload options of the solver's comparison (heads, batch, widths, memory) valid at N = the range's LO."""
    from attnio.core.errors import InvalidParameter
    from attnio.core.workload import Workload

    for attr, option in _NOT_WITH_FORMULA.items():
        value = getattr(args, attr, None)
        if value not in (None, False):
            raise InvalidParameter(option, value, "without --formula (the fit counts its own small shapes: "
                                   "dense q, k, v, o, every program run, no L2 replay; the N range of its "
                                   "comparison is --range, at N_q = N_kv)")
    lo = args.n_range.partition(":")[0]
    Workload.build(batch=args.batch, heads=args.heads, kv_heads=args.kv_heads, N=int(lo) if lo.isdigit() else 1,
                   d=args.d, dv=args.dv, causal=args.causal, dtype=args.dtype, M=args.M, smem=args.smem, gpu=gpu)
    _kernel_l2.check(args)  # a replay option without --l2


def _formula(args: argparse.Namespace, gpu: str | None) -> _Formula:
    from attnio.core.errors import InvalidParameter
    from attnio.triton.formula import FitError, fit

    lo, sep, hi = args.n_range.partition(":")
    if not (sep and lo.isdigit() and hi.isdigit() and 2 <= int(lo) <= int(hi)):
        raise InvalidParameter("range", args.n_range, "LO:HI with 2 ≤ LO ≤ HI, e.g. 1024:1048576")
    block = _parse_block(args.block)
    saved = list(sys.path)
    try:
        with _stand_in(args.fake_gpu):
            launch = load_launcher(args.target, args.import_roots)
            try:
                widths, lengths = (tuple(x.strip() for x in a.split(",")) if a is not None else None
                                   for a in (args.widths, args.lengths))
                f = fit(launch, causal=args.causal, block=block, dtype=args.dtype, args=_mapping(args.args),
                        seed=args.seed, widths=widths, lengths=lengths, splits=args.splits)
            except FitError as e:
                return _Formula(None, None, str(e))
    finally:
        sys.path[:] = saved
    comparison = None
    if f.exact and not args.no_solver:
        comparison = f.compare(d=args.d, d_v=args.dv, Z=args.batch, H=args.heads, H_kv=args.kv_heads, M=args.M,
                               smem=args.smem, gpu=gpu or "h100", N_lo=int(lo), N_hi=int(hi))
    return _Formula(f, comparison)


def _mapping(items: list[str]) -> dict[str, str] | None:
    """``--arg PARAM=INPUT`` options as a mapping (None when there are none: the launcher's attnio_args)."""
    from attnio.core.errors import InvalidParameter

    out = {}
    for item in items:
        p, eq, a = item.partition("=")
        if not eq or not p.strip().isidentifier() or not a.strip():
            raise InvalidParameter("arg", item, "PARAM=INPUT, e.g. query=q")
        out[p.strip()] = a.strip()
    return out or None


def _stand_in(spec: str | None) -> Any:
    import contextlib

    from attnio.core.errors import InvalidParameter

    if spec is None:
        return contextlib.nullcontext()
    from attnio.triton.fake_gpu import fake_gpu

    target, _, rest = spec.partition(":")
    arch, *opts = rest.split(",")
    kw: dict[str, int] = {}
    for o in opts:
        key, eq, val = o.partition("=")
        if key.strip() != "sms" or not eq or not val.strip().isdigit() or int(val) < 1:
            raise InvalidParameter("fake-gpu", spec, "cuda:ARCH[,sms=N] with N ≥ 1 the SM count, e.g. cuda:90,sms=132")
        kw["sm_count"] = int(val)
    if target != "cuda" or not arch.isdigit():
        raise InvalidParameter("fake-gpu", spec, "cuda:ARCH[,sms=N] with ARCH the compute capability as digits, e.g. cuda:90")
    return fake_gpu(target, int(arch), **kw)
