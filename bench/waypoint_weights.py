"""OSRM's `waypoints=` with `annotations=weight,duration` beside osrm-routed: does a leg merged over via points
report weights, or durations as weights?

    python bench/waypoint_weights.py GRAPH_DIR [--extract PBF] [--routes 20] [--seed 1] [--osrm-dir DIR]

Draws `--routes` seeded three-point requests near nodes of the largest component, asks both servers for
`waypoints=0;2&annotations=weight,duration`, and prints per server the median relative difference of the merged
leg's weight from osrm-routed's, how many merged legs report annotation weights equal to their durations, and the
median weight surplus (annotation weights minus durations) against osrm-routed's. Loopback only.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import httpx  # noqa: E402
import numpy as np  # noqa: E402

from harness.osrm_peer import ensure_osrm, prepare_osrm  # noqa: E402
from harness.servers import start_osrm, start_starroute, stop  # noqa: E402


def triples(graph: Path, k: int, seed: int) -> list[str]:
    """`k` seeded three-point coordinate strings near nodes of the largest component."""
    from floor.format.graph import load_graph

    g = load_graph(graph)
    main = np.flatnonzero(np.asarray(g.node_component) == 0)
    rng = random.Random(seed)
    out = []
    for _ in range(k):
        pts = [int(main[rng.randrange(len(main))]) for _ in range(3)]
        out.append(";".join(f"{g.node_lon[v] / 1e7:.6f},{g.node_lat[v] / 1e7:.6f}" for v in pts))
    return out


def merged(base: str, coords: str) -> dict | None:
    params = {"waypoints": "0;2", "annotations": "weight,duration", "overview": "false"}
    body = httpx.get(f"{base}/route/v1/driving/{coords}", params=params, timeout=60).json()
    return body["routes"][0]["legs"][0] if body.get("code") == "Ok" else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--extract", type=Path, required=True, help="the OSM extract the graph was built from")
    ap.add_argument("--routes", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--osrm-dir", type=Path, default=Path(tempfile.gettempdir()) / "starroute-osrm")
    args = ap.parse_args()
    bin_dir = ensure_osrm(args.osrm_dir)
    if bin_dir is None:
        sys.exit("osrm-bindings cannot be installed here")
    po, bo = start_osrm(bin_dir, prepare_osrm(bin_dir, args.extract, args.osrm_dir))
    ps, bs = start_starroute(args.graph)
    rel, theirs_differ, ours_differ, surplus_diff = [], 0, 0, []
    try:
        for coords in triples(args.graph, args.routes, args.seed):
            ours, theirs = merged(bs, coords), merged(bo, coords)
            if ours is None or theirs is None:
                continue
            rel.append(abs(ours["weight"] - theirs["weight"]) / max(theirs["weight"], 0.1))
            aw, ad = sum(ours["annotation"]["weight"]), sum(ours["annotation"]["duration"])
            tw, td = sum(theirs["annotation"]["weight"]), sum(theirs["annotation"]["duration"])
            if tw - td > 1.0:  # osrm-routed's merged leg weighs more than it takes
                theirs_differ += 1
                ours_differ += aw - ad > 1.0
                surplus_diff.append(abs((aw - ad) - (tw - td)))
    finally:
        stop(ps)
        stop(po)
    n = len(rel)
    print(f"{n} merged legs (waypoints=0;2) on {args.graph}, seed {args.seed}")
    print(f"  leg weight vs osrm-routed's, median relative difference: {100 * statistics.median(rel):.2f} %")
    print(f"  legs whose annotation weights exceed the durations: osrm-routed {theirs_differ}, starroute {ours_differ}")
    if surplus_diff:
        med = statistics.median(surplus_diff)
        print(f"  on those, |weight surplus - osrm-routed's| in the annotations, median: {med:.1f} s")


if __name__ == "__main__":
    main()
