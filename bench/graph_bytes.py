"""What a graph directory's arrays weigh: a line per array (dtype, shape, MiB, bytes per node and per arc of the road
graph), then the totals; with `--same-as OTHER`, whether two builds are the same graph.

    python -m bench.graph_bytes GRAPH [--same-as OTHER]

`--same-as` compares every array by name, dtype, shape and bytes, and the manifests without what says when and how
fast they were built (`harness.graph_bytes.differences`); it prints each difference and exits 1 if there is one.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from harness.graph_bytes import arrays_of, differences, table


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("graph", type=Path)
    ap.add_argument("--same-as", type=Path, help="another build of the graph: compare, exit 1 on any difference")
    args = ap.parse_args()
    print("\n".join(table(args.graph)))
    if args.same_as is not None:
        diffs = differences(args.graph, args.same_as)
        print("\n".join(diffs) if diffs else f"same graph as {args.same_as}: {len(arrays_of(args.graph))} arrays equal")
        sys.exit(1 if diffs else 0)


if __name__ == "__main__":
    main()
