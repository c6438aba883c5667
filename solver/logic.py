"""Propositional glue over :class:`bounds.expr.Rel`: conjunction, disjunction, negation, equivalence.

Claims need more than one relation (a regime family covers the space: an ``Any`` of regimes; a crossover is an
``Iff``). These nodes are plain frozen data, like the expressions, and are evaluated exactly by :func:`holds`.

>>> from attnio.bounds.symbols import M, d
>>> f = Iff(M <= d**2, Neg(d**2 < M))
>>> holds(f, {"M": 5, "d": 2})
True
>>> to_text(All((M <= d**2, 1 <= M)))
'(M ≤ d^2 ∧ 1 ≤ M)'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from attnio.bounds.expr import Number, Rel, free_symbols


@dataclass(frozen=True)
class All:
    parts: tuple[Formula, ...]


@dataclass(frozen=True)
class Any:
    parts: tuple[Formula, ...]


@dataclass(frozen=True)
class Neg:
    part: Formula


@dataclass(frozen=True)
class Iff:
    lhs: Formula
    rhs: Formula


Formula = Rel | All | Any | Neg | Iff


def holds(f: Formula, env: Mapping[str, Number]) -> bool:
    """Exact truth value at a point (raises ZeroDivisionError where an expression is undefined)."""
    if isinstance(f, Rel):
        return f.holds(env)
    if isinstance(f, All):
        return all(holds(p, env) for p in f.parts)
    if isinstance(f, Any):
        return any(holds(p, env) for p in f.parts)
    if isinstance(f, Neg):
        return not holds(f.part, env)
    if isinstance(f, Iff):
        return holds(f.lhs, env) == holds(f.rhs, env)
    raise TypeError(type(f).__name__)


def symbols_of(f: Formula) -> frozenset:
    if isinstance(f, Rel):
        return free_symbols(f)
    if isinstance(f, All | Any):
        return frozenset().union(*(symbols_of(p) for p in f.parts))
    if isinstance(f, Neg):
        return symbols_of(f.part)
    if isinstance(f, Iff):
        return symbols_of(f.lhs) | symbols_of(f.rhs)
    raise TypeError(type(f).__name__)


def to_text(f: Formula) -> str:
    if isinstance(f, Rel):
        return str(f)
    if isinstance(f, All):
        return "(" + " ∧ ".join(map(to_text, f.parts)) + ")"
    if isinstance(f, Any):
        return "(" + " ∨ ".join(map(to_text, f.parts)) + ")"
    if isinstance(f, Neg):
        return "¬" + to_text(f.part)
    if isinstance(f, Iff):
        return f"({to_text(f.lhs)} ⇔ {to_text(f.rhs)})"
    raise TypeError(type(f).__name__)
