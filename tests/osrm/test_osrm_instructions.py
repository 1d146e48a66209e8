"""`language=` on OSRM's route, trip and match (issue 43, item 1): each step's `maneuver.instruction`, as OSRM's front
ends write it with osrm-text-instructions (leg index and count as leaflet-routing-machine passes them); answers
without `language` keep their bytes; an unknown language is a 400 `InvalidValue` listing the supported ones."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.api.instructions.compile import LANGUAGES, Options, compile
from harness import api_server

A, B, C = "7.4197,43.7311", "7.4246,43.7384", "7.4220,43.7350"


@pytest.fixture(scope="module")
def client(bundled_graph: Path):
    with httpx.Client(base_url=api_server.shared(bundled_graph), timeout=60.0) as c:
        yield c


def _strip(body: dict[str, Any], key: str = "routes") -> tuple[dict[str, Any], list[list[list[str]]]]:
    """The answer without its instructions, and the instructions per route, leg and step."""
    bare = copy.deepcopy(body)
    texts = [[[s["maneuver"].pop("instruction") for s in leg["steps"]] for leg in r["legs"]] for r in bare[key]]
    return bare, texts


def _expected(route: dict[str, Any], language: str) -> list[list[str]]:
    n = len(route["legs"])
    return [[compile(language, s, Options(i, n)) for s in leg["steps"]] for i, leg in enumerate(route["legs"])]


@pytest.mark.parametrize("language", ["en", "de"])
def test_route_steps_carry_instructions(client: httpx.Client, language: str) -> None:
    plain = client.get(f"/route/v1/driving/{A};{C};{B}", params={"steps": "true"})
    spoken = client.get(f"/route/v1/driving/{A};{C};{B}", params={"steps": "true", "language": language})
    assert spoken.status_code == 200, spoken.text
    bare, texts = _strip(spoken.json())
    assert bare == plain.json()  # only the instructions are added
    assert texts == [_expected(r, language) for r in bare["routes"]]
    first_leg, last_leg = texts[0]
    if language == "en":
        assert first_leg[0].startswith("Head ") and " on Tunnel Rocher Palais" in first_leg[0]
        assert first_leg[-1].startswith("You have arrived at your 1st destination")
        assert last_leg[-1].startswith("You have arrived at your destination")
        assert any(t.startswith("Turn left onto Avenue") for t in last_leg)
    else:
        assert first_leg[0].startswith("Fahren Sie Richtung ")
        assert first_leg[-1].startswith("Sie haben Ihr erste Ziel erreicht")
        assert any(t.startswith("Links abbiegen auf Avenue") for t in last_leg)


def test_trip_and_match_steps_carry_instructions(client: httpx.Client) -> None:
    trip = client.get(f"/trip/v1/driving/{A};{C};{B}", params={"steps": "true", "language": "fr"}).json()
    bare, texts = _strip(trip, "trips")
    assert texts == [_expected(r, "fr") for r in bare["trips"]] and texts[0][0][0].startswith("Se diriger vers")
    trace = "7.4197,43.7311;7.4205,43.7318;7.4212,43.7325"
    match = client.get(f"/match/v1/driving/{trace}", params={"steps": "true", "language": "zh-Hans"})
    assert match.status_code == 200, match.text
    bare, texts = _strip(match.json(), "matchings")
    assert texts == [_expected(r, "zh-Hans") for r in bare["matchings"]] and all(t for t in texts[0][0])


def test_without_language_or_steps_no_instruction(client: httpx.Client) -> None:
    body = client.get(f"/route/v1/driving/{A};{B}", params={"steps": "true"}).text
    assert "instruction" not in body
    no_steps = client.get(f"/route/v1/driving/{A};{B}", params={"language": "de"})
    assert no_steps.json() == client.get(f"/route/v1/driving/{A};{B}").json()


@pytest.mark.parametrize("service", ["route", "trip", "match"])
def test_unknown_language_is_a_400_listing_the_supported(client: httpx.Client, service: str) -> None:
    r = client.get(f"/{service}/v1/driving/{A};{B}", params={"steps": "true", "language": "xx"})
    assert r.status_code == 400
    body = r.json()
    assert body["code"] == "InvalidValue" and "'xx'" in body["message"]
    assert ", ".join(LANGUAGES) in body["message"]


def test_openapi_documents_language(client: httpx.Client) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for service in ("route", "trip", "match"):
        params = next(op for p, item in paths.items() if p.startswith(f"/{service}/v1") for op in item.values())
        doc = next(q for q in params["parameters"] if q["name"] == "language")["description"]
        assert "zh-Hans" in doc and "osrm-text-instructions" in doc


def test_grammar_reads_language() -> None:
    from app.api.osrm import grammar
    from app.engine.errors import EngineError

    assert grammar.parse(f"/route/v1/driving/{A};{B}", "language=pt-BR").options.language == "pt-BR"
    with pytest.raises(EngineError) as malformed:
        grammar.parse(f"/route/v1/driving/{A};{B}", "language=@@")
    assert malformed.value.code == "InvalidQuery"
    with pytest.raises(EngineError) as unknown:
        grammar.parse(f"/trip/v1/driving/{A};{B}", "language=xx")
    assert unknown.value.code == "InvalidValue" and "zh-Hans" in unknown.value.message
