"""One parse per envelope on every path (`core.admission` rule 7): a real daemon in this process,
its calls of `core.validation.parse` counted by a profile hook (nothing replaced), while one envelope
comes in over the HTTP intake, the MCP seat's intake and the folder, each until it is answered."""

from __future__ import annotations

import contextlib
import hashlib
import sys
import threading
from collections.abc import Iterator
from types import FrameType

import pytest

from slopd import app
from slopd.core import validation
from slopd.core.admission import Examined, examine
from slopd.daemon.gathering import Gatherer
from slopd.transport.assembly import make_service
from slopd.transport.mcp.seat import Seat
from tests.conftest import HubDir, envelope_text
from tests.polling import until
from tests.transport.http_rig import with_tokens

PARSE = validation.parse.__code__


class Counted:
    """Calls of `parse` in this thread and in the threads started while it counts."""

    def __init__(self) -> None:
        self.calls = 0
        self._lock = threading.Lock()

    def profile(self, frame: FrameType, event: str, _arg: object) -> None:
        if event == "call" and frame.f_code is PARSE:
            with self._lock:
                self.calls += 1

    def take(self) -> int:
        with self._lock:
            calls, self.calls = self.calls, 0
        return calls


@contextlib.contextmanager
def daemon(hub: HubDir) -> Iterator[tuple[app.App, Counted]]:
    """The composition root's daemon, running in a thread started while the hook is on."""
    counted, stop = Counted(), threading.Event()
    threading.setprofile(counted.profile)
    sys.setprofile(counted.profile)
    try:
        with app.start(hub.root, config_path=hub.config, state=hub.state, log_stream=None) as opened:
            service = make_service(opened)
            loop = opened.daemon()
            thread = threading.Thread(target=lambda: loop.run(stop=stop), daemon=True)
            thread.start()
            try:
                until(lambda: hub.events("watcher.started"))
                counted.take()  # what start-up parsed (config, HUB.md …) is not an envelope's
                yield opened, counted
            finally:
                stop.set()
                loop.wakeup.set()
                thread.join(timeout=30)
                service.receipts.close()
    finally:
        sys.setprofile(None)
        threading.setprofile(None)


def answered(hub: HubDir, ident: str) -> bool:
    """Its result is in outbox/ and it has left inbox/ (archived): the whole trip is done."""
    return (hub.root / "outbox" / f"{ident}.result.md").exists() and not any(
        path.name.startswith(ident) for path in (hub.root / "inbox").iterdir()
    )


def test_an_envelope_is_parsed_once_over_http_the_mcp_seat_and_the_folder(hub: HubDir) -> None:
    """The intake's admission is handed to the daemon with the file: one parse per envelope."""
    tokens = with_tokens(hub)
    assert tokens
    with daemon(hub) as (opened, counted):
        service = make_service(opened)
        try:
            http_id = "20260704t080000z-one-parse-http"
            data = envelope_text(id=http_id, from_="alice", type="query", to="watcher").encode()
            accepted = service.intake.accept("alice", data, json_form=False, idempotency_key=None)
            assert not accepted.replayed
            until(lambda: answered(hub, http_id))
            assert counted.take() == 1
        finally:
            service.receipts.close()

        seat = Seat(
            opened.hub, opened.state, "bob", opened.config, arrived=opened.arrived, admit=opened.admit
        )
        try:
            sent = seat.send(type="query", to="watcher", body="What is left?\n")
            until(lambda: answered(hub, sent["id"].lower()))
            assert counted.take() == 1
        finally:
            seat.close()

        folder_id = "20260704t080000z-one-parse-folder"
        hub.drop(f"{folder_id}.md", envelope_text(id=folder_id, from_="carol", type="query", to="watcher"))
        until(lambda: answered(hub, folder_id))
        assert counted.take() == 1


@pytest.mark.parametrize("same", [True, False])
def test_an_admission_is_taken_only_for_the_very_bytes_it_was_made_of(same: bool) -> None:
    """Rule 7: the sha256 of the bytes read decides; other bytes are examined again, as read."""
    posted = envelope_text(id="20260704t080000z-x", type="query", to="watcher").encode()
    read = posted if same else posted.replace(b"Body text.", b"Edited since.")
    admitted = examine(posted, name="envelope.md", lane="inbox", max_bytes=1 << 20)
    assert isinstance(admitted, Examined)
    found = Gatherer._admitted(read, "inbox", "20260704t080000z-x.md", 1 << 20, admitted)
    assert (found is admitted) == same
    assert isinstance(found, Examined)
    assert found.sha256 == hashlib.sha256(read).hexdigest()
    elsewhere = Gatherer._admitted(posted, "authorized", "20260704t080000z-x.md", 1 << 20, admitted)
    assert elsewhere is not admitted  # admitted for inbox/ is not admitted for authorized/
