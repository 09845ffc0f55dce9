"""`slop_request_approval`: the order a human would sign, drafted where only a human moves it on.

Rules:
1. The draft is the exact order: an `instigate` naming the action, `to` this watcher,
   `created_at` now, `auth: signed:NAME.md.sig`, `requested_by` the seat (whom the console's
   approval or decline notice goes to), its body the request and the agent's reason;
   it is parsed as the daemon would parse it, and refused with every reason if it would fail.
2. `from` is the one principal of allowed_signers when there is exactly one (and it is no
   pattern), else `human`, with a note to set it before signing.
3. It is written into `outbox/drafts/` (made without following a link, never replacing a
   draft), never into `authorized/`: signing and moving it there are the human's acts, and the
   result names the exact commands.
"""

from __future__ import annotations

import contextlib
import os
from datetime import datetime
from typing import Any

from slopd import submit
from slopd.core import drafts
from slopd.core.envelope import Envelope, EnvelopeError, render
from slopd.core.ids import timestamp
from slopd.core.orders import Trust
from slopd.core.validation import parse
from slopd.core.vocabulary import PROTOCOL
from slopd.shell import fs
from slopd.shell.config import Config
from slopd.shell.lanes import Hub
from slopd.transport.problems import Problem

DRAFTS = drafts.FOLDER


def draft(
    hub: Hub,
    config: Config,
    trust: Trust | None,
    *,
    seat: str,
    action: str,
    body: str,
    reason: str,
    now: datetime,
) -> dict[str, Any]:
    """Rules 1-3."""
    ident = submit.compose(
        type="instigate", sender=seat, to="x", body="", slug=f"approve {action}", now=now
    ).id
    name = f"{ident}.md"
    sender = principal(trust)
    order = Envelope(
        protocol=PROTOCOL,
        id=ident,
        type="instigate",
        sender=sender,
        to=config.watcher,
        created_at=timestamp(now),
        auth=f"signed:{name}.sig",
        mode="execute",
        action=action,
        body=f"{body.rstrip()}\n\n{drafts.footer(seat, reason)}",
        extra={"requested_by": seat},
    )
    data = render(order)
    try:
        parse(data, name=name)
    except EnvelopeError as error:  # an action name that is not one, say: nothing written
        raise Problem("invalid-envelope", "; ".join(error.reasons), tuple(error.reasons)) from None
    try:
        write(hub, name, data)
    except OSError as error:  # outbox/drafts a link, say: refused, nothing written
        raise Problem("internal", f"{DRAFTS}/{name} cannot be written: {error.strerror or error}") from None
    path = f"{DRAFTS}/{name}"
    namespace = config.auth.namespace
    return {
        "path": path,
        "order": data.decode(),
        "from": sender,
        "sign_with_slopd": f"slopd sign --key ~/.ssh/id_ed25519 {path}",
        "sign_with_ssh_keygen": f"ssh-keygen -Y sign -f ~/.ssh/id_ed25519 -n {namespace} {path}",
        "then": f"move {path} and {path}.sig into authorized/ (the human, not an agent)",
        "note": "" if sender != "human" else "set `from:` to your allowed_signers principal before signing",
    }


def principal(trust: Trust | None) -> str:
    """Rule 2."""
    names = {entry.principals for entry in (trust.signers if trust is not None else ())}
    if len(names) == 1 and not any(mark in next(iter(names)) for mark in "*?,!"):
        return next(iter(names))
    return "human"


def write(hub: Hub, name: str, data: bytes) -> None:
    """Rule 3."""
    outbox = hub.lane_fd("outbox")
    with contextlib.suppress(FileExistsError):
        os.mkdir("drafts", 0o755, dir_fd=outbox)
    fd = os.open("drafts", fs.DIR_FLAGS, dir_fd=outbox)
    try:
        fs.atomic_write(fd, name, data, replace=False)
    finally:
        os.close(fd)
