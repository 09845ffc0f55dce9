"""The README's Quickstart, run as written, in a fresh HOME: a new user's first minute."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT
from tests.docs_blocks import shell_block


@pytest.mark.slow
def test_the_quickstart_runs_from_install_to_a_reply(tmp_path: Path) -> None:
    """Every Quickstart command succeeds, from `pip install .` to the query's result and the
    status of the running daemon."""
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
    }
    env.update(
        {key: os.environ[key] for key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL") if key in os.environ}
    )
    script = "set -euo pipefail\n" + shell_block("README.md", "Quickstart").replace(
        "python3 -m venv", f"{sys.executable} -m venv"
    )
    result = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "type: result" in result.stdout
    assert "**Is anyone there?**" in result.stdout
    assert "daemon:  running" in result.stdout
    assert (home / "slopd-venv" / "bin" / "slopd").is_file()
    assert list((home / "hub" / "archive").glob("*/*-query-*.md"))
