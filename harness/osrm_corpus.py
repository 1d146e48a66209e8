"""The OSRM oracle: one corpus of requests over every option of every service, sent to starroute and osrm-routed.

    python harness/osrm_corpus.py [GRAPH_DIR] [--extract PBF] [--osrm-dir DIR] [--verbose]

By default it builds nothing: GRAPH_DIR is a starroute graph of the bundled `data/monaco.osm.pbf` (the corpus's
coordinates are Monaco's) and osrm-routed runs on the same extract (`harness/osrm_peer.py`). Each request is compared
on HTTP status, OSRM `code`, the JSON key structure (first element of every list) and, where both answer Ok,
distances and durations (`close`: within 10 % or 20 m / 5 s, the profiles and snapping being different programs).
`DOCUMENTED` lists the known differences with their reasons; `tests/osrm/test_osrm_oracle.py` runs the corpus and fails
on any difference not listed there. The summary line counts agreeing requests. Loopback only.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import httpx  # noqa: E402

A, B, C, D, E = "7.4197,43.7311", "7.4246,43.7384", "7.4200,43.7350", "7.4290,43.7400", "7.4160,43.7330"
AB, ABC, ABCDE = f"{A};{B}", f"{A};{B};{C}", f"{A};{B};{C};{D};{E}"
R, N, T, M, P = (
    "/route/v1/driving/",
    "/nearest/v1/driving/",
    "/table/v1/driving/",
    "/match/v1/driving/",
    "/trip/v1/driving/",
)
# a trace along Boulevard Albert 1er / the port, a point every ~60 m
TRACE = "7.42195,43.73447;7.42259,43.73488;7.42318,43.73531;7.42370,43.73580;7.42410,43.73633"
STAMPS = "1700000000;1700000010;1700000020;1700000030;1700000040"


def corpus() -> list[str]:
    """Every request: the services' options one at a time and in common combinations, then malformed ones."""
    route = [
        "",
        "?steps=true",
        "?steps=false",
        "?geometries=polyline",
        "?geometries=polyline6",
        "?geometries=geojson",
        "?overview=simplified",
        "?overview=full",
        "?overview=false",
        "?overview=by_legs",
        "?annotations=true",
        "?annotations=false",
        "?annotations=nodes",
        "?annotations=distance",
        "?annotations=duration",
        "?annotations=speed",
        "?annotations=weight",
        "?annotations=datasources",
        "?annotations=duration,distance,speed",
        "?alternatives=true",
        "?alternatives=false",
        "?alternatives=2",
        "?continue_straight=true",
        "?continue_straight=false",
        "?continue_straight=default",
        "?radiuses=100;100",
        "?radiuses=unlimited;200",
        "?radiuses=-1;-1",
        "?radiuses=;",
        "?bearings=0,180;",
        "?bearings=90,90;270,90",
        "?generate_hints=false",
        "?skip_waypoints=true",
        "?approaches=curb;curb",
        "?approaches=opposite;unrestricted",
        "?approaches=;",
        "?exclude=motorway",
        "?exclude=toll",
        "?exclude=ferry",
        "?snapping=any",
        "?snapping=default",
        "?steps=true&annotations=true&overview=full&geometries=geojson",
        ".json",
        ".json?steps=true",
    ]
    reqs = [R + AB + q for q in route]
    reqs += [R + ABC + q for q in ("", "?waypoints=0;2", "?waypoints=0;1;2", "?steps=true&overview=by_legs",
                                   "?continue_straight=false", "?annotations=nodes&waypoints=0;2")]  # fmt: skip
    reqs += [R + "polyline(kf|iGcdhl@sl@s])", R + "polyline6(whclrAgrzcMggMgqH)"]  # A;B encoded
    nearest = ["", "?number=1", "?number=3", "?radiuses=50", "?bearings=0,180", "?exclude=motorway",
               "?generate_hints=false", ".json?number=2"]  # fmt: skip
    reqs += [N + A + q for q in nearest] + [N + AB, N + AB + "?number=2"]
    table = ["", "?sources=0", "?destinations=1", "?sources=0;1&destinations=2", "?sources=all&destinations=all",
             "?annotations=duration", "?annotations=distance", "?annotations=duration,distance",
             "?fallback_speed=10", "?fallback_speed=10&fallback_coordinate=snapped", "?scale_factor=2",
             "?exclude=toll", "?radiuses=100;100;100", "?approaches=curb;;", "?generate_hints=false"]  # fmt: skip
    reqs += [T + ABC + q for q in table]
    match = ["", "?timestamps=" + STAMPS, "?radiuses=10;10;10;10;10", "?gaps=split", "?gaps=ignore", "?tidy=true",
             "?steps=true", "?annotations=true", "?overview=full&geometries=geojson", "?waypoints=0;4",
             "?generate_hints=false"]  # fmt: skip
    reqs += [M + TRACE + q for q in match]
    trip = ["", "?roundtrip=true", "?roundtrip=false&source=first&destination=last", "?source=first",
            "?destination=last", "?roundtrip=false&source=any&destination=any", "?steps=true",
            "?annotations=true", "?overview=full&geometries=geojson", "?generate_hints=false"]  # fmt: skip
    reqs += [P + ABCDE + q for q in trip]
    reqs += ["/tile/v1/driving/tile(17059,11948,15).mvt", "/tile/v1/driving/tile(1066,746,11).mvt"]
    bad = [
        "/", "/route", "/route/v1/driving", "/route/v1/driving/", "/foo/v1/driving/" + AB, "/route/v2/driving/" + AB,
        "/route/vx/driving/" + AB, R + "abc,1;2,3", R + "nan,43.7;7.42,43.73", R + "1e400,43.7;7.42,43.73",
        R + "200,43.7;7.42,43.73", R + "7.4,95;7.42,43.73", R + A, R + AB + ";", R + AB + ".xml",
        R + AB + "?steps=yes", R + AB + "?foo=1", R + AB + "?radiuses=5", R + AB + "?radiuses=0.001;0.001",
        R + AB + "?radiuses=-2;-1", R + AB + "?alternatives=5", R + ABC + "?waypoints=1;2", R + ABC + "?waypoints=0;5",
        R + AB + "?bearings=400,10;", R + AB + "?approaches=left;", R + AB + "?exclude=boats", R + AB + "?&",
        R + ";".join([A] * 501), N + A + "?number=0", N + A + "?number=101", T + A, T + AB + "?sources=5",
        T + AB + "?annotations=speed", T + AB + "?fallback_speed=-1", T + ";".join([A] * 101),
        M + A, M + TRACE + "?timestamps=1;2", M + TRACE + "?gaps=maybe", P + A + "?roundtrip=maybe",
        R + AB + "?", R + AB + ".flatbuffers",
    ]  # fmt: skip
    return reqs + bad


