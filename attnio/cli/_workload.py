"""The workload options of ``attnio run`` (docs/workloads.md): batch, heads, K/V heads, N_q/N_kv, causal mask,
element type, workload schedule, and M from exactly one of ``--M`` (words), ``--smem`` (bytes) or ``--gpu``
(preset). :func:`requested` says whether a run is a workload run; :func:`build` makes its
:class:`~attnio.core.workload.Workload`; ``attnio run`` then takes the one path, :func:`attnio.algorithms.run.run`.
"""

from __future__ import annotations

import argparse
from typing import Any

from attnio.cli._common import int_option

WORKLOAD_OPTIONS = ("batch", "heads", "kv_heads", "Nq", "Nkv", "dtype", "smem", "gpu", "schedule")


def add_arguments(p: argparse.ArgumentParser) -> None:
    from attnio.core.workload import DTYPES, GPUS

    g = p.add_argument_group("workload (docs/workloads.md)")
    g.add_argument("--batch", type=int_option, default=None, help="batch size (default 1)")
    g.add_argument("--heads", type=int_option, default=None, help="query heads H (default 1)")
    g.add_argument("--kv-heads", dest="kv_heads", type=int_option, default=None, help="key/value heads H_kv, dividing H (default H; 1 = MQA)")
    g.add_argument("--Nq", type=int_option, default=None, help="query rows (default --N)")
    g.add_argument("--Nkv", type=int_option, default=None, help="key/value rows (default --N)")
    g.add_argument("--causal", action="store_true", help="causal mask, bottom-right aligned (query i sees keys j <= i + Nkv - Nq)")
    g.add_argument("--dtype", choices=sorted(DTYPES), default=None, help="element type: bytes per word (default fp32)")
    g.add_argument("--smem", default=None, help="fast memory in bytes, e.g. 192KiB, 164KB, 65536 (instead of --M)")
    g.add_argument("--gpu", choices=sorted(GPUS), default=None, help="fast memory = one SM's shared memory (instead of --M)")
    g.add_argument("--schedule", choices=["per-head", "grouped", "best"], default=None,
                   help="per-head (default), grouped (K/V tile shared by a group's query heads), or the cheaper")


def requested(args: argparse.Namespace) -> bool:
    """True when the run is a workload run (any workload option, or --N / --M left out)."""
    if getattr(args, "N", None) is None or getattr(args, "M", None) is None or getattr(args, "causal", False):
        return True
    return any(getattr(args, k, None) is not None for k in WORKLOAD_OPTIONS)


def build(args: argparse.Namespace) -> Any:
    from attnio.core.workload import Workload

    given = {k: getattr(args, k) for k in ("kv_heads", "N", "Nq", "Nkv", "d", "dv", "causal", "M", "smem", "gpu")}
    return Workload.build(
        batch=1 if args.batch is None else args.batch,
        heads=1 if args.heads is None else args.heads,
        dtype=args.dtype or "fp32",
        **given,  # the options named as Workload.build's parameters, passed as given
    )
