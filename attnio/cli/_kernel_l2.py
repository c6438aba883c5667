"""``attnio kernel … --l2 PRESET``: the counted kernel's per-program trace replayed through an L2 preset
(attnio.triton.trace captures it, attnio.algorithms.l2_trace replays it; docs/dram.md#captured-traces).

Per tensor: requested, sector and predicted DRAM bytes, the read-line and the read-sector hit rates. Bad input (an
unknown preset or order, occupancy or SMs below 1, an L2 smaller than one line, an explicit order that is not a
permutation of the grid, --l2 with --fast or --cu-seqlens, a replay option without --l2, --l2-skew without
--l2-sync drift, --l2-section-heads without --l2-order sections) is one line naming the parameter, exit 2.
"""

from __future__ import annotations

import argparse
import contextlib
from collections.abc import Iterator
from typing import Any

from attnio.cli._common import float_option, int_option


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--l2", default=None, metavar="PRESET",
                   help="replay the kernel's per-program trace through this L2 preset (a100, h100, h200, b200, "
                        "mi300x, mi355x, l4): requested, sector and predicted DRAM bytes per tensor (docs/dram.md)")
    p.add_argument("--l2-order", dest="l2_order", default="qhb", metavar="ORDER",
                   help="with --l2: launch order of each launch's grid: qhb (grid order, x fastest), hqb (y fastest), "
                        "sections (with --l2-section-heads), or program ids separated by commas (one launch)")
    p.add_argument("--l2-section-heads", dest="l2_section_heads", type=int_option, default=None,
                   help="with --l2-order sections: grid y per section")
    p.add_argument("--l2-occupancy", dest="l2_occupancy", type=int_option, default=1,
                   help="with --l2: programs resident per SM (default 1)")
    p.add_argument("--l2-sms", dest="l2_sms", type=int_option, default=None,
                   help="with --l2: SMs per L2 partition (default the preset's)")
    p.add_argument("--l2-bytes", dest="l2_bytes", type=int_option, default=None,
                   help="with --l2: L2 bytes per partition (default the preset's)")
    p.add_argument("--l2-sync", dest="l2_sync", default="lockstep", metavar="SYNC",
                   help="with --l2: lockstep (programs advance together; default) or drift (the first wave's starts "
                        "staggered over --l2-skew x a program's length; docs/dram.md#lockstep-and-drift)")
    p.add_argument("--l2-skew", dest="l2_skew", type=float_option, default=1.0,
                   help="with --l2-sync drift: the stagger, a fraction in (0, 1] of a program's length (1: drift-max)")


#: the replay's parameter names -> the options that set them
_OPTIONS = {"order": "l2-order", "section_heads": "l2-section-heads", "occupancy": "l2-occupancy", "sms": "l2-sms",
            "l2_bytes": "l2-bytes", "sync": "l2-sync", "skew": "l2-skew"}


#: the replay options' attributes and their defaults (an option set without --l2 is refused)
_DEFAULTS = {"l2_order": "qhb", "l2_section_heads": None, "l2_occupancy": 1, "l2_sms": None, "l2_bytes": None,
             "l2_sync": "lockstep", "l2_skew": 1.0}


@contextlib.contextmanager
def _named(order: str | None = None) -> Iterator[None]:
    """InvalidParameter raised inside names the command-line option, not the replay's parameter, and for the order
    the text given (``order``), not the replay's parsed sequence."""
    from attnio.core.errors import InvalidParameter

    try:
        yield
    except InvalidParameter as e:
        if e.name in _OPTIONS:
            value = order if e.name == "order" and order is not None else e.value
            raise InvalidParameter(_OPTIONS[e.name], value, e.valid) from None
        raise


def _order(args: argparse.Namespace) -> Any:
    from attnio.algorithms.l2_schedule import ORDERS
    from attnio.core.errors import InvalidParameter

    o = args.l2_order
    if o in ORDERS:
        return o
    parts = o.split(",")
    if not all(x.strip().isdigit() for x in parts):
        raise InvalidParameter("l2-order", o, "one of " + ", ".join(ORDERS) + " or program ids separated by commas")
    return [int(x) for x in parts]


