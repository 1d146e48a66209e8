"""Access, barrier and oneway rules beside osrm-routed, tag combination by tag combination.

    python -m harness.osrm_tags                     # car, bike and foot, every combination
    python -m harness.osrm_tags --profile foot

Each combination is one short road hanging off a shared road (`Case`: the road's tags, or a plain road through a
node with the tags): both programs preprocess the same drawn maps (harness/asciimap.py, 20 roads a map, OSRM with
its own Lua profile), and a route down the road and one back up go to both servers with `radiuses=5`, so a closed
road answers NoSegment rather than snapping elsewhere. An answer agrees when the status, the distance (0.1 m) and
the duration (0.1 s) do. Needs the `osrm-bindings` wheel (`harness/osrm_peer.py`).
"""

from __future__ import annotations

import argparse
import string
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import httpx

from harness.osrm_peer import URL_PROFILES as URL_PROFILE
from harness.osrm_peer import both_servers, ensure_osrm

ROAD = {"highway": "residential"}


@dataclass(frozen=True)
class Case:
    """A road's tags and the tags of a node in its middle (a plain road through a tagged node, or the reverse)."""

    way: tuple[tuple[str, str], ...] = tuple(ROAD.items())
    node: tuple[tuple[str, str], ...] = ()

    def label(self) -> str:
        return " ".join(f"{k}={v}" for k, v in (self.way if self.way != tuple(ROAD.items()) else ()) + self.node)


def way(**tags: str) -> Case:
    return Case(way=tuple(tags.items()))


def node(**tags: str) -> Case:
    return Case(node=tuple(tags.items()))


def _t(**tags: str) -> dict[str, str]:
    return tags


WAYS = [
    way(**t)
    for t in (
        _t(highway="residential"), _t(highway="primary", motorroad="yes"),
        _t(highway="tertiary", proposed="secondary"), _t(highway="proposed"),
        _t(highway="residential", access="no", bicycle="yes"), _t(highway="residential", access="no", foot="yes"),
        _t(highway="residential", vehicle="no"), _t(highway="cycleway", bicycle="no"),
        _t(highway="footway", bicycle="yes"), _t(highway="footway", bicycle="designated"),
        _t(highway="cycleway", foot="no"), _t(highway="cycleway", foot="yes"),
        _t(highway="path", bicycle="no", foot="designated"), _t(leisure="track"),
        _t(highway="track", access="agricultural"), _t(highway="residential", access="destination"),
        _t(highway="service", service="parking_aisle"), _t(highway="motorway"), _t(highway="trunk", bicycle="no"),
        _t(highway="primary", foot="use_sidepath"), _t(highway="primary", bicycle="use_sidepath"),
        _t(highway="residential", cycleway="opposite", oneway="yes"),
        _t(highway="residential", oneway="yes", **{"oneway:bicycle": "no"}),
        _t(highway="residential", oneway="yes", **{"cycleway:left": "opposite_lane"}),
        _t(highway="pedestrian"), _t(highway="pedestrian", bicycle="yes"), _t(highway="steps", bicycle="yes"),
        _t(highway="bridleway"), _t(highway="bridleway", bicycle="yes"),
        _t(highway="residential", access="private", foot="yes"),
        _t(highway="construction", construction="residential"), _t(highway="residential", construction="minor"),
        _t(highway="living_street"), _t(highway="road"), _t(highway="unclassified", motor_vehicle="no"),
        _t(highway="residential", motorcar="no"), _t(highway="residential", access="customers"),
        _t(highway="residential", psv="yes", access="no"), _t(highway="service", access="delivery"),
        _t(highway="track", tracktype="grade5"), _t(highway="residential", area="yes"), _t(railway="platform"),
        _t(public_transport="platform"), _t(man_made="pier"), _t(highway="residential", oneway="-1"),
        _t(highway="residential", **{"oneway:foot": "yes"}), _t(highway="cycleway", oneway="yes"),
        _t(highway="path", access="no", bicycle="permissive"), _t(highway="residential", impassable="yes"),
        _t(highway="residential", status="impassable"), _t(highway="residential", maxspeed="10"),
        _t(highway="residential", surface="sand"), _t(highway="track", motor_vehicle="forestry"),
        _t(highway="residential", bicycle="dismount"), _t(highway="service", service="driveway"),
        _t(highway="residential", access="no", motor_vehicle="destination"), _t(highway="footway", access="no"),
        _t(highway="residential", foot="no", access="yes"), _t(highway="path"), _t(highway="path", foot="no"),
        _t(highway="track", access="forestry", foot="yes"), _t(highway="residential", oneway="reversible"),
        _t(highway="motorway_link", foot="yes"), _t(highway="primary", sidewalk="no"),
        _t(highway="residential", sidewalk="separate"), _t(highway="residential", sidewalk="separate", foot="yes"),
        _t(highway="residential", **{"sidewalk:left": "separate", "foot:forward": "yes"}),
        _t(highway="steps", conveying="forward"), _t(highway="footway", conveying="backward"),
        _t(highway="steps", conveying="forward", oneway="no"), _t(highway="residential", access="permit"),
        _t(highway="service", service="emergency_access"), _t(highway="residential", toll="yes"),
        _t(highway="residential", oneway="alternating"), _t(highway="track", access="yes"),
        _t(highway="residential", oneway="yes", cycleway="opposite_track"),
        _t(highway="residential", oneway="yes", **{"cycleway:right": "lane"}),
        _t(highway="footway", footway="sidewalk"), _t(highway="path", bicycle="designated", surface="gravel"),
        _t(highway="trunk"), _t(highway="motorway", bicycle="yes"), _t(railway="train", bicycle="yes"),
        _t(highway="residential", bicycle="destination"), _t(highway="residential", hov="designated"),
    )
]  # fmt: skip
NODES = [
    node(**t)
    for t in (
        _t(barrier="gate"), _t(barrier="bollard"), _t(barrier="fence"), _t(barrier="fence", sensory="audible"),
        _t(barrier="wall"), _t(barrier="yes"), _t(barrier="kissing_gate"), _t(barrier="cycle_barrier"),
        _t(barrier="lift_gate", access="no"), _t(access="private"), _t(highway="crossing", access="no"),
        _t(barrier="bollard", foot="no"), _t(bicycle="no"), _t(barrier="gate", access="yes"),
        _t(barrier="gate", access="private", foot="yes"), _t(barrier="block"), _t(barrier="chain"),
        _t(barrier="border_control"), _t(barrier="toll_booth"), _t(barrier="entrance"), _t(barrier="stile"),
        _t(barrier="bollard", bollard="rising"), _t(barrier="gate", locked="yes"), _t(ford="yes"),
        _t(barrier="sump_buster"), _t(barrier="height_restrictor"), _t(barrier="jersey_barrier"),
        _t(barrier="fence", sensory="audio"), _t(barrier="gate", bicycle="dismount"),
    )
]  # fmt: skip
CASES = WAYS + NODES
PER_MAP = 20  # three letters a road (62 letters, digits and both cases)
LETTERS = string.ascii_lowercase + string.ascii_uppercase + string.digits


