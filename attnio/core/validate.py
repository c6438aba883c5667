"""Small named validators. Each raises :class:`~attnio.core.errors.InvalidParameter` naming the parameter,
its value and the valid range; each is seen to fail in ``tests/test_validation.py``.
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction

from attnio.core.errors import InvalidParameter


def check_int(name: str, value: object, *, min: int | None = None, max: int | None = None) -> int:
    """Return ``value`` as an ``int`` if it is an integer (bools excluded) within ``[min, max]``.

    >>> check_int("N", 8, min=1)
    8
    >>> check_int("N", 0, min=1)
    Traceback (most recent call last):
    attnio.core.errors.InvalidParameter: N=0 is invalid: valid range is integer N >= 1
    """
    rng = _range_text(name, min, max, integer=True)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer() and math.isfinite(value):
            value = int(value)
        else:
            raise InvalidParameter(name, value, rng)
    value = int(value)
    if (min is not None and value < min) or (max is not None and value > max):
        raise InvalidParameter(name, value, rng)
    return value


def check_real(
    name: str,
    value: object,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
) -> float:
    """Return ``value`` as a finite ``float`` within the given open or closed limits.

    >>> check_real("eps", 0.5, gt=0, lt=1)
    0.5
    >>> check_real("eps", 1.0, gt=0, lt=1)
    Traceback (most recent call last):
    attnio.core.errors.InvalidParameter: eps=1.0 is invalid: valid range is 0 < eps < 1
    """
    parts = []
    if gt is not None:
        parts.append(f"{gt:g} <")
    elif ge is not None:
        parts.append(f"{ge:g} <=")
    parts.append(name)
    if lt is not None:
        parts.append(f"< {lt:g}")
    elif le is not None:
        parts.append(f"<= {le:g}")
    rng = " ".join(parts) if len(parts) > 1 else f"finite real {name}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real | Fraction):
        raise InvalidParameter(name, value, rng)
    x = float(value)
    if not math.isfinite(x):
        raise InvalidParameter(name, value, rng)
    if (gt is not None and not x > gt) or (ge is not None and not x >= ge):
        raise InvalidParameter(name, value, rng)
    if (lt is not None and not x < lt) or (le is not None and not x <= le):
        raise InvalidParameter(name, value, rng)
    return x


def check_choice(name: str, value: object, choices) -> str:
    """Return ``value`` if it is one of ``choices``.

    >>> check_choice("backend", "numpy", ["numpy", "cupy"])
    'numpy'
    >>> check_choice("backend", "tpu", ["numpy", "cupy"])
    Traceback (most recent call last):
    attnio.core.errors.InvalidParameter: backend='tpu' is invalid: valid range is one of numpy, cupy
    """
    choices = list(choices)
    if value not in choices:
        raise InvalidParameter(name, value, "one of " + ", ".join(map(str, choices)))
    return value  # type: ignore[return-value]


def _range_text(name: str, lo: int | None, hi: int | None, *, integer: bool) -> str:
    kind = "integer " if integer else ""
    if lo is not None and hi is not None:
        return f"{kind}{lo} <= {name} <= {hi}"
    if lo is not None:
        return f"{kind}{name} >= {lo}"
    if hi is not None:
        return f"{kind}{name} <= {hi}"
    return f"{kind}{name}"


# Sizes a numeric run (real arithmetic in this process's memory) can hold. The inputs and output are N×d and
# N×d_v float64 arrays (Q, K, V, O, and the machine's copies); the float64 reference attention holds the N×N
# score matrix. Count-only runs hold no array and take any size.
NUMERIC_MAX_ND = 2**24  # words of one N×d (or N×d_v) array: 128 MiB of float64
NUMERIC_MAX_N = 2**14  # the reference's N×N scores: 2 GiB of float64 (benchmarks/bench_poly.py checks N = 2^14)
SEED_MAX = 2**64 - 1


def check_run_sizes(N: int, d: int, dv: int, *, count_only: bool, Nkv: int | None = None, heads: int = 1) -> None:
    """Refuse, before anything is allocated, a numeric run whose arrays cannot be held in memory: the rows of
    all ``heads`` (query or key rows, whichever are more) times the width, and the float64 reference's
    ``heads``·N·N_kv scores (``Nkv``: key rows, default N).

    >>> check_run_sizes(10**30, 10**30, 10**30, count_only=True)
    >>> check_run_sizes(4096, 64, 64, count_only=False)
    >>> check_run_sizes(2**20, 64, 64, count_only=False)
    Traceback (most recent call last):
    attnio.core.errors.InvalidParameter: N·d=67108864 is invalid: valid range is N·max(d, dv) <= 16777216 for a numeric run (its float64 arrays are held in memory); use --count-only above N·d = 16777216
    >>> check_run_sizes(4096, 8, 8, count_only=False, heads=32)
    Traceback (most recent call last):
    attnio.core.errors.InvalidParameter: heads·N·Nkv=536870912 is invalid: valid range is heads·N·Nkv <= 268435456 for a numeric run (the float64 reference holds every head's scores); use --count-only
    """
    if count_only:
        return
    Nkv = N if Nkv is None else Nkv
    rows = heads * max(N, Nkv)
    if rows * max(d, dv) > NUMERIC_MAX_ND:
        name, value = ("N·d", rows * d) if d >= dv else ("N·dv", rows * dv)
        if heads > 1:
            name = "heads·" + name
        raise InvalidParameter(
            name, value,
            f"N·max(d, dv) <= {NUMERIC_MAX_ND} for a numeric run (its float64 arrays are held in memory); "
            f"use --count-only above N·d = {NUMERIC_MAX_ND}",
        )
    if heads == 1 and max(N, Nkv) > NUMERIC_MAX_N:
        raise InvalidParameter(
            "N", max(N, Nkv),
            f"N <= {NUMERIC_MAX_N} for a numeric run (the float64 reference holds the N×N scores); "
            f"use --count-only above N = {NUMERIC_MAX_N}",
        )
    if heads * N * Nkv > NUMERIC_MAX_N**2:
        raise InvalidParameter(
            "heads·N·Nkv", heads * N * Nkv,
            f"heads·N·Nkv <= {NUMERIC_MAX_N**2} for a numeric run (the float64 reference holds every head's scores); use --count-only",
        )


def check_seed(seed: object) -> int | None:
    """A seed of NumPy's generator: None or an integer 0 <= seed <= 2**64 - 1.

    >>> check_seed(-1)
    Traceback (most recent call last):
    attnio.core.errors.InvalidParameter: seed=-1 is invalid: valid range is integer 0 <= seed <= 18446744073709551615
    """
    return None if seed is None else check_int("seed", seed, min=0, max=SEED_MAX)
