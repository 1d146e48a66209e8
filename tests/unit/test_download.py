"""`starroute download` against a Geofabrik-like HTTP server on loopback: progress, checksum, atomic rename."""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from floor.report import Reporter
from preprocessing.osm.download import DownloadError, download, region_url

PAYLOAD = b"\x00\x00\x00\x0dfake-pbf-bytes" * 5000


class Handler(http.server.BaseHTTPRequestHandler):
    files: dict[str, bytes] = {}

    def do_GET(self) -> None:  # noqa: N802
        body = self.files.get(self.path)
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def server() -> Iterator[str]:
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def publish(region: str, body: bytes, md5: str | None = None) -> None:
    Handler.files = {
        f"/{region}-latest.osm.pbf": body,
        f"/{region}-latest.osm.pbf.md5": f"{md5 or hashlib.md5(body).hexdigest()}  x.osm.pbf\n".encode(),
    }


def test_download_verifies_checksum(server: str, tmp_path: Path) -> None:
    publish("europe/andorra", PAYLOAD)
    out = download("europe/andorra", tmp_path / "a.osm.pbf", base_url=server, reporter=Reporter(quiet=True))
    assert out.read_bytes() == PAYLOAD
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.osm.pbf"]


def test_checksum_mismatch_leaves_nothing(server: str, tmp_path: Path) -> None:
    publish("europe/andorra", PAYLOAD, md5="0" * 32)
    with pytest.raises(DownloadError, match="checksum mismatch"):
        download("europe/andorra", tmp_path / "a.osm.pbf", base_url=server, reporter=Reporter(quiet=True))
    assert list(tmp_path.iterdir()) == []


def test_unknown_region_and_existing_output(server: str, tmp_path: Path) -> None:
    publish("europe/andorra", PAYLOAD)
    with pytest.raises(DownloadError, match="HTTP 404"):
        download("europe/atlantis", tmp_path / "x.osm.pbf", base_url=server, reporter=Reporter(quiet=True))
    (tmp_path / "x.osm.pbf").write_bytes(b"keep")
    with pytest.raises(DownloadError, match="already exists"):
        download("europe/andorra", tmp_path / "x.osm.pbf", base_url=server, reporter=Reporter(quiet=True))
    assert (tmp_path / "x.osm.pbf").read_bytes() == b"keep"
    with pytest.raises(DownloadError, match="not a Geofabrik path"):
        region_url("../../etc/passwd")


def test_failed_download_leaves_no_empty_folder(server: str, tmp_path: Path) -> None:
    publish("europe/andorra", PAYLOAD, md5="0" * 32)
    target = tmp_path / "data" / "sub" / "a.osm.pbf"
    with pytest.raises(DownloadError):
        download("europe/andorra", target, base_url=server, reporter=Reporter(quiet=True))
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(DownloadError, match="HTTP 404"):
        download("europe/atlantis", target, base_url=server, reporter=Reporter(quiet=True))
    assert list(tmp_path.iterdir()) == []
    publish("europe/andorra", PAYLOAD)
    assert download("europe/andorra", target, base_url=server, reporter=Reporter(quiet=True)).exists()
