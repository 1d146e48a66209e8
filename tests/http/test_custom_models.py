"""Custom models (GraphHopper's format): the parser and its refusals, the vectorised evaluation against a per-arc
oracle, routes on a model's metric against the reference Dijkstra for every method (the customized hierarchy, ALT,
bidirectional A*), a zero priority equal to the matching exclude, and the HTTP answers (400s naming the rule, a
route, a table, an isochrone). Everything runs on the bundled Monaco graph; the encoded values a graph may not
store yet (toll, max_height, ...) are added in memory with seeded random values."""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import pytest

from app.api.schemas import IsochroneCollection, RouteFeature, TableResponse
from app.engine.data import load
from app.engine.errors import InvalidValue, NoRoute, NoSegment
from app.engine.facade import Engine, RouteRequest, TableRequest, Waypoints
from app.engine.models.custom_model import ArcContext, evaluate, evaluate_slowly, parse_model
from app.engine.models.model_metric import PRIORITY_CAP_DS, ModelCache, model_weights
from app.engine.router import Router
from app.engine.search.reference import DijkstraSearch
from floor.format.encoded_values import ENCODED_VALUES, NO_LIMIT_U8
from floor.format.graph import Graph
from floor.format.units import CLOSED_DS, COORD_SCALE, FLAG_MOTORWAY, ROAD_CLASSES
from harness import api_server

CENTRE = {"type": "FeatureCollection", "features": [{"type": "Feature", "id": "centre", "properties": {},
          "geometry": {"type": "Polygon", "coordinates": [[[7.418, 43.729], [7.428, 43.729], [7.428, 43.737],
                                                           [7.418, 43.737], [7.418, 43.729]]]}}]}  # fmt: skip
MODELS = {
    "truck": {
        "priority": [
            {"if": "max_height < 4 || max_weight < 12", "multiply_by": "0"},
            {"if": "road_access == PRIVATE", "multiply_by": 0.1},
        ],
        "speed": [{"if": "true", "limit_to": "80"}, {"if": "surface == COBBLESTONE", "multiply_by": "0.7"}],
    },
    "no_primary_di": {"priority": [{"if": "road_class == PRIMARY", "multiply_by": "0"}], "distance_influence": 70},
    "slow_centre": {"speed": [{"if": "in_centre", "multiply_by": "0.5"}], "areas": CENTRE},
    "faster": {
        "speed": [
            {"if": "road_class == RESIDENTIAL", "multiply_by": "1.6"},
            {"else_if": "road_class == SERVICE", "limit_to": "max_speed * 0.5"},
            {
                "else": "",
                "do": [
                    {"if": "lanes >= 2 && !road_class_link", "multiply_by": "0.9"},
                    {"if": "toll != NO", "limit_to": 30},
                ],
            },
        ],  # fmt: skip
        "priority": [{"if": "road_environment == TUNNEL", "multiply_by": "0.5"}],
    },
}


def with_values(graph: Graph, seed: int = 7) -> Graph:
    """The graph with every stored encoded value GraphHopper's models read, seeded at random (codes as stored)."""
    rng = np.random.default_rng(seed)
    m = graph.num_arcs
    arrays = dict(graph.arrays)
    for name, ev in ENCODED_VALUES.items():
        if ev.array is None or ev.array in arrays:
            continue
        if ev.kind == "enum":
            arrays[ev.array] = rng.integers(0, len(ev.constants), m).astype(np.uint8)
        else:  # a third without a limit, the rest 2.0 to 25.0 units (km/h x 10 for max_speed)
            hi = 150 if name == "max_speed" else 250
            v = rng.integers(20 if hi == 250 else 10, hi, m).astype(np.uint8)
            v[rng.random(m) < 0.33] = NO_LIMIT_U8
            arrays[ev.array] = v
    return Graph(graph.path, dict(graph.manifest), arrays)


@pytest.fixture(scope="module")
def monaco(bundled_graph: Path) -> Graph:
    return with_values(load(bundled_graph))


@pytest.fixture(scope="module")
def router(monaco: Graph) -> Router:
    return Router(monaco)


