"""A gate's penalty (60 s for a car) is said in the steps: the OSRM step passing it lists it in `penalties`, and the
map page shows it beside the instruction; the graph keeps where such penalties are (`pen_*`)."""

from __future__ import annotations

from pathlib import Path

import httpx

from harness import api_server, asciimap
from preprocessing.osm.penalties import ARRAYS


def test_gate_penalty_in_the_steps(tmp_path: Path) -> None:
    built = asciimap.build(
        tmp_path,
        """
        a b c
            d
        """,
        ways=[("abc", {"highway": "residential"}), ("cd", {"highway": "residential"})],
        nodes={"b": {"barrier": "gate"}, "d": {"highway": "traffic_signals"}},
        profile="car",
    )
    g = built.graph
    for name, dtype, _ in ARRAYS:
        assert str(getattr(g, name).dtype) == dtype
    assert g.pen_ds.tolist() == [600]  # the gate; the 2 s traffic signal is not worth a word
    base = api_server.shared(Path(g.path), env={"STARROUTE_MIN_COMPONENT_SIZE": "1"})

    def lonlat(letter: str) -> str:
        x, y = built.coords[letter]
        return f"{x / 1e7},{y / 1e7}"

    r = httpx.get(f"{base}/route/v1/driving/{lonlat('a')};{lonlat('d')}", params={"steps": "true"}).json()
    assert r["code"] == "Ok", r
    steps = r["routes"][0]["legs"][0]["steps"]
    said = [(i, p) for i, s in enumerate(steps) for p in s.get("penalties", [])]
    assert len(said) == 1, steps
    i, p = said[0]
    assert p["duration"] == 60.0 and p["location"] == [round(float(v), 6) for v in lonlat("b").split(",")]
    assert steps[i]["duration"] >= 60.0  # the step that pays for it
    back = httpx.get(f"{base}/route/v1/driving/{lonlat('c')};{lonlat('d')}", params={"steps": "true"}).json()
    assert not any("penalties" in s for s in back["routes"][0]["legs"][0]["steps"])  # no gate on the way
