"""The three kinds of failure (see docs/model.md):

- bad input: :class:`InvalidParameter` (a ``ValueError``), naming the parameter, its value and the valid range;
- valid but unsupported: :class:`Unsupported` (a ``NotImplementedError``);
- the machine refusing an illegal schedule: :class:`CapacityExceeded` and :class:`SlowMemoryViolation`.

``assert`` is kept for attnio's own invariants only.
"""

from __future__ import annotations


class AttnioError(Exception):
    """Base class of every error attnio raises on purpose."""


class InvalidParameter(AttnioError, ValueError):
    """A parameter has a value outside its valid range.

    >>> str(InvalidParameter("M", 3, "M >= 4 for square_tiling (B = floor(sqrt(M/4)) >= 1)"))
    'M=3 is invalid: valid range is M >= 4 for square_tiling (B = floor(sqrt(M/4)) >= 1)'
    """

    def __init__(self, name: str, value: object, valid: str) -> None:
        self.name = name
        self.value = value
        self.valid = valid
        super().__init__(f"{name}={value!r} is invalid: valid range is {valid}")


class Unsupported(AttnioError, NotImplementedError):
    """The request is meaningful but attnio does not implement it."""


class CapacityExceeded(AttnioError, RuntimeError):
    """A schedule tried to hold more than M words in fast memory."""

    def __init__(self, algorithm: str, resident_words: int, requested_words: int, M: int, what: str) -> None:
        self.algorithm = algorithm
        self.resident_words = resident_words
        self.requested_words = requested_words
        self.M = M
        self.what = what
        super().__init__(
            f"{algorithm}: fast memory overflow while placing {what} ({requested_words} words): "
            f"{resident_words} words already resident + {requested_words} > M={M}"
        )


class SlowMemoryViolation(AttnioError, RuntimeError):
    """A schedule touched slow memory other than by a counted load or store, or left its output incomplete."""
