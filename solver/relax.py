"""Monotone relaxation: floor/ceiling-free lower and upper envelopes of an expression.

``relax(e, "lower")`` returns an expression L without floors or ceilings with ``L ≤ e`` wherever e is defined
and its symbols are in their domains; ``relax(e, "upper")`` an U with ``e ≤ U``. It is used to prove
``lb ≤ cost`` as the floor-free ``lb ≤ relax(cost, "lower")`` (a continuous problem the solvers decide in
milliseconds); if the relaxed claim is not proved, the engine falls back to the exact encoding.

Why it is sound (each rule is a monotonicity fact; ``exact`` means floor/ceiling-free):

- ``⌈x⌉``: x ≤ ⌈x⌉ ≤ x + 1, and ``⌈p/q⌉ ≤ (p + q − 1)/q`` for integer p, q ≥ 1;
  ``⌊x⌋``: x − 1 ≤ ⌊x⌋ ≤ x (``(p − q + 1)/q ≤ ⌊p/q⌋``); ⌊√x⌋ ≤ √x;
- sums: termwise; a negative constant factor swaps lower and upper;
- products: only when at most one factor is not exact and the product of the exact ones is syntactically
  non-negative (symbols have lo ≥ 0); then L(f)·rest ≤ f·rest because rest ≥ 0, whatever the sign of L(f);
- ``p/q``: with p exact and syntactically non-negative, ``p/U(q) ≤ p/q ≤ p/L(q)`` (when the envelope of q is
  positive; the engine proves every denominator of the relaxed claim positive, as for any claim);
  with q exact and syntactically positive, ``L(p)/q ≤ p/q``;
- min, max: componentwise; √ of an exact argument, and otherwise not relaxed.

Anything else is returned unchanged (so the result may still contain floors; it is then no easier).
tests/test_solver.py checks ``relax(e, lower) ≤ e ≤ relax(e, upper)`` on every cost formula at random integer
points.

>>> from attnio.bounds.symbols import N, d, M
>>> from attnio.bounds.expr import ceil, floor
>>> str(relax(N * d * ceil(N / floor((M - d) / (2 * d + 4))), "lower"))
'N/((M − d)/(2·d + 4))·N·d'
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.expr import (
    Add,
    Ceil,
    Const,
    Div,
    Expr,
    Floor,
    Log2,
    Max,
    Min,
    Mul,
    Pow,
    Sqrt,
    Sym,
    add,
    children,
    div,
    mul,
)
from attnio.solver.translator import as_ratio
from attnio.solver.translator import syntactically_nonneg as nonneg
from attnio.solver.translator import syntactically_positive as positive

_FLIP = {"lower": "upper", "upper": "lower"}


def is_exact(e: Expr) -> bool:
    if isinstance(e, Floor | Ceil):
        return False
    return all(is_exact(c) for c in children(e))


def relax(e: Expr, side: str) -> Expr:
    assert side in _FLIP, side
    if is_exact(e):
        return e
    if isinstance(e, Add):
        return add(*(relax(t, side) for t in e.terms))
    if isinstance(e, Mul):
        c = e.factors[0].value if isinstance(e.factors[0], Const) else Fraction(1)
        rest = e.factors[1:] if isinstance(e.factors[0], Const) else e.factors
        s = side if c >= 0 else _FLIP[side]
        inexact = [f for f in rest if not is_exact(f)]
        exact = [f for f in rest if is_exact(f)]
        if len(inexact) == 1 and all(nonneg(f) for f in exact):
            return mul(c, relax(inexact[0], s), *exact)
        return e
    if isinstance(e, Div):
        if is_exact(e.num) and nonneg(e.num):
            return div(e.num, relax(e.den, _FLIP[side]))
        if is_exact(e.den) and positive(e.den):
            return div(relax(e.num, side), e.den)
        return e
    if isinstance(e, Ceil):
        if side == "lower":
            return relax(e.arg, "lower")
        r = as_ratio(e.arg)
        if r is not None and is_exact(r[0]) and is_exact(r[1]) and positive(r[1]):
            return div(r[0] + r[1] - 1, r[1])
        return add(relax(e.arg, "upper"), 1)
    if isinstance(e, Floor):
        if isinstance(e.arg, Sqrt) and is_exact(e.arg.arg) and side == "upper":
            return e.arg
        if side == "upper":
            return relax(e.arg, "upper")
        r = as_ratio(e.arg)
        if r is not None and is_exact(r[0]) and is_exact(r[1]) and positive(r[1]):
            return div(r[0] - r[1] + 1, r[1])
        if isinstance(e.arg, Sqrt):
            return e  # a lower envelope of ⌊√x⌋ would need √x − 1; keep it exact
        return add(relax(e.arg, "lower"), -1)
    if isinstance(e, Min):
        return Min(tuple(relax(a, side) for a in e.args))
    if isinstance(e, Max):
        return Max(tuple(relax(a, side) for a in e.args))
    if isinstance(e, Pow | Sqrt | Log2):
        return e
    return e


def flatten(e):
    """``p/(a/b)`` → ``p·b/a`` wherever b is syntactically positive, in every sub-expression and relation of e (a
    Rel or a logic formula is rebuilt part by part). The same value wherever e is defined (b > 0 and a/b > 0 give
    a > 0); one division instead of two nested ones. Used only for cvc5's second opinion (solver/verify.py), whose
    coverings decide some relaxed goals far more easily in this form, and others less easily in it.

    >>> from attnio.bounds.symbols import N, d, M
    >>> str(flatten(N / ((M - d) / (2 * d + 4))))
    'N·(2·d + 4)/(M − d)'
    """
    from dataclasses import fields, is_dataclass, replace

    from attnio.bounds.expr import Rel

    if isinstance(e, Div):
        num, den = flatten(e.num), flatten(e.den)
        if isinstance(den, Div) and positive(den.den):
            return div(mul(num, den.den), den.num)
        return div(num, den)
    if isinstance(e, Expr) and not isinstance(e, Const | Sym):
        kids = children(e)
        new = tuple(flatten(k) for k in kids)
        if new == tuple(kids):
            return e
        if isinstance(e, Add):
            return add(*new)
        if isinstance(e, Mul):
            return mul(*new)
        if isinstance(e, Min | Max):
            return type(e)(new)
        return replace(e, **{f.name: v for f, v in zip((f for f in fields(e) if isinstance(getattr(e, f.name), Expr)), new, strict=False)})
    if isinstance(e, Rel):
        return Rel(e.op, flatten(e.lhs), flatten(e.rhs))
    if is_dataclass(e) and not isinstance(e, Expr):
        changes = {}
        for f in fields(e):
            v = getattr(e, f.name)
            if isinstance(v, tuple):
                changes[f.name] = tuple(flatten(x) for x in v)
            elif is_dataclass(v):
                changes[f.name] = flatten(v)
        return replace(e, **changes) if changes else e
    return e

