"""A peer engine's binaries from its PyPI wheel (cp312-abi3, runnable from any Python once unpacked): downloaded
once with pip, unpacked into a shared directory, reused by every later run."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path


def wheel_binaries(requirement: str, wheel_glob: str, dest: Path, bin_dir: Path, probe: str) -> Path | None:
    """`bin_dir` (inside `dest`) once it holds `probe`, after downloading `requirement`'s wheel (Python 3.12, no
    dependencies) and unpacking it into `dest` if needed; None, said on stderr, when pip cannot get it."""
    if (bin_dir / probe).exists():
        return bin_dir
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run(
            [sys.executable, "-m", "pip", "download", requirement, "--no-deps", "--only-binary=:all:"]
            + ["--python-version", "3.12", "-d", tmp, "-q"],
            capture_output=True,
            text=True,
        )
        wheels = list(Path(tmp).glob(wheel_glob))
        if r.returncode != 0 or not wheels:
            print(f"{requirement} not available: {r.stderr.strip()[-300:]}", file=sys.stderr)
            return None
        with zipfile.ZipFile(wheels[0]) as z:
            z.extractall(dest)
    for exe in bin_dir.iterdir():
        exe.chmod(0o755)
    return bin_dir
