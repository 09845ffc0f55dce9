"""The SLOP envelope as a value: a frozen `Envelope`, its two written forms, and `EnvelopeError`.

An input file's bytes become an `Envelope`, or an `EnvelopeError` with every reason, in
`core.validation` (`parse`).

Rules (SPEC §3):
1. Values keep the exact text written: `created_at` is the string, never a datetime; an id keeps
   its case, and `key` is its lower-case form, the one ids are compared by (SPEC §3).
2. Unknown keys are kept in `extra` and never influence routing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from slopd.core import strictyaml
from slopd.core.assets import Asset

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


def render(envelope: Envelope) -> bytes:
    """The Markdown form: front matter in canonical order, then the body, exactly."""
    front = strictyaml.dump(envelope.headers())
    return f"---\n{front}---\n{envelope.body}".encode()


def to_json(envelope: Envelope) -> str:
    """The JSON form (SPEC §3): the front-matter keys at the top level plus `body`."""
    return json.dumps(envelope.headers() | {"body": envelope.body}, ensure_ascii=False)
