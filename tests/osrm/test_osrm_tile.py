"""OSRM's tile service `/tile/v1/{profile}/tile(x,y,z).mvt` (app.api.osrm.tile over app.engine.maps.debug_tiles),
decoded
with a standard decoder (mapbox-vector-tile): layers, property names and types as osrm-routed's, every road segment
of a tile with its arc's speed and its share of the arc's weight and duration (expected values computed here from
the graph arrays, not through the tile code), the turns of a drawn junction with their angles and costs, OSRM's
errors, and a slow side-by-side with osrm-routed itself on a Monaco tile."""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path

import httpx
import mapbox_vector_tile
import numpy as np
import pytest

from app.api.osrm import grammar
from app.api.osrm import tile as osrm_tile
from app.engine.data import load
from app.engine.errors import EngineError
from app.engine.facade import Engine
from harness import api_server, asciimap

CENTRE = (7.4246, 43.7384)  # Monte-Carlo
T = "/tile/v1/driving/"
LAYERS = {"speeds", "turns", "osmnodes", "internal-nodes"}
SPEED_PROPS = {
    "speed": int,
    "is_small": bool,
    "datasource": str,
    "weight": float,
    "duration": float,
    "name": str,
    "rate": float,
    "is_startpoint": bool,
}
TURN_PROPS = {"bearing_in": int, "turn_angle": int, "cost": float, "weight": float, "type": str, "modifier": str}


def decode(body: bytes) -> dict:
    return mapbox_vector_tile.decode(body, default_options={"y_coord_down": True})


def tile_of(lon: float, lat: float, z: int) -> tuple[int, int]:
    n = 2**z
    s = math.sin(math.radians(lat))
    return int((lon + 180.0) / 360.0 * n), int((0.5 - math.log((1 + s) / (1 - s)) / (4 * math.pi)) * n)


def round_half_away(v: np.ndarray) -> np.ndarray:
    return np.sign(v) * np.floor(np.abs(v) + 0.5)


def grid(lon_e7: np.ndarray, lat_e7: np.ndarray, z: int, x: int, y: int) -> tuple[np.ndarray, np.ndarray]:
    """OSRM's tile coordinates of graph points: 1e-6 degree coordinates, Web Mercator, std::round."""
    lon = round_half_away(np.asarray(lon_e7, dtype=np.float64) / 10) / 1e6
    lat = round_half_away(np.asarray(lat_e7, dtype=np.float64) / 10) / 1e6
    s = np.sin(np.radians(lat))
    my = 0.5 - np.log((1 + s) / (1 - s)) / (4 * math.pi)
    n = 2**z
    return round_half_away(((lon + 180) / 360 * n - x) * 4096), round_half_away((my * n - y) * 4096)


def haversine(lon1, lat1, lon2, lat2) -> np.ndarray:
    p1, p2 = np.radians(lat1), np.radians(lat2)
    a = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(np.radians(lon2 - lon1) / 2) ** 2
    return 2 * 6371008.8 * np.arcsin(np.sqrt(a))


@pytest.fixture(scope="module")
def server(bundled_graph: Path) -> str:
    return api_server.shared(bundled_graph)


@pytest.fixture(scope="module")
def monaco_tile(server: str) -> tuple[tuple[int, int, int], httpx.Response]:
    z = 15
    x, y = tile_of(*CENTRE, z)
    return (z, x, y), httpx.get(f"{server}{T}tile({x},{y},{z}).mvt", timeout=60)


# -- the layers and their properties ----------------------------------------------------------------------------------


def test_layers_and_property_types_as_osrm(monaco_tile) -> None:
    _, r = monaco_tile
    assert r.status_code == 200 and r.headers["content-type"] == "application/x-protobuf"
    layers = decode(r.content)
    assert set(layers) == LAYERS
    for layer in layers.values():
        assert layer["extent"] == 4096 and layer["version"] == 2 and layer["features"]
    speeds, turns = layers["speeds"]["features"], layers["turns"]["features"]
    for feats, props in ((speeds, SPEED_PROPS), (turns, TURN_PROPS)):
        assert [f["id"] for f in feats] == list(range(1, len(feats) + 1))
        for f in feats:
            assert {k: type(v) for k, v in f["properties"].items()} == props
    assert all(f["geometry"]["type"] == "LineString" and len(f["geometry"]["coordinates"]) == 2 for f in speeds)
    assert {f["properties"]["datasource"] for f in speeds} == {"lua profile"}
    assert all(f["geometry"]["type"] == "Point" for f in turns)
    assert {f["properties"]["modifier"] for f in turns} <= set(osrm_tile.MODIFIER_NAMES)
    assert {"turn", "(suppressed)"} <= {f["properties"]["type"] for f in turns}
    nodes = layers["osmnodes"]["features"]
    assert all(f["properties"] == {} and f["geometry"]["type"] == "Point" for f in nodes)
    assert len({f["id"] for f in nodes}) == len(nodes) and all(f["id"] > 0 for f in nodes)  # OSM node ids, once
    assert all(f["properties"] == {} for f in layers["internal-nodes"]["features"])


