"""starroute beside osrm-routed on small generated maps, number by number: distances to 0.1 m, durations to 0.1 s.

    python -m harness.osrm_generated                       # car, 6 maps, 60 requests each, seed 1
    python -m harness.osrm_generated --profile bike --maps 3 --requests 40 --seed 7 --show 10

Each map is a random grid of ways about 100 m apart (junctions jittered by a few metres, some cells with a shape
point, coordinates at OSM's 1e-7 degrees) at a random latitude, with random tags: highway classes, maxspeed,
surface, oneway, access, names, traffic signals (some with `traffic_signals:direction`), stop and give-way signs,
gates and bollards, and a ferry with a `duration`. Both programs preprocess the same file (starroute with its
profile, OSRM with its own Lua profile of the same name), and the same random requests (junction to junction and
points in the middle of ways) go to both servers. The table says how many answers agree, and every disagreement is
put in a class (a different route, the distance, the duration, the status) with the route's features beside it;
where both take the same path, how many agree on the sequence of step modes, and on the whole steps (mode, name,
maneuver, distance to 0.1 m, duration to 0.1 s).
Deterministic for a seed. Needs the `osrm-bindings` wheel (`harness/osrm_peer.py`).
"""

from __future__ import annotations

import argparse
import collections
import math
import random
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from harness.osrm_modes import same_steps, steps_of
from harness.osrm_peer import URL_PROFILES, ensure_osrm, prepare_osrm_profile
from harness.servers import start_osrm, start_starroute, stop

OSRM_PROFILES = ("car", "bike", "foot")  # the profiles the generated maps serve (OSRM's: `LUA_PROFILES`)
URL_PROFILE = URL_PROFILES
M_PER_DEG_LAT = 111_195.0  # about; only places the grid

HIGHWAYS = (
    ["primary"] * 2
    + ["secondary"] * 2
    + ["tertiary"] * 2
    + ["residential"] * 4
    + ["unclassified"] * 2
    + ["service", "living_street", "track", "trunk", "footway", "cycleway", "path", "pedestrian", "steps"]
)
MAXSPEED = [None] * 6 + ["30", "50", "70", "90", "20 mph", "none", "signals", "walk"]
SURFACE = [None] * 6 + ["asphalt", "gravel", "unpaved", "cobblestone", "sett", "sand", "dirt"]
ONEWAY = [None] * 7 + ["yes", "-1", "no"]
ACCESS = [None] * 14 + ["no", "private", "destination", "yes", "permissive"]
NAMES = ["", "", "Main Street", "High Street", "Church Road", "Mill Lane", "Station Road"]
NODE_TAGS = [{"highway": "traffic_signals"}] * 3 + [
    {"highway": "traffic_signals", "traffic_signals:direction": "forward"},
    {"highway": "traffic_signals", "traffic_signals:direction": "backward"},
    {"highway": "stop"},
    {"highway": "give_way"},
    {"barrier": "gate"},
    {"barrier": "bollard"},
    {"highway": "crossing"},
]


@dataclass
class GenMap:
    """One generated map: OSM nodes (id -> lon, lat at 1e-7), node tags, ways (node ids, tags)."""

    nodes: dict[int, tuple[int, int]] = field(default_factory=dict)
    node_tags: dict[int, dict[str, str]] = field(default_factory=dict)
    ways: list[tuple[list[int], dict[str, str]]] = field(default_factory=list)

    def to_xml(self) -> str:
        out = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6" generator="starroute-bench">']
        for nid, (x, y) in sorted(self.nodes.items()):
            tags = self.node_tags.get(nid)
            head = f'  <node id="{nid}" version="1" lon="{x / 1e7:.7f}" lat="{y / 1e7:.7f}"'
            if not tags:
                out.append(head + "/>")
                continue
            out.append(head + ">")
            out += [f'    <tag k="{k}" v="{v}"/>' for k, v in tags.items()]
            out.append("  </node>")
        for wid, (refs, tags) in enumerate(self.ways, start=1):
            out.append(f'  <way id="{wid}" version="1">')
            out += [f'    <nd ref="{r}"/>' for r in refs]
            out += [f'    <tag k="{k}" v="{v}"/>' for k, v in tags.items()]
            out.append("  </way>")
        out.append("</osm>")
        return "\n".join(out) + "\n"


