"""An envelope posted over HTTP is read at once, whatever `settle` says: the server, in the
daemon's process, tells the watcher the file is complete (`Hint.ARRIVED`); a file an agent
writes in place still waits its settle. With `settle = 600`, only the first can be answered
during the test at all: the order of the answers is the evidence, no clock is read."""

from __future__ import annotations

import pytest

from tests.conftest import HubDir
from tests.transport.http_rig import bearer, in_process, markdown, with_tokens

pytestmark = [pytest.mark.anyio, pytest.mark.slow]  # a real daemon loop and its watcher


@pytest.fixture(name="anyio_backend")
def fixture_anyio_backend() -> str:
    return "asyncio"


async def test_a_posted_envelope_skips_the_settle_a_file_written_in_place_waits(hub: HubDir) -> None:
    tokens = with_tokens(hub)
    hub.write_config("settle = 600\n" + hub.config.read_text())  # top-level keys before [http]
    alice = bearer(tokens["alice"])
    async with in_process(hub) as live:
        posted = await live.post(tokens["alice"], markdown("20261201t120000z-fast"))
        assert posted.status_code == 202
        waited = await live.client.get("/v1/envelopes/20261201t120000z-fast/replies?wait=20", headers=alice)
        assert waited.json()["terminal"] is True  # answered within 20 s of a 600 s settle
        (hub.root / "inbox" / "20261201t120000z-slow.md").write_bytes(markdown("20261201t120000z-slow"))
        posted = await live.post(tokens["alice"], markdown("20261201t120000z-after"))
        assert posted.status_code == 202
        waited = await live.client.get("/v1/envelopes/20261201t120000z-after/replies?wait=20", headers=alice)
        assert waited.json()["terminal"] is True
        # Posted after it and answered, while the file written in place still settles.
        assert (hub.root / "inbox" / "20261201t120000z-slow.md").exists()
        assert not (hub.root / "outbox" / "20261201t120000z-slow.result.md").exists()
