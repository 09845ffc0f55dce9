"""The hub's layout (SPEC §2) and the rule for slopd's own temporary names.

Rules:
1. The lanes are fixed; `inbox/` and `authorized/` are the input lanes.
2. Every temporary or staged file or folder slopd makes in a hub is named
   `.slopd-tmp-HEX-NAME.tmp`: a dotfile ending `.tmp`, so no glob for `*.md`, `*.json` or
   `*.sig` ever matches one (Python's `pathlib.glob` matches dotfiles), and agents and sync
   clients skip it. HUB.md states this rule for agents.
3. A temporary name fits in 255 bytes whatever NAME is: NAME is shortened, never the suffix.
4. A hub's state dir (outside the hub) holds the ledger, the log and the lock, by these names
   (and the bell file that tells other processes of each commit, `shell.bell`).
"""

from __future__ import annotations

# What must stay equal while a file settles: inode, size, mtime, ctime.
Signature = tuple[int, int, int, int]
LANES = ("inbox", "authorized", "outbox", "archive", "assets", "notes")
INPUT_LANES = ("inbox", "authorized")
LEDGER_FILE = "ledger.sqlite3"
BELL_FILE = "ledger.bell"  # written after each ledger commit, for waiters in other processes
LOG_FILE = "slopd.log"
LOCK_FILE = "slopd.lock"
TEMP_PREFIX = ".slopd-tmp-"
TEMP_SUFFIX = ".tmp"
_MAX_NAME_BYTES = 255


def temp_name(name: str, token: str) -> str:
    """The temporary name for `name` (rule 2); `token` makes it unique (a few hex digits)."""
    head = f"{TEMP_PREFIX}{token}-"
    room = _MAX_NAME_BYTES - len(head.encode()) - len(TEMP_SUFFIX)
    shortened = name.encode("utf-8", "surrogateescape")[:room].decode("utf-8", "ignore")
    return f"{head}{shortened}{TEMP_SUFFIX}"


def is_temp(name: str) -> bool:
    """Whether `name` is one of slopd's own temporary names (left by a crash, or in use)."""
    return name.startswith(TEMP_PREFIX)
