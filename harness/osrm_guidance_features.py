"""OSRM's guidance features beside osrm-routed: every car scenario of features/guidance/*.feature, both servers.

    python -m harness.osrm_guidance_features --features DIR [--only roundabout,collapse] [--show 20]
                                            [--record tests/osrm/guidance_features.json]

DIR holds OSRM's `.feature` files (e.g. `git -C osrm-backend archive HEAD features/guidance | tar x`). The car
scenarios drawn with a node map (not `node locations`, not a profile file) of every feature go side by side into one
OSM file, as `tests/osrm/test_guidance_http.py` draws them (its harness: OSRM's drawing convention, ways tagged as
OSRM's
harness tags them, relations); osrm-routed 26.10 (car.lua, `harness/osrm_peer.py`) and starroute serve it, and every
row of the scenarios' route tables goes to both. A row agrees when the columns OSRM's harness compares (`route` the
step names, `turns` type/modifier/exit, `lanes`, `modes`, `ref`, `destinations`, `exits`, `pronunciations`) are
equal in both answers. The feature files' own expectations are not used: osrm-routed's answer is the reference.

`--record FILE` writes the scenarios and osrm-routed's answers with whether starroute agreed (the JSON that
`tests/osrm/test_guidance_features.py` replays). One line per feature: agreeing rows / rows.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import httpx

from harness.guidance_scenarios import COLUMNS, Scenario, all_osm, answer, positions, request, route_tables
from harness.osrm_peer import both_servers, ensure_osrm

MAX_SPAN_E7 = 400_000  # a scenario must fit in 0.04 degrees (scenarios lie 0.05 apart)


def parse_feature(text: str) -> tuple[dict[str, Scenario], list[str]]:
    """The drawable car scenarios of one feature file (title -> Scenario) and the titles skipped, with why."""
    lines = text.splitlines()
    profile, grid = "car", 100.0
    scenarios: dict[str, Scenario] = {}
    skipped: list[str] = []
    cur: dict[str, Any] | None = None
    i = 0

    def flush() -> None:
        if cur is None:
            return
        why = cur["why"] or ("" if cur["drawing"] and cur["routes"] else "no node map or route table")
        if cur["profile"] != "car":
            why = why or f"profile {cur['profile']}"
        if why:
            skipped.append(f"{cur['title']}: {why}")
            return
        title = cur["title"]
        while title in scenarios:
            title += "'"
        sc = Scenario(
            drawing=cur["drawing"],
            ways="\n".join(cur["ways"]),
            routes="\n\n".join("\n".join(t) for t in cur["routes"]),
            grid_m=cur["grid"],
            nodes="\n".join(cur["nodes"]),
            relations="\n\n".join("\n".join(t) for t in cur["relations"]),
        )
        try:
            route_tables(sc.routes), route_tables(sc.ways), route_tables(sc.relations), route_tables(sc.nodes)
        except AssertionError:
            skipped.append(f"{cur['title']}: a table the harness does not read")
            return
        scenarios[title] = sc

    def read_table(start: int) -> tuple[list[str], int]:
        rows = []
        j = start
        while j < len(lines) and (lines[j].strip().startswith("|") or lines[j].strip().startswith("#")):
            if lines[j].strip().startswith("|"):
                rows.append(re.sub(r" *(?<!\\)\| *", " | ", lines[j].strip()).strip())  # no padding
            j += 1
        return rows, j

    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if line.startswith("Scenario"):
            flush()
            title = line.split(":", 1)[1].strip()
            todo = i >= 2 and "@todo" in lines[i - 2]
            cur = dict(title=title, profile=profile, grid=grid, drawing="", ways=[], nodes=[], relations=[])
            cur.update(routes=[], why="@todo" if todo else "")
            continue
        m = re.search(r'the profile "(\w+)"', line)
        if m:
            if cur is None:
                profile = m.group(1)
            else:
                cur["profile"] = m.group(1)
            continue
        m = re.search(r"a grid size of ([\d.]+) meters", line)
        if m:
            if cur is None:
                grid = float(m.group(1))
            else:
                cur["grid"] = float(m.group(1))
            continue
        if cur is None:
            continue
        if "the node map" in line:
            while i < len(lines) and not lines[i].strip().startswith('"""'):
                i += 1
            i += 1
            body = []
            while i < len(lines) and not lines[i].strip().startswith('"""'):
                body.append(lines[i])
                i += 1
            i += 1
            cur["drawing"] = "\n".join(body)
        elif re.search(r"the ways$", line):
            cur["ways"], i = read_table(i)
        elif re.search(r"the nodes$", line):
            cur["nodes"], i = read_table(i)
        elif "the relations" in line:
            rows, i = read_table(i)
            cur["relations"].append(rows)
        elif "I route I should get" in line:
            rows, i = read_table(i)
            cur["routes"].append(rows)
        elif re.search(r"node locations|profile file|query options|the extract extra|raster|I request|contract", line):
            cur["why"] = cur["why"] or line
    flush()
    for title in list(scenarios):
        lons = [lon for lon, _ in positions(0, scenarios[title]).values()]
        if not lons or max(lons) - min(lons) > MAX_SPAN_E7:
            skipped.append(f"{title}: too wide to sit beside the others")
            del scenarios[title]
    return scenarios, skipped


