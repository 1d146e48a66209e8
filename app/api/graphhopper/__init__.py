"""GraphHopper's HTTP API dialect under `/graphhopper/`: `/route`, `/matrix`, `/isochrone`, `/info` in GraphHopper's
request parameters, response shapes and error format, over the engine's door (`app.engine.facade`).

`grammar` parses GraphHopper's options into the engine's requests, `paths` writes a route as GraphHopper's
`paths[]` (points, instructions with `sign` codes from the OSRM steps, details), `errors` answers every refusal as
GraphHopper does (`{"message", "hints"}`, HTTP 400), `endpoints` holds the routes.
"""
