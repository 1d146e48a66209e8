"""The floor both sides stand on: the graph-directory format (`floor.format`), the numba kernels and helpers every
stage and the engine share (`floor.kernels`), OSRM's junction model (`floor.intersections`), and stage reporting."""
