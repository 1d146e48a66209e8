"""Voice and banner instructions for OSRM route steps, the Mapbox Directions API's navigation fields
(`voice_instructions=true`, `banner_instructions=true`), from the same maneuvers and text as
`step.maneuver.instruction` (`compile`).

Each step but the arrival carries what a navigation app says and shows about the maneuver at its end (the next
step's): `voiceInstructions[]` (`distanceAlongGeometry`: metres before that maneuver where it is said, largest first;
`announcement`; `ssmlAnnouncement`, the same text in SSML as Mapbox writes it) and `bannerInstructions[]` (shown for
the whole step: `primary` with the road the maneuver leads onto, its `components`, the maneuver's `type` and
`modifier`; `secondary`, the signposted destinations, or null). The first step also says the departure. The arrival
step has empty lists, as Mapbox's.

When things are said: near the maneuver (10 s of the step's mean speed before it, 30 to 400 m) the instruction
itself, and before that, on a step long enough, once "In {distance}, ..." (an arrival in its "upcoming" words: "you
will arrive at your destination") at the largest of a few round distances
(metric 200 m, 500 m, 1 km, 2 km; imperial 500 ft, a quarter, half a mile, 1 and 2 miles) that fits; a step too
short for two announcements gets one at its start. Distances are spoken as words in English and as unit symbols in
the other languages (osrm-text-instructions has no words for units).
"""

from __future__ import annotations

from html import escape
from typing import Any

from app.api.instructions.compile import Options, compile, ordinalize, phrase, phrases, tokenize, way_name

NEAR_S = 10.0  # the near announcement: this many seconds before the maneuver at the step's mean speed ...
NEAR_MIN_M, NEAR_MAX_M = 30.0, 400.0  # ... within these bounds
FEET = 0.3048
MILE = 1609.344
METRIC = ((2000.0, "2 kilometers"), (1000.0, "1 kilometer"), (500.0, "500 meters"), (200.0, "200 meters"))
IMPERIAL = (
    (2 * MILE, "2 miles"), (MILE, "1 mile"), (MILE / 2, "half a mile"), (MILE / 4, "a quarter mile"),
    (500 * FEET, "500 feet"),
)  # fmt: skip
_SYMBOLS = {
    "2 kilometers": "2 km", "1 kilometer": "1 km", "500 meters": "500 m", "200 meters": "200 m", "2 miles": "2 mi",
    "1 mile": "1 mi", "half a mile": "0.5 mi", "a quarter mile": "0.25 mi", "500 feet": "500 ft",
}  # fmt: skip
UNITS = ("imperial", "metric")


def ssml(text: str) -> str:
    """An announcement as Mapbox writes its SSML (Amazon Polly's dynamic range compression, a little faster)."""
    return f'<speak><amazon:effect name="drc"><prosody rate="1.08">{escape(text)}</prosody></amazon:effect></speak>'


def _inner(language: str, text: str) -> str:
    """An instruction put inside a phrase (`{instruction_one}`): its capital dropped where the language capitalises
    only the start of a sentence."""
    if text and phrases(language)["meta"].get("capitalizeFirstLetter"):
        return text[0].lower() + text[1:]
    return text


def _said_distance(language: str, metres: float, units: str) -> tuple[float, str] | None:
    """The largest round distance of `units` at most `metres`, as (metres, words); None when none fits."""
    for value, words in METRIC if units == "metric" else IMPERIAL:
        if value <= metres:
            return value, words if language == "en" else _SYMBOLS[words]
    return None


def _announce(items: list[tuple[float, str]]) -> list[dict[str, Any]]:
    return [
        {"distanceAlongGeometry": round(d, 1), "announcement": text, "ssmlAnnouncement": ssml(text)}
        for d, text in sorted(items, key=lambda x: -x[0])
    ]


def _link(language: str, key: str, **tokens: str) -> str:
    template = phrase(language, "phrase", key) or phrase("en", "phrase", key) or ""
    return tokenize(language, template, tokens)


