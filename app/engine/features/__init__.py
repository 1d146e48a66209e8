"""What the engine answers beyond a route: tables, isochrones and contours, alternatives, trips, map matching,
areas to avoid."""
