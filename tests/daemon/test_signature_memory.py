"""The gate's memory of a signature seen before its order (`daemon.gate` rule 3): a real daemon in
this process, its loop's steps called one by one (scan, then handle what is due), so what the gate
remembers between two orders of the same name is seen without a timed assertion."""

from __future__ import annotations

import time

from tests.conftest import HubDir, envelope_text
from tests.daemon.stepping import step, stepped
from tests.polling import until

GRACE = 0.5
ORDER, SIGNATURE = "deploy.md", "deploy.md.sig"


def test_a_signature_archived_with_its_order_is_forgotten_so_the_next_one_waits_the_grace(
    hub: HubDir,
) -> None:
    """A signature synced before its order is first seen alone; once it went to `archive/` with
    that order, a new signature of the same name (the next order under the same file name, again
    synced first) is held for the whole grace, not refused at once as "without its order" with the
    first one's first sight."""
    order = envelope_text(id="20260704t100000z-deploy", type="instigate", auth=f"signed:{SIGNATURE}")
    with stepped(hub, GRACE) as daemon:
        hub.drop(SIGNATURE, b"not a signature\n", lane="authorized")
        step(daemon)  # seen alone: held for its order
        first_seen = time.monotonic()
        hub.drop(ORDER, order, lane="authorized")
        step(daemon)  # the order comes: judged (no signer trusts it) and archived, its signature with it
        assert hub.lane("authorized") == []
        assert sorted(hub.archived()) == [ORDER, SIGNATURE]

        until(lambda: time.monotonic() > first_seen + GRACE)
        hub.drop(SIGNATURE, b"the next order's signature\n", lane="authorized")
        step(daemon)

        assert hub.lane("authorized") == [SIGNATURE]  # waiting for its order, not refused
        assert not hub.events("envelope.invalid", file=SIGNATURE)