def upcoming(language: str, step: dict[str, Any], opts: Options, instruction: str) -> str:
    """What is said of a step's maneuver ahead of it: an arrival's "upcoming" phrase ("You will arrive at your
    destination, on the right"), any other maneuver's instruction."""
    maneuver = step["maneuver"]
    if maneuver["type"] != "arrive":
        return instruction
    modifier = maneuver.get("modifier")
    text = (phrase(language, "arrive", modifier, "upcoming") if modifier else None) or phrase(
        language, "arrive", "default", "upcoming"
    )
    if text is None:
        return instruction
    last = opts.leg_count is None or opts.leg_index == opts.leg_count - 1
    nth = "" if last or opts.leg_index is None else ordinalize(language, opts.leg_index + 1)
    return tokenize(language, text, {"nth": nth})


def voice(steps: list[dict[str, Any]], texts: list[str], ahead: list[str], language: str, units: str) -> None:
    """`voiceInstructions` of a leg's steps (`texts`: each step's instruction; `ahead`: what is said of it in
    advance, `upcoming`)."""
    for i, step in enumerate(steps):
        if i == len(steps) - 1:
            step["voiceInstructions"] = []
            break
        d = float(step["distance"])
        speed = d / step["duration"] if step["duration"] > 0 else 10.0
        near = min(max(NEAR_S * speed, NEAR_MIN_M), NEAR_MAX_M)
        nxt = texts[i + 1]
        items: list[tuple[float, str]] = []
        if d <= 1.5 * near:  # one announcement at the step's start
            if i == 0:
                items.append(
                    (d, _link(language, "two linked", instruction_one=texts[0], instruction_two=_inner(language, nxt)))
                )
            else:
                items.append((d, nxt))
        else:
            items.append((near, nxt))
            early = _said_distance(language, d, units)
            if early is not None and early[0] >= 2 * near:
                ahead_text = _inner(language, ahead[i + 1])
                said = _link(language, "one in distance", distance=early[1], instruction_one=ahead_text)
                items.append((early[0], said))
            if i == 0:
                items.append((d, texts[0]))
        step["voiceInstructions"] = _announce(items)


def _text(language: str, step: dict[str, Any], instruction: str) -> tuple[str, list[dict[str, Any]]]:
    """A banner's text and components for the maneuver of `step`: the road it leads onto (as the instruction names
    it), else the instruction itself; an off-ramp's exit number first."""
    name = way_name(language, step) or instruction
    components: list[dict[str, Any]] = []
    exits = (step.get("exits") or "").split(";")[0]
    if exits and step["maneuver"]["type"] in ("off ramp", "roundabout", "rotary"):
        components += [{"text": "Exit", "type": "exit"}, {"text": exits, "type": "exit-number"}]
    components.append({"text": name, "type": "text"})
    return name, components


def _banner_part(text: str, components: list[dict[str, Any]], maneuver: dict[str, Any]) -> dict[str, Any]:
    part: dict[str, Any] = {"text": text, "components": components, "type": maneuver["type"]}
    if "modifier" in maneuver:
        part["modifier"] = maneuver["modifier"]
    return part


def banner(steps: list[dict[str, Any]], texts: list[str], language: str) -> None:
    """`bannerInstructions` of a leg's steps (`texts`: each step's instruction)."""
    for i, step in enumerate(steps):
        if i == len(steps) - 1:
            step["bannerInstructions"] = []
            break
        nxt = steps[i + 1]
        text, components = _text(language, nxt, texts[i + 1])
        secondary = None
        if nxt.get("destinations"):
            dest = str(nxt["destinations"])
            secondary = _banner_part(dest, [{"text": dest, "type": "text"}], nxt["maneuver"])
        step["bannerInstructions"] = [
            {
                "distanceAlongGeometry": round(float(step["distance"]), 1),
                "primary": _banner_part(text, components, nxt["maneuver"]),
                "secondary": secondary,
            }
        ]


def add_navigation(
    legs: list[dict[str, Any]], language: str, *, voice_instructions: bool, banner_instructions: bool, units: str
) -> None:
    """Write the asked navigation fields into every step of a route's legs (OSRM RouteLeg objects with steps)."""
    for k, leg in enumerate(legs):
        steps = leg["steps"]
        opts = Options(leg_index=k, leg_count=len(legs))
        texts = [s["maneuver"].get("instruction") or compile(language, s, opts) for s in steps]
        if voice_instructions:
            ahead = [upcoming(language, s, opts, t) for s, t in zip(steps, texts, strict=True)]
            voice(steps, texts, ahead, language, units)
        if banner_instructions:
            banner(steps, texts, language)
