"""The vendored front-end files (app/static/vendor/) are the published ones, whole, and parse.

Checked without a network against the records beside the files (written by tools/vendor_checksums.py from the npm
tarballs): `SHA256SUMS` (the bytes shipped) and `UPSTREAM.json` (package, version, the registry's tarball
integrity, the file's sha256 in the tarball and the source-map comment removed from its end). A file damaged on
the way in (redoc's bundle once lost a chunk from its middle and `/redoc` was a blank page while every asset URL
answered 200) fails here. The JavaScript (vendored and the map page's own) is parsed with `node --check` where node
is installed; tests/http/test_map_page.py loads every page in Chromium, which parses it there too.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import ROOT

VENDOR = ROOT / "app" / "static" / "vendor"
RECORDS = ("README.md", "SHA256SUMS", "UPSTREAM.json")


def _sums() -> dict[str, str]:
    out = {}
    for line in (VENDOR / "SHA256SUMS").read_text(encoding="utf-8").splitlines():
        digest, rel = line.split("  ", 1)
        out[rel] = digest
    return out


def _sha(p: Path) -> str:
    return hashlib.sha256(p.read_bytes()).hexdigest()


def test_shipped_files_match_their_checksums() -> None:
    sums = _sums()
    bad = [rel for rel, digest in sums.items() if _sha(VENDOR / rel) != digest]
    assert not bad, f"vendored files differ from SHA256SUMS: {bad}"


def test_shipped_files_are_the_published_ones() -> None:
    """Each file plus the comment removed from its end is byte for byte the file of the npm tarball."""
    upstream = json.loads((VENDOR / "UPSTREAM.json").read_text(encoding="utf-8"))
    assert set(upstream) == set(_sums())
    for rel, meta in upstream.items():
        assert meta["integrity"].startswith("sha512-") and meta["tarball"].startswith("https://registry.npmjs.org/")
        assert meta["stripped"] == "" or meta["stripped"].lstrip().startswith(("//# sourceMappingURL=", "/*# source"))
        whole = (VENDOR / rel).read_bytes() + meta["stripped"].encode()
        assert hashlib.sha256(whole).hexdigest() == meta["sha256"], f"{rel} is not {meta['package']}@{meta['version']}"


def test_every_vendored_file_is_recorded() -> None:
    """No file in vendor/ without a checksum (the licences of packages bundled inside another are the exception:
    they come from those packages' own tarballs, README.md says which)."""
    sums = _sums()
    files = sorted(str(p.relative_to(VENDOR)) for p in VENDOR.rglob("*") if p.is_file())
    unrecorded = [f for f in files if f not in sums and f not in RECORDS and not Path(f).name.startswith("LICENSE-")]
    assert not unrecorded, unrecorded
    assert "redoc/redoc.standalone.js" in sums and "swagger-ui/swagger-ui-bundle.js" in sums


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed (the browser tests parse it too)")
def test_javascript_parses() -> None:
    scripts = sorted(VENDOR.rglob("*.js")) + sorted((ROOT / "app" / "static" / "map").glob("*.js"))
    assert len(scripts) >= 6
    for js in scripts:
        r = subprocess.run(["node", "--check", str(js)], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, f"{js.relative_to(ROOT)} does not parse: {r.stderr.strip()[-300:]}"
