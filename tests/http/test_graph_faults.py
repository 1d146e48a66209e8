"""An operator's first bad day with a graph directory (issue 41, item 10 a, b, d): a file truncated or rewritten under
a running server, noise in an array, a bad name table, temporaries of a killed preprocess, a full disk, and the
swap of a graph for a new one."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import numpy as np
import psutil
import pytest

import floor.format.graph as graph_format
from floor.format.arrays import MANIFEST, FormatError
from floor.format.graph import load_graph, save_graph
from floor.format.integrity import DIGEST
from floor.format.manifest import fingerprint
from harness import api_server

ROOT = Path(__file__).resolve().parents[2]
ROUTE = "/route/v1/driving/7.4190,43.7311;7.4290,43.7400?overview=false"


def _copy(graph: Path, to: Path) -> Path:
    shutil.copytree(graph, to, symlinks=True)
    return to


def _noise(f: Path, at: int = 1024, size: int = 4096) -> None:
    """`size` random bytes written over the file's bytes from `at` on, in place (same inode, same length)."""
    with open(f, "r+b") as fh:
        fh.seek(min(at, max(0, f.stat().st_size - size)))
        fh.write(np.random.default_rng(7).integers(0, 256, size, dtype=np.uint8).tobytes())


def _without_checksums(graph: Path) -> None:
    """The manifest as a graph written before checksums has it (none listed, fingerprint of that)."""
    mf = json.loads((graph / MANIFEST).read_text())
    for meta in mf["arrays"].values():
        meta.pop(DIGEST, None)
    mf["fingerprint"] = fingerprint(mf)
    (graph / MANIFEST).write_text(json.dumps(mf, indent=2, sort_keys=True) + "\n")


