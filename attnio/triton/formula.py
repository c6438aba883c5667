"""A closed form of a Triton kernel's traffic, fitted exactly from counts at small shapes
(``attnio kernel FILE:FN --formula``; docs/triton-formula.md).

:func:`fit` runs the launcher (attnio.triton.check's convention: q, k, v, o, ...; blocks pinned) under
:func:`attnio.triton.count_traffic` at the shapes of a factorial design and solves, with exact rational
arithmetic, for the coefficients of every tensor's reads and writes (bytes and words) in the basis of
:mod:`attnio.triton.formula_basis`::

    count = Σ θ_uwl · unit_u · width_w · length_l      e.g. FA-2 forward, q reads = Z·H·N_q·d

The design is the product of one set of points per axis (units (Z, H, H_kv), widths (d, d_v), lengths
(N_q, N_kv)), each chosen greedily to make its axis's matrix nonsingular, so the product design identifies
every coefficient: the fit is unique (no sparsity choice is left), and its zeros are exact. The solve is
checked exactly on the fit points, then :meth:`KernelFormula.check` runs the kernel at held-out shapes
(partial last blocks, other heads, batch and widths) and compares every field; a formula that fails anywhere is
reported and never printed as a formula.

The fitted object evaluates (:meth:`KernelFormula.evaluate`), prints sympy expressions, compares with attnio's
best lower bound by z3 (:meth:`KernelFormula.compare`, :mod:`attnio.triton.formula_compare`) and emits a
Triton ``launch_metadata`` hook (:meth:`KernelFormula.launch_metadata_source`).

Nothing here imports Triton or torch until a kernel is counted.
"""

from __future__ import annotations

import functools
import inspect
import itertools
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from attnio.core.errors import AttnioError, InvalidParameter
from attnio.triton import formula_basis as fb

FIELDS = ("reads_bytes", "writes_bytes", "reads_words", "writes_words")
LAUNCH = "launch:"  # key prefix of a kernel's own bytes (reads + writes of one kernel name, all its launches)


class FitError(AttnioError):
    """No exact fit in the basis (a field that no combination of the candidate terms reproduces)."""


Key = tuple[str, str]  # (tensor, field)
Term = tuple[str, str, str]  # (unit, width, length)


@dataclass
class HeldOut:
    """One held-out shape: the counted fields that differ from the formula (empty: exact)."""

    shape: dict[str, int]
    mismatches: dict[str, tuple[int, int]]  # "tensor.field" -> (counted, formula)
    seconds: float

    @property
    def ok(self) -> bool:
        return not self.mismatches


