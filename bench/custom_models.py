"""Custom models per request: latency of a few typical models beside the default CH route, and the durations of a
speed-limiting model beside osrm-routed customized with the equivalent segment speed file.

    python bench/custom_models.py GRAPH_DIR [--extract PBF] [--big /tmp/scale/g1m7] [--routes 300] [--seed 1]

Latency (in process, `Engine.route` wall time: snapping, search, legs; one thread): per model, the first request's
time (the model's weights, its router and, on a graph small enough, the hierarchy's customization, which runs in the
background: the first requests are answered with ALT or bidirectional A*), then p50/p90 over `--routes` random
node-to-node routes once the hierarchy is customized (`ch-customized`), and without any hierarchy (`alt` when the
model only slows roads, `bidirectional-astar` when it speeds some up: what answers before the customization is
done, or on graphs too large to customize). `--big`: the same on a second graph.

OSRM: the model `limit_to 50` on every road, and for osrm-customize the equivalent speed file (every directed
segment of a road arc the model slows, at 50 km/h); osrm-extract (car.lua) + osrm-partition + osrm-customize, then
osrm-routed --algorithm mld. Durations over the same random routes: relative difference per route (median, p90,
share within 1 %), and the same with no model and no file for reference.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import numpy as np  # noqa: E402

from bench.customize import compare, durations, timed  # noqa: E402
from harness.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from harness.servers import start_osrm, stop  # noqa: E402

LIMIT_50 = {"speed": [{"if": "true", "limit_to": "50"}]}


def models(graph: Any) -> dict[str, dict[str, Any]]:
    """The typical models (those reading values the graph does not store are left out by the caller)."""
    from floor.format.units import COORD_SCALE

    lon, lat = np.asarray(graph.node_lon) / COORD_SCALE, np.asarray(graph.node_lat) / COORD_SCALE
    cx, cy = float(np.median(lon)), float(np.median(lat))
    d = 0.01
    ring = [[cx - d, cy - d], [cx + d, cy - d], [cx + d, cy + d], [cx - d, cy + d], [cx - d, cy - d]]
    feature = {
        "type": "Feature",
        "id": "centre",
        "properties": {},
        "geometry": {"type": "Polygon", "coordinates": [ring]},
    }
    centre = {"type": "FeatureCollection", "features": [feature]}
    return {
        "motorways at 0.8": {"speed": [{"if": "road_class == MOTORWAY", "multiply_by": "0.8"}]},
        "no motorways": {"priority": [{"if": "road_class == MOTORWAY", "multiply_by": "0"}]},
        "limit 50 km/h": LIMIT_50,
        "truck 4 m, 12 t": {
            "priority": [{"if": "max_height < 4 || max_weight < 12", "multiply_by": "0"}],
            "speed": [{"if": "true", "limit_to": "90"}],
        },
        "no toll, di 30": {"priority": [{"if": "toll == ALL", "multiply_by": "0"}], "distance_influence": 30},
        "slow city centre": {"speed": [{"if": "in_centre", "multiply_by": "0.5"}], "areas": centre},
        "residential x1.3": {"speed": [{"if": "road_class == RESIDENTIAL", "multiply_by": "1.3"}]},
    }


def pairs_of(graph: Any, k: int, seed: int) -> list[tuple[float, float, float, float]]:
    from floor.format.units import COORD_SCALE

    rng = np.random.default_rng(seed)
    main = np.flatnonzero(np.asarray(graph.node_component) == 0)
    lon, lat = np.asarray(graph.node_lon) / COORD_SCALE, np.asarray(graph.node_lat) / COORD_SCALE
    pick = rng.choice(main, (k, 2))
    return [(float(lon[i]), float(lat[i]), float(lon[j]), float(lat[j])) for i, j in pick]


def run_routes(engine: Any, pairs: list, model: Any) -> tuple[list[float], list[float | None], str]:
    """Wall ms per route, the durations (None: no route), the method that answered."""
    from app.engine.errors import NoRoute, NoSegment
    from app.engine.facade import RouteRequest, Waypoints

    ms: list[float] = []
    out: list[float | None] = []
    method = "ch"
    for x1, y1, x2, y2 in pairs:
        req = RouteRequest(Waypoints(((x1, y1), (x2, y2))), custom_model=model)
        t0 = time.perf_counter()
        try:
            ans = engine.route(req)
            out.append(ans.best.duration_s)
            if ans.custom_model:
                method = ans.custom_model["method"]
        except (NoRoute, NoSegment):
            out.append(None)
        ms.append((time.perf_counter() - t0) * 1e3)
    return ms, out, method


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * (len(s) - 1)))]


def latency_table(path: Path, routes: int, seed: int) -> list[str]:
    from app.engine.data import load
    from app.engine.facade import Engine
    from floor.format.encoded_values import has_value

    graph = load(path)
    engine = Engine(graph)
    engine.warmup()
    pairs = pairs_of(graph, routes, seed)
    name = path.name
    ms, _, _ = run_routes(engine, pairs, None)
    rows = [f"| {name} | default | - | - | ch {pct(ms, 0.5):.2f} / {pct(ms, 0.9):.2f} | - |"]
    notes: list[str] = []
    plain = Engine(graph)  # no hierarchy for models: ALT or bidirectional A* only
    plain.models.cch_max_arcs = 0
    for label, raw in models(graph).items():
        model = engine.parse_model(raw)
        missing = [v for v in sorted(model.names) if not has_value(graph.arrays, v)]
        if missing:
            rows.append(f"| {name} | {label} | not stored: {', '.join(missing)} (re-run preprocess) | | | |")
            continue
        t0 = time.perf_counter()
        _, _, first_method = run_routes(engine, pairs[:1], model)  # builds the model's metric
        first = (time.perf_counter() - t0) * 1e3
        view = engine.models.wait(model)
        ms, got, method = run_routes(engine, pairs, model)
        build = view.seconds.get("customize", 0.0) * 1e3
        if label == "no motorways":  # a zero priority answers what the matching exclude answers
            notes.append(equivalence(engine, pairs, got, name, "road_class == MOTORWAY", "motorway"))
        run_routes(plain, pairs[:1], model)
        ms2, _, method2 = run_routes(plain, pairs, model)
        rows.append(
            f"| {name} | {label} | {first:.0f} ({first_method}) | {build:.0f} | {method} {pct(ms, 0.5):.2f} / "
            f"{pct(ms, 0.9):.2f} | {method2} {pct(ms2, 0.5):.2f} / {pct(ms2, 0.9):.2f} |"
        )
    if has_value(graph.arrays, "toll"):
        notes.append(equivalence(engine, pairs, None, name, "toll == ALL", "toll"))
    return rows + notes


def equivalence(engine: Any, pairs: list, got: list[float | None] | None, name: str, cond: str, ex: str) -> str:
    """How many routes a zero priority on `cond` answers exactly as `exclude=ex` (durations to the decisecond)."""
    from app.engine.errors import NoRoute, NoSegment
    from app.engine.facade import RouteRequest, Waypoints

    if got is None:
        model = engine.parse_model({"priority": [{"if": cond, "multiply_by": "0"}]})
        engine.models.wait(model)
        _, got, _ = run_routes(engine, pairs, model)
    same = 0
    for (x1, y1, x2, y2), d in zip(pairs, got, strict=True):
        try:
            want: float | None = engine.route(
                RouteRequest(Waypoints(((x1, y1), (x2, y2))), exclude=(ex,))
            ).best.duration_s
        except (NoRoute, NoSegment):
            want = None
        same += want == d
    return f"{name}: priority 0 on `{cond}` equal to exclude={ex} on {same} of {len(pairs)} routes"


def equivalent_speed_file(graph_dir: Path, out: Path) -> int:
    """Every directed segment of a road arc `limit_to 50` slows, at 50 km/h: OSRM's segment speed file of the model.
    Returns its line count."""
    from app.engine.data import load
    from app.engine.models.custom_model import parse_model
    from app.engine.models.model_metric import model_weights
    from preprocessing.metric import arc_segments

    g = load(graph_dir)
    w = model_weights(parse_model(LIMIT_50), g, lambda f: np.zeros(0, np.int32))
    slowed = w.road["arc_duration"] != np.asarray(g.arc_duration)
    arc, a, b, _ = arc_segments(dict(g.arrays))
    osm = np.asarray(g.geom_osm_id)
    keep = slowed[arc]
    keys = np.unique(np.stack([osm[a[keep]], osm[b[keep]]], axis=1), axis=0)
    out.write_text("".join(f"{f},{t},50\n" for f, t in keys))
    return len(keys)


def osrm_rows(graph_dir: Path, extract: Path, osrm_dir: Path, routes: int, seed: int) -> list[str]:
    from app.engine.data import load
    from app.engine.facade import Engine

    bin_dir = ensure_osrm(osrm_dir)
    if bin_dir is None:
        return ["osrm-bindings cannot be installed here: no OSRM comparison"]
    engine = Engine(load(graph_dir))
    engine.models.background = False
    pairs = pairs_of(engine.graph, routes, seed)
    model = engine.parse_model(LIMIT_50)
    _, s_plain, _ = run_routes(engine, pairs, None)
    _, s_model, method = run_routes(engine, pairs, model)
    with tempfile.TemporaryDirectory() as tmp_s:
        tmp = Path(tmp_s)
        speeds = tmp / "speeds.csv"
        n = equivalent_speed_file(graph_dir, speeds)
        base = prepare_osrm(bin_dir, extract, osrm_dir, algorithm="mld")
        results = {}
        for label, extra in (("plain", []), ("file", ["--segment-speed-file", str(speeds)])):
            work = tmp / f"osrm-{label}"
            shutil.copytree(base.parent, work)
            ds = work / base.name
            secs = timed([str(bin_dir / "osrm-customize"), str(ds), *extra], cwd=work)
            proc, url = start_osrm(bin_dir, ds, threads=2, algorithm="mld")
            try:
                results[label] = (durations(url, pairs)[0], secs)
            finally:
                stop(proc)
    o_plain, o_model = results["plain"][0], results["file"][0]
    return [
        f"speed file equivalent to `limit_to 50`: {n} directed segments; osrm-customize {results['file'][1]:.2f} s",
        f"durations, no model vs osrm (no file):            {compare(s_plain, o_plain)}",
        f"durations, limit_to 50 ({method}) vs osrm (the file): {compare(s_model, o_model)}",
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--extract", type=Path, help="the OSM extract the graph was built from (for the OSRM part)")
    ap.add_argument("--big", type=Path, default=Path("/tmp/scale/g1m7"), help="a second, larger graph (if present)")
    ap.add_argument("--routes", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    args = ap.parse_args()
    print(
        "| graph | model | first request ms (method) | customize ms | p50 / p90 ms | without hierarchy p50 / p90 ms |"
    )
    print("|---|---|---|---|---|---|")
    notes = []
    for path in (args.graph, args.big):
        if path is not None and (path / "manifest.json").exists():
            rows = latency_table(path, args.routes, args.seed)
            notes += [r for r in rows if not r.startswith("|")]
            for row in rows:
                if row.startswith("|"):
                    print(row, flush=True)
    for line in notes:
        print(line, flush=True)
    if args.extract is not None:
        print()
        for line in osrm_rows(args.graph, args.extract, args.osrm_dir, args.routes, args.seed):
            print(line, flush=True)


if __name__ == "__main__":
    main()
