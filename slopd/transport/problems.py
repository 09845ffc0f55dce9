"""The HTTP transport's errors as RFC 9457 problem details (SPEC §12). Pure.

Rules:
1. Every error answer is `application/problem+json` with `type` (one URI per slopd error
   class, under `https://slopd.dev/problems/`), `title`, `status` and `detail`; an invalid
   envelope adds `errors`, every reason the strict parser gave, one `{reason}` each.
2. A problem never echoes a token, and quotes a request's own text only in `detail`, escaped
   by the JSON encoder.
"""

from __future__ import annotations

from dataclasses import dataclass, field

BASE = "https://slopd.dev/problems/"
MEDIA_TYPE = "application/problem+json"

TITLES = {
    "bad-request": (400, "The request is malformed"),
    "cursor-ahead": (400, "The cursor is past the last reply"),
    "unauthorized": (401, "A valid bearer token is required"),
    "wrong-seat": (403, "This token's seat may not do this (an envelope's `from`, a vessel's lease)"),
    "forbidden-origin": (403, "Requests from this Origin are refused"),
    "not-found": (404, "Not found (or not this seat's)"),
    "method-not-allowed": (405, "Method not allowed"),
    "in-flight": (409, "This id is still being written; ask again"),
    "leased": (409, "Another lease on this vessel is live"),
    "stale-lease": (409, "The lease or the generation is not the live one; nothing was written"),
    "cursor-expired": (410, "The cursor is older than the replies kept"),
    "too-large": (413, "The body is over the size limit"),
    "unsupported-media-type": (415, "Send text/markdown or application/json"),
    "misdirected": (421, "This server does not answer for that Host"),
    "invalid-envelope": (422, "The envelope is invalid"),
    "id-conflict": (422, "This id is already taken by other bytes"),
    "unknown-keys": (422, "The body names keys this endpoint does not take"),
    "fails-gate": (422, "The letter fails the quality gate; nothing was written"),
    "rate-limited": (429, "Too many requests"),
    "internal": (500, "The server failed"),
    "stopping": (503, "The server is stopping"),
}


@dataclass(frozen=True, slots=True)
class Problem(Exception):  # noqa: N818  # raised by handlers, answered by the app
    kind: str
    detail: str
    errors: tuple[str, ...] = ()
    headers: dict[str, str] = field(default_factory=dict)
    extra: dict[str, object] = field(default_factory=dict)  # extension members (RFC 9457 §3.2)

    @property
    def status(self) -> int:
        return TITLES[self.kind][0]

    def body(self) -> dict[str, object]:
        status, title = TITLES[self.kind]
        body: dict[str, object] = {
            "type": BASE + self.kind,
            "title": title,
            "status": status,
            "detail": self.detail,
        }
        if self.errors:
            body["errors"] = [{"reason": reason} for reason in self.errors]
        return {**self.extra, **body}