@dataclass
class KernelFormula:
    """What :func:`fit` returns. ``coefficients[(tensor, field)][(unit, width, length)]`` (nonzero only)."""

    name: str
    causal: bool
    dtype: str
    block: tuple[int, int]
    units: tuple[str, ...]
    widths: tuple[str, ...]
    lengths: tuple[str, ...]
    coefficients: dict[Key, dict[Term, Fraction]]
    fit_shapes: list[dict[str, int]]
    fit_seconds: float
    launches: dict[str, int]  # kernel name -> launches per call
    kernel_args: dict[str, dict[str, str]]  # kernel name -> {attnio tensor: the kernel's argument name}
    held_out: list[HeldOut] = field(default_factory=list)
    splits: int | None = None  # the kernel's pinned key splits S (length NE), None where it has none
    #: per counted shape (fit, then held out): (the shape, ``<kernel>.<argument>`` -> the layout the kernel saw,
    #: attnio.triton.count.Traffic.layouts), read by :meth:`launch_metadata_source` (:func:`_view_dims`); None:
    #: not measured (a formula built by hand), its tensor arguments taken in attnio's layout (:data:`_ROLE_DIMS`)
    layouts: list[tuple[dict[str, int], dict[str, tuple]]] | None = field(default=None, repr=False)
    _launch: Any = field(default=None, repr=False)
    _options: dict[str, Any] = field(default_factory=dict, repr=False)

    # ----------------------------------------------------------------------------------------- evaluation
    @property
    def tensors(self) -> list[str]:
        return sorted({t for t, _ in self.coefficients if not t.startswith(LAUNCH)})

    def _value(self, key: Key, ctx: dict[str, int]) -> Fraction:
        total = Fraction(0)
        for (u, w, l), c in self.coefficients.get(key, {}).items():
            total += c * fb.value(fb.UNIT[u], ctx) * fb.value(fb.WIDTH[w], ctx) * fb.value(fb.LENGTH[l], ctx)
        return total

    def evaluate(self, **shape: int) -> dict[str, dict[str, int]]:
        """tensor -> field -> count at ``shape`` (keywords Z, H, H_kv, N_q, N_kv, d, d_v; N for both lengths;
        Z, H, H_kv default 1, d_v default d), plus ``"total"`` (each field summed over the tensors)."""
        ctx = fb.context(_shape(shape, self.causal), self.block, self.splits)
        out: dict[str, dict[str, int]] = {}
        for (t, f) in sorted(self.coefficients):
            v = self._value((t, f), ctx)
            if v.denominator != 1:  # a rational coefficient can leave a fraction at a shape it was not fitted at
                raise FitError(f"{t}.{f} is not an integer at {shape}: {v}")
            out.setdefault(t, {})[f] = int(v)
        out["total"] = {f: sum(out[t].get(f, 0) for t in self.tensors) for f in FIELDS}
        return out

    def total_bytes(self, **shape: int) -> int:
        t = self.evaluate(**shape)["total"]
        return t["reads_bytes"] + t["writes_bytes"]

    # ------------------------------------------------------------------------------------------------ sympy
    def sympy(self, tensor: str, fld: str, expand: bool = False) -> Any:
        """The formula of one tensor and field as a sympy expression in the shape symbols, B_r, B_c, T_r, T_c
        and the named sums (SE, ...); ``expand=True`` substitutes their definitions
        (:func:`attnio.triton.formula_basis.sympy_definitions`: ``ceiling`` and ``Sum``)."""
        import sympy as sp

        e = sp.Integer(0)
        for (u, w, l), c in self.coefficients.get((tensor, fld), {}).items():
            e += sp.Rational(c.numerator, c.denominator) * fb.sympy_of(fb.UNIT, u) * fb.sympy_of(fb.WIDTH, w) \
                * fb.sympy_of(fb.LENGTH, l)
        if expand:
            s = fb.sympy_symbols()
            e = e.subs(fb.sympy_definitions()).subs({s["B_r"]: self.block[0], s["B_c"]: self.block[1],
                                                     **({} if self.splits is None else {s["S"]: self.splits})})
        return e

    def text(self, tensor: str, fld: str) -> str:
        import sympy as sp

        e = self.sympy(tensor, fld)
        return str(sp.factor(e)) if e != 0 else "0"

    # --------------------------------------------------------------------------------------------- checks
    @property
    def exact(self) -> bool:
        """Checked on held-out shapes, every field equal."""
        return bool(self.held_out) and all(h.ok for h in self.held_out)

    def check(self, shapes: list[dict[str, int]] | None = None) -> list[HeldOut]:
        """Count the kernel at ``shapes`` (default :func:`held_out_shapes`, none of them fit points) and compare
        every tensor's four fields and each kernel's bytes with the formula; the results are kept in
        ``held_out`` (appended)."""
        if self._launch is None:
            raise InvalidParameter("formula", self.name, "a formula fitted in this process (it holds the launcher)")
        shapes = shapes if shapes is not None else held_out_shapes(self.block, self.causal)
        fitted = [tuple(sorted(s.items())) for s in self.fit_shapes]
        out = []
        for s in shapes:
            s = _shape(s, self.causal)
            if tuple(sorted(s.items())) in fitted:
                raise InvalidParameter("shapes", s, "shapes not used in the fit (held out)")
            t0 = time.perf_counter()
            counted, t = _measure(self._launch, s, self.causal, self.dtype, **self._options)
            if self.layouts is not None:
                self.layouts.append((s, dict(getattr(t, "layouts", {}))))
            ctx = fb.context(s, self.block, self.splits)
            bad = {}
            for key in sorted(set(counted) | set(self.coefficients)):
                want = self._value(key, ctx)
                got = counted.get(key, 0)
                if want != got:
                    bad[f"{key[0]}.{key[1]}"] = (got, int(want) if want.denominator == 1 else float(want))
            out.append(HeldOut(s, bad, time.perf_counter() - t0))
        self.held_out += out
        return out

    def compare(self, **kw: Any) -> Any:
        """z3's verdicts on formula ÷ attnio's best lower bound over a range of N (keywords of
        :func:`attnio.triton.formula_compare.compare`)."""
        from attnio.triton.formula_compare import compare

        return compare(self, **kw)

    # ------------------------------------------------------------------------------------ generated code
    def bytes_estimate_source(self, name: str = "bytes_estimate") -> str:
        """Python source of ``name(Z, H, H_kv, N_q, N_kv, d, d_v) -> int``: the bytes of one call (all tensors,
        all launches), for the pinned blocks and mask; plain Python, no imports."""
        return _emit(self, name, "def {name}(Z, H, H_kv, N_q, N_kv, d, d_v):", [], self._total_terms())

    def bytes_estimate(self) -> Any:
        return _compile(self.bytes_estimate_source(), "bytes_estimate")

    def launch_metadata_source(self, kernel: str | None = None, name: str = "launch_metadata") -> str:
        """Python source of ``name(grid, kernel, args) -> dict`` for ``@triton.jit(launch_metadata=...)``
        (Triton 3.9 calls it with the grid, the compiled kernel's metadata and a dict of the kernel's arguments
        by name; Proton reads ``"bytes"``): the shape is read from the kernel's tensor arguments, and
        ``"bytes"`` is the formula of that kernel's own traffic in one launch. ``kernel`` defaults to the only
        kernel of the call; a kernel launched more than once per call is refused (its launches would share
        one formula)."""
        kernel = self._kernel(kernel)
        lines = _shape_from_args(self, kernel)
        return _emit(self, name, "def {name}(grid, kernel, args):", lines, self._terms((LAUNCH + kernel, "bytes")),
                     kernel_name=kernel)

    def launch_metadata(self, kernel: str | None = None) -> Any:
        return _compile(self.launch_metadata_source(kernel), "launch_metadata")

    def _kernel(self, kernel: str | None) -> str:
        if kernel is None:
            if len(self.launches) != 1:
                raise InvalidParameter("kernel", None, "one of " + ", ".join(sorted(self.launches)))
            kernel = next(iter(self.launches))
        if kernel not in self.launches:
            raise InvalidParameter("kernel", kernel, "one of " + ", ".join(sorted(self.launches)))
        if self.launches[kernel] == 0:
            raise InvalidParameter("kernel", kernel, f"a kernel launched the same number of times at every shape "
                                   f"({kernel}'s launches per call vary with the shape)")
        if self.launches[kernel] != 1:
            raise InvalidParameter("kernel", kernel, f"a kernel launched once per call ({kernel} is launched "
                                   f"{self.launches[kernel]} times: one hook cannot tell its launches apart)")
        return kernel

    def _terms(self, key: Key) -> dict[Term, Fraction]:
        return dict(self.coefficients.get(key, {}))

    def _total_terms(self) -> dict[Term, Fraction]:
        out: dict[Term, Fraction] = {}
        for t in self.tensors:
            for f in ("reads_bytes", "writes_bytes"):
                for term, c in self.coefficients.get((t, f), {}).items():
                    out[term] = out.get(term, Fraction(0)) + c
        return {k: v for k, v in out.items() if v}

    # ----------------------------------------------------------------------------------------------- output
    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name, "causal": self.causal, "dtype": self.dtype, "block": {"B_r": self.block[0], "B_c": self.block[1]},
            "splits": self.splits,
            "basis": {"units": list(self.units), "widths": list(self.widths), "lengths": list(self.lengths)},
            "definitions": {n: fb.LENGTH[n].doc for ln in self.lengths for n in fb.named_in(ln)},
            "formulas": {f"{t}.{f}": self.text(t, f) for (t, f) in sorted(self.coefficients)},
            "fit": {"shapes": len(self.fit_shapes), "seconds": round(self.fit_seconds, 3)},
            "held_out": [{"shape": h.shape, "exact": h.ok, "mismatches": {k: list(v) for k, v in h.mismatches.items()},
                          "seconds": round(h.seconds, 3)} for h in self.held_out],
            "exact": self.exact,
            "launches": self.launches,
        }

    def lines(self) -> list[str]:
        out = [f"{self.name}: {'causal' if self.causal else 'no mask'}, {self.dtype}, blocks B_r={self.block[0]} "
               f"B_c={self.block[1]}{'' if self.splits is None else f', S={self.splits} key splits'}; fitted on {len(self.fit_shapes)} shapes in {self.fit_seconds:.1f} s"]
        for h in self.held_out:
            s = ", ".join(f"{k}={v}" for k, v in h.shape.items())
            out.append(f"  held out ({s}): " + ("exact" if h.ok else "MISMATCH " + "; ".join(
                f"{k} counted {a} formula {b}" for k, a_b in h.mismatches.items() for a, b in [a_b])))
        if not self.exact:
            out.append("  no formula printed: " + ("not checked on held-out shapes" if not self.held_out
                                                   else "it does not match every held-out count (a term outside "
                                                   "the basis: a wider one, e.g. widths 1,d,d_v,T_d,T_v, may fit)"))
            return out
        for t in self.tensors:
            out.append(f"  {t}")
            for f in FIELDS:
                if (t, f) in self.coefficients:
                    out.append(f"    {f:<13} = {self.text(t, f)}")
        used = sorted({n for terms in self.coefficients.values() for (_, _, l) in terms for n in fb.named_in(l)})
        out += [f"  where {n} = {fb.LENGTH[n].doc}" for n in used]
        out.append("  T_r = ⌈N_q/B_r⌉, T_c = ⌈N_kv/B_c⌉")
        return out


