"""What an agent that imitates the spec it was handed sends is accepted (SPEC §3, issue 12 point 1).

The two envelopes below are SLOP.md's own examples, quoted: the §4 template with the example
values its comments give (`type` and `auth` picked from their lists, `in_reply_to: null`), and
the §9 note exactly as printed — upper-case `T`/`Z` in the id, a template placeholder for
`in_reply_to`, and no `created_at`. Ids compare case-insensitively: the ledger key and reply
names are lower-case, `in_reply_to` echoes the id as the sender wrote it, and an id that differs
only in case is the duplicate no-op.
"""

from __future__ import annotations

from tests.conftest import HubDir, envelope_text, front_matter

SEED_4_TEMPLATE = """---
protocol: slop.v1
id: 20260704T071553Z-short-slug        # sortable UTC timestamp + slug, globally unique
type: handoff
from: grok-mobile                        # e.g. grok-mobile, claude-code, watcher:odysseus, human
to: watcher                         # e.g. watcher, remote, human, a named orchestrator
in_reply_to: null
created_at: 2026-07-04T07:15:53Z        # ISO 8601 UTC
auth: none
---

# Body (Markdown)
"""

SEED_9_NOTE = """---
protocol: slop.v1
id: 20260704T071553Z-note-example
type: note
from: grok-mobile
to: watcher
in_reply_to: <prior-handoff-id>
---

#learning
- worked: HTTP POST with a signed bearer token
- pitfall: connection dropped mid-session on the retry
- next_time: back off 2s/4s/8s instead of retrying immediately
"""


def test_the_seeds_own_examples_copied_verbatim_are_answered(hub: HubDir) -> None:
    """`slopd validate` accepts both; the daemon answers the handoff with a result and indexes the
    note, each reply named by the lower-case id and echoing the id exactly."""
    template = hub.drop("20260704T071553Z-short-slug.md", SEED_4_TEMPLATE)
    note = hub.drop("20260704T071553Z-note-example.md", SEED_9_NOTE)
    checked = hub.slopd("validate", str(template), str(note))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    hub.run_once()
    replies = hub.outbox()
    assert sorted(replies) == [
        "20260704t071553z-note-example.ack.md",
        "20260704t071553z-short-slug.result.md",
    ]
    result = front_matter(replies["20260704t071553z-short-slug.result.md"])
    ack = front_matter(replies["20260704t071553z-note-example.ack.md"])
    assert (result["in_reply_to"], result["type"]) == ("20260704T071553Z-short-slug", "result")
    assert (ack["in_reply_to"], ack["to"]) == ("20260704T071553Z-note-example", "grok-mobile")
    index = (hub.root / "notes" / "INDEX.md").read_text(encoding="utf-8")
    assert "`20260704T071553Z-note-example`" in index
    assert "back off 2s/4s/8s" in index
    assert hub.archived() == sorted([template.name, note.name])


def test_an_id_differing_only_in_case_is_the_same_id(hub: HubDir) -> None:
    """`RUN-7` after `run-7` is the same id with other bytes (SPEC §3, §14): a conflict error,
    archived, nothing runs twice."""
    hub.write_config('[executor]\ncommand = ["sh", "-c", "echo ran >> \\"$SLOP_HUB/../runs.txt\\""]\n')
    hub.drop("first.md", envelope_text(id="run-7", type="instigate"))
    hub.run_once()
    hub.drop("second.md", envelope_text(id="RUN-7", type="instigate"))
    hub.run_once()
    assert (hub.root.parent / "runs.txt").read_text() == "ran\n"
    conflict = [name for name in hub.outbox() if name.startswith("run-7.invalid-")]
    assert sorted(hub.outbox()) == sorted(["run-7.ack.md", "run-7.result.md", *conflict])
    assert len(conflict) == 1
    assert "conflict: id RUN-7 was already used with other content" in hub.outbox()[conflict[0]]
    assert hub.archived() == ["first.md", "second.md"]
