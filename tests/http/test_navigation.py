"""Mapbox Directions' navigation fields on OSRM's `/route/v1` (`voice_instructions=true`, `banner_instructions=true`):
built from the same maneuvers and text as `maneuver.instruction`, in Mapbox's shapes; on synthetic steps (when
things are said, in which words) and on a real server over the bundled Monaco."""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api.instructions.navigation import add_navigation, ssml
from harness import api_server
from tests.osrm.test_osrm_api import coords_path, random_points


def _step(kind: str, distance: float, duration: float, name: str = "", modifier: str | None = "left", **kw) -> dict:
    maneuver: dict[str, Any] = {"type": kind, "location": [7.42, 43.73], "bearing_before": 0, "bearing_after": 90}
    if modifier is not None:
        maneuver["modifier"] = modifier
    return {"maneuver": maneuver, "name": name, "distance": distance, "duration": duration, "mode": "driving", **kw}


def _leg() -> list[dict]:
    return [
        _step("depart", 1200.0, 60.0, "Rue Grimaldi", modifier=None),  # 20 m/s: said 200 m before the turn
        _step("turn", 80.0, 10.0, "Avenue de la Costa"),  # too short for two announcements
        _step("turn", 300.0, 30.0, "", modifier="right", ref="D6007", destinations="Nice, Menton"),
        _step("arrive", 0.0, 0.0, "", modifier="right"),
    ]


def _voice(steps: list[dict]) -> list[list[tuple[float, str]]]:
    return [[(v["distanceAlongGeometry"], v["announcement"]) for v in s["voiceInstructions"]] for s in steps]


def test_when_and_what_is_said() -> None:
    legs = [{"steps": _leg()}]
    add_navigation(legs, "en", voice_instructions=True, banner_instructions=False, units="metric")
    steps = legs[0]["steps"]
    assert _voice(steps) == [
        [
            (1200.0, "Head east on Rue Grimaldi"),
            (1000.0, "In 1 kilometer, turn left onto Avenue de la Costa"),
            (200.0, "Turn left onto Avenue de la Costa"),
        ],
        [(80.0, "Turn right towards Nice")],  # signposted destinations first, as the text instructions do
        [
            (200.0, "In 200 meters, you will arrive at your destination, on the right"),
            (100.0, "You have arrived at your destination, on the right"),
        ],
        [],
    ]
    assert all("bannerInstructions" not in s for s in steps)
    v = steps[0]["voiceInstructions"][1]
    assert (
        v["ssmlAnnouncement"]
        == ssml(v["announcement"])
        == (
            '<speak><amazon:effect name="drc"><prosody rate="1.08">In 1 kilometer, turn left onto Avenue de la Costa'
            "</prosody></amazon:effect></speak>"
        )
    )
    assert ssml("A & B <x>").count("&amp;") == 1 and "&lt;x&gt;" in ssml("A & B <x>")


def test_imperial_units_and_other_languages() -> None:
    legs = [{"steps": _leg()}]
    add_navigation(legs, "en", voice_instructions=True, banner_instructions=False, units="imperial")
    assert _voice(legs[0]["steps"])[0][1] == (804.7, "In half a mile, turn left onto Avenue de la Costa")
    legs = [{"steps": _leg()}]
    add_navigation(legs, "de", voice_instructions=True, banner_instructions=False, units="metric")
    said = _voice(legs[0]["steps"])[0]
    assert said[1] == (1000.0, "In 1 km, links abbiegen auf Avenue de la Costa")
    assert said[2] == (200.0, "Links abbiegen auf Avenue de la Costa")


def test_a_short_first_step_links_the_departure_to_the_next_maneuver() -> None:
    steps = [_step("depart", 40.0, 4.0, "Rue Grimaldi", modifier=None), _step("arrive", 0.0, 0.0, "", modifier=None)]
    add_navigation([{"steps": steps}], "en", voice_instructions=True, banner_instructions=True, units="metric")
    assert _voice(steps)[0] == [(40.0, "Head east on Rue Grimaldi, then you have arrived at your destination")]


def test_banners_show_the_next_maneuver() -> None:
    legs = [{"steps": _leg()}]
    add_navigation(legs, "en", voice_instructions=False, banner_instructions=True, units="metric")
    steps = legs[0]["steps"]
    assert [len(s["bannerInstructions"]) for s in steps] == [1, 1, 1, 0]
    first = steps[0]["bannerInstructions"][0]
    assert first == {
        "distanceAlongGeometry": 1200.0,
        "primary": {
            "text": "Avenue de la Costa",
            "components": [{"text": "Avenue de la Costa", "type": "text"}],
            "type": "turn",
            "modifier": "left",
        },
        "secondary": None,
    }
    second = steps[1]["bannerInstructions"][0]
    assert second["primary"]["text"] == "D6007" and second["primary"]["modifier"] == "right"
    assert second["secondary"] == {
        "text": "Nice, Menton", "components": [{"text": "Nice, Menton", "type": "text"}], "type": "turn",
        "modifier": "right",
    }  # fmt: skip
    arrive = steps[2]["bannerInstructions"][0]["primary"]
    assert arrive["type"] == "arrive" and arrive["text"] == "You have arrived at your destination, on the right"


