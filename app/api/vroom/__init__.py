"""VROOM's vehicle routing under `POST /optimize`: VROOM's input JSON (vehicles, jobs, shipments; locations as
`[lon, lat]` or `location_index` into given `matrices`) solved by VROOM itself (the `pyvroom` package) on starroute's
own duration and distance matrix, answered in VROOM's output format with route geometries from starroute.

`problem` reads the request (its locations, the limits) and writes what VROOM reads (every location an index into
starroute's matrix), `solve` runs VROOM on it (in a search process: VROOM holds the GIL while it solves) and writes
its answer, `errors` answers every refusal as VROOM does (`{code, error}`), `endpoints` holds the route.
"""
