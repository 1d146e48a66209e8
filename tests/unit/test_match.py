"""Map matching (`app.engine.features.match`, `Engine.match`) on the bundled Monaco graph: traces drawn along real
routes,
exactly and with GPS noise, OSRM's rules for splits, tidy, waypoints and errors, and the matching's legs against
the router's own legs through the same points; the model's pieces (tidy, thinning, pauses, the u-turn test, the
confidence) as units."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from app.engine.errors import EngineError
from app.engine.facade import Engine, Limits, MatchRequest
from app.engine.features.candidates import uturn_allowed
from app.engine.features.hmm import confidence
from app.engine.features.match import pauses, thin, tidy_trace
from app.engine.types import RouteOptions
from floor.kernels.geometry import osrm_distances_m
from harness.traces import drive, make_trace, mismatch, request

SEA = (7.42, 43.70)  # off Monaco's coast: no road within kilometres


@pytest.fixture(scope="module")
def engine(bundled_graph: Path) -> Engine:
    from app.engine.data import load

    return Engine(load(bundled_graph), Limits(max_matching_size=100, max_matching_radius_m=50.0))


def off_route_m(point: tuple[float, float], line: np.ndarray) -> float:
    """Metres from a point to the nearest point of a polyline densified to 0.5 m."""
    k = math.cos(math.radians(point[1])) * 111_195.0
    xy = (line - point) * np.array([k, 111_195.0])
    seg = xy[1:] - xy[:-1]
    t = np.clip(-(xy[:-1] * seg).sum(1) / np.maximum((seg * seg).sum(1), 1e-12), 0, 1)
    return float(np.hypot(*(xy[:-1] + t[:, None] * seg).T).min())


# -- traces along real routes ----------------------------------------------------------------------------------------


def test_exact_trace_matches_its_route(engine: Engine) -> None:
    """Points exactly on a route, every 10 s: one matching, every tracepoint on the route's roads (within a
    metre), the matched distance the route's within a metre."""
    truth = drive(engine, 11)
    trace = make_trace(truth, 10, 0.0, np.random.default_rng(0))
    answer = engine.match(request(trace, None))
    assert len(answer.matchings) == 1
    for tp in answer.tracepoints:
        assert tp is not None
        assert off_route_m((tp.phantom.lon, tp.phantom.lat), trace.truth) < 1.0
        assert tp.phantom.distance_m < 1.0
    covered = float(osrm_distances_m(*trace.truth[:-1].T, *trace.truth[1:].T).sum())  # OSRM's formula, as routes
    assert abs(answer.matchings[0].route.distance_m - covered) < 1.0
    assert 0.0 <= answer.matchings[0].confidence <= 1.0
    assert mismatch(trace.truth, [answer.matchings[0].route.coordinates]) < 0.01


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_noisy_traces_match_the_true_roads(engine: Engine, seed: int) -> None:
    """GPS noise of 5 m every 10 s, the radius given: the true roads, but for a few metres at the ends."""
    truth = drive(engine, seed)
    trace = make_trace(truth, 10, 5.0, np.random.default_rng(seed))
    answer = engine.match(request(trace, 5.0))
    assert len(answer.matchings) == 1
    assert mismatch(trace.truth, [m.route.coordinates for m in answer.matchings]) < 0.06


def test_legs_are_the_routers_legs(engine: Engine) -> None:
    """The matching's legs (the model's own paths, assembled in one kernel call) weigh, take and measure what the
    router's legs through the same phantoms do."""
    truth = drive(engine, 5)
    trace = make_trace(truth, 15, 10.0, np.random.default_rng(5))
    answer = engine.match(request(trace, 10.0))
    for m in answer.matchings:
        phantoms = [leg.source for leg in m.route.legs] + [m.route.legs[-1].target]
        ref = engine.router.query().routes(phantoms, RouteOptions(continue_straight=False)).best
        for ours, theirs in zip(m.route.legs, ref.legs, strict=True):
            assert ours.weight == theirs.weight
            assert ours.distance_m == pytest.approx(theirs.distance_m, abs=0.05)
            assert ours.duration_s == pytest.approx(theirs.duration_s, abs=0.05)
            assert len(ours.coordinates) >= 2 and ours.piece_arc.shape == ours.piece_distance_m.shape


