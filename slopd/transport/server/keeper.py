"""The Baton keeper's HTTP API (SPEC §11, the seed's paths) on the transport's server.

Rules:
1. Any valid token reads (`GET /baton/registry`, `GET /baton/{vessel}`, the autobiography) and
   scores; only the vessel's own seat (the token's seat equal to the vessel's name) leases
   and commits (403 otherwise).
2. Leases, commits and their refusals (409, 422) are `transport.keeping`'s, shared with the MCP
   tools; the work is `baton.keeper`'s, the same code as `slopd baton`.
3. JSON bodies: an object with the documented keys and types, else 400 naming the key; a key
   the endpoint does not take is 422 naming every one (SPEC §14: no surface ignores an argument
   it does not know); at most 4 MiB. An unknown vessel, or a name that is not one, is 404.
4. The autobiography is what boot presents (`baton.keeper.boot`): never one written for a
   generation above GENERATION; `GET /baton/{vessel}` lists what boot left out (`left_out`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import anyio.to_thread
from starlette.requests import Request
from starlette.responses import Response

from slopd.baton import keeper, leases
from slopd.baton.registry import entry, registry
from slopd.baton.score import report
from slopd.baton.store import Store
from slopd.baton.tree import BatonError, Tree
from slopd.shell.lanes import Hub
from slopd.transport import keeping
from slopd.transport.problems import Problem

MAX_BODY = 4 << 20
LEASE_KEYS = ("holder", "ttl")
COMMIT_KEYS = ("lease_id", "generation", "letter", "state", "intentions", "context", "accept_low_quality")
SCORE_KEYS = ("letter",)
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
        return keeping.vessel(self.hub, request.path_params["vessel"])

    async def _body(self, request: Request, takes: tuple[str, ...]) -> dict[str, Any]:
        data = await self.read(request, MAX_BODY)
        try:
            body = json.loads(data)
        except ValueError as error:
            raise Problem("bad-request", f"the body is not JSON: {error}") from None
        if not isinstance(body, dict):
            raise Problem("bad-request", "the body must be a JSON object")
        unknown = sorted(set(body) - set(takes))
        if unknown:
            reasons = tuple(f"`{key}`: this endpoint takes no such key" for key in unknown)
            named = ", ".join(f"`{key}`" for key in unknown)
            raise Problem("unknown-keys", f"{named}: not taken here; it takes {', '.join(takes)}", reasons)
        return body

    async def registry(self, request: Request, seat: str) -> Response:
        found = await anyio.to_thread.run_sync(lambda: registry(self.hub, self.store, now=time.time()))
        return self.answer({"vessels": found})

    async def vessel(self, request: Request, seat: str) -> Response:
        tree = self._tree(request)

        def look() -> dict[str, Any]:
            found = entry(tree, self.store, now=time.time())
            try:
                booted = keeper.boot(tree, None)
                found["warnings"], found["left_out"] = list(booted.warnings), list(booted.left_out)
            except BatonError as error:
                found["warnings"], found["left_out"] = [f"{error.filename}: {error.strerror}"], []
            return found

        return self.answer(await anyio.to_thread.run_sync(look))

    async def lease(self, request: Request, seat: str) -> Response:
        tree = self._tree(request)
        keeping.own(tree, seat)
        body = await self._body(request, LEASE_KEYS)
        holder, ttl = body.get("holder"), body.get("ttl", leases.DEFAULT_TTL)
        if not isinstance(holder, str) or not 0 < len(holder) <= 128:
            raise Problem("bad-request", "`holder` must be a string of 1 to 128 characters")
        if isinstance(ttl, bool) or not isinstance(ttl, int | float):
            raise Problem("bad-request", "`ttl` must be a number of seconds")
        try:
            leases.check_ttl(float(ttl))
        except ValueError as error:
            raise Problem("bad-request", f"`ttl`: {error}") from None
        taken = await anyio.to_thread.run_sync(lambda: keeping.lease(tree, self.store, holder, float(ttl)))
        return self.answer(taken)

    async def commit(self, request: Request, seat: str) -> Response:
        tree = self._tree(request)
        keeping.own(tree, seat)
        asked = _commit_request(await self._body(request, COMMIT_KEYS))
        done = await anyio.to_thread.run_sync(
            lambda: keeping.commit(tree, self.store, asked, summarize=self.summarize, watcher=self.watcher)
        )
        return self.answer(done)

    async def autobiography(self, request: Request, seat: str) -> Response:
        """Rule 4: L1 as boot presents it."""
        tree = self._tree(request)

        def read() -> str:
            try:
                return keeper.boot(tree, None).loaded.get("AUTOBIOGRAPHY.md", "")
            except BatonError as error:
                raise Problem("not-found", f"{error.filename}: {error.strerror}") from None

        text = await anyio.to_thread.run_sync(read)
        return Response(text.encode(), media_type="text/markdown; charset=utf-8")

    async def score(self, request: Request, seat: str) -> Response:
        letter = (await self._body(request, SCORE_KEYS)).get("letter")
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
