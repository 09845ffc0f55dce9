"""The sample hub, run with the embedded defaults, gets exactly the replies SPEC §4 promises."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import HubDir, front_matter

SAMPLE = Path(__file__).resolve().parent.parent / "sample-hub"


def test_every_sample_envelope_is_answered_as_routed(hub: HubDir) -> None:
    """Each type in sample-hub/ gets its reply (or none, for replies) and everything is archived."""
    shutil.rmtree(hub.root)
    shutil.copytree(SAMPLE, hub.root)
    hub.run_once(config=False)

    replies = {name: front_matter(text) for name, text in hub.outbox().items()}
    by_target = {(headers["in_reply_to"], headers["type"]): headers for headers in replies.values()}
    assert by_target[("20260704t071553z-hello", "ack")]["class"] == "silent"
    assert by_target[("20260704t073500z-note-backoff", "ack")]["class"] == "silent"
    assert ("20260704t072000z-handoff-parser", "result") in by_target
    assert ("20260704t072500z-query-limits", "result") in by_target
    assert by_target[("20260704t073100z-instigate-discuss", "result")]["mode"] == "discuss"
    refused = by_target[("20260704t073000z-instigate-tests", "error")]
    assert refused["mode"] == "execute"
    invalid = [headers for headers in replies.values() if headers["in_reply_to"] is None]
    assert len(invalid) == 1
    assert invalid[0]["file"] == "inbox/20260704T075500Z-not-an-envelope.md"
    answered = {headers["in_reply_to"] for headers in replies.values()}
    for reply_type in ("ack-from-claude", "result-from-claude", "error-from-grok"):
        assert not any(reply_type in str(target) for target in answered)
    assert len(replies) == 7
    assert hub.lane("inbox") == []
    assert len(hub.archived()) == 10
    index = (hub.root / "notes" / "INDEX.md").read_text(encoding="utf-8")
    assert "20260704t073500z-note-backoff" in index
