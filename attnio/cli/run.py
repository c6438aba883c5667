"""``attnio run ALGORITHM --N --d --M``: one run on the machine (a forward, a backward ``<name>-bwd``, or with
``--backward`` a training step; plain or over a workload), exact counts, error against float64. One path:
:func:`attnio.algorithms.run.run`."""

from __future__ import annotations

import argparse
from typing import Any

from attnio.cli import _workload
from attnio.cli._common import float_option, int_option, print_json

HELP = "run one algorithm on the two-level machine and print its exact counts"
"""The one-line help of ``attnio run`` (``attnio --help``, ``attnio run --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("algorithm", help="an algorithm name (see `attnio algorithms`, `attnio algorithms --backward`), or `auto`")
    p.add_argument("--N", type=int_option, default=None, help="sequence length (or --Nq and --Nkv)")
    p.add_argument("--d", type=int_option, required=True, help="head dimension")
    p.add_argument("--dv", type=int_option, default=None, help="value width d_v (default d)")
    p.add_argument("--M", type=int_option, default=None, help="fast-memory capacity in words (or --smem, --gpu)")
    p.add_argument("--seed", type=int_option, default=0, help="seed of the random inputs")
    p.add_argument("--backend", choices=["numpy", "cupy"], default="numpy")
    p.add_argument("--count-only", action="store_true", help="counts only, no arithmetic (any N)")
    p.add_argument("--eps", type=float, default=None, help="approximate algorithms: max error per output entry")
    p.add_argument("--B", type=float, default=None, help="approximate algorithms: bound on |input entries|")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument(
        "--backward",
        action="store_true",
        help="training step: run the forward, then its backward (flash2 → flash2-bwd, ...); JSON has forward, backward, total",
    )
    p.add_argument("--mask", default=None, metavar="SPEC",
                   help="a mask for flash2 / flash2-bwd (docs/masks.md): window:LEFT,RIGHT (-1 unbounded), prefix:P, "
                        "document:0,s1,...,N (cu_seqlens), or causal; instead of --causal")
    p.add_argument("--l2", default=None, metavar="PRESET",
                   help="flash2 (forward, or a training step with --backward) or flash2-bwd: replay its thread "
                        "blocks through the L2 of a preset (a100, h100, h200, b200, mi300x, mi355x, l4) and print "
                        "requested, sector and predicted DRAM bytes per tensor (docs/dram.md)")
    p.add_argument("--l2-order", default="qhb", metavar="ORDER",
                   help="with --l2: launch order qhb (q block fastest, FA-2's grid), hqb (head fastest) or sections "
                        "(FA-3's head sections)")
    p.add_argument("--l2-occupancy", type=int_option, default=1, help="with --l2: thread blocks resident per SM")
    p.add_argument("--l2-sync", default="lockstep", metavar="SYNC",
                   help="with --l2: lockstep (resident blocks advance together: the most sharing, the bracket's low "
                        "end) or drift (the first wave's starts staggered over --l2-skew x a block's length; "
                        "docs/dram.md#lockstep-and-drift)")
    p.add_argument("--l2-skew", type=float_option, default=1.0,
                   help="with --l2-sync drift: the stagger, a fraction in (0, 1] of a block's length (1: drift-max)")
    p.add_argument("--tiles", default=None, metavar="BRxBC",
                   help="flash2 forward tiles: BRxBC (e.g. 128x128) or a kernel's own: fa2, fa3 (need --gpu), flex (docs/masks.md)")
    p.add_argument("--load", choices=["span", "tile"], default="span",
                   help="what a masked flash2 loads of a visited tile: span (needed keys; default) or tile (whole, as the kernels do)")
    p.add_argument("--documents", choices=["packed", "varlen"], default="packed",
                   help="a document mask's tiles: packed (global, FlexAttention's; default) or varlen (each sequence from its own start, FA-2's varlen)")
    _workload.add_arguments(p)  # batch, heads, GQA, Nq/Nkv, causal, dtype, --smem/--gpu (docs/workloads.md)


MASK_FORMS = "window:LEFT,RIGHT, prefix:P, document:0,s1,...,N or causal"


def parse_mask(spec: str) -> Any:
    """The mask named by ``--mask``: ``window:L,R`` (SlidingWindow), ``prefix:P`` (PrefixLM), ``document:c0,…``
    (Document, cu_seqlens), ``causal`` (Causal).

    >>> parse_mask("window:3,0"), parse_mask("causal")
    (SlidingWindow(window_left=3, window_right=0), Causal(window_left=-1, window_right=0))
    """
    from attnio.bounds import masks
    from attnio.core.errors import InvalidParameter

    kind, _, rest = spec.partition(":")
    try:
        nums = [int(x) for x in rest.split(",")] if rest else []
    except ValueError:
        raise InvalidParameter("mask", spec, MASK_FORMS) from None
    if kind == "window" and len(nums) == 2:
        return masks.SlidingWindow(*nums)
    if kind == "prefix" and len(nums) == 1:
        return masks.PrefixLM(nums[0])
    if kind == "document" and nums:
        return masks.Document(nums)
    if kind == "causal" and not rest:
        return masks.Causal()
    raise InvalidParameter("mask", spec, MASK_FORMS)


def parse_tiles(spec: str | None) -> Any:
    """``--tiles``: ``BRxBC`` as a pair, a preset name as itself.

    >>> parse_tiles("128x64"), parse_tiles("fa2"), parse_tiles(None)
    ((128, 64), 'fa2', None)
    """
    from attnio.bounds.kernel_tiles import PRESETS
    from attnio.core.errors import InvalidParameter

    if spec is None or spec in PRESETS:
        return spec
    a, x, b = spec.partition("x")
    if not (x and a.isdigit() and b.isdigit() and int(a) >= 1 and int(b) >= 1):
        raise InvalidParameter("tiles", spec, "BRxBC with integers >= 1 (e.g. 128x128), or one of " + ", ".join(PRESETS))
    return int(a), int(b)


def main(args: argparse.Namespace) -> int:
    from attnio.algorithms import registry
    from attnio.algorithms.run import run
    from attnio.core.errors import InvalidParameter

    if args.backward and registry.get(args.algorithm).pass_ == "backward":
        raise InvalidParameter("algorithm", args.algorithm, "a forward algorithm with --backward (it runs its backward itself)")
    if args.l2 is not None:
        _check_l2(args, registry)
    for option, value, default in (("l2-order", args.l2_order, "qhb"), ("l2-occupancy", args.l2_occupancy, 1),
                                   ("l2-sync", args.l2_sync, "lockstep"), ("l2-skew", args.l2_skew, 1.0)):
        if args.l2 is None and value != default:
            raise InvalidParameter(option, value, "only with --l2 PRESET (it sets the replay)")
    w = _workload.build(args) if _workload.requested(args) else None
    plain = {} if w is not None else {"N": args.N, "d": args.d, "dv": args.dv, "M": args.M}
    tiles = parse_tiles(args.tiles)
    r = run(args.algorithm, w, pass_="step" if args.backward else None,
            schedule=args.schedule or ("per-head" if w or tiles or args.load != "span" or args.documents != "packed" else None),
            seed=args.seed, backend=args.backend, count_only=args.count_only, eps=args.eps, B=args.B,
            mask=None if args.mask is None else parse_mask(args.mask), tiling=tiles, load=args.load,
            documents=args.documents, **plain)
    out = r.as_dict()
    if args.l2 is not None:
        out["l2"] = _l2(r, args)
    if args.json:
        print_json(out)
        return 0
    w = r.workload
    print(f"{args.algorithm}{' training step' if args.backward else ''}: batch={w.batch} heads={w.heads} kv_heads={w.kv_heads} "
          f"Nq={w.Nq} Nkv={w.Nkv} d={w.d} dv={w.dv}{' causal' if w.causal else ''}{' mask ' + args.mask if args.mask else ''}{' load ' + args.load if args.load != 'span' else ''} {w.dtype} ({w.bytes_per_word} B/word)  "
          f"M={w.M:,d} words ({w.memory})")
    for key, part in (("forward", out["forward"]), ("backward", out["backward"])) if args.backward else ((r.pass_, out),):
        _print_part(key, part, w.M)
    if args.l2 is not None:
        _print_l2(out["l2"])
    if args.backward:
        t = out["total"]
        print(f"total (training step)  reads {t['reads']:,d}  writes {t['writes']:,d}  io {t['io']:,d} words ({t['io_bytes']:,d} bytes)  "
              f"peak {t['peak_fast_words']:,d} words")
    return 0


def _print_part(key: str, out: dict[str, Any], M: int) -> None:
    print(f"{key}: {out['algorithm']}" + (f", {out['schedule']}" if out["schedule"] else "") + f"  blocks={out['blocks']}")
    for k in ("reads", "writes", "io"):
        print(f"  {k:<6} {out[k]:>20,d} words {out[k + '_bytes']:>22,d} bytes")
    print(f"  peak   {out['peak_fast_words']:>20,d} words of fast memory (M={M:,d})" + ("  OVERFLOW (audit mode)" if out["overflowed"] else ""))
    if out.get("max_abs_error") is not None:
        print(f"  max |O − O_ref| = {out['max_abs_error']:.3e} (float64 reference)")
    if out.get("rel_errors"):
        print("  " + ", ".join(f"{k} rel. error {v:.2e}" for k, v in out["rel_errors"].items()) + " (float64 analytic backward)")
    print(f"  {out['seconds']:.3f} s on {out['backend']}")


def _check_l2(args: argparse.Namespace, registry: Any) -> None:
    """--l2 before any work: a known preset, a known order, occupancy >= 1, and the flash2 forward it replays."""
    from attnio.algorithms.l2 import ORDERS
    from attnio.bounds.dram import preset
    from attnio.core.errors import InvalidParameter
    from attnio.core.validate import check_choice, check_int

    preset(args.l2)
    check_choice("l2-order", args.l2_order, list(ORDERS))
    check_int("l2-occupancy", args.l2_occupancy, min=1)
    _sync(args)
    if args.algorithm not in ("flash2", "flash2-bwd") or args.mask is not None:
        raise InvalidParameter("l2", args.l2, "only with flash2 (forward, or a training step with --backward) or "
                               "flash2-bwd, no --mask (the replay follows FA-2's programs one by one)")
    if args.kv_heads is not None and args.kv_heads < (args.heads or 1):
        # the forward replay follows the per-head programs, the backward replay the grouped ones (one program per
        # K/V block and K/V head): a run of another schedule would be replayed as a different count
        backward = args.algorithm == "flash2-bwd"
        schedule = args.schedule or "per-head"
        if args.backward or schedule != ("grouped" if backward else "per-head"):
            from attnio.core.errors import Unsupported

            fix = ("a training step's two passes cannot both match; run flash2 and flash2-bwd --schedule grouped "
                   "apart" if args.backward else "give --schedule grouped" if backward
                   else "give no --schedule or --schedule per-head")
            raise Unsupported(f"--l2 with kv_heads={args.kv_heads} < heads={args.heads} and schedule {schedule}: the "
                              "replay follows the FA-2 kernels' programs, per-head for flash2 and grouped for "
                              f"flash2-bwd, and would not replay the counted schedule; {fix}")


def _sync(args: argparse.Namespace) -> dict[str, Any]:
    """--l2-sync and --l2-skew as the replay's keywords (bad values, or a skew without drift: InvalidParameter
    naming the option)."""
    from attnio.algorithms.l2_schedule import sync_skew
    from attnio.cli._kernel_l2 import skew_needs_drift
    from attnio.core.errors import InvalidParameter

    try:
        sync_skew(args.l2_sync, args.l2_skew)
    except InvalidParameter as e:
        raise InvalidParameter("l2-" + e.name, e.value, e.valid) from None
    skew_needs_drift(args)
    return {"sync": args.l2_sync, "skew": args.l2_skew}


def _l2(r: Any, args: argparse.Namespace) -> dict[str, Any]:
    """The replay at the run's B_r and B_c = max(the run's B_c, 128) (a kernel's K/V tile; the io-optimal rule
    leaves B_c a few rows, which would make the replay minutes long), and the floors at M = the L2. Without a mask
    the requested Q, K, V, O bytes are then the run's count (it does not depend on B_c); under a causal mask K and
    V are larger by each program's masked-out rows of its last tile (docs/dram.md). L is counted in fp32."""
    from attnio.algorithms.l2 import replay, replay_backward
    from attnio.bounds.dram import floors

    w = r.workload
    if r.pass_ == "step":  # a training step: the forward, then the backward, each on a cold L2 (docs/dram.md)
        f, b = _l2(r.forward, args), _l2(r.backward, args)
        return {"forward": f, "backward": b, "requested_bytes": f["requested_bytes"] + b["requested_bytes"],
                "dram_bytes": f["dram_bytes"] + b["dram_bytes"]}
    if r.pass_ == "backward":
        # the count depends on B_c only (attnio.triton.kernels.fa2_bwd): B_r is raised to 128 rows when smaller,
        # which makes the replay shorter and leaves the requested bytes the run's (L and D in fp32)
        B_r, B_c = max(r.tiling.B_r, min(128, w.Nq)), r.tiling.B_c
        rep = replay_backward(w, args.l2, B_r=B_r, B_c=B_c, order=args.l2_order, occupancy=args.l2_occupancy,
                              **_sync(args))
        return {**rep.as_dict(), "B_r": B_r, "B_c": B_c, "pass": "backward"}
    B_r, B_c = r.tiling.B_r, max(r.tiling.B_c, min(128, w.Nkv))
    rep = replay(w, args.l2, B_r=B_r, B_c=B_c, order=args.l2_order, occupancy=args.l2_occupancy, **_sync(args))
    return {**rep.as_dict(), "B_r": B_r, "B_c": B_c, "floors": floors(w, args.l2).as_dict()}