# ------------------------------------------------------------------------------------------------------- fitting

def _shape(s: dict[str, Any], causal: bool) -> dict[str, int]:
    s = dict(s)
    if hasattr(s.get("workload"), "Nq"):
        s = _from_workload(s["workload"])
    if "N" in s:
        n = s.pop("N")
        s.setdefault("N_q", n)
        s.setdefault("N_kv", n)
    s.setdefault("Z", 1)
    s.setdefault("H", 1)
    s.setdefault("H_kv", s["H"])
    if "d" not in s:
        raise InvalidParameter("shape", s, "keywords Z, H, H_kv, N_q, N_kv (or N), d, d_v with d given")
    s.setdefault("d_v", s["d"])
    extra = set(s) - set(fb.SHAPE)
    if extra or "N_q" not in s:
        raise InvalidParameter("shape", s, "keywords Z, H, H_kv, N_q, N_kv (or N), d, d_v")
    for k in fb.SHAPE:
        if not isinstance(s[k], int) or isinstance(s[k], bool) or s[k] < 1:
            raise InvalidParameter(k, s[k], "an integer ≥ 1")
    if s["H"] % s["H_kv"]:
        raise InvalidParameter("H_kv", s["H_kv"], f"a divisor of H={s['H']}")
    if causal and s["N_q"] > s["N_kv"]:
        raise InvalidParameter("N_q", s["N_q"], f"N_q ≤ N_kv={s['N_kv']} under a causal mask (bottom-right aligned)")
    return {k: s[k] for k in fb.SHAPE}


