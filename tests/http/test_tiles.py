"""Road tiles (`/tile/{z}/{x}/{y}`, app.api.tiles over app.engine.maps.tiles) on the bundled Monaco, without a browser.

A small protobuf reader below decodes the Mapbox Vector Tiles independently of the encoder; the expected roads of a
tile are computed here from the graph arrays directly (chains, classes, names, speeds), not through RoadTiles.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from harness.api_server import shared

CENTRE = (7.4246, 43.7384)  # Monte-Carlo


# -- a minimal MVT reader (Mapbox Vector Tile 2.1: protobuf with varints and length-delimited fields) -----------------


def _varint(b: bytes, i: int) -> tuple[int, int]:
    r = s = 0
    while True:
        c = b[i]
        i += 1
        r |= (c & 0x7F) << s
        s += 7
        if c < 0x80:
            return r, i


def _fields(b: bytes):
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            v, i = b[i : i + n], i + n
        elif wt == 1:
            v, i = b[i : i + 8], i + 8
        elif wt == 5:
            v, i = b[i : i + 4], i + 4
        else:
            raise ValueError(f"wire type {wt}")
        yield f, wt, v


def _packed(b: bytes) -> list[int]:
    out, i = [], 0
    while i < len(b):
        v, i = _varint(b, i)
        out.append(v)
    return out


def _unzig(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def decode(tile: bytes) -> dict[str, dict[str, Any]]:
    """{layer name: {version, extent, features: [{type, props, lines: [[(x, y), ...], ...]}]}}"""
    layers = {}
    for f, wt, v in _fields(tile):
        assert (f, wt) == (3, 2), "a tile holds layers only"
        name, keys, vals, feats, extent, version = None, [], [], [], 4096, 1
        for lf, _, lv in _fields(v):
            if lf == 1:
                name = lv.decode()
            elif lf == 2:
                feats.append(lv)
            elif lf == 3:
                keys.append(lv.decode())
            elif lf == 4:
                ((vf, _, vv),) = list(_fields(lv))
                vals.append(vv.decode() if vf == 1 else bool(vv) if vf == 7 else vv)
            elif lf == 5:
                extent = lv
            elif lf == 15:
                version = lv
        features = []
        for fb in feats:
            tags, gtype, geom = [], None, []
            for ff, _, fv in _fields(fb):
                if ff == 2:
                    tags = _packed(fv)
                elif ff == 3:
                    gtype = fv
                elif ff == 4:
                    geom = _packed(fv)
            assert len(tags) % 2 == 0
            props = {keys[tags[k]]: vals[tags[k + 1]] for k in range(0, len(tags), 2)}
            lines: list[list[tuple[int, int]]] = []
            x = y = i = 0
            while i < len(geom):
                cmd, count = geom[i] & 7, geom[i] >> 3
                i += 1
                assert cmd in (1, 2), f"a line string has MoveTo and LineTo only, got command {cmd}"
                for _ in range(count):
                    x += _unzig(geom[i])
                    y += _unzig(geom[i + 1])
                    i += 2
                    if cmd == 1:
                        lines.append([(x, y)])
                    else:
                        lines[-1].append((x, y))
            assert all(len(line) >= 2 for line in lines)
            features.append({"type": gtype, "props": props, "lines": lines})
        layers[name] = {"version": version, "extent": extent, "features": features}
    return layers


def tile_of(lon: float, lat: float, z: int) -> tuple[int, int]:
    n = 2**z
    x = int((lon + 180.0) / 360.0 * n)
    s = math.sin(math.radians(lat))
    y = int((0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi)) * n)
    return x, y


# -- fixtures ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(bundled_graph: Path) -> str:
    return shared(bundled_graph)


@pytest.fixture(scope="module")
def router(bundled_graph: Path):
    from app.engine.data import load
    from app.engine.router import Router

    return Router(load(bundled_graph))


def expected_roads(router, z: int, x: int, y: int, buffer: int = 64) -> dict[tuple, dict[str, Any]]:
    """Straight from the graph arrays: every chain some arc runs along whose bounding box meets the tile grown by
    `buffer`, keyed by its first and last point in tile coordinates; its class, name, speed, all its points."""
    from floor.format.units import FLAG_FERRY, ROAD_CLASSES

    g = router.graph
    n, ext = 2**z, 4096
    lon = np.asarray(g.geom_lon, dtype=np.float64) / 1e7
    lat = np.asarray(g.geom_lat, dtype=np.float64) / 1e7
    s = np.sin(np.radians(lat))
    tx = ((lon + 180) / 360 * n - x) * ext
    ty = ((0.5 - np.log((1 + s) / (1 - s)) / (4 * math.pi)) * n - y) * ext
    out: dict[tuple, dict[str, Any]] = {}
    for arc in range(g.num_arcs):
        chain = int(g.arc_geom[arc]) >> 1
        lo, hi = int(g.geom_first[chain]), int(g.geom_first[chain + 1])
        px, py = tx[lo:hi], ty[lo:hi]
        if px.max() < -buffer or px.min() > ext + buffer or py.max() < -buffer or py.min() > ext + buffer:
            continue
        pts = [(int(math.floor(a + 0.5)), int(math.floor(b + 0.5))) for a, b in zip(px, py, strict=True)]
        key = (pts[0], pts[-1])
        ferry = int(g.arc_flags[arc]) & FLAG_FERRY
        speed = round(int(g.arc_dist[arc]) / int(g.arc_duration[arc]) * 3.6)
        info = out.setdefault(key, {"chain": chain, "points": pts, "arcs": []})
        info["arcs"].append(
            {
                "class": "ferry" if ferry else ROAD_CLASSES[int(g.arc_class[arc])],
                "name": g.string(int(g.arc_name[arc])),
                "ref": g.string(int(g.arc_ref[arc])),
                "speed": speed,
                "forward": (int(g.arc_geom[arc]) & 1) == 0,
            }
        )
    return out


# -- the tiles --------------------------------------------------------------------------------------------------------


def test_tile_decodes_to_the_roads_of_the_graph(server: str, router) -> None:
    z = 16
    x, y = tile_of(*CENTRE, z)
    r = httpx.get(f"{server}/tile/{z}/{x}/{y}.mvt")
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/vnd.mapbox-vector-tile"
    layers = decode(r.content)
    assert set(layers) == {"speeds"}
    layer = layers["speeds"]
    assert layer["version"] == 2 and layer["extent"] == 4096
    assert all(f["type"] == 2 for f in layer["features"]), "LineStrings only"
    lines = [(line, f["props"]) for f in layer["features"] for line in f["lines"]]
    want = expected_roads(router, z, x, y)
    got = {(line[0], line[-1]): (line, props) for line, props in lines}
    assert len(got) == len(lines), "one line per road"
    # every road crossing the tile is there (unless shorter than the drop cell, 8 units at this zoom)
    for key, info in want.items():
        pts = np.array(info["points"])
        if np.abs(pts - pts[0]).max() < 8:
            continue
        assert key in got, f"chain {info['chain']} is missing"
        line, props = got[key]
        # the line's points are the chain's points, in order, the first and last included
        it = iter(info["points"])
        assert all(any(p == q for q in it) for p in line), f"chain {info['chain']}: points not a subsequence"
        first = next((a for a in info["arcs"] if a["forward"]), info["arcs"][0])
        assert props["class"] == first["class"]
        assert props["speed"] == first["speed"]
        assert props.get("name", "") == first["name"]
        assert props.get("ref", "") == first["ref"]
        assert props.get("oneway", False) == (len(info["arcs"]) == 1)
    # and nothing else
    assert set(got) <= set(want)
    assert len(lines) > 50, "Monte-Carlo has many roads"
    names = {props.get("name") for _, props in lines}
    assert "Boulevard du Larvotto" in names or "Avenue de Monte-Carlo" in names


def test_encoder_round_trip_against_the_engine_tile(router) -> None:
    """Roads with equal properties share a MultiLineString feature; decoding gives back every road of the engine's
    tile exactly, in drawing order of their features."""
    from app.api.tiles import encode
    from app.engine.maps.tiles import CLASS_NAMES, road_tiles

    rt = road_tiles(router)
    for z in (13, 15, 17):
        x, y = tile_of(*CENTRE, z)
        roads = rt.tile(z, x, y)
        layer = decode(encode(roads, rt.string))["speeds"]
        got = sorted((tuple(line), tuple(sorted(f["props"].items()))) for f in layer["features"] for line in f["lines"])
        want = []
        for i in range(roads.num_features):
            a, b = int(roads.first[i]), int(roads.first[i + 1])
            line = tuple(zip(roads.px[a:b].tolist(), roads.py[a:b].tolist(), strict=True))
            props = {"class": CLASS_NAMES[int(roads.road_class[i])], "speed": int(roads.speed_kmh[i])}
            for key, col in (("name", roads.name), ("ref", roads.ref)):
                if col[i]:
                    props[key] = rt.string(int(col[i]))
            if roads.oneway[i]:
                props["oneway"] = True
            if roads.small[i]:
                props["is_small"] = True
            want.append((line, tuple(sorted(props.items()))))
        assert got == sorted(want), f"z{z}"
        assert len(layer["features"]) <= roads.num_features


def test_varints() -> None:
    from app.api.mvt import uvarint, varint_sizes, varints

    values = [0, 1, 127, 128, 300, 16383, 16384, 2**21, 2**28 + 5, 2**35, 2**63 - 1]
    assert varints(np.array(values, dtype=np.uint64)) == b"".join(uvarint(v) for v in values)
    assert varint_sizes(np.array(values, dtype=np.uint64)).tolist() == [len(uvarint(v)) for v in values]
    for v in values:
        assert _varint(uvarint(v), 0) == (v, len(uvarint(v)))


def test_low_zoom_draws_main_roads_only(server: str) -> None:
    z = 11
    x, y = tile_of(*CENTRE, z)
    layer = decode(httpx.get(f"{server}/tile/{z}/{x}/{y}").content)["speeds"]
    classes = {f["props"]["class"] for f in layer["features"]}
    assert classes, "Monaco's main roads show at zoom 11"
    assert classes <= {"motorway", "trunk", "primary", "secondary", "motorway_link", "trunk_link", "primary_link",
                        "tertiary", "ferry", "movable_bridge", "shuttle_train"}, classes  # fmt: skip


@pytest.mark.parametrize("zxy", ["10/0/0", "0/0/0", "18/1/1"])
def test_empty_tiles_are_valid(server: str, zxy: str) -> None:
    r = httpx.get(f"{server}/tile/{zxy}")
    assert r.status_code == 200
    layers = decode(r.content)
    assert all(not layer["features"] for layer in layers.values())


@pytest.mark.parametrize(
    "path, code",
    [
        ("/tile/23/0/0", "InvalidValue"),
        ("/tile/3/8/0", "InvalidValue"),
        ("/tile/3/0/8.mvt", "InvalidValue"),
        ("/tile/a/0/0", "InvalidValue"),
        ("/tile/1/-1/0", "InvalidValue"),
        ("/tile/1/0/0.png", "InvalidValue"),
        ("/tile/1/2", "InvalidUrl"),
        ("/tile/1/2/3/4", "InvalidUrl"),
        ("/tile/v1/driving/tile(1,2,3).mvt", "InvalidOptions"),  # OSRM's own tile service (zoom < 12) stays OSRM's
    ],
)
def test_bad_tiles_are_400(server: str, path: str, code: str) -> None:
    r = httpx.get(server + path)
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == code and body["message"]


def test_caching_headers(server: str) -> None:
    fp = httpx.get(f"{server}/health").json()["graph"]["fingerprint"][:16]
    x, y = tile_of(*CENTRE, 15)
    r = httpx.get(f"{server}/tile/15/{x}/{y}.mvt?v={fp}")
    assert r.headers["cache-control"] == "public, max-age=86400"
    etag = r.headers["etag"]
    again = httpx.get(f"{server}/tile/15/{x}/{y}.mvt", headers={"If-None-Match": etag})
    assert again.status_code == 304 and not again.content
    assert httpx.get(f"{server}/tile/15/{x}/{y}.mvt?v=stale").headers["cache-control"] == "no-cache"


def test_tilejson(server: str) -> None:
    tj = httpx.get(f"{server}/tile/tilejson.json").json()
    assert tj["tilejson"] == "3.0.0"
    assert tj["tiles"][0].startswith(server + "/tile/{z}/{x}/{y}.mvt")
    assert tj["vector_layers"][0]["id"] == "speeds"
    assert set(tj["vector_layers"][0]["fields"]) == {"class", "speed", "name", "ref", "oneway", "is_small"}


def test_tile_latency_monaco(server: str, router) -> None:
    """Prints the latency per zoom (not asserted: numbers, not a timed test): cold in-process cut + encode, and HTTP
    for a tile the server has not seen before."""
    from app.api.tiles import encode
    from app.engine.maps.tiles import RoadTiles

    t0 = time.perf_counter()
    rt = RoadTiles(router)
    build_ms = (time.perf_counter() - t0) * 1e3
    rows = []
    with httpx.Client() as client:
        client.get(f"{server}/tile/10/0/0")  # the server's first tile request builds its RoadTiles
        for z in range(11, 19):
            x, y = tile_of(7.4185, 43.7325, z)  # La Condamine: roads at every zoom
            t0 = time.perf_counter()
            body = encode(rt.tile(z, x, y), rt.string)
            cold = (time.perf_counter() - t0) * 1e3
            times = []
            for _ in range(2):  # first request (unless another test asked for this tile before), then cached
                t0 = time.perf_counter()
                r = client.get(f"{server}/tile/{z}/{x}/{y}")
                times.append((time.perf_counter() - t0) * 1e3)
                assert r.status_code == 200 and r.content == body
            rows.append(
                f"z{z}: {len(body) / 1024:6.1f} KiB  engine+encode {cold:5.1f} ms  HTTP {times[0]:5.1f} ms, "
                f"cached {times[1]:4.1f} ms"
            )
    print(f"\nMonaco tiles (RoadTiles built in {build_ms:.1f} ms):\n" + "\n".join(rows))


# -- the schema: what the fuzz test of the whole API (tests/http/test_api_fuzz.py) checks, on the tile operations --


@pytest.fixture(scope="module")
def tile_schema(server: str):
    return schemathesis.openapi.from_url(f"{server}/openapi.json")


tile_schema_cases = schemathesis.pytest.from_fixture("tile_schema").include(path_regex="^/tile/")


@tile_schema_cases.parametrize()
@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_tile_operations_match_their_schema(case) -> None:
    """Generated requests to the tile operations: never a 5xx; statuses, content types and bodies as documented."""
    case.call_and_validate(
        checks=[not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance],
        timeout=30,
    )
