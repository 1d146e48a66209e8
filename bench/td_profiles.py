"""Departure-time benchmark input (issue 44): time profiles with a weekday rush hour on a graph's main roads.

    python bench/td_profiles.py GRAPH_DIR OUT_DIR

writes OUT_DIR/time_profiles.csv (`rush`: 50 % of free flow 07:30-09:00, 100 % otherwise; `free`: 100 % all day) and
OUT_DIR/segment_profiles.csv: `rush` Monday to Friday and `free` at the weekend on every directed segment of every
motorway, trunk and primary road of the graph, their _link roads too (by `arc_class`, the OSM node pairs from
`geom_osm_id`). Then `starroute customize GRAPH_DIR --time-profiles OUT_DIR/time_profiles.csv --segment-profiles
OUT_DIR/segment_profiles.csv` makes them the graph's metric (`harness/valhalla_peer.py` gives Valhalla the same).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from floor.format.graph import load_graph  # noqa: E402
from floor.format.units import ROAD_CLASS_CODE  # noqa: E402
from preprocessing.metric import arc_segments  # noqa: E402
from preprocessing.osm.time_profiles import PROFILE_HEADER, SEGMENT_HEADER  # noqa: E402

RUSH_CLASSES = ("motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link")
RUSH_FROM, RUSH_TO = 7 * 4 + 2, 9 * 4  # slots 07:30 (inclusive) to 09:00 (exclusive)
RUSH_PCT = 50


def rush_pct() -> list[int]:
    """The `rush` profile's 96 slots: RUSH_PCT in 07:30-09:00, 100 otherwise."""
    return [RUSH_PCT if RUSH_FROM <= q < RUSH_TO else 100 for q in range(96)]


def main_road_segments(graph_dir: Path) -> np.ndarray:
    """[k, 2] int64 distinct directed (from, to) OSM node pairs of the graph's RUSH_CLASSES arcs."""
    g = load_graph(graph_dir, metric=False, check=False)
    arrays = dict(g.arrays)
    codes = np.array([ROAD_CLASS_CODE[c] for c in RUSH_CLASSES])
    arc, a, b, _ = arc_segments(arrays, lengths=False)
    keep = np.isin(np.asarray(arrays["arc_class"])[arc], codes)
    osm = np.asarray(arrays["geom_osm_id"], dtype=np.int64)
    pairs = np.stack([osm[a[keep]], osm[b[keep]]], axis=1)
    pairs = pairs[(pairs[:, 0] > 0) & (pairs[:, 1] > 0)]
    return np.unique(pairs, axis=0)


def write_profiles(graph_dir: Path, out_dir: Path) -> tuple[Path, Path, int]:
    """Write both files into `out_dir`; (time profiles, segment profiles, segments listed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    tp = out_dir / "time_profiles.csv"
    rows = [",".join(PROFILE_HEADER), "rush," + ",".join(map(str, rush_pct())), "free," + ",".join(["100"] * 96)]
    tp.write_text("\n".join(rows) + "\n", encoding="utf-8")
    pairs = main_road_segments(graph_dir)
    week = ",".join(["rush"] * 5 + ["free"] * 2)
    sp = out_dir / "segment_profiles.csv"
    lines = [",".join(SEGMENT_HEADER)] + [f"{f},{t},{week}" for f, t in pairs.tolist()]
    sp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tp, sp, len(pairs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graph_dir", type=Path, metavar="GRAPH_DIR")
    ap.add_argument("out_dir", type=Path, metavar="OUT_DIR")
    args = ap.parse_args()
    tp, sp, n = write_profiles(args.graph_dir, args.out_dir)
    print(f"{tp}: profiles rush (50 % weekdays 07:30-09:00), free")
    print(f"{sp}: {n} directed segments of {', '.join(RUSH_CLASSES)}: rush Monday-Friday, free Saturday-Sunday")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
