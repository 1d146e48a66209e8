"""Car `/table` durations beside osrm-routed's on real extracts, cell by cell: the share within 0.1 s.

    python -m harness.osrm_tables                                   # Monaco (bundled) and Andorra, 20 x 23 cells each
    python -m harness.osrm_tables data/monaco.osm.pbf --sources 20 --destinations 23 --seed 1 --show 15
    # the answers tests/osrm/test_osrm_tables.py holds
    python -m harness.osrm_tables --record tests/osrm/osrm_tables.json
    # the recorded points (before and after a change)
    python -m harness.osrm_tables --points tests/osrm/osrm_tables.json

Hilly, winding towns are where the turn model shows: hairpins and tunnel bends that OSRM's intersection analysis
sees as u-turns, junctions whose perceived angles differ from the neighbouring shape points'. For each extract both
programs preprocess the same file (starroute's car profile into a temporary graph; osrm-extract with car.lua and
osrm-contract, cached per extract by `harness.osrm_peer.prepare_osrm`), then the same seeded road points (nodes of
the largest component, moved up to 20 m) go to both servers as one `/table` request. Printed per extract: the
share of cells within 0.1 s, the mean difference (starroute - osrm-routed), how many are lower and higher, and the
worst cells with their coordinates (each a `/route` request to look at). `--record` writes the points and
osrm-routed's durations, which the test compares starroute's answers with. Needs the `osrm-bindings` wheel.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx
import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_EXTRACTS = (ROOT / "data" / "monaco.osm.pbf", ROOT.parent / "shared" / "data" / "osm" / "andorra.osm.pbf")
TOLERANCE_S = 0.1


@dataclass
class Cell:
    """One source -> destination duration of both servers (None: no route)."""

    source: tuple[float, float]
    destination: tuple[float, float]
    ours: float | None
    theirs: float | None

    @property
    def agrees(self) -> bool:
        if self.ours is None or self.theirs is None:
            return self.ours is None and self.theirs is None
        return abs(self.ours - self.theirs) <= TOLERANCE_S + 1e-9


def road_points(graph_dir: Path, count: int, seed: int) -> list[tuple[float, float]]:
    """`count` seeded points near the road nodes of the graph's largest component (up to about 20 m off), at 6
    decimals as a request carries them."""
    from app.engine.data import load

    g = load(graph_dir)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    lon, lat = np.asarray(g.node_lon) / 1e7, np.asarray(g.node_lat) / 1e7
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        v = int(main[rng.randrange(len(main))])
        out.append(
            (round(float(lon[v]) + rng.uniform(-2e-4, 2e-4), 6), round(float(lat[v]) + rng.uniform(-1.5e-4, 1.5e-4), 6))
        )
    return out


def table(base: str, sources: list[tuple[float, float]], destinations: list[tuple[float, float]]) -> list[list]:
    """The `/table/v1/driving` durations of sources x destinations."""
    pts = sources + destinations
    coords = ";".join(f"{lon:.6f},{lat:.6f}" for lon, lat in pts)
    params = {
        "sources": ";".join(str(i) for i in range(len(sources))),
        "destinations": ";".join(str(len(sources) + j) for j in range(len(destinations))),
    }
    body = httpx.get(f"{base}/table/v1/driving/{coords}", params=params, timeout=120.0).json()
    if body.get("code") != "Ok":
        raise RuntimeError(f"table failed: {body}")
    return body["durations"]


def cells(
    ours: list[list], theirs: list[list], sources: list[tuple[float, float]], destinations: list[tuple[float, float]]
) -> list[Cell]:
    """Both tables side by side, cell by cell."""
    return [Cell(s, d, ours[i][j], theirs[i][j]) for i, s in enumerate(sources) for j, d in enumerate(destinations)]


def summarize(name: str, got: list[Cell], show: int) -> str:
    """The share within 0.1 s, the mean difference, and the worst cells."""
    both = [c for c in got if c.ours is not None and c.theirs is not None]
    diff = np.array([c.ours - c.theirs for c in both]) if both else np.zeros(0)  # type: ignore[operator]
    agree = sum(c.agrees for c in got)
    lines = [
        f"{name}: {agree} of {len(got)} cells within {TOLERANCE_S} s ({100 * agree / max(1, len(got)):.2f} %); "
        f"mean difference {diff.mean() if len(diff) else 0:+.2f} s (starroute - osrm-routed), "
        f"{int((diff < -TOLERANCE_S - 1e-9).sum())} lower, {int((diff > TOLERANCE_S + 1e-9).sum())} higher, "
        f"{sum((c.ours is None) != (c.theirs is None) for c in got)} reachable by one only"
    ]
    worst = sorted(got, key=lambda c: -abs((c.ours or 0) - (c.theirs or 0)) if not c.agrees else 0)[:show]
    for c in worst:
        if c.agrees:
            break
        s, d = c.source, c.destination
        lines.append(f"  {s[0]:.6f},{s[1]:.6f};{d[0]:.6f},{d[1]:.6f}  starroute {c.ours}  osrm-routed {c.theirs}")
    return "\n".join(lines)


def run_extract(
    extract: Path,
    bin_dir: Path,
    osrm_dir: Path,
    work: Path,
    n_src: int,
    n_dst: int,
    seed: int,
    points: tuple[list, list] | None = None,
) -> tuple[list[tuple[float, float]], list[tuple[float, float]], list[Cell]]:
    """Preprocess `extract` with starroute, serve it and OSRM's car dataset of it, and compare one table (of
    `points`, (sources, destinations), when given)."""
    from harness.osrm_peer import prepare_osrm
    from harness.servers import start_osrm, start_starroute, stop
    from preprocessing.pipeline import preprocess

    graph = preprocess(extract, work / extract.name.split(".")[0], profile="car", landmarks=0, force=True,
                       quiet=True, basemap=False)  # fmt: skip
    if points is None:
        pts = road_points(graph, n_src + n_dst, seed)
        sources, destinations = pts[:n_src], pts[n_src:]
    else:
        sources, destinations = [tuple(p) for p in points[0]], [tuple(p) for p in points[1]]
    po, theirs_url = start_osrm(bin_dir, prepare_osrm(bin_dir, extract, osrm_dir))
    ps = None
    try:
        ps, ours_url = start_starroute(graph)
        got = cells(table(ours_url, sources, destinations), table(theirs_url, sources, destinations), sources,
                    destinations)  # fmt: skip
    finally:
        if ps is not None:
            stop(ps)
        stop(po)
    return sources, destinations, got


def main() -> None:
    from harness.osrm_peer import ensure_osrm

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("extracts", type=Path, nargs="*", default=list(DEFAULT_EXTRACTS))
    ap.add_argument("--sources", type=int, default=20)
    ap.add_argument("--destinations", type=int, default=23)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--show", type=int, default=10, help="worst cells to print per extract")
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    ap.add_argument("--record", type=Path, help="write the points and osrm-routed's durations to this JSON file")
    ap.add_argument("--points", type=Path, help="the points of a recorded file (--record) instead of new ones")
    args = ap.parse_args()
    given = json.loads(args.points.read_text()) if args.points else {}
    bin_dir = ensure_osrm(args.osrm_dir)
    if bin_dir is None:
        sys.exit("osrm-bindings cannot be installed here")
    recorded = {}
    with tempfile.TemporaryDirectory() as tmp:
        for extract in args.extracts:
            if not extract.exists():
                print(f"{extract}: not found, skipped")
                continue
            pts = given.get(extract.name)
            if args.points and pts is None:
                print(f"{extract.name}: not in {args.points}, skipped")
                continue
            sources, destinations, got = run_extract(
                extract, bin_dir, args.osrm_dir, Path(tmp), args.sources, args.destinations, args.seed,
                (pts["sources"], pts["destinations"]) if pts else None,
            )  # fmt: skip
            print(summarize(extract.name, got, args.show))
            recorded[extract.name] = {
                "sources": sources,
                "destinations": destinations,
                "osrm_durations": [[c.theirs for c in got[i * len(destinations) : (i + 1) * len(destinations)]]
                                   for i in range(len(sources))],
            }  # fmt: skip
    if args.record:
        args.record.write_text(json.dumps(recorded, indent=1) + "\n")
        print(f"recorded {', '.join(recorded)} in {args.record}")


if __name__ == "__main__":
    main()
