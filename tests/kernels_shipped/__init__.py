"""Tiny Triton attention kernels written here in the shapes shipped kernels take (a package with relative imports,
``query``/``key``/``value`` launchers, an autograd Function, CUDA allocations, an SM-count-dependent split-KV path,
a packed variable-length batch, an output passed as two pointers), counted as they are by tests/test_triton_ship.py.
"""