# --- the parser ---------------------------------------------------------------------------------------------------


def test_every_construct_parses() -> None:
    for model in MODELS.values():
        parsed = parse_model(model)
        assert len(parsed.key) == 16 and parsed.key == parse_model(dict(model)).key
    m = parse_model(MODELS["faster"])
    assert m.names == {"road_class", "max_speed", "lanes", "road_class_link", "toll", "road_environment"}
    assert parse_model('{"priority": [{"if": "(12 > max_weight) && true", "multiply_by": 0.5}]}').names == {
        "max_weight"
    }
    assert parse_model({}).distance_influence == 0.0


@pytest.mark.parametrize(
    ("model", "says"),
    [
        ({"speed": [{"if": "road_class == MOTORWY", "multiply_by": 0.8}]}, "speed[0] ('road_class == MOTORWY')"),
        ({"speed": [{"if": "road_class == MOTORWY", "multiply_by": 0.8}]}, "values: OTHER, MOTORWAY"),
        ({"priority": [{"if": "max_hight < 4", "multiply_by": 0}]}, "unknown encoded value 'max_hight' (known: "),
        ({"priority": [{"if": "max_hight < 4", "multiply_by": 0}]}, "max_height, max_length"),
        ({"priority": [{"if": "road_class = MOTORWAY", "multiply_by": 0}]}, "priority[0]"),
        ({"priority": [{"if": "toll == ALL &&", "multiply_by": 0}]}, "unexpected end"),
        ({"priority": [{"if": "true", "multiply_by": 1.5}]}, "priority[0] ('1.5'): a priority factor cannot be"),
        ({"speed": [{"if": "true", "limit_to": -5}]}, "limit_to cannot be negative"),
        ({"speed": [{"if": "true", "multiply_by": "-1"}]}, "multiply_by cannot be negative"),
        ({"speed": [{"if": "in_city", "multiply_by": 0.5}]}, "no feature with id 'city'"),
        ({"speed": [{"else": "", "multiply_by": 0.5}]}, "speed[0]: 'else' must follow an 'if'"),
        ({"speed": [{"if": "true", "multiply_by": 0.5, "limit_to": 3}]}, "exactly one operation"),
        ({"speed": [{"if": "road_class < 3", "multiply_by": 0.5}]}, "an enum: compare it with == or !="),
        ({"speed": [{"if": "max_speed == FAST", "multiply_by": 0.5}]}, "compare it with a number"),
        ({"speed": [{"if": "road_class_link < 2", "multiply_by": 0.5}]}, "a boolean"),
        ({"speed": [{"if": "true", "limit_to": "road_class"}]}, "not a number"),
        ({"speed": [{"if": "true", "limit_to": "max_speed / 0"}]}, "('max_speed / 0'): bad limit_to value: division"),
        ({"speed": [{"if": "true", "multiply_by": "(lanes + 1) / (2 - 2)"}]}, "division by zero"),
        ({"speed": [{"if": "true", "do": [{"if": "x", "multiply_by": 1}]}]}, "speed[0].do[0]"),
        ({"turn_penalty": []}, "turn penalties are not supported"),
        ({"distance_influence": -1}, "distance_influence cannot be negative"),
        ({"speed": "fast"}, "a list of statements"),
        ({"speed": [{"if": "true", "multiply_by": 0.5}], "areas": {"type": "Polygon"}}, "FeatureCollection"),
    ],
)
def test_malformed_models_name_the_rule_and_the_reason(model: dict, says: str) -> None:
    with pytest.raises(InvalidValue) as exc:
        parse_model(model)
    assert says in exc.value.message, exc.value.message


