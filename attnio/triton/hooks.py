"""Every private Triton entry point attnio hooks, in one module, and the structural probe that checks them.

What is hooked (nothing else in attnio touches Triton's internals):

- ``triton.runtime.interpreter._interpreter``, the interpreter's native module: every global access goes
  through its memory entry points (:data:`MEMORY_OPS`: ``load``, ``store``, ``atomic_rmw``, ``atomic_cas``),
  which :class:`CountingInterpreter` counts before calling them with the same positional arguments; its other
  callables are reviewed as not touching memory (:data:`NON_MEMORY`), and any other name is refused;
- ``GridExecutor.__call__`` (one launch: its kernel name and tensor arguments), ``JITFunction.run`` (a kernel
  compiled for the GPU: an error), ``Autotuner.run`` (several configs: an error) and ``Autotuner.configs``,
  ``.base_fn`` (:func:`replaced_configs`);
- the kernel module's own aliases of ``triton.language`` builtins (``tl_exp2 = tl.exp2``), which the
  interpreter's patching of ``triton.language`` does not reach: forwarded by name for each launch
  (:func:`builtin_aliases`);
- ``triton.knobs.runtime.interpret`` (:func:`interpret_enabled`), ``InterpretedFunction`` (:func:`is_interpreted`);
- the active driver (``triton.runtime.driver.driver._default``/``._active``) and ``torch.cuda`` functions
  (:func:`driver_replaced`, for ``attnio.triton.fake_gpu``);
- torch's factory functions, ``Tensor.to``, ``.cuda``, ``new_*`` and ``is_cuda`` (:func:`cuda_on_cpu`, for
  ``attnio.triton.fake_gpu``: CUDA allocations land on the CPU).

:func:`probe` checks, structurally, that an installed Triton still has these: the native module's callables are
exactly the memory entry points plus reviewed non-memory ones, each memory entry point still takes the
positional arguments the proxy passes, the interpreter's Python code reaches the native module only under
the name that is swapped, and the patched classes and attributes exist. ``attnio.triton.count`` runs it,
and on an untested Triton a self-test of tiny kernels with known counts too, before counting.

Importing this module imports neither Triton nor torch.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
import re
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from attnio.core.errors import AttnioError, Unsupported

#: the native interpreter's memory entry points and the positional arity the proxy calls them with
MEMORY_OPS: dict[str, int] = {"load": 4, "store": 3, "atomic_rmw": 5, "atomic_cas": 4}
#: the native interpreter's other callables, reviewed: arithmetic (fused multiply-add) and enum types
NON_MEMORY: frozenset[str] = frozenset({"fma_fp32", "fma_fp64", "MEM_SEMANTIC", "RMW_OP"})
#: where the interpreter's Python code binds the native module (the name swapped while counting)
NATIVE_NAME = "_interpreter"


class UntestedTriton(Unsupported):
    """The installed Triton is not one attnio can count with: untested and its hooks changed, or untested
    where a tested one is required (``ATTNIO_REQUIRE_TRITON=1``)."""


class TritonSetupError(AttnioError, RuntimeError):
    """The interpreter is not set up so that counting is possible (e.g. ``TRITON_INTERPRET`` set too late)."""


class UnreviewedEntryPoint(UntestedTriton):
    """The interpreter asked the native module for a callable that is neither counted nor reviewed."""


def require_tested() -> bool:
    """Whether ``ATTNIO_REQUIRE_TRITON=1`` (CI sets it): a missing or untested Triton is then a failure, in
    counting, the gate and the tests."""
    return os.environ.get("ATTNIO_REQUIRE_TRITON", "") == "1"


def triton_version() -> str:
    """The installed Triton's version (imports Triton; ImportError when it is missing)."""
    import triton

    return str(triton.__version__)


