"""The bottom layer: the error types, the count type, the input validators and the workload record. It imports no
layer above it (bounds, algorithms, solver, reports, attnio.triton, the CLI), so every layer may import it."""
