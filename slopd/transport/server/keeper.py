"""The Baton keeper's HTTP API (SPEC §11, the seed's paths) on the transport's server.

Rules:
1. Any valid token reads (`GET /baton/registry`, `GET /baton/{vessel}`, the autobiography) and
   scores; only the vessel's own seat (the token's seat equal to the vessel's name) leases
   and commits (403 otherwise).
2. A lease while another is live is 409 naming the holder and the expiry; a commit with a
   stale, released or foreign lease, or another generation than the lease's, is 409; a letter
   that fails the gate (without `accept_low_quality`) is 422 with its score. A refusal writes
   nothing. The work is `baton.keeper`'s, the same code as `slopd baton`.
3. JSON bodies: an object with the documented keys and types, else 400 naming the key;
   at most 4 MiB. An unknown vessel, or a name that is not one, is 404.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from slopd.baton import keeper, leases
from slopd.baton.registry import entry, registry, stamp
from slopd.baton.score import report
from slopd.baton.store import Store
from slopd.baton.tree import BatonError, Tree
from slopd.shell.lanes import Hub
from slopd.transport.problems import Problem

MAX_BODY = 4 << 20
JsonResponse = Callable[[object], Response]


class Keeper:
    def __init__(
        self,
        hub: Hub,
        store: Store,
        answer: JsonResponse,
        read: Callable[[Request, int], Any],
        summarize: keeper.Summarizer | None = None,
        watcher: str = "watcher",
    ) -> None:
        self.hub, self.store, self.answer, self.read = hub, store, answer, read
        self.summarize, self.watcher = summarize, watcher

    def _tree(self, request: Request) -> Tree:
        try:
            tree = Tree(self.hub, request.path_params["vessel"])
        except ValueError:
            raise Problem("not-found", "no such vessel") from None
        if not tree.exists():
            raise Problem("not-found", f"no vessel {tree.vessel} on this hub (slopd baton init)")
        return tree

    async def _body(self, request: Request) -> dict[str, Any]:
        data = await self.read(request, MAX_BODY)
        try:
            body = json.loads(data)
        except ValueError as error:
            raise Problem("bad-request", f"the body is not JSON: {error}") from None
        if not isinstance(body, dict):
            raise Problem("bad-request", "the body must be a JSON object")
        return body

    @staticmethod
    def _own(tree: Tree, seat: str) -> None:
        if seat != tree.vessel:
            raise Problem(
                "wrong-seat", f"only the seat {tree.vessel!r} leases and commits it; this token is {seat!r}"
            )

    async def registry(self, request: Request, seat: str) -> Response:
        found = await anyio.to_thread.run_sync(lambda: registry(self.hub, self.store, now=time.time()))
        return self.answer({"vessels": found})

    async def vessel(self, request: Request, seat: str) -> Response:
        tree = self._tree(request)

        def look() -> dict[str, Any]:
            found = entry(tree, self.store, now=time.time())
            try:
                found["warnings"] = list(keeper.boot(tree, None).warnings)
            except BatonError as error:
                found["warnings"] = [f"{error.filename}: {error.strerror}"]
            return found

        return self.answer(await anyio.to_thread.run_sync(look))

    async def lease(self, request: Request, seat: str) -> Response:
        tree = self._tree(request)
        self._own(tree, seat)
        body = await self._body(request)
        holder, ttl = body.get("holder"), body.get("ttl", leases.DEFAULT_TTL)
        if not isinstance(holder, str) or not 0 < len(holder) <= 128:
            raise Problem("bad-request", "`holder` must be a string of 1 to 128 characters")
        if isinstance(ttl, bool) or not isinstance(ttl, int | float):
            raise Problem("bad-request", "`ttl` must be a number of seconds")
        try:
            leases.check_ttl(float(ttl))
        except ValueError as error:
            raise Problem("bad-request", f"`ttl`: {error}") from None
        taken = await anyio.to_thread.run_sync(
            lambda: self.store.take(tree.vessel, holder, float(ttl), tree.generation)
        )
        if isinstance(taken, leases.Held):
            until = stamp(taken.expires)
            detail = f"{tree.vessel} is leased to {taken.holder} until {until}"
            raise Problem("leased", detail, extra={"holder": taken.holder, "expires": until})
        return self.answer(
            {"lease_id": taken.lease_id, "expires": stamp(taken.expires), "generation": taken.generation}
        )

    async def commit(self, request: Request, seat: str) -> Response:
        tree = self._tree(request)
        self._own(tree, seat)
        asked = _commit_request(await self._body(request))
        now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        done = await anyio.to_thread.run_sync(
            lambda: keeper.pack(
                tree, self.store, asked, now=now, summarize=self.summarize, watcher=self.watcher
            )
        )
        if isinstance(done, keeper.Gated):
            raise Problem(
                "fails-gate",
                "the letter fails the gate; send accept_low_quality to commit it marked LOW_QUALITY",
                extra={"score": done.score},
            )
        if isinstance(done, leases.Refused):
            raise Problem("stale-lease", done.reason)
        return self.answer(
            {
                **done.score,
                "generation": done.generation,
                "LOW_QUALITY": done.low_quality,
                "projected": done.projected,
            }
        )

    async def autobiography(self, request: Request, seat: str) -> Response:
        tree = self._tree(request)
        text = await anyio.to_thread.run_sync(lambda: tree.read("AUTOBIOGRAPHY.md"))
        return Response(text or b"", media_type="text/markdown; charset=utf-8")

    async def score(self, request: Request, seat: str) -> Response:
        letter = (await self._body(request)).get("letter")
        if not isinstance(letter, str):
            raise Problem("bad-request", "`letter` must be a string")
        return self.answer(report(letter))


def _commit_request(body: dict[str, Any]) -> keeper.Request:
    lease_id, generation, letter, state = (
        body.get(key) for key in ("lease_id", "generation", "letter", "state")
    )
    problems = []
    if not isinstance(lease_id, str):
        problems.append("`lease_id` must be a string")
    if isinstance(generation, bool) or not isinstance(generation, int) or generation < 1:
        problems.append("`generation` must be the generation to write (GENERATION + 1)")
    if not isinstance(letter, str):
        problems.append("`letter` must be a string")
    if not isinstance(state, dict):
        problems.append("`state` must be a JSON object (STATE.json)")
    accept = body.get("accept_low_quality", False)
    if not isinstance(accept, bool):
        problems.append("`accept_low_quality` must be true or false")
    if problems:
        raise Problem("bad-request", "; ".join(problems), tuple(problems))
    assert isinstance(lease_id, str)
    assert isinstance(letter, str)
    assert isinstance(state, dict)
    assert isinstance(generation, int)
    return keeper.Request(
        lease_id=lease_id,
        letter=letter,
        state=state,
        intentions=body.get("intentions"),
        context=body.get("context"),
        accept_low_quality=accept,
        generation=generation,
    )
