"""Exact cost formulas: reads and writes of each implemented algorithm, in closed form with ceilings.

Each formula is derived from its schedule line by line (docs/costs.md) and equals what the machine
measures, for every N, d, M (tests/test_counts.py checks ``cost(...) == measured``). They are symbolic
expressions, so the solver proves things about them; :func:`cost` evaluates them exactly.

>>> cost("flash2", N=4, d=2, M=14)
IOCount(reads_words=72, writes_words=12)
"""

from __future__ import annotations

from dataclasses import dataclass

from attnio.counts import IOCount
from attnio.errors import InvalidParameter
from bounds.expr import Expr, Rel, ceil, evaluate_int, floor, maximum, substitute
from bounds.symbols import M, N, d, dv


@dataclass(frozen=True)
class CostFormula:
    """``reads`` and ``writes`` in N, d, M (and dv where the algorithm supports d_v ≠ d), valid where
    every relation of ``valid`` holds (the algorithm's minimum M). ``blocks`` gives the block sizes."""

    algorithm: str
    reads: Expr
    writes: Expr
    valid: tuple[Rel, ...]
    blocks: dict[str, Expr]
    derivation: str  # docs page
    leading: str  # leading term, for people

    @property
    def io(self) -> Expr:
        return self.reads + self.writes

    def with_dv_equal_d(self) -> CostFormula:
        """The same formula with dv = d, for claims over (N, d, M)."""
        s = {dv: d}
        return CostFormula(
            self.algorithm,
            substitute(self.reads, s),
            substitute(self.writes, s),
            tuple(Rel(r.op, substitute(r.lhs, s), substitute(r.rhs, s)) for r in self.valid),
            {k: substitute(v, s) for k, v in self.blocks.items()},
            self.derivation,
            self.leading,
        )


FORMULAS: dict[str, CostFormula] = {}


def _add(f: CostFormula) -> None:
    assert f.algorithm not in FORMULAS
    FORMULAS[f.algorithm] = f


# flash2, io-optimal rule: a = ⌊(M − max(d,dv))/(d + dv + 4)⌋ rows per Q block; T_r = ⌈N/a⌉.
_a = floor((M - maximum(d, dv)) / (d + dv + 4))
_Tr = ceil(N / _a)
_add(
    CostFormula(
        algorithm="flash2",
        reads=N * d + _Tr * (N * d + N * dv),
        writes=N * dv + N,
        valid=(M >= d + dv + 3 + maximum(d, dv),),
        blocks={"a": _a, "T_r": _Tr},
        derivation="docs/costs.md#flash2",
        leading="N²(d+dv)²/M (4N²d²/M for dv = d)",
    )
)


def formula(algorithm: str) -> CostFormula:
    if algorithm not in FORMULAS:
        raise InvalidParameter("algorithm", algorithm, "one with a cost formula: " + ", ".join(sorted(FORMULAS)))
    return FORMULAS[algorithm]


def cost(algorithm: str, *, N: int, d: int, M: int, dv: int | None = None) -> IOCount:
    """The exact reads and writes of ``algorithm`` at (N, d, M[, dv]), evaluated from its formula."""
    f = formula(algorithm)
    env = {"N": N, "d": d, "M": M, "dv": d if dv is None else dv}
    for r in f.valid:
        if not r.holds(env):
            raise InvalidParameter("M", M, f"{r} for {algorithm} at N={N}, d={d}")
    return IOCount(evaluate_int(f.reads, env), evaluate_int(f.writes, env))