def interpret_enabled() -> bool:
    """Whether ``TRITON_INTERPRET`` is on. Reads Triton's knob when Triton is imported, else the environment (so
    asking never imports Triton, which must be imported after the variable is set)."""
    if "triton" in sys.modules:
        try:
            from triton import knobs

            return bool(knobs.runtime.interpret)
        except (ImportError, AttributeError):
            pass
    return os.environ.get("TRITON_INTERPRET", "").strip().lower() in ("1", "true", "on", "yes")


def is_interpreted(kernel: Any) -> bool:
    """Whether ``kernel`` (a ``@triton.jit`` function) runs in the interpreter (was decorated with it on)."""
    from triton.runtime.interpreter import InterpretedFunction

    return isinstance(kernel, InterpretedFunction)


# ---------------------------------------------------------------------------------------------------- probe


def _arity(fn: Any) -> int | None:
    """Positional parameters of a native function, from its signature or its pybind11 docstring."""
    try:
        return len(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        pass
    return doc_arity(fn.__doc__ or "")


def doc_arity(doc: str) -> int | None:
    """Parameters of a pybind11 signature line (``name(arg0: T, ...) -> R``), or None.

    >>> doc_arity("store(arg0: object, arg1: object, arg2: object, /) -> None")
    3
    >>> doc_arity("load(arg0: typing.Annotated[numpy.typing.ArrayLike, numpy.uint64], arg1: numpy.ndarray) -> x")
    2
    """
    m = re.match(r"\s*\w+\((.*)\)\s*->", doc.split("\n", 1)[0])
    if m is None:
        return None
    params, depth, cur = [], 0, ""
    for ch in m.group(1) + ",":  # split at the commas outside brackets (typing.Annotated[..., ...])
        if ch == "," and depth == 0:
            if cur.strip() not in ("", "/", "*"):
                params.append(cur)
            cur = ""
            continue
        depth += ch in "[(" 
        depth -= ch in "])"
        cur += ch
    return len(params)


def native_callables(native: Any) -> set[str]:
    """The public callables of the native module (enum types included, enum values not)."""
    return {n for n in dir(native) if not n.startswith("_") and callable(getattr(native, n))}


def probe_native(native: Any) -> list[str]:
    """What differs in the native module ``native`` from what the counter hooks (empty: nothing)."""
    problems = []
    found = native_callables(native)
    for name in sorted(set(MEMORY_OPS) - found):
        problems.append(f"the interpreter's memory entry point {name!r} is gone")
    for name in sorted(found - set(MEMORY_OPS) - NON_MEMORY):
        problems.append(f"the interpreter has a new entry point {name!r}, not reviewed (memory or not)")
    for name in sorted(set(MEMORY_OPS) & found):
        n = _arity(getattr(native, name))
        if n != MEMORY_OPS[name]:
            problems.append(f"the interpreter's {name!r} takes {n if n is not None else 'unreadable'} positional "
                            f"arguments; the counter passes {MEMORY_OPS[name]}")
    return problems


def probe() -> list[str]:
    """Structural probe of the installed Triton (module docstring): what changed, or [] when nothing did."""
    problems: list[str] = []
    try:
        interp = importlib.import_module("triton.runtime.interpreter")
    except ImportError as e:
        return [f"triton.runtime.interpreter cannot be imported ({e})"]
    native = getattr(interp, NATIVE_NAME, None)
    if native is None:
        return [f"triton.runtime.interpreter has no native module {NATIVE_NAME!r}"]
    problems += probe_native(native)
    try:
        src = inspect.getsource(interp)
    except (OSError, TypeError):
        src = None
    if src is None:
        problems.append("the interpreter's Python source cannot be read (cannot check how it reaches memory)")
    else:
        native_mod = native.__name__.rpartition(".")[2]  # "interpreter" in triton._C.libtriton
        for line in src.splitlines():
            s = line.split("#")[0].strip()
            if "libtriton" in s and native_mod in s and "import" in s and not s.endswith(f"as {NATIVE_NAME}"):
                problems.append(f"the interpreter imports its native module another way: {s!r}")
        used = set(re.findall(rf"\b{NATIVE_NAME}\.(\w+)", src))
        for name in sorted(used - set(MEMORY_OPS) - NON_MEMORY):
            problems.append(f"the interpreter calls {NATIVE_NAME}.{name}, which is not reviewed")
    for mod, cls, attr in (("triton.runtime.interpreter", "GridExecutor", "__call__"),
                           ("triton.runtime.interpreter", "InterpretedFunction", None),
                           ("triton.runtime.jit", "JITFunction", "run"),
                           ("triton.runtime.autotuner", "Autotuner", "run")):
        obj = getattr(importlib.import_module(mod), cls, None)
        if obj is None or (attr is not None and not hasattr(obj, attr)):
            problems.append(f"{mod}.{cls}{'.' + attr if attr else ''} is gone")
    grid = getattr(interp, "GridExecutor", None)
    if grid is not None:
        params = inspect.signature(grid.__init__).parameters
        if not {"fn", "arg_names"} <= set(params):
            problems.append(f"GridExecutor(...) no longer takes fn and arg_names: {list(params)}")
    try:
        from triton import knobs

        knobs.runtime.interpret  # noqa: B018
    except (ImportError, AttributeError):
        problems.append("triton.knobs.runtime.interpret is gone")
    return problems


# ---------------------------------------------------------------------------------------------------- hooks


class CountingInterpreter:
    """Stands in for the interpreter's native module: counts each memory access with ``counter`` (an object with
    ``access`` and ``classify``), then calls the real entry point; a reviewed non-memory callable or a
    constant passes through; any other callable is refused (:class:`UnreviewedEntryPoint`)."""

    def __init__(self, real: Any, counter: Any) -> None:
        self._real = real
        self._c = counter

    def load(self, ptrs, mask, other, dtype):  # noqa: ANN001
        self._c.access(ptrs, mask, np.dtype(dtype).itemsize, reads=True, writes=False)
        return self._real.load(ptrs, mask, other, dtype)

    def store(self, ptrs, value, mask):  # noqa: ANN001
        self._c.access(ptrs, mask, np.asarray(value).dtype.itemsize, reads=False, writes=True)
        return self._real.store(ptrs, value, mask)

    def atomic_rmw(self, op, ptrs, val, mask, sem):  # noqa: ANN001
        self._c.access(ptrs, mask, np.asarray(val).dtype.itemsize, reads=True, writes=True)
        return self._real.atomic_rmw(op, ptrs, val, mask, sem)

    def atomic_cas(self, ptrs, cmp, val, sem):  # noqa: ANN001
        # bounds first (an out-of-bounds cas must not touch memory), then count with the success mask
        self._c.classify(np.asarray(ptrs).ravel().astype(np.int64, copy=False), "atomic cas")
        old = self._real.atomic_cas(ptrs, cmp, val, sem)
        o = np.asarray(old)
        c = np.broadcast_to(np.asarray(cmp, dtype=o.dtype), o.shape)
        u = np.dtype(f"u{o.dtype.itemsize}")
        ok = o.reshape(-1).view(u).reshape(o.shape) == np.ascontiguousarray(c).view(u)
        self._c.access(ptrs, None, o.dtype.itemsize, reads=True, writes=True, write_mask=ok)
        return old

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._real, name)
        if callable(value) and name not in NON_MEMORY:
            raise UnreviewedEntryPoint(
                f"Triton's interpreter called its native {name!r}, which attnio neither counts nor has reviewed as "
                f"touching no memory: counting would miss traffic (attnio.triton.hooks.NON_MEMORY)")
        return value


