"""The one symbol factory. Every parameter of every formula in attnio comes from :func:`sym`.

>>> sym("N") is N
True
>>> N.integer, N.lo
(True, Fraction(1, 1))
"""

from __future__ import annotations

from fractions import Fraction

from attnio.bounds.expr import Sym

_TABLE: dict[str, Sym] = {}
_DOCS: dict[str, str] = {}


def sym(name: str, *, integer: bool = True, lo: int | Fraction = 1, doc: str = "") -> Sym:
    """Return the symbol called ``name``, creating it once. Asking again with a different domain is a bug."""
    s = _TABLE.get(name)
    if s is None:
        s = Sym(name, integer, Fraction(lo))
        _TABLE[name] = s
        _DOCS[name] = doc
    assert s.integer == integer and s.lo == Fraction(lo), f"symbol {name} redeclared with another domain"
    return s


def nonneg_real(name: str, doc: str) -> Sym:
    """A real symbol ≥ 0 (an auxiliary quantity of a proof: a count of segments, of pairs, of words).

    >>> x = nonneg_real("doc_x", "an example"); (x.integer, x.lo)
    (False, Fraction(0, 1))
    """
    return sym(name, integer=False, lo=0, doc=doc)


def describe(name: str) -> str:
    return _DOCS[name]


N = sym("N", doc="sequence length: rows of Q, K, V and O")
d = sym("d", doc="head dimension (key/query width d_k; also d_v unless dv is given)")
M = sym("M", doc="fast-memory capacity in words")
dv = sym("dv", doc="value width d_v, where it differs from d")
Nq = sym("Nq", doc="query rows N_q of a workload (N_q ≠ N_kv: decoding, cross-attention)")
Nkv = sym("Nkv", doc="key/value rows N_kv of a workload")
g = sym("g", doc="query heads per key/value head (GQA group size; 1 = multi-head)")
