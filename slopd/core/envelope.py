"""The SLOP envelope: bytes in, a frozen `Envelope` out, or `EnvelopeError` with every reason.

Rules (SPEC §3):
1. `parse` raises only `EnvelopeError`, whatever bytes it is given. Anything else escaping is a
   bug (the hypothesis and fuzz suites hold it to this).
2. Structural faults (size, encoding, NUL, front-matter fences, YAML, JSON) stop parsing at once;
   field rules are all checked and all reported together.
3. Values keep the exact text written: `created_at` is the string, never a datetime; an id keeps
   its case, and `key` is its lower-case form, the one ids are compared by (SPEC §3).
4. Unknown keys are kept in `extra` and never influence routing; `assets` is read by
   `core.assets`.
5. What the seeds' own examples leave out or leave as a template is not an error: `created_at`
   may be absent (None; the order verifier requires it in `authorized/`), and an `in_reply_to`
   still holding the seed's placeholder (`<prior-handoff-id>`) on a message that needs no
   reply link is read as null.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from slopd.core import assets as attachments
from slopd.core import strictyaml
from slopd.core.assets import Asset
from slopd.core.vocabulary import MAX_ENVELOPE_BYTES, MODES, PROTOCOL, REPLY_TYPES, TYPES

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
MAX_DEPTH = 32
MAX_FRONT_MATTER_BYTES = 64 * 1024

ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,127}")
PLACEHOLDER = re.compile(r"<[^<>\n]{1,126}>")
PARTY_PATTERN = re.compile(r"[A-Za-z0-9._:@-]{1,128}")
ACTION_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")
CREATED_AT_PATTERN = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|\+00:00)")
SIDECAR_PATTERN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._ ()-]{0,250}\.sig")
_FENCE_TRAIL = " \t\r"  # `--- ` and `---\r\n` are the fence too: Windows editors and phone apps write them
DISCUSS_ONLY = re.compile(r"discuss[\s_-]*only", re.IGNORECASE)


class EnvelopeError(ValueError):
    """An input is not a valid envelope. `reasons` lists every rule it breaks.

    `id` and `sender` carry the input's id and `from` when those fields were themselves
    valid, so the error reply can still be addressed and linked.
    """

    def __init__(
        self,
        reasons: list[str] | tuple[str, ...],
        *,
        id: str | None = None,
        sender: str | None = None,
    ) -> None:
        self.reasons = tuple(reasons)
        self.id = id
        self.sender = sender
        super().__init__("; ".join(self.reasons))


@dataclass(frozen=True, slots=True)
class Envelope:
    protocol: str
    id: str
    type: str
    sender: str
    to: str
    created_at: str | None
    in_reply_to: str | None = None
    auth: str = "none"
    mode: str | None = None
    action: str | None = None
    assets: tuple[Asset, ...] = ()
    body: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """The id as ids are compared: case-insensitively, by its lower-case form."""
        return self.id.lower()

    @property
    def sidecars(self) -> tuple[str, ...]:
        """The signature files `auth: signed:NAME[,NAME…]` names, in order (none for `auth: none`)."""
        return sidecars_of(self.auth)

    def headers(self) -> dict[str, Any]:
        """The front-matter keys in canonical order, unknown keys last."""
        known: dict[str, Any] = {
            "protocol": self.protocol,
            "id": self.id,
            "type": self.type,
            "from": self.sender,
            "to": self.to,
            "in_reply_to": self.in_reply_to,
        }
        if self.created_at is not None:
            known["created_at"] = self.created_at
        known["auth"] = self.auth
        if self.mode is not None:
            known["mode"] = self.mode
        if self.action is not None:
            known["action"] = self.action
        if self.assets:
            known["assets"] = [asset.reference for asset in self.assets]
        return known | dict(self.extra)


def sidecars_of(auth: str) -> tuple[str, ...]:
    if not auth.startswith("signed:"):
        return ()
    return tuple(name.strip(" ") for name in auth.removeprefix("signed:").split(","))


def wants_discussion(envelope: Envelope) -> bool:
    """`mode: discuss`, or the body says "discuss only" (any case, `discuss-only` too)."""
    return envelope.mode == "discuss" or DISCUSS_ONLY.search(envelope.body) is not None


def parse(data: bytes, *, name: str, max_bytes: int = MAX_ENVELOPE_BYTES) -> Envelope:
    """Parse one input file's bytes; `name` picks the form (`.json`, else Markdown)."""
    if len(data) > max_bytes:
        raise EnvelopeError([f"file is {len(data)} bytes, over the {max_bytes}-byte limit"])
    text = _decode(data.removeprefix(BOM))
    if name.lower().endswith(".json"):
        headers, body = _split_json(text)
    else:
        headers, body = _split_markdown(text)
    return _validate(headers, body)