def _tensor_args(bound: dict[str, Any]) -> list[tuple[str, Any]]:
    """(argument name, torch tensor) for every tensor argument of a launch (tensor descriptors' bases, tuples)."""
    out: list[tuple[str, Any]] = []

    def visit(name: str, a: Any) -> None:
        if isinstance(a, (tuple, list)):
            for i, x in enumerate(a):
                visit(f"{name}[{i}]", x)
        elif hasattr(a, "data_ptr") and hasattr(a, "untyped_storage"):
            out.append((name, a))
        elif hasattr(a, "base") and hasattr(a, "block_shape"):  # a host TensorDescriptor
            visit(name, a.base)
        elif hasattr(a, "base") and hasattr(a.base, "data_ptr"):  # a TensorWrapper (reinterpret)
            visit(name, a.base)

    for name, a in bound.items():
        visit(name, a)
    return out


@contextlib.contextmanager
def patched(counter: Any) -> Iterator[None]:
    """For the ``with`` block, process-wide (not thread-safe): the native module is :class:`CountingInterpreter`
    over ``counter``; each launch calls ``counter.begin_launch(kernel name, tensor arguments)`` and
    ``counter.end_launch()``; a GPU-compiled kernel or an unpinned autotuned one raises."""
    import triton.runtime.autotuner as autotuner
    import triton.runtime.interpreter as interp
    import triton.runtime.jit as jit

    real_native = getattr(interp, NATIVE_NAME)
    real_call = interp.GridExecutor.__call__
    real_jit_run = jit.JITFunction.run
    real_tune_run = autotuner.Autotuner.run

    def call(self, *args, **kwargs):  # noqa: ANN001, ANN202
        # GridExecutor runs one launch over its grid (3.5 and 3.9 alike); self.fn is the kernel's rewritten function
        names = list(self.arg_names)
        bound = dict(zip(names, args, strict=False)) | {k: v for k, v in kwargs.items() if k in names}
        counter.begin_launch(self.fn.__name__, _tensor_args(bound))
        try:
            with builtin_aliases(self.fn):
                return real_call(self, *args, **kwargs)
        except Exception as e:
            # the interpreter wraps what a kernel raised into InterpreterError(repr(e)): give back attnio's own
            if isinstance(e.__cause__, AttnioError):
                raise e.__cause__ from None
            raise
        finally:
            counter.end_launch()

    def jit_run(self, *args, **kwargs):  # noqa: ANN001, ANN202
        raise TritonSetupError(
            f"kernel {self.fn.__name__!r} was defined as a GPU kernel: TRITON_INTERPRET=1 must be set before the "
            f"module that defines it ({self.fn.__module__}) is imported"
        )

    def tune_run(self, *args, **kwargs):  # noqa: ANN001, ANN202
        if len(self.configs) > 1:
            raise Unsupported(
                f"autotuned kernel {self.base_fn.__name__!r} has {len(self.configs)} configs: the interpreter would "
                f"count every benchmarked config; pin one with attnio.triton.pin_config(kernel, ...) so the "
                f"count is deterministic"
            )
        return real_tune_run(self, *args, **kwargs)

    setattr(interp, NATIVE_NAME, CountingInterpreter(real_native, counter))
    interp.GridExecutor.__call__ = call
    jit.JITFunction.run = jit_run
    autotuner.Autotuner.run = tune_run
    try:
        yield
    finally:
        setattr(interp, NATIVE_NAME, real_native)
        interp.GridExecutor.__call__ = real_call
        jit.JITFunction.run = real_jit_run
        autotuner.Autotuner.run = real_tune_run


