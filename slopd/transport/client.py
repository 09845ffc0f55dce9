"""`slopd send --url`: an envelope posted to a hub's HTTP server, with SLOP §7's retry (SPEC §12).

Stdlib only (`http.client`), so a sender needs no extra installed.

Rules:
1. The envelope is posted as Markdown with `Idempotency-Key` = its id. 202 or 200 (a replay)
   is success; 400/401/403/404/413/415/422 are final refusals, reported with every reason.
2. A transport failure (no connection, reset, timeout), a 409 (still being written), a 429 or
   a 5xx is retried after 2 s, 4 s and 8 s (or `Retry-After`, if longer). Before each resend
   the client asks `GET /v1/envelopes/{id}`: 200 means the server has it (done, no resend);
   only a 404 is resent. After the last wait it stops, naming the failure.
3. `await_reply` long-polls `GET /v1/envelopes/{id}/replies` in waits of at most 30 s until a
   terminal reply or the deadline; a transport failure while waiting is retried until then.
4. The token travels only in the `Authorization` header, never in a URL or a message.
5. `slopd wait --url` long-polls the same way: an envelope's replies until the server says
   `terminal`, or the seat's feed after a seq until a reply is there.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

DELAYS = (2.0, 4.0, 8.0)
_FINAL = {400, 401, 403, 404, 413, 415, 422}
_TIMEOUT = 40.0  # a request's socket timeout: above the longest long-poll (30 s)


class Refused(Exception):  # noqa: N818  # the server said no: final
    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        reasons = [
            str(item.get("reason", item)) for item in problem.get("errors", []) if isinstance(item, dict)
        ]
        detail = problem.get("detail") or problem.get("title") or ""
        text = f"HTTP {status}: {detail}" + "".join(
            f"\n  - {reason}" for reason in reasons if reason != detail
        )
        super().__init__(text)
        self.status = status


class Unreachable(Exception):  # noqa: N818  # retries exhausted
    pass


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body or b"null")


class Client:
    def __init__(self, url: str, token: str, *, sleep: Callable[[float], None] = time.sleep) -> None:
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"--url {url!r}: give http://HOST:PORT or https://HOST:PORT")
        self.scheme, self.host, self.port = parts.scheme, parts.hostname, parts.port
        self.base = parts.path.rstrip("/")
        self.token, self.sleep = token, sleep

    def request(
        self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None
    ) -> Answer:
        """One request on a fresh connection; OSError and http.client errors propagate."""
        kind = http.client.HTTPSConnection if self.scheme == "https" else http.client.HTTPConnection
        connection = kind(self.host, self.port, timeout=_TIMEOUT)
        try:
            sent = {"Authorization": f"Bearer {self.token}", **(headers or {})}
            connection.request(method, self.base + path, body=body, headers=sent)
            response = connection.getresponse()
            return Answer(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
        finally:
            connection.close()

    def send(self, id: str, data: bytes, say: Callable[[str], None]) -> dict[str, Any]:
        """Rules 1 and 2: the receipt, or `Refused` / `Unreachable`."""
        path = f"/v1/envelopes/{urllib.parse.quote(id, safe='')}"
        failure = ""
        for attempt, delay in enumerate((0.0, *DELAYS)):
            if attempt:
                say(f"{failure}; retrying in {delay:g} s")
                self.sleep(delay)
                try:
                    known = self.request("GET", path)
                except (OSError, http.client.HTTPException) as error:
                    failure = f"cannot reach {self.host}: {error}"
                    continue
                if known.status == 200:
                    receipt: dict[str, Any] = known.json()
                    return receipt
                if known.status != 404:
                    failure = f"checking {id}: HTTP {known.status}"
                    continue
            try:
                posting = {"Content-Type": "text/markdown", "Idempotency-Key": f'"{id}"'}
                answer = self.request("POST", "/v1/envelopes", data, posting)
            except (OSError, http.client.HTTPException) as error:
                failure = f"cannot reach {self.host}: {error}"
                continue
            if answer.status in (200, 202):
                posted: dict[str, Any] = answer.json()
                return posted
            if answer.status in _FINAL:
                raise Refused(answer.status, _problem(answer))
            failure = f"HTTP {answer.status}: {_problem(answer).get('detail', '')}"
        raise Unreachable(f"{failure}; gave up after {len(DELAYS)} retries")

    def await_reply(self, id: str, kinds: tuple[str, ...], timeout: float) -> dict[str, Any] | None:
        """Rule 3: the terminal reply (its JSON, with `text`), or None at the deadline."""
        path = f"/v1/envelopes/{urllib.parse.quote(id, safe='')}/replies"

        def pick(page: Any) -> dict[str, Any] | None:
            for reply in page.get("replies", []):
                if reply.get("type") == "error" or reply.get("type") in kinds:
                    found: dict[str, Any] = reply
                    return found
            return None

        return self._poll(path, timeout, pick)

    def _poll(
        self, path: str, timeout: float, pick: Callable[[Any], dict[str, Any] | None]
    ) -> dict[str, Any] | None:
        """Rule 5: long-poll `path` (its `wait` added) until `pick` finds something or the deadline."""
        deadline = time.monotonic() + timeout
        while (remaining := deadline - time.monotonic()) > 0:
            separator = "&" if "?" in path else "?"
            try:
                answer = self.request("GET", f"{path}{separator}wait={min(remaining, 30.0):.3f}")
            except (OSError, http.client.HTTPException):
                self.sleep(min(1.0, max(remaining, 0.0)))
                continue
            if answer.status in _FINAL:
                raise Refused(answer.status, _problem(answer))
            if answer.status != 200:
                self.sleep(min(1.0, max(remaining, 0.0)))
                continue
            found = pick(answer.json())
            if found is not None:
                return found
        return None

    def await_terminal(self, id: str, timeout: float) -> dict[str, Any] | None:
        """Rule 5: the last reply once the server says the envelope's replies are terminal."""
        path = f"/v1/envelopes/{urllib.parse.quote(id, safe='')}/replies"

        def pick(page: Any) -> dict[str, Any] | None:
            replies = page.get("replies") or []
            return replies[-1] if page.get("terminal") and replies else None

        return self._poll(path, timeout, pick)

    def tail(self) -> int:
        """The seat's feed tail: the seq after which a reply is new."""
        answer = self.request("GET", "/v1/replies?after=0&limit=1")
        if answer.status != 200:
            raise Refused(answer.status, _problem(answer))
        return int(answer.json()["tail_cursor"])

    def await_feed(self, after: int, timeout: float) -> dict[str, Any] | None:
        """Rule 5: the seat's first reply after the seq `after`."""

        def pick(page: Any) -> dict[str, Any] | None:
            replies = page.get("replies") or []
            return replies[0] if replies else None

        return self._poll(f"/v1/replies?after={after}&limit=1", timeout, pick)


def _problem(answer: Answer) -> dict[str, Any]:
    try:
        found = answer.json()
    except ValueError:
        return {"detail": answer.body[:200].decode("utf-8", "replace")}
    return found if isinstance(found, dict) else {}
