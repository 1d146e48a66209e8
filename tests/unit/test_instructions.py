"""Text instructions (`app.api.instructions.compile`) agree with osrm-text-instructions 0.15.0 on its own test data.

The package's fixtures (vendored whole under tests/unit/text_instructions/, checked by tests/unit/test_vendor.py) are
of three kinds, all replayed in every language the package has: a step and its instruction per language (compiled
with the fixture's options, as the package's `index_test.js` does), a phrase filled with tokens (`phrase/`), and a
phrase looked up by its path (`arrive_upcoming/`, `arrive_short/`, ...: the pieces navigation front ends join). Its
grammar table (`grammar_test.js`: names in French grammatical forms) checks the grammar rules, JavaScript regular
expressions read by Python's `re`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from app.api.instructions.compile import (
    LANGUAGES,
    Options,
    UnknownLanguage,
    compile,
    direction_from_degree,
    grammarize,
    lane_config,
    phrase,
    phrases,
    tokenize,
    way_name,
)

HERE = Path(__file__).resolve().parent / "text_instructions"
FIXTURES = HERE / "fixtures" / "v5"
# the folders of phrase-path fixtures: the last key of the path
LOOKUPS = {"arrive_upcoming": "upcoming", "arrive_short": "short", "arrive_short_upcoming": "short-upcoming"}


def _fixtures() -> list[Path]:
    return sorted(FIXTURES.rglob("*.json"))


def _options(raw: dict[str, Any] | None) -> Options | None:
    if raw is None:
        return None
    return Options(
        leg_index=raw.get("legIndex"),
        leg_count=raw.get("legCount"),
        classes=tuple(raw.get("classes") or ()),
        waypoint_name=raw.get("waypointName"),
    )


def _replay(path: Path) -> list[tuple[str, Any, Any]]:
    """(language, expected, ours) for every language of one fixture file."""
    fixture = json.loads(path.read_text(encoding="utf-8"))
    folder = path.parent.name
    out = []
    if "step" in fixture:
        opts = _options(fixture.get("options"))
        for lang, want in fixture["instructions"].items():
            out.append((lang, want, compile(lang, fixture["step"], opts)))
    elif folder == "phrase":
        name = path.stem.replace("_", " ")
        for lang, want in fixture["phrases"].items():
            out.append((lang, want, tokenize(lang, phrases(lang)["v5"]["phrase"][name], fixture["options"])))
    else:
        key = "default" if path.stem == "no_modifier" else path.stem
        for lang, want in fixture["instructions"].items():
            out.append((lang, want, phrase(lang, "arrive", key, LOOKUPS[folder])))
    return out


def test_every_fixture_in_every_language() -> None:
    """All 764 fixture files of the package, each in its 31 languages, agree exactly."""
    files = _fixtures()
    assert len(files) == 764
    cases = bad = 0
    wrong: list[str] = []
    for path in files:
        for lang, want, ours in _replay(path):
            cases += 1
            if ours != want:
                bad += 1
                if len(wrong) < 20:
                    wrong.append(f"{path.relative_to(FIXTURES)} [{lang}]: want {want!r}, got {ours!r}")
    assert cases == 764 * len(LANGUAGES)
    assert not bad, f"{bad} of {cases} disagree:\n" + "\n".join(wrong)


def test_fixtures_cover_the_supported_languages_and_every_step_kind() -> None:
    steps = [json.loads(p.read_text(encoding="utf-8")) for p in _fixtures()]
    langs = {lang for f in steps for lang in f.get("instructions", f.get("phrases", {}))}
    assert langs == set(LANGUAGES)
    assert {"en", "de", "fr", "es", "it", "pt-BR", "nl", "pl", "ru", "zh-Hans"} <= langs
    kinds = {f["step"]["maneuver"]["type"] for f in steps if "step" in f}
    assert {"depart", "arrive", "turn", "roundabout", "rotary", "use lane", "off ramp", "notification"} <= kinds


def _js_strings(line: str) -> list[str]:
    return [re.sub(r"\\(.)", r"\1", s) for s in re.findall(r"'((?:[^'\\]|\\.)*)'", line)]


def _grammar_table() -> list[tuple[str, str, str, str]]:
    """(language, name, grammatical case, expected) rows of the package's grammar_test.js."""
    rows, lang = [], None
    for line in (HERE / "grammar_test.js").read_text(encoding="utf-8").splitlines():
        head = re.fullmatch(r"\s*'([a-zA-Z-]+)': \[", line)
        if head:
            lang = head.group(1)
        elif lang and re.match(r"\s*\['", line):
            name, case, want = _js_strings(line)
            rows.append((lang, name, case, want))
        elif line.startswith("};"):
            break
    return rows


