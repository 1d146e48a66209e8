"""starroute offline side: OSM import, profiles, graph build, CH, landmarks, and the graph-directory format."""

__version__ = "0.1.0"
