"""Block sizes, imported relatively by the kernels (the package-relative import under test)."""

BLOCK_M = 16
BLOCK_N = 16
