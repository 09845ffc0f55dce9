"""An envelope posted over HTTP is read at once, whatever `settle` says: the server, in the
daemon's process, tells the watcher the file is complete (`Hint.ARRIVED`); a file an agent
writes in place still waits its settle."""

from __future__ import annotations

import time

import anyio
import pytest

from tests.conftest import HubDir
from tests.transport.http_rig import bearer, in_process, markdown, with_tokens

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # it waits out a 4 s settle


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


async def test_a_posted_envelope_skips_the_settle_a_file_written_in_place_waits(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    hub.write_config("settle = 4\n" + hub.config.read_text())  # top-level keys before [http]
    async with in_process(hub) as live:
        started = time.monotonic()
        posted = await live.post(tokens["alice"], markdown("20261201t120000z-fast"))
        assert posted.status_code == 202
        waited = await live.client.get(
            "/v1/envelopes/20261201t120000z-fast/replies?wait=20", headers=bearer(tokens["alice"])
        )
        assert waited.json()["terminal"] is True
        assert time.monotonic() - started < 3.0  # not the 4 s settle
        (hub.root / "inbox" / "20261201t120000z-slow.md").write_bytes(markdown("20261201t120000z-slow"))
        started = time.monotonic()
        reply = hub.root / "outbox" / "20261201t120000z-slow.result.md"
        while not reply.exists() and time.monotonic() - started < 20:
            await anyio.sleep(0.05)
        assert reply.exists()
        assert time.monotonic() - started >= 3.5  # written in place: it settled first
