"""Turn-by-turn guidance beside the real OSRM: the same route requests to osrm-routed and starroute, maneuvers compared.

    python bench/guidance.py [--extracts andorra.osm.pbf porto_portugal.osm.pbf] [--routes 100] [--seed 1]
                             [--work DIR] [--osrm-dir /tmp/starroute-osrm] [--show 5] [--dump FILE] [--rebuild]

For each extract (names are looked up in ../shared/data/osm and data/): starroute's car graph is built once into
`--work` (with CH, reused while its format and source are unchanged), OSRM's dataset once with osrm-extract /
osrm-contract and car.lua (`harness/osrm_peer.py`). Both servers are started on free loopback ports
(`python -m app.server`, `osrm-routed`) and get the same `--routes` requests
`/route/v1/driving/A;B?steps=true&overview=full&geometries=geojson`.

The points: seeded random points *on* roads, so both engines snap them to the same segment — the middle stretch
(25..75 %) of a random segment at least 10 m long of a random arc of the largest strongly connected component whose
road class a car driver names a street (motorway .. living_street, not service, not a roundabout, not a ferry); the
two points of a pair are 0.5 to 6 km apart as the crow flies.

Routes are compared only where both engines drive (nearly) the same way — the engines weigh roads differently
(OSRM's turn penalties, our node-based graph) and a different route has different maneuvers whatever the guidance.
"Same way": lengths within 2 % of each other and every vertex of either geometry within 10 m of the other polyline
(a symmetric Hausdorff distance over vertices). On those routes:

- identical: the share of routes whose maneuver sequence — `(type, modifier)` of every step, depart and arrive
  included — is the same in both answers;
- F1: in-order F1 of the maneuvers, from the longest common subsequence of the two sequences: precision = LCS /
  len(starroute), recall = LCS / len(OSRM), summed over routes (micro-averaged);
- steps per OSRM step: len(starroute) / len(OSRM), summed.

`--show N` prints N differing routes side by side (step names and maneuvers); `--dump FILE` writes every compared
pair of answers as JSON lines for closer study.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import IO, Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
import numpy as np  # noqa: E402

from floor.format.arrays import FormatError  # noqa: E402
from floor.format.graph import load_graph  # noqa: E402
from floor.format.manifest import read_manifest  # noqa: E402
from floor.format.units import (  # noqa: E402
    COORD_SCALE,
    EARTH_RADIUS_M,
    FLAG_FERRY,
    FLAG_ROUNDABOUT,
    ROAD_CLASS_CODE,  # noqa: E402
)
from harness.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from harness.servers import start_osrm, start_starroute, stop  # noqa: E402

EXTRACT_DIRS = (ROOT.parent / "shared" / "data" / "osm", ROOT / "data")
STREET_CLASSES = (
    "motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link", "secondary", "secondary_link",
    "tertiary", "tertiary_link", "unclassified", "residential", "living_street",
)  # fmt: skip
MIN_SEGMENT_M = 10.0
PAIR_RANGE_M = (500.0, 6000.0)
SAME_LENGTH = 0.02
SAME_WAY_M = 10.0
Maneuver = tuple[str, str]


# --- servers -------------------------------------------------------------------------------------------------------


# --- data ----------------------------------------------------------------------------------------------------------
def find_extract(name: str) -> Path:
    """An extract by path or by name under /work/shared/data/osm."""
    p = Path(name)
    if p.exists():
        return p
    for d in EXTRACT_DIRS:
        if (d / name).exists():
            return d / name
    raise SystemExit(f"extract {name} not found in {', '.join(str(d) for d in EXTRACT_DIRS)}")


def starroute_graph(extract: Path, work: Path, rebuild: bool = False) -> Path:
    """The car graph of `extract` in `work`, built unless a readable one of the same source is there (or
    `rebuild`: after a profile change, which the manifest does not record)."""
    from preprocessing.pipeline import preprocess

    digest = hashlib.sha256(extract.read_bytes()).hexdigest()
    out = work / f"{extract.name.split('.')[0]}-car"
    try:
        if not rebuild and read_manifest(out).get("source", {}).get("sha256") == digest:
            return out
    except FormatError:
        pass
    print(f"building starroute graph {out} ...", flush=True)
    return preprocess(extract, out, profile="car", ch=True, landmarks=0, force=True, quiet=True)


def _metres(lon1: float, lat1: float, lon2: float, lat2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    a = math.sin((p2 - p1) / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(math.radians(lon2 - lon1) / 2) ** 2
    return 2 * EARTH_RADIUS_M * math.asin(math.sqrt(min(1.0, a)))


def road_points(graph_dir: Path, n: int, seed: int) -> list[tuple[tuple[float, float], tuple[float, float]]]:
    """`n` seeded pairs of points on named-street segments of the largest component (see the module docstring)."""
    g = load_graph(graph_dir)
    rng = random.Random(seed)
    comp = np.asarray(g.node_component)
    codes = np.array([ROAD_CLASS_CODE[c] for c in STREET_CLASSES])
    flags = np.asarray(g.arc_flags)
    ok = (
        np.isin(np.asarray(g.arc_class), codes)
        & (comp[np.asarray(g.arc_tail)] == 0)
        & (comp[np.asarray(g.arc_head)] == 0)
        & ((flags & (FLAG_FERRY | FLAG_ROUNDABOUT)) == 0)
    )
    arcs = np.flatnonzero(ok)
    gf, glon, glat = np.asarray(g.geom_first), np.asarray(g.geom_lon), np.asarray(g.geom_lat)

    def point() -> tuple[float, float]:
        while True:
            chain = int(g.arc_geom[int(arcs[rng.randrange(arcs.shape[0])])]) >> 1
            lo, hi = int(gf[chain]), int(gf[chain + 1])
            i = rng.randrange(lo, hi - 1)
            a = (glon[i] / COORD_SCALE, glat[i] / COORD_SCALE)
            b = (glon[i + 1] / COORD_SCALE, glat[i + 1] / COORD_SCALE)
            if _metres(*a, *b) < MIN_SEGMENT_M:
                continue
            t = rng.uniform(0.25, 0.75)
            return round(a[0] + t * (b[0] - a[0]), 6), round(a[1] + t * (b[1] - a[1]), 6)

    pairs = []
    while len(pairs) < n:
        p, q = point(), point()
        if PAIR_RANGE_M[0] <= _metres(*p, *q) <= PAIR_RANGE_M[1]:
            pairs.append((p, q))
    return pairs


# --- comparison ----------------------------------------------------------------------------------------------------
def maneuvers(route: dict[str, Any]) -> list[Maneuver]:
    """`(type, modifier)` of every step of every leg ("" where the step has no modifier)."""
    return [(s["maneuver"]["type"], s["maneuver"].get("modifier", "")) for leg in route["legs"] for s in leg["steps"]]


def _project(coords: list[list[float]], lat0: float) -> np.ndarray:
    c = np.asarray(coords, dtype=np.float64)
    k = math.pi / 180.0 * EARTH_RADIUS_M
    return np.stack([c[:, 0] * k * math.cos(math.radians(lat0)), c[:, 1] * k], axis=1)


def _to_polyline_m(p: np.ndarray, line: np.ndarray) -> np.ndarray:
    """Distance (m) of each point of `p` [k, 2] to the polyline `line` [m, 2] (planar, metres)."""
    if line.shape[0] == 1:
        return np.linalg.norm(p - line[0], axis=1)
    a, b = line[:-1], line[1:]
    ab = b - a
    ll = np.maximum((ab * ab).sum(axis=1), 1e-12)
    t = np.clip(((p[:, None, :] - a[None]) * ab[None]).sum(axis=2) / ll[None], 0.0, 1.0)
    near = a[None] + t[:, :, None] * ab[None]
    return np.min(np.linalg.norm(p[:, None, :] - near, axis=2), axis=1)


def same_way(r1: dict[str, Any], r2: dict[str, Any]) -> bool:
    """Lengths within SAME_LENGTH and a symmetric vertex Hausdorff distance within SAME_WAY_M."""
    d1, d2 = r1["distance"], r2["distance"]
    if abs(d1 - d2) > SAME_LENGTH * max(d1, d2, 1.0):
        return False
    c1, c2 = r1["geometry"]["coordinates"], r2["geometry"]["coordinates"]
    lat0 = c1[0][1]
    p1, p2 = _project(c1, lat0), _project(c2, lat0)
    return bool(_to_polyline_m(p1, p2).max() <= SAME_WAY_M and _to_polyline_m(p2, p1).max() <= SAME_WAY_M)


def lcs(a: list[Maneuver], b: list[Maneuver]) -> int:
    """Length of the longest common subsequence."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0] * (len(b) + 1)
        for j, y in enumerate(b, 1):
            cur[j] = prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1])
        prev = cur
    return prev[-1]


