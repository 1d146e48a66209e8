"""Turn-by-turn guidance through a real server, written the way OSRM's cucumber features specify it.

Every scenario is a drawn map, a ways table and a `from | to | route | turns` table (plus `lanes`, `modes`, `ref`,
`destinations`, `exits`, `pronunciations`, `bearings` where they matter). The expected answers are what
osrm-routed (car.lua) answers on the same OSM data; they were checked one by one against it (`harness/osrm_peer.py`
has the binaries) and many maps are OSRM's own features (features/guidance/*.feature), cited per scenario.

Drawings follow OSRM's cucumber convention, not `harness.asciimap`'s: a character column is *half* a grid unit, a
row a whole one, letters are OSM nodes, digits are bare locations (route from/to points, not nodes). Ways default
to `highway=primary` and are named after their nodes unless the table has a `name` column (an empty cell: no name).
All scenarios go into one OSM file, each shifted 0.05 degrees east of the previous one (different node ids), so
one graph and one server answer them all; the server runs with `STARROUTE_MIN_COMPONENT_SIZE=1` because every
scenario is a small component of its own.

The answer columns are built as OSRM's test harness builds them (features/support/route.js): `route` the step
names, `turns` `type modifier` per step (`depart`/`arrive` bare, `roundabout-exit-N`, `<rotary_name>-exit-N`,
`roundabout turn <modifier> exit-N`), `lanes` per step the lanes of each intersection as `indications:valid`.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from harness import api_server
from harness.guidance_scenarios import (
    COLUMNS,
    Scenario,
    all_osm,
    answer,
    positions,
    request,
    route_tables,
    scenario_osm,
    table,
)
from preprocessing.pipeline import preprocess

SCENARIOS: dict[str, Scenario] = {
    # The most frequent difference: a waypoint on a node shared by several ways. OSRM starts on the road the
    # route leaves along and ends on the one it arrives on, with no zero-length step at either end.
    "waypoint on a junction node": Scenario(
        """
        a - - b - - c
              |
              |
              d
        """,
        """
        | nodes |
        | ab    |
        | bc    |
        | bd    |
        """,
        """
        | from | to | route    | turns                           |
        | a    | b  | ab,ab    | depart,arrive                   |
        | b    | a  | ab,ab    | depart,arrive                   |
        | b    | c  | bc,bc    | depart,arrive                   |
        | c    | b  | bc,bc    | depart,arrive                   |
        | b    | d  | bd,bd    | depart,arrive                   |
        | d    | b  | bd,bd    | depart,arrive                   |
        | a    | c  | ab,bc,bc | depart,new name straight,arrive |
        | a    | d  | ab,bd,bd | depart,turn right,arrive        |
        | d    | a  | bd,ab,ab | depart,turn left,arrive         |
        | c    | d  | bc,bd,bd | depart,turn left,arrive         |
        """,
    ),
    # A street that keeps its name across a bridge and a tunnel is one step; the name change after it is one.
    "bridges and tunnels": Scenario(
        """
        a - - b - - c - - d - - e



        f - - g - - h - - i
        """,
        """
        | nodes | name         | bridge | tunnel | layer |
        | ab    | Main Street  |        |        |       |
        | bc    | Main Street  | yes    |        | 1     |
        | cd    | Main Street  |        |        |       |
        | de    | Harbour Road |        |        |       |
        | fg    | Hill Road    |        |        |       |
        | gh    | Hill Road    |        | yes    | -1    |
        | hi    | Hill Road    |        |        |       |
        """,
        """
        | from | to | route                                 | turns                           |
        | a    | d  | Main Street,Main Street               | depart,arrive                   |
        | d    | a  | Main Street,Main Street               | depart,arrive                   |
        | a    | e  | Main Street,Harbour Road,Harbour Road | depart,new name straight,arrive |
        | e    | a  | Harbour Road,Main Street,Main Street  | depart,new name straight,arrive |
        | f    | i  | Hill Road,Hill Road                   | depart,arrive                   |
        | i    | f  | Hill Road,Hill Road                   | depart,arrive                   |
        """,
    ),
    # Turning to stay on the same street is `continue`, not silence.
    "continue on a turning street": Scenario(
        """
        a - - b - - c
              |
              d
        """,
        """
        | nodes | name |
        | abd   | Main |
        | bc    | Side |
        """,
        """
        | from | to | route          | turns                        |
        | a    | d  | Main,Main,Main | depart,continue right,arrive |
        | d    | a  | Main,Main,Main | depart,continue left,arrive  |
        | a    | c  | Main,Side,Side | depart,turn straight,arrive  |
        """,
        grid_m=50.0,
    ),
    # features/guidance/staggered-intersections.feature: a 2 m zig-zag across another street is collapsed away ...
    "staggered intersection": Scenario(
        """
            j
        a b c
            d
            e f g
            h
            i
        """,
        """
        | nodes  | highway     | name     |
        | abc    | residential | Oak St   |
        | efg    | residential | Oak St   |
        | jcdehi | residential | Cedar Dr |
        """,
        """
        | from | to | route         | turns         |
        | a    | g  | Oak St,Oak St | depart,arrive |
        | g    | a  | Oak St,Oak St | depart,arrive |
        """,
        grid_m=1.0,
        source="staggered-intersections.feature: Staggered Intersection: Oak St, Cedar Dr",
    ),
    # ... but not when the segment in between is long.
    "staggered intersection, long segment": Scenario(
        """
            j
        a b c
            |
            |
            d
            |
            |
            e f g
            h
            i
        """,
        """
        | nodes  | highway     | name     |
        | abc    | residential | Oak St   |
        | efg    | residential | Oak St   |
        | jcdehi | residential | Cedar Dr |
        """,
        """
        | from | to | route                         | turns                              |
        | a    | g  | Oak St,Cedar Dr,Oak St,Oak St | depart,turn right,turn left,arrive |
        | g    | a  | Oak St,Cedar Dr,Oak St,Oak St | depart,turn right,turn left,arrive |
        """,
        grid_m=1.0,
        source="staggered-intersections.feature: do not collapse if long segment in between",
    ),
    # features/guidance/collapse.feature: crossing a dual carriageway is one turn, its two halves one intersection;
    # turning back through it is `continue uturn`.
    "dual carriageway crossing": Scenario(
        """
            i l

        d   c b   a
        e   f g   h

            j k
        """,
        """
        | nodes | highway | name   | oneway |
        | ab    | primary | first  | yes    |
        | bc    | primary | first  | yes    |
        | cd    | primary | first  | yes    |
        | ef    | primary | first  | yes    |
        | fg    | primary | first  | yes    |
        | gh    | primary | first  | yes    |
        | ic    | primary | second | yes    |
        | bl    | primary | second | yes    |
        | kg    | primary | second | yes    |
        | fj    | primary | second | yes    |
        | cf    | primary | first  | yes    |
        | gb    | primary | first  | yes    |
        """,
        """
        | from | to | route                | turns                        |
        | a    | l  | first,second,second  | depart,turn right,arrive     |
        | a    | d  | first,first          | depart,arrive                |
        | a    | j  | first,second,second  | depart,turn left,arrive      |
        | a    | h  | first,first,first    | depart,continue uturn,arrive |
        | e    | l  | first,second,second  | depart,turn left,arrive      |
        | k    | d  | second,first,first   | depart,turn left,arrive      |
        | k    | l  | second,second        | depart,arrive                |
        | i    | l  | second,second,second | depart,continue uturn,arrive |
        """,
        grid_m=20.0,
        source="collapse.feature: Segregated Intersection, Cross Belonging to Single Street",
    ),
    "fork": Scenario(
        """
                c
        a   b
                d
        """,
        """
        | nodes |
        | ab    |
        | bc    |
        | bd    |
        """,
        """
        | from | to | route    | turns                           |
        | a    | c  | ab,bc,bc | depart,fork slight left,arrive  |
        | a    | d  | ab,bd,bd | depart,fork slight right,arrive |
        """,
        grid_m=10.0,
        source="fork.feature: Fork Same Road Class",
    ),
    # The issue: a fork shortly before a turn lost its `fork slight left`.
    "fork before a turn": Scenario(
        """
                          e
                          |
                    c - - f - - g
        a - - b
                    d - - h
        """,
        """
        | nodes | name  |
        | ab    | ab    |
        | bcfg  | upper |
        | bdh   | lower |
        | fe    | side  |
        """,
        """
        | from | to | route              | turns                                    |
        | a    | e  | ab,upper,side,side | depart,fork slight left,turn left,arrive |
        | a    | g  | ab,upper,upper     | depart,fork slight left,arrive           |
        | a    | h  | ab,lower,lower     | depart,fork slight right,arrive          |
        """,
        grid_m=20.0,
    ),
    "end of road": Scenario(
        """
            c
        a e b
          f d
        """,
        """
        | nodes |
        | aeb   |
        | cbd   |
        | ef    |
        """,
        """
        | from | to | route       | turns                           |
        | a    | c  | aeb,cbd,cbd | depart,end of road left,arrive  |
        | a    | d  | aeb,cbd,cbd | depart,end of road right,arrive |
        """,
        grid_m=10.0,
        source="end-of-road.feature: End of Road with through street",
    ),
    "off ramp": Scenario(
        """
        a-b-c-d-e
           `--f-g
        """,
        """
        | nodes | highway       | oneway |
        | abcde | motorway      |        |
        | bfg   | motorway_link | yes    |
        """,
        """
        | from | to | route         | turns                               |
        | a    | e  | abcde,abcde   | depart,arrive                       |
        | a    | g  | abcde,bfg,bfg | depart,off ramp slight right,arrive |
        """,
        grid_m=10.0,
        source="motorway.feature: Ramp Exit Right",
    ),
    "on ramp": Scenario(
        """
        a b c
          d
        """,
        """
        | nodes | highway       |
        | abc   | tertiary      |
        | bd    | motorway_link |
        """,
        """
        | from | to | route     | turns                       |
        | a    | d  | abc,bd,bd | depart,on ramp right,arrive |
        | c    | d  | abc,bd,bd | depart,on ramp left,arrive  |
        """,
        grid_m=10.0,
        source="ramp.feature: Ramp On Through Street Right",
    ),
    "merge onto a motorway": Scenario(
        """
        d
        a     b           c
        """,
        """
        | nodes | name | highway       | oneway |
        | abc   | A100 | motorway      | yes    |
        | db    |      | motorway_link | yes    |
        """,
        """
        | from | to | route      | turns                            |
        | d    | c  | ,A100,A100 | depart,merge slight right,arrive |
        """,
        grid_m=10.0,
        source="merge.feature: Merge onto a motorway",
    ),
    "roundabout": Scenario(
        """
            a
            b
        h g   c d
            e
            f
        """,
        """
        | nodes | junction   | name |
        | ab    |            | ab   |
        | cd    |            | cd   |
        | ef    |            | ef   |
        | gh    |            | gh   |
        | bgecb | roundabout |      |
        """,
        """
        | from | to | route       | turns                                                 |
        | a    | d  | ab,cd,cd,cd | depart,roundabout-exit-3,exit roundabout right,arrive |
        | a    | f  | ab,ef,ef,ef | depart,roundabout-exit-2,exit roundabout right,arrive |
        | a    | h  | ab,gh,gh,gh | depart,roundabout-exit-1,exit roundabout right,arrive |
        | d    | a  | cd,ab,ab,ab | depart,roundabout-exit-1,exit roundabout right,arrive |
        | f    | d  | ef,cd,cd,cd | depart,roundabout-exit-1,exit roundabout right,arrive |
        """,
        grid_m=30.0,
    ),
    "named rotary": Scenario(
        """
            a
            b
        h g   c d
            e
            f
        """,
        """
        | nodes | junction   | name        |
        | ab    |            | North Road  |
        | cd    |            | East Road   |
        | ef    |            | South Road  |
        | gh    |            | West Road   |
        | bgecb | roundabout | Siegesstern |
        """,
        """
        | from | to | route                                       | turns                                              |
        | a    | d  | North Road,East Road,East Road,East Road    | depart,Siegesstern-exit-3,exit rotary right,arrive |
        | a    | f  | North Road,South Road,South Road,South Road | depart,Siegesstern-exit-2,exit rotary right,arrive |
        | a    | h  | North Road,West Road,West Road,West Road    | depart,Siegesstern-exit-1,exit rotary right,arrive |
        """,
        grid_m=30.0,
        source="rotary.feature: Enter and Exit (named)",
    ),
    "small roundabout": Scenario(
        """
            a
            b
        h g   c d
            e
            f
        """,
        """
        | nodes | junction   |
        | ab    |            |
        | cd    |            |
        | ef    |            |
        | gh    |            |
        | bgecb | roundabout |
        """,
        """
        | from | to | route    | turns                                         |
        | a    | d  | ab,cd,cd | depart,roundabout turn left exit-3,arrive     |
        | a    | f  | ab,ef,ef | depart,roundabout turn straight exit-2,arrive |
        | a    | h  | ab,gh,gh | depart,roundabout turn right exit-1,arrive    |
        """,
        grid_m=3.0,
        source="roundabout-turn.feature: Enter and Exit",
    ),
    "u-turn at a dead end": Scenario(
        """
        a 1 b
        """,
        """
        | nodes |
        | ab    |
        """,
        """
        | waypoints | bearings   | route    | turns                        |
        | 1,a       | 90,2 270,2 | ab,ab,ab | depart,continue uturn,arrive |
        | 1,b       | 270,2 90,2 | ab,ab,ab | depart,continue uturn,arrive |
        """,
        source="via.feature: U-Turn In Bearings",
    ),
    "ferry": Scenario(
        """
        a b c
            d
            e f g
        """,
        """
        | nodes | highway | route | bicycle |
        | abc   | primary |       |         |
        | cde   | (nil)   | ferry | yes     |
        | efg   | primary |       |         |
        """,
        """
        | from | to | route           | turns                                              |
        | a    | g  | abc,cde,efg,efg | depart,notification right,notification left,arrive |
        | e    | c  | cde,cde         | depart,arrive                                      |
        | c    | g  | cde,efg,efg     | depart,notification left,arrive                    |

        | from | to | modes                         |
        | a    | g  | driving,ferry,driving,driving |
        | e    | c  | ferry,ferry                   |
        | c    | g  | ferry,driving,driving         |
        """,
        source="car/ferry.feature: Car - Use a ferry route",
    ),
    "turn lanes": Scenario(
        """
        a   b   c
            d
        """,
        """
        | nodes | turn:lanes | turn:lanes:forward | turn:lanes:backward  | name     |
        | ab    |            | through\\|right    |                      | in       |
        | bc    |            |                    | left\\|through\\|\\| | straight |
        | bd    |            |                    | left\\|right         | right    |
        """,
        """
        | from | to | route                | turns                           |
        | a    | c  | in,straight,straight | depart,new name straight,arrive |
        | a    | d  | in,right,right       | depart,turn right,arrive        |
        | c    | a  | straight,in,in       | depart,new name straight,arrive |
        | c    | d  | straight,right,right | depart,turn left,arrive         |

        | from | to | lanes                                            |
        | a    | c  | ,straight:true right:false,                      |
        | a    | d  | ,straight:false right:true,                      |
        | c    | a  | ,left:false straight:true none:true none:true,   |
        | c    | d  | ,left:true straight:false none:false none:false, |
        """,
        grid_m=5.0,
        source="turn-lanes.feature: Basic Turn Lane 3-way Turn with empty lanes",
    ),
    "ref and pronunciation": Scenario(
        """
        a b d
          1
          c
        """,
        """
        | nodes | name     | name:pronunciation | ref |
        | ab    | My Way   |                    |     |
        | bd    | My Way   | meyeway            | A1  |
        | cd    | Your Way | yourewaye          |     |
        """,
        """
        | from | to | route             | pronunciations      | ref |
        | a    | d  | My Way,My Way     | ,meyeway            | ,A1 |
        | 1    | c  | Your Way,Your Way | yourewaye,yourewaye | ,   |
        """,
        grid_m=5.0,
        source="car/names.feature: Car - A named street with pronunciation",
    ),
    "exit numbers and destinations": Scenario(
        """
        a . . b . c . . d
                ` e . . f
        """,
        """
        | nodes | highway       | name     | junction:ref | destination | destination:ref | oneway |
        | abcd  | motorway      | MainRoad |              |             |                 | yes    |
        | be    | motorway_link | ExitRamp | 3            | Berlin      | A1              | yes    |
        | ef    | motorway_link | ExitRamp |              | Berlin      | A1              | yes    |
        """,
        """
        | from | to | route                      | turns                               | exits |
        | a    | f  | MainRoad,ExitRamp,ExitRamp | depart,off ramp slight right,arrive | ,3,   |

        | from | to | destinations           |
        | a    | f  | ,A1: Berlin,A1: Berlin |
        """,
        grid_m=10.0,
        nodes="""
        | node | highway           |
        | b    | motorway_junction |
        """,
        source="exit-numbers-names.feature: Exit number on the way after the motorway junction",
    ),
    # A route from a point to itself (features/guidance/trimming.feature's Regression Test 2754 on a 0.1 m grid, whose
    # nodes all round to one point): every candidate road there meets itself at weight 0 in osrm-routed's search, which
    # keeps the last meeting, so the zero-metre route runs along the road arriving at the point with the most weight
    # behind it (`Legs.same_place`), not along the nearest road.
    "route to itself: the longest road arriving": Scenario(
        """
        a - - - - - - - - - - b - - c
                              |
                              d
        """,
        """
        | nodes |
        | ab    |
        | bc    |
        | bd    |
        """,
        """
        | from | to | route |
        | b    | b  | ab,ab |
        | a    | a  | ab,ab |
        | c    | c  | bc,bc |
        """,
        grid_m=10.0,
    ),
    "route to itself: the longest road arriving, against its way": Scenario(
        """
        a - - b - - - - - - - - - - c
              |
              d
        """,
        """
        | nodes |
        | ab    |
        | bc    |
        | bd    |
        """,
        """
        | from | to | route |
        | b    | b  | bc,bc |
        """,
        grid_m=10.0,
    ),
    "route to itself: inside a road": Scenario(
        """
        a - - 1 - - - - - b - - - - - 2 - - c
        """,
        """
        | nodes |
        | abc   |
        """,
        """
        | from | to | route   |
        | 1    | 1  | abc,abc |
        | b    | b  | abc,abc |
        | 2    | 2  | abc,abc |
        """,
        grid_m=10.0,
    ),
}


ROWS = [(name, row) for name, sc in SCENARIOS.items() for row in route_tables(sc.routes)]


# --- the server ----------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    tmp = tmp_path_factory.mktemp("guidance")
    osm = tmp / "scenarios.osm"
    osm.write_text(all_osm(SCENARIOS), encoding="utf-8")
    graph = preprocess(osm, tmp / "graph", profile="car", ch=True, landmarks=0, force=True, quiet=True)
    base = api_server.shared(graph, env={"STARROUTE_MIN_COMPONENT_SIZE": "1"})
    with httpx.Client(base_url=base, timeout=30.0) as c:
        yield c


def _row_id(name: str, row: dict[str, str]) -> str:
    points = row.get("waypoints") or f"{row['from']},{row['to']}"
    return f"{name}: {points} ({'+'.join(c for c in row if c in COLUMNS)})"


@pytest.mark.parametrize(("name", "row"), ROWS, ids=[_row_id(n, r) for n, r in ROWS])
def test_route_table(client: httpx.Client, name: str, row: dict[str, str]) -> None:
    path, query = request(name, row, SCENARIOS)
    body = client.get(path, params=query).json()
    assert body["code"] == "Ok", body
    columns = [c for c in row if c in COLUMNS]
    assert answer(body, columns) == {c: row[c] for c in columns}


@pytest.mark.parametrize(
    ("name", "point", "bearing"),
    [
        ("route to itself: the longest road arriving", "a", 270),
        ("route to itself: the longest road arriving", "b", 90),
        ("route to itself: the longest road arriving", "c", 90),
        ("route to itself: the longest road arriving, against its way", "b", 270),
        ("route to itself: inside a road", "1", 270),
        ("route to itself: inside a road", "b", 270),
        ("route to itself: inside a road", "2", 90),
    ],
)
def test_route_to_itself_direction(client: httpx.Client, name: str, point: str, bearing: int) -> None:
    """The zero-metre route from a point to itself goes as osrm-routed's: along the candidate direction with the most
    weight behind the point, the reverse one on a tie (`b`, halfway along `abc`: 4.9 s either way)."""
    path, query = request(name, {"from": point, "to": point}, SCENARIOS)
    steps = client.get(path, params=query).json()["routes"][0]["legs"][0]["steps"]
    assert steps[0]["maneuver"]["bearing_after"] == bearing


def test_scenarios_are_apart() -> None:
    """Scenarios must not overlap, or a route could wander into its neighbour."""
    spans = []
    for i, sc in enumerate(SCENARIOS.values()):
        lons = [lon for lon, _ in positions(i, sc).values()]
        spans.append((min(lons), max(lons)))
    assert all(a[1] + 10_000 < b[0] for a, b in zip(spans, spans[1:], strict=False))


def test_table_parser() -> None:
    rows = table(
        """
        | nodes | turn:lanes:forward | name |
        | ab    | left\\|through     |      |
        """
    )
    assert rows == [{"nodes": "ab", "turn:lanes:forward": "left|through", "name": ""}]
    osm = scenario_osm(0, Scenario("a b", "| nodes | name |\n| ab | |", "| from | to |\n| a | b |"))
    assert 'k="name"' not in osm and 'v="primary"' in osm and osm.count("<node ") == 2
    path, _ = request("fork", {"from": "a", "to": "c"}, SCENARIOS)
    assert path.startswith("/route/v1/driving/") and path.count(";") == 1
