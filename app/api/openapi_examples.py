"""Examples in the OpenAPI schema that Swagger UI's "Try it out" can execute on the graph this server has loaded.

FastAPI writes `Query(examples=[...])` into each parameter's JSON Schema (`schema.examples`), where Swagger UI does
not look: "Try it out" left `from`/`to` empty and Execute failed. Here every parameter gets an `example` of its own
(the parameter-level field Swagger UI fills the form from): points on roads of the loaded graph (its
`sample_points`, so the examples route on any extract, not just Monaco), for the OSRM services the coordinates path
too, and for the tile a tile over the first point. Fixed-length arrays (`[lon, lat]` tuples: `prefixItems` without
`items`), which Swagger UI renders as `[null, null]` in response examples, get an `example`.

One pass over the finished schema (`add_examples(spec, points)`, called by `app.main`), so the endpoint modules
keep their declarations.
"""

from __future__ import annotations

import math
from typing import Any

FALLBACK = ((7.4197, 43.7311), (7.4246, 43.7384))  # Monaco, the bundled extract
TILE_ZOOM = 15


def _ll(p: tuple[float, float]) -> str:
    return f"{p[0]},{p[1]}"


def tile_of(lon: float, lat: float, z: int) -> tuple[int, int]:
    """XYZ tile column and row of a point at zoom z."""
    n = 1 << z
    s = math.sin(math.radians(max(-85.0511, min(85.0511, lat))))
    x = int((lon + 180.0) / 360.0 * n)
    y = int((0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi)) * n)
    return min(max(x, 0), n - 1), min(max(y, 0), n - 1)


def parameter_examples(points: tuple[tuple[float, float], tuple[float, float]] | None) -> dict[str, dict[str, str]]:
    """path -> {parameter name: example} for the parameters whose example depends on the graph."""
    a, b = points or FALLBACK
    mid = (round((a[0] + b[0]) / 2, 5), round((a[1] + b[1]) / 2, 5))
    tx, ty = tile_of(a[0], a[1], TILE_ZOOM)
    two = f"{_ll(a)};{_ll(b)}"
    return {
        "/route": {"from": _ll(a), "to": _ll(b), "via": _ll(mid)},
        "/nearest": {"point": _ll(a)},
        "/isochrone": {"point": _ll(a), "minutes": "5,10"},
        "/route/v1/{profile}/{coordinates}": {"profile": "driving", "coordinates": two},
        "/nearest/v1/{profile}/{coordinates}": {"profile": "driving", "coordinates": _ll(a)},
        "/table/v1/{profile}/{coordinates}": {"profile": "driving", "coordinates": f"{two};{_ll(mid)}"},
        "/trip/v1/{profile}/{coordinates}": {"profile": "driving", "coordinates": f"{two};{_ll(mid)}"},
        "/tile/{z}/{x}/{y}": {"z": str(TILE_ZOOM), "x": str(tx), "y": f"{ty}.mvt"},
        "/tile/v1/{profile}/{tile}": {"profile": "driving", "tile": f"tile({tx},{ty},{TILE_ZOOM}).mvt"},
    }


# parameters left out of the form unless asked (an example would turn them on): optional ones with no graph meaning
_LEAVE_EMPTY = {"via"}


def _tuple_example(schema: dict[str, Any], point: tuple[float, float]) -> None:
    """Give every fixed-length array below `schema` an example (recursively)."""
    if not isinstance(schema, dict):
        return
    items = schema.get("prefixItems")
    if isinstance(items, list) and "example" not in schema:
        ex: list[Any] = []
        for i, it in enumerate(items):
            kind = it.get("type") if isinstance(it, dict) else None
            ex.append(point[i] if kind == "number" and i < 2 else 0 if kind in ("integer", "number") else "")
        schema["example"] = ex
    for value in schema.values():
        if isinstance(value, dict):
            _tuple_example(value, point)
        elif isinstance(value, list):
            for v in value:
                _tuple_example(v, point)


def add_examples(spec: dict[str, Any], points: tuple[tuple[float, float], tuple[float, float]] | None) -> None:
    """Put parameter-level examples (and tuple examples in the component schemas) into `spec`, in place."""
    by_path = parameter_examples(points)
    for path, item in spec.get("paths", {}).items():
        known = by_path.get(path, {})
        for op in item.values():
            if not isinstance(op, dict):
                continue
            for param in op.get("parameters", []):
                name = param.get("name")
                if name in known and name not in _LEAVE_EMPTY:
                    param["example"] = known[name]
                elif "example" not in param and (param.get("schema") or {}).get("examples"):
                    param["example"] = param["schema"]["examples"][0]
    _tuple_example(spec.get("components", {}).get("schemas", {}), (points or FALLBACK)[0])
