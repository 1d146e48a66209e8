"""Metrics: custom models (GraphHopper's) over every arc, their metric and router cache, and new weights on the
customizable hierarchy."""
