"""What the measurements of attnio's Triton kernels share (forward :mod:`.measure`, backward :mod:`.fa2_bwd`):
the torch element type of each dtype name, and the two ratios a measurement reports. Imports neither Triton
nor torch."""

from __future__ import annotations

from fractions import Fraction

from attnio.core.counts import IOCount

#: torch element type of each attnio dtype name the kernels take
TORCH_DTYPES = {"fp32": "float32", "fp16": "float16", "bf16": "bfloat16"}


class Ratios:
    """counted ÷ formula and counted ÷ bound, in words, for a measurement dataclass with the fields ``counted``,
    ``formula`` (attnio's exact count of the same schedule and blocks) and ``bound_words``."""

    counted: IOCount
    formula: IOCount
    bound_words: Fraction

    @property
    def counted_over_formula(self) -> Fraction:
        return Fraction(self.counted.io_words, self.formula.io_words)

    @property
    def counted_over_bound(self) -> Fraction:
        return Fraction(self.counted.io_words) / self.bound_words