def test_grammar_table() -> None:
    rows = _grammar_table()
    assert len(rows) == 463
    wrong = [(lang, n, c, w, got) for lang, n, c, w in rows if (got := grammarize(lang, n, c)) != w]
    assert not wrong, wrong[:10]


def test_russian_cases_and_token_formatting() -> None:
    """The package's index_test.js: grammar before formatting, capitalisation before formatting."""
    upper = Options(format_token=lambda tag, v: v.upper() if tag == "way_name" else v)
    got = tokenize("ru", "Плавно поверните налево на {way_name:accusative}", {"way_name": "Бармалеева улица"}, upper)
    assert got == "Плавно поверните налево на БАРМАЛЕЕВУ УЛИЦУ"
    strong = Options(format_token=lambda tag, v: f"<strong>{v}</strong>" if tag == "modifier" else v)
    assert tokenize("en", "{modifier} turns are prohibited here", {"modifier": "left"}, strong) == (
        "<strong>Left</strong> turns are prohibited here"
    )
    assert tokenize("en", "Can {first} {second}", {"first": "osrm"}) == "Can osrm {second}"
    assert tokenize("en", "Can {first} {second}", {"first": "", "second": "swim"}) == "Can swim"


@pytest.mark.parametrize(
    ("degree", "word"),
    [(0, "north"), (20, "north"), (21, "northeast"), (70, "east"), (111, "southeast"), (200, "south"),
     (201, "southwest"), (290, "west"), (291, "northwest"), (340, "north"), (360, "north"), (None, "")],
)  # fmt: skip
def test_direction_from_degree(degree: int | None, word: str) -> None:
    assert direction_from_degree("en", degree) == word


def test_direction_out_of_range_and_lanes_missing_are_errors() -> None:
    with pytest.raises(ValueError, match="Degree 361 invalid"):
        direction_from_degree("en", 361)
    with pytest.raises(ValueError, match="No lanes"):
        lane_config({"intersections": [{}]})
    assert lane_config({"intersections": [{"lanes": [{"valid": v} for v in (False, True, False, True)]}]}) == "xoxo"


def test_way_names() -> None:
    """The package's index_test.js way names: "name (ref)", the first ref, a motorway's numbered ref."""
    for ref, name, want in [("ref", "name", "Name (ref)"), ("ref; other", "name (ref; other)", "Name (ref)"),
                            ("ref1; ref2", "name (ref1; ref2)", "Name (ref1)"), ("", "", "")]:  # fmt: skip
        assert way_name("en", {"ref": ref, "name": name}) == want
    motorway = Options(classes=("motorway",))
    for ref, name, want in [("ref", "name", "name"), ("ref1", "name (ref1)", "ref1"), ("ref1; ref2", "name", "ref1")]:
        assert way_name("en", {"ref": ref, "name": name}, motorway) == want


def test_unknown_language_and_bad_steps() -> None:
    with pytest.raises(UnknownLanguage, match="supported: ar, ca, da, de, en"):
        compile("xx", {"maneuver": {"type": "turn", "modifier": "left"}})
    with pytest.raises(ValueError, match="Missing step maneuver modifier"):
        compile("en", {"maneuver": {"type": "turn"}})
    with pytest.raises(ValueError, match="No step maneuver"):
        compile("en", {"name": "x"})


def test_unknown_type_reads_as_a_turn_and_ferries_say_so() -> None:
    step = {"maneuver": {"type": "some future type", "modifier": "left"}, "name": "Quai Antoine 1er"}
    assert compile("en", step) == "Turn left onto Quai Antoine 1er"
    ferry = {"maneuver": {"type": "turn", "modifier": "left"}, "mode": "ferry", "name": ""}
    assert compile("de", ferry) == "Fähre nehmen"