def _sync_text(o: dict[str, Any]) -> str:
    return "lockstep" if o["sync"] == "lockstep" else f"drift (skew {o['skew']:g})"


def _print_l2(o: dict[str, Any]) -> None:
    if "forward" in o:  # a training step
        for part in ("forward", "backward"):
            print(f"{part}:", end=" ")
            _print_l2(o[part])
        print(f"L2 replay, training step: requested {o['requested_bytes']:,d} B, predicted DRAM {o['dram_bytes']:,d} B")
        return
    f = o.get("floors")
    print(f"L2 replay on {o['preset']} ({o['partitions']} x {o['l2_lines_per_partition']:,d} lines of 128 B, "
          f"{o['slots_per_partition']} slots per L2, order {o['order']}, {_sync_text(o)}, B_r={o['B_r']} B_c={o['B_c']}"
          f"{'' if o['exact'] else ', lines shared by tiles counted in each'}):")
    print(f"  {'tensor':<6} {'requested B':>18} {'sector B':>18} {'eff.':>6} {'DRAM read B':>18} {'DRAM write B':>18}")
    for name, t in o["tensors"].items():
        print(f"  {name:<6} {t['requested_bytes']:>18,d} {t['sector_bytes']:>18,d} {t['sector_efficiency']:>6.3f} "
              f"{t['dram_read_bytes']:>18,d} {t['dram_write_bytes']:>18,d}")
    print(f"  total  {o['requested_bytes']:>18,d} {o['sector_bytes']:>18,d} {'':>6} {o['dram_read_bytes']:>18,d} "
          f"{o['dram_write_bytes']:>18,d}")
    print(f"  L2 hit rate {o['hit_rate']:.4f} (read lines), {o['sector_hit_rate']:.4f} (read sectors); compulsory "
          f"{o['compulsory_bytes']:,d} B; {o['seconds']:.1f} s")
    if f is not None:  # the floors are the forward's
        print(f"  floors at M = the L2 ({f['M_words']:,d} words): DRAM >= {f['dram_bytes']:,d} B ({f['bound']}), "
              f"time >= {f['time_floor_s'] * 1e6:.1f} us")
