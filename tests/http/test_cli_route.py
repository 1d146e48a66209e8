"""`starroute route` on the bundled Monaco: the answer, and what a point off the map gets told (which option, how far
the nearest road is, whether lon and lat look swapped), as the native API tells it."""

from __future__ import annotations

from pathlib import Path

import httpx

from harness import api_server
from tests.unit.test_preprocess_cli import invoke

FROM, TO = "7.4197,43.7311", "7.4246,43.7384"


def test_route_prints_its_figures(bundled_graph: Path) -> None:
    res = invoke("route", str(bundled_graph), "--from", FROM, "--to", TO)  # 207.0 s with OSRM 26.10's turn costs
    assert res.exit_code == 0 and res.output.startswith("distance 1806.") and "duration 207.0 s" in res.output


def test_a_point_off_the_map_says_how_far_and_hints_at_swapped_coordinates(bundled_graph: Path) -> None:
    cases = [  # (arguments, the option named, words of the snapper's message)
        (["--from", "0,0", "--to", TO], "--from", ["within 1000 m of (0.0, 0.0)", "the nearest is", "km away"]),
        (["--from", FROM, "--to", "43.7384,7.4246"], "--to", ["did you swap them?", "(7.4246, 43.7384) is"]),
        (["--from", FROM, "--via", "7.5,43.8", "--to", TO], "--via #1", ["the nearest is", "m away", "--radius"]),
    ]
    for args, option, words in cases:
        res = invoke("route", str(bundled_graph), *args)
        assert res.exit_code == 2, res.output
        line = res.output.strip()
        assert line.startswith(f"starroute: error: {option}: no road segment within 1000 m"), line
        assert all(w in line for w in words), (words, line)
        assert "coordinate 0" not in line and "Traceback" not in res.output
    # the native API's message for the same point, word for word
    base = api_server.shared(bundled_graph)
    api = httpx.get(f"{base}/route", params={"from": FROM, "to": "43.7384,7.4246"}, timeout=60).json()["message"]
    cli = invoke("route", str(bundled_graph), "--from", FROM, "--to", "43.7384,7.4246").output.strip()
    assert api.endswith(cli.split("--to: ", 1)[1]), (api, cli)
    wider = invoke("route", str(bundled_graph), "--from", FROM, "--via", "7.5,43.8", "--to", TO, "--radius", "8000")
    assert wider.exit_code == 0, wider.output