def _serve_fails(graph: Path) -> str:
    """`python -m app.server graph` must exit at once with an error: its stderr."""
    r = subprocess.run(
        [sys.executable, "-m", "app.server", str(graph), "--port", str(api_server.free_port())],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode != 0, r.stdout[-2000:]
    return r.stderr


# --- b. contents -----------------------------------------------------------------------------------------------------


def test_every_array_has_a_checksum_and_noise_is_refused_with_the_file_name(bundled_graph: Path, tmp_path: Path):
    mf = json.loads((bundled_graph / MANIFEST).read_text())
    assert all(len(meta.get(DIGEST, "")) == 16 for meta in mf["arrays"].values())
    g = _copy(bundled_graph, tmp_path / "g")
    _noise(g / "node_lat.npy")
    with pytest.raises(FormatError, match=r"node_lat\.npy does not hold what was written \(its xxh3_64 checksum"):
        load_graph(g)
    err = _serve_fails(g)
    assert "node_lat.npy" in err and "checksum" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err


def test_a_bad_name_table_is_one_sentence_at_start_up(bundled_graph: Path, tmp_path: Path) -> None:
    """Invalid UTF-8 in the name table of a graph without checksums (written before them): one line, no traceback."""
    g = _copy(bundled_graph, tmp_path / "g")
    _without_checksums(g)
    f = g / "str_bytes.npy"
    header = f.stat().st_size - int(np.load(f, mmap_mode="r").nbytes)
    with open(f, "r+b") as fh:
        fh.seek(header + 3)
        fh.write(b"\xff\xfe\xff")
    err = _serve_fails(g)
    assert "str_bytes" in err and "UTF-8" in err and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_a_graph_without_checksums_still_loads(bundled_graph: Path, tmp_path: Path) -> None:
    g = _copy(bundled_graph, tmp_path / "g")
    _without_checksums(g)
    assert load_graph(g).num_nodes == load_graph(bundled_graph).num_nodes


# --- a. a file changed under a running server ------------------------------------------------------------------------


def _log(proc: subprocess.Popen) -> str:
    return Path(os.readlink(f"/proc/{proc.pid}/fd/1")).read_text(errors="replace")


def test_a_file_truncated_under_a_running_server(bundled_graph: Path, tmp_path: Path) -> None:
    """Every route request crashed its worker while /health said 200, and a SIGHUP killed every process (SIGBUS).
    Now requests are refused (503, the file named), /health says unusable, a SIGHUP is refused with a log line and
    nothing dies; restoring the file and a SIGHUP serve again."""
    served = _copy(bundled_graph, tmp_path / "current")
    proc, base = api_server.start(served, "--workers", "2")
    try:
        with httpx.Client(base_url=base, timeout=30) as c:
            ok = c.get(ROUTE).json()["routes"][0]["duration"]
        workers = {p.pid for p in psutil.Process(proc.pid).children()}
        assert len(workers) == 2
        victim = max(served.glob("*.npy"), key=lambda f: f.stat().st_size)
        os.truncate(victim, victim.stat().st_size // 2)
        time.sleep(0.5)
        for _ in range(10):
            with httpx.Client(base_url=base, timeout=30) as c:  # new connections: either worker
                r = c.get(ROUTE)
                assert r.status_code == 503 and r.headers["retry-after"], r.text
                assert r.json()["code"] == "Unavailable" and victim.name in r.json()["message"]
                h = c.get("/health")
                assert h.status_code == 503 and h.json()["status"] == "unusable"
                assert "truncated" in h.json()["problems"][0] and victim.name in h.json()["problems"][0]
        os.kill(proc.pid, signal.SIGHUP)
        time.sleep(3.0)
        assert proc.poll() is None, "the supervisor survives a reload of a truncated graph"
        assert {p.pid for p in psutil.Process(proc.pid).children()} == workers  # the same workers: none died
        assert "reload of" in _log(proc) and "refused" in _log(proc)
        fresh = victim.with_suffix(".new")
        shutil.copyfile(bundled_graph / victim.name, fresh)
        os.replace(fresh, victim)  # restored as a new file (the damaged inode stays mapped until the reload)
        os.kill(proc.pid, signal.SIGHUP)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with httpx.Client(base_url=base, timeout=30) as c:
                if all(c.get("/health").status_code == 200 for _ in range(6)):
                    break
            time.sleep(0.5)
        with httpx.Client(base_url=base, timeout=30) as c:
            assert c.get(ROUTE).json()["routes"][0]["duration"] == ok
    finally:
        api_server.stop(proc)


def test_a_graph_replaced_by_rename_is_not_damage(bundled_graph: Path, tmp_path: Path) -> None:
    """A new graph renamed over the served one (the way preprocess --force does) leaves the mapped inodes intact."""
    served = _copy(bundled_graph, tmp_path / "current")
    g = load_graph(served)
    assert g.damaged() == []
    os.replace(served, tmp_path / "old")
    _copy(bundled_graph, served)
    shutil.rmtree(tmp_path / "old")
    assert g.damaged() == []
    _noise(served / "node_lat.npy")  # the new file, not the one g maps
    assert g.damaged() == []
    g3 = load_graph(_copy(bundled_graph, tmp_path / "third"))
    _noise(tmp_path / "third" / "node_lat.npy")  # rewritten in place: this one is damage
    assert [p for p in g3.damaged() if "node_lat.npy was rewritten in place" in p]


# --- d. preprocess: leftovers, a full disk, one rename ---------------------------------------------------------------


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_temporaries_of_killed_runs_are_removed_by_the_next(bundled_graph: Path, tmp_path: Path) -> None:
    g = load_graph(bundled_graph, metric=False, check=False)
    out = tmp_path / "a"
    dead = _dead_pid()
    stale = [tmp_path / ".a.tmp-k3x9q1zz", tmp_path / f".a.tmp-{dead}-abcd1234", tmp_path / f".a.old-{dead}-x"]
    live = tmp_path / f".a.tmp-{os.getpid()}-running"  # a run still under way (this process) keeps its own
    other = tmp_path / ".b.tmp-k3x9q1zz"  # another graph's
    for d in (*stale, live, other):
        (d / "sub").mkdir(parents=True)
        (d / "sub" / "x.npy").write_bytes(b"x" * 100)
    save_graph(out, dict(g.arrays), dict(g.manifest))
    assert [d for d in stale if d.exists()] == []
    assert live.is_dir() and other.is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a", live.name, other.name])


def test_a_full_disk_is_one_sentence_and_leaves_nothing(tmp_path: Path) -> None:
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(tiny)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a 1 MiB tmpfs here: {mounted.stderr.decode().strip()[:100]}")
    try:
        r = subprocess.run(
            [sys.executable, "-m", "app.cli", "preprocess", "data/monaco.osm.pbf", "--output", str(tiny / "g")],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert r.returncode != 0
        assert "Traceback" not in r.stderr, r.stderr[-3000:]
        lines = [line for line in r.stderr.splitlines() if "no space left" in line]
        assert len(lines) == 1 and str(tiny) in lines[0] and "MB are free" in lines[0], r.stderr[-3000:]
        assert list(tiny.iterdir()) == []
    finally:
        subprocess.run(["umount", str(tiny)], check=False)


def test_a_graph_is_swapped_for_another_in_one_rename(
    bundled_graph: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The graph path always holds a whole graph: no moment between moving the old one out and the new one in."""
    g = load_graph(bundled_graph, metric=False, check=False)
    out = save_graph(tmp_path / "a", dict(g.arrays), dict(g.manifest))
    gaps: list[tuple[str, str]] = []
    real = os.replace

    def watched(src: str | os.PathLike[str], dst: str | os.PathLike[str]) -> None:
        real(src, dst)
        if not (out / MANIFEST).is_file():
            gaps.append((str(src), str(dst)))

    monkeypatch.setattr(graph_format.os, "replace", watched)
    save_graph(out, dict(g.arrays), {**g.manifest, "built_at": "another"}, force=True)
    assert gaps == []
    assert json.loads((out / MANIFEST).read_text())["built_at"] == "another"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a"]
