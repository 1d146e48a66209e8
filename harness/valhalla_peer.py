"""Valhalla as a departure-time benchmark peer (issue 44): the `pyvalhalla` wheel's valhalla_build_tiles,
valhalla_add_predicted_traffic and valhalla_service, with the same time profiles as starroute's metric.

The wheel (CPython 3.12 abi3; its binaries run from any Python, its bindings need 3.12) is downloaded once with
`pip download --no-deps` and unpacked into /tmp/starroute-valhalla, as `osrm_peer.ensure_osrm` does; never part of
starroute itself. Predicted traffic in Valhalla is a CSV per graph tile (`level/AAA/BBB.csv` beside
`level/AAA/BBB.gph`): `edge_id,freeflow_kmh,constrained_kmh,profile`, the profile 2016 five-minute speeds (km/h,
from Sunday 00:00) DCT-II compressed to 200 int16 coefficients, big-endian, base64 (Valhalla's
`compress_speed_buckets` / `encode_compressed_speeds`, `encode_speeds` here). The edges: every listed segment of
`segment_profiles.csv` is found on starroute's graph (its OSM way and the midpoint of the segment), that point is
`/locate`d (verbose) and the Valhalla edges there of the same OSM way take the segment's weekly profile applied to
the edge's own default speed, both directions (the benchmark's files give both directions of a road one profile).
Without a time zone database (none is built here: it needs a download) Valhalla reads `date_time` as UTC, so the
local times of the request are the profile's.

    python harness/valhalla_peer.py EXTRACT GRAPH_DIR PROFILES_DIR WORK_DIR   # build, add traffic, serve, compare
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import numpy as np

from harness.peer_wheels import wheel_binaries

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.servers import free_port, stop, wait_ready  # noqa: E402

VALHALLA_WHEEL = "pyvalhalla==3.9.1"
VALHALLA_DIR = Path("/tmp/starroute-valhalla")
BUCKETS = 2016  # five-minute buckets per week, from Sunday 00:00
COEFFICIENTS = 200
LOCATE_BATCH = 500


def ensure_valhalla(valhalla_dir: Path = VALHALLA_DIR) -> Path | None:
    """Directory holding valhalla_build_tiles / valhalla_add_predicted_traffic / valhalla_service (downloading the
    wheel once); None when unavailable."""
    return wheel_binaries(
        VALHALLA_WHEEL, "pyvalhalla-*.whl", valhalla_dir, valhalla_dir / "valhalla" / "bin", "valhalla_service"
    )


def write_config(bin_dir: Path, work: Path, port: int) -> Path:
    """valhalla.json for tiles in `work/tiles` (a directory, no tar: predicted traffic is added in place), one
    thread, no admin or time zone database, `/locate` taking LOCATE_BATCH points; its path."""
    script = bin_dir.parent / "valhalla_build_config.py"
    none = work / "none"
    args = ["--mjolnir-tile-dir", str(work / "tiles"), "--mjolnir-tile-extract", f"{none}.tar"]
    args += ["--mjolnir-traffic-extract", f"{none}-traffic.tar", "--mjolnir-admin", f"{none}-admin.sqlite"]
    args += ["--mjolnir-timezone", f"{none}-tz.sqlite", "--mjolnir-concurrency", "1"]
    out = subprocess.run([sys.executable, str(script), *args], check=True, capture_output=True, text=True).stdout
    conf = json.loads(out)
    conf["httpd"]["service"]["listen"] = f"tcp://127.0.0.1:{port}"
    conf["service_limits"]["auto"]["max_locations"] = max(LOCATE_BATCH, 20)
    path = work / "valhalla.json"
    path.write_text(json.dumps(conf, indent=1), encoding="utf-8")
    return path


def build_tiles(bin_dir: Path, config: Path, extract: Path) -> float:
    """valhalla_build_tiles on the extract; seconds."""
    t0 = time.perf_counter()
    subprocess.run(
        [str(bin_dir / "valhalla_build_tiles"), "-c", str(config), str(extract)], check=True, capture_output=True
    )
    return time.perf_counter() - t0


def start_valhalla(bin_dir: Path, config: Path) -> tuple[subprocess.Popen, str]:
    """valhalla_service with one thread, answering; (process, base URL)."""
    conf = json.loads(config.read_text(encoding="utf-8"))
    port = int(conf["httpd"]["service"]["listen"].rsplit(":", 1)[1])
    proc = subprocess.Popen(
        [str(bin_dir / "valhalla_service"), str(config), "1"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    base = f"http://127.0.0.1:{port}"
    wait_ready(f"{base}/status", proc)
    return proc, base


def post(base: str, path: str, body: dict) -> tuple[int, dict]:
    """POST a JSON body; (status, answer)."""
    req = urllib.request.Request(base + path, json.dumps(body).encode(), {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def encode_speeds(speeds_kmh: np.ndarray) -> str:
    """Valhalla's historical speed string of 2016 five-minute speeds (km/h, Sunday 00:00 first): DCT-II, the first
    200 coefficients scaled by sqrt(2 / 2016) (the first also by 1/sqrt(2)), rounded to int16, big-endian, base64."""
    s = np.asarray(speeds_kmh, dtype=np.float64)
    assert s.shape == (BUCKETS,), s.shape
    b = np.arange(BUCKETS, dtype=np.float64) + 0.5
    c = np.arange(COEFFICIENTS, dtype=np.float64)
    coef = np.cos(np.pi / BUCKETS * np.outer(c, b)) @ s
    coef[0] *= 1 / np.sqrt(2)
    q = np.rint(np.sqrt(2.0 / BUCKETS) * coef).astype(">i2")
    return base64.b64encode(q.tobytes()).decode("ascii")


def decode_speeds(encoded: str) -> np.ndarray:
    """The 2016 speeds a historical speed string gives back (Valhalla's DCT-III), for checks."""
    coef = np.frombuffer(base64.b64decode(encoded), dtype=">i2").astype(np.float64)
    b = np.arange(BUCKETS, dtype=np.float64) + 0.5
    c = np.arange(COEFFICIENTS, dtype=np.float64)
    basis = np.cos(np.pi / BUCKETS * np.outer(b, c))
    basis[:, 0] = 1 / np.sqrt(2)
    return np.sqrt(2.0 / BUCKETS) * (basis @ coef)


def weekly_buckets(pct_week: np.ndarray) -> np.ndarray:
    """2016 five-minute percents from Sunday 00:00 of a week of 672 quarter-hour percents from Monday 00:00."""
    pct = np.asarray(pct_week, dtype=np.float64)
    b = np.arange(BUCKETS)
    day_mon0 = (b // 288 + 6) % 7
    return pct[day_mon0 * 96 + (b % 288) // 3]


def profiled_points(graph_dir: Path, profiles_dir: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The listed segments found on starroute's graph: (lon, lat of each segment's midpoint, its OSM way, its week of
    672 percents), one per distinct segment."""
    from floor.format.graph import load_graph
    from floor.format.units import COORD_SCALE
    from preprocessing.metric import named_segments
    from preprocessing.osm.time_profiles import read_segment_profiles, read_time_profiles

    tp = read_time_profiles(profiles_dir / "time_profiles.csv")
    sp = read_segment_profiles([profiles_dir / "segment_profiles.csv"], tp)
    g = load_graph(graph_dir, metric=False, check=False)
    arrays = dict(g.arrays)
    arc, a, b, line = named_segments(arrays, sp.from_id, sp.to_id)
    lon = (np.asarray(arrays["geom_lon"], dtype=np.float64)[a] + np.asarray(arrays["geom_lon"])[b]) / 2 / COORD_SCALE
    lat = (np.asarray(arrays["geom_lat"], dtype=np.float64)[a] + np.asarray(arrays["geom_lat"])[b]) / 2 / COORD_SCALE
    way = np.asarray(arrays["arc_way"], dtype=np.int64)[arc]
    week = tp.pct[sp.day_profile[line]].reshape(len(line), 672)
    return lon, lat, way, week


def locate_edges(base: str, lon: np.ndarray, lat: np.ndarray, way: np.ndarray) -> dict[str, tuple[int, int]]:
    """Valhalla edge id ("level/tile/id") -> (the index of the point that found it, the edge's default km/h), for the
    edges at each point that belong to the point's OSM way."""
    out: dict[str, tuple[int, int]] = {}
    for lo in range(0, len(lon), LOCATE_BATCH):
        idx = range(lo, min(lo + LOCATE_BATCH, len(lon)))
        body = {"locations": [{"lon": float(lon[i]), "lat": float(lat[i])} for i in idx], "verbose": True}
        body["costing"] = "auto"
        status, answer = post(base, "/locate", body)
        if status != 200:
            raise RuntimeError(f"/locate answered {status}: {str(answer)[:300]}")
        for i, loc in zip(idx, answer, strict=True):
            for e in loc.get("edges") or []:
                if e.get("edge_info", {}).get("way_id") != int(way[i]):
                    continue
                gid = e["edge_id"]
                key = f"{gid['level']}/{gid['tile_id']}/{gid['id']}"
                out.setdefault(key, (i, int(e["edge"]["speeds"]["default"])))
    return out


def write_traffic(tiles: Path, traffic: Path, edges: dict[str, tuple[int, int]], week: np.ndarray) -> int:
    """The per-tile CSVs of predicted speeds under `traffic` (the tiles' own layout); edges written."""
    paths = {}
    for f in tiles.rglob("*.gph"):
        rel = f.relative_to(tiles)
        level, digits = int(rel.parts[0]), "".join(rel.with_suffix("").parts[1:])
        paths[(level, int(digits))] = rel.with_suffix(".csv")
    rows: dict[Path, list[str]] = {}
    coded: dict[tuple[int, bytes], str] = {}
    for key, (i, kmh) in edges.items():
        level, tile, _ = (int(x) for x in key.split("/"))
        pct = week[i]
        k = (kmh, pct.tobytes())
        if k not in coded:
            coded[k] = encode_speeds(kmh * weekly_buckets(pct) / 100.0)
        rows.setdefault(paths[(level, tile)], []).append(f"{key},{kmh},{kmh},{coded[k]}")
    for rel, lines in rows.items():
        (traffic / rel).parent.mkdir(parents=True, exist_ok=True)
        (traffic / rel).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return sum(len(v) for v in rows.values())


def add_predicted_traffic(bin_dir: Path, config: Path, traffic: Path) -> str:
    """valhalla_add_predicted_traffic with the summary; its output."""
    cmd = [str(bin_dir / "valhalla_add_predicted_traffic"), "-c", str(config), "-s", str(traffic)]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return r.stdout + r.stderr


def route(base: str, a: tuple[float, float], b: tuple[float, float], date_time: str | None) -> tuple[float, float]:
    """Valhalla's auto route a -> b (lon, lat), departing at the local `date_time` ("2026-12-07T08:00", a Monday,
    `date_time` type 1: depart_at) or with no time (static speeds); (travel time s, milliseconds the request took)."""
    body: dict = {"locations": [{"lon": a[0], "lat": a[1]}, {"lon": b[0], "lat": b[1]}], "costing": "auto"}
    if date_time is not None:
        body["date_time"] = {"type": 1, "value": date_time}
    t0 = time.perf_counter()
    status, answer = post(base, "/route", body)
    ms = (time.perf_counter() - t0) * 1000
    if status != 200:
        raise RuntimeError(f"/route answered {status}: {str(answer)[:300]}")
    return float(answer["trip"]["summary"]["time"]), ms


def prepare(extract: Path, graph_dir: Path, profiles_dir: Path, work: Path) -> tuple[Path, Path]:
    """Valhalla's tiles of `extract` with the profiles of `profiles_dir` as predicted traffic, in `work` (built once:
    a finished build leaves `work/traffic.done` and is reused); (bin dir, config). RuntimeError without the wheel."""
    import shutil

    bin_dir = ensure_valhalla()
    if bin_dir is None:
        raise RuntimeError(f"no Valhalla binaries ({VALHALLA_WHEEL} could not be unpacked into {VALHALLA_DIR})")
    work.mkdir(parents=True, exist_ok=True)
    config = write_config(bin_dir, work, free_port())
    done = work / "traffic.done"
    if done.exists():
        return bin_dir, config
    for d in (work / "tiles", work / "traffic"):
        shutil.rmtree(d, ignore_errors=True)
    build_tiles(bin_dir, config, extract)
    proc, base = start_valhalla(bin_dir, config)
    try:
        lon, lat, way, week = profiled_points(graph_dir, profiles_dir)
        edges = locate_edges(base, lon, lat, way)
    finally:
        stop(proc)
    n = write_traffic(work / "tiles", work / "traffic", edges, week)
    add_predicted_traffic(bin_dir, config, work / "traffic")
    done.write_text(f"{len(lon)} segments, {len(edges)} edges located, {n} written\n", encoding="utf-8")
    return bin_dir, config


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Valhalla with the benchmark's rush hour: build, add traffic, compare")
    ap.add_argument("extract", type=Path)
    ap.add_argument("graph_dir", type=Path, help="starroute's graph of the same extract (to place the segments)")
    ap.add_argument("profiles_dir", type=Path, help="time_profiles.csv and segment_profiles.csv (bench/td_profiles.py)")
    ap.add_argument("work", type=Path)
    ap.add_argument("--from", dest="src", default="-8.6110,41.1496", help="lon,lat (default: Porto, Campanha)")
    ap.add_argument("--to", dest="dst", default="-8.6896,41.1780", help="lon,lat (default: Porto, Boavista)")
    args = ap.parse_args()
    bin_dir = ensure_valhalla()
    if bin_dir is None:
        return 1
    args.work.mkdir(parents=True, exist_ok=True)
    config = write_config(bin_dir, args.work, free_port())
    print(f"valhalla_build_tiles: {build_tiles(bin_dir, config, args.extract):.1f} s")
    src = tuple(float(x) for x in args.src.split(","))
    dst = tuple(float(x) for x in args.dst.split(","))
    proc, base = start_valhalla(bin_dir, config)
    try:
        static = {t: route(base, src, dst, t) for t in (None, "2026-12-07T03:00", "2026-12-07T08:00")}  # type: ignore[arg-type]
        t0 = time.perf_counter()
        lon, lat, way, week = profiled_points(args.graph_dir, args.profiles_dir)
        edges = locate_edges(base, lon, lat, way)
        print(f"{len(lon)} listed segments located: {len(edges)} Valhalla edges in {time.perf_counter() - t0:.1f} s")
    finally:
        stop(proc)
    traffic = args.work / "traffic"
    n = write_traffic(args.work / "tiles", traffic, edges, week)
    t0 = time.perf_counter()
    summary = add_predicted_traffic(bin_dir, config, traffic)
    print(f"valhalla_add_predicted_traffic: {n} edges in {time.perf_counter() - t0:.1f} s")
    print("\n".join(line for line in summary.splitlines() if "traffic" in line.lower())[-600:])
    proc, base = start_valhalla(bin_dir, config)
    try:
        for t in (None, "2026-12-07T03:00", "2026-12-07T08:00"):
            before, _ = static[t]
            after, ms = route(base, src, dst, t)
            timings = [route(base, src, dst, t)[1] for _ in range(5)]
            print(
                f"route {args.src} -> {args.dst} at {t or 'no time'}: {after:.0f} s with predicted traffic "
                f"({before:.0f} s without), {min(timings):.1f} ms (best of 5)"
            )
    finally:
        stop(proc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