def _way_tags(rng: random.Random) -> dict[str, str]:
    tags = {"highway": rng.choice(HIGHWAYS)}
    for key, values in (("maxspeed", MAXSPEED), ("surface", SURFACE), ("oneway", ONEWAY), ("access", ACCESS)):
        v = rng.choice(values)
        if v is not None:
            tags[key] = v
    name = rng.choice(NAMES)
    if name:
        tags["name"] = name
    return tags


def generate(seed: int, size: int = 6, spacing_m: float = 100.0) -> GenMap:
    """A `size` x `size` grid of junctions `spacing_m` apart at a random latitude, cut into random ways."""
    rng = random.Random(seed)
    lat0 = rng.choice([0.0, rng.uniform(-60.0, 60.0)])
    lon0 = rng.uniform(-170.0, 170.0)
    dlat = spacing_m / M_PER_DEG_LAT
    dlon = spacing_m / (M_PER_DEG_LAT * math.cos(math.radians(lat0)))
    jitter = rng.choice([0.0, 0.05])  # half the maps exactly on the grid, half jittered by up to 5 % of a cell
    g = GenMap()
    ids = iter(range(1, 1_000_000))

    def node(fx: float, fy: float) -> int:
        nid = next(ids)
        jx = rng.uniform(-jitter, jitter) if jitter else 0.0
        jy = rng.uniform(-jitter, jitter) if jitter else 0.0
        g.nodes[nid] = (round((lon0 + (fx + jx) * dlon) * 1e7), round((lat0 - (fy + jy) * dlat) * 1e7))
        return nid

    grid = [[node(i, j) for i in range(size)] for j in range(size)]
    for nid in [n for row in grid for n in row]:
        if rng.random() < 0.25:
            g.node_tags[nid] = dict(rng.choice(NODE_TAGS))

    def line(points: list[int]) -> None:
        """Cut a row or column of junctions into ways of 1-3 cells, some cells with a shape point, some left out."""
        i = 0
        while i < len(points) - 1:
            end = min(i + rng.randint(1, 3), len(points) - 1)
            refs = [points[i]]
            for k in range(i, end):
                if rng.random() < 0.3:  # a shape point in the cell
                    a, b = g.nodes[points[k]], g.nodes[points[k + 1]]
                    t = rng.uniform(0.3, 0.7)
                    mid = next(ids)
                    g.nodes[mid] = (
                        round(a[0] + t * (b[0] - a[0]) + rng.randint(-300, 300)),
                        round(a[1] + t * (b[1] - a[1])),
                    )
                    if rng.random() < 0.2:
                        g.node_tags[mid] = dict(rng.choice(NODE_TAGS))
                    refs.append(mid)
                refs.append(points[k + 1])
            i = end
            if rng.random() < 0.1:
                continue  # a gap in the grid
            g.ways.append((refs, _way_tags(rng)))

    for j in range(size):
        line(grid[j])
        line([grid[k][j] for k in range(size)])
    # a ferry with a duration between two opposite corners' neighbours, across one cell diagonally
    a, b = grid[size - 2][0], grid[size - 1][1]
    g.ways.append(([a, b], {"route": "ferry", "duration": rng.choice(["00:05", "0:12", "7", "00:01:30"])}))
    return g


@dataclass(frozen=True)
class Request:
    lon1: float
    lat1: float
    lon2: float
    lat2: float
    kind: str  # "node-node", "node-mid", "mid-mid"

    def path(self) -> str:
        return f"{self.lon1:.6f},{self.lat1:.6f};{self.lon2:.6f},{self.lat2:.6f}"


