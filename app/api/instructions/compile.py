"""Text instructions from OSRM route steps: osrm-text-instructions 0.15.0's `index.js` in Python, over its own
phrase and grammar data (`data/`, vendored unmodified from the npm tarball: BSD-2-Clause, `data/LICENSE.txt`).

`compile(language, step, options)` takes a RouteStep as OSRM writes it (a dict: `maneuver` with `type`, `modifier`,
`exit`, `bearing_after`; `name`, `ref`, `destinations`, `exits`, `rotary_name`, `junction_name`, `mode`,
`driving_side`, `intersections[0].lanes`) and gives the sentence the package gives, rule for rule: the way name
(`name`, `ref`, "name (ref)", the motorway class), the phrase by type and modifier (modes such as ferry first;
roundabout and rotary exits; lanes), the signage it names (exit and destination, destination, exit, junction,
name, waypoint), then the tokens filled in with the language's grammar cases and its capitalisation. The dialects
of other engines (Valhalla, GraphHopper) build their own steps' text from the same function.

Where JavaScript's semantics matter they are kept: a missing value (`undefined`) leaves its `{token}` in the text,
`String.replace` with a string replaces once, a missing `ref` is the text "undefined" in the "name (ref)" clean-up.
Checked against every fixture of the package's test suite (tests/unit/test_instructions.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"
VERSION = "v5"  # the OSRM API version the phrases are for
# osrm-text-instructions' `languages.js` (its list, in its order)
LANGUAGES: tuple[str, ...] = tuple(
    "ar ca da de en eo es es-ES fi fr he hu id it ja ko my nl no pl pt-BR pt-PT ro ru sl sv tr uk vi yo zh-Hans".split()
)
_TOKEN = re.compile(r"\{(\w+)(?::(\w+))?\}", re.ASCII)  # JavaScript's \w is ASCII
_JS_GROUP = re.compile(r"\$(\d|&|\$)")
_DIGIT = re.compile(r"\d", re.ASCII)


class UnknownLanguage(ValueError):
    """A language code osrm-text-instructions has no phrases for."""


@dataclass(frozen=True)
class Options:
    """`compile`'s options (the package's `opts`): the leg of the step and the number of legs (which waypoint an
    arrival reaches: "your 1st destination"), the road classes of the step (a motorway says its ref rather than its
    name), a name for the leg's destination, and a function formatting each token's value before it is inserted."""

    leg_index: int | None = None
    leg_count: int | None = None
    classes: tuple[str, ...] = ()
    waypoint_name: str | None = None
    format_token: Callable[[str, str], str] | None = field(default=None, compare=False)


@cache
def phrases(language: str) -> dict[str, Any]:
    """A language's phrase file (`translations/<language>.json`: `meta` and the `v5` phrases), read once."""
    if language not in LANGUAGES:
        raise UnknownLanguage(f"language {language!r} is not supported; supported: {', '.join(LANGUAGES)}")
    with open(DATA / "translations" / f"{language}.json", encoding="utf-8") as f:
        out: dict[str, Any] = json.load(f)
    return out


@cache
def _grammar(language: str) -> dict[str, list[tuple[re.Pattern[str], str, int]]]:
    """A language's grammar rules by case (`grammar/<language>.json`) as compiled patterns, Python replacement
    templates and counts (0: every match, the JavaScript flag `g`; 1: the first); none for most languages."""
    path = DATA / "grammar" / f"{language}.json"
    if not path.exists():
        return {}
    with open(path, encoding="utf-8") as f:
        raw = json.load(f)
    flags = raw.get("meta", {}).get("regExpFlags", "")
    re_flags = re.IGNORECASE if "i" in flags else 0
    count = 0 if "g" in flags else 1
    return {
        case: [(re.compile(pattern, re_flags), _python_template(repl), count) for pattern, repl in rules]
        for case, rules in raw.get(VERSION, {}).items()
    }


def _python_template(js: str) -> str:
    """A JavaScript replacement string (`$1`, `$&`, `$$`) as a template for `re.sub` (backslashes literal)."""
    escaped = js.replace("\\", "\\\\")
    return _JS_GROUP.sub(
        lambda m: "$" if m.group(1) == "$" else f"\\g<{0 if m.group(1) == '&' else m.group(1)}>", escaped
    )


def capitalize_first_letter(language: str, text: str) -> str:
    """The first letter upper-cased as `toLocaleUpperCase(language)` does (Turkish: i -> İ)."""
    if not text:
        return text
    first = text[0]
    if language == "tr" and first in "iı":
        upper = "İ" if first == "i" else "I"
    else:
        upper = first.upper()
    return upper + text[1:]


