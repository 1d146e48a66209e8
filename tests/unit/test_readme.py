"""The README's promises that a newcomer acts on: the two commands on its first lines (`make run`, `make test`) and
what they do, the test command CI runs, the install command by hand, and the POST bodies."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from tests.conftest import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
CI = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
VENV_SH = (ROOT / "tools" / "venv.sh").read_text(encoding="utf-8")


def recipe(target: str) -> str:
    """The recipe lines of a Makefile target."""
    m = re.search(rf"^{target}:.*\n((?:\t.*\n)+)", MAKEFILE, re.M)
    assert m, f"no `{target}` target in the Makefile"
    return m.group(1)


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


def test_first_lines_are_the_two_commands() -> None:
    blocks = code_blocks(README)
    assert README.startswith("# starroute\n\n    make run")  # right under the title
    assert [line.split("#")[0].strip() for line in blocks[0]] == ["make run", "make test"]


def test_make_run_and_test_set_up_then_run_the_readme_commands() -> None:
    assert "tools/venv.sh" in recipe("venv") and "tools/venv.sh dev" in recipe("venv-dev")
    assert re.match(r"run: venv\b", MAKEFILE[MAKEFILE.index("\nrun:") + 1 :])
    assert re.match(r"test: venv-dev\b", MAKEFILE[MAKEFILE.index("\ntest:") + 1 :])
    assert "starroute serve $(ARGS)" in recipe("run")
    assert "python3 -m pytest $(PYTEST_ARGS)" in recipe("test") and "PYTEST_ARGS ?= -q\n" in MAKEFILE
    assert "python3 -m venv" in VENV_SH and "-m pip install" in VENV_SH and '-c constraints.txt -e "$spec"' in VENV_SH
    assert "pip check" in VENV_SH


def test_make_run_says_where_the_starroute_command_is() -> None:
    """`make run` finds `starroute` in .venv/bin; a shell does not: it says where the command is (and the README
    does), unless the shell's PATH already leads there."""
    if shutil.which("make") is None:
        pytest.skip("no make on this machine")
    venv_bin = str(ROOT / ".venv" / "bin")
    if not (ROOT / ".venv" / "bin" / "starroute").exists():
        pytest.skip("no .venv in the clone (make sets it up)")
    path = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p.rstrip("/") != venv_bin)
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}

    def run(path: str) -> str:
        done = subprocess.run(["make", "-s", "run", "ARGS=--help"], cwd=ROOT, env={**env, "PATH": path},
                              capture_output=True, text=True, timeout=300)  # fmt: skip
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout

    out = run(path)
    assert out.startswith("make run: the starroute command is .venv/bin/starroute"), out
    assert "usage: starroute serve" in out
    assert not run(venv_bin + os.pathsep + path).startswith("make run:")
    assert "`.venv/bin/starroute`" in README


def test_ci_runs_make_test_and_the_readme_says_so() -> None:
    commands = [ln for ln in CI.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert commands[-1] == "make test"
    assert "`.ci/run` runs exactly `make test`" in README
    assert "apt-get install make" in README


def test_install_by_hand() -> None:
    by_hand = next(b for b in code_blocks(README) if any("pip install" in line for line in b))
    assert by_hand == [
        "python3 -m venv .venv && . .venv/bin/activate && pip install -c constraints.txt -e '.[dev]'",
        "starroute serve",
        "python3 -m pytest -q",
    ]


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
