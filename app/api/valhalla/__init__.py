"""Valhalla's HTTP API dialect under `/valhalla/`: `/route`, `/sources_to_targets`, `/isochrone`, `/locate`,
`/status` with Valhalla's JSON requests (POST, or GET `?json=`), response shapes and error format, over the engine's
door (`app.engine.facade`).

`grammar` reads Valhalla's request (locations, costing and the costing options that map onto the engine, directions
options) into the engine's requests, `trips` writes a route as Valhalla's `trip` (legs with a polyline-6 shape,
maneuvers with Valhalla's type numbers and text from the OSRM steps, summaries), `errors` answers every refusal as
Valhalla does (`{error_code, error, status_code, status}`), `endpoints` holds the routes.
"""
