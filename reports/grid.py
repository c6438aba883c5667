"""Sweep grids: the configurations a sweep runs. A built-in default grid, or a grid file (JSON or TOML).

A configuration is plain data (:class:`Config`); its :meth:`Config.key` is the store's UNIQUE key, so a re-run
skips what is already there. A grid file lists blocks whose lists are crossed::

    # grid.toml
    numeric_max_N = 128          # real arithmetic up to this N, count-only above (default 128)
    imports = ["my_pkg.my_algo"] # modules that register user algorithms (imported in every worker too)

    [[blocks]]
    algorithms = ["flash2"]
    N = [64, 128, 256]
    d = [16]
    M = [128, 1024]
    # optional: dv = [...], seed = [...], eps = [...] and B = [...] (approximate algorithms only)

The JSON form is the same object (``{"numeric_max_N": 128, "blocks": [{...}]}``).
Configurations below an algorithm's least M (``tiling_cls.min_M``) are dropped when the grid is expanded and
counted in :attr:`Grid.skipped`; everything else becomes a row, errors included.

>>> g = grid_from_dict({"blocks": [{"algorithms": ["flash2"], "N": [4, 512], "d": [2], "M": [14]}]})
>>> [c.key() for c in g.configs]
['flash2|N=4|d=2|dv=2|M=14|eps=-|B=-|seed=0|numeric', 'flash2|N=512|d=2|dv=2|M=14|eps=-|B=-|seed=0|count']
>>> grid_from_dict({"blocks": [{"algorithms": ["flash2"], "N": [0], "d": [2], "M": [14]}]})
Traceback (most recent call last):
attnio.core.errors.InvalidParameter: blocks[0].N=0 is invalid: valid range is integer blocks[0].N >= 1
"""

from __future__ import annotations

import importlib
import itertools
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from attnio.core.errors import InvalidParameter
from attnio.core.validate import SEED_MAX, check_int, check_real

NUMERIC_MAX_N = 128  # real arithmetic up to here in the default grid; count-only above

