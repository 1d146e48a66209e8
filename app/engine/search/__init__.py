"""Searches: the one search core and its objects, contraction-hierarchy queries, the reference Dijkstra, via-node
alternatives, and the registry of algorithms."""
