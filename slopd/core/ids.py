"""How slopd forms the ids and timestamps it writes (SPEC §3, §5). Pure.

Rules:
1. A reply's id is derived from what it answers (`ID.ack`, `ID.result`, `ID.error`), so a reply
   written again after a crash replaces itself instead of adding a second answer; an id that
   would pass 128 characters is folded with a hash of the original. Ids compare
   case-insensitively, so the reply's id (and file name) uses the lower-case form.
2. A timestamp slopd writes (`created_at`) is UTC, whole seconds, with `Z`.
"""

from __future__ import annotations

from datetime import UTC, datetime

MAX_ID = 128


def reply_id(original_id: str, kind: str) -> str:
    """`ORIGINAL.KIND`, folded with a hash when that would pass the 128-character id limit."""
    original_id = original_id.lower()
    candidate = f"{original_id}.{kind}"
    if len(candidate) <= MAX_ID and ".." not in candidate:
        return candidate
    import hashlib  # noqa: PLC0415  # OpenSSL's load costs a per-message command ~4 ms; rarely needed

    digest = hashlib.sha256(original_id.encode()).hexdigest()[:12]
    return f"{original_id[: MAX_ID - 2 - len(kind) - 13].rstrip('.')}-{digest}.{kind}"


def timestamp(now: datetime) -> str:
    """`created_at` as slopd writes it: UTC, whole seconds, `Z`."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def stamp_seconds(seconds: float) -> str:
    """`timestamp` of a time given in seconds since the epoch (a lease's expiry, a boot)."""
    return timestamp(datetime.fromtimestamp(seconds, UTC))
