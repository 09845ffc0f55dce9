"""The drop -> reply bench over MCP (bench/mcp_drop.py) must not rot: a --quick pass starts a daemon,
every contender gets its replies, and the table prints a row each. No timing is asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import ROOT


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_mcp_drop_quick_prints_a_row_per_contender(tmp_path: Path) -> None:
    """`mcp_drop.py --quick` exits 0 and prints HTTP, /mcp, stdio and the link drop with figures."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "mcp_drop.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=280,
        cwd=ROOT / "bench",
        env=dict(os.environ, BENCH_TMP=str(tmp_path / "scratch")),
        check=False,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    rows = {line.split("  ")[0].strip(): line for line in result.stdout.splitlines()}
    for contender in ("HTTP", "/mcp", "stdio", "link drop (settle)"):
        assert contender in rows, result.stdout
        assert rows[contender].rstrip().endswith("x"), rows[contender]