def _from_workload(w: Any) -> dict[str, int]:
    return {"Z": w.batch, "H": w.heads, "H_kv": w.kv_heads, "N_q": w.Nq, "N_kv": w.Nkv, "d": w.d, "d_v": w.dv}


def measure(launch: Any, shape: dict[str, int], *, causal: bool, dtype: str = "fp32", M: int | None = None,
            args: dict[str, str] | None = None, seed: int = 0, counter: Any = None) -> dict[Key, int]:
    """One full count of ``launch`` at ``shape``: (tensor, field) -> int, and (``launch:<kernel>``, ``bytes``),
    (``launch:<kernel>``, ``launches``) per kernel name. ``counter``: see :func:`fit`."""
    return _measure(launch, shape, causal, dtype, M, args, seed, counter)[0]


def _measure(launch: Any, shape: dict[str, int], causal: bool, dtype: str, M: int | None,
             args: dict[str, str] | None, seed: int, counter: Any = None) -> tuple[dict[Key, int], Any]:
    from attnio.core.workload import Workload
    from attnio.triton.check import LauncherError, _call, make_inputs
    from attnio.triton.launcher import resolve

    w = Workload.build(batch=shape["Z"], heads=shape["H"], kv_heads=shape["H_kv"], Nq=shape["N_q"], Nkv=shape["N_kv"],
                       d=shape["d"], dv=shape["d_v"], causal=causal, dtype=dtype, M=M, gpu=None if M else "h100")
    try:
        if counter is not None:
            t = counter(launch, w)
        else:
            lau = resolve(launch, args)
            t = _call(lau, make_inputs(w, lau.inputs, seed), w)
    except LauncherError as e:  # name the shape the fit or check chose; a width not a power of two: say so
        at = " ".join(f"{k}={v}" for k, v in shape.items())
        hint = ("; the default design counts widths that are not powers of two (a kernel's tl.arange(0, d) "
                "needs them: give fit(points={'widths': [(16, 16), (32, 32), (64, 64)]}) in Python; --widths "
                "chooses the basis, not the points)" if "power of 2" in str(e) else "")
        raise LauncherError(f"counting the shape {at}: {e}{hint}") from e
    out: dict[Key, int] = {}
    for n in t.names:
        for f in FIELDS:
            out[(n, f)] = int(getattr(t, f).get(n, 0))
    for k, tally in t.per_launch.items():
        out[(LAUNCH + k, "bytes")] = int(tally.total_bytes)
    return out, t