@contextlib.contextmanager
def builtin_aliases(fn: Any) -> Iterator[None]:
    """For one launch of the interpreted kernel ``fn``: each module-level alias of a ``triton.language`` builtin
    in its module, and in the modules of the JIT functions it names (``tl_exp2 = tl.exp2``, bound at import,
    before the interpreter patches ``triton.language`` for the launch), becomes a forwarder that looks the
    builtin up by its name in ``triton.language`` (or ``triton.language.math``) at call time, so the kernel calls
    the interpreter's version, as it does through ``tl.exp2``; restored afterwards. Without this the launch
    raises "Did you forget to add @triton.jit ?" (the builtin called outside a compiler). Counts are unchanged:
    the builtins touch no memory."""
    import triton.language as tl
    from triton.runtime.jit import JITFunction

    spaces = [fn.__globals__]
    spaces += [v.fn.__globals__ for v in list(fn.__globals__.values())
               if isinstance(v, JITFunction) and v.fn.__globals__ is not fn.__globals__]
    saved: list[tuple[dict[str, Any], str, Any]] = []
    for g in spaces:
        for name, v in list(g.items()):
            attr = getattr(v, "__name__", None)
            if not tl.core.is_builtin(v) or attr is None:
                continue
            owner = next((m for m in (tl, tl.math) if getattr(m, attr, None) is v), None)
            if owner is None:
                continue
            saved.append((g, name, v))
            g[name] = _forwarder(owner, attr)
    try:
        yield
    finally:
        for g, name, v in reversed(saved):
            g[name] = v


