"""A small symbolic expression language for I/O bounds and cost formulas.

Why not SymPy: attnio needs exactly four operations on a formula: evaluate it exactly at integer points,
translate it to z3/cvc5, print it, and compare it structurally. This module does those with plain frozen
dataclasses, so a formula is data, never a string (``sympify("N")`` is a SymPy built-in, not a symbol).

Symbols come only from :func:`bounds.symbols.sym`. Build expressions with Python operators::

    >>> from attnio.bounds.symbols import N, d, M
    >>> e = N**2 * d**2 / M
    >>> str(e)
    'N^2·d^2/M'
    >>> evaluate(e, {"N": 1024, "d": 64, "M": 16384})
    Fraction(262144, 1)
    >>> evaluate(floor(sqrt(M / 4)), {"M": 4096})
    Fraction(32, 1)

Relations (``<=``, ``<``, ``>=``, ``>``) build :class:`Rel` objects used in regimes and claims; ``==``
stays structural equality, so expressions can be dictionary keys. Use :func:`eq` for an equation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

Number = int | Fraction


class Expr:
    """Base of every expression node. Nodes are frozen dataclasses."""

    __slots__ = ()

    # arithmetic -------------------------------------------------------------------------------
    def __add__(self, o: ExprLike) -> Expr:
        return add(self, o)

    def __radd__(self, o: ExprLike) -> Expr:
        return add(o, self)

    def __sub__(self, o: ExprLike) -> Expr:
        return add(self, mul(-1, o))

    def __rsub__(self, o: ExprLike) -> Expr:
        return add(o, mul(-1, self))

    def __mul__(self, o: ExprLike) -> Expr:
        return mul(self, o)

    def __rmul__(self, o: ExprLike) -> Expr:
        return mul(o, self)

    def __truediv__(self, o: ExprLike) -> Expr:
        return div(self, o)

    def __rtruediv__(self, o: ExprLike) -> Expr:
        return div(o, self)

    def __neg__(self) -> Expr:
        return mul(-1, self)

    def __pow__(self, k: int) -> Expr:
        if not isinstance(k, int) or isinstance(k, bool):
            raise TypeError("only integer powers are supported; use sqrt() for square roots")
        return Pow(self, k) if k != 1 else self

    # relations --------------------------------------------------------------------------------
    def __le__(self, o: ExprLike) -> Rel:  # type: ignore[override]
        return Rel("<=", self, as_expr(o))

    def __lt__(self, o: ExprLike) -> Rel:  # type: ignore[override]
        return Rel("<", self, as_expr(o))

    def __ge__(self, o: ExprLike) -> Rel:  # type: ignore[override]
        return Rel("<=", as_expr(o), self)

    def __gt__(self, o: ExprLike) -> Rel:  # type: ignore[override]
        return Rel("<", as_expr(o), self)

    def __str__(self) -> str:
        return to_text(self)


ExprLike = Expr | int | Fraction


@dataclass(frozen=True, eq=True)
class Sym(Expr):
    """A parameter. ``integer`` and ``lo`` are its domain: every symbol is >= lo (lo >= 1 by default)."""

    name: str
    integer: bool = True
    lo: Fraction = Fraction(1)

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True, eq=True)
class Const(Expr):
    value: Fraction

    def __repr__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, eq=True)
class Add(Expr):
    terms: tuple[Expr, ...]


@dataclass(frozen=True, eq=True)
class Mul(Expr):
    factors: tuple[Expr, ...]


@dataclass(frozen=True, eq=True)
class Div(Expr):
    num: Expr
    den: Expr


@dataclass(frozen=True, eq=True)
class Pow(Expr):
    base: Expr
    exp: int


@dataclass(frozen=True, eq=True)
class Sqrt(Expr):
    arg: Expr


@dataclass(frozen=True, eq=True)
class Floor(Expr):
    arg: Expr


@dataclass(frozen=True, eq=True)
class Ceil(Expr):
    arg: Expr


@dataclass(frozen=True, eq=True)
class Min(Expr):
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=True)
class Max(Expr):
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=True)
class Log2(Expr):
    arg: Expr


@dataclass(frozen=True, eq=True)
class Rel:
    """``lhs op rhs`` with op one of ``<=``, ``<``, ``==``."""

    op: str
    lhs: Expr
    rhs: Expr

    def __post_init__(self) -> None:
        assert self.op in ("<=", "<", "=="), self.op

    def __str__(self) -> str:
        op = {"<=": "≤", "<": "<", "==": "="}[self.op]
        return f"{to_text(self.lhs)} {op} {to_text(self.rhs)}"

    def holds(self, env: Mapping[str, Number]) -> bool:
        a, b = evaluate(self.lhs, env), evaluate(self.rhs, env)
        return {"<=": a <= b, "<": a < b, "==": a == b}[self.op]


def _cached_hash(self: object) -> int:
    """The dataclass hash of a node, computed once: nodes are immutable trees, and the generated hash walks the
    whole tree on every call (the solver's translation caches look nodes up by value, over and over)."""
    h = self.__dict__.get("_hash")
    if h is None:
        h = self._tree_hash()  # type: ignore[attr-defined]
        object.__setattr__(self, "_hash", h)
    return h


def _getstate(self: object) -> dict:
    # a cached hash is per process (str hashes are salted): never carried by pickle or copy
    return {k: v for k, v in self.__dict__.items() if k != "_hash"}


def _setstate(self: object, state: dict) -> None:
    for k, v in state.items():
        object.__setattr__(self, k, v)


for _cls in (Sym, Const, Add, Mul, Div, Pow, Sqrt, Floor, Ceil, Min, Max, Log2, Rel):
    _cls._tree_hash = _cls.__hash__  # type: ignore[attr-defined]
    _cls.__hash__ = _cached_hash  # type: ignore[method-assign,assignment]
    _cls.__getstate__ = _getstate  # type: ignore[attr-defined]
    _cls.__setstate__ = _setstate  # type: ignore[attr-defined]


# constructors ---------------------------------------------------------------------------------


def as_expr(x: ExprLike) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, bool):
        raise TypeError("booleans are not expressions")
    if isinstance(x, int | Fraction):
        return Const(Fraction(x))
    raise TypeError(f"cannot use {x!r} ({type(x).__name__}) in an expression; use int or Fraction")