def check(args: argparse.Namespace) -> None:
    """--l2's options, before anything runs."""
    from attnio.algorithms.l2_schedule import machine
    from attnio.core.errors import InvalidParameter

    if args.l2 is None:
        for attr, default in _DEFAULTS.items():
            if getattr(args, attr) != default:
                raise InvalidParameter(attr.replace("_", "-"), getattr(args, attr),
                                       "only with --l2 PRESET (it sets the replay)")
        return
    if getattr(args, "fast", False) or args.cu_seqlens is not None:
        raise InvalidParameter("l2", args.l2, "without --fast and --cu-seqlens (the replay needs every program of "
                               "one counted run)")
    from attnio.algorithms.l2_schedule import sync_skew

    with _named():
        machine(args.l2, args.l2_occupancy, args.l2_sms, args.l2_bytes)
        sync_skew(args.l2_sync, args.l2_skew)
    if _order(args) == "sections" and args.l2_section_heads is None:
        raise InvalidParameter("l2-section-heads", None, "a positive int with --l2-order sections")
    if args.l2_order != "sections" and args.l2_section_heads is not None:
        raise InvalidParameter("l2-section-heads", args.l2_section_heads, "only with --l2-order sections (it sizes "
                               f"the sections; order {args.l2_order!r} has none)")
    skew_needs_drift(args)


def skew_needs_drift(args: argparse.Namespace) -> None:
    """--l2-skew other than its default under --l2-sync lockstep (no stagger: it would be ignored): one line."""
    from attnio.core.errors import InvalidParameter

    if args.l2_sync == "lockstep" and args.l2_skew != _DEFAULTS["l2_skew"]:
        raise InvalidParameter("l2-skew", args.l2_skew, "only with --l2-sync drift (lockstep staggers nothing)")


@contextlib.contextmanager
def traced(args: argparse.Namespace) -> Iterator[Any]:
    """The trace of the counted run inside the block (None without --l2)."""
    if args.l2 is None:
        yield None
        return
    from attnio.triton.trace import tracing

    with tracing() as trace:
        yield trace


class WithL2:
    """A check's result with the replay of its trace: the check's lines and JSON, plus ``l2``."""

    def __init__(self, result: Any, replay: Any) -> None:
        self.result, self.replay = result, replay
        self.outputs_ok = result.outputs_ok

    def as_dict(self) -> dict[str, Any]:
        return {**self.result.as_dict(), "l2": self.replay.as_dict()}

    def lines(self) -> list[str]:
        r = self.replay
        out = list(self.result.lines())
        out.append(f"L2 replay of the captured trace on {r.preset} ({r.partitions} x {r.l2_lines_per_partition:,d} "
                   f"lines of 128 B, {r.slots_per_partition} slots per partition, order {r.order}, "
                   f"{'lockstep' if r.sync == 'lockstep' else f'drift (skew {r.skew:g})'}, "
                   f"{r.programs} programs):")
        out.append(f"  {'tensor':<24} {'requested B':>14} {'sector B':>14} {'DRAM B':>14} {'hit rate':>9} "
                   f"{'sector hit':>10}")
        for n, t in r.tensors.items():
            out.append(f"  {n:<24} {t.requested_bytes:>14,d} {t.sectors * t.sector_bytes:>14,d} "
                       f"{t.dram_bytes:>14,d} {t.hit_rate:>9.4f} {t.sector_hit_rate:>10.4f}")
        out.append(f"  {'total':<24} {r.requested_bytes:>14,d} {r.sector_bytes:>14,d} {r.dram_bytes:>14,d} "
                   f"{r.hit_rate:>9.4f} {r.sector_hit_rate:>10.4f}")
        out.append("  hit rate: read lines whose tag was held; sector hit: read sectors already valid (docs/dram.md)")
        return out


def replayed(result: Any, trace: Any, args: argparse.Namespace) -> Any:
    """``result`` with the replay of ``trace`` (``result`` itself without --l2)."""
    if args.l2 is None:
        return result
    from attnio.algorithms.l2_trace import replay_trace

    with _named(args.l2_order):
        r = replay_trace(trace, args.l2, order=_order(args), section_heads=args.l2_section_heads,
                         occupancy=args.l2_occupancy, sms=args.l2_sms, l2_bytes=args.l2_bytes, sync=args.l2_sync,
                         skew=args.l2_skew)
    return WithL2(result, r)