def _forwarder(owner: Any, attr: str) -> Callable[..., Any]:
    """A function calling ``owner.<attr>`` as it is at call time."""
    return lambda *a, **k: getattr(owner, attr)(*a, **k)


@contextlib.contextmanager
def programs_only(select: Callable[[tuple[int, int, int]], bool],
                  around: Callable[[tuple[int, int, int], bool], None],
                  launch: Callable[[str, tuple[int, int, int] | None], None] | None = None) -> Iterator[None]:
    """For the ``with`` block, process-wide: each launch runs only the programs whose grid index (x, y, z)
    ``select`` accepts, calling ``around(index, True)`` before and ``around(index, False)`` after each one
    (``attnio.triton.scale`` counts one program at a time this way). ``launch``, when given, is called as
    ``launch(kernel name, None)`` before each launch and ``launch(kernel name, (nx, ny, nz))`` after it, with
    the launch's grid (the interpreter's, padded to three axes). The kernel's rewritten function is
    wrapped in a function with its globals (where the interpreter patches ``triton.language``) and its
    signature (from which the interpreter binds the arguments); the grid loop itself is the interpreter's."""
    import types

    import triton.runtime.interpreter as interp

    builder = getattr(interp, "interpreter_builder", None)
    try:
        loop = inspect.getsource(interp.GridExecutor)  # the class as written (its __call__ may be patched now)
    except (OSError, TypeError):
        loop = ""
    if not (hasattr(builder, "set_grid_idx") and hasattr(builder, "set_grid_dim")) or "self.fn(**args)" not in loop:
        raise UntestedTriton("this Triton's interpreter no longer runs a grid as programs_only expects "
                             "(interpreter_builder.set_grid_idx and set_grid_dim, GridExecutor calling "
                             "self.fn(**args))")
    real_call = interp.GridExecutor.__call__

    def only(**kw):  # noqa: ANN003, ANN202 -- its free names are closure cells, never globals
        idx = builder.grid_idx
        if select(idx):
            around(idx, True)
            fn(**kw)
            around(idx, False)

    def call(self, *args, **kwargs):  # noqa: ANN001, ANN202
        nonlocal fn
        fn = self.fn
        w = types.FunctionType(only.__code__, fn.__globals__, fn.__name__, None, only.__closure__)
        w.__signature__ = inspect.signature(fn)
        w.__qualname__ = fn.__qualname__
        self.fn = w
        if launch is not None:
            launch(fn.__name__, None)
            builder.grid_dim = None
        try:
            out = real_call(self, *args, **kwargs)
        finally:
            self.fn = fn
        if launch is not None:
            launch(fn.__name__, tuple(builder.grid_dim) if builder.grid_dim is not None else None)
        return out

    fn: Any = None
    interp.GridExecutor.__call__ = call
    try:
        yield
    finally:
        interp.GridExecutor.__call__ = real_call


def autotune_configs(kernel: Any) -> list[Any] | None:
    """An autotuned kernel's configs (``Autotuner.configs``), or None for any other object."""
    return getattr(kernel, "configs", None)


@contextlib.contextmanager
def replaced_configs(kernel: Any, configs: list[Any]) -> Iterator[None]:
    """``kernel.configs`` is ``configs`` for the ``with`` block (restored after)."""
    saved = kernel.configs
    kernel.configs = configs
    try:
        yield
    finally:
        kernel.configs = saved


