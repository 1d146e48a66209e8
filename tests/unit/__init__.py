"""Unit tests: modules, kernels and files in-process, checked against oracles (networkx, the reference Dijkstra)."""
