"""`starroute preprocess` end to end: the happy path and every bad input of issue 2 (message, exit code, no output)."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from app.cli import Stopped
from app.cli import run as cli_run
from floor.format.arrays import FORMAT_VERSION, FormatError
from floor.format.graph import load_graph
from floor.format.manifest import read_manifest
from tests.conftest import BUNDLED as MONACO
from tests.conftest import ROOT


@dataclass
class Result:
    exit_code: int
    output: str


def invoke(*argv: str) -> Result:
    """Run the `starroute` command line in-process; stdout and stderr together."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        try:
            code = cli_run(list(argv))
        except SystemExit as exc:  # argparse refusing an argument
            code = int(exc.code or 0)
        except Stopped as exc:  # Ctrl-C (the console script exits with this status)
            code = exc.status
    return Result(code, buf.getvalue())


def run(*args: str) -> Result:
    return invoke("preprocess", *args)


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir()) if parent.exists() else []


def test_default_extract_builds_loadable_graph(tmp_path: Path) -> None:
    out = tmp_path / "monaco-car"
    res = run(str(ROOT / "data" / "monaco.osm.pbf"), "--output", str(out), "--landmarks", "4")
    assert res.exit_code == 0, res.output
    assert "nodes" in res.output and "stage" in res.output  # the final summary
    g = load_graph(out)
    mf = g.manifest
    assert mf["profile"] == "car"
    assert mf["source"]["name"] == "monaco.osm.pbf"
    assert mf["source"]["sha256"] == "1fdee8b72c48f932cab3aa9f1f74f87dfd954509a3b47cb932556d827189b97c"
    assert mf["counts"]["nodes"] == g.num_nodes > 500
    for name, arr in g.arrays.items():
        assert isinstance(arr, np.memmap), name  # every array memory-maps
    for stage in ("read ways", "read nodes", "build graph", "contract (CH)", "landmarks (ALT)"):
        assert mf["stages"][stage]["seconds"] >= 0
    assert leftovers(tmp_path) == ["monaco-car"]