def const(x: int | Fraction | str) -> Const:
    """An exact rational constant: ``const("1/8")``, ``const(Fraction(3, 2))``, ``const(4)``."""
    return Const(Fraction(x))


def add(*xs: ExprLike) -> Expr:
    terms: list[Expr] = []
    c = Fraction(0)
    for x in map(as_expr, xs):
        if isinstance(x, Add):
            for t in x.terms:
                if isinstance(t, Const):
                    c += t.value
                else:
                    terms.append(t)
        elif isinstance(x, Const):
            c += x.value
        else:
            terms.append(x)
    terms = _collect_like_terms(terms)
    if c != 0 or not terms:
        terms.append(Const(c))
    return terms[0] if len(terms) == 1 else Add(tuple(terms))


def _split_coefficient(t: Expr) -> tuple[Fraction, Expr]:
    if isinstance(t, Mul) and isinstance(t.factors[0], Const):
        rest = t.factors[1:]
        return t.factors[0].value, rest[0] if len(rest) == 1 else Mul(rest)
    return Fraction(1), t


def _collect_like_terms(terms: list[Expr]) -> list[Expr]:
    """N·d + N·d -> 2·N·d (structurally identical terms only, in order of first appearance)."""
    coef: dict[Expr, Fraction] = {}
    for t in terms:
        c, key = _split_coefficient(t)
        coef[key] = coef.get(key, Fraction(0)) + c
    return [mul(c, key) for key, c in coef.items() if c != 0]


def mul(*xs: ExprLike) -> Expr:
    factors: list[Expr] = []
    c = Fraction(1)
    for x in map(as_expr, xs):
        if isinstance(x, Mul):
            for f in x.factors:
                if isinstance(f, Const):
                    c *= f.value
                else:
                    factors.append(f)
        elif isinstance(x, Const):
            c *= x.value
        else:
            factors.append(x)
    if c == 0:
        return Const(Fraction(0))
    if c != 1 or not factors:
        factors.insert(0, Const(c))
    return factors[0] if len(factors) == 1 else Mul(tuple(factors))


def div(a: ExprLike, b: ExprLike) -> Expr:
    a, b = as_expr(a), as_expr(b)
    if isinstance(b, Const):
        if b.value == 0:
            raise ZeroDivisionError("division by the constant 0")
        return mul(Const(1 / b.value), a)
    return Div(a, b)


def sqrt(x: ExprLike) -> Expr:
    return Sqrt(as_expr(x))


def floor(x: ExprLike) -> Expr:
    return Floor(as_expr(x))


def ceil(x: ExprLike) -> Expr:
    return Ceil(as_expr(x))


def minimum(*xs: ExprLike) -> Expr:
    args = tuple(dict.fromkeys(map(as_expr, xs)))  # min(d, d) = d
    return Min(args) if len(args) > 1 else args[0]


def maximum(*xs: ExprLike) -> Expr:
    args = tuple(dict.fromkeys(map(as_expr, xs)))  # max(d, d) = d
    return Max(args) if len(args) > 1 else args[0]


def log2(x: ExprLike) -> Expr:
    return Log2(as_expr(x))


def eq(a: ExprLike, b: ExprLike) -> Rel:
    return Rel("==", as_expr(a), as_expr(b))


