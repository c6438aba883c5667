"""The one count type shared by the formulas (``attnio.bounds.costs``) and the machine (``attnio.algorithms.machine``),
so that the core test reads ``formula == measured``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class IOCount:
    """Words moved between slow and fast memory.

    ``reads_words``: words moved slow -> fast; ``writes_words``: words moved fast -> slow, including the writes
    that initialise a slow array.

    >>> IOCount(reads_words=3, writes_words=1).io_words
    4
    """

    reads_words: int
    writes_words: int

    def __post_init__(self) -> None:
        from attnio.core.validate import (
            check_int,  # a public type: bad counts are bad input, not an assertion
        )

        object.__setattr__(self, "reads_words", check_int("reads_words", self.reads_words, min=0))  # 2.0 is 2
        object.__setattr__(self, "writes_words", check_int("writes_words", self.writes_words, min=0))

    @property
    def io_words(self) -> int:
        return self.reads_words + self.writes_words

    def __add__(self, other: IOCount) -> IOCount:
        return IOCount(self.reads_words + other.reads_words, self.writes_words + other.writes_words)