# known differences: request -> the reason. Everything else must agree.
DOCUMENTED: dict[str, str] = {
    R + AB + "?alternatives=true": "starroute finds an alternative (plateaus, OSRM's quality rules) where osrm-routed "
    "finds none: on 98 % of Porto pairs against OSRM's 53 % (bench/options.py)",
    R + AB + "?alternatives=2": "the same: starroute's alternatives where osrm-routed has none",
    "/": "the map page lives at /, the start page at /start (osrm-routed: InvalidUrl)",
    "/route": "the native GeoJSON route endpoint lives at /route (from/to missing: InvalidQuery)",
    R + AB + "?": "an empty query string after '?' reaches an ASGI server as no query string at all: answered as "
    "the URL without '?' (osrm-routed: InvalidQuery)",
    R + AB + ".flatbuffers": "the FlatBuffers output format is not implemented (NotImplemented; osrm-routed answers "
    "a FlatBuffers body)",
}


def _shape(x: Any, depth: int = 0) -> Any:
    """Key structure of a response (first element of lists), for comparing shapes."""
    if depth > 6:
        return "..."
    if isinstance(x, dict):
        return {k: _shape(v, depth + 1) for k, v in sorted(x.items())}
    if isinstance(x, list):
        return [_shape(x[0], depth + 1)] if x else []
    return type(x).__name__ if not isinstance(x, (int, float)) or isinstance(x, bool) else "number"