def test_node_based_graph(tmp_path: Path) -> None:
    """The same on a graph searched node by node (`--no-turns`)."""
    from app.engine.data import load
    from preprocessing.pipeline import preprocess
    from tests.conftest import BUNDLED

    out = preprocess(BUNDLED, tmp_path / "g", turns=False, landmarks=0, quiet=True, basemap=False)
    engine = Engine(load(out))
    truth = drive(engine, 7)
    trace = make_trace(truth, 10, 5.0, np.random.default_rng(7))
    answer = engine.match(request(trace, 5.0))
    assert len(answer.matchings) == 1
    assert mismatch(trace.truth, [answer.matchings[0].route.coordinates]) < 0.06
    phantoms = [leg.source for leg in answer.matchings[0].route.legs] + [answer.matchings[0].route.legs[-1].target]
    ref = engine.router.query().routes(phantoms, RouteOptions(continue_straight=False)).best
    assert [leg.weight for leg in answer.matchings[0].route.legs] == [leg.weight for leg in ref.legs]


# -- OSRM's rules -----------------------------------------------------------------------------------------------------


def test_gaps_split_or_ignore(engine: Engine) -> None:
    """A pause in the timestamps of more than 10 median sample times splits the trace (`gaps=split`); with
    `gaps=ignore` it stays one matching."""
    truth = drive(engine, 12)
    trace = make_trace(truth, 10, 0.0, np.random.default_rng(1))
    half = len(trace.timestamps) // 2
    trace.timestamps[half:] = [t + 600 for t in trace.timestamps[half:]]
    split = engine.match(request(trace, None))
    assert len(split.matchings) == 2
    assert {tp.matching for tp in split.tracepoints if tp is not None} == {0, 1}
    assert [tp.waypoint for tp in split.tracepoints[half:] if tp is not None][0] == 0
    ignored = engine.match(request(trace, None, split_gaps=False))
    assert len(ignored.matchings) == 1


def test_tidy_thins_crowded_points(engine: Engine) -> None:
    """`tidy`: points closer than 15 m (and 5 s) to the last kept one get null tracepoints; first and last stay."""
    truth = drive(engine, 13)
    trace = make_trace(truth, 1, 0.0, np.random.default_rng(2))
    answer = engine.match(request(trace, None, tidy=True))
    tps = answer.tracepoints
    assert tps[0] is not None and tps[-1] is not None
    assert 0 < sum(tp is None for tp in tps) < len(tps) - 2
    kept = [i for i, tp in enumerate(tps) if tp is not None]
    assert all(b - a >= 5 for a, b in zip(kept[:-2], kept[1:-1], strict=True))


def test_outlier_has_a_null_tracepoint(engine: Engine) -> None:
    """A point with no road within 3 standard deviations is left out; its neighbours are matched."""
    truth = drive(engine, 14)
    trace = make_trace(truth, 10, 0.0, np.random.default_rng(3))
    k = len(trace.points) // 2
    trace.points[k] = SEA
    answer = engine.match(request(trace, 3.0))
    assert answer.tracepoints[k] is None
    assert answer.tracepoints[k - 1] is not None and answer.tracepoints[k + 1] is not None
    assert len(answer.matchings) == 1


