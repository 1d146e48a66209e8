"""The OSRM oracle in the suite: `harness/osrm_corpus.py`'s requests over every option of every service, sent to a
starroute server and to osrm-routed (the `osrm-bindings` wheel) on the bundled Monaco; status, code, JSON keys and,
where both answer Ok, distances and durations must agree, except the documented differences (printed)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from harness import api_server, osrm_corpus


@pytest.mark.slow
def test_corpus_answers_as_osrm_routed(bundled_graph: Path, osrm_base: str) -> None:
    base = api_server.shared(bundled_graph)
    # a server that just started loads the options' kernels (matching, alternatives, isochrones) in the background,
    # compiling them on a cold numba cache: wait for that, as a client would retry, before comparing answers
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        warm = httpx.get(f"{base}{osrm_corpus.M}{osrm_corpus.TRACE}", params={"radiuses": "10;10;10;10;10"}, timeout=60)
        if warm.json().get("code") != "TooBig":
            break
        time.sleep(2)
    result = osrm_corpus.run(base, osrm_base)
    documented = {url: why for url, why in osrm_corpus.DOCUMENTED.items() if result.get(url)}
    print(f"\n{sum(not v for v in result.values())} of {len(result)} requests as osrm-routed; documented differences:")
    for url, why in documented.items():
        print(f"  {url}: {why}")
    others = {url: diff for url, diff in result.items() if diff and url not in osrm_corpus.DOCUMENTED}
    assert not others, "\n".join(f"{url}: {'; '.join(d)}" for url, d in others.items())
    assert len(documented) <= 8, "the list of documented differences stays short"


@pytest.mark.slow
def test_annotations_as_osrm_routed(bundled_graph: Path, osrm_base: str) -> None:
    """Per-segment annotations are each segment's own time, weight and speed, without the turns and node obstacles
    (OSRM's): on random Monaco routes both take over the same nodes, every value within 0.1 (measured when this test
    came: 7,262 of 7,262 segment durations on 42 routes; 6,394 before, when pieces were split by length). The
    annotations leave the turns out, so they sum to less than the route's duration, as osrm-routed's do."""
    import random

    base = api_server.shared(bundled_graph)
    rng = random.Random(3)
    compared = 0
    off: list[tuple[str, str, int]] = []
    for _ in range(30):
        pts = ";".join(f"{rng.uniform(7.410, 7.437):.6f},{rng.uniform(43.727, 43.748):.6f}" for _ in range(2))
        params = {"annotations": "duration,weight,speed,nodes"}
        ours = httpx.get(f"{base}/route/v1/driving/{pts}", params=params, timeout=60).json()
        theirs = httpx.get(f"{osrm_base}/route/v1/driving/{pts}", params=params, timeout=60).json()
        if ours.get("code") != "Ok" or theirs.get("code") != "Ok":
            continue
        a, b = ours["routes"][0]["legs"][0]["annotation"], theirs["routes"][0]["legs"][0]["annotation"]
        if a["nodes"] != b["nodes"]:
            continue
        compared += 1
        for field in ("duration", "weight", "speed"):
            # the speed of the snapped ends' partial segments is left out: a few metres over a time 0.1 s apart
            # (OSRM measures a phantom's part of its segment one way here and another in the route's total)
            lo, hi = (1, len(a[field]) - 1) if field == "speed" else (0, len(a[field]))
            bad = sum(abs(x - y) > 0.1 + 1e-9 for x, y in zip(a[field][lo:hi], b[field][lo:hi], strict=True))
            if bad:
                off.append((pts, field, bad))
    assert compared >= 15, "too few routes over the same nodes to compare"
    assert not off, off
