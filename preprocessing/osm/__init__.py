"""The OSM import layer: reading an extract (ways, nodes, relations), the profiles that judge its tags, turn
restrictions and maneuver overrides, OSRM's traffic files, and downloading extracts."""