def ordinalize(language: str, number: int) -> str:
    """`1` -> "1st" in the language (up to the 10th; '' beyond)."""
    return str(phrases(language)[VERSION]["constants"]["ordinalize"].get(str(number), ""))


def direction_from_degree(language: str, degree: float | None) -> str:
    """A bearing (0-360 degrees) as a compass direction word; '' without a bearing."""
    if degree is None:
        return ""
    d = phrases(language)[VERSION]["constants"]["direction"]
    for lo, hi, name, closed in _COMPASS:
        if (lo <= degree <= hi) if closed else (lo < degree < hi):
            return str(d[name])
    raise ValueError(f"Degree {degree} invalid")


_COMPASS = (
    (0, 20, "north", True),
    (20, 70, "northeast", False),
    (70, 110, "east", True),
    (110, 160, "southeast", False),
    (160, 200, "south", True),
    (200, 250, "southwest", False),
    (250, 290, "west", True),
    (290, 340, "northwest", False),
    (340, 360, "north", True),
)


def lane_config(step: Mapping[str, Any]) -> str:
    """The step's lanes contracted to a diagram: a run of valid lanes is `o`, of others `x` (`xoo` -> "xo")."""
    inters = step.get("intersections")
    if not inters or not inters[0].get("lanes"):
        raise ValueError("No lanes object")
    config: list[str] = []
    current = None
    for lane in inters[0]["lanes"]:
        valid = lane.get("valid")
        if current is None or current != valid:
            config.append("o" if valid else "x")
            current = valid
    return "".join(config)


def _js_str(value: Any) -> str:
    """JavaScript's `'' + value`: undefined, null and booleans as their names."""
    if value is None:
        return "undefined"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def way_name(language: str, step: Mapping[str, Any], options: Options | None = None) -> str:
    """The name the instruction gives the road: "name (ref)", the name, the ref (of a motorway with a numbered ref,
    or of a road without a name), with the first of several refs."""
    opts = options or Options()
    fmt = opts.format_token
    name = step.get("name") or ""
    ref = (step.get("ref") or "").split(";")[0]
    if name == step.get("ref"):  # the name was the ref (Mapbox's way of filling an empty name)
        name = ""
    name = name.replace(" (" + _js_str(step.get("ref")) + ")", "", 1)
    motorway = "motorway" in opts.classes
    if name and ref and name != ref and not motorway:
        phrase = (
            phrases(language)[VERSION]["phrase"].get("name and ref") or phrases("en")[VERSION]["phrase"]["name and ref"]
        )
        return tokenize(language, phrase, {"name": name, "ref": ref}, opts)
    if (name and ref and motorway and _DIGIT.search(ref)) or (not name and ref):
        return fmt("ref", ref) if fmt else ref
    return fmt("name", name) if fmt else name


