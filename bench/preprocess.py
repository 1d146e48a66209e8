#!/usr/bin/env python3
"""Benchmark `starroute preprocess`: prints stage, seconds, peak RSS, and the graph counts.

Usage: python bench/preprocess.py EXTRACT [--profile car] [--no-ch] [--landmarks 16] [--turns|--no-turns]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from floor.format.manifest import read_manifest
from floor.report import Reporter  # noqa: E402
from preprocessing.pipeline import preprocess  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("extract", type=Path)
    ap.add_argument("--profile", default="car")
    ap.add_argument("--no-ch", action="store_true")
    ap.add_argument("--landmarks", type=int, default=16)
    ap.add_argument("--turns", action=argparse.BooleanOptionalAction, default=None, help="edge-based graph")
    ap.add_argument("--output", type=Path, default=None, help="keep the graph here (default: a temp dir)")
    args = ap.parse_args()
    rep = Reporter(quiet=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = args.output or Path(tmp) / "g"
        t0 = time.perf_counter()
        preprocess(
            args.extract,
            out,
            profile=args.profile,
            ch=not args.no_ch,
            landmarks=args.landmarks,
            force=True,
            reporter=rep,
            turns=args.turns,
        )
        total = time.perf_counter() - t0
        mf = read_manifest(out)
    print(f"# {args.extract.name}  profile={args.profile}  ({args.extract.stat().st_size:,} bytes)")
    print(f"{'stage':<18}{'seconds':>10}{'peak RSS MiB':>14}")
    for name, s in rep.stages.items():
        print(f"{name:<18}{s['seconds']:>10.2f}{s['peak_rss_mb']:>14.0f}")
    print(f"{'total':<18}{total:>10.2f}")
    c = mf["counts"]
    print(
        f"nodes {c['nodes']:,}  arcs {c['arcs']:,}  chains {c['chains']:,}  shape_points {c['shape_points']:,}  "
        f"components {c['components']:,}  largest {c['largest_component_nodes']:,}"
    )
    if "ch" in mf:
        ch = mf["ch"]
        print(f"CH shortcuts {ch.get('shortcuts', 0):,}  per arc {ch.get('shortcuts_per_arc', 0):.3f}")
    if "landmarks" in mf:
        print(f"landmarks {mf['landmarks'].get('count')}")


if __name__ == "__main__":
    main()
