"""`starroute download REGION`: fetch a Geofabrik extract with a progress bar and verify its MD5 checksum.

The file is streamed into a temporary name beside the target and renamed only after the checksum matches, so an
interrupted or corrupt download never leaves a file that looks complete.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import httpx

from floor.format.files import committing, keep_created, make_parents, remove_created, track, untrack
from floor.report import Reporter

GEOFABRIK = "https://download.geofabrik.de"
REGION_RE = re.compile(r"^[a-z0-9][a-z0-9\-]*(/[a-z0-9][a-z0-9\-]*)*$")


class DownloadError(Exception):
    """A failed download; the message is one sentence for the user."""


def region_url(region: str, base_url: str = GEOFABRIK) -> str:
    """URL of the latest PBF of a Geofabrik region such as `europe/andorra`."""
    if not REGION_RE.match(region):
        raise DownloadError(f"region {region!r} is not a Geofabrik path such as 'europe/andorra'")
    return f"{base_url.rstrip('/')}/{region}-latest.osm.pbf"


def download(
    region: str,
    output: str | os.PathLike[str] | None = None,
    base_url: str = GEOFABRIK,
    force: bool = False,
    reporter: Reporter | None = None,
    timeout_s: float = 60.0,
) -> Path:
    """Download `region` to `output` (default `data/<name>-latest.osm.pbf`), verifying size and MD5."""
    url = region_url(region, base_url)
    out = Path(output) if output else Path("data") / url.rsplit("/", 1)[1]
    if out.exists() and not force:
        raise DownloadError(f"{out} already exists: pass --force to replace it")
    rep = reporter or Reporter()
    created = make_parents(out.parent)
    tmp = track(out.with_name(out.name + ".part"))
    done = False
    try:
        with httpx.Client(timeout=timeout_s, follow_redirects=True) as client:
            md5_resp = client.get(url + ".md5")
            expected_md5 = md5_resp.text.split()[0].lower() if md5_resp.status_code == 200 and md5_resp.text else None
            with client.stream("GET", url) as resp:
                if resp.status_code != 200:
                    raise DownloadError(f"{url} answered HTTP {resp.status_code}: check the region name")
                size = int(resp.headers.get("content-length", "0")) or None
                h = hashlib.md5()
                got = 0
                with rep.stage("download", total=size, unit="bytes") as tick, open(tmp, "wb") as fh:
                    for chunk in resp.iter_bytes(1 << 16):
                        fh.write(chunk)
                        h.update(chunk)
                        got += len(chunk)
                        tick(len(chunk))
        if size is not None and got != size:
            raise DownloadError(f"download of {url} stopped at {got} of {size} bytes: try again")
        if expected_md5 is not None and h.hexdigest() != expected_md5:
            raise DownloadError(f"checksum mismatch for {url} (md5 {h.hexdigest()}, expected {expected_md5})")
        with committing():
            os.replace(tmp, out)
            keep_created(created)
        done = True
    except httpx.HTTPError as exc:
        raise DownloadError(f"cannot download {url}: {exc}") from None
    finally:
        untrack(tmp)
        if tmp.exists():
            tmp.unlink()
        if not done:
            remove_created(created)  # a failed download leaves no empty data/ folder behind
    return out