def compare(ours: str, theirs: str, scenarios: dict[str, Scenario]) -> list[dict[str, Any]]:
    """Every route row of `scenarios` sent to both servers: the row, both answers, agreement."""
    out = []
    with httpx.Client(timeout=30.0) as client:
        for name, sc in scenarios.items():
            for row in route_tables(sc.routes):
                if not (row.get("waypoints") or (row.get("from") and row.get("to"))):
                    continue
                columns = [c for c in row if c in COLUMNS]
                path, query = request(name, row, scenarios)
                answers = []
                for base in (ours, theirs):
                    body = client.get(base + path, params=query).json()
                    answers.append(answer(body, columns) if body.get("code") == "Ok" else {"code": body.get("code")})
                out.append(
                    dict(scenario=name, row=row, ours=answers[0], osrm=answers[1], agree=answers[0] == answers[1])
                )
    return out


def run(bin_dir: Path, files: list[Path], work: Path) -> tuple[dict[str, dict[str, Scenario]], list[dict], list[str]]:
    """Every feature's scenarios in one map (keys `feature: title`, in file order: the record keeps it, so the test
    draws each scenario where osrm-routed saw it), both servers, every row compared."""
    per: dict[str, dict[str, Scenario]] = {}
    skipped: list[str] = []
    combined: dict[str, Scenario] = {}
    for path in files:
        scenarios, skip = parse_feature(path.read_text(encoding="utf-8"))
        per[path.stem] = scenarios
        skipped += [f"{path.stem}: {s}" for s in skip]
        combined.update({f"{path.stem}: {t}": sc for t, sc in scenarios.items()})
    osm = work / "map.osm"
    osm.write_text(all_osm(combined), encoding="utf-8")
    with both_servers(bin_dir, osm, "car", env={"STARROUTE_MIN_COMPONENT_SIZE": "1"}) as (ours, theirs):
        return per, compare(ours, theirs, combined), skipped


def _request_cells(row: dict[str, str]) -> dict[str, str]:
    """The cells of a row that make its request (the answer columns are osrm-routed's, recorded beside)."""
    return {k: v for k, v in row.items() if k in ("waypoints", "from", "to", "bearings")}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--features", type=Path, required=True)
    ap.add_argument("--only", default="", help="comma-separated feature names (file stems)")
    ap.add_argument("--osrm-dir", type=Path, default=Path("/tmp/starroute-osrm"))
    ap.add_argument("--show", type=int, default=10, help="differing rows to print per feature")
    ap.add_argument("--record", type=Path, help="write scenarios and osrm-routed's answers as JSON")
    args = ap.parse_args(argv)
    bin_dir = ensure_osrm(args.osrm_dir)
    if bin_dir is None:
        return 2
    files = sorted(args.features.glob("*.feature"))
    if args.only:
        files = [f for f in files if f.stem in args.only.split(",")]
    with tempfile.TemporaryDirectory() as tmp:
        per, rows, skipped = run(bin_dir, files, Path(tmp))
    record: dict[str, Any] = {}
    for feature, scenarios in per.items():
        mine = [r for r in rows if r["scenario"].split(": ", 1)[0] == feature]
        n_ok = sum(r["agree"] for r in mine)
        n_skip = sum(s.startswith(f"{feature}: ") for s in skipped)
        print(f"{feature}: {n_ok}/{len(mine)} rows agree ({len(scenarios)} scenarios, {n_skip} skipped)")
        for r in [r for r in mine if not r["agree"]][: args.show]:
            print(f"  {r['scenario']} {r['row'].get('waypoints') or r['row']['from'] + ',' + r['row']['to']}")
            for c in r["osrm"]:
                if r["ours"].get(c) != r["osrm"][c]:
                    print(f"    {c}: osrm      {r['osrm'][c]}\n    {c}: starroute {r['ours'].get(c)}")
        record[feature] = dict(
            scenarios={k: {**vars(v), "routes": ""} for k, v in scenarios.items()},  # rows hold the routes
            rows=[
                dict(
                    scenario=r["scenario"].split(": ", 1)[1],
                    row=_request_cells(r["row"]),
                    osrm=r["osrm"],
                    agree=r["agree"],
                )
                for r in mine
            ],
        )
    print(f"total: {sum(r['agree'] for r in rows)}/{len(rows)} rows agree")
    if args.record:  # in file order, not sorted: the order places the scenarios on the map
        args.record.write_text(json.dumps(record, indent=0) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
