"""The README, as a newcomer meets it (issue 29): short, its two commands the Makefile's and
CI's, every command block run by a test, every link to a file that exists."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from tests import ROOT
from tests.docs_blocks import blocks, text

README = "README.md"


def make_commands(lines: list[str]) -> list[str]:
    return [line.split("#")[0].strip() for line in lines if line.startswith("make ")]


def test_the_readme_is_at_most_200_lines() -> None:
    assert len(text(README).splitlines()) <= 200


def test_its_opening_paragraph_names_the_protocols_the_transports_and_the_console() -> None:
    """What slopd is, in one paragraph: SLOP, MEP, the Baton keeper; the folder, HTTP, MCP; the console."""
    opening = text(README).split("\n\n")[1]
    for word in ("SLOP", "MEP", "Baton", "folder", "HTTP", "MCP", "console"):
        assert word in opening, word


def test_the_two_commands_are_the_same_in_the_makefile_header_the_readme_and_ci() -> None:
    readme = make_commands(blocks(README, "sh", "The two commands")[0].splitlines())
    header = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()[0]
    ci = make_commands((ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines())
    assert readme == ["make demo", "make test"]
    assert re.findall(r"`(make \w+)`", header) == readme
    assert ci[:2] == readme


def test_every_command_block_of_the_readme_is_run_by_a_test() -> None:
    """Three blocks: the two commands (`make demo` below, `make test` by CI itself), the
    Quickstart (tests/e2e/docs/test_quickstart.py, slow) and Waking agents (tests/wake/test_docs.py). A new
    block needs a test here."""
    assert len(blocks(README, "sh")) == 3
    assert len(blocks(README, "sh", "The two commands")) == 1
    assert len(blocks(README, "sh", "Quickstart")) == 1
    assert len(blocks(README, "sh", "Waking agents")) == 1
    assert re.findall(r"```(\w*)\n.*?```", text(README), re.DOTALL) == ["sh", "sh", "sh"]


def test_make_demo_runs_the_daemon_on_a_copy_of_the_sample_hub_with_the_embedded_defaults() -> None:
    """The README's first command, in this venv (`-o` keeps make from reinstalling it): the
    handoff is summarized, the instigate refused for want of an executor, the repository clean."""
    venv = Path(sys.executable).parent.parent
    before = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    demo = subprocess.run(
        ["make", "--no-print-directory", "-s", "-o", f"{venv}/.installed", "demo", f"VENV={venv}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert "Summary of handoff `20260704t072000z-handoff-parser`" in demo.stdout
    assert "decision=reject" in demo.stdout
    assert "no executor is configured on this watcher; nothing was run" in demo.stdout
    after = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert after.stdout == before.stdout


def test_every_link_of_the_readme_to_a_file_points_at_one_that_exists() -> None:
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text(README))
    local = [link for link in links if "://" not in link]
    assert local
    assert [link for link in local if not (ROOT / link).exists()] == []


def test_the_readme_says_which_documentation_tool_and_why() -> None:
    documentation = text(README, "Documentation")
    assert "MkDocs" in documentation
    assert "Material" in documentation
    assert "because" in documentation