def _candidates(block: tuple[int, int], causal: bool) -> tuple[list, list, list]:
    B_r, B_c = block
    units = [(1, 1, 1), (1, 2, 1), (1, 2, 2), (2, 1, 1), (2, 2, 1), (1, 3, 1), (2, 2, 2)]
    widths = [(2, 2), (3, 2), (2, 3), (2, B_c + 1), (3, 3), (B_c + 1, 2), (4, 5)]
    vals = sorted({v for B in (B_r, B_c) for v in (1, 2, B - 1, B, B + 1, 2 * B - 1, 2 * B + 1, 3 * B - 1, 3 * B + 2,
                                                   4 * B - 3) if v >= 1})
    pairs = [(a, b) for a in vals for b in vals if not causal or a <= b]
    pairs.sort(key=lambda p: (-(-p[0] // B_r)) * (-(-p[1] // B_c)) + (p[0] + p[1]) / (B_r + B_c))
    return units, widths, pairs


def design(block: tuple[int, int], causal: bool, units: tuple[str, ...], widths: tuple[str, ...],
           lengths: tuple[str, ...], points: dict[str, list[tuple[int, ...]]] | None = None,
           splits: int | None = None) -> list[dict[str, int]]:
    """The factorial design: the product of one greedy set of points per axis (:func:`fb.greedy_design`).
    ``points``: candidate points replacing the default ones of an axis (``"units"``: (Z, H, H_kv), ``"widths"``:
    (d, d_v), ``"lengths"``: (N_q, N_kv)), for a kernel that takes only some shapes (e.g. d = d_v a power of 2).
    ``splits``: the kernel's key splits S (for NE)."""
    cu, cw, cl = _candidates(block, causal)
    cu, cw, cl = ((points or {}).get(a) or c for a, c in (("units", cu), ("widths", cw), ("lengths", cl)))
    base = {"Z": 1, "H": 1, "H_kv": 1, "N_q": 1, "N_kv": 1, "d": 1, "d_v": 1}

    def row(axis: dict, names: tuple[str, ...], patch: dict[str, int]) -> list[int]:
        ctx = fb.context({**base, **patch}, block, splits)
        return [fb.value(axis[n], ctx) for n in names]

    try:
        pu = fb.greedy_design(cu, lambda p: row(fb.UNIT, units, dict(zip(("Z", "H", "H_kv"), p, strict=True))), len(units))
        pw = fb.greedy_design(cw, lambda p: row(fb.WIDTH, widths, dict(zip(("d", "d_v"), p, strict=True))), len(widths))
        pl = fb.greedy_design(cl, lambda p: row(fb.LENGTH, lengths, dict(zip(("N_q", "N_kv"), p, strict=True))), len(lengths))
    except ValueError as e:
        raise FitError(f"the basis is not identifiable on the candidate shapes: {e}") from e
    return [{**dict(zip(("Z", "H", "H_kv"), u, strict=True)), **dict(zip(("N_q", "N_kv"), ln, strict=True)),
             **dict(zip(("d", "d_v"), wd, strict=True))} for u, wd, ln in itertools.product(pu, pw, pl)]


def held_out_shapes(block: tuple[int, int], causal: bool) -> list[dict[str, int]]:
    """Three shapes none of which is a design point: partial last blocks (B ∤ N), N_q ≠ N_kv, batch 2-3, GQA and
    MQA groups, odd widths, d_v past B_c (a second width tile)."""
    B_r, B_c = block
    s1 = {"Z": 2, "H": 4, "H_kv": 2, "N_q": 2 * B_r + 3, "N_kv": 2 * B_r + B_c + 8, "d": 5, "d_v": 7}
    s2 = {"Z": 1, "H": 3, "H_kv": 1, "N_q": max(1, B_r - 3), "N_kv": 2 * B_c + 1, "d": 8, "d_v": 4}
    n = 3 * max(B_r, B_c) + 1
    s3 = {"Z": 3, "H": 2, "H_kv": 2, "N_q": n, "N_kv": n, "d": 3, "d_v": B_c + 3}
    return [_shape(s, causal) for s in (s1, s2, s3)]


def _block_of(launch: Any, block: tuple[int, int] | None) -> tuple[Any, tuple[int, int]]:
    """The launcher with its blocks pinned and the blocks: ``block`` given (passed as the launcher's ``block``
    keyword when it has one), else the launcher's ``block`` default or its ``attnio_block`` attribute."""
    try:
        params = inspect.signature(launch).parameters
    except (TypeError, ValueError):
        params = {}
    if block is None:
        p = params.get("block")
        block = p.default if p is not None and p.default is not inspect.Parameter.empty else getattr(launch, "attnio_block", None)
        if block is None:
            raise InvalidParameter("block", None, "(B_r, B_c): the kernel's pinned blocks (give block=, a launcher "
                                   "`block` default, or an `attnio_block` attribute)")
    if (not isinstance(block, tuple | list) or len(block) != 2
            or not all(isinstance(b, int) and not isinstance(b, bool) and b >= 1 for b in block)):
        raise InvalidParameter("block", block, "(B_r, B_c), two integers ≥ 1")
    block = (int(block[0]), int(block[1]))
    if "block" in params:
        pinned = functools.partial(launch, block=block)
        functools.update_wrapper(pinned, launch)
        for a in ("attnio_args", "attnio_roles"):
            if hasattr(launch, a):
                setattr(pinned, a, getattr(launch, a))
        return pinned, block
    return launch, block


def fit(launch: Any, workloads: list[Any] | None = None, *, causal: bool = False, block: tuple[int, int] | None = None,
        dtype: str = "fp32", units: tuple[str, ...] = fb.UNITS_DEFAULT, widths: tuple[str, ...] | None = None,
        lengths: tuple[str, ...] | None = None, M: int | None = None, args: dict[str, str] | None = None,
        seed: int = 0, check: bool = True, points: dict[str, list[tuple[int, ...]]] | None = None,
        counter: Any = None, splits: int | None = None) -> KernelFormula:
    """Fit the closed form of ``launch``'s traffic (module docstring). ``workloads``: the fit shapes (dicts of
    Z, H, H_kv, N_q, N_kv, d, d_v, or Workloads); default :func:`design`, the factorial design that identifies
    the basis. ``block``: the kernel's pinned (B_r, B_c) (module ``_block_of``). ``widths`` defaults to the
    launcher's ``attnio_widths`` attribute, else 1, d, d_v; ``lengths`` to the unmasked or the causal basis. ``check``: run :meth:`KernelFormula.check` on :func:`held_out_shapes`.
    ``points``: candidate points per axis for the design (:func:`design`). ``counter``: ``counter(launch, workload)
    -> Traffic``, the count of one shape (default: the launcher called on attnio.triton.check's inputs), for a
    launcher that takes its shape another way (a packed batch, a paged cache: the caller builds those inputs);
    it is kept for :meth:`KernelFormula.check`. ``splits``: the kernel's pinned key splits S, needed by the
    length NE (default the launcher's ``attnio_splits`` attribute, else none).
    FitError when a field has no exact fit in the basis."""
    from attnio.core.validate import check_choice

    check_choice("dtype", dtype, ["fp32", "fp16", "bf16"])
    lengths = tuple(lengths) if lengths is not None else (fb.LENGTHS_CAUSAL if causal else fb.LENGTHS_PLAIN)
    widths = tuple(widths) if widths is not None else tuple(getattr(launch, "attnio_widths", fb.WIDTHS_DEFAULT))
    for axis, names, table in (("units", units, fb.UNIT), ("widths", widths, fb.WIDTH), ("lengths", lengths, fb.LENGTH)):
        bad = [n for n in names if n not in table]
        if bad or not names or len(set(names)) < len(names):  # a repeated name would make the basis singular
            raise InvalidParameter(axis, bad or names, "distinct names among " + ", ".join(table))
    splits = splits if splits is not None else getattr(launch, "attnio_splits", None)
    if splits is not None and (not isinstance(splits, int) or isinstance(splits, bool) or splits < 1):
        raise InvalidParameter("splits", splits, "an integer ≥ 1 (the kernel's key splits)")
    if splits is None and {"NE", "N_q*NE"} & set(lengths):
        raise InvalidParameter("splits", None, "an integer ≥ 1: the kernel's key splits S, which the length NE needs")
    launch, block = _block_of(launch, block)
    shapes = [_shape(w if isinstance(w, dict) else {"workload": w}, causal) for w in workloads] if workloads is not None \
        else design(block, causal, tuple(units), tuple(widths), lengths, points, splits)
    t0 = time.perf_counter()
    opts = {"M": M, "args": args, "seed": seed, "counter": counter}
    counts, launches, kargs, layouts = [], {}, {}, []
    for s in shapes:
        c, t = _measure(launch, s, causal, dtype, M, args, seed, counter)
        counts.append(c)
        layouts.append((s, dict(getattr(t, "layouts", {}))))
        for k in set(t.launches) | set(launches):  # launches per call; 0: it varies with the shape
            n = t.launches.count(k)
            launches[k] = n if launches.get(k, n) == n else 0
        for n, al in getattr(t, "aliases", {}).items():
            for a in al:
                kern, _, arg = a.rpartition(".")
                if kern:
                    kargs.setdefault(kern, {}).setdefault(n, arg)
    coefficients = solve_counts(shapes, counts, block, tuple(units), tuple(widths), lengths,
                                identified=workloads is None, splits=splits)
    name = getattr(launch, "__qualname__", None) or getattr(launch, "__name__", repr(launch))
    f = KernelFormula(name, causal, dtype, block, tuple(units), tuple(widths), lengths, coefficients, shapes,
                      time.perf_counter() - t0, launches, kargs, splits=splits, layouts=layouts, _launch=launch,
                      _options=opts)
    if check:
        f.check()
    return f


def solve_counts(shapes: list[dict[str, int]], counts: list[dict[Key, int]], block: tuple[int, int],
                 units: tuple[str, ...], widths: tuple[str, ...], lengths: tuple[str, ...],
                 identified: bool = False, splits: int | None = None) -> dict[Key, dict[Term, Fraction]]:
    """The exact coefficients of every (tensor, field) of ``counts`` (one dict per shape; a missing key is 0)
    in the product basis units × widths × lengths (``splits``: S, for NE); FitError when the shapes do not
    identify the basis or a field has no exact fit (its residual at a fit shape is not 0)."""
    terms = [(u, w, ln) for u in units for w in widths for ln in lengths]
    X = []
    for s in shapes:
        ctx = fb.context(s, block, splits)
        X.append([fb.value(fb.UNIT[u], ctx) * fb.value(fb.WIDTH[w], ctx) * fb.value(fb.LENGTH[ln], ctx) for u, w, ln in terms])
    keys = sorted({k for c in counts for k in c})
    theta = _solve(X, [[c.get(k, 0) for k in keys] for c in counts], identified)
    coefficients: dict[Key, dict[Term, Fraction]] = {}
    for j, k in enumerate(keys):
        resid = [sum((x * th[j] for x, th in zip(row, theta, strict=True)), Fraction(0)) - c.get(k, 0)
                 for row, c in zip(X, counts, strict=True)]
        if any(resid):
            raise FitError(f"{k[0]}.{k[1]} has no exact fit in the basis (units {', '.join(units)}; widths "
                           f"{', '.join(widths)}; lengths {', '.join(lengths)})")
        coefficients[k] = {terms[i]: th[j] for i, th in enumerate(theta) if th[j]}
    return coefficients


def _solve(X: list[list[int]], Y: list[list[int]], identified: bool = False) -> list[list[Fraction]]:
    """Exact least squares over the rationals: the θ with XᵀXθ = XᵀY (θ = X⁻¹Y when X is square). A float
    solve proposes θ, rounded to rationals of small denominator, and is kept only when the normal equations hold
    exactly; otherwise θ is solved in Fractions. ``identified``: X's columns are known independent (a product
    of nonsingular axis designs), else the rank is checked exactly. FitError when the shapes do not identify
    the basis."""
    import numpy as np

    n, k = len(X), len(X[0])
    if not identified and fb.rank(X) < k:
        raise FitError(f"the {n} fit shapes do not identify the {k} basis terms (rank {fb.rank(X)})")
    nf = len(Y[0])
    A, B = X, Y  # square: Xθ = Y; else the normal equations
    if n != k:
        A = [[sum(X[r][i] * X[r][j] for r in range(n)) for j in range(k)] for i in range(k)]
        B = [[sum(X[r][i] * Y[r][f] for r in range(n)) for f in range(nf)] for i in range(k)]
    guess = np.linalg.lstsq(np.array(X, dtype=float), np.array(Y, dtype=float), rcond=None)[0]
    theta = [[Fraction(float(guess[i][f])).limit_denominator(1 << 12) for f in range(nf)] for i in range(k)]
    if all(sum((A[i][r] * theta[r][f] for r in range(k) if theta[r][f]), Fraction(0)) == B[i][f]
           for i in range(k) for f in range(nf)):
        return theta
    inv = fb.inverse(A)
    return [[sum((inv[i][r] * B[r][f] for r in range(k)), Fraction(0)) for f in range(nf)] for i in range(k)]


# ---------------------------------------------------------------------------------------------- generated source

_ROLE_DIMS = {  # attnio tensor -> the shape names its dimensions give
    "q": ("Z", "H", "N_q", "d"), "dq": ("Z", "H", "N_q", "d"), "k": ("Z", "H_kv", "N_kv", "d"),
    "dk": ("Z", "H_kv", "N_kv", "d"), "v": ("Z", "H_kv", "N_kv", "d_v"), "dv": ("Z", "H_kv", "N_kv", "d_v"),
    "o": ("Z", "H", "N_q", "d_v"), "do": ("Z", "H", "N_q", "d_v"), "lse": ("Z", "H", "N_q"),
}


def _view_dims(tensor: str, layouts: list[tuple[dict[str, int], tuple | None]]) -> tuple[str | None, ...]:
    """The shape name each dimension of a kernel argument gives, from its ``layouts`` (one per counted shape: the
    shape, and the attnio tensor's name, the view's shape and strides, the tensor's shape and strides,
    Traffic.layouts, or None where the argument was not this view). The counted tensor must be ``tensor`` in
    attnio's (Z, H, N, d) layout (:data:`_ROLE_DIMS`: its sizes those of the shape), else every name is None. A
    view dimension gives a name n of that layout when, at every counted shape where each of the tensor's dimensions is above 1
    (there a merged dimension matches none: at Z = 1, ``q.reshape(-1, N, d)`` would pass for H), it has n's size
    and stride and no other dimension does, and at every other counted shape n's size; otherwise None (merged,
    unmatched, or no such shape counted). A permuted view (``q.transpose(1, 2)``) gives its names in its order.
    Empty: the argument was not the same-rank view at every counted shape.

    >>> s, s1 = {"Z": 2, "H": 3, "N_q": 5, "d": 4}, {"Z": 1, "H": 3, "N_q": 5, "d": 4}
    >>> _view_dims("q", [(s, ("q", (6, 5, 4), (20, 4, 1), (2, 3, 5, 4), (60, 20, 4, 1)))])
    (None, 'N_q', 'd')
    >>> _view_dims("q", [(s1, ("q", (3, 5, 4), (20, 4, 1), (1, 3, 5, 4), (60, 20, 4, 1)))])
    (None, None, None)
    >>> _view_dims("q", [(s, ("q", (2, 5, 3, 4), (60, 4, 20, 1), (2, 3, 5, 4), (60, 20, 4, 1)))])
    ('Z', 'N_q', 'H', 'd')
    """
    names = _ROLE_DIMS.get(tensor, ())
    pairs = [(shape, v) for shape, v in layouts if v is not None]
    seen = [v for _, v in pairs]
    if not seen or len(seen) < len(layouts) or len({len(v[1]) for v in seen}) != 1:
        return ()
    if any(v[0] != tensor or v[3] != tuple(shape.get(n) for n in names) for shape, v in pairs):
        return (None,) * len(seen[0][1])
    full = [v for v in seen if min(v[3]) > 1]
    out: list[str | None] = []
    for i in range(len(seen[0][1])):
        found = set()
        for _, vs, vst, bs, bst in full:
            match = [n for n, size, st in zip(names, bs, bst, strict=True) if size == vs[i] and st == vst[i]]
            found.add(match[0] if len(match) == 1 else None)
        n = found.pop() if len(found) == 1 else None
        if n is not None and any(vs[i] != bs[names.index(n)] for _, vs, _, bs, _ in seen):
            n = None
        out.append(n)
    return tuple(out)


def _shape_from_args(f: KernelFormula, kernel: str) -> list[str]:
    """Lines that read Z, H, H_kv, N_q, N_kv, d, d_v from the kernel's tensor arguments, each from a dimension
    that gives it alone in the layouts the kernel saw when counted (:attr:`KernelFormula.layouts`). A shape
    name no argument gives: Unsupported when an argument's layout hides it (merged or unmatched dimensions),
    else InvalidParameter naming it; never a guess."""
    from attnio.core.errors import Unsupported

    lines, got = [], set()
    args = sorted(f.kernel_args.get(kernel, {}).items())
    dims = {t: (_ROLE_DIMS.get(t, ()) if f.layouts is None else _view_dims(t, [(s, x.get(f"{kernel}.{a}")) for s, x in f.layouts]))
            for t, a in args}
    for tensor, arg in args:
        for i, n in enumerate(dims[tensor]):
            if n is not None and n not in got:
                lines.append(f"{n} = int(args[{arg!r}].shape[{i}])")
                got.add(n)
    missing = [n for n in fb.SHAPE if n not in got]
    hidden = [f"{arg} ({', '.join(n or '?' for n in dims[t])})" for t, arg in args
              if len(dims[t]) != len(_ROLE_DIMS.get(t, ())) or None in dims[t]]
    if missing and hidden:
        raise Unsupported(f"launch_metadata for {kernel}: {', '.join(missing)} cannot be read from its tensor "
                          f"arguments, whose layouts merge or reorder attnio's dimensions ({'; '.join(hidden)}; "
                          "?: a dimension that is no single shape name at the counted shapes, or none was counted with every "
                          "dimension above 1: check() on held-out shapes counts such shapes); no hook rather than a guess")
    if missing:
        raise InvalidParameter("kernel", kernel, f"a kernel whose tensor arguments give {', '.join(missing)} "
                               f"(it takes {', '.join(sorted(f.kernel_args.get(kernel, {}))) or 'no named tensor'})")
    return lines


def _emit(f: KernelFormula, name: str, header: str, lines: list[str], terms: dict[Term, Fraction],
          kernel_name: str | None = None) -> str:
    if f.held_out and not f.exact:
        raise InvalidParameter("formula", f.name, "a formula exact on its held-out shapes (this one differs from a "
                               "held-out count: no code is generated from it)")
    B_r, B_c = f.block
    used = sorted({ln for (_, _, ln) in terms}, key=lambda x: f.lengths.index(x) if x in f.lengths else 0)
    body = [*lines, f"B_r, B_c = {B_r}, {B_c}", "T_r = -(-N_q // B_r)", "T_c = -(-N_kv // B_c)"]
    if f.splits is not None:
        body.append(f"S = {f.splits}")
    for ln in used:
        if ln in fb.NAMED:
            body.append(f"{ln} = {fb.LENGTH[ln].py}")
    parts = []
    for (u, w, ln), c in sorted(terms.items()):
        fac = " * ".join(x for x in (f"({fb.UNIT[u].py})", f"({fb.WIDTH[w].py})", ln if ln in fb.NAMED else f"({fb.LENGTH[ln].py})") if x != "(1)")
        parts.append(f"Fraction({c.numerator}, {c.denominator}) * {fac or '1'}" if c.denominator != 1
                     else f"{c.numerator} * {fac or '1'}")
    body.append("total = " + (" + ".join(parts) if parts else "0"))
    if kernel_name is None:
        body.append("return int(total)")
    else:
        body.append(f"return {{'name': {kernel_name!r} + f' Z={{Z}} H={{H}} H_kv={{H_kv}} N_q={{N_q}} N_kv={{N_kv}} "
                    f"d={{d}} d_v={{d_v}}', 'bytes': int(total)}}")
    mask = "causal" if f.causal else "no mask"
    checked = (f"exact on {len(f.held_out)} held-out shapes" if f.exact else "not checked on held-out shapes")
    doc = (f'    """Bytes of {kernel_name or f.name} ({mask}, {f.dtype}, B_r={B_r}, B_c={B_c}): attnio\'s fitted '
           f'formula, {checked}; valid only at these blocks and this mask."""')
    src = [header.format(name=name), doc]
    if any(c.denominator != 1 for c in terms.values()):
        src.append("    from fractions import Fraction")
    src += ["    " + b for b in body]
    return "\n".join(src) + "\n"


def _compile(src: str, name: str) -> Any:
    ns: dict[str, Any] = {}
    exec(compile(src, f"<attnio formula {name}>", "exec"), ns)  # noqa: S102 (our own generated text)
    return ns[name]