def test_every_segment_with_its_arcs_speed_weight_and_duration(bundled_graph: Path, monaco_tile) -> None:
    """Every directed segment inside the tile is a `speeds` line with its arc's figures; no line is made up."""
    (z, x, y), r = monaco_tile
    g = load(bundled_graph)
    feats: dict[tuple, list[dict]] = {}
    for f in decode(r.content)["speeds"]["features"]:
        a, b = f["geometry"]["coordinates"]
        feats.setdefault((tuple(a), tuple(b)), []).append(f["properties"])
    gx, gy = grid(g.geom_lon, g.geom_lat, z, x, y)
    gf = np.asarray(g.geom_first)
    lon, lat = np.asarray(g.geom_lon) / 1e7, np.asarray(g.geom_lat) / 1e7
    expected = 0
    for arc in range(g.num_arcs):
        chain, rev = int(g.arc_geom[arc]) >> 1, int(g.arc_geom[arc]) & 1
        pts = np.arange(gf[chain], gf[chain + 1])
        if not ((gx[pts] > 0) & (gx[pts] < 4096) & (gy[pts] > 0) & (gy[pts] < 4096)).any():
            continue
        seg = haversine(lon[pts[:-1]], lat[pts[:-1]], lon[pts[1:]], lat[pts[1:]])
        share = seg / seg.sum()
        speed = int(round_half_away(int(g.arc_dist[arc]) / int(g.arc_duration[arc]) * 3.6))
        for k in range(len(pts) - 1):
            i, j = (pts[k + 1], pts[k]) if rev else (pts[k], pts[k + 1])
            ends = ((int(gx[i]), int(gy[i])), (int(gx[j]), int(gy[j])))
            if not all(0 < c < 4096 for p in ends for c in p) or ends[0] == ends[1]:
                continue  # clipped, or shorter than a grid unit (OSRM draws neither as is)
            expected += 1
            props = feats.get(ends)
            assert props, (arc, ends)
            p = next(p for p in props if p["speed"] == min(speed, 127))
            assert math.isclose(p["duration"], int(g.arc_duration[arc]) / 10 * share[k], abs_tol=0.051)
            assert math.isclose(p["weight"], int(g.arc_weight[arc]) / 10 * share[k], abs_tol=0.051)
            assert p["weight"] >= p["duration"] - 1e-6
            assert p["name"] == g.string(int(g.arc_name[arc]))
    inside = [k for k in feats if all(0 < c < 4096 for pt in k for c in pt)]
    assert expected > 500 and sum(len(feats[k]) for k in inside) == expected


# -- turns on a drawn junction ----------------------------------------------------------------------------------------


CROSSING = """
  c
a b d
  e
"""
CROSSING_WAYS = [("abd", {"highway": "primary", "name": "Main"}), ("cbe", {"highway": "secondary", "name": "Cross"})]


def _crossing_turns(tmp_path: Path, turns: bool | None) -> tuple[list[dict], Engine, tuple[float, float]]:
    """The crossing's graph (car; `turns` None: the profile's edge-based graph) and the turns at b, from its tile."""
    built = asciimap.build(tmp_path, CROSSING, ways=CROSSING_WAYS, profile="car", turns=turns)
    engine = Engine(load(built.graph.path))
    lon, lat = (c / 1e7 for c in built.coords["b"])
    z = 16
    x, y = tile_of(lon, lat, z)
    layers = decode(osrm_tile.encode(engine.debug_tile(z, x, y)))
    assert set(layers) == LAYERS - {"internal-nodes"}
    bx, by = (int(v[0]) for v in grid([built.coords["b"][0]], [built.coords["b"][1]], z, x, y))
    at_b = [f["properties"] for f in layers["turns"]["features"] if f["geometry"]["coordinates"] == [bx, by]]
    assert len(at_b) == 4 * 3  # from each of four roads onto the three others, no u-turn
    west = sorted((p for p in at_b if p["bearing_in"] == 90), key=lambda p: p["turn_angle"])
    assert [p["turn_angle"] for p in west] == [-90, 0, 90]
    assert [p["modifier"] for p in west] == ["left", "straight", "right"]
    assert [p["type"] for p in west] == ["turn", "(suppressed)", "turn"]
    return west, engine, (lon, lat)


