"""CUDA kernels of attnio's schedules (flash2, square tiling) for CuPy, with an in-kernel I/O counter.

- ``launch``: launch parameters from the model's tiling, the M-words-to-shared-memory map (pure Python);
- ``kernels``: the CuPy ``RawModule`` wrappers (CuPy imported lazily; needs a CUDA device to run);
- ``emulate``: the same kernel source run on the CPU (g++, one std::thread per CUDA thread) for CI;
- ``*.cu``: the kernel source. See docs/gpu.md.
"""
