"""The README's Quickstart, run as written, in a fresh HOME: the first ten minutes of a new user."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def quickstart_script() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.DOTALL)
    assert len(blocks) == 1, "the Quickstart holds exactly one shell block"
    return str(blocks[0])


@pytest.mark.slow
def test_the_quickstart_runs_from_install_to_a_signed_action(tmp_path: Path) -> None:
    """Every Quickstart command succeeds; the instigate is executed and the signed order runs its action."""
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
    script = "set -euo pipefail\n" + quickstart_script().replace(
        "python3 -m venv", f"{sys.executable} -m venv"
    )
    result = subprocess.run(
        ["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "The request has 7 words." in result.stdout
    assert "hello from a signed order" in result.stdout
    assert "daemon:  running" in result.stdout
    assert "order.verified" in result.stdout
    assert sorted(path.name for path in (home / "hub" / "authorized").iterdir()) == []
