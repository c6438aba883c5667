"""Per-segment check of the counting lemmas behind B1, B2 and B3 (docs/bounds/b3.md, "measurement").

The lower-bound proofs cut the I/O sequence of a calculation into segments of R I/Os and bound the useful work
done inside one segment. This module does the same to a measured trace (``Machine(trace=True)``, numeric mode,
so every event has weight 1 and the events are in execution order) with R = M:

- **Windows.** Window t holds the I/O words number ``t·M + 1 … (t+1)·M`` of the run (R, W and I events all
  count; the last window may be shorter). An I/O event of w words occupies w consecutive word positions, so an
  event that straddles a boundary is split word by word: its first words count in the earlier window, the
  rest in the later one (the "proportional" rule, exact at word granularity).
- **Work.** A ``C`` event (``m.work(kind, amount)``) happens at one instant: after the I/O words issued before
  it. It is attributed entirely to the window of the *next* I/O word (a boundary sits right after word t·M, so
  work done after the last word of window t belongs to window t + 1). Work after the final I/O word belongs to
  the last window.

Limits per window, with B = M + R_t (R_t = the window's I/O words, M for all but the last):

- **B2 (PV products, every window, every schedule):** at most max(B²/(8d), d·B) products A_ij·V_jℓ'
  (claims constants.b2.maximise and constants.b2.endpoint). For d_v ≠ d this limit is not derived: ``None``.
- **B1 (QKᵀ dot products, every window):** at most max(B²/(4d²), B) *completed* dot products (claims
  constants.b1.amgm, constants.b1.endpoint). The trace counts scalar products ("qk" amount); a schedule whose
  qk events are whole dot products (amount = rows·cols·d) completes amount/d of them. Schedules that split the
  d-long dot product across events (k-chunked tiling) are checked only against the generic scalar limit
  (B/2)² (each scalar product needs its Q and K word available).
- **B3 (PV products):** M²/(4d) + 4d³ is the per-segment maximum *in steady state*; B3's lemma is amortised
  (a window that opens fresh output slots without I/O may exceed it; the excess is repaid by partial-sum
  I/O elsewhere), so the ratio is reported over all windows and over steady windows: full windows, not the
  first, containing no write and following a window with no write (no output block ends or starts there).

>>> from attnio.algorithms.run import run
>>> rep = check(run("flash2", N=64, d=4, M=120, seed=0, trace=True, check=False).measurement, d=4)
>>> rep.b2_ratio <= 1, rep.windows[0].io_words == 120
(True, True)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

from attnio.algorithms.machine import Measurement
from attnio.core.errors import InvalidParameter

IO_KINDS = ("R", "W", "I")


@dataclass(frozen=True)
class Window:
    index: int
    io_words: int
    work: dict[str, int]
    writes: bool  # any W or I word in this window


@dataclass(frozen=True)
class SegmentReport:
    algorithm: str
    M: int
    d: int
    dv: int
    windows: tuple[Window, ...]
    pv_max: int  # largest PV products in one window
    qk_max: int  # largest scalar QKᵀ products in one window
    b2_ratio: float | None  # max over windows of PV / B2 per-window limit (must be ≤ 1)
    b1_ratio: float  # max over windows of (qk/d) / B1 per-window limit (≤ 1 for whole-dot schedules)
    qk_scalar_ratio: float  # max over windows of qk / (B/2)² (≤ 1 for every schedule)
    b3_ratio: float  # max over all windows of PV / (M²/(4d) + 4d³) (amortised: may exceed 1)
    b3_steady_ratio: float | None  # the same over steady windows (None if there are none)
    steady_windows: int = field(default=0)

    def summary(self) -> dict[str, object]:
        return {
            "algorithm": self.algorithm,
            "M": self.M,
            "d": self.d,
            "windows": len(self.windows),
            "pv_max": self.pv_max,
            "b2_ratio": self.b2_ratio,
            "b1_ratio": self.b1_ratio,
            "qk_scalar_ratio": self.qk_scalar_ratio,
            "b3_ratio": self.b3_ratio,
            "b3_steady_ratio": self.b3_steady_ratio,
            "steady_windows": self.steady_windows,
        }


def windows(meas: Measurement) -> list[Window]:
    """Cut ``meas.trace`` into windows of ``meas.M`` I/O words (rules in the module docstring)."""
    if meas.trace is None:
        raise InvalidParameter("trace", None, "a Measurement recorded with trace=True")
    if meas.count_only or any(e.weight != 1 for e in meas.trace):
        raise InvalidParameter(
            "trace", "count-only (compressed tiles)", "a numeric-mode trace (count_only=False)"
        )
    M = meas.M
    io: list[int] = []
    work: list[dict[str, int]] = []
    wr: list[bool] = []

    def ensure(i: int) -> None:
        while len(io) <= i:
            io.append(0)
            work.append({})
            wr.append(False)

    pos = 0  # I/O words issued so far
    for e in meas.trace:
        if e.kind in IO_KINDS:
            left = e.words
            while left > 0:
                i = pos // M
                ensure(i)
                take = min(M - pos % M, left)
                io[i] += take
                wr[i] = wr[i] or e.kind != "R"
                pos += take
                left -= take
        else:
            assert e.kind == "C", e.kind
            i = pos // M
            ensure(i)
            work[i][e.target] = work[i].get(e.target, 0) + e.words
    # work after the last I/O word sits in a window with no I/O: it belongs to the last window
    if len(io) > 1 and io[-1] == 0:
        for k, a in work.pop().items():
            work[-1][k] = work[-1].get(k, 0) + a
        io.pop()
        wr.pop()
    return [Window(i, io[i], work[i], wr[i]) for i in range(len(io))]


def b1_limit(M: int, R: int, d: int) -> Fraction:
    """Completed QKᵀ dot products in a window of R I/Os: max(B²/(4d²), B), B = M + R."""
    B = M + R
    return max(Fraction(B * B, 4 * d * d), Fraction(B))


def b2_limit(M: int, R: int, d: int) -> Fraction:
    """PV products in a window of R I/Os (d_v = d): max(B²/(8d), d·B), B = M + R."""
    B = M + R
    return max(Fraction(B * B, 8 * d), Fraction(d * B))


def b3_segment_max(M: int, d: int) -> Fraction:
    """B3's steady-state per-segment maximum of PV products with R = M: M²/(4d) + 4d³."""
    return Fraction(M * M, 4 * d) + 4 * d**3


