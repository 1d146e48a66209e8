"""The OSRM oracle in the suite: `bench/osrm_corpus.py`'s requests over every option of every service, sent to a
starroute server and to osrm-routed (the `osrm-bindings` wheel) on the bundled Monaco; status, code, JSON keys and,
where both answer Ok, distances and durations must agree, except the documented differences (printed)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
import pytest

from bench import osrm_corpus
from tests import api_server


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