# evaluation -------------------------------------------------------------------------------------


def evaluate(e: Expr, env: Mapping[str, Number]) -> Fraction | float:
    """Evaluate exactly: a ``Fraction`` whenever the value is rational (floors and ceilings of square roots
    are exact integers), a ``float`` only for irrational square roots and logarithms outside floor/ceil."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Sym):
        if e.name not in env:
            raise KeyError(f"no value given for symbol {e.name}")
        v = env[e.name]
        return Fraction(v) if isinstance(v, int | Fraction) else v
    if isinstance(e, Add):
        return sum((evaluate(t, env) for t in e.terms), Fraction(0))
    if isinstance(e, Mul):
        out: Fraction | float = Fraction(1)
        for f in e.factors:
            out = out * evaluate(f, env)
        return out
    if isinstance(e, Div):
        den = evaluate(e.den, env)
        if den == 0:
            raise ZeroDivisionError(f"denominator {to_text(e.den)} is 0")
        return evaluate(e.num, env) / den
    if isinstance(e, Pow):
        return evaluate(e.base, env) ** e.exp
    if isinstance(e, Sqrt):
        x = evaluate(e.arg, env)
        exact = _exact_sqrt(x)
        return exact if exact is not None else math.sqrt(x)
    if isinstance(e, Floor | Ceil):
        return Fraction(_floor_or_ceil(e, env))
    if isinstance(e, Min):
        return min(evaluate(a, env) for a in e.args)
    if isinstance(e, Max):
        return max(evaluate(a, env) for a in e.args)
    if isinstance(e, Log2):
        x = evaluate(e.arg, env)
        if isinstance(x, Fraction) and x.denominator == 1 and x > 0 and (x.numerator & (x.numerator - 1)) == 0:
            return Fraction(x.numerator.bit_length() - 1)
        return math.log2(x)
    raise TypeError(f"unknown expression node {type(e).__name__}")


def evaluate_int(e: Expr, env: Mapping[str, Number]) -> int:
    """Evaluate an expression that must be an integer (an exact count)."""
    v = evaluate(e, env)
    if not (isinstance(v, Fraction) and v.denominator == 1):
        raise ValueError(f"{to_text(e)} is not an integer at {dict(env)}: {v}")
    return int(v)


def _exact_sqrt(x: Fraction | float) -> Fraction | None:
    if not isinstance(x, Fraction) or x < 0:
        return None
    p, q = math.isqrt(x.numerator), math.isqrt(x.denominator)
    if p * p == x.numerator and q * q == x.denominator:
        return Fraction(p, q)
    return None


def _floor_or_ceil(e: Floor | Ceil, env: Mapping[str, Number]) -> int:
    if isinstance(e.arg, Sqrt):
        x = evaluate(e.arg.arg, env)
        if isinstance(x, Fraction):
            if x < 0:
                raise ValueError(f"square root of a negative value {x}")
            # floor(sqrt(p/q)) = floor(sqrt(p*q)/q) = isqrt(p*q) // q, exactly.
            lo = math.isqrt(x.numerator * x.denominator) // x.denominator
            if isinstance(e, Floor):
                return lo
            return lo if Fraction(lo) ** 2 == x else lo + 1
    v = evaluate(e.arg, env)
    if isinstance(v, Fraction):
        return math.floor(v) if isinstance(e, Floor) else math.ceil(v)
    r = round(v)
    if abs(v - r) < 1e-9 * max(1.0, abs(v)):
        raise ValueError(f"cannot round {to_text(e.arg)}={v!r} exactly in floating point")
    return math.floor(v) if isinstance(e, Floor) else math.ceil(v)


# structure -----------------------------------------------------------------------------------


def free_symbols(e: Expr | Rel) -> frozenset[Sym]:
    if isinstance(e, Rel):
        return free_symbols(e.lhs) | free_symbols(e.rhs)
    if isinstance(e, Sym):
        return frozenset([e])
    return frozenset().union(*(free_symbols(c) for c in children(e)))


def children(e: Expr) -> tuple[Expr, ...]:
    if isinstance(e, Add):
        return e.terms
    if isinstance(e, Mul):
        return e.factors
    if isinstance(e, Div):
        return (e.num, e.den)
    if isinstance(e, Pow):
        return (e.base,)
    if isinstance(e, Sqrt | Floor | Ceil | Log2):
        return (e.arg,)
    if isinstance(e, Min | Max):
        return e.args
    return ()


def substitute(e: Expr, mapping: Mapping[Sym, ExprLike]) -> Expr:
    """Replace symbols by expressions, rebuilding (and so re-simplifying constants)."""
    if isinstance(e, Sym):
        return as_expr(mapping[e]) if e in mapping else e
    if isinstance(e, Const):
        return e
    if isinstance(e, Add):
        return add(*(substitute(t, mapping) for t in e.terms))
    if isinstance(e, Mul):
        return mul(*(substitute(f, mapping) for f in e.factors))
    if isinstance(e, Div):
        return div(substitute(e.num, mapping), substitute(e.den, mapping))
    if isinstance(e, Pow):
        return Pow(substitute(e.base, mapping), e.exp)
    if isinstance(e, Sqrt):
        return Sqrt(substitute(e.arg, mapping))
    if isinstance(e, Floor):
        return Floor(substitute(e.arg, mapping))
    if isinstance(e, Ceil):
        return Ceil(substitute(e.arg, mapping))
    if isinstance(e, Log2):
        return Log2(substitute(e.arg, mapping))
    if isinstance(e, Min):
        return minimum(*(substitute(a, mapping) for a in e.args))
    if isinstance(e, Max):
        return maximum(*(substitute(a, mapping) for a in e.args))
    raise TypeError(type(e).__name__)


def substitute_rel(r: Rel, mapping: Mapping[Sym, ExprLike]) -> Rel:
    return Rel(r.op, substitute(r.lhs, mapping), substitute(r.rhs, mapping))


def to_json(e: Expr | Rel) -> object:
    """A structural, JSON-ready form: the regression gate compares these, never printed strings."""
    if isinstance(e, Rel):
        return [e.op, to_json(e.lhs), to_json(e.rhs)]
    if isinstance(e, Sym):
        return ["sym", e.name]
    if isinstance(e, Const):
        return ["const", str(e.value)]
    if isinstance(e, Pow):
        return ["pow", to_json(e.base), e.exp]
    return [type(e).__name__.lower(), *(to_json(c) for c in children(e))]


# printing ----------------------------------------------------------------------------------------

_PREC = {Add: 1, Mul: 2, Div: 2, Pow: 3}


def to_text(e: Expr) -> str:
    """Readable unicode form, for people. Never parsed back."""
    if isinstance(e, Sym):
        return e.name
    if isinstance(e, Const):
        v = e.value
        return ("−" if v < 0 else "") + (str(-v.numerator if v < 0 else v.numerator) if v.denominator == 1 else f"{abs(v.numerator)}/{v.denominator}")
    if isinstance(e, Add):
        out = ""
        for i, t in enumerate(e.terms):
            s = _wrap(t, 1)
            neg = isinstance(t, Const) and t.value < 0
            if isinstance(t, Mul) and isinstance(t.factors[0], Const) and t.factors[0].value < 0:
                neg = True
                s = _wrap(mul(-1, t), 2)  # a − (b + c) keeps its parentheses
            elif neg:
                s = to_text(Const(-t.value))
            out += (" − " if neg else " + ") + s if i else ("−" + s if neg else s)
        return out
    if isinstance(e, Mul):
        fs = list(e.factors)
        num = [f for f in fs if not (isinstance(f, Const) and f.value.denominator != 1 and f.value.numerator == 1)]
        if isinstance(fs[0], Const) and fs[0].value < 0:  # −N·d, −3·N, −3·N/2: one minus sign, in front
            return "−" + _wrap(mul(-1, e), 2)
        if isinstance(fs[0], Const) and fs[0].value.denominator != 1:
            c = fs[0].value
            rest = fs[1:]
            body = "·".join(_wrap(f, 2) for f in rest)
            if c.numerator == 1:
                return f"{body}/{c.denominator}"
            return f"{c.numerator}·{body}/{c.denominator}"
        return "·".join(_wrap(f, 2) for f in num)
    if isinstance(e, Div):
        return f"{_wrap(e.num, 2)}/{_wrap(e.den, 3)}"
    if isinstance(e, Pow):
        return f"{_wrap(e.base, 4)}^{e.exp}"
    if isinstance(e, Sqrt):
        return f"√({to_text(e.arg)})" if not isinstance(e.arg, Sym) else f"√{e.arg.name}"
    if isinstance(e, Floor):
        return f"⌊{to_text(e.arg)}⌋"
    if isinstance(e, Ceil):
        return f"⌈{to_text(e.arg)}⌉"
    if isinstance(e, Min):
        return "min(" + ", ".join(map(to_text, e.args)) + ")"
    if isinstance(e, Max):
        return "max(" + ", ".join(map(to_text, e.args)) + ")"
    if isinstance(e, Log2):
        return f"log₂({to_text(e.arg)})"
    raise TypeError(type(e).__name__)


def _wrap(e: Expr, prec: int) -> str:
    p = _PREC.get(type(e), 5)
    if isinstance(e, Const) and (e.value < 0 or e.value.denominator != 1):
        p = 1
    s = to_text(e)
    return f"({s})" if p < prec or (prec == 3 and isinstance(e, Div | Mul)) else s
