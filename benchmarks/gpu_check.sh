#!/usr/bin/env bash
# attnio: the one prepared GPU check (≤ 8 minutes on an H200). Run from anywhere:
#     bash benchmarks/gpu_check.sh
# It finds a Python that imports CuPy (installing the wheel that matches the driver's CUDA major version if
# none does: from ./.whl/ when present, else from the package index), then runs benchmarks/gpu_check.py:
# in-kernel counts vs the model, output vs the float64 reference, timing vs CuPy standard attention and torch
# SDPA, Nsight Compute DRAM bytes vs the model's bytes. Results go to $OUT if set, else ./gpu_check_out/:
# results.json, summary.md, gpu_check.log, env.txt, ncu.log, ncu.csv. Exit 0: counts and accuracy pass.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
OUT_DIR="${OUT:-$PWD/gpu_check_out}"
mkdir -p "$OUT_DIR"
LOG="$OUT_DIR/gpu_check.log"
: >"$LOG"
say() { echo "$@" | tee -a "$LOG"; }

{ nvidia-smi 2>&1 || echo "nvidia-smi not available"; command -v nvcc >/dev/null && nvcc --version; command -v ncu; } >"$OUT_DIR/env.txt" 2>&1
say "== nvidia-smi =="; head -20 "$OUT_DIR/env.txt" | tee -a "$LOG"

if ! nvidia-smi -L >/dev/null 2>&1 && ! ls /dev/nvidia0 >/dev/null 2>&1; then
  say "no GPU: nvidia-smi finds no device; nothing measured (this check needs a CUDA GPU)"
  exit 2
fi

# CUDA major version of the driver (nvidia-smi's "CUDA Version: 13.0"), else of nvcc.
CUDA_MAJOR="$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9]*\)\..*/\1/p' | head -1)"
[ -z "$CUDA_MAJOR" ] && CUDA_MAJOR="$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p' | head -1)"
CUPY_PKG="cupy-cuda${CUDA_MAJOR:-12}x"

has_cupy() { "$1" -c "import cupy, numpy; cupy.cuda.runtime.getDeviceCount()" >/dev/null 2>&1; }
PY=""
for cand in "${PYTHON:-}" python3 "$PWD/.venv/bin/python" python; do
  [ -n "$cand" ] && command -v "$cand" >/dev/null 2>&1 || continue
  if has_cupy "$cand"; then PY="$cand"; break; fi
done
if [ -z "$PY" ]; then
  PY="${PYTHON:-python3}"
  say "no Python here imports CuPy with a device; installing $CUPY_PKG for $PY"
  if [ -d .whl ]; then
    "$PY" -m pip install -q --no-index --find-links .whl "$CUPY_PKG" 2>&1 | tee -a "$LOG"
  else
    "$PY" -m pip install -q "$CUPY_PKG" 2>&1 | tee -a "$LOG"
  fi
  if ! has_cupy "$PY"; then
    say "FAILED: $CUPY_PKG could not be installed or sees no device (no registry reachable? carry the wheel in .whl/, see docs/gpu.md)"
    exit 3
  fi
fi
say "python: $PY ($("$PY" -c 'import sys, cupy; print(sys.version.split()[0], "cupy", cupy.__version__)'))"

export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" PYTHONUNBUFFERED=1
timeout 470 "$PY" benchmarks/gpu_check.py --out "$OUT_DIR" --budget-s 400 "$@" 2>&1 | tee -a "$LOG"
rc=${PIPESTATUS[0]}
say "gpu_check.py exit status: $rc (0 pass, 1 a check failed, 2 no GPU, 124 timed out)"
exit "$rc"
