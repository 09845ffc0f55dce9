"""The sample hub, run with the embedded defaults, gets exactly the replies SPEC §4 promises."""

from __future__ import annotations

import shutil

from tests import ROOT
from tests.conftest import HubDir, front_matter

SAMPLE = ROOT / "sample-hub"
SAMPLE_CONFIG = SAMPLE.parent / "sample-config" / "config.toml"


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
    for order in ("order-hello", "order-forged", "order-tampered"):
        refused = next(h for h in replies.values() if str(h["in_reply_to"]).endswith(order))
        assert refused["type"] == "error"
    assert len(replies) == 10
    assert hub.lane("inbox") == []
    assert hub.lane("authorized") == []
    assert len(hub.archived()) == 16
    index = (hub.root / "notes" / "INDEX.md").read_text(encoding="utf-8")
    assert "20260704t073500z-note-backoff" in index


def test_with_the_sample_config_only_the_signed_order_runs_its_action(hub: HubDir) -> None:
    """With sample-config/, the signed order runs `hello`; the forged and tampered ones are refused."""
    shutil.rmtree(hub.root)
    shutil.copytree(SAMPLE, hub.root)
    result = hub.slopd(
        "run", "--hub", str(hub.root), "--state", str(hub.state), "--config", str(SAMPLE_CONFIG), "--once"
    )
    assert result.returncode == 0, result.stderr

    assert "hello from the signed action" in hub.reply("20260704t080000z-order-hello", "result")
    assert "key not in allowed_signers" in hub.reply("20260704t080500z-order-forged", "error")
    assert "bad signature" in hub.reply("20260704t081000z-order-tampered", "error")
    assert "words" in hub.reply("20260704t073000z-instigate-tests", "result")
    assert hub.lane("authorized") == []
