"""`slopd doctor`'s checks of the machine under the hub: its clock, inotify, the hub's filesystem.

Rules:
1. A clock before 2024, or behind a file in the hub by more than `CLOCK_SLACK`, is a problem.
2. Inotify is a warn when this user has fewer than 4 instances or 64 watches left; where there
   are no inotify limits (not Linux) it is only information.
3. A hub on a network or FUSE filesystem is a warn (its changes from elsewhere raise no events
   here): the filesystem is that of the deepest mount point holding the hub's real path.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from slopd.core.layout import LANES
from slopd.ops.findings import Finding

CLOCK_SLACK = 300  # seconds the newest file in the hub may be ahead of our clock
NETWORK_FILESYSTEMS = frozenset({"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "virtiofs", "afs", "ceph"})
_INOTIFY = Path("/proc/sys/fs/inotify")


def check_clock(hub: Path, now: datetime) -> Iterator[Finding]:
    if now.year < 2024:
        yield Finding("problem", "clock", f"the clock says {now:%Y-%m-%d}", "set the date (enable NTP)")
        return
    newest = 0.0
    for lane in ("", *LANES):
        try:
            with os.scandir(hub / lane) as entries:
                for entry in entries:
                    newest = max(newest, entry.stat(follow_symlinks=False).st_mtime)
        except OSError:
            continue
    ahead = newest - now.timestamp()
    if ahead > CLOCK_SLACK:
        text = f"a file in the hub was modified {ahead:.0f} s in the future: this clock is behind"
        yield Finding(
            "problem", "clock", text, "sync the clock (enable NTP) here and where the hub is written"
        )
    else:
        yield Finding("ok", "clock", f"{now:%Y-%m-%d %H:%M:%S} UTC, not behind the hub's files")


def _inotify_in_use() -> tuple[int, int]:
    """Inotify instances and watches held by this user's processes (those we can inspect)."""
    instances = watches = 0
    uid = os.getuid()
    for pid in (name for name in os.listdir("/proc") if name.isdigit()):
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            for fd in os.listdir(f"/proc/{pid}/fd"):
                if os.readlink(f"/proc/{pid}/fd/{fd}") != "anon_inode:inotify":
                    continue
                instances += 1
                with open(f"/proc/{pid}/fdinfo/{fd}", encoding="ascii", errors="replace") as info:
                    watches += sum(line.startswith("inotify wd:") for line in info)
        except OSError:
            continue
    return instances, watches


def check_inotify() -> Iterator[Finding]:
    try:
        max_instances = int((_INOTIFY / "max_user_instances").read_text())
        max_watches = int((_INOTIFY / "max_user_watches").read_text())
    except (OSError, ValueError):
        yield Finding("info", "inotify", "no inotify limits here (not Linux): nothing to check")
        return
    instances, watches = _inotify_in_use()
    text = f"this user holds {instances} of {max_instances} instances and {watches} of {max_watches} watches"
    if max_instances - instances < 4 or max_watches - watches < 64:
        fix = (
            "raise them: sysctl fs.inotify.max_user_instances=1024 fs.inotify.max_user_watches=524288 "
            "(and put the same in /etc/sysctl.d/60-inotify.conf), or run slopd with --polling"
        )
        yield Finding("warn", "inotify", f"{text}; slopd needs 2 instances and 2 watches", fix)
    else:
        yield Finding("ok", "inotify", text)


def filesystem_type(path: Path, mountinfo: str) -> str | None:
    """The type of the filesystem `path` is on, from the text of /proc/self/mountinfo."""
    real = os.path.realpath(path)
    best, best_type = "", None
    for line in mountinfo.splitlines():
        fields, _, rest = line.partition(" - ")
        parts = fields.split(" ")
        if len(parts) < 5 or not rest:
            continue
        point = parts[4]
        for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
            point = point.replace(code, char)
        inside = real == point or real.startswith(point.rstrip("/") + "/")
        if inside and len(point) >= len(best):
            best, best_type = point, rest.split(" ")[0]
    return best_type


def check_filesystem(hub: Path) -> Iterator[Finding]:
    try:
        mountinfo = Path("/proc/self/mountinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        text = "cannot tell the filesystem type here; on a network or cloud folder, events may be missed"
        yield Finding("info", "filesystem", text)
        return
    kind = filesystem_type(hub, mountinfo)
    if kind is not None and (kind in NETWORK_FILESYSTEMS or kind.startswith("fuse.") or kind == "fuse"):
        text = f"the hub is on {kind}: changes made on other machines raise no events here"
        yield Finding("warn", "filesystem", text, "run slopd with --polling")
    else:
        yield Finding("ok", "filesystem", f"the hub is on {kind or 'an unknown filesystem'}")