def _diff(a: Any, b: Any, path: str = "") -> list[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: only in starroute" for k in sorted(a.keys() - b.keys())]
        out += [f"{path}.{k}: only in osrm-routed" for k in sorted(b.keys() - a.keys())]
        for k in sorted(a.keys() & b.keys()):
            out += _diff(a[k], b[k], f"{path}.{k}")
        return out
    if isinstance(a, list) and isinstance(b, list):
        return _diff(a[0], b[0], path + "[0]") if a and b else []
    return [] if a == b else [f"{path}: {a} vs {b}"]


def close(a: float, b: float, rel: float = 0.10, absolute: float = 5.0) -> bool:
    """Figures of two routing engines agreeing within reason (different profiles' arithmetic, different snapping)."""
    return abs(a - b) <= max(rel * max(abs(a), abs(b)), absolute)


def _figures(body: dict) -> Iterator[tuple[str, float]]:
    for key in ("routes", "trips", "matchings"):
        for i, r in enumerate(body.get(key) or []):
            yield f"{key}[{i}].distance", float(r["distance"])
            yield f"{key}[{i}].duration", float(r["duration"])
    for key in ("durations", "distances"):
        for i, row in enumerate(body.get(key) or []):
            for j, v in enumerate(row):
                if v is not None:
                    yield f"{key}[{i}][{j}]", float(v)


def compare(ours: httpx.Response, theirs: httpx.Response) -> list[str]:
    """The differences between two answers to one request (empty: they agree)."""
    problems = []
    j1 = ours.json() if ours.headers.get("content-type", "").startswith("application/json") else {}
    j2 = theirs.json() if theirs.headers.get("content-type", "").startswith("application/json") else {}
    if ours.status_code != theirs.status_code:
        problems.append(f"status {ours.status_code} vs {theirs.status_code}")
    if j1.get("code") != j2.get("code"):
        problems.append(f"code {j1.get('code')} vs {j2.get('code')}")
    if ours.status_code == theirs.status_code == 200 and j1 and j2:
        problems += _diff(_shape(j1), _shape(j2))
        f1, f2 = dict(_figures(j1)), dict(_figures(j2))
        for k in sorted(f1.keys() & f2.keys()):
            if not close(f1[k], f2[k], absolute=20.0 if "distance" in k else 5.0):
                problems.append(f"{k}: {f1[k]:g} vs {f2[k]:g}")
        if f1.keys() != f2.keys():
            problems.append(f"figures {sorted(f1.keys() ^ f2.keys())[:4]} in one answer only")
    return problems


def run(ours: str, theirs: str, verbose: bool = False) -> dict[str, list[str]]:
    """Every corpus request against both servers: request -> its differences."""
    out: dict[str, list[str]] = {}
    with httpx.Client(timeout=60.0) as c:
        for url in corpus():
            out[url] = compare(c.get(ours + url), c.get(theirs + url))
            if verbose or out[url]:
                print(f"{'ok  ' if not out[url] else 'DIFF'} {url[:110]}")
                for p in out[url]:
                    print(f"       {p}")
    return out


def main() -> None:
    from harness.osrm_peer import ensure_osrm, prepare_osrm
    from harness.servers import start_osrm, start_starroute, stop

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path, nargs="?", help="a starroute graph of the extract (default: build one)")
    ap.add_argument("--extract", type=Path, default=HERE.parent / "data" / "monaco.osm.pbf")
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args()
    bin_dir = ensure_osrm(args.osrm_dir)
    if bin_dir is None:
        sys.exit("osrm-bindings cannot be installed here")
    graph = args.graph
    if graph is None:
        from preprocessing.pipeline import preprocess

        graph = preprocess(args.extract, Path(tempfile.mkdtemp()) / "graph", profile="car", quiet=True)
    po, bo = start_osrm(bin_dir, prepare_osrm(bin_dir, args.extract, args.osrm_dir))
    ps, bs = start_starroute(graph)
    try:
        result = run(bs, bo, args.verbose)
    finally:
        stop(ps)
        stop(po)
    agree = sum(not v for v in result.values())
    known = sum(bool(v) and url in DOCUMENTED for url, v in result.items())
    print(f"\n{agree} of {len(result)} requests answered as osrm-routed answers them; {known} documented differences,")
    print(f"{len(result) - agree - known} others")


if __name__ == "__main__":
    main()
