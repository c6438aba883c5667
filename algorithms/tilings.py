"""The tiling classes of the (B_r, B_c) schedules, written once over their :class:`~attnio.bounds.blocks.Budget`.

A subclass of :class:`Budgeted` names its budget (``budget(d, dv)``, from :mod:`attnio.bounds.blocks`), which
side stays resident (``resident``: the Q blocks of FlashAttention-2 and split-V, the K/V blocks of Algorithm 1,
of K/V-stationary and of the backward passes) and what one row of each holds (``needs``, for the error naming
M); ``min_M`` and the io-optimal ``default`` follow from the budget. For :class:`Blocks` (fields B_r, B_c) so do
``fast_words`` and the other rules (``rule``: ``io-optimal``, ``square``, or ``published`` (the
FlashAttention papers' own B_c = ⌈M/4d⌉, B_r = min(B_c, d), which runs at any M in audit mode).

Every tiling's fields are block sizes, each a positive int (:class:`Positive`); below the least M a tiling
raises the one error of :func:`check_M`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any, ClassVar

from attnio.bounds import blocks
from attnio.bounds.blocks import Budget
from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_int


def check_M(M: int, lo: int, name: str, needs: str) -> None:
    """InvalidParameter naming M when M is below ``lo``, the least M ``name`` runs with (one step holding
    ``needs``)."""
    if M < lo:
        raise InvalidParameter("M", M, f"M >= {lo} for {name} ({needs})")


@dataclass(frozen=True)
class Positive:
    """A tiling whose fields are all block sizes: each must be an int ≥ 1 (InvalidParameter naming the field).

    A subclass may state its class-level facts in its class statement, ``class T(Blocks, name="t", rule="square")``:
    each keyword sets the class attribute of that name, which a base must declare (TypeError otherwise)."""

    def __init_subclass__(cls, **facts: Any) -> None:
        super().__init_subclass__()
        for k, v in facts.items():
            if not hasattr(cls, k):
                raise TypeError(f"{cls.__name__}: no class-level fact {k!r} to set")
            setattr(cls, k, v)

    def __post_init__(self) -> None:
        for f in fields(self):  # stored as int (check_int accepts 4.0 as 4)
            object.__setattr__(self, f.name, check_int(f.name, getattr(self, f.name), min=1))


@dataclass(frozen=True)
class Budgeted(Positive):
    """A tiling whose two block sizes follow from its working set ``budget(d, dv)`` by the budget's io-optimal
    rule, the ``resident`` side as large as fits; :meth:`from_blocks` makes the tiling from (B_r, B_c)."""

    budget: ClassVar[Callable[..., Budget]]
    resident: ClassVar[str] = "rows"
    name: ClassVar[str] = ""
    needs: ClassVar[str] = ""

    def __init_subclass__(cls, *, budget: Callable[..., Budget] | None = None, **facts: Any) -> None:
        super().__init_subclass__(**facts)
        if budget is not None:  # a plain function as a class attribute would bind as a method
            cls.budget = staticmethod(budget)  # type: ignore[assignment]

    @classmethod
    def from_blocks(cls, B_r: int, B_c: int, d: int, dv: int) -> Any:
        return cls(B_r, B_c)

    @classmethod
    def block_sizes(cls, b: Budget, N: int, M: int) -> tuple[int, int]:
        return b.io_optimal(N, M, side=cls.resident)

    @classmethod
    def min_M(cls, N: int, d: int, dv: int | None = None) -> int:
        return cls.budget(d, dv).min_M

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None) -> Any:
        b = cls.budget(d, dv)
        check_M(M, b.min_M, cls.name, cls.needs)
        return cls.from_blocks(*cls.block_sizes(b, N, M), d, d if dv is None else dv)


@dataclass(frozen=True)
class Blocks(Budgeted):
    """B_r query rows per Q block, B_c key/value rows per K/V block; the block rule ``rule`` of its budget."""

    B_r: int
    B_c: int
    rule: ClassVar[str] = "io-optimal"  # or "square", or "published" (the papers' rule, audit mode)

    @classmethod
    def fast_words(cls, B_r: int, B_c: int, d: int, dv: int) -> int:
        """Peak fast-memory words of one step: rows·B_r + cols·B_c + pair·B_r·B_c of the budget."""
        return cls.budget(d, dv).words(B_r, B_c)

    @classmethod
    def min_M(cls, N: int, d: int, dv: int | None = None) -> int:
        return 1 if cls.rule == "published" else super().min_M(N, d, dv)

    @classmethod
    def block_sizes(cls, b: Budget, N: int, M: int) -> tuple[int, int]:
        if cls.rule == "square":
            side = min(N, b.square(M))
            return side, side
        return super().block_sizes(b, N, M)

    @classmethod
    def capped_peak(cls, N: int, d: int, M: int, dv: int | None = None) -> int:
        """The working set of the default blocks at (N, d, M) with each block capped at N: the peak of a run
        with the published rule, whose blocks may exceed N and whose working set may exceed M (audit mode)."""
        dv = d if dv is None else dv
        t = cls.default(N, d, M, dv)
        return cls.fast_words(min(t.B_r, N), min(t.B_c, N), d, dv)

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None) -> Any:
        if cls.rule == "published":  # B_c = ⌈M/(4d)⌉, B_r = min(B_c, d)
            check_int("M", M, min=1)
            bc = blocks.cdiv(M, 4 * d)
            return cls(min(bc, d), bc)
        return super().default(N, d, M, dv)


@dataclass(frozen=True)
class Side(Positive):
    """One side s of every square tile (the subclass's one field, ``b`` or ``B``). Each phase of the schedule
    holds ``tiles`` s×s tiles and ``vectors`` s-vectors (``phases``: one (tiles, vectors) per phase), so the
    working set is ``fast_words(s)`` = max over the phases of tiles·s² + vectors·s; the block rule ``side(M)``
    is the largest s with which every phase fits (the square rule of :class:`~attnio.bounds.blocks.Budget`,
    phase by phase), unless a subclass keeps its paper's own rule; the least M is ``fast_words(1)``."""

    name: ClassVar[str] = ""
    needs: ClassVar[str] = ""
    phases: ClassVar[tuple[tuple[int, int], ...]] = ()

    @classmethod
    def fast_words(cls, s: int) -> int:
        return max(tiles * s * s + vectors * s for tiles, vectors in cls.phases)

    @classmethod
    def side(cls, M: int) -> int:
        return min(Budget(vectors, 0, tiles).square(M) for tiles, vectors in cls.phases)

    @classmethod
    def min_M(cls, N: int, d: int, dv: int | None = None) -> int:
        return cls.fast_words(1)

    @classmethod
    def default(cls, N: int, d: int, M: int, dv: int | None = None) -> Any:
        check_M(M, cls.min_M(N, d, dv), cls.name, cls.needs)
        s = cls.side(M)
        assert s >= 1 and cls.fast_words(s) <= M, (cls.name, M, s)
        return cls(s)
