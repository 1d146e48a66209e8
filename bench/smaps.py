"""Where a server process's memory is, from `/proc/PID/smaps`: each mapping put in a kind (the graph's mapped files,
numba's machine code, the malloc heap, Python's object arenas, thread stacks, other anonymous memory: numpy arrays)
and summed as RSS, PSS and private pages (those no other process maps: what the process holds to itself).

    python -m bench.smaps PID [GRAPH_DIR] [--top 15]

`bench/workers_memory.py --breakdown` prints the same for each process of a server after its traffic.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

_HEAD = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")
KINDS = (
    "graph files (mapped)",
    "other files (libraries)",
    "machine code (numba/LLVM)",
    "malloc heap (brk)",
    "Python object arenas",
    "malloc thread arenas",
    "thread stacks",
    "anonymous (numpy arrays)",
    "other",
)


@dataclass
class Mapping:
    """One line of smaps and its counters (kB)."""

    start: int
    size: int
    perms: str
    path: str
    kb: dict[str, int] = field(default_factory=dict)

    @property
    def private(self) -> int:
        return self.kb.get("Private_Clean", 0) + self.kb.get("Private_Dirty", 0)


def read_smaps(pid: int) -> list[Mapping]:
    """Every mapping of process `pid` with its smaps counters."""
    out: list[Mapping] = []
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            m = _HEAD.match(line)
            if m:
                a, b = int(m.group(1), 16), int(m.group(2), 16)
                out.append(Mapping(a, b - a, m.group(3), m.group(4).strip()))
            elif out:
                key, _, rest = line.partition(":")
                parts = rest.split()
                if len(parts) == 2 and parts[1] == "kB":
                    out[-1].kb[key] = int(parts[0])
    return out


def kind(m: Mapping, graph_dir: str | None) -> str:
    """The kind of memory a mapping holds, by its path, permissions and size (Python 3.11's object arenas are
    1 MiB anonymous maps, glibc's thread arenas 64 MiB reservations, thread stacks 8 MiB)."""
    if m.path:
        if graph_dir and m.path.startswith(graph_dir):
            return "graph files (mapped)"
        if m.path == "[heap]":
            return "malloc heap (brk)"
        if m.path.startswith("[stack"):
            return "thread stacks"
        return "other" if m.path.startswith("[") else "other files (libraries)"
    if "x" in m.perms:
        return "machine code (numba/LLVM)"
    if m.size == 1 << 20:
        return "Python object arenas"
    if m.size == 8 << 20:
        return "thread stacks"
    if m.size == 64 << 20 or m.perms.startswith("---"):
        return "malloc thread arenas"
    return "anonymous (numpy arrays)"


def breakdown(pid: int, graph_dir: str | Path | None = None) -> dict[str, Counter[str]]:
    """Per kind: rss, pss and private kB, and the number of mappings."""
    g = str(Path(graph_dir).resolve()) if graph_dir is not None else None
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for m in read_smaps(pid):
        c = out[kind(m, g)]
        c["rss"] += m.kb.get("Rss", 0)
        c["pss"] += m.kb.get("Pss", 0)
        c["private"] += m.private
        c["maps"] += 1
    return out


def largest(pid: int, graph_dir: str | Path | None = None, top: int = 15) -> list[tuple[Mapping, str]]:
    """The `top` mappings by PSS, with their kind."""
    g = str(Path(graph_dir).resolve()) if graph_dir is not None else None
    maps = sorted(read_smaps(pid), key=lambda m: -m.kb.get("Pss", 0))
    return [(m, kind(m, g)) for m in maps[:top]]


def table(pid: int, graph_dir: str | Path | None = None, title: str = "") -> str:
    """A markdown table of `breakdown`, in MiB, largest private first."""
    rows = breakdown(pid, graph_dir)
    lines = [title or f"process {pid}", "| kind | maps | RSS MiB | PSS MiB | private MiB |", "|---|---|---|---|---|"]
    total: Counter[str] = Counter()
    for k in sorted(rows, key=lambda k: -rows[k]["private"]):
        r = rows[k]
        total.update(r)
        mib = " | ".join(f"{r[c] / 1024:.1f}" for c in ("rss", "pss", "private"))
        lines.append(f"| {k} | {r['maps']} | {mib} |")
    lines.append(
        f"| total | {total['maps']} | {total['rss'] / 1024:.1f} | {total['pss'] / 1024:.1f} | "
        f"{total['private'] / 1024:.1f} |"
    )
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("pid", type=int)
    ap.add_argument("graph", type=Path, nargs="?")
    ap.add_argument("--top", type=int, default=15)
    args = ap.parse_args()
    print(table(args.pid, args.graph))
    print("\nlargest mappings by PSS:")
    for m, k in largest(args.pid, args.graph, args.top):
        kb = m.kb
        print(
            f"  {kb.get('Pss', 0) / 1024:7.1f} MiB PSS {kb.get('Rss', 0) / 1024:7.1f} RSS {m.private / 1024:7.1f} "
            f"private  {m.size / 2**20:8.1f} MiB {m.perms} {k}: {m.path or hex(m.start)}"
        )


if __name__ == "__main__":
    main()