def _decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise EnvelopeError([f"not valid UTF-8 (byte offset {error.start})"]) from None
    nul = text.find("\0")
    if nul >= 0:
        raise EnvelopeError([f"contains a NUL byte (character offset {nul})"])
    return text


def _split_markdown(text: str) -> tuple[dict[str, Any], str]:
    first, newline, rest = text.partition("\n")
    if first.rstrip(_FENCE_TRAIL) != "---" or not newline:
        raise EnvelopeError(["no front matter: the file must start with a line '---'"])
    position = 0
    while True:
        end = rest.find("\n", position)
        line = rest[position:] if end < 0 else rest[position:end]
        if line.rstrip(_FENCE_TRAIL) == "---":
            front, body = rest[:position], ("" if end < 0 else rest[end + 1 :])
            break
        if end < 0:
            raise EnvelopeError(["front matter has no closing '---' line"])
        position = end + 1
    if len(front.encode("utf-8")) > MAX_FRONT_MATTER_BYTES:
        raise EnvelopeError([f"front matter is over {MAX_FRONT_MATTER_BYTES} bytes"])
    try:
        headers = strictyaml.load(front, max_depth=MAX_DEPTH)
    except strictyaml.StrictYAMLError as error:
        raise EnvelopeError([f"front matter: {error}"]) from None
    if "body" in headers:
        raise EnvelopeError(["front matter: 'body' is reserved for the Markdown body"])
    return headers, body


def _split_json(text: str) -> tuple[dict[str, Any], str]:
    try:
        document = json.loads(
            text,
            object_pairs_hook=_no_duplicate_keys,
            parse_constant=_no_constants,
            parse_float=_finite_float,
        )
    except RecursionError:
        raise EnvelopeError([f"JSON nesting deeper than {MAX_DEPTH} levels"]) from None
    except ValueError as error:
        raise EnvelopeError([f"invalid JSON: {error}"]) from None
    if not isinstance(document, dict):
        raise EnvelopeError([f"JSON must be one object, not {type(document).__name__}"])
    if _depth(document) > MAX_DEPTH:
        raise EnvelopeError([f"JSON nesting deeper than {MAX_DEPTH} levels"])
    for text_value in _strings(document):
        if "\0" in text_value:
            raise EnvelopeError(["JSON strings must not contain NUL"])
        try:
            text_value.encode("utf-8")
        except UnicodeEncodeError:
            raise EnvelopeError(["JSON strings must be valid Unicode (no lone surrogates)"]) from None
    body = document.pop("body", "")
    if not isinstance(body, str):
        raise EnvelopeError(["body: must be a string"])
    return document, body


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise ValueError(f"duplicate key {key!r}")
        document[key] = value
    return document


def _no_constants(constant: str) -> None:
    raise ValueError(f"{constant} is not allowed")


def _finite_float(text: str) -> float:
    number = float(text)
    if number in (float("inf"), float("-inf")):
        raise ValueError(f"number {text[:20]} is too large")
    return number