def test_a_value_the_graph_lacks_says_re_run_preprocess(bundled_graph: Path) -> None:
    g = load(bundled_graph)
    model = parse_model({"priority": [{"if": "max_height < 4", "multiply_by": 0}]})
    older = Graph(g.path, g.manifest, {k: v for k, v in g.arrays.items() if k != "arc_max_height"})  # built before
    with pytest.raises(InvalidValue, match="this graph does not store 'max_height'.*re-run `starroute preprocess`"):
        ModelCache(Router(older), background=False).get(model)
    bowtie = {"type": "Polygon", "coordinates": [[[7.41, 43.73], [7.43, 43.74], [7.43, 43.73], [7.41, 43.74],
                                                   [7.41, 43.73]]]}  # fmt: skip
    crossed = {"speed": [{"if": "in_x", "multiply_by": 0.5}], "areas": {"type": "FeatureCollection", "features": [
        {"type": "Feature", "id": "x", "properties": {}, "geometry": bowtie}]}}  # fmt: skip
    with pytest.raises(InvalidValue, match=r"custom_model.areas \(x\): "):
        ModelCache(Router(g), background=False).get(parse_model(crossed))
    with pytest.raises(InvalidValue, match="larger than 1 for a priority factor"):  # only known on the arcs
        ModelCache(Router(with_values(g)), background=False).get(
            parse_model({"priority": [{"if": "true", "multiply_by": "max_width"}]})
        )


# --- evaluation and weights -----------------------------------------------------------------------------------------


def test_vectorised_evaluation_equals_the_per_arc_oracle(monaco: Graph, router: Router) -> None:
    from app.engine.features.areas import forbidden_arcs, parse_areas

    n = monaco.num_arcs
    v0 = np.asarray(monaco.arc_dist) / np.maximum(np.asarray(monaco.arc_duration), 1) * 3.6

    def area(fid: str) -> np.ndarray:
        mask = np.zeros(n, dtype=bool)
        mask[forbidden_arcs(parse_areas(CENTRE["features"][0]), monaco)] = True
        return mask

    for name, raw in MODELS.items():
        model = parse_model(raw)
        fast = evaluate(model, ArcContext(monaco.arrays, n, area), v0)
        slow = evaluate_slowly(model, ArcContext(monaco.arrays, n, area), v0)
        for a, b in zip(fast, slow, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, err_msg=name)
        # the weights: GraphHopper's formula arc by arc
        w = model_weights(model, monaco, lambda f: np.flatnonzero(area("centre")))
        speed, prio = slow
        vtop = v0.max()
        for i in range(0, n, 7):
            v = min(speed[i], vtop)
            if prio[i] == 0 or v == 0:
                assert w.road["arc_weight"][i] == CLOSED_DS and w.closed[i], (name, i)
                continue
            r = v0[i] / v if monaco.arc_dist[i] > 0 else 1 / (v / 1e-9)
            secs = monaco.arc_weight[i] * r
            want = min(secs / prio[i], secs + PRIORITY_CAP_DS) + monaco.arc_dist[i] * model.distance_influence / 1000
            assert w.road["arc_weight"][i] == max(1, round(want)), (name, i)
            assert w.road["arc_duration"][i] == max(1, round(monaco.arc_duration[i] * r)), (name, i)


def test_a_road_the_metric_closed_stays_closed(monaco: Graph) -> None:
    arrays = dict(monaco.arrays)
    w = np.asarray(arrays["arc_weight"]).copy()
    w[:5] = CLOSED_DS  # as a speed file closes a road
    arrays["arc_weight"] = w
    got = model_weights(parse_model({"speed": [{"if": "true", "multiply_by": 1.5}]}), Graph(monaco.path,
                        monaco.manifest, arrays), lambda f: np.zeros(0, np.int32))  # fmt: skip
    assert got.closed[:5].all() and (got.road["arc_weight"][:5] == CLOSED_DS).all()


# --- routes against the reference ---------------------------------------------------------------------------------


def _pairs(g: Graph, k: int, seed: int) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    rng = np.random.default_rng(seed)
    lon, lat = np.asarray(g.node_lon) / COORD_SCALE, np.asarray(g.node_lat) / COORD_SCALE
    idx = rng.integers(0, g.num_nodes, (k, 2))
    return [((lon[a], lat[a]), (lon[b], lat[b])) for a, b in idx]


