"""The gate forgets a lane entry once it is refused (`core.handling` rule 9): a real daemon in this
process, its loop's steps called one by one (scan, then handle what is due), so what the gate
remembers between two files of the same name is seen without a timed assertion."""

from __future__ import annotations

import time

from slopd.daemon.loop import Daemon
from tests.conftest import HubDir, envelope_text
from tests.daemon.stepping import step, stepped
from tests.polling import until

GRACE = 0.5
DIGEST = "0" * 64


def refused_after_a_hold(hub: HubDir, daemon: Daemon, name: str, held: str, lane: str) -> None:
    """`held` (bytes the gate holds) is replaced under `name` by bytes that are no envelope, which
    are refused; then the grace the first one was held from runs out."""
    hub.drop(name, held, lane=lane)
    step(daemon)
    first_seen = time.monotonic()
    assert hub.lane(lane) == [name]  # held
    hub.drop(name, b"no front matter at all\n", lane=lane)

    def refused() -> bool:
        step(daemon)  # the name is due again when its hold says (at the latest, the grace)
        return name not in hub.lane(lane)

    until(refused)
    assert hub.events("envelope.invalid", file=name)
    until(lambda: time.monotonic() > first_seen + GRACE)


def test_an_order_refused_while_held_leaves_no_first_sight_for_the_next_order_of_its_name(
    hub: HubDir,
) -> None:
    """An order held for its signature, then replaced by a file that is no envelope (refused): the
    next order under the same file name is held for its own signature for the whole grace, not
    judged at once as unsigned by the first one's first sight."""
    name = "deploy.md"
    first = envelope_text(id="20260704t100000z-deploy", type="instigate", auth=f"signed:{name}.sig")
    second = envelope_text(id="20260704t100100z-deploy", type="instigate", auth=f"signed:{name}.sig")
    with stepped(hub, GRACE) as daemon:
        refused_after_a_hold(hub, daemon, name, first, "authorized")
        hub.drop(name, second, lane="authorized")
        step(daemon)

        assert hub.lane("authorized") == [name]  # waiting for its signature
        assert not [path for path in hub.lane("outbox") if path.startswith("20260704t100100z-deploy.")]


def test_an_envelope_refused_while_held_for_assets_leaves_no_first_sight_for_the_next_one(
    hub: HubDir,
) -> None:
    """An envelope held for a missing asset, then replaced by a file that is no envelope (refused):
    the next envelope under that name listing a missing asset is held for the whole grace, not
    refused at once as "did not arrive" by the first one's first sight."""
    name = "report.md"
    listing = f"[assets/figure.png sha256:{DIGEST}]"
    first = envelope_text(id="20260704t100000z-report", assets=listing)
    second = envelope_text(id="20260704t100100z-report", assets=listing)
    with stepped(hub, GRACE) as daemon:
        refused_after_a_hold(hub, daemon, name, first, "inbox")
        hub.drop(name, second)
        step(daemon)

        assert hub.lane("inbox") == [name]  # waiting for its asset
        assert not [path for path in hub.lane("outbox") if path.startswith("20260704t100100z-report.")]
