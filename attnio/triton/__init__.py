"""attnio on Triton kernels: counting their global-memory traffic and attnio's own kernels."""
