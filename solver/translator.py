"""The one translator from :mod:`attnio.bounds.expr` (and :mod:`attnio.solver.logic`) to z3 or cvc5 terms.

Encoding (every auxiliary constraint is a *true fact about the true value*, so a proof over the encoding is a
proof about the formula; the encoding may only over-approximate, never exclude a real behaviour):

- symbols: reals ``≥ lo`` (``mode="real"``, the default), or integers for integer symbols (``mode="int"``,
  used only to re-check a counterexample found over the reals);
- ``√x``: a fresh ``s ≥ 0`` with ``s² = x``; ``x ≥ 0`` is recorded as a side condition;
- ``⌊x⌋``, ``⌈x⌉``: a fresh ``c`` bracketing x (``x − 1 < c ≤ x``, resp. ``x ≤ c < x + 1``), plus
  ``x ≥ 1 ⇒ c ≥ 1`` (and ``x > 0 ⇒ ⌈x⌉ ≥ 1``); when x = p/q with integer-valued p, q the bracket is tightened to
  ``(p − q + 1)/q ≤ ⌊p/q⌋`` and ``⌈p/q⌉ ≤ (p + q − 1)/q`` (true for integers, q ≥ 1); for cvc5, an argument
  positive (non-negative) by its syntax gives ``c ≥ 1`` (``c ≥ 0``) outright; ``⌊√x⌋`` is encoded without
  a square root: ``c ≥ 0, c² ≤ x < (c + 1)²``. In ``mode="int"`` c is an integer, which makes the encoding exact.
  The same sub-expression always maps to the same fresh variable, so nested floors are bracketed inner first;
- ``min``/``max``: ``If``;
- ``log₂ x``: a fresh L with sound brackets: ``x ≥ 2^k ⇒ L ≥ k``, ``x ≤ 2^k ⇒ L ≤ k``, the chord lower bound on
  each ``[2^k, 2^(k+1)]`` and tangent upper bounds at every ``2^k`` (log₂ is concave; 1/ln 2 < 14427/10000),
  for k = 0..LOG_RANGE;
- ``a/b``: real division; ``b > 0`` is recorded as a side condition (z3 and cvc5 treat x/0 as an unspecified
  value, so a model must never rest on it).

Side conditions (positive denominators, non-negative square-root arguments, positive logarithm arguments) are
returned separately, as solver terms (``side_conditions``) and as relations (``side_rels``, evaluated exactly
at a witness point): the caller proves ``hyps ⇒ side conditions`` as its own obligation
(:mod:`attnio.solver.engine`), so nothing rests on an unproved assumption.

Every translator owns a fresh solver context, so that a verdict does not depend on what an earlier obligation
left in the process (term ids and hash-consing order steer the solver's search).

>>> from attnio.bounds.symbols import N, M
>>> from attnio.bounds.expr import ceil, sqrt
>>> t = Translator("z3")
>>> str(t.expr(ceil(N / sqrt(M))))
'ceil_1'
>>> len(t.side_conditions)   # the denominator √M > 0 and the argument M ≥ 0
2
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

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
    Rel,
    Sqrt,
    Sym,
)
from attnio.solver import logic

LOG_RANGE = 48
INV_LN2_UPPER = Fraction(14427, 10000)  # 1/ln 2 = 1.442695... < 1.4427


def backend_module(name: str) -> Any:
    if name == "z3":
        import z3

        return z3
    if name == "cvc5":
        import cvc5.pythonic as cvc5p

        return cvc5p
    raise ValueError(f"unknown solver backend {name!r}")


def is_integer_valued(e: Expr) -> bool:
    """True when e is an integer at every point of its symbols' domains (sums/products/powers of integer
    symbols and integer constants, floors, ceilings, and min/max of such)."""
    if isinstance(e, Sym):
        return e.integer
    if isinstance(e, Const):
        return e.value.denominator == 1
    if isinstance(e, Add | Mul):
        parts = e.terms if isinstance(e, Add) else e.factors
        return all(is_integer_valued(p) for p in parts)
    if isinstance(e, Pow):
        return is_integer_valued(e.base)
    if isinstance(e, Floor | Ceil):
        return True
    if isinstance(e, Min | Max):
        return all(is_integer_valued(a) for a in e.args)
    return False


def as_ratio(e: Expr) -> tuple[Expr, Expr] | None:
    """``(p, q)`` with e = p/q, p and q integer-valued and q ≥ 1, or None."""
    if isinstance(e, Div) and is_integer_valued(e.num) and is_integer_valued(e.den):
        return e.num, e.den
    if isinstance(e, Mul) and isinstance(e.factors[0], Const):
        c = e.factors[0].value
        rest = Mul(e.factors[1:]) if len(e.factors) > 2 else e.factors[1]
        if c.denominator != 1 and is_integer_valued(rest):
            return Const(Fraction(c.numerator)) * rest, Const(Fraction(c.denominator))
    if is_integer_valued(e):
        return e, Const(Fraction(1))
    return None


def syntactically_nonneg(e: Expr) -> bool:
    """True when e ≥ 0 wherever it is defined, by its syntax alone (symbols with lo ≥ 0, non-negative constants,
    sums, products and quotients of such, even powers, square roots, floors and ceilings of such, a min of such,
    a max with one such argument)."""
    return _sign_known(e, strict=False)


def syntactically_positive(e: Expr) -> bool:
    """True when e > 0 wherever it is defined, by its syntax alone (as :func:`syntactically_nonneg`, strictly)."""
    return _sign_known(e, strict=True)


def _sign_known(e: Expr, strict: bool) -> bool:
    """e > 0 (``strict``) or e ≥ 0 wherever e is defined, by its syntax alone: one rule per node, the same for
    both but where they differ (a sum, a power, a square root, a floor)."""

    def ok(x: Expr) -> bool:
        return _sign_known(x, strict)

    if isinstance(e, Const):
        return e.value > 0 if strict else e.value >= 0
    if isinstance(e, Sym):
        return e.lo > 0 if strict else e.lo >= 0
    if isinstance(e, Add):  # > 0: every term ≥ 0 and one > 0
        return all(_sign_known(t, False) for t in e.terms) and (not strict or any(ok(t) for t in e.terms))
    if isinstance(e, Mul):
        return all(ok(f) for f in e.factors)
    if isinstance(e, Pow):  # an even power is ≥ 0 whatever its base
        return ok(e.base) or (not strict and e.exp % 2 == 0)
    if isinstance(e, Sqrt):  # √x ≥ 0 always, > 0 for x > 0
        return ok(e.arg) if strict else True
    if isinstance(e, Div):
        return ok(e.num) and ok(e.den)
    if isinstance(e, Floor):  # ⌊x⌋ may be 0 for x > 0
        return not strict and ok(e.arg)
    if isinstance(e, Ceil):
        return ok(e.arg)
    if isinstance(e, Min):
        return all(ok(a) for a in e.args)
    if isinstance(e, Max):
        return any(ok(a) for a in e.args)
    return False


_SCRATCH: dict[int, Any] = {}  # process id -> this process's scratch context


def _scratch_context(B: Any) -> Any:
    """A z3 context of this module's own, per process, for translations that are read and never solved (not z3's
    shared main context, which other code may solve in)."""
    import os

    pid = os.getpid()
    if pid not in _SCRATCH:
        _SCRATCH.clear()
        _SCRATCH[pid] = B.Context()
    return _SCRATCH[pid]


class Translator:
    """Translate expressions and formulas into one backend's terms, collecting auxiliary facts."""

    def __init__(self, backend: str = "z3", mode: str = "real", scratch: bool = False) -> None:
        """``scratch``: build terms in a scratch context kept for the process (:func:`_scratch_context`), for a
        translation that is only read (its ``side_rels``) and never given to a solver; a translation that is
        solved gets a context of its own (shared only by the obligations of one claim: engine.claim_scope)."""
        assert mode in ("real", "int"), mode
        self.backend = backend
        self.mode = mode
        self.B = backend_module(backend)
        self.ctx = _scratch_context(self.B) if scratch and backend == "z3" else self.B.Context()
        self.vars: dict[str, Any] = {}  # symbol name -> backend variable (Real or Int)
        self.real_of: dict[str, Any] = {}  # symbol name -> real-valued term
        self.facts: list[Any] = []  # true facts: symbol domains and auxiliary definitions
        self.side_conditions: list[tuple[str, Any]] = []  # (description, term): assumed, proved separately
        self.side_rels: list[Rel] = []  # the same conditions as exact relations
        self._cache: dict[Expr, Any] = {}
        self._side_seen: set[Rel] = set()
        self._guards: dict[int, Any] = {}  # id(fact) -> the definedness condition it needs (_defined_only)
        self._fresh = 0

    # helpers --------------------------------------------------------------------------------------
    def _q(self, v: Fraction) -> Any:
        R = self.B.RealVal
        return R(v.numerator, self.ctx) / R(v.denominator, self.ctx) if v.denominator != 1 else R(v.numerator, self.ctx)

    def true(self) -> Any:
        return self.B.BoolVal(True, self.ctx)

    def _new(self, prefix: str, integer: bool = False) -> Any:
        name = f"{prefix}_{self._fresh}"
        self._fresh += 1
        if integer:
            v = self.B.Int(name, self.ctx)
            self.vars[name] = v
            return self.B.ToReal(v)
        v = self.B.Real(name, self.ctx)
        self.vars[name] = v
        return v

    def symbol(self, s: Sym) -> Any:
        if s.name not in self.real_of:
            if self.mode == "int" and s.integer:
                v = self.B.Int(s.name, self.ctx)
                r = self.B.ToReal(v)
            else:
                v = self.B.Real(s.name, self.ctx)
                r = v
            self.vars[s.name] = v
            self.real_of[s.name] = r
            self.facts.append(r >= self._q(s.lo))
        return self.real_of[s.name]

    def _defined_only(self, guard: Any, facts: list) -> None:
        """Facts that hold only where ``guard`` (a definedness condition) does: a square root's s² = x forces x ≥ 0,
        so the definedness obligation, which looks for a point where some condition fails, must see them as
        ``guard ⇒ fact`` (:meth:`facts_for`); every other obligation asserts the conditions, and the facts plainly."""
        self.facts += facts
        for f in facts:
            self._guards[id(f)] = guard

    def facts_for(self, what: str) -> list:
        """The facts to assert for an obligation: ``what == "side"`` (the definedness obligation) guards the facts
        of :meth:`_defined_only` by their condition; any other obligation asserts the definedness conditions
        themselves, where the guarded and the plain facts are equivalent."""
        if what != "side":
            return list(self.facts)
        return [self.B.Implies(self._guards[id(f)], f) if id(f) in self._guards else f for f in self.facts]

    def _side(self, rel: Rel, term: Any) -> None:
        if rel in self._side_seen:  # the same relation again (its text is the same too): nothing new
            return
        self._side_seen.add(rel)
        what = str(rel)
        if not any(w == what for w, _ in self.side_conditions):
            self.side_conditions.append((what, term))
            self.side_rels.append(rel)

    # expressions ---------------------------------------------------------------------------------
    def expr(self, e: Expr) -> Any:
        if e in self._cache:
            return self._cache[e]
        out = self._expr(e)
        self._cache[e] = out
        return out

    def _expr(self, e: Expr) -> Any:
        B = self.B
        if isinstance(e, Const):
            return self._q(e.value)
        if isinstance(e, Sym):
            return self.symbol(e)
        if isinstance(e, Add):
            out = self.expr(e.terms[0])
            for t in e.terms[1:]:
                out = out + self.expr(t)
            return out
        if isinstance(e, Mul):
            out = self.expr(e.factors[0])
            for f in e.factors[1:]:
                out = out * self.expr(f)
            return out
        if isinstance(e, Pow):
            b = self.expr(e.base)
            if e.exp == 0:
                return self._q(Fraction(1))
            if e.exp < 0:
                self._side(e.base > 0, b > 0)
                out = b
                for _ in range(-e.exp - 1):
                    out = out * b
                return 1 / out
            out = b
            for _ in range(e.exp - 1):
                out = out * b
            return out
        if isinstance(e, Div):
            num, den = self.expr(e.num), self.expr(e.den)
            self._side(e.den > 0, den > 0)
            return num / den
        if isinstance(e, Sqrt):
            x = self.expr(e.arg)
            self._side(e.arg >= 0, x >= 0)
            s = self._new("sqrt")
            self._defined_only(x >= 0, [s >= 0, s * s == x])
            return s
        if isinstance(e, Floor):
            return self._floor(e)
        if isinstance(e, Ceil):
            return self._ceil(e)
        if isinstance(e, Min | Max):
            out = self.expr(e.args[0])
            for a in e.args[1:]:
                t = self.expr(a)
                out = B.If(out <= t, out, t) if isinstance(e, Min) else B.If(out >= t, out, t)
            return out
        if isinstance(e, Log2):
            return self._log2(e)
        raise TypeError(f"cannot translate {type(e).__name__}")

    def _floor(self, e: Floor) -> Any:
        B = self.B
        integer = self.mode == "int"
        if is_integer_valued(e.arg):
            return self.expr(e.arg)
        if isinstance(e.arg, Sqrt):  # ⌊√x⌋ without a square root: c ≥ 0, c² ≤ x < (c+1)²
            x = self.expr(e.arg.arg)
            self._side(e.arg.arg >= 0, x >= 0)
            c = self._new("floorsqrt", integer)
            facts = [c >= 0, c * c <= x, (c + 1) * (c + 1) > x]
            r = as_ratio(e.arg.arg)
            if r is not None:  # x = p/q with integers: q(c+1)² ≥ p + 1
                p, q = self.expr(r[0]), self.expr(r[1])
                facts.append(q * (c + 1) * (c + 1) >= p + 1)
            self._defined_only(x >= 0, facts)
            return c
        x = self.expr(e.arg)
        c = self._new("floor", integer)
        self.facts += [c <= x, c > x - 1, B.Implies(x >= 1, c >= 1), B.Implies(x >= 0, c >= 0)]
        if self.backend == "cvc5" and syntactically_nonneg(e.arg):  # ⌊x⌋ ≥ 0 unconditionally (see _ceil: sign facts)
            self.facts.append(c >= 0)
        r = as_ratio(e.arg)
        if r is not None:
            p, q = self.expr(r[0]), self.expr(r[1])
            self.facts += [B.Implies(q >= 1, c * q >= p - q + 1), B.Implies(q > 0, c * q <= p)]
        return c

    def _ceil(self, e: Ceil) -> Any:
        B = self.B
        integer = self.mode == "int"
        if is_integer_valued(e.arg):
            return self.expr(e.arg)
        x = self.expr(e.arg)
        c = self._new("ceil", integer)
        self.facts += [c >= x, c < x + 1, B.Implies(x > 0, c >= 1)]
        # sign facts, for cvc5 only: x > 0 (x ≥ 0) by its syntax gives ⌈x⌉ ≥ 1 (≥ 0) unconditionally, which spares
        # cvc5's coverings the sign reasoning through nested quotients; z3's nlsat slows down on some claims with
        # them (consistency.sy.lemma3.4.explicit.square_tiling-io: 0.6 s without, past 300 s with), so z3 does
        # without. Both encodings are sound: each fact is true of the true value.
        if self.backend == "cvc5" and syntactically_positive(e.arg):
            self.facts.append(c >= 1)
        elif self.backend == "cvc5" and syntactically_nonneg(e.arg):
            self.facts.append(c >= 0)
        r = as_ratio(e.arg)
        if r is not None:
            p, q = self.expr(r[0]), self.expr(r[1])
            self.facts += [B.Implies(q >= 1, c * q <= p + q - 1), B.Implies(q > 0, c * q >= p)]
        return c

    def _log2(self, e: Log2) -> Any:
        B = self.B
        x = self.expr(e.arg)
        self._side(e.arg > 0, x > 0)
        L = self._new("log2")
        u = self._q(INV_LN2_UPPER)
        for k in range(LOG_RANGE + 1):
            p = self._q(Fraction(2**k))
            kk = self._q(Fraction(k))
            self.facts += [
                B.Implies(x >= p, L >= kk),
                B.Implies(x <= p, L <= kk),
                L <= kk + (x - p) * u / p,  # tangent at 2^k (concavity), with a rational 1/ln2 from above
                B.Implies(B.And(x >= p, x <= 2 * p), L >= kk + (x - p) / p),  # chord on [2^k, 2^(k+1)]
            ]
        return L

    # formulas ------------------------------------------------------------------------------------
    def rel(self, r: Rel) -> Any:
        a, b = self.expr(r.lhs), self.expr(r.rhs)
        return {"<=": lambda: a <= b, "<": lambda: a < b, "==": lambda: a == b}[r.op]()

    def formula(self, f: logic.Formula) -> Any:
        B = self.B
        if isinstance(f, Rel):
            return self.rel(f)
        if isinstance(f, logic.All):
            return B.And(*[self.formula(p) for p in f.parts]) if f.parts else B.BoolVal(True, self.ctx)
        if isinstance(f, logic.Any):
            return B.Or(*[self.formula(p) for p in f.parts]) if f.parts else B.BoolVal(False, self.ctx)
        if isinstance(f, logic.Neg):
            return B.Not(self.formula(f.part))
        if isinstance(f, logic.Iff):
            return self.formula(f.lhs) == self.formula(f.rhs)
        raise TypeError(type(f).__name__)
