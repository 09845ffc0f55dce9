"""The MCP registration snippets of docs/agents.md: each JSON and TOML one parses, names
`slopd mcp` with options the command accepts, and the command line runs (`--help`, since a real
session needs a host)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

from tests.docs_blocks import text

HEADING = "Use the hub from Claude Code, Cursor, Codex CLI and Gemini CLI"


def section() -> str:
    return text("docs/agents.md", HEADING)


def servers() -> list[dict[str, Any]]:
    found = []
    for kind, snippet in re.findall(r"```(json|toml)\n(.*?)```", section(), re.DOTALL):
        document = json.loads(snippet) if kind == "json" else tomllib.loads(snippet)
        entries = document.get("mcpServers") or document.get("mcp_servers")
        assert isinstance(entries, dict), snippet
        found += list(entries.values())
    return found


def test_every_snippet_parses_and_runs_slopd_mcp_with_options_it_accepts(tmp_path: Path) -> None:
    entries = servers()
    assert len(entries) == 4  # .mcp.json, Cursor, Codex's config.toml, Gemini
    for entry in entries:
        assert entry["command"] == "slopd"
        args = list(entry["args"])
        assert args[0] == "mcp"
        parsed = subprocess.run(
            [sys.executable, "-m", "slopd", *args, "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert parsed.returncode == 0, parsed.stderr
        for option in (arg for arg in args if arg.startswith("--")):
            assert option in parsed.stdout, option


def test_the_shell_lines_name_slopd_mcp_with_options_it_accepts() -> None:
    lines = [
        line for block in re.findall(r"```sh\n(.*?)```", section(), re.DOTALL) for line in block.splitlines()
    ]
    commands = [shlex.split(line.split(" -- ", 1)[1]) for line in lines if " -- slopd mcp" in line]
    assert len(commands) == 2
    for argv in commands:
        helped = subprocess.run(
            [sys.executable, "-m", "slopd", *argv[1:], "--help"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert helped.returncode == 0, helped.stderr
        assert all(option in helped.stdout for option in argv if option.startswith("--"))
    assert any("/mcp" in line and "--transport http" in line for line in lines)
