"""Snapping: a coordinate onto the nearest road segment (phantoms), with OSRM's arithmetic, and the checked inputs."""