def test_turns_at_a_crossing(tmp_path: Path) -> None:
    """A four-way crossing of two-way roads: from the west, left, straight and right with the car profile's turn
    durations for -90, 0 and +90 degrees (OSRM's sigmoid; four roads meet), bearing 90 in."""
    from preprocessing.osm.profiles.car import ONCOMING_TURN_PENALTY_S, TURN_BIAS, TURN_PENALTY_S, sigmoid_turn_s

    west, engine, (lon, lat) = _crossing_turns(tmp_path, None)
    angles = np.array([-90.0, 0.0, 90.0])
    seconds = sigmoid_turn_s(angles, TURN_PENALTY_S, TURN_BIAS)
    # the left turn also waits for oncoming traffic (the car.lua osrm-routed ships); OSRM truncates to deciseconds
    seconds[0] += ONCOMING_TURN_PENALTY_S / (1.0 + np.exp(-(13.0 * 90.0 / 180.0 - 3.25)))
    cost = np.floor(seconds * 10 + 1e-9) / 10
    assert [p["cost"] for p in west] == pytest.approx(cost.tolist(), abs=1e-6)
    assert [p["weight"] for p in west] == pytest.approx(cost.tolist(), abs=1e-6)
    assert cost[0] > cost[2] > cost[1]  # left costs more than right (driving on the right)
    # below zoom 15 no turns, as osrm-routed
    assert "turns" not in decode(osrm_tile.encode(engine.debug_tile(14, *tile_of(lon, lat, 14))))


def test_turns_on_a_node_based_graph_cost_nothing(tmp_path: Path) -> None:
    """Without the edge-based graph (`--no-turns`) every junction pair is a turn the router takes for free."""
    west, _, _ = _crossing_turns(tmp_path, False)
    assert [(p["cost"], p["weight"]) for p in west] == [(0.0, 0.0)] * 3


# -- errors -----------------------------------------------------------------------------------------------------------

INVALID = "Invalid coodinates. Only zoomlevel 12+ is supported"  # sic


@pytest.mark.parametrize(
    ("query", "code", "pos"),
    [  # positions as osrm-routed 26.10 answers them ("/tile/v1/driving/" is 17 characters)
        ("tile(17059,11948,15)", "InvalidQuery", 36),
        ("tile(17059,11948,15).mvt?x=1", "InvalidQuery", 41),
        ("tile(1,2).mvt", "InvalidQuery", 25),
        ("tile(-1,2,3).mvt", "InvalidQuery", 22),
        ("tile(99999999999,2,13).mvt", "InvalidQuery", 22),
        ("tile(4294967296,2,13).mvt", "InvalidQuery", 22),
        ("tile(1,2,13).mvtx", "InvalidQuery", 33),
        ("tile(1,2,13).json", "InvalidQuery", 28),
        ("tile(1,2,13)x.mvt", "InvalidQuery", 28),
        ("7.4,43.7", "InvalidQuery", 17),
        ("tile(17059,11948,11).mvt", "InvalidOptions", "zoom 11 is outside 12..19"),
        ("tile(17059,11948,20).mvt", "InvalidOptions", "zoom 20 is outside 12..19"),
        ("tile(4096,1,12).mvt", "InvalidOptions", "x and y are 0..4095 at zoom 12"),
    ],
)
def test_malformed_urls_and_zooms_answer_osrms_errors(query: str, code: str, pos: int | str) -> None:
    """osrm-routed's codes and messages; a tile out of range gets OSRM's words ("12+", even of zoom 20) and then
    what is wrong."""
    path, _, qs = (T + query).partition("?")
    with pytest.raises(EngineError) as info:
        grammar.parse(path, qs)
    assert info.value.code == code
    expected = f"Query string malformed close to position {pos}" if isinstance(pos, int) else f"{INVALID}: {pos}"
    assert info.value.message == expected


