"""Route assembly: the search space behind one interface, seeds and paths on the edge-based graph, legs between
waypoints and their figures and coordinates."""