def test_cch_and_landmarks_built_beside_the_contraction_are_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With a core to spare, the CCH order and the landmarks are built on a thread beside the contraction: the
    arrays are those of the one-thread build, and the stages say where they ran."""
    from preprocessing import pipeline

    together, apart = tmp_path / "together", tmp_path / "apart"
    assert run(str(MONACO), "-o", str(together), "-q").exit_code == 0
    monkeypatch.setattr(pipeline, "CONTRACT_THREADS", 1)
    assert run(str(MONACO), "-o", str(apart), "-q").exit_code == 0
    a, b = load_graph(together), load_graph(apart)
    assert sorted(a.arrays) == sorted(b.arrays) and any(k.startswith("cch_") for k in a.arrays)
    for name in a.arrays:
        assert np.array_equal(np.asarray(a.arrays[name]), np.asarray(b.arrays[name])), name
    for stage in ("cch (order)", "landmarks (ALT)"):
        assert a.manifest["stages"][stage]["beside"] == "contract (CH)", a.manifest["stages"][stage]
        assert "beside" not in b.manifest["stages"][stage]


def test_console_script_quiet(tmp_path: Path) -> None:
    out = tmp_path / "g"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "preprocess",
            str(MONACO),
            "-o",
            str(out),
            "--quiet",
            "--no-ch",
            "--landmarks",
            "0",
            "--profile",
            "testbot",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and proc.stdout == ""
    assert read_manifest(out)["profile"] == "testbot"


def assert_refused(tmp_path: Path, args: list[str], needle: str, code: int = 2) -> None:
    out = tmp_path / "out"
    res = run(*args, "--output", str(out), "--no-ch", "--landmarks", "0")
    assert res.exit_code == code, res.output
    assert needle in res.output, res.output
    assert "Traceback" not in res.output
    assert len(res.output.strip().splitlines()) <= 4, res.output  # one line, plus the estimate and stage logs
    assert not out.exists()
    assert [p for p in leftovers(tmp_path) if p.startswith(".out")] == []


def test_missing_file(tmp_path: Path) -> None:
    assert_refused(tmp_path, [str(tmp_path / "nope.osm.pbf")], "does not exist")


def test_not_an_osm_file_name(tmp_path: Path) -> None:
    f = tmp_path / "notes.txt"
    f.write_text("hello")
    assert_refused(tmp_path, [str(f)], "not an OSM extract")


def test_not_osm_content(tmp_path: Path) -> None:
    f = tmp_path / "fake.osm.pbf"
    f.write_bytes(b"this is not a protocol buffer at all" * 100)
    assert_refused(tmp_path, [str(f)], "cannot read fake.osm.pbf")


def test_truncated_pbf(tmp_path: Path) -> None:
    data = MONACO.read_bytes()
    f = tmp_path / "truncated.osm.pbf"
    f.write_bytes(data[: len(data) // 2])
    assert_refused(tmp_path, [str(f)], "cannot read truncated.osm.pbf")


def test_corrupt_pbf(tmp_path: Path) -> None:
    data = bytearray(MONACO.read_bytes())
    rng = np.random.default_rng(7)
    pos = len(data) // 3
    data[pos : pos + 4096] = rng.integers(0, 256, 4096, dtype=np.uint8).tobytes()
    f = tmp_path / "corrupt.osm.pbf"
    f.write_bytes(bytes(data))
    assert_refused(tmp_path, [str(f)], "cannot read corrupt.osm.pbf")


def test_corrupt_gzip_xml(tmp_path: Path) -> None:
    f = tmp_path / "broken.osm.gz"
    f.write_bytes(gzip.compress(b"<?xml version='1.0'?><osm version='0.6'><node id='1' lat='1' lon=")[:-8])
    assert_refused(tmp_path, [str(f)], "cannot read broken.osm.gz")


def test_no_routable_ways(tmp_path: Path) -> None:
    f = tmp_path / "empty.osm"
    f.write_text(
        "<?xml version='1.0' encoding='UTF-8'?>\n<osm version='0.6' generator='test'>\n"
        " <node id='1' lat='1.0' lon='1.0'/>\n <node id='2' lat='1.001' lon='1.0'/>\n"
        " <way id='1'><nd ref='1'/><nd ref='2'/><tag k='building' v='yes'/></way>\n</osm>\n"
    )
    assert_refused(tmp_path, [str(f)], "no routable ways for profile 'car'")


def test_unknown_profile(tmp_path: Path) -> None:
    assert_refused(tmp_path, [str(MONACO), "--profile", "hovercraft"], "invalid choice: 'hovercraft'")


def test_output_exists_refused_then_forced(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("precious")
    res = run(str(MONACO), "--output", str(out), "--no-ch", "--landmarks", "0")
    assert res.exit_code == 2 and "already exists: pass --force" in res.output
    assert (out / "keep.txt").read_text() == "precious"
    res = run(str(MONACO), "--output", str(out), "--no-ch", "--landmarks", "0", "--force")
    assert res.exit_code == 0, res.output
    assert not (out / "keep.txt").exists()
    assert read_manifest(out)["counts"]["nodes"] > 0


def test_loader_refuses_version_and_fingerprint_mismatch(tmp_path: Path) -> None:
    import json

    out = tmp_path / "g"
    assert run(str(MONACO), "-o", str(out), "--no-ch", "--landmarks", "0", "-q").exit_code == 0
    mf_path = out / "manifest.json"
    mf = json.loads(mf_path.read_text())
    mf["counts"]["nodes"] += 1
    mf_path.write_text(json.dumps(mf))
    with pytest.raises(FormatError, match="fingerprint mismatch"):
        load_graph(out)
    mf["format_version"] = 999
    mf_path.write_text(json.dumps(mf))
    with pytest.raises(FormatError, match=f"graph format version 999, this starroute reads {FORMAT_VERSION}: re-run"):
        load_graph(out)


def test_interrupt_while_writing_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import floor.format.arrays as arrays

    real_save = arrays.save_array
    calls = {"n": 0}

    def save_then_interrupt(*a, **k):
        calls["n"] += 1
        if calls["n"] == 5:
            raise KeyboardInterrupt  # Ctrl-C half-way through writing the arrays
        return real_save(*a, **k)

    monkeypatch.setattr(arrays, "save_array", save_then_interrupt)
    out = tmp_path / "out"
    res = run(str(MONACO), "-o", str(out), "--no-ch", "--landmarks", "0")
    assert res.exit_code == 130 and "no graph was written" in res.output
    assert calls["n"] == 5
    assert leftovers(tmp_path) == []


def test_graph_directory_is_readable_by_other_users(tmp_path: Path) -> None:
    import os
    import stat

    out = tmp_path / "g"
    old = os.umask(0o022)
    try:
        assert run(str(MONACO), "-o", str(out), "--no-ch", "--landmarks", "0", "-q").exit_code == 0
    finally:
        os.umask(old)
    mode = stat.S_IMODE(out.stat().st_mode)
    assert mode == 0o755, oct(mode)  # a container's non-root user can read a graph built on the host
    assert all(stat.S_IMODE(f.stat().st_mode) & 0o004 for f in out.iterdir())


def test_failed_write_leaves_no_new_parent_folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import floor.format.arrays as arrays

    def fail(*a, **k):
        raise KeyboardInterrupt

    monkeypatch.setattr(arrays, "save_array", fail)
    res = run(str(MONACO), "-o", str(tmp_path / "graphs" / "deep" / "g"), "--no-ch", "--landmarks", "0")
    assert res.exit_code == 130
    assert leftovers(tmp_path) == []


def test_version_help_and_bare_command() -> None:
    from app.cli import version

    res = invoke("--version")
    assert res.exit_code == 0 and res.output.strip() == f"starroute {version()}"
    bare = invoke()
    assert bare.exit_code == 0 and "preprocess" in bare.output and "serve" in bare.output
    for cmd in ("preprocess", "serve", "route", "info", "download", "compile"):
        text = invoke(cmd, "--help").output
        assert "<bool>" not in text and "{graph_dir}" not in text and "usage: starroute " + cmd in text
    assert "GRAPH_DIR" in invoke("route", "--help").output


def test_preprocess_says_what_to_run_next(tmp_path: Path) -> None:
    out = tmp_path / "g"
    res = run(str(MONACO), "-o", str(out), "--no-ch", "--landmarks", "0")
    assert res.exit_code == 0
    assert res.output.strip().splitlines()[-1] == f"next: starroute serve {out}"


def test_unchanged_extract_is_up_to_date_and_info_summarises(tmp_path: Path) -> None:
    """`preprocess` again on the same extract with the same options: "up to date", exit 0, nothing rebuilt; other
    options still need --force. `info` prints a short summary, `info --json` the manifest."""
    out = tmp_path / "g"
    args = (str(MONACO), "-o", str(out), "--no-ch", "--landmarks", "0", "-q")
    assert run(*args).exit_code == 0
    built = (out / "manifest.json").stat().st_mtime_ns
    again = run(*args)
    assert again.exit_code == 0 and "is up to date" in again.output, again.output
    assert (out / "manifest.json").stat().st_mtime_ns == built
    other = run(str(MONACO), "-o", str(out), "--no-ch", "--landmarks", "2", "-q")
    assert other.exit_code == 2 and "--force" in other.output
    info = invoke("info", str(out))
    assert info.exit_code == 0 and len(info.output.splitlines()) <= 20, info.output
    assert "nodes" in info.output and "monaco.osm.pbf" in info.output and "{" not in info.output
    whole = invoke("info", str(out), "--json")
    assert json.loads(whole.output)["counts"]["nodes"] > 0


def _preprocess_console(out: Path, stderr: Any) -> subprocess.CompletedProcess[str]:
    """The console command on a small build; stdout a pipe, stderr as given."""
    args = [sys.executable, "-m", "app.cli", "preprocess", str(MONACO), "-o", str(out), "--no-ch", "--landmarks", "0"]
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "120"}
    return subprocess.run(args, stdout=subprocess.PIPE, stderr=stderr, text=True, cwd=ROOT, env=env, timeout=600)


def _assert_only_the_summary(stdout: str, out: Path) -> None:
    lines = stdout.strip().splitlines()
    assert lines[0] == f"graph       {out}" and lines[-1] == f"next: starroute serve {out}", stdout
    assert "starroute:" not in stdout and "\x1b" not in stdout and "━" not in stdout, stdout


def test_progress_goes_to_stderr_and_the_summary_to_stdout(tmp_path: Path) -> None:
    """stderr not a terminal (a log, CI): a plain line per step there, no bar; stdout holds the summary only."""
    out = tmp_path / "g"
    proc = _preprocess_console(out, subprocess.PIPE)
    assert proc.returncode == 0, proc.stderr
    _assert_only_the_summary(proc.stdout, out)
    assert "starroute: read ways ..." in proc.stderr and "starroute: read ways done in " in proc.stderr, proc.stderr
    assert "\x1b" not in proc.stderr and "━" not in proc.stderr and "graph       " not in proc.stderr, proc.stderr


def test_progress_on_a_terminal_is_a_bar(tmp_path: Path) -> None:
    """stderr a terminal: a progress bar per stage there (no step lines), the summary still on stdout alone."""
    import fcntl
    import pty
    import re
    import struct
    import termios
    import threading

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    chunks: list[bytes] = []

    def drain() -> None:
        while True:
            try:
                data = os.read(master, 65536)
            except OSError:  # the child closed its end
                return
            if not data:
                return
            chunks.append(data)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    out = tmp_path / "g"
    try:
        proc = _preprocess_console(out, slave)
    finally:
        os.close(slave)
        reader.join(10)
        os.close(master)
    terminal = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", b"".join(chunks).decode("utf-8", "replace"))
    assert proc.returncode == 0, terminal
    _assert_only_the_summary(proc.stdout, out)
    assert "━" in terminal and re.search(r"read ways\s+━", terminal), terminal
    assert " done in " not in terminal and "graph       " not in terminal, terminal
