"""Any launcher's Triton kernels counted at production shape: programs that differ only by a base offset counted
once, and the count along each block axis fitted piecewise-affine on programs that are run.

:func:`count` counts a launcher (attnio's FA-2 forward by default; any launcher :func:`attnio.triton.check.check`
takes: a function or autograd Function receiving attnio's inputs by name, :mod:`attnio.triton.launcher`) per
tensor, without running every program, by running single programs in Triton's interpreter under
:func:`attnio.triton.count_traffic` (:mod:`attnio.triton.programs`) on *witnesses*: the workload with
b ≤ 2 batches and k ≤ 2 K/V heads (group size, N_q, N_kv, d, d_v, dtype, M kept; inputs
:mod:`attnio.triton.scale_inputs`), so that their tensors fit in memory::

    grids:      run the launcher with no program at witnesses (1, 1), (b_w, 1), (1, k_w), (b_w, k_w): per launch
                (the kernels launched, in order, must be the same) and axis, extent = e(1,1)·b^β·k^κ with
                β, κ ∈ {0, 1} (checked; scale_fit.grid_law); β or κ = 1: a unit axis, whose extent at the
                workload is extrapolated by that law; else a block axis (same extent at the workload)
    unit axes:  at the witness (b_w, k_w), after the block axes below: at two block indices (along the
                longest block axis), the one whose unit-0 program moved the fewest words of those run and the
                next (the one before, for the last), the programs at unit 0 and at the last unit of each unit
                axis run again: their accesses must agree access for access up to one base shift per tensor
                and direction (programs.shift_equal; else Mismatch); every unit then counts as unit 0
    block axes: the longest block axis (if it has more than SMALL programs) is fitted piecewise-affine
                (scale_fit.fit_axis, from whichever end's program moved fewer words, so that the lines are drawn
                through cheap programs: exceptional programs such as the first, the last partial block, or
                the programs around a causal diagonal run exactly; each affine piece checked at its third
                program and ``verify`` random ones, else Mismatch); shorter ones run in full; more than one
                block axis longer than SMALL is a Mismatch
    total       = Σ_launches Π(unit extents at the workload) × Σ_(block indices) count of the unit-0 program

Nothing is assumed silently: each check above is on the programs and witnesses named in ``method``, and a failed
one raises :class:`Mismatch` (no count). What is *not* checked: the affine law on programs that were not run,
the unit equivalence on units not compared, and that the workload launches what the witnesses do (its grid is
extrapolated by the law; a launcher that chooses its kernels by size, e.g. split-KV below an SM count, may
launch differently at the workload). A kernel whose addresses depend on values another launch writes is not
counted right (the programs not run write nothing). tests/test_triton_scale.py compares with the full run on
every small shape Hypothesis draws. ``touched`` (distinct elements) is not produced: only reads and writes,
words and bytes.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnio.core.counts import IOCount
from attnio.core.errors import InvalidParameter
from attnio.core.workload import Workload
from attnio.triton.scale_fit import Counts, Mismatch, fit_axis, grid_law, words

__all__ = ["FIELDS", "SMALL", "Mismatch", "ScaledCount", "count", "full_count", "witness"]

#: a block axis of up to this many programs is run in full (no fit)
SMALL = 6
#: the largest witness (elements of q, k, v and o) ``attnio kernel --fast`` makes (its tensors are zeros in memory)
WITNESS_ELEMENTS = 1 << 28
FIELDS = ("reads_bytes", "writes_bytes", "reads_words", "writes_words")


@dataclass
class ScaledCount:
    """Per-tensor counts of all the launcher's launches (as :class:`attnio.triton.Tally`'s fields, without
    ``touched``), how they were obtained (``method``: ``"full"`` when every program of the workload ran, else
    ``"sampled: ..."`` naming what ran and what was extrapolated), the programs run and the seconds;
    ``launches``: per launch its kernel, grid at the workload and at the witness, unit axes and pieces."""

    reads_bytes: dict[str, int]
    writes_bytes: dict[str, int]
    reads_words: dict[str, int]
    writes_words: dict[str, int]
    method: str
    programs_run: int
    programs_total: int
    seconds: float = 0.0
    witness: dict[str, int] = field(default_factory=dict)
    launches: list[dict[str, Any]] = field(default_factory=list)

    def io_count(self, tensor: str | None = None) -> IOCount:
        if tensor is None:
            return IOCount(sum(self.reads_words.values()), sum(self.writes_words.values()))
        return IOCount(self.reads_words.get(tensor, 0), self.writes_words.get(tensor, 0))

    def as_dict(self) -> dict[str, Any]:
        names = sorted(set(self.reads_words) | set(self.writes_words))
        return {
            "tensors": {n: {f: getattr(self, f).get(n, 0) for f in FIELDS} for n in names},
            "total_bytes": sum(self.reads_bytes.values()) + sum(self.writes_bytes.values()),
            "method": self.method,
            "programs_run": self.programs_run,
            "programs_total": self.programs_total,
            "seconds": round(self.seconds, 3),
            "witness": self.witness,
            "launches": self.launches,
        }


def witness(w: Workload, batch: int | None = None, kv_heads: int | None = None) -> Workload:
    """The workload with ``batch`` batches and ``kv_heads`` K/V heads (default: at most 2 each; group size kept)."""
    kv = min(w.kv_heads, 2) if kv_heads is None else kv_heads
    b = min(w.batch, 2) if batch is None else batch
    return Workload.build(batch=b, heads=kv * w.groups, kv_heads=kv, Nq=w.Nq, Nkv=w.Nkv, d=w.d, dv=w.dv,
                          causal=w.causal, dtype=w.dtype, M=w.M)


def fa2_launcher(block: tuple[int, int], schedule: str = "grouped") -> Callable[..., Any]:
    """attnio's FA-2 forward with blocks ``block`` as a launcher taking q, k, v, o, lse, causal (the default
    target of :func:`count`)."""

    def fa2(q: Any, k: Any, v: Any, o: Any, lse: Any, causal: bool) -> Any:
        from attnio.triton.kernels.fa2_fwd import fa2_forward

        return fa2_forward(q, k, v, causal=causal, block=block, schedule=schedule, o=o, lse=lse)

    return fa2


class _Programs:
    """Programs of the witness run once each (cached): (launch, index) -> Counts, digests on request."""

    def __init__(self, runner: Any, grids: list[tuple[str, tuple[int, int, int]]]) -> None:
        self.runner, self.grids = runner, grids
        self.counts: dict[tuple[int, tuple[int, int, int]], Counts] = {}
        self.digests: dict[tuple[int, tuple[int, int, int]], Any] = {}

    def get(self, keys: list[tuple[int, tuple[int, int, int]]], digest: bool = False) -> dict[Any, Counts]:
        missing = [k for k in keys if k not in self.counts or (digest and k not in self.digests)]
        if missing:
            want: dict[int, set[tuple[int, int, int]]] = {}
            for ell, idx in missing:
                want.setdefault(ell, set()).add(idx)
            ran = self.runner.run(want, set(missing) if digest else frozenset())
            if ran.launches != self.grids:
                raise Mismatch(f"the launcher launched {ran.launches} this time, {self.grids} before")
            for k in missing:
                if k not in ran.counts:
                    raise Mismatch(f"program {k[1]} of launch {k[0]} did not run")
                self.counts[k] = Counts({n: tuple(v) for n, v in ran.counts[k].items()})
                if digest:
                    self.digests[k] = ran.digests.get(k, {})
        return {k: self.counts[k] for k in keys}


def _runner(lau: Any, w: Workload, page_size: int | None) -> Any:
    from attnio.triton.programs import Runner
    from attnio.triton.scale_inputs import inputs

    made = inputs(w, lau.inputs, page_size)
    values = dict(made) | {"causal": w.causal, "sm_scale": w.d ** -0.5, "scale": w.d ** -0.5, "workload": w}
    missing = [n for n in lau.inputs if n not in values]
    if missing:
        raise InvalidParameter("launch", f"{lau.name} taking {', '.join(missing)}",
                               f"a launcher taking inputs a fast count makes: {', '.join(sorted(values))}")
    counted = {n: values[n] for n in lau.inputs if hasattr(values[n], "data_ptr")}
    return Runner(lau, values, counted)


def full_count(w: Workload, *, launch: Any = None, block: tuple[int, int] | None = None, schedule: str = "grouped",
               args: dict[str, str] | None = None, page_size: int | None = None) -> Any:
    """The full run (every program, under :func:`attnio.triton.count_traffic`) of what :func:`count` counts,
    on the same inputs (a :class:`attnio.triton.Traffic`): what the tests and benchmarks compare it with."""
    from attnio.triton.count import count_traffic
    from attnio.triton.launcher import resolve

    if launch is None:
        from attnio.triton.kernels.fa2_fwd import blocks

        launch = fa2_launcher(block if block is not None else blocks(w, schedule), schedule)
    r = _runner(resolve(launch, args), w, page_size)
    with count_traffic(**r.counted) as t:
        r.lau.call(r.values)
    return t


def count(w: Workload, *, launch: Any = None, block: tuple[int, int] | None = None, schedule: str = "grouped",
          verify: int = 1, seed: int = 0, args: dict[str, str] | None = None, page_size: int | None = None,
          length_step: int | None = None) -> ScaledCount:
    """Count ``launch`` on ``w`` per tensor by the extrapolation of the module docstring.

    ``launch``: a launcher (as :func:`attnio.triton.check.check` takes; parameters mapped by ``args`` or its
    ``attnio_args``); default attnio's FA-2 forward with blocks ``block`` = (B_r, B_c) (default attnio's
    io-optimal rule at w.M) and ``schedule`` (both only for the default). ``page_size``: the launcher takes a
    paged K/V cache of that page size (:mod:`attnio.triton.scale_inputs`). ``verify``: random programs per
    affine piece checked besides its third; ``seed`` chooses them. ``length_step`` S (decode: programs that
    loop over the whole K/V sequence): the count is also extrapolated along N_kv (:func:`_along_length`).
    Raises :class:`Mismatch` when a check fails."""
    from attnio.triton.launcher import resolve

    t0 = time.perf_counter()
    if launch is None:
        from attnio.triton.kernels.fa2_fwd import blocks

        launch = fa2_launcher(block if block is not None else blocks(w, schedule), schedule)
    elif block is not None or schedule != "grouped":
        raise InvalidParameter("block", block, "None with a launcher of your own (block and schedule are the "
                               "default FA-2 forward's)")
    lau = resolve(launch, args)
    if length_step is not None:
        return _along_length(w, lau, length_step, verify=verify, seed=seed, page_size=page_size, t0=t0)
    return _count(w, lau, verify=verify, seed=seed, page_size=page_size, t0=t0)


#: the lengths N_kv = r + m·S, m in LENGTHS, that :func:`_along_length` counts (fitted on the first two)
LENGTHS = (1, 2, 3)


def _along_length(w: Workload, lau: Any, step: int, *, verify: int, seed: int, page_size: int | None,
                  t0: float) -> ScaledCount:
    """The count at N_kv extrapolated along N_kv (N_q and everything else kept)::

        r = N_kv mod S, n = (N_kv − r)/S; n ≤ max(LENGTHS) + 1: counted at N_kv (no extrapolation)
        C(m) = count at N_kv = r + m·S for m in LENGTHS (each by the programs method, its own checks)
        the witness's grids at N_kv itself (no program run) must equal theirs (else Mismatch)
        C must be affine in m: fitted on m = 1, 2, checked on m = 3 (else Mismatch)
        count at N_kv = C(1) + (C(2) − C(1))·(n − 1)

    With S a multiple of every block and page size of the kernel, r + m·S ends in the same partial block as
    N_kv. Not checked: the affine law between the lengths counted and N_kv."""
    from attnio.core.validate import check_int

    S = check_int("length_step", step, min=1)
    r = w.Nkv % S
    n = (w.Nkv - r) // S
    if n <= max(LENGTHS) + 1:
        return _count(w, lau, verify=verify, seed=seed, page_size=page_size, t0=t0)
    if w.Nq > r + S:
        raise InvalidParameter("length_step", S, f"at least N_q − (N_kv mod S) = {w.Nq - r} (the shortest length "
                               f"counted, r + S, must hold the {w.Nq} query rows)")
    lengths = [r + m * S for m in LENGTHS]
    parts = []
    for L in lengths:
        wl = Workload.build(batch=w.batch, heads=w.heads, kv_heads=w.kv_heads, Nq=w.Nq, Nkv=L, d=w.d, dv=w.dv,
                            causal=w.causal, dtype=w.dtype, M=w.M)
        parts.append(_count(wl, lau, verify=verify, seed=seed, page_size=page_size, t0=time.perf_counter()))
    here = _runner(lau, witness(w), page_size).run().launches
    for L, p in zip(lengths, parts, strict=True):
        seen = [(x["kernel"], tuple(x["witness_grid"])) for x in p.launches]
        if seen != [(k, tuple(g)) for k, g in here]:
            raise Mismatch(f"the witness launches {seen} at N_kv = {L} but {here} at N_kv = {w.Nkv}: the grid "
                           f"changes with N_kv, which the length fit does not extrapolate")
    C = [Counts({n_: tuple(getattr(p, f).get(n_, 0) for f in FIELDS) for n_ in p.reads_words}) for p in parts]
    b = C[1] - C[0]
    for m, c in zip(LENGTHS[2:], C[2:], strict=True):
        if c != C[0] + b * (m - 1):
            raise Mismatch(f"the count at N_kv = {r + m * S} is not on the line through N_kv = {lengths[0]} and "
                           f"{lengths[1]}: not affine in N_kv")
    total = C[0] + b * (n - 1)
    names = sorted(total)
    res = {f: {x: int(total[x][j]) for x in names} for j, f in enumerate(FIELDS)}
    method = (f"sampled along N_kv: counted at N_kv = {', '.join(map(str, lengths))}, affine in N_kv (fitted on "
              f"{lengths[0]}, {lengths[1]}, checked on {', '.join(map(str, lengths[2:]))}), extrapolated to N_kv = "
              f"{w.Nkv} (step {S}); the witness's grids at N_kv = {w.Nkv} equal theirs (checked); at each length: "
              + " | ".join(f"N_kv = {L}: {p.method}" for L, p in zip(lengths, parts, strict=True)))
    return ScaledCount(**res, method=method, programs_run=sum(p.programs_run for p in parts),
                       programs_total=parts[0].programs_total, seconds=time.perf_counter() - t0,
                       witness=parts[0].witness, launches=parts[0].launches)


def _block_sum(progs: _Programs, ell: int, long_ax: int, T: int, fixed: dict[int, int], verify: int,
               seed: int) -> tuple[Counts, str]:
    """Σ over the long block axis (index i < T; the short block axes at ``fixed``, units 0) of launch ``ell``'s
    program counts: all run when T ≤ SMALL, else :func:`attnio.triton.scale_fit.fit_axis`."""

    def key(i: int) -> tuple[int, tuple[int, int, int]]:
        idx = [0, 0, 0]
        idx[long_ax] = i
        for ax, j in fixed.items():
            idx[ax] = j
        return (ell, (idx[0], idx[1], idx[2]))

    def run(idx: list[int]) -> dict[int, Counts]:
        got = progs.get([key(i) for i in idx])
        return {i: got[key(i)] for i in idx}

    if T <= SMALL:
        part = Counts()
        for c in run(list(range(T))).values():
            part = part + c
        return part, f"all {T} run"
    return fit_axis(T, run, verify=verify, seed=seed)


def _count(w: Workload, lau: Any, *, verify: int, seed: int, page_size: int | None, t0: float) -> ScaledCount:
    """The programs method of the module docstring on ``w``."""
    bw, kw = min(w.batch, 2), min(w.kv_heads, 2)
    grids: dict[tuple[int, int], list[tuple[str, tuple[int, int, int]]]] = {}
    for b, k in sorted({(b, k) for b in {1, bw} for k in {1, kw}} - {(bw, kw)}):
        grids[(b, k)] = _runner(lau, witness(w, b, k), page_size).run().launches
    main = _runner(lau, witness(w, bw, kw), page_size)
    grids[(bw, kw)] = main.run().launches
    laws = grid_law(grids, w.batch, w.kv_heads)
    progs = _Programs(main, grids[(bw, kw)])

    plans = []
    for ell, law in enumerate(laws):
        wgrid = grids[(bw, kw)][ell][1]
        blocks_ = [ax for ax in range(3) if ax not in law["units"]]
        long_ax = max(blocks_, key=lambda ax: (wgrid[ax], -ax))
        short = [ax for ax in blocks_ if ax != long_ax and wgrid[ax] > 1]  # an axis of extent 1 is index 0
        if any(wgrid[ax] > SMALL for ax in short):
            raise Mismatch(f"launch {ell} ({law['name']}): two block axes longer than {SMALL} "
                           f"(grid {wgrid}): only one is fitted")
        plans.append((ell, law, wgrid, long_ax, short))

    total = Counts()
    launches, notes = [], []
    for ell, law, wgrid, long_ax, short in plans:
        rec: dict[str, Any] = {"kernel": law["name"], "grid": list(law["extent"]), "witness_grid": list(wgrid),
                               "unit_axes": ["xyz"[a] for a in law["units"]], "law": law["law"]}
        if 0 in wgrid:
            rec["pieces"] = "no programs"
            launches.append(rec)
            continue
        units = 1
        for ax in law["units"]:
            units *= law["extent"][ax]
        T = wgrid[long_ax]
        pieces = []
        for combo in itertools.product(*(range(wgrid[ax]) for ax in short)):
            part, desc = _block_sum(progs, ell, long_ax, T, dict(zip(short, combo, strict=True)), verify, seed + ell)
            total = total + part * units
            where = ", ".join(f"{'xyz'[ax]}={j}" for ax, j in zip(short, combo, strict=True))
            pieces.append(f"{where}: {desc}" if where else desc)
        rec["block_axis"] = "xyz"[long_ax]
        rec["pieces"] = "; ".join(pieces)
        launches.append(rec)

    # unit axes: offset-only, compared at the block index (along the long axis, short ones 0) whose unit-0 program
    # moved the fewest words of those run and at the next one (cheap to run again when counts are piecewise affine)
    pairs = []
    for ell, law, wgrid, long_ax, _ in plans:
        if 0 in wgrid or not law["units"]:
            continue
        ran = [(words(c), k[1][long_ax]) for k, c in progs.counts.items()
               if k[0] == ell and all(k[1][ax] == 0 for ax in range(3) if ax != long_ax)]
        cheapest = min(ran)[1]
        probes = sorted({cheapest, cheapest + 1 if cheapest + 1 < wgrid[long_ax] else max(cheapest - 1, 0)})
        launches[ell]["unit_probes"] = probes
        for i in probes:
            base = [0, 0, 0]
            base[long_ax] = i
            for ax in law["units"]:
                other = list(base)
                other[ax] = wgrid[ax] - 1
                pairs.append((ell, ax, (ell, tuple(base)), (ell, tuple(other))))
    progs.get(sorted({k for p in pairs for k in p[2:]}), digest=True)
    from attnio.triton.programs import shift_equal

    for ell, ax, a, b in pairs:
        why = shift_equal(progs.digests[a], progs.digests[b])
        if why:
            raise Mismatch(f"launch {ell} ({laws[ell]['name']}): programs {a[1]} and {b[1]} (unit axis "
                           f"{'xyz'[ax]}, units 0 and {b[1][ax]}) are not offset-only: {why}")
    for ell, law, wgrid, long_ax, _ in plans:
        rec = launches[ell]
        unit_txt = (f"unit axes {law['law']} (extents at the workload extrapolated by that law), offset-only "
                    f"checked on units 0 and last at {'xyz'[long_ax]} ∈ {{{', '.join(map(str, rec['unit_probes']))}}}"
                    if "unit_probes" in rec else "no unit axis")
        notes.append(f"launch {ell} {law['name']} grid {'×'.join(map(str, law['extent']))} (witness "
                     f"{'×'.join(map(str, wgrid))}): {unit_txt}; block axis {'xyz'[long_ax]}: {rec['pieces']}")

    programs_total = 0
    for law in laws:
        n = 1
        for e in law["extent"]:
            n *= e
        programs_total += n
    run_count = len(progs.counts)
    names = sorted(total)
    res = {f: {n: int(total[n][j]) for n in names} for j, f in enumerate(FIELDS)}
    whole = (bw, kw) == (w.batch, w.kv_heads) and run_count == programs_total
    method = "full" if whole else (
        f"sampled: witness batch {bw}, kv_heads {kw} (grids also at {', '.join(f'({b}, {k})' for b, k in sorted(grids) if (b, k) != (bw, kw)) or 'no other'}); "
        + "; ".join(notes))
    wit = witness(w, bw, kw)
    return ScaledCount(**res, method=method, programs_run=run_count, programs_total=programs_total,
                       seconds=time.perf_counter() - t0,
                       witness={"batch": wit.batch, "heads": wit.heads, "kv_heads": wit.kv_heads},
                       launches=launches)
