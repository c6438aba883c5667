"""One working-set shape for the (B_r, B_c) block rules, written once for the cost formulas and the tilings.

Many schedules hold, during one step, ``rows`` words per query row of a block, ``cols`` words per key/value row
and ``pair`` words per (query, key) pair: the working set is rows·B_r + cols·B_c + pair·B_r·B_c ≤ M. A
:class:`Budget` gives that shape's two block rules, over ``int`` (a tiling evaluates them) and over
:class:`~attnio.bounds.expr.Expr` (``attnio.bounds.costs`` builds its formulas' blocks from the same object):

- **io-optimal** (the count depends only on the number of resident blocks T): the resident side as large as
  fits with one row of the other, a = ⌊(M − other)/(resident + pair)⌋, T = ⌈N/min(a, N)⌉; the resident block
  shrunk to ⌈N/T⌉ (same T, same count) and the space this frees given to the other side (derived here,
  docs/costs.md#flash2);
- **square**: B_r = B_c = b, the largest b with (r + c)·b + p·b² ≤ M: b = ⌊(⌊√((r + c)² + 4pM)⌋ − (r + c))/(2p)⌋.

| schedule | rows | cols | pair |
|---|---|---|---|
| flash2, flash2-square | d + d_v + 3 | max(d, d_v) | 1 |
| flash1-fit (K/V resident) | d + d_v + 6 | d + d_v | 1 |
| flash2-bwd, flash2-square-bwd (K/V resident) | 2d + d_v + 2 | 2d + 2d_v | 2 |
| flash2-2pass-bwd pass 1 (K/V resident; no dQ) | d + d_v + 2 | 2d + 2d_v | 2 |
| flash2-2pass-bwd pass 2 (Q resident; dQ only) | 2d + d_v + 2 | d + d_v | 2 |
| flash1-fit-bwd (K/V resident) | 2(d + d_v) + 3 | 2(d + d_v) | 2 |
| kv_stationary (K/V resident) | d + 2d_v + 3 | d + d_v | 1 |
| split_v (g = min(d, d_v) value columns) | d + g + 3 | max(d, g) = d | 1 |

Worked example, flash2 at N = 4, d = 2, M = 14: a = ⌊(14 − 2)/8⌋ = 1, T_r = 4, B_r = 1, B_c = ⌊(14 − 7)/3⌋ = 2.

>>> Budget(2 + 2 + 3, 2, 1).io_optimal(4, 14)
(1, 2)
>>> Budget(2 + 2 + 3, 2, 1).square(40), Budget(2 + 2 + 3, 2, 1).min_M
(3, 10)
>>> from attnio.bounds.symbols import M, d, dv
>>> from attnio.bounds.expr import to_text, maximum
>>> to_text(Budget(d + dv + 3, maximum(d, dv), 1).resident(M))
'⌊(M − max(d, dv))/(d + dv + 4)⌋'
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from attnio.bounds.expr import Add, Expr, ceil, floor, sqrt


def cdiv(a: Any, b: Any) -> Any:
    """⌈a/b⌉: exact integer division for ints, a ``ceil`` node for expressions."""
    if isinstance(a, Expr) or isinstance(b, Expr):
        return ceil(a / b)
    return -(-a // b)


def fdiv(a: Any, b: Any) -> Any:
    """⌊a/b⌋: integer division for ints, a ``floor`` node for expressions."""
    if isinstance(a, Expr) or isinstance(b, Expr):
        return floor(a / b)
    return a // b


def isqrt(x: Any) -> Any:
    """⌊√x⌋."""
    return floor(sqrt(x)) if isinstance(x, Expr) else math.isqrt(x)


def minus(x: Any, y: Any) -> Any:
    """x − y, an expression sum subtracted term by term (the form the cost formulas are written in)."""
    if isinstance(y, Add):
        for t in y.terms:
            x = x - t
        return x
    return x - y


@dataclass(frozen=True)
class Budget:
    """The working set rows·B_r + cols·B_c + pair·B_r·B_c of one step (coefficients int or Expr)."""

    rows: Any
    cols: Any
    pair: Any

    def words(self, B_r: Any, B_c: Any) -> Any:
        return self.rows * B_r + self.cols * B_c + self.pair * B_r * B_c

    @property
    def min_M(self) -> Any:
        """The least M: one query row, one key row."""
        return self.words(1, 1)

    def resident(self, M: Any, side: str = "rows") -> Any:
        """a = ⌊(M − other)/(resident + pair)⌋: rows of the resident side that fit with one row of the other."""
        r, o = (self.rows, self.cols) if side == "rows" else (self.cols, self.rows)
        return fdiv(minus(M, o), r + self.pair)

    def io_optimal(self, N: int, M: int, side: str = "rows", N_other: int | None = None) -> tuple[int, int]:
        """(B_r, B_c) of the io-optimal rule, the ``side`` block resident over N rows (the other over
        ``N_other``, default N); needs M ≥ :attr:`min_M`."""
        r, o = (self.rows, self.cols) if side == "rows" else (self.cols, self.rows)
        T = cdiv(N, min(self.resident(M, side), N))
        B = cdiv(N, T)
        other = min(N if N_other is None else N_other, (M - B * r) // (o + self.pair * B))
        assert B >= 1 and other >= 1, (self, N, M, B, other)
        return (B, other) if side == "rows" else (other, B)

    def square(self, M: Any) -> Any:
        """b = ⌊(⌊√((r + c)² + 4pM)⌋ − (r + c))/(2p)⌋, the largest square block that fits."""
        span = self.rows + self.cols
        return fdiv(minus(isqrt(span**2 + 4 * self.pair * M), span), 2 * self.pair)


def _max(a: Any, b: Any) -> Any:
    from attnio.bounds.expr import maximum

    return maximum(a, b) if isinstance(a, Expr) or isinstance(b, Expr) else max(a, b)


def _min(a: Any, b: Any) -> Any:
    from attnio.bounds.expr import minimum

    return minimum(a, b) if isinstance(a, Expr) or isinstance(b, Expr) else min(a, b)


# The budgets of the schedules (d_v defaults to d here, once) ---------------------------------------------------
def flash2(d: Any, dv: Any = None) -> Budget:
    """FlashAttention-2 forward: Q_i, O_i and 3 statistics per query row; the K_j/V_j buffer; S_ij."""
    dv = d if dv is None else dv
    return Budget(d + dv + 3, _max(d, dv), 1)


def flash1_fit(d: Any, dv: Any = None) -> Budget:
    """FlashAttention Algorithm 1: Q_i, O_i and 6 statistics per query row; K_j, V_j; S_ij (K/V resident)."""
    dv = d if dv is None else dv
    return Budget(d + dv + 6, d + dv, 1)


def flash2_bwd(d: Any, dv: Any = None) -> Budget:
    """FlashAttention-2 backward: Q_i, dQ_i, dO_i, L_i, D_i per query row; K_j, V_j, dK_j, dV_j; S/P and dP/dS."""
    dv = d if dv is None else dv
    return Budget(2 * d + dv + 2, 2 * d + 2 * dv, 2)


def flash2_2pass_bwd_kv(d: Any, dv: Any = None) -> Budget:
    """Two-pass backward, pass 1 (dK, dV): Q_i, dO_i, L_i, D_i per query row; K_j, V_j, dK_j, dV_j; S/P and dP/dS."""
    dv = d if dv is None else dv
    return Budget(d + dv + 2, 2 * d + 2 * dv, 2)


def flash2_2pass_bwd_q(d: Any, dv: Any = None) -> Budget:
    """Two-pass backward, pass 2 (dQ): Q_i, dQ_i, dO_i, L_i, D_i per query row; K_j, V_j; S/P and dP/dS."""
    dv = d if dv is None else dv
    return Budget(2 * d + dv + 2, d + dv, 2)


def flash1_fit_bwd(d: Any, dv: Any = None) -> Budget:
    """FlashAttention Algorithm 4: Q_i, O_i, dQ_i, dO_i and 3 statistics per query row; K_j, V_j, dK_j, dV_j;
    S/P and dP/dS."""
    dv = d if dv is None else dv
    return Budget(2 * (d + dv) + 3, 2 * (d + dv), 2)


def kv_stationary(d: Any, dv: Any = None) -> Budget:
    """K/V-stationary attention: Q_i, the partial Ô and O_i, and 3 statistics per query row; K_j, V_j; S."""
    dv = d if dv is None else dv
    return Budget(d + 2 * dv + 3, d + dv, 1)


def split_v(d: Any, dv: Any = None) -> Budget:
    """Split-V attention: FlashAttention-2's working set with the accumulator O_ic only g = min(d, d_v) columns
    wide (the K_j / V_jc buffer max(d, g) = d)."""
    dv = d if dv is None else dv
    return flash2(d, _min(d, dv))
