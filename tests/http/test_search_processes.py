"""Long searches in search processes (`app.api.search_processes`): the same answers as in the worker, on every
algorithm, traces and isochrones; a new metric followed after a reload; the time limit; a child that dies replaced
without a failed request; errors keeping their OSRM code across the process boundary."""

from __future__ import annotations

import asyncio
import os
import pickle
import shutil
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from app.api import search_processes
from app.api.service import Service
from app.engine.errors import NoRoute, Timeout
from app.engine.facade import IsochroneRequest, RouteRequest, Waypoints
from app.settings import Settings
from app.warmup import warm_search_process
from floor.format.graph import load_graph
from preprocessing.customize import customize
from preprocessing.metric import arc_segments

A, B = (7.4197, 43.7311), (7.4246, 43.7384)


def _child_pid(service: Service) -> int:
    assert service.processes is not None
    return service.processes.submit(search_processes.ready, service.generation)[1].result(timeout=120)


@pytest.fixture(scope="module")
def service(bundled_graph: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """A service on a copy of the bundled Monaco (its metric changes below) with one search process, started."""
    g = tmp_path_factory.mktemp("procs") / "monaco"
    shutil.copytree(bundled_graph, g)
    svc = Service(Settings(graph_dir=g, search_processes=1))
    svc.child_warmup = warm_search_process  # as the app's lifespan sets it
    svc.open()
    svc.open_pools()
    assert _child_pid(svc) != os.getpid()
    yield svc
    svc.close(wait=True)


def _summary(answer) -> list[tuple]:  # type: ignore[no-untyped-def]
    return [(r.weight, r.duration_s, r.distance_m, np.asarray(r.coordinates).tobytes()) for r in answer.result.routes]


def test_every_long_algorithm_answers_as_in_the_worker(service: Service) -> None:
    """Each algorithm but inline CH, CH with a trace, and areas to avoid: the child's routes and traces equal the
    worker's own engine's, byte for byte in the coordinates."""
    from app.engine.features.areas import parse_compact

    engine = service.opened
    long = [a for a in engine.algorithms if a != "ch"]
    assert {"dijkstra", "alt"} <= set(long)
    area = parse_compact("7.4215,43.7330;7.4225,43.7330;7.4225,43.7340;7.4215,43.7340")
    requests = [RouteRequest(Waypoints([A, B]), algorithm=a) for a in long]
    requests += [RouteRequest(Waypoints([A, B]), algorithm="ch", trace=True)]
    requests += [RouteRequest(Waypoints([A, B]), avoid=area), RouteRequest(Waypoints([B, A]), algorithm="astar")]
    for req in requests:
        got = asyncio.run(service.route(req))
        want = engine.route(req)
        assert _summary(got) == _summary(want), req.algorithm
        assert got.phantoms == want.phantoms
        if req.trace:
            assert got.traces and pickle.dumps(got.traces) == pickle.dumps(want.traces)


def test_custom_models_answer_as_in_the_worker(service: Service) -> None:
    """A custom model's long searches (and its isochrones) in the child, which builds the model's metric for its own
    engine: the same routes as the worker's; `cached` false on the request that built it."""
    engine = service.opened
    rules = [{"if": "road_class == RESIDENTIAL", "multiply_by": 0.3}, {"else": "", "multiply_by": 0.8}]
    model = engine.parse_model({"speed": rules})
    for k, algorithm in enumerate(("dijkstra", "alt", "dijkstra")):
        req = RouteRequest(Waypoints([A, B]), algorithm=algorithm, custom_model=model)
        got = asyncio.run(service.route(req))
        assert _summary(got) == _summary(engine.route(req)), algorithm
        assert got.custom_model is not None and got.custom_model["cached"] is (k > 0)
    req = RouteRequest(Waypoints([A, B]), algorithm="dijkstra")
    assert _summary(asyncio.run(service.route(req)))[0][0] != _summary(got)[0][0]  # the model changed the weight
    iso = IsochroneRequest(Waypoints([A]), [180], custom_model=model)
    a, b = asyncio.run(service.isochrone(iso)), engine.isochrone(iso, *engine.resolve_isochrone(iso))
    assert [c.geometry for c in a.contours] == [c.geometry for c in b.contours]


def test_map_matching_answers_as_in_the_worker(service: Service) -> None:
    from app.engine.facade import MatchRequest

    trace = [(7.4197, 43.7311), (7.4205, 43.7320), (7.4216, 43.7333), (7.4228, 43.7350), (7.4246, 43.7384)]
    req = MatchRequest(trace, timestamps=[0, 30, 60, 90, 120])
    got, want = asyncio.run(service.match(req)), service.opened.match(req)
    assert [m.confidence for m in got.matchings] == [m.confidence for m in want.matchings]
    assert [np.asarray(m.route.coordinates).tobytes() for m in got.matchings] == [
        np.asarray(m.route.coordinates).tobytes() for m in want.matchings
    ]
    assert got.matchings and pickle.dumps(got.tracepoints) == pickle.dumps(want.tracepoints)


def test_map_tiles_are_drawn_as_in_the_worker(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """The map's road and background tiles and OSRM's debug tile, cut and encoded in the child: the same bytes."""
    import math

    from app.api.basemap import bg_tile_bytes
    from app.api.osrm.tile import draw as draw_osrm
    from app.api.osrm.tile import encode
    from app.api.tiles import tile_bytes

    _child_pid(service)  # warm: no fallback to the worker's threads
    engine = service.opened
    z = 15
    x = int((A[0] + 180) / 360 * 2**z)
    y = int((1 - math.asinh(math.tan(math.radians(A[1]))) / math.pi) / 2 * 2**z)
    # the worker would draw a tile itself in its search pool (`run_slow`): not here, a search process draws them
    monkeypatch.setattr(service, "run_slow", lambda *_a, **_k: pytest.fail("drawn in the worker"))
    for draw in (tile_bytes, bg_tile_bytes, draw_osrm):
        got = asyncio.run(service.tile(draw, z, x, y))
        assert len(got) > 100 and got == draw(engine, z, x, y), draw
    assert draw_osrm(engine, z, x, y) == encode(engine.debug_tile(z, x, y))


def test_isochrones_answer_as_in_the_worker(service: Service) -> None:
    req = IsochroneRequest(Waypoints([A]), [120, 300])
    got = asyncio.run(service.isochrone(req))
    engine = service.opened
    want = engine.isochrone(req, *engine.resolve_isochrone(req))
    assert [(c.value, c.pieces, c.geometry) for c in got.contours] == [
        (c.value, c.pieces, c.geometry) for c in want.contours
    ]


def test_vroom_solves_in_the_child_as_in_the_worker(service: Service, monkeypatch: pytest.MonkeyPatch) -> None:
    """`/optimize`'s solver (it holds the GIL) runs in the child by name (`search_processes.call`): VROOM's answer,
    its clocks aside, is the worker's."""
    from app.api.vroom.solve import Job, dumps, solve

    body = {
        "vehicles": [{"id": 1, "start_index": 0, "end_index": 0, "capacity": [2]}],
        "jobs": [{"id": k, "location_index": k, "delivery": [1]} for k in (1, 2, 3)],
        # one best tour: 0 -> 1 -> 2 -> 0 (30 s); job 3 does not fit
        "matrices": {"car": {"durations": [[0, 10, 100, 100], [100, 0, 10, 100], [10, 100, 0, 100], [100] * 4]}},
    }
    text = dumps(body)
    assert text is not None
    job = Job(text, 5, 1, 5.0, False)
    _child_pid(service)  # warm: no fallback to the worker's threads
    monkeypatch.setattr(service, "run_slow", lambda *_a, **_k: pytest.fail("solved in the worker"))
    code, got = asyncio.run(service.run_in_process(search_processes.call, (solve, job), lambda: solve(job)))
    want_code, want = solve(job)
    assert code == want_code == 0 and got["summary"]["cost"] == 30 and [u["id"] for u in got["unassigned"]] == [3]
    for answer in (got, want):
        answer["summary"].pop("computing_times")
    assert got == want
    bad = Job(b'{"vehicles": []}', 5, 1, 5.0, False)
    assert asyncio.run(service.run_in_process(search_processes.call, (solve, bad), lambda: solve(bad))) == (
        2,
        "No vehicle defined.",
    )


def test_the_child_follows_a_reload_to_the_new_metric(service: Service) -> None:
    """After a new metric is written and the worker reloads, the child answers on it (not on the metric it warmed)."""
    req = RouteRequest(Waypoints([A, B]), algorithm="dijkstra")
    before = _summary(asyncio.run(service.route(req)))
    g = service.settings.graph_dir
    arrays = dict(load_graph(g).arrays)
    _, a, b, _ = arc_segments(arrays)
    osm = np.asarray(arrays["geom_osm_id"])
    body = "".join(f"{osm[x]},{osm[y]},7\n" for x, y in zip(a[::3], b[::3], strict=True)).encode()
    customize(g, [("slow", body)])
    service.reload()
    got = _summary(asyncio.run(service.route(req)))
    assert got == _summary(service.opened.route(req)) and got != before


def test_a_search_past_the_time_limit_is_refused_and_its_process_replaced(bundled_graph: Path) -> None:
    """A search still running at the request time limit answers `Timeout` and its process is killed and replaced
    (a thread could not be stopped); the next request is answered by the new one. One that waited in the queue past
    the limit answers `Timeout` too, and is never started: the search under way goes on."""
    svc = Service(Settings(graph_dir=bundled_graph, search_processes=1, request_time_limit_s=0.05))
    svc.open()
    svc.open_pools()
    try:
        first = _child_pid(svc)
        assert svc.processes is not None
        _, blocker = svc.processes.submit(_sleep, svc.generation, 0.5)  # the child busy for 0.5 s (no request limit)
        with pytest.raises(Timeout, match="time limit"):  # queued past the limit: refused, never started, none killed
            asyncio.run(svc.run_in_process(_sleep, 30.0, lambda: pytest.fail("ran in the thread pool")))
        assert blocker.result(timeout=60) is None and _child_pid(svc) == first
        with pytest.raises(Timeout, match="time limit"):  # a search under way that would take 30 s: its child killed
            asyncio.run(svc.run_in_process(_sleep, 30.0, lambda: pytest.fail("ran in the thread pool")))
        deadline = time.monotonic() + 10  # killed (gone, or a zombie until its pool reaps it)
        while os.path.exists(f"/proc/{first}") and _state(first) != "Z" and time.monotonic() < deadline:
            time.sleep(0.02)
        assert not os.path.exists(f"/proc/{first}") or _state(first) == "Z"
        assert _child_pid(svc) != first
        svc.settings = svc.settings.model_copy(update={"request_time_limit_s": 60.0})
        req = RouteRequest(Waypoints([A, B]), algorithm="dijkstra")
        assert _summary(asyncio.run(svc.route(req))) == _summary(svc.opened.route(req))
    finally:
        svc.close(wait=True)


def _sleep(generation: int, seconds: float) -> None:  # a task for a search process: a search that takes long
    time.sleep(seconds)


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return "gone"


def test_a_child_that_dies_is_replaced_and_the_request_answered(service: Service) -> None:
    old = _child_pid(service)
    os.kill(old, signal.SIGKILL)
    time.sleep(0.5)
    req = RouteRequest(Waypoints([A, B]), algorithm="dijkstra")
    got = asyncio.run(service.route(req))  # answered by the search threads while the processes start afresh
    assert _summary(got) == _summary(service.opened.route(req))
    assert _child_pid(service) != old
    assert _summary(asyncio.run(service.route(req))) == _summary(got)


def test_engine_errors_keep_their_code_across_processes() -> None:
    err = pickle.loads(pickle.dumps(NoRoute("Impossible route between points", "NoSegment")))
    assert type(err) is NoRoute and err.code == "NoSegment" and err.message == "Impossible route between points"


def _children(pid: int) -> list[int]:
    with open(f"/proc/{pid}/task/{pid}/children") as f:
        return [int(x) for x in f.read().split()]


@pytest.mark.skipif(not os.path.exists("/proc/self/task"), reason="reads the process tree from Linux's /proc")
@pytest.mark.parametrize("workers", [1, 2])
def test_a_served_worker_forks_its_search_process_at_idle_priority(bundled_graph: Path, workers: int) -> None:
    """Each worker forks its search process (forked from the warm supervisor, a worker has no other thread; a lone
    worker forks once its background warm-up has ended), which runs under SCHED_IDLE and answers the long searches;
    stopping the server leaves none behind."""
    import httpx

    from harness import api_server

    env = {"STARROUTE_SEARCH_PROCESSES": "1"}
    proc, base = api_server.start(bundled_graph, "--workers", str(workers), env=env)
    searchers: list[int] = []
    try:
        q = {"from": f"{A[0]},{A[1]}", "to": f"{B[0]},{B[1]}"}
        with httpx.Client(base_url=base, timeout=60) as c:
            ch = c.get("/route", params=q).json()["properties"]
            for algorithm in ("dijkstra", "alt"):
                got = c.get("/route", params={**q, "algorithm": algorithm})
                assert got.status_code == 200, got.text
                assert got.json()["properties"]["duration_s"] == ch["duration_s"]
        served = _children(proc.pid) if workers > 1 else [proc.pid]
        assert len(served) == workers
        held = None
        if workers == 1:  # a connection open while the lone worker forks (the others fork before they serve)
            held = socket.create_connection(("127.0.0.1", int(base.rsplit(":", 1)[1])))
            held.sendall(b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n")
        deadline = time.monotonic() + 60
        while len(searchers) < workers and time.monotonic() < deadline:
            time.sleep(0.1)
            searchers = [k for w in served for k in _children(w)]
        assert len(searchers) == workers, searchers
        for k in searchers:
            with open(f"/proc/{k}/cmdline", "rb") as f:
                assert b"spawn_main" not in f.read()  # forked, not started afresh
            # the child puts itself under SCHED_IDLE first thing in its initializer: a few milliseconds after its fork
            policy, settle = -1, time.monotonic() + 10
            while policy != os.SCHED_IDLE and time.monotonic() < settle:
                with open(f"/proc/{k}/stat") as f:
                    policy = int(f.read().rsplit(")", 1)[1].split()[38])  # field 41: the scheduling policy
                time.sleep(0 if policy == os.SCHED_IDLE else 0.05)
            assert policy == os.SCHED_IDLE
        with httpx.Client(base_url=base, timeout=60) as c:  # answered by the search processes now
            got = c.get("/route", params={**q, "algorithm": "dijkstra"})
            assert got.json()["properties"]["duration_s"] == ch["duration_s"]
            shown = c.get("/health").json()["search_processes"]
            assert shown["size"] == shown["started"] == 1 and shown["forked"] is True
            assert len(shown["pids"]) == 1 and shown["pids"][0] in searchers
        for k in searchers:  # no socket copied into a child (its copy would keep a closed connection open)
            links = [os.readlink(f"/proc/{k}/fd/{fd}") for fd in os.listdir(f"/proc/{k}/fd")]
            assert not [x for x in links if x.startswith("socket:")], links
        if held is not None:
            held.close()
    finally:
        api_server.stop(proc)
    deadline = time.monotonic() + 10
    while any(os.path.exists(f"/proc/{k}") for k in searchers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not [k for k in searchers if os.path.exists(f"/proc/{k}")]
