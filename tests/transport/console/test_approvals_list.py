"""The Approvals list and one item, in process over a real hub (`console.approvals`, `console.shelf`):
the orders listed as waiting are those `slopd status` holds; a render opens each waiting file once,
and, with a shelf, an unchanged file not at all; a changed file is read again; an item's page reads
the file at that moment, whatever the shelf holds. Files opened are seen through Python's audit
hooks (`os.open` raises the `open` event), not by replacing anything."""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from slopd.core.validation import parse
from slopd.shell.config import Config
from slopd.shell.config import parse as parse_config
from slopd.shell.lanes import Hub
from slopd.shell.reads import Contents
from slopd.transport.console import approvals, views
from slopd.transport.console.shelf import Shelf
from tests.conftest import HubDir, envelope_text
from tests.e2e.signing.test_orders import status_json
from tests.polling import until

_RECORDING: dict[int, list[str]] = {}  # thread -> names opened while `opened()` runs in it


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and (names := _RECORDING.get(threading.get_ident())) is not None:
        path = args[0]
        names.append(os.path.basename(os.fsdecode(path)) if isinstance(path, str | bytes) else str(path))


sys.addaudithook(_audit)  # a hook stays for the process: it records only inside `opened()`


@contextmanager
def opened() -> Iterator[list[str]]:
    """The base names of the files this thread opens in the block."""
    names: list[str] = []
    _RECORDING[threading.get_ident()] = names
    try:
        yield names
    finally:
        del _RECORDING[threading.get_ident()]


@pytest.fixture
def config() -> Config:
    return parse_config(
        'names = ["watcher"]\n[actions.deploy]\ncommand = ["true"]\n'
        '[actions.reboot]\ncommand = ["true"]\n[actions.release]\ncommand = ["true"]\nquorum = 2\n'
    )


@pytest.fixture
def lanes(hub: HubDir) -> Iterator[Hub]:
    opened_hub = Hub(hub.root)
    yield opened_hub
    opened_hub.close()


def order(ident: str, sidecars: str, action: str = "release") -> str:
    return envelope_text(
        "Release 2.0.\n", id=ident, type="instigate", from_="bob@example.com", mode="execute",
        action=action, auth=f"signed:{sidecars}",
    )  # fmt: skip


def draft(hub: HubDir, ident: str, action: str = "deploy") -> str:
    """A draft as `slop_request_approval` leaves one in `outbox/drafts/`; its name."""
    (hub.root / "outbox" / "drafts").mkdir(exist_ok=True)
    text = envelope_text(
        "Deploy build 42.\n\nRequested by codex: tests need it\n", id=ident, type="instigate",
        from_="human", mode="execute", action=action, auth=f"signed:{ident}.md.sig", requested_by="codex",
    )  # fmt: skip
    hub.drop(f"{ident}.md", text, lane="outbox/drafts")
    return f"{ident}.md"


def test_the_orders_listed_as_waiting_are_exactly_those_slopd_status_holds(hub: HubDir, lanes: Hub) -> None:
    """Orders missing a signature (a quorum's second, a single's own, a symlink's or a non-envelope's
    .sig) wait and those with all, a lone sidecar and a dot file do not, as `slopd status` and one
    item read on its own say."""
    hub.drop("o1.md", order("o-1", "o1.md.sig,o1.md.bob.sig"), lane="authorized")
    hub.drop("o1.md.sig", "sig\n", lane="authorized")
    hub.drop("o2.md", order("o-2", "o2.md.sig,o2.md.bob.sig"), lane="authorized")
    hub.drop("o2.md.sig", "sig\n", lane="authorized")
    hub.drop("o2.md.bob.sig", "sig\n", lane="authorized")
    hub.drop("o3.md", "no front matter\n", lane="authorized")
    hub.drop("o4.md", "no front matter\n", lane="authorized")
    hub.drop("o4.md.sig", "sig\n", lane="authorized")
    hub.drop("o5.md.sig", "sig\n", lane="authorized")
    hub.drop(".o6.md", order("o-6", "o6.md.sig"), lane="authorized")
    os.symlink(hub.root / "authorized" / "o1.md", hub.root / "authorized" / "o7.md")
    hub.drop("o8.md", order("o-8", "o8.md.sig", action="deploy"), lane="authorized")

    listed = approvals.waiting_orders(lanes, Shelf())
    assert [item.name for item in listed] == sorted(status_json(hub)["lanes"]["authorized"]["held"])
    assert [item.name for item in listed] == ["o1.md", "o3.md", "o7.md", "o8.md"]
    by_name = {item.name: item for item in listed}
    assert (by_name["o1.md"].missing, by_name["o1.md"].present) == (("o1.md.bob.sig",), ("o1.md.sig",))
    assert by_name["o3.md"].problem is not None
    assert by_name["o3.md"].problem.startswith("not a valid envelope")
    assert by_name["o7.md"].problem == "the file is a symbolic link; only regular files are read"
    assert by_name["o8.md"].missing == ("o8.md.sig",)
    for item in listed:
        assert approvals.read(lanes, "authorized", item.name) == item
    for name in ("o2.md", "o4.md", "o5.md.sig", ".o6.md", "gone.md"):
        assert approvals.read(lanes, "authorized", name) is None, name