@pytest.mark.parametrize("cch", [True, False])
def test_routes_equal_the_reference_dijkstra_on_the_models_metric(monaco: Graph, router: Router, cch: bool) -> None:
    cache = ModelCache(router, cch_max_arcs=10**9 if cch else 0, background=False)
    seen = set()
    for name, raw in MODELS.items():
        view, _ = cache.get(parse_model(raw))
        seen.add(view.method)
        assert view.method == ("ch-customized" if cch else "alt" if view.slower_only else "bidirectional-astar")
        oracle = Router(view.router.graph, algorithms={"reference": DijkstraSearch})
        q, ref = view.router.query(), oracle.query()
        for k, (a, b) in enumerate(_pairs(monaco, 25, seed=len(name))):
            try:
                phs = view.router.snap_waypoints([a, b])
            except NoSegment:
                continue
            try:
                want = ref.route(phs, "reference")
            except NoRoute:
                with pytest.raises(NoRoute):
                    q.route(phs, view.algorithm)
                continue
            got = q.route(phs, view.algorithm)
            msg = f"{name} {view.method} pair {k}: {got.weight} != reference {want.weight}"
            assert got.weight == want.weight, msg
            assert got.duration_s == pytest.approx(want.duration_s, abs=0.11), msg
            arcs = np.concatenate([leg.piece_arc for leg in got.legs])
            assert (np.asarray(view.router.graph.arc_weight)[arcs] < CLOSED_DS).all(), msg  # no closed road
    assert seen == ({"ch-customized"} if cch else {"alt", "bidirectional-astar"})


def test_a_zero_priority_answers_what_the_matching_exclude_answers(monaco: Graph) -> None:
    """Monaco's primary roads made motorways (class and flag): `road_class == MOTORWAY multiply_by 0` routes and
    snaps exactly as `exclude=motorway`."""
    arrays = dict(monaco.arrays)
    cls, flags = np.asarray(arrays["arc_class"]).copy(), np.asarray(arrays["arc_flags"]).copy()
    prim = cls == ROAD_CLASSES.index("primary")
    cls[prim], flags[prim] = ROAD_CLASSES.index("motorway"), flags[prim] | FLAG_MOTORWAY
    onto = np.asarray(arrays["eb_node_arc"])[np.asarray(arrays["eb_arc_head"])]
    arrays.update(arc_class=cls, arc_flags=flags, eb_arc_flags=flags[onto], eb_arc_class=cls[onto])
    manifest = dict(monaco.manifest)
    manifest["excludable"] = [dict(e, prefix=None) for e in manifest["excludable"]]
    engine = Engine(Graph(monaco.path, manifest, arrays))
    model = engine.parse_model({"priority": [{"if": "road_class == MOTORWAY", "multiply_by": "0"}]})
    engine.models.background = False
    compared = 0
    for a, b in _pairs(monaco, 40, seed=3):
        wp = Waypoints((a, b))
        outcome = []
        for req in (RouteRequest(wp, exclude=("motorway",)), RouteRequest(wp, custom_model=model)):
            try:
                outcome.append(engine.route(req).best)
            except (NoRoute, NoSegment) as exc:
                outcome.append(type(exc).__name__)
        ex, cm = outcome
        assert type(ex) is type(cm), (a, b, ex, cm)
        if not isinstance(ex, str):
            assert (ex.weight, ex.duration_s, ex.distance_m) == (cm.weight, cm.duration_s, cm.distance_m), (a, b)
            np.testing.assert_array_equal(ex.coordinates, cm.coordinates)
            compared += 1
    assert compared >= 10
    points = [p for pair in _pairs(monaco, 4, seed=9) for p in pair]
    tables = []
    for req in (
        TableRequest(Waypoints(points), exclude=("motorway",)),
        TableRequest(Waypoints(points), custom_model=model),
    ):
        src, dst, ex = engine.resolve_table(req)
        tables.append(engine.table(src, dst, ex, req.custom_model))
    np.testing.assert_array_equal(tables[0].durations_s, tables[1].durations_s)
    np.testing.assert_array_equal(tables[0].distances_m, tables[1].distances_m)


