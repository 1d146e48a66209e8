"""The README's promises that a newcomer acts on: two commands to run the main job, the test command, the install
command CI uses, and the POST bodies."""

from __future__ import annotations

import re

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def code_blocks(text: str) -> list[list[str]]:
    """Indented (4-space) code blocks, as lists of their lines."""
    blocks: list[list[str]] = []
    cur: list[str] = []
    for line in text.splitlines():
        if line.startswith("    ") and line.strip():
            cur.append(line[4:])
        elif cur and not line.strip():
            continue
        elif cur:
            blocks.append(cur)
            cur = []
    if cur:
        blocks.append(cur)
    return blocks


def test_first_block_is_install_and_the_main_job() -> None:
    first = code_blocks(README)[0]
    assert len(first) == 2, first
    install, main = first
    assert "pip install -c constraints.txt -e '.[dev]'" in install
    assert main.strip() == "starroute serve"


def test_test_command_is_what_ci_runs() -> None:
    assert code_blocks(README)[1] == ["python3 -m pytest -q"]
    assert "python3 -m pytest -q\n" in CI
    assert "-c constraints.txt -e '.[dev]'" in CI and "python3 -m venv" in CI


def test_post_bodies_are_documented() -> None:
    assert re.search(r"POST /route\s+\{\"coordinates\"", README)
    assert re.search(r"POST /table\s+\{\"sources\"", README)


def test_tables_end_with_a_blank_line() -> None:
    """A line right after a table (no blank line between) is read as one more row: the paragraph disappears into
    the table on GitHub."""
    lines = README.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line.startswith("|") and lines[i + 1].strip() and not lines[i + 1].startswith("|"):
            raise AssertionError(f"README line {i + 2} follows a table without a blank line: {lines[i + 1][:60]!r}")
