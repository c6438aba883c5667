"""Published decode measurements beside attnio's exact bytes (``attnio paper decode``; docs/serving.md).

Each row: the published configuration and time; attnio's compulsory bytes (Q + K + V + O, each once, what
published bandwidths divide by) and the bandwidth that follows, printed to the published figure's digits and
compared with it; and attnio's exact bytes of the split-KV decode schedule on the named GPU preset (the split
heuristic, the page size, the block table), with their ratio to the compulsory bytes. Nothing is fitted.

Sources (pull requests of the projects named):
- flash-attention PR #2104: paged decode on an SM100 (B200-class) GPU, b = 32, s_q = 1, s_k = 65536, H = 32,
  H_kv = 4, d = 128, bf16; page size 1 / 8 / 32 / 128.
- PyTorch PR #137036: FlexAttention decode on an A6000, bf16, (B, H_q, N_q, H_kv, N_kv, d) as listed.
- onnxruntime PR #21414: FlashAttention-2 paged decode on an H100, 64 sequences, H = 64, H_kv = 8, d = 128,
  page 256; the published read and write volumes in MiB as well as the bandwidth.

>>> rows = published_rows()
>>> [r["attnio_bandwidth"] for r in rows if r["source"].startswith("flash-attention")]
['2.32', '3.90', '4.37', '5.26']
>>> all(r["match"] for r in rows)
True
"""

from __future__ import annotations

from typing import Any

from attnio.bounds.serving import TYPE_BYTES, Decode, compulsory_bytes, decode_count, dtypes, resolve
from attnio.core.workload import Workload

# (source, gpu preset, workload fields, page, published time µs, published figures {name: (text, unit)})
PUBLISHED: tuple[tuple[str, str, dict[str, int], int | None, float, dict[str, tuple[str, str]]], ...] = (
    *(
        ("flash-attention PR #2104", "b200", {"batch": 32, "heads": 32, "kv_heads": 4, "Nq": 1, "Nkv": 65536, "d": 128},
         page, t, {"bandwidth": (bw, "TB/s")})
        for page, t, bw in ((1, 1851.0, "2.32"), (8, 1100.9, "3.90"), (32, 982.3, "4.37"), (128, 815.9, "5.26"))
    ),
    *(
        ("PyTorch PR #137036", "a6000", {"batch": b, "heads": 16, "kv_heads": 16, "Nq": 1, "Nkv": n, "d": 64}, None, t,
         {"bandwidth": (bw, "TB/s")})
        for b, n, t, bw in ((64, 1024, 399.36, "0.673"), (16, 4096, 398.34, "0.674"), (4, 16384, 419.84, "0.639"))
    ),
    ("onnxruntime PR #21414", "h100", {"batch": 64, "heads": 64, "kv_heads": 8, "Nq": 1, "Nkv": 32, "d": 128}, 256,
     21.135, {"read": ("9", "MiB"), "write": ("1", "MiB"), "bandwidth": ("496", "GB/s")}),
    ("onnxruntime PR #21414", "h100", {"batch": 64, "heads": 64, "kv_heads": 8, "Nq": 1, "Nkv": 256, "d": 128}, 256,
     43.56, {"read": ("65", "MiB"), "bandwidth": ("1.589", "TB/s")}),
)

_UNIT = {"TB/s": 1e12, "GB/s": 1e9, "MiB": 2**20}


def _digits(text: str) -> int:
    return len(text.split(".")[1]) if "." in text else 0


def _printed(value: float, like: str) -> str:
    """``value`` with as many decimals as the published ``like``."""
    return f"{value:.{_digits(like)}f}"


def published_rows() -> list[dict[str, Any]]:
    """One row per published measurement (module docstring)."""
    rows = []
    for source, gpu, fields, page, t_us, figures in PUBLISHED:
        w = Workload.build(**fields, dtype="bf16", gpu=gpu)
        dec = resolve(w, Decode(page=page, gpu=gpu))
        comp = compulsory_bytes(w, dec)
        types = dtypes(w, dec)
        q = w.batch * w.heads * w.Nq
        read = comp - q * w.dv * TYPE_BYTES[types["O"]]  # Q + K + V
        c = decode_count(w, dec)
        t = t_us * 1e-6
        ours = {"bandwidth": comp / t, "read": read, "write": comp - read}
        match, shown = True, {}
        for name, (text, unit) in figures.items():
            s = _printed(ours[name] / _UNIT[unit], text)
            shown[name] = f"{s} {unit}"
            match &= s == text
        rows.append({
            "source": source, "gpu": gpu, **fields, "page": page, "splits": dec.splits, "time_us": t_us,
            "published": {k: f"{v} {u}" for k, (v, u) in figures.items()}, "attnio": shown,
            "attnio_bandwidth": _printed(comp / t / _UNIT[figures["bandwidth"][1]], figures["bandwidth"][0]),
            "compulsory_bytes": comp, "schedule_bytes": c.bytes_total, "block_table_bytes": c.words.get("BT", (0, 0))[0] * c.bpw.get("BT", 0),
            "schedule_over_compulsory": c.bytes_total / comp, "match": match,
            "words_apart_from_table": {k: v for k, v in c.words.items() if k != "BT"},
        })
    return rows


def render_text(rows: list[dict[str, Any]]) -> str:
    out = ["Published decode measurements beside attnio's exact bytes (bf16; compulsory = Q + K + V + O once)", ""]
    head = f"{'source':<26} {'gpu':<6} {'b':>3} {'H/Hkv':>6} {'N_kv':>6} {'page':>5} {'s':>3} {'µs':>8} "
    head += f"{'compulsory B':>14} {'schedule B':>14} {'sched/comp':>10}  published -> attnio"
    out.append(head)
    for r in rows:
        figs = "; ".join(f"{k} {r['published'][k]} -> {r['attnio'][k]}" for k in r["published"])
        out.append(
            f"{r['source']:<26} {r['gpu']:<6} {r['batch']:>3} {r['heads']:>3}/{r['kv_heads']:<2} {r['Nkv']:>6} "
            f"{r['page'] or '-':>5} {r['splits']:>3} {r['time_us']:>8} {r['compulsory_bytes']:>14,} "
            f"{r['schedule_bytes']:>14,} {r['schedule_over_compulsory']:>10.4f}  {figs}{'' if r['match'] else '  MISMATCH'}"
        )
    fa = [r for r in rows if r["source"].startswith("flash-attention")]
    if fa:
        same = len({r["compulsory_bytes"] for r in fa}) == 1 and all(
            r["words_apart_from_table"] == fa[0]["words_apart_from_table"] for r in fa)
        spread = max(r["time_us"] for r in fa) / min(r["time_us"] for r in fa)
        if same:
            out += ["", "flash-attention PR #2104: every tensor moves the same words at every page size apart from "
                    f"the block table (one int32 per page); the {spread:.2f}x spread in time is not data movement."]
    return "\n".join(out)
