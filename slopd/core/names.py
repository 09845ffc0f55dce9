"""What a name in a lane is, judged from the name alone (research §4).

Rules, in order:
1. Dotfiles, `~*` names and the temporary, partial and placeholder names of sync clients,
   browsers and editors are `IGNORED` until renamed to a real name.
2. Names ending `.md` or `.json` (any case) are `INPUT`s; in `authorized/`, `NAME.md.sig` and
   a co-signer's `NAME.md.WHO.sig` are `SIDECAR`s of the order `NAME.md` (`order_of`).
   Conflict copies are ordinary inputs: identity comes from the envelope's `id`.
3. An input or sidecar whose name is not sane (undecodable, control or bidi characters, over
   255 bytes) is `BAD_NAME`: it gets an error reply and is archived.
4. Anything else is `OTHER`: left in place, logged once, listed by `slopd status`.
5. A sync client's own temporary names (`is_sync_temp`) say, when a file is renamed from one,
   that it was delivered from another machine — where it may still be being written.
"""

from __future__ import annotations

import fnmatch
import re
from enum import StrEnum

IGNORED_GLOBS = (
    ".*",
    "~*",
    "#*#",
    "*~",
    "*.tmp",
    "*.temp",
    "*.part",
    "*.partial",
    "*.filepart",
    "*.crdownload",
    "*.download",
    "*.swp",
    "*.swo",
    "*.swn",
    "*.kate-swp",
    "*.icloud",
    "4913",
    "desktop.ini",
    "thumbs.db",
    "icon?",
)
_IGNORED = re.compile("|".join(fnmatch.translate(glob) for glob in IGNORED_GLOBS), re.IGNORECASE)
# Where sync clients write a file they are receiving, before renaming it into place beside it:
# Syncthing (`.syncthing.NAME.tmp`; `~syncthing~NAME.tmp` on Windows) and Resilio (`NAME.!sync`).
SYNC_TEMP_GLOBS = (".syncthing.*.tmp", "~syncthing~*.tmp", "*.!sync")
_SYNC_TEMP = re.compile("|".join(fnmatch.translate(glob) for glob in SYNC_TEMP_GLOBS), re.IGNORECASE)
# C0 and C1 controls and DEL (Unicode category Cc), and the bidirectional marks and overrides.
_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069/\\\\]")


class Kind(StrEnum):
    IGNORED = "ignored"
    INPUT = "input"
    SIDECAR = "sidecar"
    BAD_NAME = "bad-name"
    OTHER = "other"


def classify(name: str, *, lane: str) -> Kind:
    """Say what the lane entry `name` is (`lane` is `inbox` or `authorized`)."""
    if _IGNORED.fullmatch(name):
        return Kind.IGNORED
    lowered = name.lower()
    if lane == "authorized" and order_of(name) is not None:
        kind = Kind.SIDECAR
    elif lowered.endswith((".md", ".json")):
        kind = Kind.INPUT
    else:
        return Kind.OTHER
    return kind if is_sane(name) else Kind.BAD_NAME


def order_of(sidecar: str) -> str | None:
    """Rule 2: the order `NAME.md` a signature `NAME.md.sig` or `NAME.md.WHO.sig` belongs to."""
    lowered = sidecar.lower()
    if not lowered.endswith(".sig"):
        return None
    if lowered.endswith(".md.sig"):
        return sidecar[:-4]
    at = lowered.rfind(".md.", 0, len(lowered) - 4)
    return sidecar[: at + 3] if at > 0 else None


def is_sync_temp(name: str) -> bool:
    """Rule 5: a sync client's temporary name for a file it is receiving."""
    return _SYNC_TEMP.fullmatch(name) is not None


def is_sane(name: str) -> bool:
    """Valid UTF-8, at most 255 bytes, no path separators, controls or bidi marks."""
    try:
        encoded = name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return len(encoded) <= 255 and _UNSAFE.search(name) is None
