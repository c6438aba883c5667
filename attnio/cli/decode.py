"""``attnio decode``: exact bytes of decoding against a KV cache (split-KV, paged KV, GQA packing, fp8 K/V, MLA),
the decode lower bound, the roofline on a GPU preset and, given a measured time, the achieved bandwidth."""

from __future__ import annotations

import argparse

from attnio.cli._common import float_option, int_option, print_json

HELP = "exact bytes of decoding against a KV cache (split-KV, paged, GQA, fp8, MLA) and its roofline"
"""The one-line help of ``attnio decode`` (``attnio --help``, ``attnio decode --help``)."""


def add_arguments(p: argparse.ArgumentParser) -> None:
    from attnio.core.workload import DTYPES, GPUS

    p.add_argument("--Nkv", type=int_option, required=True, help="cached tokens per sequence (N_kv)")
    p.add_argument("--Nq", type=int_option, default=1, help="new tokens per sequence (s_q; default 1)")
    p.add_argument("--batch", type=int_option, default=1)
    p.add_argument("--heads", type=int_option, default=1, help="query heads H (MLA: h_q)")
    p.add_argument("--kv-heads", type=int_option, default=None, help="K/V heads H_kv (default H)")
    p.add_argument("--d", type=int_option, default=None, help="Q/K width (default 128)")
    p.add_argument("--dv", type=int_option, default=None)
    p.add_argument("--causal", action="store_true", help="bottom-right causal mask among the new tokens")
    p.add_argument("--dtype", choices=sorted(DTYPES), default="bf16", help="Q and O element type (default bf16)")
    p.add_argument("--kv-dtype", choices=sorted(DTYPES), default=None, help="K/V cache element type (fp8 adds fp32 scales)")
    p.add_argument("--scales", choices=["group128", "head", "tensor", "flashmla"], default="group128",
                   help="fp8 scale layout: per 128 channels of a row (default), per K/V head, per tensor, or FlashMLA's "
                        "656-byte MLA row (docs/serving.md#fp8-scale-layouts)")
    p.add_argument("--split-rule", choices=["tokens", "fa2"], default="tokens",
                   help="tokens: attnio's (no empty split; default); fa2: FlashAttention-2's split-KV (by K/V blocks, "
                        "empty splits written and read, LSE written, 64-row blocks) (docs/serving.md#split-and-row-block-rules)")
    p.add_argument("--row-block", type=int_option, default=None,
                   help="packed rows per row block, as the kernel has it (FlashMLA and FA-2 split-KV: 64); default as many as fit")
    p.add_argument("--page", type=int_option, default=None, help="tokens per KV page (paged cache with an int32 block table)")
    p.add_argument("--splits", type=int_option, default=None, help="KV splits (default: the heuristic for --gpu)")
    p.add_argument("--gpu", choices=sorted(GPUS), default="h100", help="preset: fast memory, SM count, roofline")
    p.add_argument("--mla", choices=["absorbed", "naive"], default=None,
                   help="DeepSeek MLA decode: absorbed (one 576-wide latent row, V its first 512) or naive (per-head K/V)")
    p.add_argument("--time-us", type=float_option, default=None, help="a measured time in µs: achieved bandwidth")
    p.add_argument("--json", action="store_true", help="print one JSON object")


