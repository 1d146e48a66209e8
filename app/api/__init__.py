"""HTTP layer: the native GeoJSON API and the OSRM v5 API over the engine facade (`app.engine.facade.Engine`)."""
