"""starroute as a Python library: road routing on OpenStreetMap data in this process, no server in between.

    import starroute
    graph = starroute.load("graphs/monaco-car")
    matrix = graph.table([(7.4197, 43.7311), (7.4246, 43.7384)])   # matrix.durations_s, matrix.distances_m

`preprocess` builds a graph directory from an OSM extract; `load` memory-maps one as a `Graph` with `route`,
`table`, `accessibility`, `nearest` and `isochrone`. Points are (lon, lat) pairs, (N, 2) arrays or (with the
`[geo]` extra) pandas / GeoPandas frames; answers are in seconds and metres, NaN where unreachable. Errors are typed
(`NoSegment`, `NoRoute`, `TooBig`, ... all `RoutingError` with OSRM's `code`). Big tables run on Dask with the
`[dask]` extra (`graph.table(..., scheduler="local")`, or `starroute matrix` on the command line).
"""

from __future__ import annotations

from starroute.build import preprocess
from starroute.errors import (
    GraphError,
    InvalidQuery,
    InvalidValue,
    MatrixError,
    NoRoute,
    NoSegment,
    NoTable,
    NotImplementedOption,
    PreprocessError,
    RoutingError,
    TooBig,
)
from starroute.graph import Graph, load
from starroute.results import Accessibility, Band, Isochrone, Leg, Matrix, Route, Waypoint

__all__ = [
    "Accessibility",
    "Band",
    "Graph",
    "GraphError",
    "InvalidQuery",
    "InvalidValue",
    "Isochrone",
    "Leg",
    "Matrix",
    "MatrixError",
    "NoRoute",
    "NoSegment",
    "NoTable",
    "NotImplementedOption",
    "PreprocessError",
    "Route",
    "RoutingError",
    "TooBig",
    "Waypoint",
    "load",
    "preprocess",
]