def test_the_cache_is_bounded_and_builds_once(router: Router) -> None:
    cache = ModelCache(router, size=2, background=False)
    models = [parse_model({"speed": [{"if": "true", "limit_to": v}]}) for v in (30, 40, 50)]
    first, cached = cache.get(models[0])
    assert not cached and cache.get(models[0]) == (first, True)
    cache.get(models[1])
    cache.get(models[2])
    assert cache.info()["models"] == [models[1].key, models[2].key] and cache.built == 3


def test_background_customization_switches_to_the_hierarchy(router: Router) -> None:
    cache = ModelCache(router, background=True)
    model = parse_model(MODELS["truck"])
    view, _ = cache.get(model)
    assert view.method in ("alt", "ch-customized")
    view = cache.wait(model)
    assert view.method == "ch-customized" and "ch" in view.router.algorithms


# --- HTTP ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def client(bundled_graph: Path):  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=api_server.shared(bundled_graph), timeout=60) as c:
        yield c


POINTS = [[7.4197, 43.7311], [7.4246, 43.7384]]


def test_http_route_table_isochrone_with_a_model(client: httpx.Client) -> None:
    model = {"speed": [{"if": "road_class == PRIMARY", "multiply_by": "0.5"}, {"if": "in_centre", "limit_to": 20}],
             "areas": CENTRE}  # fmt: skip
    plain = client.post("/route", json={"coordinates": POINTS}).json()
    r = client.post("/route", json={"coordinates": POINTS, "custom_model": model})
    assert r.status_code == 200, r.text
    RouteFeature.model_validate(r.json())  # the OpenAPI contract
    props = r.json()["properties"]
    assert props["custom_model"]["method"] in ("ch-customized", "alt", "bidirectional-astar")
    assert props["duration_s"] >= plain["properties"]["duration_s"]
    again = client.post("/route", json={"coordinates": POINTS, "custom_model": model}).json()["properties"]
    assert again["custom_model"]["cached"] and again["duration_s"] == props["duration_s"]
    t = client.post("/table", json={"sources": POINTS, "custom_model": model})
    assert t.status_code == 200, t.text
    assert t.json()["durations_s"][0][1] == pytest.approx(props["duration_s"], abs=0.2)
    assert t.json()["custom_model"]["key"] == props["custom_model"]["key"]
    TableResponse.model_validate(t.json())
    iso = client.post("/isochrone", json={"point": POINTS[0], "minutes": [2, 4], "custom_model": model})
    assert iso.status_code == 200, iso.text
    assert iso.json()["properties"]["custom_model"]["key"] == props["custom_model"]["key"]
    assert len(iso.json()["features"]) == 2
    IsochroneCollection.model_validate(iso.json())


def test_http_400s_name_the_rule(client: httpx.Client) -> None:
    bad = {"priority": [{"if": "true", "multiply_by": 0.5}, {"if": "road_class == MOTORWY", "multiply_by": 0}]}
    for path, body in (
        ("/route", {"coordinates": POINTS, "custom_model": bad}),
        ("/table", {"sources": POINTS, "custom_model": bad}),
        ("/isochrone", {"point": POINTS[0], "minutes": [3], "custom_model": bad}),
    ):
        r = client.post(path, json=body)
        assert r.status_code == 400, (path, r.text)
        assert r.json()["code"] == "InvalidValue" and "priority[1]" in r.json()["message"], r.text
    r = client.post("/route", json={"coordinates": POINTS, "custom_model": {"speed": [{"if": "wat", "limit_to": 5}]}})
    assert r.status_code == 400 and "known: lanes, max_height" in r.json()["message"], r.text