def _label(m: Maneuver) -> str:
    return f"{m[0]} {m[1]}".strip()


def show(osrm: dict[str, Any], star: dict[str, Any]) -> None:
    """Print the two maneuver sequences of a differing route side by side."""

    def rows(route: dict[str, Any]) -> list[str]:
        return [
            f"{_label((s['maneuver']['type'], s['maneuver'].get('modifier', '')))} [{s['name']}] {s['distance']:.0f}m"
            for leg in route["legs"]
            for s in leg["steps"]
        ]

    a, b = rows(osrm), rows(star)
    for i in range(max(len(a), len(b))):
        print(f"    {a[i] if i < len(a) else '':60s} | {b[i] if i < len(b) else ''}")


def run_extract(name: str, args: argparse.Namespace, bin_dir: Path, dump: IO[str] | None) -> dict[str, Any]:
    """Build both engines' data for one extract, send the requests to both, compare; the figures of the extract."""
    extract = find_extract(name)
    graph = starroute_graph(extract, args.work, args.rebuild)
    dataset = prepare_osrm(bin_dir, extract, args.work / "osrm")
    pairs = road_points(graph, args.routes, args.seed)
    paths = [f"/route/v1/driving/{a[0]},{a[1]};{b[0]},{b[1]}" for a, b in pairs]
    query = {"steps": "true", "overview": "full", "geometries": "geojson"}
    answers: dict[str, list[dict[str, Any]]] = {}
    for engine in ("osrm", "starroute"):
        proc, base = start_osrm(bin_dir, dataset) if engine == "osrm" else start_starroute(graph)
        try:
            with httpx.Client(base_url=base, timeout=60.0) as c:
                t0 = time.perf_counter()
                answers[engine] = [c.get(p, params=query).json() for p in paths]
                print(f"  {engine}: {len(paths)} requests in {time.perf_counter() - t0:.1f} s", flush=True)
        finally:
            stop(proc)
    compared = identical = lcs_sum = len_star = len_osrm = 0
    missing: Counter[str] = Counter()
    extra: Counter[str] = Counter()
    shown = 0
    for path, o, s in zip(paths, answers["osrm"], answers["starroute"], strict=True):
        if o.get("code") != "Ok" or s.get("code") != "Ok" or not same_way(o["routes"][0], s["routes"][0]):
            continue
        mo, ms = maneuvers(o["routes"][0]), maneuvers(s["routes"][0])
        compared += 1
        identical += mo == ms
        common = lcs(mo, ms)
        lcs_sum += common
        len_osrm += len(mo)
        len_star += len(ms)
        co, cs = Counter(map(_label, mo)), Counter(map(_label, ms))
        missing.update(co - cs)
        extra.update(cs - co)
        if dump is not None:
            dump.write(json.dumps({"extract": name, "path": path, "osrm": o, "starroute": s}) + "\n")
        if mo != ms and shown < args.show:
            shown += 1
            print(f"  differs: {path}\n    {'OSRM':60s} | starroute")
            show(o["routes"][0], s["routes"][0])
    precision = lcs_sum / len_star if len_star else 0.0
    recall = lcs_sum / len_osrm if len_osrm else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    res = {
        "extract": name,
        "requests": len(paths),
        "compared": compared,
        "identical": identical,
        "identical_share": identical / compared if compared else 0.0,
        "f1": f1,
        "precision": precision,
        "recall": recall,
        "steps_per_osrm_step": len_star / len_osrm if len_osrm else 0.0,
        "sums": {"lcs": lcs_sum, "star": len_star, "osrm": len_osrm},
        "missing": dict(missing.most_common(8)),
        "extra": dict(extra.most_common(8)),
    }
    return res


