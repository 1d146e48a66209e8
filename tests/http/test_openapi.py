"""What /openapi.json documents: each OSRM service the options its parser accepts, and no other's; the native
limits as this server enforces them (one number for the documentation and the refusal)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx

from app.api.osrm import grammar
from app.engine.errors import EngineError
from app.main import create_app
from app.settings import Settings
from harness import api_server

FROM, TO = "7.4197,43.7311", "7.4246,43.7384"
V1 = "/{service}/v1/{{profile}}/{{coordinates}}"
OWN = {  # options one service has and the others lack (OSRM's api docs)
    "route": {"alternatives", "continue_straight"},
    "nearest": {"number"},
    "table": {"sources", "destinations", "fallback_speed", "fallback_coordinate", "scale_factor"},
    "trip": {"roundtrip", "source", "destination"},
    "match": {"timestamps", "gaps", "tidy"},
}
ROUTES = {"steps", "geometries", "overview", "waypoints"}  # the services that answer routes have these
GENERAL = {"bearings", "radiuses", "generate_hints", "hints", "approaches", "exclude", "snapping", "skip_waypoints"}


def _spec(app: Any) -> dict[str, Any]:
    async def get() -> httpx.Response:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            return await c.get("/openapi.json")

    r = asyncio.run(get())
    assert r.status_code == 200
    return dict(r.json())


def _query_names(op: dict[str, Any]) -> list[str]:
    return [p["name"] for p in op.get("parameters", []) if p["in"] == "query"]


def _accepts(service: str, option: str) -> bool:
    """Whether the OSRM parser knows `option` on `service`: it then reads the (bad) value, and the error points past
    the `=`; an unknown option is refused where it starts."""
    path = f"/{service}/v1/driving/{FROM};{TO}"
    try:
        grammar.parse(path, f"{option}=@@")
    except EngineError as exc:
        pos = int(re.search(r"position (\d+)", exc.message).group(1))  # type: ignore[union-attr]
        return pos > len(path) + 1
    return True


def test_each_osrm_service_documents_its_own_options() -> None:
    spec = _spec(create_app(Settings(graph_dir=Path("no-graph-needed"))))
    paths = spec["paths"]
    documented = {s: _query_names(paths[V1.format(service=s)]["get"]) for s in OWN}
    every = set().union(*documented.values())
    for service, names in documented.items():
        assert len(names) == len(set(names)), (service, names)
        want = OWN[service] | GENERAL | (ROUTES if service in ("route", "trip", "match") else set())
        assert want <= set(names), (service, sorted(want - set(names)))
        others = set().union(*(OWN[o] for o in OWN if o != service)) | (ROUTES - want)
        assert not others & set(names), (service, sorted(others & set(names)))
        # what is listed is what the parser takes, and the other way round
        assert {n for n in every if _accepts(service, n)} == set(names), service
        for p in paths[V1.format(service=service)]["get"]["parameters"]:
            assert p["description"], (service, p["name"])
    assert _query_names(paths["/tile/v1/{profile}/{tile}"]["get"]) == []  # nothing after tile(x,y,z).mvt
    assert "alternatives" in documented["route"] and "alternatives" not in documented["table"]
    # each OSRM operation under the one tag `osrm`, once (the tile's route was once included twice under it)
    osrm_ops = [paths[V1.format(service=s)]["get"] for s in OWN] + [paths["/tile/v1/{profile}/{tile}"]["get"]]
    assert all(op["tags"] == ["osrm"] for op in osrm_ops), [op["tags"] for op in osrm_ops]
    # an option a service declares again (match: radiuses, the GPS error) keeps its own documentation
    assert grammar.GRAMMAR["match"]["radiuses"].doc != grammar.GRAMMAR["route"]["radiuses"].doc


def test_documented_limits_are_the_enforced_ones(bundled_graph: Path) -> None:
    """The native alternatives bound (and nearest's number) is the server's setting, stated once: the schema's
    maximum, and what a request above it is refused with."""
    base = api_server.shared(bundled_graph, env={"STARROUTE_MAX_ALTERNATIVES": "2"})
    spec = httpx.get(f"{base}/openapi.json", timeout=60).json()
    get_route = {p["name"]: p for p in spec["paths"]["/route"]["get"]["parameters"]}
    body = spec["components"]["schemas"]["RouteRequest"]["properties"]["alternatives"]
    for schema, text in ((get_route["alternatives"]["schema"], get_route["alternatives"]["description"]), (body, "")):
        assert schema["maximum"] == 2, schema
        assert re.findall(r"\d+", schema["description"]) == ["2"], schema  # no other bound (it said 10)
        assert re.findall(r"\d+", text) in ([], ["2"])
    osrm_alt = {p["name"]: p for p in spec["paths"]["/route/v1/{profile}/{coordinates}"]["get"]["parameters"]}
    assert "At most 2 " in osrm_alt["alternatives"]["description"]
    assert {p["name"]: p for p in spec["paths"]["/nearest"]["get"]["parameters"]}["number"]["schema"]["maximum"] == 100
    assert "x-starroute-limit" not in str(spec)

    ok = httpx.get(f"{base}/route", params={"from": FROM, "to": TO, "alternatives": 2}, timeout=60)
    assert ok.status_code == 200, ok.text
    for n in (3, 11):  # above the documented bound: refused with the same number (it was 4..10 TooBig, 11 InvalidValue)
        for r in (
            httpx.get(f"{base}/route", params={"from": FROM, "to": TO, "alternatives": n}, timeout=60),
            httpx.post(f"{base}/route", json={"coordinates": [[7.4197, 43.7311], [7.4246, 43.7384]],
                                              "alternatives": n}, timeout=60),
            httpx.get(f"{base}/route/v1/driving/{FROM};{TO}", params={"alternatives": n}, timeout=60),
        ):  # fmt: skip
            assert r.status_code == 400 and r.json()["code"] == "TooBig", (n, r.text)
            assert "(2)" in r.json()["message"], r.text


def test_schemas_are_components_readers_resolve() -> None:
    """Every schema reaches others by `#/components/schemas/...`: an inline schema with nested `$defs` (a model's
    `model_json_schema()` pasted into a response) breaks ReDoc's page ("Invalid reference token: $defs")."""
    text = json.dumps(_spec(create_app(Settings(graph_dir=Path("no-graph-needed")))))
    assert "$defs" not in text
    assert all(ref.startswith("#/components/schemas/") for ref in re.findall(r'"\$ref": "([^"]+)"', text))