def main(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from attnio.algorithms.decode import run_decode
    from attnio.bounds.serving import Decode, decode_count, lower_bound_bytes, mla, resolve, roofline
    from attnio.core.errors import InvalidParameter
    from attnio.core.workload import GPUS, Workload

    smem_words = GPUS[args.gpu].smem_bytes
    given = [o for o, v in (("--d", args.d), ("--dv", args.dv), ("--kv-heads", args.kv_heads)) if v is not None]
    if args.mla and given:
        raise InvalidParameter("mla", args.mla, f"--mla without {', '.join(given)}: MLA fixes d = 576, dv = 512 "
                               "(absorbed) or 192, 128 (naive) and the K/V heads")
    if args.mla:
        w, dec = mla(args.mla, batch=args.batch, heads=args.heads, Nq=args.Nq, Nkv=args.Nkv, dtype=args.dtype,
                     M=smem_words // 2, kv_dtype=args.kv_dtype)
        w = Workload.build(**{**_fields(w), "causal": args.causal}, gpu=args.gpu)
        dec = Decode(args.splits, args.page, args.kv_dtype, dec.shared_kv, args.gpu, args.scales, args.split_rule, args.row_block)
    else:
        w = Workload.build(batch=args.batch, heads=args.heads, kv_heads=args.kv_heads, Nq=args.Nq, Nkv=args.Nkv,
                           d=128 if args.d is None else args.d, dv=args.dv, causal=args.causal, dtype=args.dtype, gpu=args.gpu)
        dec = Decode(args.splits, args.page, args.kv_dtype, False, args.gpu, args.scales, args.split_rule, args.row_block)
    dec = resolve(w, dec)
    c = decode_count(w, dec)
    measured = run_decode(w, dec, count_only=True).measurement.per_array
    agree = {t: (a.reads_words, a.writes_words) for t, a in measured.items() if a.reads_words or a.writes_words} == c.words
    lb = lower_bound_bytes(w, dec)
    no_split = decode_count(w, replace(dec, splits=1))
    rl = roofline(w, dec, args.gpu, None if args.time_us is None else args.time_us * 1e-6)
    out = {
        "workload": w.as_dict(), "splits": c.splits, "chunk_tokens": c.chunk, "page": dec.page,
        "kv_dtype": dec.kv_dtype or w.dtype, "shared_kv": dec.shared_kv,
        "scales": dec.scales if (dec.kv_dtype or w.dtype) == "fp8" else None,
        "split_rule": dec.split_rule, "row_blocks": c.T_q, "row_block_rows": -(-w.groups * w.Nq // c.T_q),
        "per_tensor": {t: {"reads_words": r, "writes_words": wr, "bytes_per_word": c.bpw[t]} for t, (r, wr) in c.words.items()},
        "schedule_bytes": c.bytes_total, "no_split_bytes": no_split.bytes_total,
        "split_over_no_split": c.bytes_total / no_split.bytes_total, "lower_bound_bytes": lb,
        "schedule_over_lower_bound": c.bytes_total / lb, "machine_equals_formula": agree, "roofline": rl.as_dict(),
    }
    if args.json:
        print_json(out)
        return 0 if agree else 1
    print(f"decode: b={w.batch} H={w.heads} H_kv={w.kv_heads} s_q={w.Nq} N_kv={w.Nkv} d={w.d} d_v={w.dv} "
          f"{w.dtype} (K/V {out['kv_dtype']}{', V = K[:, :d_v]' if dec.shared_kv else ''}) on {args.gpu}, "
          f"M = {w.M} words, {c.splits} split(s) of {c.chunk} tokens" + (f", page {dec.page}" if dec.page else ""))
    for t, (r, wr) in c.words.items():
        print(f"  {t:<9} reads {r:>16,}  writes {wr:>14,}  words × {c.bpw[t]} B")
    print(f"  schedule bytes {c.bytes_total:,} (machine, count-only: {'equal' if agree else 'DIFFERENT'}); "
          f"no split {no_split.bytes_total:,} (split ÷ no split {out['split_over_no_split']:.4f})")
    print(f"  lower bound {lb:,} bytes (K/V once, Q once, O once): schedule ÷ bound {out['schedule_over_lower_bound']:.4f}")
    print(f"  roofline: {rl.flops:,} FLOPs, {rl.intensity:.2f} FLOP/B against a ridge of {rl.ridge:.1f}: {rl.bound}-bound")
    if rl.time_s is not None:
        print(f"  at {args.time_us} µs: {rl.achieved_bytes_per_s / 1e12:.3f} TB/s of compulsory bytes "
              f"({rl.fraction_of_peak:.1%} of {GPUS[args.gpu].hbm_bytes_per_s / 1e12:g} TB/s), "
              f"{rl.achieved_schedule_bytes_per_s / 1e12:.3f} TB/s of schedule bytes")
    return 0 if agree else 1


def _fields(w: object) -> dict[str, object]:
    keys = ("batch", "heads", "kv_heads", "Nq", "Nkv", "d", "dv", "dtype")
    return {k: getattr(w, k) for k in keys}
