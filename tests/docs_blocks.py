"""The command blocks of the README and of the documentation pages, and how the tests run them.

- `shell_block(page, heading)` is the one ```sh block of a page (or of its `## heading` section; a
  `## ` inside a fence is no heading); `blocks(page, lang)` every block of a language.
- `run_block(block, tmp_path)` runs a block under `bash -euo pipefail` in a home of its own, with
  the installed `slopd` first on PATH, and asserts it exits 0; its last line of output is the
  directory it ended in.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests import ROOT


def text(page: str, heading: str | None = None) -> str:
    """The page (`README.md`, `docs/agents.md`…), or only its `## heading` section."""
    whole = (ROOT / page).read_text(encoding="utf-8")
    if heading is None:
        return whole
    lines, fenced = [], False
    for line in whole.split(f"## {heading}\n", 1)[1].splitlines(keepends=True):
        if line.startswith("## ") and not fenced:
            break
        fenced ^= line.startswith("```")
        lines.append(line)
    return "".join(lines)


def blocks(page: str, lang: str = "sh", heading: str | None = None) -> list[str]:
    return [str(block) for block in re.findall(rf"```{lang}\n(.*?)```", text(page, heading), re.DOTALL)]


def shell_block(page: str, heading: str | None = None) -> str:
    """The one ```sh block of the page or section (there must be exactly one)."""
    (block,) = blocks(page, "sh", heading)
    return block


def block_env(tmp_path: Path) -> dict[str, str]:
    """A home of its own in `tmp_path`, the installed `slopd` first on PATH, no inherited token."""
    env = dict(os.environ, HOME=str(tmp_path), TMPDIR=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    env.pop("SLOPD_TOKEN", None)
    env.pop("XDG_CONFIG_HOME", None)
    return env


def run_block(block: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`block` under `bash -euo pipefail` in `block_env`, then `pwd`: it must exit 0."""
    result = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + block + "\npwd\n"],
        cwd=tmp_path,
        env={**block_env(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result
