"""The native API (GeoJSON) and the service shell, against a real server process on Monaco."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import numpy as np
import pytest

from app.api.errors import HTTP_STATUS, status_for
from app.api.health import Metrics
from app.api.schemas import ALGORITHMS, NearestCollection, RouteFeature, TableResponse
from app.settings import Settings
from harness import api_server
from tests.osrm.test_osrm_api import random_points

FROM, TO, VIA = "7.4197,43.7311", "7.4246,43.7384", "7.4200,43.7350"


# --- pieces without a server ----------------------------------------------------------------------------------------
def test_settings_env_roundtrip(monkeypatch: pytest.MonkeyPatch) -> None:
    defaults = Settings(graph_dir=Path("/g"))
    assert (defaults.max_via_points, defaults.max_table_size, defaults.max_nearest) == (500, 100, 100)
    monkeypatch.setenv("STARROUTE_MAX_TABLE_SIZE", "7")
    monkeypatch.setenv("STARROUTE_CORS_ORIGINS", '["http://a.example"]')
    s = Settings(graph_dir=Path("/g"), workers=3, max_snap_radius_m=50.0)
    assert s.max_table_size == 7 and s.cors_origins == ["http://a.example"] and s.max_via_points == 500
    for key, value in s.to_env().items():  # what uvicorn's workers are handed
        monkeypatch.setenv(key, value)
    assert Settings() == s


def test_error_statuses() -> None:
    osrm_codes = ["InvalidUrl", "InvalidService", "InvalidVersion", "InvalidOptions", "InvalidQuery", "InvalidValue"]
    osrm_codes += ["NoSegment", "NoRoute", "NoTable", "TooBig", "NotImplemented"]
    assert all(status_for(c) == 400 for c in osrm_codes)
    assert status_for("SomethingNew") == 400 and HTTP_STATUS["InvalidContentType"] == 415
    assert status_for("Timeout") == status_for("Overloaded") == 503  # the server cannot answer now: retry later


def test_metrics_text() -> None:
    m = Metrics()
    m.observe_request("/route", 200, 0.0007)
    m.observe_request("/route", 400, 0.02)
    m.observe_search("ch", 120)
    text = m.render()
    assert 'starroute_requests_total{endpoint="/route",status="200"} 1' in text
    assert 'starroute_request_duration_seconds_bucket{endpoint="/route",le="0.001"} 1' in text
    assert 'starroute_request_duration_seconds_bucket{endpoint="/route",le="+Inf"} 2' in text
    assert 'starroute_settled_nodes_bucket{algorithm="ch",le="1000"} 1' in text
    assert 'starroute_settled_nodes_count{algorithm="ch"} 1' in text


def test_server_refuses_a_bad_graph_dir(tmp_path: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "app.server", str(tmp_path / "missing"), "--port", "0"],
        cwd=api_server.ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 2 and "starroute: error:" in r.stderr and "Traceback" not in r.stderr


# --- a real server ------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def monaco(bundled_graph: Path) -> Path:
    return bundled_graph


@pytest.fixture(scope="module")
def client(monaco: Path):
    with httpx.Client(base_url=api_server.shared(monaco), timeout=60.0) as c:
        yield c


@pytest.fixture(scope="module")
def engine(monaco: Path):
    from app.engine.data import load
    from app.engine.router import Router

    return Router(load(monaco))


def test_health(client: httpx.Client) -> None:
    r = client.get("/health")
    assert r.status_code == 200
    h = r.json()
    assert h["status"] == "ok" and h["pid"] > 0 and h["uptime_s"] >= 0
    assert h["algorithms"][0] == "ch" and set(h["algorithms"]) <= set(ALGORITHMS)
    g = h["graph"]
    assert g["profile"] == "car" and g["counts"]["nodes"] > 0 and len(g["bbox"]) == 4
    assert g["source"]["name"] == "monaco.osm.pbf"


def _engine_ms(r: httpx.Response) -> float:
    """The `engine;dur=<ms>` entry of a `Server-Timing` header (RFC-style `name;dur=value`)."""
    (entry,) = [e.strip() for e in r.headers["server-timing"].split(",")]
    name, dur = entry.split(";")
    assert name == "engine" and dur.startswith("dur="), entry
    return float(dur.removeprefix("dur="))


def test_server_timing(client: httpx.Client) -> None:
    """Native and OSRM answers (good and bad) say the handler's own time apart from the HTTP stack; /health, the
    metrics and the docs do not."""
    lon, lat = FROM.split(",")
    answers = [
        client.get("/route", params={"from": FROM, "to": TO}),
        client.post("/route", json={"coordinates": [[7.4197, 43.7311], [7.4246, 43.7384]]}),
        client.get("/nearest", params={"point": FROM, "number": 3}),
        client.post("/table", json={"sources": [[7.4197, 43.7311], [7.4246, 43.7384]]}),
        client.get(f"/route/v1/driving/{FROM};{TO}"),
        client.get(f"/nearest/v1/driving/{FROM}?number=10"),
        client.get(f"/table/v1/driving/{FROM};{TO}"),
        client.get("/route/v1/driving/1,2;x"),  # 400 InvalidQuery: the parse was its work
        client.get("/route", params={"from": "x", "to": TO}),  # 400 from the endpoint
    ]
    for r in answers:
        ms = _engine_ms(r)
        assert math.isfinite(ms) and 0 <= ms < 60_000, (r.url, ms)
    assert [r.status_code for r in answers] == [200] * 7 + [400, 400]
    for path in ("/health", "/metrics", "/openapi.json"):
        r = client.get(path)
        assert r.status_code == 200 and "server-timing" not in r.headers, path


def test_route_feature(client: httpx.Client, engine) -> None:
    r = client.get("/route", params={"from": FROM, "to": TO})
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/geo+json")
    f = r.json()
    RouteFeature.model_validate(f)
    assert f["type"] == "Feature" and f["geometry"]["type"] == "LineString"
    line = np.array(f["geometry"]["coordinates"])
    west, south, east, north = client.get("/health").json()["graph"]["bbox"]
    assert (line[:, 0] >= west - 1e-3).all() and (line[:, 0] <= east + 1e-3).all()  # [lon, lat] order
    assert (line[:, 1] >= south - 1e-3).all() and (line[:, 1] <= north + 1e-3).all()
    p = f["properties"]
    assert p["algorithm"] == "ch" and len(p["waypoints"]) == 2 and len(p["legs"]) == 1
    assert np.allclose(line[0], p["waypoints"][0]["location"]) and np.allclose(line[-1], p["waypoints"][1]["location"])
    assert p["waypoints"][0]["input"] == [7.4197, 43.7311]
    assert p["stats"]["settled"] > 0 and p["legs"][0]["stats"]["settled"] == p["stats"]["settled"]
    # the engine's own figures, exactly
    q = engine.query().route(engine.snap_waypoints([(7.4197, 43.7311), (7.4246, 43.7384)]), algorithm="ch")
    assert p["distance_m"] == round(q.distance_m, 1) and p["duration_s"] == round(q.duration_s, 1)
    # metres and seconds to a tenth, as OSRM: no 61.58499991215649
    for x in (p["distance_m"], p["duration_s"], p["waypoints"][0]["distance_m"], p["stats"]["micros"]):
        assert x == round(x, 1), x


def test_route_post_via_and_overview(client: httpx.Client) -> None:
    pts = [[7.4197, 43.7311], [7.42, 43.735], [7.4246, 43.7384]]
    f = client.post("/route", json={"coordinates": pts, "algorithm": "alt"}).json()
    p = f["properties"]
    assert p["algorithm"] == "alt" and len(p["legs"]) == 2 and len(p["waypoints"]) == 3
    assert math.isclose(sum(leg["distance_m"] for leg in p["legs"]), p["distance_m"], abs_tol=0.1001)
    g = client.get("/route", params={"from": FROM, "via": VIA, "to": TO, "algorithm": "alt"}).json()
    assert g["properties"]["distance_m"] == p["distance_m"]
    simp = client.post("/route", json={"coordinates": pts, "overview": "simplified"}).json()
    assert 2 <= len(simp["geometry"]["coordinates"]) <= len(f["geometry"]["coordinates"])
    radii = client.post("/route", json={"coordinates": pts[:2], "radiuses": [None, 500.0]})
    assert radii.status_code == 200


def test_route_language_gives_steps_with_text(client: httpx.Client) -> None:
    """`language=` (GET and POST) adds each leg's maneuvers with their text, the OSRM steps' instructions."""
    q = {"from": "7.4197,43.7311", "via": "7.4220,43.7350", "to": "7.4246,43.7384"}
    plain = client.get("/route", params=q).json()
    spoken = client.get("/route", params={**q, "language": "fr"})
    assert spoken.status_code == 200, spoken.text
    feat = spoken.json()
    RouteFeature.model_validate(feat)
    legs = feat["properties"]["legs"]
    osrm = client.get(
        "/route/v1/driving/7.4197,43.7311;7.4220,43.7350;7.4246,43.7384", params={"steps": "true", "language": "fr"}
    ).json()["routes"][0]["legs"]
    for leg, theirs in zip(legs, osrm, strict=True):
        assert [s["instruction"] for s in leg["steps"]] == [s["maneuver"]["instruction"] for s in theirs["steps"]]
        assert [s["type"] for s in leg["steps"]] == [s["maneuver"]["type"] for s in theirs["steps"]]
    assert legs[0]["steps"][0]["instruction"].startswith("Se diriger vers le nord-est sur le tunnel Rocher Palais")
    assert legs[0]["steps"][-1]["instruction"].startswith("Vous êtes arrivé à votre première destination")
    for leg, before in zip(legs, plain["properties"]["legs"], strict=True):
        assert {k: v for k, v in leg.items() if k not in ("steps", "stats")} == {
            k: v for k, v in before.items() if k != "stats"
        }
    assert "steps" not in plain["properties"]["legs"][0] and plain["geometry"] == feat["geometry"]
    body = {"coordinates": [[7.4197, 43.7311], [7.4246, 43.7384]], "language": "en"}
    steps = client.post("/route", json=body).json()["properties"]["legs"][0]["steps"]
    assert steps[0]["instruction"].startswith("Head northeast") and steps[-1]["type"] == "arrive"
    assert steps[-1]["instruction"].startswith("You have arrived at your destination")


def test_route_unknown_language_is_a_400(client: httpx.Client) -> None:
    for r in (
        client.get("/route", params={"from": "7.4197,43.7311", "to": "7.4246,43.7384", "language": "klingon"}),
        client.post("/route", json={"coordinates": [[7.4197, 43.7311], [7.4246, 43.7384]], "language": "xx"}),
    ):
        assert r.status_code == 400
        assert r.json()["code"] == "InvalidValue" and "supported: ar, ca, da, de, en" in r.json()["message"]


def test_api_matches_engine(client: httpx.Client, engine) -> None:
    pts = random_points(engine.graph, 30, seed=3)
    for a, b in zip(pts[::2], pts[1::2], strict=False):
        f = client.get("/route", params={"from": f"{a[0]},{a[1]}", "to": f"{b[0]},{b[1]}"}).json()
        q = engine.query().route(engine.snap_waypoints([a, b]), algorithm="ch")
        p = f["properties"]
        assert p["distance_m"] == round(q.distance_m, 1) and p["duration_s"] == round(q.duration_s, 1)


def test_all_algorithms_agree(client: httpx.Client, engine) -> None:
    pts = random_points(engine.graph, 16, seed=5)
    algorithms = client.get("/health").json()["algorithms"]
    assert len(algorithms) == 6
    for a, b in zip(pts[::2], pts[1::2], strict=False):
        params = {"from": f"{a[0]},{a[1]}", "to": f"{b[0]},{b[1]}"}
        durations = {}
        for alg in algorithms:
            f = client.get("/route", params={**params, "algorithm": alg}).json()
            assert f["properties"]["algorithm"] == alg, f
            durations[alg] = f["properties"]["duration_s"]
        assert len(set(durations.values())) == 1, (a, b, durations)


def test_nearest(client: httpx.Client) -> None:
    fc = client.get("/nearest", params={"point": FROM, "number": 4}).json()
    NearestCollection.model_validate(fc)
    assert fc["type"] == "FeatureCollection" and len(fc["features"]) == 4
    dists = [f["properties"]["distance_m"] for f in fc["features"]]
    assert dists == sorted(dists)
    assert fc["features"][0]["geometry"]["type"] == "Point"
    assert client.get("/nearest", params={"point": FROM, "number": 1, "radius_m": 0.01}).json()["code"] == "NoSegment"


def test_table(client: httpx.Client) -> None:
    pts = [[7.4197, 43.7311], [7.4246, 43.7384], [7.42, 43.735]]
    t = client.post("/table", json={"sources": pts}).json()
    TableResponse.model_validate(t)
    d = np.array(t["durations_s"], dtype=float)
    assert d.shape == (3, 3) and (np.diag(d) == 0).all()
    assert len(t["sources"]) == 3 and len(t["destinations"]) == 3
    f = client.get("/route", params={"from": FROM, "to": TO}).json()["properties"]
    assert math.isclose(d[0, 1], f["duration_s"], abs_tol=1e-6)
    # the route sums its points' distances (rounded per leg, as OSRM); the table its arcs' lengths held in decimetres
    assert math.isclose(t["distances_m"][0][1], f["distance_m"], abs_tol=1.0)
    rect = client.post("/table", json={"sources": pts[:1], "destinations": pts}).json()
    assert np.array(rect["durations_s"]).shape == (1, 3)


BAD_ROUTES = [
    ({"from": "abc", "to": TO}, "InvalidValue"),
    ({"from": "", "to": TO}, "InvalidValue"),
    ({"from": "7.4", "to": TO}, "InvalidValue"),
    ({"from": "nan,43.7", "to": TO}, "InvalidValue"),
    ({"from": "inf,43.7", "to": TO}, "InvalidValue"),
    ({"from": "1e999,43.7", "to": TO}, "InvalidValue"),
    ({"from": "181,43.7", "to": TO}, "InvalidValue"),
    ({"from": "7.4,-91", "to": TO}, "InvalidValue"),
    ({"from": FROM, "to": TO, "via": ";"}, "InvalidValue"),
    ({"from": FROM, "to": TO, "algorithm": "bogus"}, "InvalidQuery"),
    ({"to": TO}, "InvalidQuery"),
    ({"from": FROM, "to": TO, "via": ";".join([VIA] * 499)}, "TooBig"),
    ({"from": FROM, "to": "0,0"}, None),  # far from Monaco but still snaps (no radius limit): fine
]


@pytest.mark.parametrize(("params", "code"), BAD_ROUTES)
def test_bad_route_input(client: httpx.Client, params: dict, code: str | None) -> None:
    r = client.get("/route", params=params)
    if code is None:
        assert r.status_code in (200, 400)
        return
    assert r.status_code == 400, r.text
    body = r.json()
    assert body["code"] == code and body["message"], body


@pytest.mark.parametrize(
    ("body", "code"),
    [
        ({"coordinates": [[7.4, 43.7]]}, "InvalidQuery"),
        ({"coordinates": [[7.4, 43.7], [200, 0]]}, "InvalidQuery"),
        ({"coordinates": [[7.4, 43.7], [7.41, 43.73]], "extra": 1}, "InvalidQuery"),
        ({"coordinates": [[7.4, 43.7], [7.41, 43.73]], "radiuses": [1.0]}, "InvalidValue"),
        ({"coordinates": [[7.4197, 43.7311], [7.4246, 43.7384]], "radiuses": [0.001, None]}, "NoSegment"),
        ({"coordinates": [[7.4, 43.7]] * 501}, "TooBig"),
        ({"coordinates": "7.4,43.7"}, "InvalidQuery"),
    ],
)
def test_bad_route_body(client: httpx.Client, body: dict, code: str) -> None:
    r = client.post("/route", json=body)
    assert r.status_code == 400 and r.json()["code"] == code, r.text


def test_bad_requests_of_every_kind(client: httpx.Client) -> None:
    r = client.post("/route", content=b"{not json", headers={"content-type": "application/json"})
    assert r.status_code == 400 and r.json()["code"] == "InvalidQuery"
    message = r.json()["message"]  # not "1: JSON decode error"
    assert message.startswith("the request body is not valid JSON: ") and "at character 1" in message, message
    big = client.post("/table", content=b"[" + b"0," * 600_000 + b"0]", headers={"content-type": "application/json"})
    assert big.status_code == 413 and big.json()["code"] == "TooBig"
    assert client.post("/table", json={"sources": [[7.42, 43.73]] * 101}).json()["code"] == "TooBig"
    assert client.post("/table", json={"sources": [], "destinations": []}).status_code == 400
    assert client.get("/nearest", params={"point": FROM, "number": 101}).json()["code"] == "TooBig"
    assert client.get("/nearest", params={"point": FROM, "number": 0}).status_code == 400
    assert client.get("/nearest", params={"point": FROM, "number": "9" * 40}).status_code == 400
    assert client.delete("/route").status_code == 405
    assert client.put("/metrics").status_code == 405


def test_no_route_native(client: httpx.Client, engine) -> None:
    """A point pinned (small radius) into a pocket cut off from the rest: NoRoute, HTTP 400."""
    g = engine.graph
    comp = np.asarray(g.node_component)
    main = int(np.nonzero(comp == 0)[0][0])
    a = [float(g.node_lon[main]) / 1e7, float(g.node_lat[main]) / 1e7]
    for c in range(1, int(comp.max()) + 1):
        v = int(np.nonzero(comp == c)[0][0])
        b = [float(g.node_lon[v]) / 1e7, float(g.node_lat[v]) / 1e7]
        for pts, radii in (([a, b], [None, 2.0]), ([b, a], [2.0, None])):
            r = client.post("/route", json={"coordinates": pts, "radiuses": radii})
            if r.json().get("code") == "NoRoute":
                assert r.status_code == 400 and r.json()["message"]
                return
    pytest.fail("no unreachable pair found in Monaco's small components")


def test_metrics_and_cors(client: httpx.Client) -> None:
    client.get("/route", params={"from": FROM, "to": TO})
    client.get("/route/v1/driving/" + FROM + ";" + TO)
    text = client.get("/metrics").text
    assert "# TYPE starroute_requests_total counter" in text
    assert 'endpoint="/route",status="200"' in text and 'endpoint="osrm_route",status="200"' in text
    assert 'starroute_request_duration_seconds_bucket{endpoint="osrm_route",le="+Inf"}' in text
    assert 'starroute_settled_nodes_count{algorithm="ch"}' in text
    r = client.get("/route/v1/driving/" + FROM + ";" + TO, headers={"Origin": "http://map.example"})
    assert r.headers.get("access-control-allow-origin") == "*"
    pre = client.options("/route", headers={"Origin": "http://map.example", "Access-Control-Request-Method": "GET"})
    assert pre.status_code == 200 and pre.headers.get("access-control-allow-origin") == "*"


def test_osrm_gets_go_ahead_of_fastapis_middleware(monaco: Path) -> None:
    """OSRM GETs are answered before FastAPI's middleware stack (`StarrouteApp`), with the same answer; one with an
    Origin goes through it (CORS headers), as do native paths."""
    import asyncio

    from app.api.service import Service
    from app.main import create_app

    service = Service(Settings(graph_dir=monaco))
    service.open()
    app = create_app(service.settings, service)
    seen: list[str] = []

    async def go() -> list[httpx.Response]:
        stack = app.build_middleware_stack()

        async def counting(scope, receive, send):  # type: ignore[no-untyped-def]
            seen.append(scope["path"])
            await stack(scope, receive, send)

        app.middleware_stack = counting
        url = "/route/v1/driving/" + FROM + ";" + TO
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            return [
                await c.get(url),
                await c.head(url),
                await c.get("/nearest/v1/driving/" + FROM + ".x"),
                await c.get(url, headers={"Origin": "http://map.example"}),
                await c.get("/health"),
            ]

    try:
        lean, head, bad, cors, health = asyncio.run(go())
    finally:
        service.close()
    assert seen == ["/route/v1/driving/" + FROM + ";" + TO, "/health"]
    assert lean.status_code == 200 and lean.content == cors.content and lean.json()["code"] == "Ok"
    assert head.status_code == 200 and head.content == b"" and head.headers["content-length"] == str(len(lean.content))
    assert bad.status_code == 400 and bad.json()["code"] == "InvalidQuery"
    assert "access-control-allow-origin" not in lean.headers and cors.headers["access-control-allow-origin"] == "*"
    assert health.status_code == 200


def test_openapi_documents_both_apis(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    paths = spec["paths"]
    for p in ("/route", "/nearest", "/table", "/health", "/metrics", "/route/v1/{profile}/{coordinates}"):
        assert p in paths, p
    assert "post" in paths["/route"] and "get" in paths["/route"]
    assert client.get("/docs").status_code == 200


def test_request_time_limit(monaco: Path) -> None:
    """A search slower than the limit answers 503 `Timeout` with Retry-After (the server's limit, not the request's
    fault: not OSRM's `TooBig`), on both APIs, instead of hanging the request."""
    base = api_server.shared(monaco, env={"STARROUTE_REQUEST_TIME_LIMIT_S": "0.000001"})
    r = httpx.get(f"{base}/route", params={"from": FROM, "to": TO, "algorithm": "dijkstra"}, timeout=30)
    assert r.status_code == 503 and r.json()["code"] == "Timeout", r.text
    assert "time limit" in r.json()["message"] and r.headers["retry-after"] == "1"
    r = httpx.get(f"{base}/tile/v1/driving/tile(17059,11948,15).mvt", timeout=30)  # OSRM's debug tile, in the pool
    assert r.status_code == 503 and r.json()["code"] == "Timeout" and r.headers["retry-after"] == "1", r.text
    assert httpx.get(f"{base}/route", params={"from": FROM, "to": TO}, timeout=30).status_code == 200  # CH inline


def test_two_workers_share_the_graph(monaco: Path) -> None:
    base = api_server.shared(monaco, "--workers", "2")
    pids = set()

    def one(_: int) -> int:
        with httpx.Client(base_url=base, timeout=30) as c:  # a new connection each time
            assert c.get("/route/v1/driving/" + FROM + ";" + TO).json()["code"] == "Ok"
            return int(c.get("/health").json()["pid"])

    # four connections at once: one after another, whichever worker woke first may take every one of them
    with ThreadPoolExecutor(4) as pool:
        for _ in range(40):
            pids.update(pool.map(one, range(4)))
            if len(pids) == 2:
                break
    assert len(pids) == 2


def test_two_workers_answer_concurrent_requests_as_one(monaco: Path) -> None:
    """Forked workers serving at once answer every route, table and alternative exactly as a one-process server: no
    search state leaks between them or between requests."""
    from app.engine.data import load

    pts = random_points(load(monaco), 60, seed=23)
    urls = [f"/route/v1/driving/{a[0]},{a[1]};{b[0]},{b[1]}" for a, b in zip(pts[::2], pts[1::2], strict=True)]
    urls += [u + "?alternatives=true&overview=full" for u in urls[:10]]
    urls += ["/table/v1/driving/" + ";".join(f"{x},{y}" for x, y in pts[k : k + 12]) for k in range(0, 48, 12)]
    one, two = api_server.shared(monaco), api_server.shared(monaco, "--workers", "2")

    def get(base: str) -> Callable[[str], bytes]:
        def fetch(url: str) -> bytes:
            r = httpx.get(base + url, timeout=30)
            assert r.status_code == 200, r.text
            return r.content

        return fetch

    want = [get(one)(u) for u in urls]
    with ThreadPoolExecutor(8) as pool:
        for _ in range(3):
            assert list(pool.map(get(two), urls)) == want


def test_browser_gets_pages_that_work_offline(client: httpx.Client) -> None:
    """`/` is the map page; `/start` a start page with example requests that work; /docs and /redoc load their
    assets from this server."""
    import re

    root = client.get("/")
    assert root.status_code == 200 and "/static/map/app.js" in root.text
    page = client.get("/start")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "/docs" in page.text and "monaco.osm.pbf" in page.text
    examples = re.findall(r'<a href="(/(?:route|table|nearest)[^"]*)"', page.text)
    assert len(examples) >= 3
    for href in examples:
        r = client.get(href.replace("&amp;", "&"))
        assert r.status_code == 200, (href, r.text[:200])
    for doc in ("/docs", "/redoc"):
        html = client.get(doc).text
        urls = re.findall(r"""(?:src|href)=["']([^"']+)["']|url: ?['"]([^'"]+)['"]""", html)
        urls = [a or b for a, b in urls]
        assert urls, html
        assert not [u for u in urls if u.startswith(("http:", "https:", "//"))], f"{doc} loads from elsewhere: {urls}"
        for u in urls:
            assert client.get(u).status_code == 200, u
    assert client.get("/favicon.ico").headers["content-type"] == "image/png"


def test_swapped_lon_lat_gets_a_hint(client: httpx.Client) -> None:
    """lat,lon instead of lon,lat: NoSegment that says the other order lands on a road."""
    body = client.get("/route", params={"from": "43.7311,7.4197", "to": TO}).json()
    assert body["code"] == "NoSegment" and "did you swap them?" in body["message"], body
    far = client.get("/route", params={"from": "7.0,45.0", "to": TO}).json()  # simply off the map: no hint
    assert far["code"] == "NoSegment" and "swap" not in far["message"]


def test_a_search_that_compiled_says_so(monaco: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On a kernel's first use the search's `micros` include compiling (or loading) it: the answer's `stats` say how
    much (`compile_ms`, from the process's compile clock around the search), and say nothing when nothing compiled."""
    from app.api.native import feature
    from app.engine import facade
    from app.engine.data import load

    engine = facade.Engine(load(monaco))
    req = facade.RouteRequest(facade.Waypoints([(7.4197, 43.7311), (7.4246, 43.7384)]), "dijkstra")
    engine.route(req)  # the kernels loaded
    warm = engine.route(req)
    assert warm.result.compile_s == 0.0 and "compile_ms" not in feature(warm.best, warm.phantoms, result=warm.result)[
        "properties"]["stats"]  # fmt: skip
    clock = iter([10.0, 10.25])  # 250 ms spent compiling while it searched
    monkeypatch.setattr(facade, "thread_compile_seconds", lambda: next(clock))
    cold = engine.route(req)
    stats = feature(cold.best, cold.phantoms, result=cold.result)["properties"]["stats"]
    assert cold.result.compile_s == 0.25 and stats["compile_ms"] == 250.0