@pytest.fixture(scope="module")
def client(bundled_graph: Path):
    with httpx.Client(base_url=api_server.shared(bundled_graph), timeout=60.0) as c:
        yield c


@pytest.fixture(scope="module")
def points(bundled_graph: Path) -> list[tuple[float, float]]:
    from app.engine.data import load

    return random_points(load(bundled_graph), 8, 11)


@pytest.mark.parametrize("language", ["en", "de"])
def test_route_steps_carry_them_in_the_instruction_s_words(client: httpx.Client, points, language: str) -> None:
    for a, b in zip(points[::2], points[1::2], strict=True):
        params = {"steps": "true", "voice_instructions": "true", "banner_instructions": "true", "language": language}
        body = client.get(f"/route/v1/driving/{coords_path([a, b])}", params=params).json()
        assert body["code"] == "Ok", body
        route = body["routes"][0]
        assert route["voiceLocale"] == language
        steps = route["legs"][0]["steps"]
        assert steps[-1]["voiceInstructions"] == [] == steps[-1]["bannerInstructions"]
        assert steps[0]["voiceInstructions"][0]["announcement"].startswith(steps[0]["maneuver"]["instruction"])
        for step, nxt in zip(steps, steps[1:], strict=False):
            said = step["voiceInstructions"]
            assert said and all(set(v) == {"distanceAlongGeometry", "announcement", "ssmlAnnouncement"} for v in said)
            along = [v["distanceAlongGeometry"] for v in said]
            assert along == sorted(along, reverse=True) and along[0] <= step["distance"] and along[-1] >= 0
            assert said[-1]["announcement"].endswith(nxt["maneuver"]["instruction"][1:])
            assert all(v["ssmlAnnouncement"] == ssml(v["announcement"]) for v in said)
            assert escape(said[-1]["announcement"]) in said[-1]["ssmlAnnouncement"]
            (shown,) = step["bannerInstructions"]
            assert shown["distanceAlongGeometry"] == step["distance"]
            primary = shown["primary"]
            assert primary["type"] == nxt["maneuver"]["type"] and primary.get("modifier") == nxt["maneuver"].get(
                "modifier"
            )
            assert primary["text"] in (nxt["name"], nxt["maneuver"]["instruction"]) or nxt.get("ref")
            assert primary["components"][-1] == {"text": primary["text"], "type": "text"}


def test_without_them_answers_are_unchanged_and_they_need_steps(client: httpx.Client, points) -> None:
    path = f"/route/v1/driving/{coords_path(points[:2])}"
    plain = client.get(path, params={"steps": "true", "language": "en"}).json()
    asked = client.get(path, params={"steps": "true", "language": "en", "voice_instructions": "true",
                                     "voice_units": "metric"}).json()  # fmt: skip
    for step, with_voice in zip(plain["routes"][0]["legs"][0]["steps"], asked["routes"][0]["legs"][0]["steps"],
                                strict=True):  # fmt: skip
        assert "voiceInstructions" not in step and "bannerInstructions" not in step
        assert {k: v for k, v in with_voice.items() if k != "voiceInstructions"} == step
        assert "bannerInstructions" not in with_voice
    r = client.get(path, params={"voice_instructions": "true"})
    assert r.status_code == 400 and r.json()["code"] == "InvalidValue" and "steps=true" in r.json()["message"]
    r = client.get(path, params={"steps": "true", "voice_units": "furlongs"})
    assert r.status_code == 400 and r.json()["code"] == "InvalidQuery"


def test_a_via_point_is_the_nth_destination() -> None:
    legs = [{"steps": _leg()}, {"steps": _leg()}]
    add_navigation(legs, "en", voice_instructions=True, banner_instructions=False, units="metric")
    first, last = _voice(legs[0]["steps"])[2], _voice(legs[1]["steps"])[2]
    assert first == [
        (200.0, "In 200 meters, you will arrive at your 1st destination, on the right"),
        (100.0, "You have arrived at your 1st destination, on the right"),
    ]
    assert last[0] == (200.0, "In 200 meters, you will arrive at your destination, on the right")
