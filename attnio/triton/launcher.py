"""A user's launcher as attnio calls it: :func:`resolve` turns a Python function, a ``torch.autograd.Function``
subclass or its ``.apply`` into a :class:`Launcher`: the callable, its parameters, and which of attnio's inputs
each parameter receives.

attnio's inputs are named by :data:`INPUTS` (q, k, v, o; backward do, lse, dq, dk, dv; varlen cu_seqlens,
max_seqlen; paged k_cache, v_cache, block_table, seq_lens, kv_indices, kv_indptr; causal, sm_scale, scale, workload). A parameter with one of these names receives it; any other name
is mapped by ``args`` (launcher parameter -> attnio input, e.g. ``{"query": "q", "q_ptr": "q"}``) or, when
``args`` is not given, by the launcher's ``attnio_args`` attribute (set by the kernel's author). A parameter that
is neither known nor mapped must have a default.

An autograd ``Function`` is called through ``.apply`` with positional arguments in the order of its
``forward(ctx, ...)`` (``apply`` takes no keywords before torch 2.x's binding), its defaults filled in.

Imports neither Triton nor torch.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from attnio.core.errors import InvalidParameter

FORWARD_TENSORS = ("q", "k", "v", "o")
BACKWARD_TENSORS = ("q", "k", "v", "o", "do", "lse", "dq", "dk", "dv")
VARLEN = ("cu_seqlens", "max_seqlen")
PAGED = ("k_cache", "v_cache", "block_table", "seq_lens", "kv_indices", "kv_indptr")
OTHER_PARAMS = ("causal", "sm_scale", "scale", "workload")
#: every input attnio can pass a launcher
INPUTS = BACKWARD_TENSORS + VARLEN + PAGED + OTHER_PARAMS


@dataclass(frozen=True)
class Launcher:
    """``fn`` called with ``params`` (launcher parameter -> attnio input), positionally in ``order`` when
    ``positional`` (an autograd Function's apply), else by keyword; ``defaults``: the defaults of the
    positional parameters attnio does not fill."""

    name: str
    fn: Callable[..., Any]
    params: dict[str, str]
    order: tuple[str, ...] = ()
    positional: bool = False
    defaults: tuple[tuple[str, Any], ...] = ()

    @property
    def inputs(self) -> tuple[str, ...]:
        """attnio's inputs the launcher takes (each once, in :data:`INPUTS` order)."""
        got = set(self.params.values())
        return tuple(n for n in INPUTS if n in got)

    def names_of(self, attnio_name: str) -> list[str]:
        """The launcher's parameters that receive ``attnio_name``."""
        return [p for p, a in self.params.items() if a == attnio_name]

    def call(self, values: dict[str, Any]) -> Any:
        """Call the launcher with attnio's ``values`` (attnio input -> value)."""
        if self.positional:
            dflt = dict(self.defaults)
            return self.fn(*(values[self.params[p]] if p in self.params else dflt[p] for p in self.order))
        return self.fn(**{p: values[a] for p, a in self.params.items()})


def _autograd_function(obj: Any) -> Any:
    """The ``torch.autograd.Function`` subclass behind ``obj`` (the class or its bound ``apply``), or None."""
    cls = obj if isinstance(obj, type) else getattr(obj, "__self__", None)
    if not isinstance(cls, type) or (obj is not cls and getattr(obj, "__name__", "") != "apply"):
        return None
    if any(b.__name__ == "Function" and b.__module__.startswith("torch.autograd") for b in cls.__mro__[1:]):
        return cls
    return None


def resolve(launch: Any, args: dict[str, str] | None = None) -> Launcher:
    """The :class:`Launcher` for ``launch`` with the mapping ``args`` (default: ``launch.attnio_args``); a bad
    signature or mapping is an InvalidParameter naming the launcher and the parameter."""
    fcls = _autograd_function(launch)
    name = getattr(fcls or launch, "__qualname__", None) or getattr(launch, "__name__", repr(launch))
    if args is None:
        args = getattr(launch, "attnio_args", None) or (getattr(fcls, "attnio_args", None) if fcls else None) or {}
    args = dict(args)
    for p, a in args.items():
        if not isinstance(p, str) or not isinstance(a, str):
            raise InvalidParameter("args", f"{p!r}: {a!r}", "launcher parameter -> attnio input (both strings)")
        if a not in INPUTS:
            raise InvalidParameter("args", f"{p}={a}", f"an attnio input among {', '.join(INPUTS)}")
    try:
        sig = inspect.signature(fcls.forward if fcls else launch)
    except (TypeError, ValueError):
        raise InvalidParameter("launch", name, "a Python function (a launcher) or a torch.autograd.Function") from None
    params = list(sig.parameters.values())
    if fcls:
        params = params[1:]  # forward(ctx, ...)
    names = {p.name for p in params}
    for p in args:
        if p not in names:
            raise InvalidParameter("args", f"{p}={args[p]}",
                                   f"a parameter of launcher {name!r}: it has {', '.join(sorted(names)) or 'none'}")
    mapped: dict[str, str] = {}
    defaults: list[tuple[str, Any]] = []
    for p in params:
        if p.kind in (p.VAR_KEYWORD, p.VAR_POSITIONAL):
            continue
        if p.name in args:
            mapped[p.name] = args[p.name]
        elif p.name in INPUTS:
            mapped[p.name] = p.name
        elif p.default is not inspect.Parameter.empty:
            defaults.append((p.name, p.default))
        else:
            raise InvalidParameter(
                "launch", f"{name} parameter {p.name!r}",
                f"parameters named among {', '.join(INPUTS)}, mapped to one (args={{'{p.name}': 'q'}}, "
                f"--arg {p.name}=q, or the launcher's attnio_args), or with defaults",
            )
    lau = Launcher(name, fcls.apply if fcls else launch, mapped, tuple(p.name for p in params
                   if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)), fcls is not None, tuple(defaults))
    if not any(n in lau.inputs for n in ("q", "k", "v")):
        raise InvalidParameter("launch", name, "a launcher taking q, k and v (map its names with args=)")
    return lau
