"""The turn stage alone: its seconds and a hash of every array it writes, per extract.

    python -m bench.turn_stage data/monaco.osm.pbf ../shared/data/osm/andorra.osm.pbf --save /tmp/turns.json
    python -m bench.turn_stage data/monaco.osm.pbf ../shared/data/osm/andorra.osm.pbf --compare /tmp/turns.json
    python -m bench.turn_stage data/monaco.osm.pbf --profile   # cProfile of the stage, the top 30 functions

Each extract goes through the stages before it as `preprocessing.pipeline.preprocess` runs them (read ways, nodes,
restrictions, build graph; untimed), then the turn stage (`resolve_restrictions` + `edge_based_graph`) is timed.
Printed per extract: the stage's seconds, its arrays' count and one sha256 over all of them (name, dtype, shape,
bytes, in name order), and the report's counts. `--save` writes the per-array hashes; `--compare` checks them
against a saved file and exits 1 on any difference (the check that a faster turn stage gives byte-identical
output).
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def array_hash(a: np.ndarray) -> str:
    """sha256 of an array's dtype, shape and bytes."""
    h = hashlib.sha256()
    h.update(f"{a.dtype.str}{a.shape}".encode())
    h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()


def road_graph(extract: Path, profile: str = "car") -> tuple[dict[str, np.ndarray], Any, list]:
    """The road graph arrays, the profile and the restrictions, as the pipeline has them before its turn stage."""
    from preprocessing.pipeline import turn_input

    return turn_input(extract, profile)


def turn_stage(arrays: dict[str, np.ndarray], prof: Any, restrictions: list) -> tuple[dict[str, np.ndarray], dict]:
    """The pipeline's turn stage: restrictions resolved to arc sequences, then the edge-based graph."""
    from preprocessing.osm.restrictions import resolve_restrictions
    from preprocessing.turns import edge_based_graph

    sequences, s_report = resolve_restrictions(restrictions, arrays)
    eb, report = edge_based_graph(arrays, prof, sequences, False)
    return eb, {**s_report, **report}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("extracts", type=Path, nargs="+")
    ap.add_argument("--save", type=Path, help="write the per-array hashes here")
    ap.add_argument("--compare", type=Path, help="check the per-array hashes against this file")
    ap.add_argument("--profile", action="store_true", help="cProfile the turn stage (top 30 by cumulative time)")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT))
    saved = json.loads(args.compare.read_text()) if args.compare else {}
    result: dict[str, dict[str, str]] = {}
    bad = 0
    for extract in args.extracts:
        arrays, prof, restrictions = road_graph(extract)
        prof_run = cProfile.Profile() if args.profile else None
        t0 = time.perf_counter()
        if prof_run:
            prof_run.enable()
        eb, report = turn_stage(arrays, prof, restrictions)
        if prof_run:
            prof_run.disable()
        secs = time.perf_counter() - t0
        hashes = {k: array_hash(v) for k, v in sorted(eb.items())}
        total = hashlib.sha256("".join(f"{k}{h}" for k, h in hashes.items()).encode()).hexdigest()
        result[extract.name] = hashes
        print(f"{extract.name}: turn stage {secs:.2f} s, {len(hashes)} arrays, sha256 {total[:16]}")
        print("  " + ", ".join(f"{k} {v}" for k, v in report.items()))
        if args.compare:
            ref = saved.get(extract.name)
            if ref is None:
                print(f"  no saved hashes for {extract.name}")
                bad += 1
            else:
                diff = sorted(k for k in set(ref) | set(hashes) if ref.get(k) != hashes.get(k))
                print(f"  compare: {'IDENTICAL' if not diff else 'DIFFERENT: ' + ', '.join(diff)}")
                bad += bool(diff)
        if prof_run:
            pstats.Stats(prof_run).sort_stats("cumulative").print_stats(30)
    if args.save:
        args.save.write_text(json.dumps(result, indent=1) + "\n")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
