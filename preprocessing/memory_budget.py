"""How much memory a preprocess will need, how much the machine has, and what the pipeline does about it.

Two estimates, both from measured peaks (`docs/DESIGN.md`, "Scale", issue 45):

- before the run, from the extract's size (`run_estimate`): each stage's peak RSS is a base plus MiB per MiB of PBF,
  a line through two of the tiled networks measured by `bench/scale.py` (1 M, 3 M and 20 M OSM nodes: 8.58, 25.2 and
  171.6 MiB of PBF): reading through the 1 M and 20 M read peaks (208, 1,723 MiB); build graph through 3 M and 20 M
  (1,328, 7,679: above the 1 M's 540, on the safe side); the search stages beside the contraction through the 1 M
  run's peak (692) and the 20 M run's (7,679, which build graph holds: an upper bound for them there), one after the
  other the 1 M `--low-memory` peak (638) on the same slope. So the printed estimate meets the measured peaks at 1 M
  and 20 M, is some 6 % above at 3 M, and at 10 M (85.4 MiB, not in the fit) says 3,939 / 3,987 for 3,951 measured;
- before the search stages, from the search graph's nodes (`search_extra_mib`): what each stage adds above its start,
  measured alone on the 1 M search graph (410,774 nodes): the CH 193 MiB, the CCH order 134, 16 landmarks 72.

The pipeline prints the first, stops before reading anything when the machine clearly cannot hold the smallest
(`NotEnoughMemory`, unless forced), builds the CCH order and landmarks beside the contraction only when the three
stages' sum fits the available memory with a margin, and checks again before each heavy stage.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

AVAILABLE_ENV = "STARROUTE_AVAILABLE_MIB"  # the machine's available memory, said instead of read (tests, a budget)

# bases (MiB) and MiB of peak per MiB of PBF of each stage's line (the module's docstring: which measured runs)
BASE_READ_MIB = 128.0
READ_PER_MIB = 9.29
BASE_BUILD_MIB = 234.0
BUILD_PER_MIB = 43.4
BASE_AFTER_MIB = 270.0
BASE_BESIDE_MIB = 324.0
SEARCH_PER_MIB = 42.9
# PBF bytes per byte of the XML formats (Monaco: 334 kB .osm.gz, 3.1 MB .osm, 184 kB once pyosmium wrote it as PBF)
FORMAT_FACTOR = {".osm.gz": 0.55, ".osm": 0.059}  # others as PBF (.osm.bz2: more bytes per node, so more)

# bytes per search node each search stage adds above its start (alone on the 1 M search graph)
CH_BYTES_PER_NODE = 493.0
CCH_BYTES_PER_NODE = 342.0
LANDMARK_BYTES_PER_NODE = 11.5  # per landmark
MARGIN = 1.25  # beside only when the sum times this fits
MARGIN_MIB = 128.0


class NotEnoughMemory(Exception):
    """The machine's available memory cannot hold a stage; the message is one sentence and says what to do."""


class RunEstimate(NamedTuple):
    """Peak RSS in MiB of a whole preprocess: the search stages one after the other (`after`) or beside (`beside`)."""

    after: float
    beside: float


def _mib_of_pbf(path: Path) -> float:
    name = path.name.lower()
    factor = next((f for suffix, f in FORMAT_FACTOR.items() if name.endswith(suffix)), 1.0)
    return path.stat().st_size * factor / 2**20


def run_estimate(path: Path) -> RunEstimate:
    """The whole run's peak from the extract's size: the largest stage's, each stage a base plus MiB per MiB of PBF."""
    mib = _mib_of_pbf(path)
    read = BASE_READ_MIB + READ_PER_MIB * mib
    build = BASE_BUILD_MIB + BUILD_PER_MIB * mib
    after = BASE_AFTER_MIB + SEARCH_PER_MIB * mib
    beside = BASE_BESIDE_MIB + SEARCH_PER_MIB * mib
    return RunEstimate(max(read, build, after), max(read, build, beside))


def build_estimate(path: Path) -> float:
    """The build graph stage's peak (MiB), from the extract's size."""
    return BASE_BUILD_MIB + BUILD_PER_MIB * _mib_of_pbf(path)


class SearchExtra(NamedTuple):
    """MiB each search stage adds above its start."""

    ch: float
    cch: float
    landmarks: float

    def beside(self) -> float:
        """The three at once: their peaks stack."""
        return self.ch + self.cch + self.landmarks

    def after(self) -> float:
        """One after the other: the largest (the CH's arrays, 53 of its 193 MiB at 1 M, stay: inside the margin)."""
        return max(self.ch, self.cch, self.landmarks)


def search_extra_mib(nodes: int, ch: bool, cch: bool, landmarks: int, hierarchies_at_once: int = 1) -> SearchExtra:
    """What the contraction (`hierarchies_at_once` contracting together), the CCH order and `landmarks` landmarks
    each add above their start on a search graph of `nodes` nodes."""
    mib = nodes / 2**20
    return SearchExtra(
        CH_BYTES_PER_NODE * mib * hierarchies_at_once if ch else 0.0,
        CCH_BYTES_PER_NODE * mib if cch else 0.0,
        LANDMARK_BYTES_PER_NODE * landmarks * mib,
    )


def fits_beside(extra: SearchExtra, available: float | None) -> bool:
    """Whether the three search stages' peaks, stacked, fit the available memory with a margin (unknown: yes)."""
    return available is None or extra.beside() * MARGIN + MARGIN_MIB <= available


def available_mib() -> float | None:
    """The memory this process can still take, in MiB: `STARROUTE_AVAILABLE_MIB` if set, else the smaller of the
    kernel's MemAvailable and the cgroup's limit less its usage; None where neither can be read."""
    said = os.environ.get(AVAILABLE_ENV)
    if said:
        return float(said)
    found: list[float] = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append(int(line.split()[1]) / 1024)
    except OSError:
        pass
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        if limit != "max":
            used = int(Path("/sys/fs/cgroup/memory.current").read_text())
            found.append((int(limit) - used) / 2**20)
    except (OSError, ValueError):
        pass
    return min(found) if found else None


def rss_mib() -> float:
    """This process's resident set now, in MiB (0 where /proc cannot say)."""
    try:
        return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError, IndexError):
        return 0.0


def require(stage: str, extra: float, force: bool) -> None:
    """Stop with `NotEnoughMemory` before `stage` when it will take more than the available memory (MiB); `force`:
    go on regardless."""
    available = available_mib()
    if force or available is None or extra <= available:
        return
    raise NotEnoughMemory(
        f"{stage} needs about {extra:,.0f} MiB more and this machine has {available:,.0f} MiB available: "
        "no graph was written (free memory, try a smaller extract, or --force-memory to run anyway)"
    )
