"""The git side of the merge driver: registering it in a repository. The one shell of `handoff`
that runs a process.

Rules (SPEC §10, git's ll-merge contract):
1. `install` sets `merge.mep.name` and `merge.mep.driver` in the repository's config, the
   driver being this slopd by its absolute path (`slopd handoff merge --marker-size %L %O %A
   %B`), and adds `GLOB merge=mep` to `.gitattributes` for each pattern not already there.
   Running it again changes nothing.
2. `.gitattributes` is rewritten atomically, its other lines and line endings kept.
3. A git that fails is an `InstallError` naming the command and git's message.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from slopd.core.errors import SetupError
from slopd.shell import fs

DEFAULT_PATTERNS = ("handoff.md", "machines/handoff.md")
DRIVER_NAME = "MEP handoff log (slopd: never loses an entry)"


class InstallError(SetupError):
    pass


@dataclass(frozen=True, slots=True)
class Installed:
    driver: str
    added: tuple[str, ...]  # the .gitattributes lines this run added
    attributes: Path


def slopd_command() -> str:
    """This slopd, by absolute path: the console script beside this Python, else `python -m slopd`."""
    script = Path(sys.executable).with_name("slopd")
    if script.is_file():
        return shlex.quote(str(script.resolve()))
    found = shutil.which("slopd")
    if found:
        return shlex.quote(str(Path(found).resolve()))
    return f"{shlex.quote(sys.executable)} -m slopd"


def driver_line() -> str:
    return f"{slopd_command()} handoff merge --marker-size %L %O %A %B"


def _git(repo: Path, *args: str) -> str:
    try:
        argv = ["git", "-C", str(repo), *args]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except FileNotFoundError as error:
        raise InstallError("git is not installed (needed to register the merge driver)") from error
    if done.returncode != 0:
        raise InstallError(f"git {' '.join(args)} in {repo} failed: {done.stderr.strip() or done.returncode}")
    return done.stdout


def install(repo: Path, patterns: tuple[str, ...] = DEFAULT_PATTERNS) -> Installed:
    top = Path(_git(repo, "rev-parse", "--show-toplevel").strip())
    driver = driver_line()
    _git(top, "config", "merge.mep.name", DRIVER_NAME)
    _git(top, "config", "merge.mep.driver", driver)
    attributes = top / ".gitattributes"
    text = attributes.read_bytes().decode("utf-8", "surrogateescape") if attributes.exists() else ""
    present = {tuple(line.split()) for line in text.splitlines()}
    newline = "\r\n" if "\r\n" in text else "\n"
    added = tuple(f"{pattern} merge=mep" for pattern in patterns if (pattern, "merge=mep") not in present)
    if added:
        if text and not text.endswith("\n"):
            text += newline
        text += "".join(line + newline for line in added)
        fs.write_file(attributes, text.encode("utf-8", "surrogateescape"), replace=True)
    return Installed(driver, added, attributes)
