"""The OSRM v5 HTTP API: route, nearest, table, trip, match and tile services in osrm-routed's codes and shapes."""