def check(meas: Measurement, *, d: int, dv: int | None = None) -> SegmentReport:
    """The per-window counts of one traced run, against the limits of the module docstring."""
    dv = d if dv is None else dv
    ws = windows(meas)
    M = meas.M
    b3max = b3_segment_max(M, d)
    pv = [w.work.get("pv", 0) for w in ws]
    qk = [w.work.get("qk", 0) for w in ws]
    b2 = (
        None
        if dv != d
        else max(
            (Fraction(p) / b2_limit(M, w.io_words, d) for p, w in zip(pv, ws, strict=True)),
            default=Fraction(0),
        )
    )
    b1 = max(
        (Fraction(q, d) / b1_limit(M, w.io_words, d) for q, w in zip(qk, ws, strict=True)),
        default=Fraction(0),
    )
    scal = max(
        (Fraction(4 * q, (M + w.io_words) ** 2) for q, w in zip(qk, ws, strict=True)), default=Fraction(0)
    )
    steady = [
        i for i, w in enumerate(ws) if i >= 1 and w.io_words == M and not w.writes and not ws[i - 1].writes
    ]
    b3s = max((Fraction(pv[i]) / b3max for i in steady), default=None)
    return SegmentReport(
        algorithm=meas.algorithm,
        M=M,
        d=d,
        dv=dv,
        windows=tuple(ws),
        pv_max=max(pv, default=0),
        qk_max=max(qk, default=0),
        b2_ratio=None if b2 is None else float(b2),
        b1_ratio=float(b1),
        qk_scalar_ratio=float(scal),
        b3_ratio=float(max((Fraction(p) / b3max for p in pv), default=Fraction(0))),
        b3_steady_ratio=None if b3s is None else float(b3s),
        steady_windows=len(steady),
    )


def survey(
    points: tuple[tuple[int, int, int], ...] = ((64, 4, 120), (96, 8, 600), (200, 8, 1000), (452, 16, 4096)),
    names: list[str] | None = None,
) -> list[dict[str, object]]:
    """Per-window ratios of every exact registered algorithm at small traced sizes (one row per run).

    Command used for docs/constants.md#segments::

        python -c "from attnio.algorithms.segments import survey; [print(r) for r in survey()]"
    """
    from attnio.algorithms import registry
    from attnio.algorithms.run import run

    rows = []
    for name in names or registry.names():
        spec = registry.get(name)
        if spec.approximate:
            continue
        for n, dd, mm in points:
            lo = spec.tiling_cls.min_M(n, dd, dd) if spec.supports_dv else spec.tiling_cls.min_M(n, dd)
            if mm < lo:
                continue
            rep = check(run(name, N=n, d=dd, M=mm, seed=0, trace=True, check=False).measurement, d=dd)
            rows.append({"N": n, **rep.summary()})
    return rows