def requests_for(g: GenMap, count: int, seed: int) -> list[Request]:
    """`count` random requests between junctions and points in the middle of way segments."""
    rng = random.Random(seed * 7919 + 1)
    segs = [(refs[k], refs[k + 1]) for refs, tags in g.ways if "route" not in tags for k in range(len(refs) - 1)]
    junctions = sorted({r for refs, tags in g.ways if "route" not in tags for r in refs})

    def point() -> tuple[float, float, bool]:
        if rng.random() < 0.5:
            x, y = g.nodes[rng.choice(junctions)]
            return x / 1e7, y / 1e7, False
        a, b = rng.choice(segs)
        (ax, ay), (bx, by) = g.nodes[a], g.nodes[b]
        t = rng.uniform(0.2, 0.8)
        return (ax + t * (bx - ax)) / 1e7, (ay + t * (by - ay)) / 1e7, True

    out = []
    for _ in range(count):
        x1, y1, m1 = point()
        x2, y2, m2 = point()
        out.append(Request(x1, y1, x2, y2, {0: "node-node", 1: "node-mid", 2: "mid-mid"}[m1 + m2]))
    return out


@dataclass
class Outcome:
    request: Request
    klass: str  # "agree" or the disagreement's class
    ours: dict
    theirs: dict
    features: tuple[str, ...] = ()


def _first(body: dict) -> tuple[str, float, float, list[int]]:
    if body.get("code") != "Ok":
        return body.get("code", "?"), math.nan, math.nan, []
    r = body["routes"][0]
    nodes = [n for leg in r["legs"] for n in leg.get("annotation", {}).get("nodes", [])]
    return "Ok", float(r["distance"]), float(r["duration"]), nodes


def features(g: GenMap, nodes: list[int]) -> tuple[str, ...]:
    """What a route passes that could explain a difference: signals, signs, barriers, ferries, shape points."""
    out = set()
    for n in nodes:
        t = g.node_tags.get(n, {})
        if t.get("highway") == "traffic_signals":
            out.add("signal-dir" if "traffic_signals:direction" in t else "signal")
        elif t.get("highway") in ("stop", "give_way"):
            out.add(t["highway"])
        elif "barrier" in t:
            out.add(t["barrier"])
    return tuple(sorted(out))


def compare(ours: dict, theirs: dict, req: Request, g: GenMap) -> Outcome:
    oc, od, ot, on = _first(ours)
    tc, td, tt, tn = _first(theirs)
    if oc != tc:
        return Outcome(req, f"status {oc} vs {tc}", ours, theirs)
    if oc != "Ok":
        return Outcome(req, "agree", ours, theirs)
    dist_ok = abs(od - td) <= 0.1 + 1e-9
    dur_ok = abs(ot - tt) <= 0.1 + 1e-9
    feats = features(g, tn)
    if dist_ok and dur_ok:
        return Outcome(req, "agree", ours, theirs, feats)
    if on != tn:
        klass = "route (another path)"
    elif not dist_ok and not dur_ok:
        klass = "distance+duration"
    elif not dist_ok:
        klass = "distance"
    else:
        klass = "duration"
    return Outcome(req, f"{klass} [{req.kind}]", ours, theirs, feats)


def run_map(seed: int, profile: str, count: int, bin_dir: Path, work: Path) -> tuple[GenMap, list[Outcome]]:
    """Generate map `seed`, preprocess it with both programs, send both servers the same requests."""
    from preprocessing.pipeline import preprocess

    g = generate(seed)
    d = work / f"map{seed}-{profile}"
    d.mkdir(parents=True, exist_ok=True)
    osm = d / "gen.osm"
    osm.write_text(g.to_xml())
    base = prepare_osrm_profile(bin_dir, osm, profile)
    theirs_p, theirs_url = start_osrm(bin_dir, base)
    ours_p = None
    params = {"annotations": "nodes", "overview": "false", "steps": "true"}
    outcomes = []
    try:
        with httpx.Client(timeout=60.0) as c:
            # the side traffic keeps to, as osrm-extract decided it for this place (its built-in index of left-hand
            # countries), read off its steps; starroute takes it as `preprocess --driving-side`
            side = osrm_driving_side(c, theirs_url, g, profile)
            graph = preprocess(
                osm, d / "graph", profile=profile, landmarks=0, force=True, quiet=True, driving_side=side
            )
            ours_p, ours_url = start_starroute(graph)
            for req in requests_for(g, count, seed):
                url = f"/route/v1/{URL_PROFILE[profile]}/{req.path()}"
                ours = c.get(ours_url + url, params=params).json()
                theirs = c.get(theirs_url + url, params=params).json()
                outcomes.append(compare(ours, theirs, req, g))
    finally:
        if ours_p is not None:
            stop(ours_p)
        stop(theirs_p)
    return g, outcomes


