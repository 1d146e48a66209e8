"""Travel modes beside osrm-routed: tiny drawn maps where a bicycle is pushed, a train or a ferry is taken, step by
step (mode, name, maneuver, distance to 0.1 m, duration to 0.1 s), and where a waypoint may snap.

    python -m harness.osrm_modes                 # every profile's maps
    python -m harness.osrm_modes --profile bike  # one profile's

Each map (`MAPS`) is drawn as the tests draw theirs (`harness/asciimap.py`: a letter is a node, 100 m a character),
preprocessed by both programs (starroute with its profile, OSRM with its own Lua profile of the same name,
testbot included), and the same requests (letter to letter, or a point part of the way along a road) go to both
servers with `steps=true`; a `nearest` request per map checks where a waypoint near a train or ferry lands. The
output says per request whether the steps agree and, where not, both step lists. Needs the `osrm-bindings` wheel
(`harness/osrm_peer.py`).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx

from harness.osrm_peer import LUA_PROFILES, URL_PROFILES, both_servers, ensure_osrm

LUA, URL_PROFILE = LUA_PROFILES, URL_PROFILES
Point = tuple[str, str, float]  # part `t` of the way from letter a to letter b


@dataclass(frozen=True)
class ModeMap:
    """A drawn map for one profile, the routes asked on it (letters or points) and the points asked `nearest`."""

    name: str
    profile: str
    drawing: str
    ways: list[tuple[str, dict[str, str]]]
    routes: list[tuple[str | Point, str | Point]]
    nearest: list[Point]


MAPS: list[ModeMap] = [
    ModeMap(
        "bike-push",
        "bike",
        """
        a b c d e f
                  g
        """,
        [
            ("ab", {"highway": "residential", "name": "Main Street"}),
            ("bc", {"highway": "footway", "name": "Main Street"}),  # the same name: the mode change is the step
            ("cd", {"highway": "residential", "name": "Main Street"}),
            ("de", {"highway": "steps"}),
            ("ef", {"highway": "residential", "name": "One Way", "oneway": "yes"}),
            ("fg", {"highway": "residential", "name": "One Way", "oneway": "-1"}),
        ],
        [("a", "g"), ("g", "a"), ("f", "a"), (("a", "b", 0.5), ("c", "d", 0.5)), (("f", "e", 0.3), "a")],
        [("b", "c", 0.5)],
    ),
    ModeMap(
        "bike-train-ferry",
        "bike",
        """
        a b   c d

        e f   g h
        """,
        [
            ("ab", {"highway": "residential", "name": "West Road"}),
            ("bc", {"railway": "train", "bicycle": "yes", "name": "Line 1"}),
            ("cd", {"highway": "residential", "name": "East Road"}),
            ("ef", {"highway": "cycleway"}),
            ("fg", {"route": "ferry", "name": "The Ferry", "duration": "00:05"}),
            ("gh", {"highway": "cycleway"}),
            ("ae", {"highway": "track"}),
        ],
        [("a", "d"), ("d", "a"), ("e", "h"), ("b", "g"), (("b", "c", 0.4), "h"), (("b", "c", 0.4), "d")],
        [("b", "c", 0.4), ("f", "g", 0.6)],
    ),
    ModeMap(
        "car-ferry-train",
        "car",
        """
        a b   c d

        e f   g h
        """,
        [
            ("ab", {"highway": "primary", "name": "West Road"}),
            ("bc", {"route": "ferry", "name": "The Ferry", "duration": "00:05"}),
            ("cd", {"highway": "primary", "name": "East Road"}),
            ("ef", {"highway": "secondary", "name": "South West"}),
            ("fg", {"route": "shuttle_train", "name": "Shuttle"}),
            ("gh", {"highway": "secondary", "name": "South East"}),
            ("ae", {"highway": "residential"}),
        ],
        [("a", "d"), ("e", "h"), ("d", "h"), (("b", "c", 0.4), "h")],
        [("b", "c", 0.4), ("f", "g", 0.6)],
    ),
    ModeMap(
        "foot-ferry",
        "foot",
        """
        a b   c d
        """,
        [
            ("ab", {"highway": "footway", "name": "Quay"}),
            ("bc", {"route": "ferry", "name": "The Ferry", "duration": "00:05"}),
            ("cd", {"highway": "footway", "name": "Quay"}),
        ],
        [("a", "d"), ("d", "a")],
        [("b", "c", 0.4)],
    ),
    ModeMap(
        "testbot-modes",
        "testbot",
        """
        a b c d e
        """,
        [
            ("ab", {"highway": "primary", "name": "Road"}),
            ("bc", {"highway": "river", "name": "River"}),
            ("cd", {"highway": "steps", "name": "Steps"}),
            ("de", {"route": "ferry", "name": "Route", "duration": "00:02"}),
        ],
        [("a", "e"), ("e", "a"), (("d", "e", 0.5), "a")],
        [("d", "e", 0.5)],
    ),
]


def _lonlat(coords: dict[str, tuple[int, int]], p: str | Point) -> str:
    if isinstance(p, str):
        x, y = coords[p]
    else:
        (ax, ay), (bx, by), t = coords[p[0]], coords[p[1]], p[2]
        x, y = round(ax + t * (bx - ax)), round(ay + t * (by - ay))
    return f"{x / 1e7:.6f},{y / 1e7:.6f}"


def steps_of(body: dict) -> list[tuple]:
    """(mode, name, maneuver type, modifier, distance, duration) per step, or the status."""
    if body.get("code") != "Ok":
        return [body.get("code", "?")]
    return [
        (s["mode"], s["name"], s["maneuver"]["type"], s["maneuver"].get("modifier", ""), s["distance"], s["duration"])
        for leg in body["routes"][0]["legs"]
        for s in leg["steps"]
    ]


def same_steps(ours: list[tuple], theirs: list[tuple]) -> bool:
    """Equal step lists: modes, names and maneuvers exactly, distances to 0.1 m and durations to 0.1 s."""
    if len(ours) != len(theirs):
        return False
    for a, b in zip(ours, theirs, strict=True):
        if isinstance(a, str) or isinstance(b, str):
            if a != b:
                return False
            continue
        if a[:4] != b[:4] or abs(a[4] - b[4]) > 0.1 + 1e-9 or abs(a[5] - b[5]) > 0.1 + 1e-9:
            return False
    return True


def run_map(m: ModeMap, bin_dir: Path, work: Path) -> list[tuple[str, bool, object, object]]:
    """Both programs on one map: (request, agree, ours, theirs) per route and nearest request."""
    from harness import asciimap

    d = work / m.name
    d.mkdir(parents=True, exist_ok=True)
    osm = asciimap.write_osm(d / "map.osm", m.drawing, m.ways)
    coords = asciimap.coordinates(m.drawing)
    out: list[tuple[str, bool, object, object]] = []
    with both_servers(bin_dir, osm, m.profile) as (ours_url, theirs_url), httpx.Client(timeout=60.0) as c:
        for a, b in m.routes:
            path = f"/route/v1/{URL_PROFILE[m.profile]}/{_lonlat(coords, a)};{_lonlat(coords, b)}"
            ours = steps_of(c.get(ours_url + path, params={"steps": "true"}).json())
            theirs = steps_of(c.get(theirs_url + path, params={"steps": "true"}).json())
            out.append((f"{m.name} route {a} -> {b}", same_steps(ours, theirs), ours, theirs))
        for p in m.nearest:
            path = f"/nearest/v1/{URL_PROFILE[m.profile]}/{_lonlat(coords, p)}"
            ours_w = c.get(ours_url + path).json()["waypoints"][0]
            theirs_w = c.get(theirs_url + path).json()["waypoints"][0]
            got = (ours_w["name"], ours_w["location"])
            want = (theirs_w["name"], theirs_w["location"])
            out.append((f"{m.name} nearest {p}", got == want, got, want))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", choices=sorted(LUA), default=None, help="only this profile's maps")
    ap.add_argument("--work", type=Path, default=None, help="directory for the maps and graphs (default: a temp dir)")
    args = ap.parse_args(argv)
    bin_dir = ensure_osrm(Path(tempfile.gettempdir()) / "starroute-osrm")
    if bin_dir is None:
        print("osrm-bindings cannot be installed here: nothing to compare against", file=sys.stderr)
        return 2
    rows: list[tuple[str, bool, object, object]] = []
    with tempfile.TemporaryDirectory(prefix="starroute-modes-") as tmp:
        work = args.work or Path(tmp)
        for m in MAPS:
            if args.profile is None or m.profile == args.profile:
                rows += run_map(m, bin_dir, work)
    for what, ok, ours, theirs in rows:
        print(f"{'agree   ' if ok else 'DIFFER  '} {what}")
        if not ok:
            print(f"    ours:  {ours}\n    osrm:  {theirs}")
    agree = sum(ok for _, ok, _, _ in rows)
    print(f"{agree} of {len(rows)} requests agree (steps: mode, name, maneuver, 0.1 m, 0.1 s; nearest: name, point)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