@contextlib.contextmanager
def driver_replaced(fake: Any, torch_cuda: dict[str, Callable[..., Any]] | None) -> Iterator[None]:
    """Triton's active driver is ``fake`` and, when given, the named ``torch.cuda`` functions are replaced, for
    the ``with`` block (restored after)."""
    driver_mod = importlib.import_module("triton.runtime.driver")  # the module (triton.runtime.driver is also a name)
    cfg = driver_mod.driver
    saved = (cfg._default, cfg._active)
    cfg._default = cfg._active = fake
    patches: list[tuple[Any, str, Any]] = []
    if torch_cuda:
        import torch

        for attr, value in torch_cuda.items():
            patches.append((torch.cuda, attr, getattr(torch.cuda, attr)))
            setattr(torch.cuda, attr, value)
    try:
        yield
    finally:
        for obj, attr, value in reversed(patches):
            setattr(obj, attr, value)
        cfg._default, cfg._active = saved


#: torch factory functions whose ``device=`` a launcher may set to ``"cuda"`` (:func:`cuda_on_cpu`)
TORCH_FACTORIES: tuple[str, ...] = (
    "empty", "zeros", "ones", "full", "rand", "randn", "randint", "arange", "linspace", "tensor", "as_tensor",
    "empty_strided", "empty_like", "zeros_like", "ones_like", "full_like", "rand_like", "randn_like", "eye",
)


def _cpu_device(device: Any) -> Any:
    """``device`` with a CUDA device replaced by the CPU (strings, ``torch.device``, ordinals)."""
    import torch

    if isinstance(device, int) and not isinstance(device, bool):
        return torch.device("cpu")
    if isinstance(device, (str, torch.device)) and torch.device(device).type == "cuda":
        return torch.device("cpu")
    return device


@contextlib.contextmanager
def cuda_on_cpu() -> Iterator[None]:
    """For the ``with`` block, process-wide: CUDA allocations land on the CPU. The ``device=`` of torch's
    factory functions (:data:`TORCH_FACTORIES`), ``Tensor.to("cuda")``/``.to(device=...)``,
    ``Tensor.cuda()``/``new_*`` and ``Tensor.is_cuda`` (true for CPU tensors) are replaced; restored after.
    Code that imported a factory by name before the block (``from torch import empty``) is not reached."""
    import torch

    patches: list[tuple[Any, str, Any]] = []

    def patch(obj: Any, attr: str, value: Any) -> None:
        patches.append((obj, attr, obj.__dict__.get(attr, _MISSING) if isinstance(obj, type) else getattr(obj, attr)))
        setattr(obj, attr, value)

    def factory(real: Callable[..., Any]) -> Callable[..., Any]:
        def fn(*args: Any, **kwargs: Any) -> Any:
            if "device" in kwargs:
                kwargs["device"] = _cpu_device(kwargs["device"])
            return real(*args, **kwargs)

        fn.__wrapped__ = real  # type: ignore[attr-defined]
        return fn

    for name in TORCH_FACTORIES:
        if hasattr(torch, name):
            patch(torch, name, factory(getattr(torch, name)))
    real_to = torch.Tensor.to

    def to(self: Any, *args: Any, **kwargs: Any) -> Any:
        args = tuple(_cpu_device(a) if isinstance(a, (str, torch.device)) else a for a in args)
        if "device" in kwargs:
            kwargs["device"] = _cpu_device(kwargs["device"])
        return real_to(self, *args, **kwargs)

    patch(torch.Tensor, "to", to)
    patch(torch.Tensor, "cuda", lambda self, *a, **k: self)
    patch(torch.Tensor, "is_cuda", property(lambda self: self.device.type in ("cpu", "cuda")))
    for name in ("new_empty", "new_zeros", "new_ones", "new_full", "new_tensor"):
        patch(torch.Tensor, name, factory(getattr(torch.Tensor, name)))
    try:
        yield
    finally:
        for obj, attr, value in reversed(patches):
            if value is _MISSING:
                delattr(obj, attr)
            else:
                setattr(obj, attr, value)


_MISSING = object()