def osrm_driving_side(c: httpx.Client, url: str, g: GenMap, profile: str) -> str:
    """ "left" when osrm-routed's steps on this map say traffic keeps left there, else "right"."""
    for req in requests_for(g, 10, 0):
        r = c.get(f"{url}/route/v1/{URL_PROFILE[profile]}/{req.path()}", params={"steps": "true"}).json()
        for route in r.get("routes", []):
            for leg in route["legs"]:
                for step in leg["steps"]:
                    if step.get("driving_side") in ("left", "right"):
                        return str(step["driving_side"])
    return "right"


def summarize(outcomes: list[Outcome], show: int) -> str:
    total = len(outcomes)
    agree = sum(o.klass == "agree" for o in outcomes)
    both_ok = [o for o in outcomes if _first(o.ours)[0] == "Ok" and _first(o.theirs)[0] == "Ok"]
    dist = sum(abs(_first(o.ours)[1] - _first(o.theirs)[1]) <= 0.1 + 1e-9 for o in both_ok)
    dur = sum(abs(_first(o.ours)[2] - _first(o.theirs)[2]) <= 0.1 + 1e-9 for o in both_ok)
    same_path = [o for o in both_ok if _first(o.ours)[3] == _first(o.theirs)[3]]
    modes = sum([s[0] for s in steps_of(o.ours)] == [s[0] for s in steps_of(o.theirs)] for o in same_path)
    steps = sum(same_steps(steps_of(o.ours), steps_of(o.theirs)) for o in same_path)
    lines = [
        f"answers: {total}, agree on status, distance (0.1 m) and duration (0.1 s): {agree} "
        f"({100.0 * agree / max(total, 1):.1f} %)",
        f"both Ok: {len(both_ok)}; distance agrees {dist}, duration agrees {dur}",
        f"same path: {len(same_path)}; step modes agree {modes}, whole steps agree {steps}",
        "",
        "| disagreement class | count | route features (count) |",
        "|---|---|---|",
    ]
    by: dict[str, list[Outcome]] = collections.defaultdict(list)
    for o in outcomes:
        if o.klass != "agree":
            by[o.klass].append(o)
    for klass, items in sorted(by.items(), key=lambda kv: -len(kv[1])):
        feats = collections.Counter(f for o in items for f in (o.features or ("-",)))
        lines.append(f"| {klass} | {len(items)} | {', '.join(f'{k} {v}' for k, v in feats.most_common())} |")
    if show:
        lines.append("")
        for klass, items in sorted(by.items(), key=lambda kv: -len(kv[1])):
            for o in items[:show]:
                oc, od, ot, _ = _first(o.ours)
                tc, td, tt, _ = _first(o.theirs)
                lines.append(
                    f"{klass}: {o.request.path()}  ours {oc} {od} m {ot} s  osrm {tc} {td} m {tt} s  {o.features}"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", default="car", choices=sorted(OSRM_PROFILES))
    ap.add_argument("--maps", type=int, default=6)
    ap.add_argument("--requests", type=int, default=60, help="requests per map")
    ap.add_argument("--seed", type=int, default=1, help="first map's seed; map i has seed + i")
    ap.add_argument("--show", type=int, default=3, help="examples printed per disagreement class")
    ap.add_argument("--work", type=Path, default=None, help="directory for the maps and graphs (default: a temp dir)")
    args = ap.parse_args(argv)
    bin_dir = ensure_osrm(Path(tempfile.gettempdir()) / "starroute-osrm")
    if bin_dir is None:
        print("osrm-bindings cannot be installed here: nothing to compare against", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="starroute-gen-") as tmp:
        work = args.work or Path(tmp)
        outcomes: list[Outcome] = []
        for i in range(args.maps):
            _, got = run_map(args.seed + i, args.profile, args.requests, bin_dir, work)
            outcomes += got
        print(f"profile {args.profile}, {args.maps} maps from seed {args.seed}, {args.requests} requests each")
        print(summarize(outcomes, args.show))
    return 0


if __name__ == "__main__":
    sys.exit(main())