def test_waypoints_merge_legs(engine: Engine) -> None:
    """`waypoints`: one leg between each pair of given points, their tracepoints numbered 0.., the others None."""
    truth = drive(engine, 15)
    trace = make_trace(truth, 10, 0.0, np.random.default_rng(4))
    n = len(trace.points)
    wps = [0, n // 2, n - 1]
    answer = engine.match(request(trace, None, waypoints=wps))
    (m,) = answer.matchings
    assert m.legs_at == [0, n // 2, n - 1]
    assert [answer.tracepoints[i].waypoint for i in wps] == [0, 1, 2]
    assert all(answer.tracepoints[i].waypoint is None for i in range(n) if i not in wps)


def test_errors(engine: Engine) -> None:
    truth = drive(engine, 16)
    trace = make_trace(truth, 10, 0.0, np.random.default_rng(5))
    pts = [(float(x), float(y)) for x, y in trace.points]

    def code(req: MatchRequest) -> str:
        with pytest.raises(EngineError) as info:
            engine.match(req)
        return info.value.code

    assert code(MatchRequest(pts * 30)) == "TooBig"
    assert code(MatchRequest(pts, radiuses=[60.0] * len(pts))) == "TooBig"
    assert code(MatchRequest(pts, timestamps=list(range(len(pts), 0, -1)))) == "InvalidValue"
    assert code(MatchRequest(pts, waypoints=[1, len(pts) - 1])) == "InvalidValue"
    assert code(MatchRequest([SEA, (SEA[0] + 0.001, SEA[1])])) == "NoSegment"
    # the same second twice: OSRM allows no detour at all (the step's time x the top speed), so no transition
    assert code(MatchRequest(pts[:3], timestamps=[5, 5, 5])) == "NoMatch"


# -- the pieces -------------------------------------------------------------------------------------------------------


def test_tidy_trace_as_osrm() -> None:
    """OSRM's `tidy`: keep once 15 m (and 5 s) accumulate; a left-out waypoint hands over to the last kept point."""
    step = 0.00005  # about 5.6 m of latitude
    coords = [(7.42, 43.73 + i * step) for i in range(10)]
    t = tidy_trace(coords, None, None, True)
    assert t.kept == [0, 3, 6, 9] and t.removed == [False, True, True, False, True, True, False, True, True, False]
    assert t.waypoints is None
    timed = tidy_trace(coords, list(range(0, 20, 2)), None, True)
    assert timed.kept == [0, 3, 6, 9]
    slow = tidy_trace(coords, list(range(10)), None, True)  # 15 m comes before 5 s
    assert slow.kept == [0, 5, 9]
    wps = tidy_trace(coords, None, [0, 4, 9], True)
    assert wps.waypoints == [0, 1, 3]  # 4 was left out: 3 (kept index 1) stands in for it
    assert tidy_trace(coords, None, None, False).kept == list(range(10))


def test_thin_keeps_ends_jumps_and_waypoints() -> None:
    lat = 43.73 + np.array([0, 1, 2, 3, 40, 41, 42, 80]) * 1e-5  # metres apart: 1.1 each, then a 41 m jump
    lon = np.full(len(lat), 7.42)
    sigma = np.full(len(lat), 2.5)  # thinning at 10 m, a jump at 20 m
    keep = np.zeros(len(lat), dtype=bool)
    assert thin(lon, lat, sigma, keep).tolist() == [0, 3, 4, 6, 7]
    keep[1] = True
    assert thin(lon, lat, sigma, keep).tolist() == [0, 1, 3, 4, 6, 7]


def test_pauses() -> None:
    ts = [0, 5, 10, 15, 20, 100, 105, 110]
    assert pauses(ts, True, len(ts)).tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    assert pauses(ts, False, len(ts)).tolist() == [0] * len(ts)
    assert pauses(None, True, 3).tolist() == [0, 0, 0]


def test_uturn_allowed() -> None:
    lon = np.array([7.420, 7.421, 7.4201, 7.421, 7.422])
    lat = np.full(5, 43.73)
    assert uturn_allowed(lon, lat).tolist() == [False, True, True, False, False]


def test_confidence_as_osrm() -> None:
    """OSRM's classifier: about 0.98 for a matched length equal to the trace's, low for a detour of 50 %."""
    assert confidence(1000.0, 1000.0) == pytest.approx(0.9803, abs=1e-3)
    assert confidence(1000.0, 1500.0) < 0.3
    assert confidence(0.0, 10.0) == 0.0
