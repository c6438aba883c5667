"""attnio's Triton attention kernels."""