def main() -> None:
    """Command line: the extracts, the number of routes, the seed; prints the figures per extract and over all."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--extracts", nargs="+", default=["andorra.osm.pbf", "porto_portugal.osm.pbf"])
    ap.add_argument("--routes", type=int, default=100, help="route requests per extract")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", type=Path, default=Path(tempfile.gettempdir()) / "starroute-guidance-bench")
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    ap.add_argument("--show", type=int, default=0, help="print this many differing routes per extract")
    ap.add_argument("--dump", type=Path, help="write the compared answers as JSON lines")
    ap.add_argument("--rebuild", action="store_true", help="rebuild starroute's graphs (after a profile change)")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    bin_dir = ensure_osrm(args.osrm_dir)
    if bin_dir is None:
        raise SystemExit("osrm-routed is not available (see harness/osrm_peer.py)")
    dump = open(args.dump, "w", encoding="utf-8") if args.dump else None  # noqa: SIM115
    results = []
    try:
        for name in args.extracts:
            print(f"{name}:", flush=True)
            results.append(run_extract(name, args, bin_dir, dump))
    finally:
        if dump is not None:
            dump.close()
    print()
    print(f"{'extract':26s} {'requests':>8s} {'compared':>8s} {'identical':>10s} {'F1':>6s} {'P':>6s} {'R':>6s} "
          f"{'steps/OSRM':>10s}")  # fmt: skip
    tot = Counter()
    for r in results:
        print(
            f"{r['extract']:26s} {r['requests']:8d} {r['compared']:8d} {r['identical_share']:9.1%} "
            f"{r['f1']:6.3f} {r['precision']:6.3f} {r['recall']:6.3f} {r['steps_per_osrm_step']:10.2f}"
        )
        tot.update({"compared": r["compared"], "identical": r["identical"], **r["sums"]})
    if tot["compared"]:
        p, q = tot["lcs"] / max(tot["star"], 1), tot["lcs"] / max(tot["osrm"], 1)
        print(
            f"{'all':26s} {'':8s} {tot['compared']:8d} {tot['identical'] / tot['compared']:9.1%} "
            f"{2 * p * q / (p + q) if p + q else 0.0:6.3f} {p:6.3f} {q:6.3f} {tot['star'] / max(tot['osrm'], 1):10.2f}"
        )
    for r in results:
        print(f"{r['extract']}: most missing {r['missing']}\n{'':{len(r['extract'])}s}  most extra   {r['extra']}")


if __name__ == "__main__":
    main()
