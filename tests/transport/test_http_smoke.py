"""The HTTP transport end to end in-process: a POST is a receipt, a file in inbox/ and, soon, a reply."""

from __future__ import annotations

import pytest

from tests.conftest import HubDir
from tests.transport.http_rig import bearer, in_process, markdown, with_tokens

pytestmark = pytest.mark.anyio


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


async def test_a_posted_query_gets_a_receipt_then_its_result(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    ident = "20261201t120000z-smoke"
    async with in_process(hub) as live:
        posted = await live.post(tokens["alice"], markdown(ident))
        assert posted.status_code == 202, posted.text
        receipt = posted.json()
        assert receipt["id"] == ident
        assert receipt["seat"] == "alice"
        assert posted.headers["location"] == f"/v1/envelopes/{ident}"
        waited = await live.client.get(
            f"/v1/envelopes/{ident}/replies?wait=20", headers=bearer(tokens["alice"])
        )
        assert waited.status_code == 200
        assert waited.json()["terminal"] is True
        assert [reply["type"] for reply in waited.json()["replies"]] == ["result"]
        again = await live.post(tokens["alice"], markdown(ident))
        assert again.status_code == 200
        assert again.json() == {**receipt, "replayed": True}
