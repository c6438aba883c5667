"""Deterministic figures (matplotlib, Agg): same data, same SVG bytes.

Determinism: ``svg.hashsalt`` fixed, ``metadata={"Date": None}``, fixed sizes and colours, sorted data. Each
function takes plain data and returns SVG text; :mod:`attnio.reports.report` writes and embeds it.
"""

from __future__ import annotations

import io
import math
from typing import Any

COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
MARKERS = ["o", "s", "^", "v", "D", "P", "X", "*", "<", ">"]


def _plt() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    matplotlib.rcParams.update(
        {"svg.hashsalt": "attnio", "svg.fonttype": "none", "font.size": 8, "axes.titlesize": 9, "legend.fontsize": 6, "path.simplify": False}
    )
    return plt


def _svg(fig: Any) -> str:
    plt = _plt()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return buf.getvalue()


def regime_map(N: int, ds: list[int], Ms: list[int], best: dict[tuple[int, int], str], tight: dict[tuple[int, int], str] | None) -> str:
    """Two panels over the (log₂ M, log₂ d) plane: the best algorithm by exact cost, and the tightest lower
    bound (largest value) where the catalog is there; the M = d² line on both."""
    plt = _plt()
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    panels = [("best algorithm (least exact I/O)", best)] + ([("tightest lower bound", tight)] if tight is not None else [])
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), 3.6), layout="constrained", squeeze=False)
    xs = [math.log2(M) for M in Ms]
    ys = [math.log2(d) for d in ds]
    for ax, (title, cells) in zip(axes[0], panels, strict=True):
        labels = sorted(set(cells.values()))
        idx = {lab: i for i, lab in enumerate(labels)}
        grid = [[idx.get(cells.get((d, M), ""), float("nan")) for M in Ms] for d in ds]
        cmap = ListedColormap(["#dddddd"] if not labels else [_color(i) for i in range(len(labels))])
        ax.pcolormesh(_edges(xs), _edges(ys), grid, cmap=cmap, vmin=-0.5, vmax=max(len(labels), 1) - 0.5, shading="flat")
        lo, hi = min(ys) - 0.5, max(ys) + 0.5
        ax.plot([2 * lo, 2 * hi], [lo, hi], "k--", lw=1)
        ty = min(hi - 0.7, (max(xs) - 0.5) / 2)
        ax.text(2 * ty + 0.3, ty, "M = d²", ha="left", va="top", fontsize=7, bbox={"facecolor": "white", "alpha": 0.8, "lw": 0})
        ax.set_xlim(min(xs) - 0.5, max(xs) + 0.5)
        ax.set_ylim(lo, hi)
        ax.set_xlabel("log₂ M (fast-memory words)")
        ax.set_ylabel("log₂ d")
        ax.set_title(f"{title}, N = {N}")
        ax.legend(handles=[Patch(color=_color(i), label=lab) for i, lab in enumerate(labels)], loc="upper left", fontsize=6, framealpha=0.9)
    return _svg(fig)


def io_vs_N(algorithm: str, series: list[dict[str, Any]]) -> str:
    """Log-log measured I/O against N, one colour per (d, M); dashed: the exact cost formula; dotted: the
    tightest applicable lower bound. ``series``: ``{"label", "N", "io", "formula", "lower"}`` lists."""
    plt = _plt()
    import matplotlib.ticker as mt

    fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
    for i, s in enumerate(series):
        c = _color(i)
        ax.plot(s["N"], s["io"], MARKERS[i % len(MARKERS)], color=c, ms=4, label=f"measured {s['label']}")
        if any(v is not None for v in s["formula"]):
            pts = [(n, v) for n, v in zip(s["N"], s["formula"], strict=True) if v is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "-", color=c, lw=0.8, alpha=0.7)
        if any(v is not None for v in s["lower"]):
            pts = [(n, v) for n, v in zip(s["N"], s["lower"], strict=True) if v is not None]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], ":", color=c, lw=1.2)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(mt.NullFormatter())
    ax.set_xlabel("N")
    ax.set_ylabel("words moved (reads + writes)")
    ax.set_title(f"{algorithm}: measured (markers), formula (solid), lower bound (dotted)", fontsize=8)
    ax.legend(loc="upper left", fontsize=5.5, ncol=2)
    return _svg(fig)


def working_set(series: list[dict[str, Any]]) -> str:
    """Peak fast-memory words against M (log-log), with the line peak = M: above it the published schedule
    does not fit. ``series``: ``{"label", "M", "peak"}``."""
    plt = _plt()

    fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
    allM = sorted({m for s in series for m in s["M"]})
    for i, s in enumerate(series):
        ax.plot(s["M"], s["peak"], MARKERS[i % len(MARKERS)] + "-", color=_color(i), ms=4, lw=0.8, label=s["label"])
    if allM:
        ax.plot(allM, allM, "k--", lw=1, label="peak = M (capacity)")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log", base=2)
    ax.set_xlabel("M (fast-memory words)")
    ax.set_ylabel("peak fast-memory words")
    ax.set_title("FlashAttention-1 as published: working set against M")
    ax.legend(loc="upper left", fontsize=6)
    return _svg(fig)


def lines(title: str, xlabel: str, ylabel: str, series: list[dict[str, Any]], logx: bool = True, logy: bool = True) -> str:
    """Generic log-log line plot (``series``: ``{"label", "x", "y"}``)."""
    plt = _plt()

    fig, ax = plt.subplots(figsize=(5.2, 3.6), layout="constrained")
    for i, s in enumerate(series):
        ax.plot(s["x"], s["y"], MARKERS[i % len(MARKERS)] + "-", color=_color(i), ms=4, lw=0.8, label=s["label"])
    if logx:
        ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.legend(loc="best", fontsize=6)
    return _svg(fig)


def _color(i: int) -> str:
    return COLORS[i % len(COLORS)]


def _edges(cs: list[float]) -> list[float]:
    if len(cs) == 1:
        return [cs[0] - 0.5, cs[0] + 0.5]
    mids = [(a + b) / 2 for a, b in zip(cs, cs[1:], strict=False)]
    return [cs[0] - (mids[0] - cs[0])] + mids + [cs[-1] + (cs[-1] - mids[-1])]