def test_a_render_opens_each_waiting_file_once_and_with_a_shelf_an_unchanged_one_never_again(
    hub: HubDir, lanes: Hub, config: Config
) -> None:
    """With five held orders and three drafts the first render opens each of the eight once (the old
    list opened each held order again for every order it showed) and the next opens none, same page."""
    for number in range(5):
        hub.drop(
            f"o{number}.md", order(f"o-{number}", f"o{number}.md.sig,o{number}.md.2.sig"), lane="authorized"
        )
        hub.drop(f"o{number}.md.sig", "sig\n", lane="authorized")
    names = [draft(hub, f"20260704t100000z-d{number}") for number in range(3)]
    shelf = Shelf(racy=0.0)  # the files were written just now; the racy rule has its own test
    with opened() as first:
        page = views.approvals_page(lanes, config, shelf)
    waiting = [f"o{number}.md" for number in range(5)] + names
    assert sorted(name for name in first if name in waiting) == sorted(waiting)
    assert len(page["orders"]) == 5
    assert len(page["drafts"]) == 3
    with opened() as second:
        again = views.approvals_page(lanes, config, shelf)
    assert not [name for name in second if name in waiting]
    assert again == page


def test_a_file_changed_renamed_over_or_removed_is_read_again_or_forgotten(
    hub: HubDir, lanes: Hub, config: Config
) -> None:
    """A draft rewritten in place at the same size or replaced by a rename shows its new action, and a
    removed one leaves the list and the shelf."""
    kept, replaced, removed = (draft(hub, f"20260704t100000z-{word}") for word in ("kept", "swap", "gone"))
    shelf = Shelf(racy=0.0)
    views.approvals_page(lanes, config, shelf)
    assert len(shelf) == 3
    path = hub.root / "outbox" / "drafts" / kept
    before = os.stat(path)
    text = path.read_text().replace("action: deploy", "action: reboot")  # the same size

    def rewritten() -> bool:
        with path.open("r+") as rewrite:
            rewrite.write(text)
        return os.stat(path).st_ctime_ns != before.st_ctime_ns

    until(rewritten, timeout=10, interval=0)  # rewritten until the clock ticks over the old stamp
    assert os.stat(path).st_size == before.st_size
    hub.drop(replaced, (hub.root / "outbox" / "drafts" / replaced).read_text().replace("deploy", "reboot"),
             lane="outbox/drafts")  # fmt: skip
    (hub.root / "outbox" / "drafts" / removed).unlink()
    page = views.approvals_page(lanes, config, shelf)
    assert {item["name"]: item["action_name"] for item in page["drafts"]} == {
        kept: "reboot",
        replaced: "reboot",
    }
    assert len(shelf) == 2


def test_a_file_changed_less_than_racy_seconds_before_its_read_is_not_kept(
    hub: HubDir, lanes: Hub, config: Config
) -> None:
    """Drafts written just now are read again at every render (within a clock tick a same-size rewrite
    keeps both file times, so their signature proves nothing yet)."""
    names = [draft(hub, f"20260704t100000z-new{number}") for number in range(2)]
    shelf = Shelf()
    views.approvals_page(lanes, config, shelf)
    assert len(shelf) == 0
    with opened() as again:
        views.approvals_page(lanes, config, shelf)
    assert sorted(name for name in again if name in names) == names


def test_an_items_page_reads_the_file_now_whatever_the_shelf_holds(
    hub: HubDir, lanes: Hub, config: Config
) -> None:
    """With other bytes planted in the shelf under the draft's very signature the list shows them, but
    the item's page — the bytes a human signs — shows the file's."""
    name = draft(hub, "20260704t100000z-planted")
    path = hub.root / "outbox" / "drafts" / name
    forged = path.read_bytes().replace(b"action: deploy", b"action: reboot")
    shelf = Shelf(racy=0.0)
    planted = (Contents(forged, os.stat(path, follow_symlinks=False)), parse(forged, name=name), ())
    shelf.put("drafts", name, planted, time.time())
    (listed,) = views.approvals_page(lanes, config, shelf)["drafts"]
    assert listed["action_name"] == "reboot"
    item = approvals.read(lanes, "drafts", name)
    assert item is not None
    assert item.envelope is not None
    assert (item.envelope.action, item.data) == ("deploy", Path(path).read_bytes())