def _strings(value: object) -> list[str]:
    """Every key and string value in a parsed JSON document."""
    found, stack = [], [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict):
            found.extend(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def _depth(value: object) -> int:
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        if isinstance(item, dict | list):
            deepest = max(deepest, level)
            stack.extend((child, level + 1) for child in children)
    return deepest


def _show(value: object) -> str:
    shown = ascii(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def _validate(headers: dict[str, Any], body: str) -> Envelope:
    reasons: list[str] = []

    def text_field(key: str, pattern: re.Pattern[str] | None, rule: str) -> str | None:
        value = headers.get(key)
        if value is None:
            if key in REQUIRED_KEYS:
                reasons.append(f"{key}: missing")
            return None
        if not isinstance(value, str):
            reasons.append(f"{key}: must be a string, got {_show(value)}")
            return None
        if pattern is not None and not pattern.fullmatch(value):
            reasons.append(f"{key}: {rule}, got {_show(value)}")
            return None
        return value

    protocol = text_field("protocol", re.compile(re.escape(PROTOCOL)), f"must be {PROTOCOL!r}")
    id_ = text_field("id", ID_PATTERN, "must be 1-128 of [A-Za-z0-9._:-] starting with a letter or digit")
    kind = text_field("type", re.compile("|".join(TYPES)), f"must be one of {' '.join(TYPES)}")
    sender = text_field("from", PARTY_PATTERN, "must be 1-128 of [A-Za-z0-9._:@-]")
    to = text_field("to", PARTY_PATTERN, "must be 1-128 of [A-Za-z0-9._:@-]")
    if kind not in REPLY_TYPES and PLACEHOLDER.fullmatch(str(headers.get("in_reply_to"))):
        headers = {**headers, "in_reply_to": None}  # rule 5: the seed's template, not a link
    in_reply_to = text_field("in_reply_to", ID_PATTERN, "must be null or a valid id")
    created_at = text_field("created_at", CREATED_AT_PATTERN, "must be ISO 8601 in UTC")
    auth = text_field("auth", re.compile(r"none|signed:.*", re.DOTALL), "must be none or signed:FILE")
    mode = text_field("mode", re.compile("|".join(MODES)), "must be execute or discuss")
    action = text_field("action", ACTION_PATTERN, "must be a configured action name")

    if id_ is not None and ".." in id_:
        reasons.append(f"id: must not contain '..', got {_show(id_)}")
        id_ = None
    if in_reply_to is not None and ".." in in_reply_to:
        reasons.append(f"in_reply_to: must not contain '..', got {_show(in_reply_to)}")
    if kind in REPLY_TYPES and "in_reply_to" not in headers:
        reasons.append(f"in_reply_to: required on {kind}")
    elif kind in REPLY_TYPES and headers.get("in_reply_to") is None and not _names_a_file(kind, headers):
        reasons.append(f"in_reply_to: must not be null on {kind} (only an error naming its `file` may)")
    if created_at is not None and not _real_instant(created_at):
        reasons.append(f"created_at: not a real date and time, got {_show(created_at)}")
    if auth is not None and auth != "none":
        names = sidecars_of(auth)
        if not all(SIDECAR_PATTERN.fullmatch(name) for name in names):
            rule = "a plain file name ending .sig (several: comma-separated)"
            reasons.append(f"auth: sidecar must be {rule}, got {_show(auth)}")
        elif len(set(names)) != len(names):
            reasons.append(f"auth: a sidecar is listed twice, got {_show(auth)}")
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


def render(envelope: Envelope) -> bytes:
    """The Markdown form: front matter in canonical order, then the body, exactly."""
    front = strictyaml.dump(envelope.headers())
    return f"---\n{front}---\n{envelope.body}".encode()


def to_json(envelope: Envelope) -> str:
    """The JSON form (SPEC §3): the front-matter keys at the top level plus `body`."""
    return json.dumps(envelope.headers() | {"body": envelope.body}, ensure_ascii=False)
