"""The map's background layer: `preprocessing.basemap` (areas of the extract as flat `bg_*` arrays), its tiles
(`app.engine.maps.basemap`, `/bgtile/`), and when it is built (`--basemap/--no-basemap`, by default up to a size)."""

from __future__ import annotations

from pathlib import Path

import httpx
import numpy as np
import pytest

from app.engine.maps.basemap import tile_areas
from floor.format.graph import load_graph
from harness.api_server import shared
from preprocessing.basemap import ARRAYS, AUTO_MAX_BYTES, GRID, KINDS, build_basemap, kind_of, wanted
from tests.conftest import BUNDLED
from tests.http.test_tiles import _fields, _packed, _unzig, tile_of


def decode_polygons(tile: bytes) -> dict[str, list[list[tuple[int, int]]]]:
    """{kind: rings} of the `background` layer; checks MoveTo, LineTo.., ClosePath per ring."""
    ((f, _, layer),) = list(_fields(tile))
    keys, vals, feats = [], [], []
    for lf, _, lv in _fields(layer):
        if lf == 1:
            assert lv == b"background"
        elif lf == 2:
            feats.append(lv)
        elif lf == 3:
            keys.append(lv.decode())
        elif lf == 4:
            vals.append(next(iter(_fields(lv)))[2].decode())
    out: dict[str, list[list[tuple[int, int]]]] = {}
    for fb in feats:
        parts = {ff: fv for ff, _, fv in _fields(fb)}
        assert parts[3] == 3, "POLYGON"
        tags, geom = _packed(parts[2]), _packed(parts[4])
        kind = vals[tags[1]]
        assert keys[tags[0]] == "kind" and kind not in out
        rings: list[list[tuple[int, int]]] = []
        x = y = i = 0
        while i < len(geom):
            assert geom[i] == 9, "MoveTo 1"
            x, y = x + _unzig(geom[i + 1]), y + _unzig(geom[i + 2])
            ring = [(x, y)]
            cmd, n = geom[i + 3] & 7, geom[i + 3] >> 3
            assert cmd == 2 and n >= 2
            for k in range(n):
                x, y = x + _unzig(geom[i + 4 + 2 * k]), y + _unzig(geom[i + 5 + 2 * k])
                ring.append((x, y))
            i += 4 + 2 * n
            assert geom[i] == 15, "ClosePath"
            i += 1
            rings.append(ring)
        out[kind] = rings
    return out


def _signed(ring: list[tuple[int, int]]) -> float:
    a = np.array(ring, dtype=np.float64)
    return float(np.dot(a[:, 0], np.roll(a[:, 1], -1)) - np.dot(np.roll(a[:, 0], -1), a[:, 1]))


def test_kinds() -> None:
    assert kind_of({"building": "yes"}) == "building" and kind_of({"building": "no"}) is None
    assert kind_of({"natural": "water"}) == "water" and kind_of({"leisure": "park"}) == "park"
    assert kind_of({"landuse": "forest"}) == "wood" and kind_of({"highway": "residential"}) is None


def test_when_it_is_built(tmp_path: Path) -> None:
    assert wanted(BUNDLED, None) and not wanted(BUNDLED, False) and wanted(BUNDLED, True)
    big = tmp_path / "big.osm.pbf"
    with open(big, "wb") as fh:
        fh.truncate(AUTO_MAX_BYTES + 1)  # sparse: a huge extract is off by default
    assert not wanted(big, None) and wanted(big, True)


def test_monaco_arrays() -> None:
    arrays, meta = build_basemap(BUNDLED)
    assert [n for n, _, _ in ARRAYS] == sorted(arrays, key=[n for n, _, _ in ARRAYS].index)
    for name, dtype, _ in ARRAYS:
        assert str(arrays[name].dtype) == dtype and name.startswith("bg_")
    assert meta["by_kind"]["building"] > 500 and meta["by_kind"].get("park", 0) > 10 and meta["kinds"] == list(KINDS)
    first, poly = arrays["bg_ring_first"], arrays["bg_poly_ring"]
    assert poly[-1] == first.shape[0] - 1 and first[-1] == arrays["bg_x"].shape[0]
    assert (np.diff(first) >= 3).all() and (arrays["bg_x"] >= 0).all() and (arrays["bg_x"] < GRID).all()
    # outer rings clockwise on the y-down grid (MVT's rule), holes the other way
    for p in range(0, poly.shape[0] - 1, 25):
        for r in range(poly[p], poly[p + 1]):
            xs, ys = arrays["bg_x"][first[r] : first[r + 1]], arrays["bg_y"][first[r] : first[r + 1]]
            ring = list(zip(xs.tolist(), ys.tolist(), strict=True))
            assert (_signed(ring) > 0) == (r == poly[p])


@pytest.fixture(scope="module")
def server(bundled_graph: Path) -> str:
    return shared(bundled_graph)


def test_tiles(server: str, bundled_graph: Path) -> None:
    assert httpx.get(server + "/health").json()["graph"]["basemap"] is True
    x, y = tile_of(7.4235, 43.7352, 16)
    r = httpx.get(f"{server}/bgtile/16/{x}/{y}.mvt")
    assert r.status_code == 200 and r.headers["content-type"] == "application/vnd.mapbox-vector-tile"
    kinds = decode_polygons(r.content)
    assert "building" in kinds and len(kinds["building"]) > 20
    engine = tile_areas(load_graph(bundled_graph), 16, x, y)
    assert sum(len(v) for v in kinds.values()) == engine.ring_first.shape[0] - 1
    lx, ly = tile_of(7.4235, 43.7352, 12)
    low = decode_polygons(httpx.get(f"{server}/bgtile/12/{lx}/{ly}").content)
    assert "building" not in low  # buildings from zoom 15
    assert decode_polygons(httpx.get(f"{server}/bgtile/16/0/0").content) == {}
    assert httpx.get(f"{server}/bgtile/3/9/9").json()["code"] == "InvalidValue"


def test_graph_without_background_says_so(tmp_path: Path) -> None:
    from preprocessing.pipeline import preprocess

    g = preprocess(BUNDLED, tmp_path / "g", ch=False, landmarks=0, quiet=True, basemap=False)
    assert "basemap" not in load_graph(g).manifest and not any(p.name.startswith("bg_") for p in g.iterdir())
    base = shared(g)
    assert httpx.get(base + "/health").json()["graph"]["basemap"] is False
    r = httpx.get(base + "/bgtile/16/34119/23896.mvt")
    assert r.status_code == 404 and "--basemap" in r.json()["message"]
