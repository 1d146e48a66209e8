"""Beyond one process: real nginx (deploy/nginx/nginx.conf, the file docker compose runs) in front of three
`starroute serve` processes, one killed under load; and a graph replaced under a running server (built elsewhere,
renamed into the served path, SIGHUP) with no failed request. nginx comes from Debian's package (`.ci/run` installs
it); the nginx test skips with the reason where it is missing."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from harness import api_server

ROOT = Path(__file__).resolve().parents[2]
CONF = ROOT / "deploy" / "nginx" / "nginx.conf"
ROUTE = "/route/v1/driving/7.4190,43.7311;7.4290,43.7400?overview=false"
ROUTE2 = "/route/v1/driving/7.4172,43.7319;7.4255,43.7370?overview=false"


def _nginx_conf(upstreams: list[str], port: int, tmp: Path) -> Path:
    """The shipped config with these upstream servers, listening on loopback `port`, its files under `tmp`."""
    text = CONF.read_text()
    line = re.search(r"^\s*server api:5000 (.*);$", text, flags=re.M)
    assert line, "the shipped config names its upstream `api:5000`"
    params = line.group(1)
    servers = "\n".join(f"        server {u} {params};" for u in upstreams)
    text = text.replace(line.group(0), servers)
    text = text.replace("listen 80;", f"listen 127.0.0.1:{port};")
    paths = "".join(f"    {k}_temp_path {tmp / k};\n" for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    text = text.replace("http {\n", "http {\n" + paths, 1)
    head = f"pid {tmp / 'nginx.pid'};\nerror_log {tmp / 'error.log'} warn;\n"
    if os.geteuid() == 0:
        head += "user root;\n"  # the workers read nothing but this config; root keeps the temp paths writable
    out = tmp / "nginx.conf"
    out.write_text(head + text)
    return out


def _hammer(base: str, paths: list[str], stop: threading.Event, answers: list[tuple[str, float]], failures: list[str]):
    with httpx.Client(base_url=base, timeout=30) as c:
        i = 0
        while not stop.is_set():
            path = paths[i % len(paths)]
            i += 1
            try:
                r = c.get(path)
                if r.status_code != 200 or r.json().get("code") != "Ok":
                    failures.append(f"{r.status_code} {r.text[:200]}")
                else:
                    answers.append((path, r.json()["routes"][0]["duration"]))
            except httpx.HTTPError as exc:
                failures.append(repr(exc))


def _nginx() -> str:
    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.path.exists("/usr/sbin/nginx") else None)
    if nginx is None:
        pytest.skip("nginx is not installed (Debian: apt-get install nginx; .ci/run does)")
    return nginx


def _start_lb(nginx: str, upstreams: list[str], tmp_path: Path) -> tuple[subprocess.Popen, str]:
    """nginx with the shipped config in front of `upstreams`, answering its own health check; (process, base URL)."""
    port = api_server.free_port()
    conf = _nginx_conf(upstreams, port, tmp_path)
    for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (tmp_path / k).mkdir()
    lb = subprocess.Popen([nginx, "-p", str(tmp_path), "-c", str(conf), "-g", "daemon off;"], stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            if httpx.get(f"{base}/nginx-health", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    return lb, base


def test_absolute_urls_behind_nginx_keep_the_published_port(bundled_graph: Path, tmp_path: Path) -> None:
    """TileJSON's tile URL names the host and port the client used (compose publishes nginx on 5000, not 80):
    `proxy_set_header Host $host` dropped the port, so map clients fetched tiles from port 80."""
    nginx = _nginx()
    proc, replica = api_server.start(bundled_graph)
    lb, base = _start_lb(nginx, [replica.removeprefix("http://")], tmp_path)
    try:
        tiles = httpx.get(f"{base}/tile/tilejson.json", timeout=30).json()["tiles"]
        assert tiles[0].startswith(f"{base}/tile/"), tiles
    finally:
        lb.terminate()
        lb.wait(10)
        api_server.stop(proc)


def test_nginx_retries_past_a_replica_killed_under_load(bundled_graph: Path, tmp_path: Path) -> None:
    nginx = _nginx()
    servers = [api_server.start(bundled_graph) for _ in range(3)]
    lb, base = _start_lb(nginx, [b.removeprefix("http://") for _, b in servers], tmp_path)
    try:
        assert httpx.get(f"{base}/health", timeout=10).status_code == 200
        stop, answers, failures = threading.Event(), [], []
        clients = [
            threading.Thread(target=_hammer, args=(base, [ROUTE, ROUTE2], stop, answers, failures)) for _ in range(4)
        ]
        for t in clients:
            t.start()
        time.sleep(1.0)
        before = len(answers)
        servers[1][0].send_signal(signal.SIGKILL)  # a replica dies mid-traffic, connections and all
        time.sleep(2.0)
        stop.set()
        for t in clients:
            t.join()
        assert not failures, failures[:3]
        assert len(answers) > before + 50  # traffic went on through the two left
        assert len({d for p, d in answers if p == ROUTE}) == 1  # every replica answers the same
        pids = {httpx.get(f"{base}/health", timeout=10).json()["pid"] for _ in range(6)}
        assert servers[1][0].pid not in pids and len(pids) == 2
    finally:
        lb.terminate()
        lb.wait(10)
        for proc, _ in servers:
            api_server.stop(proc)


def test_a_graph_swapped_under_a_running_server_with_no_failed_request(bundled_graph: Path, tmp_path: Path) -> None:
    """A new graph built elsewhere and renamed into the served path, then SIGHUP: every answer is the old graph's or
    the new one's, none fails, and every worker serves the new one within a second."""
    from preprocessing.pipeline import preprocess

    served = tmp_path / "current"
    shutil.copytree(bundled_graph, served)
    other = preprocess(
        ROOT / "data" / "monaco.osm.pbf",
        tmp_path / "next",
        profile="car",
        ch=True,
        landmarks=4,
        force=True,
        quiet=True,
        basemap=False,
        turns=False,
    )  # fmt: skip  -- node-based: other durations than the served edge-based graph
    proc, base = api_server.start(served, "--workers", "2")
    try:
        old = {p: httpx.get(base + p, timeout=30).json()["routes"][0]["duration"] for p in (ROUTE, ROUTE2)}
        fp_old = httpx.get(f"{base}/health", timeout=10).json()["graph"]["fingerprint"]
        stop, answers, failures = threading.Event(), [], []
        clients = [
            threading.Thread(target=_hammer, args=(base, [ROUTE, ROUTE2], stop, answers, failures)) for _ in range(3)
        ]
        for t in clients:
            t.start()
        time.sleep(0.5)
        trash = tmp_path / "old"
        os.replace(served, trash)  # the way `starroute preprocess --force` replaces a graph directory
        os.replace(other, served)
        os.kill(proc.pid, signal.SIGHUP)
        time.sleep(1.5)
        stop.set()
        for t in clients:
            t.join()
        new = {p: httpx.get(base + p, timeout=30).json()["routes"][0]["duration"] for p in (ROUTE, ROUTE2)}
        assert not failures, failures[:3]
        assert new != old
        assert all(d in (old[p], new[p]) for p, d in answers)
        fps = set()
        for _ in range(20):
            with httpx.Client(base_url=base, timeout=10) as c:
                fps.add(c.get("/health").json()["graph"]["fingerprint"])
        assert fps == {httpx.get(f"{base}/health", timeout=10).json()["graph"]["fingerprint"]} != {fp_old}
    finally:
        api_server.stop(proc)
