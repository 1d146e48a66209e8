"""OSRM's cucumber scenarios as starroute's tests and the parity oracle write them: a drawn map, ways, nodes and
relations tables, and the route tables; one OSM file for all of them (each shifted 0.05 degrees east), the requests
of a row, and the answer columns built as OSRM's test harness builds them (features/support/route.js).

Drawings follow OSRM's cucumber convention, not `harness.asciimap`'s: a character column is *half* a grid unit, a
row a whole one, letters are OSM nodes, digits are bare locations (route from/to points, not nodes). Ways default
to `highway=primary` and are named after their nodes unless the table has a `name` column (an empty cell: no name).
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

from harness import asciimap

SHIFT_E7 = 500_000  # scenarios lie 0.05 degrees (5.6 km) apart on the equator
IDS_PER_SCENARIO = 100


@dataclass(frozen=True)
class Scenario:
    """One OSRM-style scenario: the drawing, the ways (and node tags) tables, the expected route table."""

    drawing: str
    ways: str
    routes: str
    grid_m: float = 100.0
    nodes: str = ""
    source: str = ""  # the OSRM feature it comes from, if any
    options: dict[str, str] = field(default_factory=dict)
    relations: str = ""  # OSRM's relations tables (`type`, `way:from`, `node:via`, ... then tags), blank-separated


# --- the tables ----------------------------------------------------------------------------------------------------
def table(text: str) -> list[dict[str, str]]:
    """A cucumber table (`| a | b |` rows, the first the header) as dicts; `\\|` is a literal bar inside a cell."""
    rows = []
    for line in textwrap.dedent(text).strip().splitlines():
        cells = [c.strip().replace("\0", "|") for c in line.replace("\\|", "\0").strip().strip("|").split("|")]
        rows.append(cells)
    header, body = rows[0], rows[1:]
    assert all(len(r) == len(header) for r in body), f"ragged table:\n{text}"
    return [dict(zip(header, r, strict=True)) for r in body]


def positions(index: int, sc: Scenario) -> dict[str, tuple[int, int]]:
    """Map character -> (lon, lat) in 1e-7 degrees, OSRM's drawing convention (a column is half a grid unit)."""
    unit = asciimap.grid_unit_e7(sc.grid_m)
    return {
        ch: (asciimap.ORIGIN_LON_E7 + index * SHIFT_E7 + col * unit // 2, asciimap.ORIGIN_LAT_E7 - row * unit)
        for ch, (col, row) in asciimap.parse_map(sc.drawing).items()
    }


def _node_id(index: int, letter: str) -> int:
    return index * IDS_PER_SCENARIO + asciimap.node_id(letter)


def _tags(tags: dict[str, str]) -> str:
    return "".join(f"    <tag k={quoteattr(k)} v={quoteattr(v)}/>\n" for k, v in tags.items())


def scenario_osm(index: int, sc: Scenario) -> str:
    """The nodes and ways of one scenario as OSM XML elements (ways as OSRM's harness tags them)."""
    pos = positions(index, sc)
    node_tags = {r.pop("node"): {k: v for k, v in r.items() if v} for r in table(sc.nodes)} if sc.nodes else {}
    out = []
    for ch in sorted(pos, key=asciimap.node_id):
        if not ch.islower():
            continue  # digits are bare locations
        lon, lat = pos[ch]
        tags = node_tags.get(ch, {})
        attrs = f'id="{_node_id(index, ch)}" version="1" lat="{lat / 1e7:.7f}" lon="{lon / 1e7:.7f}"'
        out.append(f"  <node {attrs}>\n{_tags(tags)}  </node>\n" if tags else f"  <node {attrs}/>\n")
    for i, row in enumerate(table(sc.ways), start=1):
        nodes = row.pop("nodes")
        tags = {"highway": "primary"}
        tags.update({k: v for k, v in row.items() if v and k != "name"})
        if tags["highway"] == "(nil)":
            del tags["highway"]
        name = row.get("name", nodes)
        if name:
            tags["name"] = name
        refs = "".join(f'    <nd ref="{_node_id(index, ch)}"/>\n' for ch in nodes)
        out.append(f'  <way id="{index * IDS_PER_SCENARIO + i}" version="1">\n{refs}{_tags(tags)}  </way>\n')
    way_ids = {}
    for i, row in enumerate(table(sc.ways), start=1):
        way_ids.setdefault(row["nodes"], index * IDS_PER_SCENARIO + i)
    for i, row in enumerate(route_tables(sc.relations) if sc.relations else [], start=1):
        members, tags = [], {}
        for key, value in row.items():
            kind, _, role = key.partition(":")
            if kind in ("way", "node") and role:
                for ref in (r.strip() for r in value.split(",")):
                    missing = (index + 1) * IDS_PER_SCENARIO - 1  # a way the table does not draw: not in the file
                    rid = way_ids.get(ref, missing) if kind == "way" else _node_id(index, ref)
                    members.append(f'    <member type="{kind}" ref="{rid}" role="{role}"/>\n')
            elif value:
                tags[key] = value
        rel_id = index * IDS_PER_SCENARIO + i
        out.append(f'  <relation id="{rel_id}" version="1">\n{"".join(members)}{_tags(tags)}  </relation>\n')
    return "".join(out)


def all_osm(scenarios: dict[str, Scenario]) -> str:
    """Every scenario (of `scenarios`) in one OSM file (nodes, ways, relations, as OSM files
    order them)."""
    parts = [scenario_osm(i, sc) for i, sc in enumerate(scenarios.values())]
    body = [line for kind in ("node", "way", "relation") for p in parts for line in _elements(p, kind)]
    return '<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6">\n' + "".join(body) + "</osm>\n"


def _elements(xml: str, kind: str) -> Iterator[str]:
    """The top-level `<kind ...>` elements of a fragment, each as one string."""
    current: list[str] = []
    for line in xml.splitlines(keepends=True):
        if line.startswith("  <") and not line.startswith("  </"):
            if current:
                yield from ("".join(current),) if current[0].startswith(f"  <{kind} ") else ()
            current = [line]
        else:
            current.append(line)
    if current and current[0].startswith(f"  <{kind} "):
        yield "".join(current)


def request(name: str, row: dict[str, str], scenarios: dict[str, Scenario]) -> tuple[str, dict[str, str]]:
    """The OSRM route path and query of a table row (`from`/`to` or `waypoints`, optional `bearings`)."""
    index = list(scenarios).index(name)
    sc = scenarios[name]
    pos = positions(index, sc)
    points = row["waypoints"].split(",") if "waypoints" in row else [row["from"], row["to"]]
    coords = ";".join(f"{pos[p][0] / 1e7:.7f},{pos[p][1] / 1e7:.7f}" for p in points)
    query = {"steps": "true", **sc.options}
    if row.get("bearings"):
        query["bearings"] = ";".join(row["bearings"].split())
    return f"/route/v1/driving/{coords}", query


def _turn(step: dict) -> str:
    m = step["maneuver"]
    kind = m["type"]
    if kind in ("depart", "arrive"):
        return kind
    if kind == "roundabout":
        return f"roundabout-exit-{m.get('exit', 'undefined')}"
    if kind == "rotary":
        return f"{step.get('rotary_name', 'rotary')}-exit-{m.get('exit', 'undefined')}"
    if kind == "roundabout turn":
        return f"roundabout turn {m.get('modifier')} exit-{m.get('exit')}"
    return f"{kind} {m.get('modifier')}"


def _lanes(step: dict) -> str:
    return ";".join(
        " ".join(f"{';'.join(lane['indications'])}:{'true' if lane['valid'] else 'false'}" for lane in i["lanes"])
        if "lanes" in i
        else ""
        for i in step["intersections"]
    )


COLUMNS = {
    "route": lambda s: s["name"],
    "turns": _turn,
    "lanes": _lanes,
    "modes": lambda s: s["mode"],
    "ref": lambda s: s.get("ref", ""),
    "destinations": lambda s: s.get("destinations", ""),
    "exits": lambda s: s.get("exits", ""),
    "pronunciations": lambda s: s.get("pronunciation", ""),
}


def answer(body: dict, columns: list[str]) -> dict[str, str]:
    """The table columns of an OSRM route answer, as OSRM's harness writes them."""
    steps = [s for leg in body["routes"][0]["legs"] for s in leg["steps"]]
    return {c: ",".join(COLUMNS[c](s) for s in steps) for c in columns}


def route_tables(text: str) -> list[dict[str, str]]:
    """The rows of a scenario's route tables (blank lines separate tables with different columns)."""
    blocks = [b for b in re.split(r"\n\s*\n", textwrap.dedent(text).strip()) if b.strip()]
    return [row for b in blocks for row in table(b)]