def test_a_model_that_closes_every_road_says_so(client: httpx.Client) -> None:
    """A model (or areas to avoid) closing every road: a 400 saying so, not "no road segment within 1000 m" of a
    point beside a road; a speed factor that is infinite somewhere is "not finite", not a priority's bound."""
    everything = {"type": "Polygon", "coordinates": [[[7.3, 43.6], [7.6, 43.6], [7.6, 43.9], [7.3, 43.9], [7.3, 43.6]]]}
    closed = {"priority": [{"if": "true", "multiply_by": 0}]}
    stopped = {"speed": [{"if": "true", "limit_to": 0}]}
    for path, body, who in (
        ("/route", {"coordinates": POINTS, "custom_model": closed}, "the custom model"),
        ("/route", {"coordinates": POINTS, "custom_model": stopped}, "the custom model"),
        ("/table", {"sources": POINTS, "avoid": everything}, "the areas to avoid"),
        (
            "/isochrone",
            {"point": POINTS[0], "minutes": [3], "avoid": everything, "custom_model": {"distance_influence": 10}},
            "the custom model and the areas to avoid",
        ),
    ):
        r = client.post(path, json=body)
        assert r.status_code == 400 and r.json()["code"] == "InvalidValue", (path, r.text)
        message = r.json()["message"]
        assert message.startswith("every road of this graph ("), message
        assert message.endswith(f"closed by {who}: nothing is left to route on"), message
    doubled = {"speed": [{"if": "true", "multiply_by": "max_speed * 2"}]}
    r = client.post("/route", json={"coordinates": POINTS, "custom_model": doubled})
    assert r.status_code == 400 and "multiply_by value is inf on some road: not finite" in r.json()["message"], r.text


def test_the_library_routes_and_isochrones_with_a_model(bundled_graph: Path) -> None:
    import starroute

    g = starroute.load(bundled_graph)
    slow = {"speed": [{"if": "true", "limit_to": 20}]}
    a, b = tuple(POINTS[0]), tuple(POINTS[1])
    assert g.route(a, b, custom_model=slow).duration_s > g.route(a, b).duration_s
    with pytest.raises(InvalidValue, match="speed\\[0\\]"):
        g.route(a, b, custom_model={"speed": [{"if": "true", "limit_to": -1}]})
    assert len(g.isochrone(a, minutes=[2], custom_model=slow).bands) == 1
    # the table: every cell the model's route, here and (test_matrix_dask) on Dask workers
    m = g.table([a, b], custom_model=slow)
    assert m.durations_s[0, 1] == pytest.approx(g.route(a, b, custom_model=slow).duration_s, abs=0.1)
    assert m.durations_s[0, 1] > g.table([a, b]).durations_s[0, 1]
    with pytest.raises(InvalidValue, match="speed\\[0\\]"):
        g.table([a, b], custom_model={"speed": [{"if": "true", "limit_to": -1}]})


def test_http_tables_and_isochrones_avoid_areas_as_closed_roads(client: httpx.Client) -> None:
    """Avoid areas on tables and isochrones are a custom model closing the areas' roads: a table cell equals the
    route avoiding the same area (which forbids the same roads)."""
    west, east = [7.4197, 43.7311], [7.4300, 43.7420]
    box = [[7.4230, 43.7360], [7.4270, 43.7360], [7.4270, 43.7380], [7.4230, 43.7380], [7.4230, 43.7360]]
    area = {"type": "Polygon", "coordinates": [box]}
    route = client.post("/route", json={"coordinates": [west, east], "avoid": area}).json()["properties"]
    plain = client.post("/table", json={"sources": [west], "destinations": [east]}).json()
    t = client.post("/table", json={"sources": [west], "destinations": [east], "avoid": area})
    assert t.status_code == 200, t.text
    assert t.json()["durations_s"][0][0] == pytest.approx(route["duration_s"], abs=0.2)
    assert t.json()["durations_s"][0][0] > plain["durations_s"][0][0]
    assert t.json()["custom_model"]["closed_arcs"] > 0
    ring = ";".join(f"{x},{y}" for x, y in box[:-1])
    params = {"point": f"{west[0]},{west[1]}", "minutes": "3"}
    iso = client.get("/isochrone", params={**params, "avoid": ring})
    assert iso.status_code == 200, iso.text
    assert iso.json()["properties"]["custom_model"]["closed_arcs"] > 0
    assert (
        iso.json()["features"][0]["properties"]["pieces"]
        < client.get("/isochrone", params=params).json()["features"][0]["properties"]["pieces"]
    )