def compile(language: str, step: Mapping[str, Any], options: Options | None = None) -> str:  # noqa: A001
    """The instruction for one OSRM RouteStep in `language` (one of `LANGUAGES`), e.g. "Turn left onto Rue Grimaldi".

    Raises `UnknownLanguage` for a language without phrases, `ValueError` for a step without a maneuver type, or
    without a modifier where the type needs one. A type the phrases do not know reads as a turn (OSRM's rule for
    clients)."""
    if not language:
        raise ValueError("No language code provided")
    v5 = phrases(language)[VERSION]
    maneuver = step.get("maneuver")
    if not maneuver:
        raise ValueError("No step maneuver provided")
    opts = options or Options()
    kind = maneuver.get("type")
    modifier = maneuver.get("modifier")
    side = step.get("driving_side")
    if not kind:
        raise ValueError("Missing step maneuver type")
    if kind not in ("depart", "arrive") and not modifier:
        raise ValueError("Missing step maneuver modifier")
    if not v5.get(kind):
        kind = "turn"

    mode = step.get("mode")
    modes = v5["modes"]
    if mode is not None and modes.get(mode):
        obj = modes[mode]
    else:
        omit_side = kind == "off ramp" and side is not None and side in modifier
        by_type = v5[kind]
        obj = (
            by_type[modifier]
            if modifier is not None and by_type.get(modifier) and not omit_side
            else by_type["default"]
        )

    lane_instruction = None
    if kind == "use lane":
        lane_instruction = v5["constants"]["lanes"].get(lane_config(step))
        if not lane_instruction:  # an unknown lane combination: "continue straight"
            obj = v5["use lane"]["no_lanes"]
    elif kind in ("rotary", "roundabout"):
        exit_ = maneuver.get("exit")
        if step.get("rotary_name") and exit_ and obj.get("name_exit"):
            obj = obj["name_exit"]
        elif step.get("rotary_name") and obj.get("name"):
            obj = obj["name"]
        elif exit_ and obj.get("exit"):
            obj = obj["exit"]
        else:
            obj = obj["default"]

    name = way_name(language, step, opts)
    destinations_text, exits_text = step.get("destinations"), step.get("exits")
    if destinations_text and exits_text and obj.get("exit_destination"):
        instruction = obj["exit_destination"]
    elif destinations_text and obj.get("destination"):
        instruction = obj["destination"]
    elif exits_text and obj.get("exit"):
        instruction = obj["exit"]
    elif step.get("junction_name") and obj.get("junction_name"):
        instruction = obj["junction_name"]
    elif name and obj.get("name"):
        instruction = obj["name"]
    elif opts.waypoint_name and obj.get("named"):
        instruction = obj["named"]
    else:
        instruction = obj["default"]

    first_destination = ""
    if destinations_text:
        parts = destinations_text.split(": ")
        destination_ref = parts[0].split(",")[0]
        destination = parts[1].split(",")[0] if len(parts) > 1 else ""
        if destination and destination_ref:
            first_destination = destination_ref + ": " + destination
        else:
            first_destination = destination_ref or destination or ""

    nth = ""
    if opts.leg_index is not None and opts.leg_index >= 0 and opts.leg_index != _minus_one(opts.leg_count):
        nth = ordinalize(language, opts.leg_index + 1)

    tokens: dict[str, Any] = {
        "way_name": name,
        "destination": first_destination,
        "exit": (exits_text or "").split(";")[0],
        "exit_number": ordinalize(language, maneuver.get("exit") or 1),
        "rotary_name": step.get("rotary_name"),
        "lane_instruction": lane_instruction,
        "modifier": v5["constants"]["modifier"].get(modifier) if modifier is not None else None,
        "direction": direction_from_degree(language, maneuver.get("bearing_after")),
        "nth": nth,
        "waypoint_name": opts.waypoint_name,
        "junction_name": (step.get("junction_name") or "").split(";")[0],
    }
    return tokenize(language, instruction, tokens, opts)


def _minus_one(count: int | None) -> float:
    """`legCount - 1` as JavaScript computes it (undefined - 1 is NaN, equal to nothing)."""
    return float("nan") if count is None else count - 1


def grammarize(language: str, name: str, case: str | None) -> str:
    """`name` in a grammatical case of the language (`{way_name:accusative}`) by its grammar rules, else as it is."""
    if not case:
        return name
    rules = _grammar(language).get(case) if language in LANGUAGES else None
    if not rules:
        return name
    text = " " + name + " "
    for pattern, template, count in rules:
        text = pattern.sub(template, text, count=count)
    return text.strip()


def tokenize(language: str, instruction: str, tokens: Mapping[str, Any], options: Options | None = None) -> str:
    """Fill the `{token}` and `{token:case}` places of a phrase (a token without a value stays as it is), collapse
    doubled spaces and capitalise the start where the language does."""
    if not language:
        raise ValueError("No language code provided")
    capitalize = bool(phrases(language)["meta"].get("capitalizeFirstLetter"))
    fmt = options.format_token if options else None
    started_with_token = False

    def fill(m: re.Match[str]) -> str:
        nonlocal started_with_token
        tag, case = m.group(1), m.group(2)
        if tag not in tokens or tokens[tag] is None:
            return m.group(0)
        value = tokens[tag]
        value = grammarize(language, value, case) if isinstance(value, str) else _js_str(value)
        if m.start() == 0 and capitalize:
            started_with_token = True
            value = capitalize_first_letter(language, value)
        if fmt is not None:
            value = fmt(tag, value)
        return value

    output = _TOKEN.sub(fill, instruction).replace("  ", " ")
    if not started_with_token and capitalize:
        return capitalize_first_letter(language, output)
    return output


def phrase(language: str, *path: str) -> str | None:
    """A phrase of the language by its path in the phrase file (`phrase(lang, "arrive", "left", "upcoming")`), None
    where it has none: the pieces navigation front ends join (`"two linked"`, `"one in distance"`)."""
    node: Any = phrases(language)[VERSION]
    for key in path:
        if not isinstance(node, dict) or not node.get(key):
            return None
        node = node[key]
    return node if isinstance(node, str) else None
