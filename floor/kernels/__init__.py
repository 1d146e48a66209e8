"""Kernels and numeric helpers both the build stages and the engine stand on: the numba decorator, the one binary heap,
geometry, whole-array measures, and the CCH customization."""