@dataclass(frozen=True, order=True)
class Config:
    """One run: ``count_only`` runs skip the arithmetic (the counts are the same; there is no error figure)."""

    algorithm: str
    N: int
    d: int
    M: int
    dv: int
    eps: float | None = None
    B: float | None = None
    seed: int = 0
    count_only: bool = False

    def key(self) -> str:
        f = lambda x: "-" if x is None else repr(x)  # noqa: E731
        mode = "count" if self.count_only else "numeric"
        return (
            f"{self.algorithm}|N={self.N}|d={self.d}|dv={self.dv}|M={self.M}|eps={f(self.eps)}|B={f(self.B)}"
            f"|seed={self.seed}|{mode}"
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Grid:
    configs: tuple[Config, ...]
    imports: tuple[str, ...] = ()
    skipped: tuple[str, ...] = field(default=())  # keys dropped because M < min_M
    numeric_max_N: int = NUMERIC_MAX_N


def is_approximate(name: str) -> bool:
    from attnio.algorithms import registry

    return registry.get(name).approximate


def default_grid_dict() -> dict[str, Any]:
    """The embedded default sweep: every registered algorithm over N = 2⁶ … 2¹² at six (d, M) points on both
    sides of M = d², real arithmetic up to N = 128; FlashAttention-1 (audit mode) across M for its working
    set; approximate algorithms over a few (ε, B) where they are registered."""
    from attnio.algorithms import registry

    names = registry.names()
    exact = [n for n in names if not is_approximate(n)]
    approx = [n for n in names if is_approximate(n)]
    Ns = [2**k for k in range(6, 13)]
    blocks: list[dict[str, Any]] = []
    for d, Ms in ((16, [128, 1024, 8192]), (64, [1024, 8192, 65536])):
        blocks.append({"algorithms": exact, "N": Ns, "d": [d], "M": Ms})
    for flash1 in ("flash1", "flash1-fit"):
        if flash1 in names:
            blocks.append({"algorithms": [flash1], "N": [1024], "d": [64], "M": [2**k for k in range(9, 19)]})
    if approx:
        blocks.append({"algorithms": approx, "N": [64, 1024, 4096, 16384, 65536], "d": [16], "M": [1024, 8192], "eps": [0.1], "B": [0.25, 0.5]})
    return {"numeric_max_N": NUMERIC_MAX_N, "blocks": blocks}


def default_grid() -> Grid:
    return grid_from_dict(default_grid_dict())


def load_grid(path: str | Path) -> Grid:
    """Read a grid file (``.json`` or ``.toml``). Bad values raise InvalidParameter naming the entry."""
    p = Path(path)
    if not p.is_file():
        raise InvalidParameter("grid", str(path), "an existing .json or .toml grid file")
    if p.suffix not in (".json", ".toml"):
        raise InvalidParameter("grid", str(path), "a file ending in .json or .toml")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InvalidParameter("grid", str(path), f"a UTF-8 text file ({e.reason} at byte {e.start})") from None
    except OSError as e:
        raise InvalidParameter("grid", str(path), f"a readable file ({e.strerror or e})") from None
    try:
        if p.suffix == ".toml":
            import tomllib

            data = tomllib.loads(text)
        elif p.suffix == ".json":
            data = json.loads(text)
        else:
            raise InvalidParameter("grid", str(path), "a file ending in .json or .toml")
    except (ValueError, TypeError) as e:  # JSONDecodeError and TOMLDecodeError are ValueErrors
        raise InvalidParameter("grid", str(path), f"well-formed {p.suffix[1:].upper()} ({' '.join(str(e).split())})") from None
    except RecursionError:
        raise InvalidParameter("grid", str(path), "a grid object (this file is nested too deeply to be one)") from None
    try:
        return grid_from_dict(data)
    except InvalidParameter as e:  # name the file too
        raise InvalidParameter(f"{path}: {e.name}", e.value, e.valid) from None


_BLOCK_KEYS = {"algorithms", "N", "d", "M", "dv", "seed", "eps", "B"}
_TOP_KEYS = {"numeric_max_N", "imports", "blocks"}


def grid_from_dict(data: Any) -> Grid:
    from attnio.algorithms import registry

    if not isinstance(data, dict):
        raise InvalidParameter("grid", type(data).__name__, "an object with a 'blocks' list")
    for k in data:
        if k not in _TOP_KEYS:
            raise InvalidParameter(f"grid.{k}", data[k], "no such key; keys are " + ", ".join(sorted(_TOP_KEYS)))
    numeric_max_N = check_int("numeric_max_N", data.get("numeric_max_N", NUMERIC_MAX_N), min=0)
    imports = data.get("imports", [])
    if not isinstance(imports, list) or not all(isinstance(m, str) for m in imports):
        raise InvalidParameter("imports", imports, "a list of module names")
    import_modules(imports)
    blocks = data.get("blocks")
    if not isinstance(blocks, list) or not blocks:
        raise InvalidParameter("blocks", blocks, "a non-empty list of blocks")
    configs: set[Config] = set()
    skipped: set[str] = set()
    for i, b in enumerate(blocks):
        where = f"blocks[{i}]"
        if not isinstance(b, dict):
            raise InvalidParameter(where, b, "an object with algorithms, N, d, M")
        for k in b:
            if k not in _BLOCK_KEYS:
                raise InvalidParameter(f"{where}.{k}", b[k], "no such key; keys are " + ", ".join(sorted(_BLOCK_KEYS)))
        algs = _list(b, "algorithms", where, required=True)
        for a in algs:
            if not isinstance(a, str):
                raise InvalidParameter(f"{where}.algorithms", a, "algorithm names (strings)")
            registry.get(a)  # InvalidParameter naming the known algorithms
        Ns = [check_int(f"{where}.N", x, min=1) for x in _list(b, "N", where, required=True)]
        ds = [check_int(f"{where}.d", x, min=1) for x in _list(b, "d", where, required=True)]
        Ms = [check_int(f"{where}.M", x, min=1) for x in _list(b, "M", where, required=True)]
        dvs = [check_int(f"{where}.dv", x, min=1) for x in _list(b, "dv", where)] or [None]
        seeds = [check_int(f"{where}.seed", x, min=0, max=SEED_MAX) for x in _list(b, "seed", where)] or [0]
        epss = [check_real(f"{where}.eps", x, gt=0, lt=1) for x in _list(b, "eps", where)] or [None]
        Bs = [check_real(f"{where}.B", x, gt=0) for x in _list(b, "B", where)] or [None]
        for a, N, d, M, dv, seed, eps, B in itertools.product(algs, Ns, ds, Ms, dvs, seeds, epss, Bs):
            approx = is_approximate(a)
            if approx and (eps is None or B is None):
                raise InvalidParameter(f"{where}.eps/B", (eps, B), f"both eps and B for approximate algorithm {a}")
            if not approx and (eps is not None or B is not None):
                raise InvalidParameter(f"{where}.eps/B", (eps, B), f"none for exact algorithm {a} (give eps/B in a block of approximate algorithms)")
            dv_ = d if dv is None else dv
            c = Config(a, N, d, M, dv_, eps, B, seed, count_only=N > numeric_max_N)
            if M < _min_M(a, N, d, dv_):
                skipped.add(c.key())
            else:
                configs.add(c)
    return Grid(tuple(sorted(configs)), tuple(imports), tuple(sorted(skipped)), numeric_max_N)


def import_modules(names: list[str] | tuple[str, ...]) -> None:
    for name in names:
        try:
            importlib.import_module(name)
        except ImportError as e:
            raise InvalidParameter("imports", name, f"an importable module ({e})") from None
        except Exception as e:  # the module itself fails while importing: name it, on one line
            raise InvalidParameter("imports", name, f"a module that imports cleanly ({type(e).__name__}: {' '.join(str(e).split())})") from None


def _list(b: dict[str, Any], k: str, where: str, required: bool = False) -> list[Any]:
    if k not in b:
        if required:
            raise InvalidParameter(f"{where}.{k}", None, "a non-empty list (required)")
        return []
    v = b[k]
    if not isinstance(v, list) or not v:
        raise InvalidParameter(f"{where}.{k}", v, "a non-empty list")
    return v


def _min_M(algorithm: str, N: int, d: int, dv: int) -> int:
    from attnio.algorithms import registry

    spec = registry.get(algorithm)
    if spec.audit:
        return 1  # audit mode runs whatever M; the overflow is the measurement
    return int(spec.tiling_cls.min_M(N, d, dv))  # the tiling protocol (algorithms.registry.Tiling)