def test_errors_and_empty_tiles_over_http(server: str) -> None:
    r = httpx.get(f"{server}{T}tile(545920,382400,20).mvt")
    zoom_20 = {"code": "InvalidOptions", "message": f"{INVALID}: zoom 20 is outside 12..19"}
    assert r.status_code == 400 and r.json() == zoom_20
    r = httpx.get(f"{server}{T}tile(17059,11948,15).mvt", params={"x": "1"})
    assert r.status_code == 400 and r.json()["code"] == "InvalidQuery"
    assert r.headers["content-type"].startswith("application/json")
    empty = httpx.get(f"{server}{T}tile(01,2,13).mvt")  # leading zeros are fine; no road there: 0 bytes, as OSRM
    assert empty.status_code == 200 and empty.content == b"" and decode(empty.content) == {}
    assert grammar.parse(T + "tile(01,2,13).mvt").options == grammar.OsrmTileOptions(x=1, y=2, z=13)
    assert 'endpoint="osrm_tile",status="200"' in httpx.get(f"{server}/metrics").text


# -- beside osrm-routed -----------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_monaco_tile_beside_osrm_routed(monaco_tile, osrm_base: str) -> None:
    """The same tile from both: the same layers, property names and value types; the same segments drawn at the
    same grid points with the same names; the same OSM nodes; turns at the same junctions with the same bearings
    and, but for a few, guidance's type and modifier. (Speeds and costs differ where the graphs do: our speed is the
    arc's, node penalties included, OSRM's the segment's own, each rounded; OSRM adds signal penalties to turns.)"""
    (z, x, y), r = monaco_tile
    ours = decode(r.content)
    r2 = httpx.get(f"{osrm_base}{T}tile({x},{y},{z}).mvt", timeout=60)
    assert r2.status_code == 200 and r2.headers["content-type"] == "application/x-protobuf"
    theirs = decode(r2.content)
    assert set(ours) == set(theirs) == LAYERS
    for name in ("speeds", "turns"):
        for layer in (ours, theirs):
            types = {k: type(v) for f in layer[name]["features"] for k, v in f["properties"].items()}
            assert types == (SPEED_PROPS if name == "speeds" else TURN_PROPS)

    def segments(layer: dict) -> Counter:
        return Counter(tuple(map(tuple, f["geometry"]["coordinates"])) for f in layer["speeds"]["features"])

    assert segments(ours) == segments(theirs)
    names = {tuple(map(tuple, f["geometry"]["coordinates"])): f["properties"] for f in theirs["speeds"]["features"]}
    same = [f for f in ours["speeds"]["features"] if names[tuple(map(tuple, f["geometry"]["coordinates"]))]]
    agree = Counter()
    for f in same:
        p, q = f["properties"], names[tuple(map(tuple, f["geometry"]["coordinates"]))]
        agree["name"] += p["name"] == q["name"]
        agree["duration"] += abs(p["duration"] - q["duration"]) < 0.15
        agree["speed"] += abs(p["speed"] - q["speed"]) <= 0.2 * q["speed"] + 2
    n = len(same)
    assert agree["name"] >= 0.99 * n and agree["duration"] >= 0.9 * n and agree["speed"] >= 0.9 * n, (agree, n)

    def nodes(layer: dict) -> dict:
        return {f["id"]: tuple(f["geometry"]["coordinates"]) for f in layer["osmnodes"]["features"]}

    assert nodes(ours) == nodes(theirs)

    def turns(layer: dict) -> dict:
        out: dict[tuple, dict] = {}
        for f in layer["turns"]["features"]:
            p = f["properties"]
            out[(*f["geometry"]["coordinates"], p["bearing_in"], p["turn_angle"])] = p
        return out

    mine, osrms = turns(ours), turns(theirs)
    common = set(mine) & set(osrms)
    assert len(common) >= 0.98 * max(len(mine), len(osrms)), (len(mine), len(osrms), len(common))
    kinds = sum(mine[k]["type"] == osrms[k]["type"] and mine[k]["modifier"] == osrms[k]["modifier"] for k in common)
    assert kinds >= 0.97 * len(common)
    print(
        f"\ntile {z}/{x}/{y}: speeds {len(ours['speeds']['features'])} / {len(theirs['speeds']['features'])}, "
        f"turns {len(mine)} / {len(osrms)} ({len(common)} alike, {kinds} of the same type), osmnodes "
        f"{len(nodes(ours))} / {len(nodes(theirs))}, internal-nodes {len(ours['internal-nodes']['features'])} / "
        f"{len(theirs['internal-nodes']['features'])}; segments agreeing: {dict(agree)} of {n}"
    )
