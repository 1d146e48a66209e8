"""HTTP layer: the native GeoJSON API and the OSRM v5 API over `app.engine.router.Router`."""
