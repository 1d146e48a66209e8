"""The map page's departure time (issue 44) in headless Chromium, as test_map_page.py tests the page's other controls:
on a copy of Monaco customized with a weekday rush hour (test_departure_profiles.py's profile files) the day and the
slider set the route's and the isochrone's `depart_at`, and the "when to leave" chart shows the route's duration for
the 96 quarter hours of the day, equal to the API's; on a graph without profiles the page shows no slider and sends no
time. Skips like test_map_page.py without Playwright or Chromium."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest

from harness.api_server import shared
from tests.http.test_departure_profiles import rush_hour_copy
from tests.http.test_map_page import (  # noqa: F401 (fixtures)
    DEST,
    START,
    Page,
    Recorder,
    browser,
    click_map,
    ll,
    page,
    shot,
    wait_ready,
    wait_route,
)


@pytest.fixture(scope="module")
def server(bundled_graph: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A server of Monaco with the rush hour (test_map_page's `page` fixture opens pages on it)."""
    return shared(rush_hour_copy(bundled_graph, tmp_path_factory.mktemp("monaco-td-map")))


def asked(rec: Recorder, part: str) -> list[str]:
    return [u for u in rec.requests if part in u]


def duration(server: str, depart_at: str) -> float:
    r = httpx.get(f"{server}/route", params={"from": ll(START), "to": ll(DEST), "overview": "false",
                                             "depart_at": depart_at})  # fmt: skip
    assert r.status_code == 200, r.text
    return float(r.json()["properties"]["duration_s"])


def test_departure_slider_chart_and_isochrone(page: tuple[Page, Recorder], server: str) -> None:  # noqa: F811
    pg, rec = page
    pg.goto(f"{server}/#loc={ll(START)};{ll(DEST)}")
    wait_ready(pg)
    wait_route(pg)
    # shown on a graph with profiles; "no time" is the default: the static route, no time asked
    assert pg.locator("#dep-section").is_visible() and pg.locator("#dep-day").input_value() == ""
    assert pg.locator("#dep-time").is_disabled() and "no time" in pg.locator("#dep-label").inner_text()
    assert not asked(rec, "depart_at") and not pg.locator("#dep-chart").is_visible()
    static = pg.evaluate("starroute.last.properties.duration_s")

    # Monday: the slider's time (08:00 by default) departs the route, the chart asks the 96 quarter hours
    pg.select_option("#dep-day", "0")
    pg.wait_for_function("document.querySelector('#dep-chart').dataset.points === '96' && starroute.pending === 0")
    assert pg.locator("#dep-label").inner_text() == "Mon 08:00"
    native = [u for u in asked(rec, "/route?") if "overview=full" in u and "depart_at" in u]
    found = re.search(r"depart_at=(\d{4}-\d\d-\d\d)T08:00", native[-1])
    assert found, native[-1]
    day = found.group(1)
    rush = pg.evaluate("starroute.last.properties")
    assert rush["duration_s"] == duration(server, f"{day}T08:00") and rush["departure"].startswith(f"{day}T08:00")
    assert "departs Mon 08:00" in pg.locator("#summary").inner_text()
    osrm = [u for u in asked(rec, "/route/v1/driving/") if "depart_at" in u]
    assert osrm and "alternatives" not in osrm[-1]  # the steps for that departure (no alternatives with a time)
    chart = pg.evaluate("StarrouteDeparture.durations")
    assert len(chart) == 96 and None not in chart
    assert len(asked(rec, "overview=false&depart_at=")) == 96  # one route per quarter hour
    for q in (12, 32, 34, 40):  # 03:00, the rush (07:30-09:00), after it
        assert chart[q] == duration(server, f"{day}T{q // 4:02d}:{q % 4 * 15:02d}"), q
    assert chart[32] > chart[12] + 1 and chart[12] == static  # the rush hour shows; the night is free flow
    assert "fastest leaving at" in pg.locator("#dep-note").inner_text()
    assert pg.locator("#dep-chart .dep-now").count() == 1
    pg.locator("#dep-chart").scroll_into_view_if_needed()
    shot(pg, "map-departure.png")

    # the slider: 03:00 routes at 03:00, the URL keeps it; the chart is not asked again for the same day
    pg.locator("#dep-time").fill("12")
    pg.wait_for_function("location.hash.includes('dep=mon,03:00') && starroute.pending === 0")
    pg.wait_for_function("(d) => starroute.last.properties.departure.startsWith(d)", arg=f"{day}T03:00")
    assert pg.evaluate("starroute.last.properties.duration_s") == chart[12]
    assert len(asked(rec, "overview=false&depart_at=")) == 96
    # a click on the chart chooses that quarter hour (08:00)
    pg.locator("#dep-chart").scroll_into_view_if_needed()
    box = pg.locator("#dep-chart").bounding_box()
    assert box is not None
    pg.mouse.click(box["x"] + (44 + 284 * 32.2 / 96) * box["width"] / 336, box["y"] + box["height"] / 2)
    pg.wait_for_function("location.hash.includes('dep=mon,08:00') && starroute.pending === 0")
    assert pg.locator("#dep-time").input_value() == "32"

    # the isochrone departs at the chosen time
    pg.click("#iso-pick")
    click_map(pg, 7.4235, 43.7352)
    pg.wait_for_function("document.querySelectorAll('path.sr-iso').length >= 1 && starroute.pending === 0")
    iso = asked(rec, "/isochrone?")[-1]
    assert f"depart_at={day}T08:00" in iso and "leaving mon 08:00" in pg.locator("#iso-info").inner_text()

    # the URL shares the time: a new page with it has the same day, time and route
    pg.goto(f"{server}/?again{pg.evaluate('location.hash')}")
    wait_ready(pg)
    pg.wait_for_function("document.querySelector('#dep-chart').dataset.points === '96' && starroute.pending === 0")
    assert pg.locator("#dep-day").input_value() == "0" and pg.locator("#dep-time").input_value() == "32"
    assert pg.evaluate("starroute.last.properties.duration_s") == chart[32]
    # "no time": the static route again, no chart
    pg.select_option("#dep-day", "")
    pg.wait_for_function("!location.hash.includes('dep=') && starroute.pending === 0")
    pg.wait_for_function("!starroute.last.properties.departure")
    assert pg.evaluate("starroute.last.properties.duration_s") == static
    assert not pg.locator("#dep-chart").is_visible() and pg.locator("#dep-time").is_disabled()


def test_no_departure_time_without_profiles(browser, bundled_graph: Path) -> None:  # noqa: F811 (the fixture)
    """A graph without time profiles: no slider, and a `dep` in the URL sends no time."""
    base = shared(bundled_graph)
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    pg = ctx.new_page()
    pg.set_default_timeout(20_000)
    rec = Recorder(pg)
    try:
        pg.goto(f"{base}/#loc={ll(START)};{ll(DEST)}&dep=mon,08:00")
        wait_ready(pg)
        wait_route(pg)
        assert not pg.locator("#dep-section").is_visible()
        assert pg.evaluate("starroute.health.graph.time_profiles") is False
        assert not asked(rec, "depart_at") and not pg.evaluate("starroute.last.properties.departure")
        rec.check(base)
    finally:
        ctx.close()
