"""Departure time's input side (issue 44): the vendors' time profile files (`preprocessing.osm.time_profiles`), the
per-arc factor rows (`preprocessing.time_metric`: shared rows, duration-weighted means, closed arcs static, FIFO
repaired), `starroute customize --time-profiles` (stored with the metric and its time zone, bad input refused with
nothing changed, reset), and a graph's reload (`reuse=`, a running server's SIGHUP) carrying them."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import pytest

from floor.format.arrays import METRIC_LINK, FormatError
from floor.format.checks import check_time_profiles
from floor.format.graph import load_graph
from floor.format.metrics import read_metric
from floor.format.time_profiles import fifo_holds, pct_factor, repair_fifo, ttf
from floor.format.units import CLOSED_DS, SLOT_DS, SLOTS, TD_ONE, WEEK_DS
from harness import api_server, asciimap
from preprocessing.customize import customize, reset
from preprocessing.metric import arc_segments
from preprocessing.osm.speeds import MetricFileError, read_segment_speeds
from preprocessing.osm.time_profiles import (
    PROFILE_HEADER,
    SEGMENT_HEADER,
    read_segment_profiles,
    read_time_profiles,
)
from preprocessing.time_metric import time_metric

HEAD = ",".join(PROFILE_HEADER)
SEG_HEAD = ",".join(SEGMENT_HEADER)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def _profile(name: str, pct: list[float] | float) -> str:
    values = pct if isinstance(pct, list) else [pct] * 96
    return name + "," + ",".join(f"{v:g}" for v in values)


def _rush() -> list[float]:
    """50 % from 07:30 to 09:00, 100 % otherwise."""
    return [50.0 if 30 <= q < 36 else 100.0 for q in range(96)]


PROFILES = "\n".join([HEAD, _profile("rush", _rush()), _profile("free", 100), _profile("fast", 200)]) + "\n"


# -- the files --------------------------------------------------------------------------------------------------------
def test_the_files_read_as_the_vendors_write_them(tmp_path: Path) -> None:
    tp = read_time_profiles(_write(tmp_path / "tp.csv", PROFILES.replace("free,", "\nfree,")))  # a blank line
    assert tp.names == ("rush", "free", "fast") and tp.pct.shape == (3, 96)
    assert tp.pct[0, 29] == 100 and tp.pct[0, 30] == 50 and tp.pct[0, 35] == 50 and tp.pct[0, 36] == 100
    week = "rush,rush,rush,rush,rush,free,fast"
    a = _write(tmp_path / "a.csv", f"{SEG_HEAD}\n1,2,{week}\n3,4,{week}\n")
    b = _write(tmp_path / "b.csv", f"{SEG_HEAD}\n1,2,free,free,free,free,free,free,free\n")
    sp = read_segment_profiles([a, b], tp)
    got = {(int(f), int(t)): d.tolist() for f, t, d in zip(sp.from_id, sp.to_id, sp.day_profile, strict=True)}
    assert sp.lines == 3 and len(sp) == 2
    assert got[(1, 2)] == [1] * 7  # the later file wins
    assert got[(3, 4)] == [0, 0, 0, 0, 0, 1, 2]
    assert pct_factor(np.array([100, 50, 200, 1])).tolist() == [TD_ONE, 2 * TD_ONE, TD_ONE // 2, 100 * TD_ONE]


RANGE = "is not within 1..200"
BAD_PROFILES = [
    (HEAD + "\nrush," + ",".join(["100"] * 95) + "\n", "line 2: profile 'rush' has 95 slots, expected 96"),
    (HEAD + "\n" + _profile("rush", [0.0] + [100.0] * 95) + "\n", f"line 2: profile 'rush' slot 00:00: 0 % {RANGE}"),
    (
        HEAD + "\n" + _profile("rush", [100.0] * 95 + [201.0]) + "\n",
        f"line 2: profile 'rush' slot 23:45: 201 % {RANGE}",
    ),
    (
        HEAD + "\n" + _profile("a", 90) + "\n\n" + _profile("a", 80) + "\n",
        "line 4: duplicate profile 'a' (first defined on line 2)",
    ),
    (HEAD + "\nrush,fast" + ",100" * 95 + "\n", "line 2: profile 'rush' slot 00:00: 'fast' is not a number"),
    (
        HEAD.replace("00:15", "00:16") + "\n" + _profile("a", 90) + "\n",
        "line 1: header column 3 is '00:16', expected '00:15'",
    ),
    (HEAD + "\n", "no profile (only the header)"),
]


@pytest.mark.parametrize(("text", "why"), BAD_PROFILES)
def test_a_bad_time_profile_file_names_its_line_and_reason(tmp_path: Path, text: str, why: str) -> None:
    f = _write(tmp_path / "tp.csv", text)
    with pytest.raises(MetricFileError) as err:
        read_time_profiles(f)
    assert str(err.value).startswith(f"{f} {why}") or str(err.value).startswith(f"{f}: {why}"), str(err.value)


WEEK_LINE = "1,2,rush,rush,rush,rush,rush,free,free"
BAD_SEGMENTS = [
    (f"{SEG_HEAD}\n1,2,rush,rush,rush,rush,rush,free,jam\n", "line 2: sun: unknown profile 'jam' (not in the time"),
    (
        SEG_HEAD.replace("sun", "sunday") + f"\n{WEEK_LINE}\n",
        "line 1: header column 9 is 'sunday', expected 'sun'",
    ),
    (SEG_HEAD.replace(",sun", "") + "\n", "line 1: header has 8 columns, expected 9"),
    (f"{SEG_HEAD}\n1,2,rush,rush,rush,rush,rush,free\n", "line 2: 8 columns, expected 9"),
    (f"{SEG_HEAD}\n\n" + WEEK_LINE.replace("1,2", "1,x") + "\n", "line 3: to_osm_node_id 'x' is not an OSM node id"),
    (f"{WEEK_LINE}\n", "line 1: header column 1 is '1', expected 'from_osm_node_id'"),
]


@pytest.mark.parametrize(("text", "why"), BAD_SEGMENTS)
def test_a_bad_segment_profile_file_names_its_line_and_reason(tmp_path: Path, text: str, why: str) -> None:
    tp = read_time_profiles(_write(tmp_path / "tp.csv", PROFILES))
    f = _write(tmp_path / "sp.csv", text)
    with pytest.raises(MetricFileError) as err:
        read_segment_profiles([f], tp)
    assert str(err.value).startswith(f"{f} {why}"), str(err.value)


# -- the rows on a drawn map ------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> asciimap.Built:
    """a..d one primary way (c a shape point: b -> d is one arc of two segments), a side road b-e-f."""
    return asciimap.build(
        tmp_path_factory.mktemp("drawn"),
        """
        a b c d
          e
          f
        """,
        ways=[("abcd", {"highway": "primary"}), ("bef", {"highway": "residential"})],
        profile="car",
        grid_m=300.0,
    )


def _arc(built: asciimap.Built, x: str, y: str) -> int:
    """The road arc leaving letter x whose first segment heads to letter y."""
    arrays = dict(built.graph.arrays)
    arc, a, b, _ = arc_segments(arrays)
    osm = np.asarray(arrays["geom_osm_id"])
    hit = np.flatnonzero((osm[a] == asciimap.node_id(x)) & (osm[b] == asciimap.node_id(y)))
    return int(arc[hit[0]])


def _segments(tmp_path: Path, built: asciimap.Built, rows: dict[str, str]) -> Path:
    ids = {ch: asciimap.node_id(ch) for ch in "abcdef"}
    lines = [SEG_HEAD] + [f"{ids[k[0]]},{ids[k[1]]},{v}" for k, v in rows.items()]
    return _write(tmp_path / "sp.csv", "\n".join(lines) + "\n")


def _rows(tmp_path: Path, built: asciimap.Built, profiles: str, rows: dict[str, str]) -> tuple[dict, object]:
    tp = read_time_profiles(_write(tmp_path / "tp.csv", profiles))
    sp = read_segment_profiles([_segments(tmp_path, built, rows)], tp)
    return time_metric(dict(built.graph.arrays), tp, sp)


RUSH_WEEK = "rush,rush,rush,rush,rush,free,free"
FAST_WEEK = "fast,fast,fast,fast,fast,fast,fast"


def test_an_arc_wholly_listed_takes_its_row_and_equal_rows_are_shared(drawn: asciimap.Built, tmp_path: Path) -> None:
    out, rep = _rows(
        tmp_path,
        drawn,
        PROFILES,
        {"ab": RUSH_WEEK, "bc": RUSH_WEEK, "cd": RUSH_WEEK, "dc": FAST_WEEK, "cb": FAST_WEEK},
    )
    check_time_profiles(out, len(drawn.graph.arc_head))
    ab, bd, dc = _arc(drawn, "a", "b"), _arc(drawn, "b", "c"), _arc(drawn, "d", "c")
    row = out["td_arc_row"]
    assert row[ab] == row[bd] >= 0 and row[dc] >= 0 and row[dc] != row[ab]
    assert out["td_factor"].shape == (2, SLOTS) and rep.rows == 2 and rep.arcs_timed == 3 and rep.arcs_mixed == 0
    want = np.concatenate([pct_factor(np.array(_rush()))] * 5 + [np.full(96, TD_ONE)] * 2)
    assert np.array_equal(out["td_factor"][row[ab]], want)
    assert np.all(out["td_factor"][row[dc]] == TD_ONE // 2)
    assert np.count_nonzero(row >= 0) == 3  # every other arc static
    # Monday 08:00 (a midpoint-free instant: between the 07:45 and 08:00 slots' midpoints) on a: twice the time
    d = int(drawn.graph.arc_duration[ab])
    assert ttf(d, want, 8 * 36000) == 2 * d and ttf(d, want, 3 * 36000) == d
    assert ttf(d, want, 5 * 864000 + 8 * 36000) == d  # Saturday: free


def test_a_partly_listed_arc_takes_the_duration_weighted_mean(drawn: asciimap.Built, tmp_path: Path) -> None:
    out, rep = _rows(tmp_path, drawn, PROFILES, {"bc": "fast,fast,fast,fast,fast,fast,fast"})
    bd = _arc(drawn, "b", "c")
    sd = np.asarray(drawn.graph.geom_seg_duration)
    arrays = dict(drawn.graph.arrays)
    arc, a, b, _ = arc_segments(arrays)
    mine = arc == bd
    w = sd[np.maximum(a[mine], b[mine]), np.where(b[mine] > a[mine], 0, 1)].astype(float)  # b->c, c->d
    assert len(w) == 2 and rep.arcs_mixed == 1
    want = round((w[0] * TD_ONE / 2 + w[1] * TD_ONE) / (w[0] + w[1]))
    assert np.all(out["td_factor"][out["td_arc_row"][bd]] == want)


def test_a_closed_arc_stays_static(drawn: asciimap.Built, tmp_path: Path) -> None:
    from preprocessing.metric import new_metric

    ids = {ch: asciimap.node_id(ch) for ch in "abcdef"}
    closed, _ = new_metric(
        dict(drawn.graph.arrays), read_segment_speeds([("s", f"{ids['a']},{ids['b']},0\n".encode())]), None
    )
    tp = read_time_profiles(_write(tmp_path / "tp.csv", PROFILES))
    sp = read_segment_profiles([_segments(tmp_path, drawn, {"ab": "fast,fast,fast,fast,fast,fast,fast"})], tp)
    out, rep = time_metric({**drawn.graph.arrays, **closed}, tp, sp)
    assert closed["arc_duration"][_arc(drawn, "a", "b")] >= CLOSED_DS
    assert rep.closed_static == 1 and rep.arcs_timed == 0 and np.all(out["td_arc_row"] == -1)


def _arrivals_never_decrease(d: int, row: np.ndarray) -> bool:
    """Every integer departure of the week (and across its end) arrives no earlier than the one before."""
    tau = np.arange(WEEK_DS + SLOT_DS, dtype=np.int64)
    arrive = tau + ttf(d, row, tau)
    return bool(np.all(np.diff(arrive) >= 0))


def test_rows_that_break_fifo_are_repaired_for_their_arc(drawn: asciimap.Built, tmp_path: Path) -> None:
    """A profile jumping from 1 % to 200 % of free flow lets a later start arrive earlier on any arc over 90 ds:
    such arcs get their own repaired row (counted), and then every integer departure time keeps FIFO."""
    jam = [1.0 if q % 8 == 3 else 200.0 if q % 8 == 4 else 100.0 for q in range(96)]
    profiles = PROFILES + _profile("jam", jam) + "\n"
    every = "jam,jam,jam,jam,jam,jam,jam"
    pairs = ("ab", "bc", "cd", "ba", "dc", "cb", "be", "ef")
    out, rep = _rows(tmp_path, drawn, profiles, dict.fromkeys(pairs, every))
    check_time_profiles(out, len(drawn.graph.arc_head))
    duration = np.asarray(drawn.graph.arc_duration, dtype=np.int64)
    timed = np.flatnonzero(out["td_arc_row"] >= 0)
    week = np.tile(pct_factor(np.array(jam)), 7)
    broken = ~fifo_holds(duration[timed], np.repeat(week[None, :], len(timed), axis=0))
    assert broken.any() and rep.fifo_repaired == int(broken.sum())
    for a in timed:
        row, d = out["td_factor"][out["td_arc_row"][a]], int(duration[a])
        assert fifo_holds(np.array([d]), row[None, :])[0] and _arrivals_never_decrease(d, row), a
        assert np.all(row <= week) and row.min() == week.min()  # only decreases, never below the row's minimum
    # the repaired rows differ from the original only where they had to
    d = int(duration[timed][broken][0])
    fixed = repair_fifo(week[None, :], np.array([d]))[0]
    assert not _arrivals_never_decrease(d, week) and _arrivals_never_decrease(d, fixed)
    assert np.count_nonzero(fixed != week) < SLOTS


# -- the command on Monaco ---------------------------------------------------------------------------------------------
@pytest.fixture
def monaco(bundled_graph: Path, tmp_path: Path) -> tuple[Path, Path, Path]:
    """A copy of the bundled Monaco and hand-written profile files naming three of its segments and one pair it
    does not have (node 1 -> 2)."""
    g = tmp_path / "monaco"
    shutil.copytree(bundled_graph, g)
    arrays = dict(load_graph(g, metric=False).arrays)
    arc, a, b, _ = arc_segments(arrays, lengths=False)
    osm = np.asarray(arrays["geom_osm_id"])
    primary = np.flatnonzero(np.asarray(arrays["arc_class"])[arc] == 5)
    pick = primary[[0, 1, len(primary) // 2]]
    lines = [SEG_HEAD] + [f"{osm[a[i]]},{osm[b[i]]},{RUSH_WEEK}" for i in pick] + [f"1,2,{RUSH_WEEK}"]
    tp = _write(tmp_path / "time_profiles.csv", PROFILES)
    sp = _write(tmp_path / "segment_profiles.csv", "\n".join(lines) + "\n")
    return g, tp, sp


def test_customize_stores_the_profiles_with_the_metric_and_reset_removes_them(monaco: tuple[Path, Path, Path]) -> None:
    g, tp, sp = monaco
    base = load_graph(g)
    done = customize(g, time_profiles=tp, segment_profiles=[sp])
    assert done.time is not None and done.time.segment_keys == 4 and done.time.segment_keys_applied == 3
    assert done.time.segment_keys_unmatched == 1 and done.time.arcs_timed >= 1  # counted, not fatal
    assert done.timezone == "Europe/Monaco" and done.hierarchy == "none"  # no new static weights: no stages
    graph = load_graph(g)
    assert graph.manifest["timezone"] == "Europe/Monaco"
    assert graph.manifest["metric"]["report"]["time_profiles"]["segment_keys_unmatched"] == 1
    assert graph.td_factor.shape[1] == SLOTS and graph.td_arc_row.shape == base.arc_head.shape
    assert np.count_nonzero(graph.td_arc_row >= 0) == done.time.arcs_timed
    assert graph.manifest["metric"]["pending"] == [] and "ch_rank" in graph.arrays  # the preprocessed stages serve
    for name in ("arc_weight", "arc_duration", "eb_arc_weight", "ch_up_arcs"):
        assert np.array_equal(graph.arrays[name], base.arrays[name]), name  # static answers unchanged
    # reloaded on the graph served so far: the metric's profiles, the rest shared
    again = load_graph(g, reuse=graph)
    assert again.arrays["geom_lon"] is graph.arrays["geom_lon"]
    assert np.array_equal(again.td_factor, graph.td_factor) and again.manifest["timezone"] == "Europe/Monaco"
    # a zone given, with a speed file in the same call: both in one metric
    osm = np.asarray(base.geom_osm_id)
    arc, a, b, _ = arc_segments(dict(base.arrays), lengths=False)
    speeds = _write(g.parent / "speeds.csv", f"{osm[a[5]]},{osm[b[5]]},7\n")
    both = customize(g, [speeds], time_profiles=tp, segment_profiles=[sp], timezone="Europe/Paris")
    graph = load_graph(g, reuse=again)
    assert both.report.arcs_changed == 1 and graph.manifest["timezone"] == "Europe/Paris"
    assert graph.td_factor.shape[1] == SLOTS and not np.array_equal(graph.arc_duration, base.arc_duration)
    # a speed file alone: a metric without profiles (a metric is always the preprocessed one plus the files given)
    customize(g, [speeds])
    graph = load_graph(g, reuse=graph)
    assert "td_factor" not in graph.arrays and "timezone" not in graph.manifest
    customize(g, time_profiles=tp, segment_profiles=[sp])
    assert reset(g) and read_metric(g) is None
    graph = load_graph(g, reuse=graph)
    assert "td_factor" not in graph.arrays and "td_arc_row" not in graph.arrays and "timezone" not in graph.manifest


@pytest.mark.parametrize(
    ("what", "why"),
    [
        ("unknown profile", "segment_profiles.csv line 2: mon: unknown profile 'jam'"),
        ("95 slots", "time_profiles.csv line 3: profile 'free' has 95 slots, expected 96"),
        ("0 %", "time_profiles.csv line 2: profile 'rush' slot 00:00: 0 % is not within 1..200"),
        ("201 %", "time_profiles.csv line 4: profile 'fast' slot 00:00: 201 % is not within 1..200"),
        ("duplicate profile", "time_profiles.csv line 4: duplicate profile 'rush' (first defined on line 2)"),
        ("bad weekday column", "segment_profiles.csv line 1: header column 6 is 'thursday', expected 'thu'"),
        ("bad timezone", "--timezone 'Europe/Porto' is not an IANA time zone name"),
        ("one file", "time profiles need both files"),
    ],
)
def test_bad_input_leaves_the_current_metric_untouched(monaco: tuple[Path, Path, Path], what: str, why: str) -> None:
    g, tp, sp = monaco
    first = customize(g, time_profiles=tp, segment_profiles=[sp])
    served = np.array(load_graph(g).td_factor)
    text, seg = tp.read_text(), sp.read_text()
    tz = None
    if what == "unknown profile":
        seg = seg.replace(",rush,", ",jam,", 1)  # line 2's Monday
    elif what == "95 slots":
        text = text.replace("free,100,", "free,", 1)
    elif what == "0 %":
        text = text.replace("rush,100,", "rush,0,", 1)
    elif what == "201 %":
        text = text.replace("fast,200,", "fast,201,", 1)
    elif what == "duplicate profile":
        text = text.replace("fast,", "rush,", 1)
    elif what == "bad weekday column":
        seg = seg.replace(",thu,", ",thursday,", 1)
    else:
        tz = "Europe/Porto"
    bad_tp, bad_sp = _write(tp.parent / "bad_tp.csv", text), _write(sp.parent / "bad_sp.csv", seg)
    with pytest.raises(MetricFileError) as err:
        if what == "one file":
            customize(g, time_profiles=tp)
        else:
            named_tp, named_sp = _renamed(bad_tp, "time_profiles.csv"), _renamed(bad_sp, "segment_profiles.csv")
            customize(g, time_profiles=named_tp, segment_profiles=[named_sp], timezone=tz)
    assert why in str(err.value), str(err.value)
    metric = read_metric(g)
    assert metric is not None and metric["id"] == first.metric_id  # nothing written
    assert np.array_equal(load_graph(g).td_factor, served)


def _renamed(f: Path, name: str) -> Path:
    """`f` moved into a folder of its own under `name` (the messages name the file)."""
    home = f.parent / f.stem
    home.mkdir(exist_ok=True)
    return f.rename(home / name)


def test_the_cli_reports_the_profiles_refuses_bad_ones_and_runs_without_numba(monaco: tuple[Path, Path, Path]) -> None:
    g, tp, sp = monaco
    code = (
        "import sys; from app.cli import run; rc = run(['customize', *sys.argv[1:]]); print(rc, 'numba' in sys.modules)"
    )
    cmd = [sys.executable, "-c", code, str(g), "--time-profiles", str(tp), "--segment-profiles", str(sp)]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=api_server.ROOT, timeout=120)
    assert r.returncode == 0 and r.stdout.split()[-2:] == ["0", "False"], r.stdout + r.stderr
    assert "time profiles: 3 profiles; 4 segment lines, 4 segments, 3 applied" in r.stdout, r.stdout
    assert "1 matched no segment" in r.stdout and "time zone Europe/Monaco" in r.stdout, r.stdout
    before = os.readlink(g / METRIC_LINK)
    bad = _write(tp.parent / "bad.csv", PROFILES.replace("fast,200,", "fast,201,"))
    cmd = [
        sys.executable,
        "-m",
        "app.cli",
        "customize",
        str(g),
        "--time-profiles",
        str(bad),
        "--segment-profiles",
        str(sp),
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=api_server.ROOT, timeout=120)
    assert r.returncode == 2 and f"{bad} line 4: profile 'fast' slot 00:00: 201 %" in r.stderr, r.stderr
    assert "the metric was not changed" in r.stderr and os.readlink(g / METRIC_LINK) == before
    cmd = [sys.executable, "-m", "app.cli", "customize", str(g), "--reset"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=api_server.ROOT, timeout=120)
    assert r.returncode == 0 and not os.path.lexists(g / METRIC_LINK), r.stderr


def test_the_format_checks_refuse_bad_profile_arrays() -> None:
    m = 4
    good = {
        "td_factor": np.full((1, SLOTS), TD_ONE, dtype=np.int32),
        "td_arc_row": np.array([-1, 0, 0, -1], dtype=np.int32),
    }
    check_time_profiles(good, m)
    cases = [
        ({**good, "td_factor": np.full((1, SLOTS), TD_ONE // 2 - 1, dtype=np.int32)}, "within 32768..6553600"),
        ({**good, "td_factor": np.full((1, SLOTS), 100 * TD_ONE + 1, dtype=np.int32)}, "within 32768..6553600"),
        ({**good, "td_factor": np.full((1, 96), TD_ONE, dtype=np.int32)}, "one row of 672 weekly slots"),
        ({**good, "td_arc_row": np.array([-1, 1, 0, -1], dtype=np.int32)}, "td_factor row id"),
        ({**good, "td_arc_row": np.array([-1, 0, 0], dtype=np.int32)}, "one entry per arc"),
        ({"td_factor": good["td_factor"]}, "come together"),
    ]  # fmt: skip
    for arrays, why in cases:
        with pytest.raises(FormatError, match=why):
            check_time_profiles(arrays, m)


# -- a running server ------------------------------------------------------------------------------------------------
def test_a_running_server_takes_the_profiles_on_sighup(monaco: tuple[Path, Path, Path]) -> None:
    """SIGHUP to a server (two workers) makes every worker serve the metric with the profiles; routes without a
    departure time answer as before."""
    g, tp, sp = monaco
    proc, base = api_server.start(g, "--workers", "2")
    url = "/route/v1/driving/7.4190,43.7311;7.4290,43.7400"
    try:
        before = httpx.get(base + url, timeout=30).json()["routes"][0]["duration"]
        done = customize(g, time_profiles=tp, segment_profiles=[sp])
        os.kill(proc.pid, signal.SIGHUP)
        seen: dict[int, str] = {}
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (len(seen) == 2 and set(seen.values()) == {done.metric_id}):
            time.sleep(0.3)
            with httpx.Client(base_url=base, timeout=10) as c:
                h = c.get("/health").json()
                seen[h["pid"]] = h["metric"]["id"]
        assert len(seen) == 2 and set(seen.values()) == {done.metric_id}, seen
        assert httpx.get(base + url, timeout=30).json()["routes"][0]["duration"] == before
    finally:
        api_server.stop(proc)


# -- the Valhalla peer's predicted-traffic encoding -------------------------------------------------------------------
def test_the_admin_endpoint_takes_profiles_as_a_json_body(monaco: tuple[Path, Path, Path]) -> None:
    """`POST /admin/metric` with a JSON body: the files' texts by name, the zone; this worker serves them at once; a
    bad file or key is a 400 naming it, with nothing written."""
    import asyncio

    from app.main import create_app
    from app.settings import Settings

    g, tp, sp = monaco
    app = create_app(Settings(graph_dir=g, admin_token="t0ken"))
    app.state.service.open()

    def post(body: object) -> httpx.Response:
        async def go() -> httpx.Response:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as c:
                auth = {"Authorization": "Bearer t0ken"}
                return await c.post("/admin/metric", json=body, headers=auth, timeout=120)

        return asyncio.run(go())

    texts = {"time_profiles": tp.read_text(), "segment_profiles": sp.read_text()}
    bad = post({**texts, "time_profiles": texts["time_profiles"].replace(",50,", ",0,", 1)})
    assert bad.status_code == 400 and "time_profiles line 2" in bad.json()["message"], bad.text
    assert post({**texts, "speeds": ""}).status_code == 400 and post([1]).status_code == 400
    assert not os.path.lexists(g / METRIC_LINK)
    ok = post({**texts, "timezone": "Europe/Paris"})
    assert ok.status_code == 200, ok.text
    out = ok.json()
    assert out["timezone"] == "Europe/Paris" and out["report"]["time_profiles"]["segment_keys_applied"] == 3
    served = app.state.service.engine.graph
    assert served.manifest["timezone"] == "Europe/Paris" and np.count_nonzero(served.td_arc_row >= 0) >= 1


def test_the_valhalla_peer_encodes_the_same_week_from_sunday() -> None:
    """The peer's weeks start on Sunday (Valhalla's buckets) where starroute's start on Monday, and its DCT-II
    string decodes (Valhalla's DCT-III) to the speeds given, up to the 200-coefficient truncation."""
    from harness.valhalla_peer import BUCKETS, decode_speeds, encode_speeds, weekly_buckets

    week = np.tile(np.array(_rush()), 7)
    week[5 * 96 :] = 100  # Saturday, Sunday free
    buckets = weekly_buckets(week)
    assert buckets.shape == (BUCKETS,)
    monday_0800 = 288 + 8 * 12
    assert buckets[monday_0800] == 50 and buckets[monday_0800 - 288] == 100  # Sunday 08:00 free
    assert buckets[monday_0800 - 6] == 50 and buckets[monday_0800 - 7] == 100  # from 07:30
    flat = decode_speeds(encode_speeds(np.full(BUCKETS, 50.0)))
    assert np.allclose(flat, 50.0, atol=0.05)
    rush = decode_speeds(encode_speeds(80.0 * buckets / 100))
    assert abs(rush[monday_0800] - 40.0) < 4 and abs(rush[3 * 12] - 80.0) < 4  # 08:00 Monday, 03:00 Sunday
