"""The forward tiles (B_r × B_c = kBlockM × kBlockN) that real attention kernels pick, as presets for a masked or
workload run (``run(..., tiling="fa2")``, ``attnio run --tiles fa2``; table and sources in docs/masks.md#kernel-tiles).

Each rule is transcribed from the kernel's own source (read, not copied: the conditions are restated here):

- ``fa2``: FlashAttention-2, ``csrc/flash_attn/src/flash_fwd_launch_template.h`` (``run_mha_fwd_hdim*``; no
  dropout), the head dimension rounded up as ``csrc/flash_attn/src/static_switch.h`` ``HEADDIM_SWITCH`` does
  (32, 64, 96, 128, 192, 256). "sm8x" there is compute capability 8.x with x > 0 (the A6000 here; the A100 is 8.0,
  Hopper 9.0, Blackwell 10.0). FA-2's causal flag is the causal mask only: a sliding window runs with
  ``Is_causal`` false (``Is_local`` true).
- ``fa3``: FlashAttention-3, ``hopper/tile_size.h`` ``tile_size_fwd_sm90`` (Hopper only: the h100 and h200
  presets), with ``v_colmajor``, ``paged_kv_non_TMA`` and ``softcap`` false; element size 1 (fp8) or 2.
- ``flex``: FlexAttention's block-mask granularity, 128 × 128 (``_DEFAULT_SPARSE_BLOCK_SIZE`` in PyTorch's
  ``torch/nn/attention/flex_attention.py``): the unit it visits or skips, and loads whole.

>>> kernel_tiles("fa2", d=128, gpu="h100"), kernel_tiles("fa2", d=128, gpu="a6000", causal=True)
((128, 64), (64, 64))
>>> kernel_tiles("fa3", d=128, gpu="h100"), kernel_tiles("fa3", d=128, gpu="h100", local=True), kernel_tiles("flex", d=64)
((128, 176), (128, 128), (128, 128))
"""

from __future__ import annotations

from attnio.core.errors import InvalidParameter
from attnio.core.validate import check_choice, check_int

#: the preset names (``--tiles NAME``)
PRESETS = ("fa2", "fa3", "flex")
#: the compute capability of each GPU preset of attnio.core.workload.GPUS
CAPABILITY = {"a100": (8, 0), "a6000": (8, 6), "h100": (9, 0), "h200": (9, 0), "b200": (10, 0)}
#: the per-block shared-memory opt-in and per-SM shared memory, bytes (FA-2's hdim-256 rule reads both)
_SMEM = {"a100": (164 * 1024, 192 * 1024), "a6000": (99 * 1024, 100 * 1024), "h100": (227 * 1024, 228 * 1024),
         "h200": (227 * 1024, 228 * 1024), "b200": (227 * 1024, 228 * 1024)}


def _fa2(d: int, gpu: str, causal: bool) -> tuple[int, int]:
    hd = next((h for h in (32, 64, 96, 128, 192, 256) if d <= h), None)
    if hd is None:
        raise InvalidParameter("d", d, "at most 256 for the fa2 tiles (FlashAttention-2's largest head dimension)")
    major, minor = CAPABILITY[gpu]
    sm8x = major == 8 and minor > 0
    if hd in (32, 64):
        return 128, 128
    if hd == 96:
        return (64, 64) if sm8x and causal else (128, 64)
    if hd == 128:
        if sm8x:
            return (64, 64) if causal else (128, 32)
        return 128, 64
    if hd == 192:
        return 128, 64
    per_block, per_sm = _SMEM[gpu]
    return (128, 64) if per_block >= 2 * hd * (128 + 2 * 64) and per_sm < 4 * hd * (64 + 2 * 64) else (64, 64)


def _fa3(d: int, dv: int, causal: bool, local: bool, element_size: int) -> tuple[int, int]:
    if element_size == 2:
        if d <= 64:
            if dv == 512:
                return 64, 64
            if dv == 256:
                return 128, 96
            return 192, 128 if causal or local else 192
        if d <= 96:
            return 192, 128 if local else 144
        if d <= 128:
            return 128, 128 if causal or local else 176
        if d <= 192:
            return 128, 96 if local else (128 if dv <= 128 else 112)
        return 128, 64 if local else 80
    if d <= 64:
        return 192, 160
    if d <= 96:
        return 192, 128
    if d <= 128:
        return 128, 224
    if d <= 192:
        return 128, 160
    return 128, 64 if local else 128


def kernel_tiles(name: str, *, d: int, dv: int | None = None, gpu: str | None = None, causal: bool = False,
                 local: bool = False, element_size: int = 2) -> tuple[int, int]:
    """(B_r, B_c) of kernel ``name`` (:data:`PRESETS`) for head dimension ``d`` (``dv``: V's) on ``gpu`` (a key of
    :data:`CAPABILITY`; needed by ``fa2`` and ``fa3``), with the causal mask (``causal``) or a sliding window
    (``local``), K/V elements of ``element_size`` bytes."""
    name = check_choice("tiles", name, PRESETS)
    d = check_int("d", d, min=1)
    dv = d if dv is None else check_int("dv", dv, min=1)
    if name == "flex":
        return 128, 128
    if gpu is None:
        raise InvalidParameter("tiles", name, f"a GPU preset for the {name} tiles (give gpu=/--gpu: " + ", ".join(CAPABILITY) + ")")
    gpu = check_choice("gpu", gpu, list(CAPABILITY))
    if name == "fa2":
        if element_size != 2:
            raise InvalidParameter("dtype", f"{element_size} bytes", "fp16 or bf16 for the fa2 tiles (FlashAttention-2 runs 16-bit types only)")
        return _fa2(d, gpu, causal)
    if CAPABILITY[gpu][0] != 9:
        raise InvalidParameter("gpu", gpu, "h100 or h200 for the fa3 tiles (FlashAttention-3's forward is Hopper-only)")
    if element_size not in (1, 2):
        raise InvalidParameter("dtype", f"{element_size} bytes", "fp8, fp16 or bf16 for the fa3 tiles")
    if d > 256:
        raise InvalidParameter("d", d, "at most 256 for the fa3 tiles")
    return _fa3(d, dv, causal, local, element_size)
