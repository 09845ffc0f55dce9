"""Validating an input file: bytes in, a frozen `Envelope` out, or `EnvelopeError` with every reason.

Rules (SPEC §3):
1. `parse` raises only `EnvelopeError`, whatever bytes it is given. Anything else escaping is a
   bug (the hypothesis and fuzz suites hold it to this).
2. Structural faults (size; encoding, NUL, front-matter fences, YAML, JSON: `core.frontmatter`)
   stop parsing at once; field rules are all checked and all reported together.
3. `assets` is read by `core.assets`.
4. What the seeds' own examples leave out or leave as a template is not an error: `created_at`
   may be absent (None; the order verifier requires it in `authorized/`), and an `in_reply_to`
   still holding the seed's placeholder (`<prior-handoff-id>`) on a message that needs no
   reply link is read as null.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from slopd.core import assets as attachments
from slopd.core import frontmatter
from slopd.core.assets import Asset
from slopd.core.envelope import Envelope, EnvelopeError, sidecars_of
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES, MODES, PROTOCOL, REPLY_TYPES, TYPES
from slopd.core.wire import show

KNOWN_KEYS = (
    "protocol",
    "id",
    "type",
    "from",
    "to",
    "in_reply_to",
    "created_at",
    "auth",
    "mode",
    "action",
    "assets",
)
REQUIRED_KEYS = ("protocol", "id", "type", "from", "to")
BOM = b"\xef\xbb\xbf"

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
PLACEHOLDER = re.compile(r"<[^<>\n]{1,126}>")
PARTY_PATTERN = re.compile(r"[A-Za-z0-9._:@-]{1,128}")
ACTION_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
CREATED_AT_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|\+00:00)")
SIDECAR_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._ ()-]{0,250}\.sig")


def parse(data: bytes, *, name: str, max_bytes: int = MAX_ENVELOPE_BYTES) -> Envelope:
    """Parse one input file's bytes; `name` picks the form (`.json`, else Markdown)."""
    if len(data) > max_bytes:
        raise EnvelopeError([f"file is {len(data)} bytes, over the {max_bytes}-byte limit"])
    text = frontmatter.decode(data.removeprefix(BOM))
    if name.lower().endswith(".json"):
        headers, body = frontmatter.split_json(text)
    else:
        headers, body = frontmatter.split_markdown(text)
    return _validate(headers, body)


def _validate(headers: dict[str, Any], body: str) -> Envelope:
    reasons: list[str] = []

    def text_field(key: str, pattern: re.Pattern[str] | None, rule: str) -> str | None:
        value = headers.get(key)
        if value is None:
            if key in REQUIRED_KEYS:
                reasons.append(f"{key}: missing")
            return None
        if not isinstance(value, str):
            reasons.append(f"{key}: must be a string, got {show(value)}")
            return None
        if pattern is not None and not pattern.fullmatch(value):
            reasons.append(f"{key}: {rule}, got {show(value)}")
            return None
        return value

    protocol = text_field("protocol", re.compile(re.escape(PROTOCOL)), f"must be {PROTOCOL!r}")
    id_ = text_field("id", ID_PATTERN, "must be 1-128 of [A-Za-z0-9._:-] starting with a letter or digit")
    kind = text_field("type", re.compile("|".join(TYPES)), f"must be one of {' '.join(TYPES)}")
    sender = text_field("from", PARTY_PATTERN, "must be 1-128 of [A-Za-z0-9._:@-]")
    to = text_field("to", PARTY_PATTERN, "must be 1-128 of [A-Za-z0-9._:@-]")
    if kind not in REPLY_TYPES and PLACEHOLDER.fullmatch(str(headers.get("in_reply_to"))):
        headers = {**headers, "in_reply_to": None}  # rule 4: the seed's template, not a link
    in_reply_to = text_field("in_reply_to", ID_PATTERN, "must be null or a valid id")
    created_at = text_field("created_at", CREATED_AT_PATTERN, "must be ISO 8601 in UTC")
    auth = text_field("auth", re.compile(r"none|signed:.*", re.DOTALL), "must be none or signed:FILE")
    mode = text_field("mode", re.compile("|".join(MODES)), "must be execute or discuss")
    action = text_field("action", ACTION_PATTERN, "must be a configured action name")

    if id_ is not None and ".." in id_:
        reasons.append(f"id: must not contain '..', got {show(id_)}")
        id_ = None
    if in_reply_to is not None and ".." in in_reply_to:
        reasons.append(f"in_reply_to: must not contain '..', got {show(in_reply_to)}")
    if kind in REPLY_TYPES and "in_reply_to" not in headers:
        reasons.append(f"in_reply_to: required on {kind}")
    elif kind in REPLY_TYPES and headers.get("in_reply_to") is None and not _names_a_file(kind, headers):
        reasons.append(f"in_reply_to: must not be null on {kind} (only an error naming its `file` may)")
    if created_at is not None and not _real_instant(created_at):
        reasons.append(f"created_at: not a real date and time, got {show(created_at)}")
    if auth is not None and auth != "none":
        names = sidecars_of(auth)
        if not all(SIDECAR_PATTERN.fullmatch(name) for name in names):
            rule = "a plain file name ending .sig (several: comma-separated)"
            reasons.append(f"auth: sidecar must be {rule}, got {show(auth)}")
        elif len(set(names)) != len(names):
            reasons.append(f"auth: a sidecar is listed twice, got {show(auth)}")
    assets: tuple[Asset, ...] = ()
    if "assets" in headers:
        assets, problems = attachments.parse(headers["assets"])
        reasons.extend(problems)
    if reasons:
        raise EnvelopeError(reasons, id=id_, sender=sender)
    assert protocol and id_ and kind and sender and to  # noqa: PT018  # for mypy
    return Envelope(
        protocol=protocol,
        id=id_,
        type=kind,
        sender=sender,
        to=to,
        created_at=created_at,
        in_reply_to=in_reply_to,
        auth=auth or "none",
        mode=mode,
        action=action,
        assets=assets,
        body=body,
        extra={key: value for key, value in headers.items() if key not in KNOWN_KEYS},
    )


def _names_a_file(kind: str, headers: dict[str, Any]) -> bool:
    """The one reply that may have `in_reply_to: null`: an error about an input without a valid id."""
    file = headers.get("file")
    return kind == "error" and isinstance(file, str) and bool(file)


def _real_instant(created_at: str) -> bool:
    try:
        datetime.fromisoformat(created_at)
    except ValueError:
        return False
    return True
