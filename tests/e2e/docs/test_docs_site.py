"""The documentation site (mkdocs.yml, docs/): every page is in the navigation, in its Diátaxis
section; nothing fetches from the network; and `mkdocs build --strict` (`make docs`, in `make
test`) fails on a broken link or anchor rather than publishing it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests import ROOT


def config() -> dict[str, Any]:
    loaded = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    assert isinstance(loaded, dict)
    return loaded


def nav_pages(entries: list[Any]) -> list[str]:
    found: list[str] = []
    for entry in entries:
        for value in entry.values() if isinstance(entry, dict) else [entry]:
            found += nav_pages(value) if isinstance(value, list) else [value]
    return found


def test_every_page_is_in_the_navigation_once_and_every_entry_is_a_page() -> None:
    pages = sorted(str(path.relative_to(ROOT / "docs")) for path in (ROOT / "docs").rglob("*.md"))
    listed = nav_pages(config()["nav"])
    assert sorted(listed) == pages
    assert len(listed) == len(set(listed))


def test_the_navigation_follows_the_diataxis_split() -> None:
    sections = [next(iter(entry)) for entry in config()["nav"]]
    assert sections[1:5] == ["Tutorials", "How-to guides", "Explanations", "Reference"]
    assert "Development" in sections


def test_nothing_in_the_site_fetches_from_the_network() -> None:
    """Only the built-in search plugin, and no web fonts: the site builds and reads offline."""
    site = config()
    assert site["plugins"] == ["search"]
    assert site["theme"]["font"] == "false"


def test_a_broken_anchor_fails_the_strict_build(tmp_path: Path) -> None:
    """The same build `make docs` runs, on a copy with one link to an anchor that does not exist."""
    for name in ("mkdocs.yml", "CHANGELOG.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    page = tmp_path / "docs" / "trust.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[x](reference/cli.md#no-such-command)\n")
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=tmp_path,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert built.returncode == 1, built.stderr[-2000:]
    assert "does not contain an anchor '#no-such-command'" in built.stderr