@dataclass
class Answer:
    case: Case
    direction: str  # "down" the road from the shared road, or "up" it
    ours: tuple
    theirs: tuple

    @property
    def agree(self) -> bool:
        a, b = self.ours, self.theirs
        if a[0] != b[0]:
            return False
        return len(a) == 1 or (abs(a[1] - b[1]) <= 0.1 + 1e-9 and abs(a[2] - b[2]) <= 0.1 + 1e-9)


def drawing_for(cases: list[Case]) -> tuple[str, list, dict, list[tuple[str, str]]]:
    """A drawn map: a shared road along the top, each case a road two rows down from it (200 m apart) through a
    middle node; (drawing, ways, node tags, (top, bottom) letter per case)."""
    n = len(cases)
    assert 3 * n <= len(LETTERS)
    it = iter(LETTERS)
    cols = [(next(it), next(it), next(it)) for _ in range(n)]
    rows = [[" "] * (2 * n) for _ in range(3)]
    for i, (top, mid, bot) in enumerate(cols):
        rows[0][2 * i], rows[1][2 * i], rows[2][2 * i] = top, mid, bot
    ways = [(cols[i][0] + cols[i + 1][0], {"highway": "residential", "name": "Shared"}) for i in range(n - 1)]
    nodes = {}
    for i, c in enumerate(cases):
        ways.append(("".join(cols[i]), {**dict(c.way), "name": f"T{i}"}))
        if c.node:
            nodes[cols[i][1]] = dict(c.node)
    return "\n".join("".join(r) for r in rows), ways, nodes, [(t, b) for t, _, b in cols]


def _answer(body: dict) -> tuple:
    if body.get("code") != "Ok":
        return (body.get("code", "?"),)
    r = body["routes"][0]
    return ("Ok", round(float(r["distance"]), 1), round(float(r["duration"]), 1))


def run(profile: str, cases: list[Case], bin_dir: Path, work: Path) -> list[Answer]:
    """Both programs on maps of `cases`; two answers (down, up) per case."""
    from harness import asciimap

    out: list[Answer] = []
    for start in range(0, len(cases), PER_MAP):
        chunk = cases[start : start + PER_MAP]
        drawing, ways, nodes, ends = drawing_for(chunk)
        d = work / f"{profile}-{start}"
        d.mkdir(parents=True, exist_ok=True)
        osm = d / "map.osm"
        osm.write_text(asciimap.to_osm(drawing, ways, nodes=nodes))
        coords = asciimap.coordinates(drawing)
        env = {"STARROUTE_MIN_COMPONENT_SIZE": "1"}
        with both_servers(bin_dir, osm, profile, env) as (ours_url, theirs_url), httpx.Client(timeout=60.0) as c:
            for case, (top, bot) in zip(chunk, ends, strict=True):
                for a, b, direction in ((top, bot, "down"), (bot, top, "up")):
                    pts = ";".join(f"{coords[x][0] / 1e7:.6f},{coords[x][1] / 1e7:.6f}" for x in (a, b))
                    path, params = f"/route/v1/{URL_PROFILE[profile]}/{pts}", {"radiuses": "5;5"}
                    ours = _answer(c.get(ours_url + path, params=params).json())
                    theirs = _answer(c.get(theirs_url + path, params=params).json())
                    out.append(Answer(case, direction, ours, theirs))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--profile", choices=["car", "bike", "foot"], action="append")
    args = ap.parse_args(argv)
    bin_dir = ensure_osrm(Path(tempfile.gettempdir()) / "starroute-osrm")
    if bin_dir is None:
        print("osrm-bindings cannot be installed here", file=sys.stderr)
        return 2
    work = Path(tempfile.mkdtemp(prefix="osrm-tags-"))
    for profile in args.profile or ["car", "bike", "foot"]:
        answers = run(profile, CASES, bin_dir, work)
        good = sum(a.agree for a in answers)
        print(f"{profile}: {good} of {len(answers)} answers agree ({len(CASES)} tag combinations, down and up)")
        for a in answers:
            if not a.agree:
                print(f"    {a.direction:4} {a.case.label():60} ours {a.ours}  osrm {a.theirs}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
