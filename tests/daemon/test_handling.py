"""`core.handling.handle` over lane entries: tables of facts → plans, in-process (no file, no
ledger, no subprocess). Each row names the rule of `core.handling` or `core.answers` it holds."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slopd.core import replies
from slopd.core.admission import Refusal
from slopd.core.facts import Bytes, Unread
from slopd.core.handling import handle
from slopd.core.lifecycle import Status
from slopd.core.names import Kind
from slopd.core.outcome import INTERRUPTED, Produced
from slopd.core.plans import (
    Advance,
    Ask,
    Clean,
    Defer,
    Done,
    Duplicate,
    Forget,
    IndexNote,
    Log,
    Move,
    Notify,
    Plan,
    Quieten,
    Record,
    Send,
    Start,
)
from slopd.core.targets import EXECUTOR, Target, TargetKind
from tests.daemon.facts import INODE, NOW, POLICY, arrival, envelope, kinds, planned, policy, row

QUERY = envelope()


# -- rule 4 and core.answers: what each decision writes ---------------------------------------------


@pytest.mark.parametrize(
    ("data", "shape"),
    [
        (QUERY, ["Record", "Log:envelope.received", "Send", "Done"]),
        (envelope(type="handshake"), ["Record", "Log:envelope.received", "Send", "Done"]),
        (
            envelope(type="note", body="# Parser\n\nIt is done.\n"),
            ["Record", "Log:envelope.received", "IndexNote", "Log:note.indexed", "Send", "Done"],
        ),
        (
            envelope(type="instigate", body="Run the tests.\n"),
            ["Record", "Log:envelope.received", "Send", "Advance", "Start"],
        ),
        (
            envelope(type="instigate", to="coder"),
            ["Record", "Log:envelope.received", "Send", "Advance", "Start"],
        ),
        (
            envelope(type="result", in_reply_to="20260704t070000z-asked"),
            ["Record", "Log:envelope.received", "Notify", "Done"],
        ),
        (envelope(to="watcher:elsewhere"), ["Log:envelope.left", "Quieten"]),
        (envelope(to="nobody"), ["Record", "Log:envelope.received", "Send", "Done"]),
    ],
    ids=["query", "handshake", "note", "instigate", "seat", "reply", "elsewhere", "unknown-recipient"],
)
def test_each_decision_has_its_effects_in_order(data: bytes, shape: list[str]) -> None:
    """SPEC §7's order of effects: record, then the reply, then done and the archive (or the
    job, which answers later); a reply is recorded and notified; another watcher's is left."""
    assert kinds(planned(arrival(data))) == shape


def test_a_query_is_recorded_then_answered_with_the_summary_then_archived_by_inode() -> None:
    """The discuss rule: a `result` from `watcher:here` to the sender; `done` guarded by the inode read."""
    plan = planned(arrival(QUERY))
    (record,) = plan.of(Record)
    assert (record.key, record.lane, record.file, record.decision, record.mode) == (
        "20260704t080000z-q",
        "inbox",
        "20260704t080000z-q.md",
        "discuss",
        "discuss",
    )
    (send,) = plan.of(Send)
    assert (send.reply.id, send.reply.type, send.reply.sender, send.reply.to) == (
        "20260704t080000z-q.result",
        "result",
        "watcher:here",
        "agent",
    )
    assert send.reply.created_at == "2026-07-04T08:00:00Z"
    assert replies.reply_class(send.reply) == replies.ReplyClass.PING
    assert plan.of(Done) == [Done("20260704t080000z-q", "inbox", "20260704t080000z-q.md", INODE)]
    assert plan.bind == (("id", "20260704t080000z-q"), ("type", "query"))


def test_an_execution_is_acked_queued_and_started_never_run_here() -> None:
    """`core.answers` rule 4: ack and `queued`; the job starts after the commit (`Start`)."""
    plan = planned(arrival(envelope(type="instigate")))
    assert [send.reply.type for send in plan.of(Send)] == ["ack"]
    assert plan.of(Advance) == [Advance("20260704t080000z-q", Status.QUEUED)]
    assert [(start.envelope.id, start.target) for start in plan.of(Start)] == [
        ("20260704t080000z-q", EXECUTOR)
    ]
    assert plan.of(Record)[0].target == EXECUTOR
    assert not plan.of(Done)


def test_a_discussion_with_a_summarizer_is_a_job_and_nothing_else() -> None:
    """With a summarizer configured, the discussion's reply comes from its run."""
    plan = planned(arrival(QUERY), replace(POLICY, summarizer=True))
    assert kinds(plan) == ["Record", "Log:envelope.received", "Start"]
    assert plan.of(Start)[0].target is None


def test_a_note_is_indexed_before_its_ack() -> None:
    """The note goes into the index (`IndexNote`), titled from its body, before the ack says so."""
    plan = planned(arrival(envelope(type="note", body="# Parser done\n\nAll green.\n")))
    (indexed,) = plan.of(IndexNote)
    assert (indexed.note.id, indexed.note.title) == ("20260704t080000z-q", "Parser done")
    assert plan.of(Send)[0].reply.body == "Note indexed into notes/INDEX.md.\n"


@pytest.mark.parametrize(
    ("data", "changes"),
    [
        (envelope(type="handoff", project="parser"), True),
        (envelope(type="handshake", project="parser"), True),
        (envelope(type="handoff"), False),
        (envelope(type="query", project="parser"), False),
    ],
)
def test_a_handoff_or_handshake_with_a_project_changes_its_standup_with_the_reply(
    data: bytes, changes: bool
) -> None:
    """`core.answers` rule 5: the change rides on the reply's `Send`, stamped with the wall clock."""
    (send,) = planned(arrival(data)).of(Send)
    if changes:
        assert send.standup is not None
        assert (send.standup.project, send.standup.since) == ("parser", "2026-07-04T08:00:00Z")
    else:
        assert send.standup is None


# -- rules 2 and 6: refusals --------------------------------------------------------------------------


def test_an_invalid_file_asks_for_its_refusal_row_then_is_answered_under_its_key() -> None:
    """Rule 2: the key is `invalid:DIGEST`; its row is asked for, then the refusal recorded."""
    facts = arrival(b"---\nprotocol: slop.v1\nid: 20260704t080000z-bad\n---\nno type\n", name="bad.md")
    asked = handle(facts, POLICY, NOW)
    assert isinstance(asked, Ask)
    assert asked.row is not None
    assert asked.row.startswith("invalid:")
    plan = handle(replace(facts, looked_up=(asked.row, None)), POLICY, NOW)
    assert isinstance(plan, Plan)
    assert kinds(plan) == ["Forget", "Record", "Log:envelope.invalid", "Send", "Done"]
    assert [forget.key for forget in plan.of(Forget)] == [("inbox", "bad.md")]  # rule 9
    (record,) = plan.of(Record)
    assert (record.key, record.decision, record.mode) == (asked.row, "invalid", None)
    (send,) = plan.of(Send)
    assert send.reply.id.startswith("20260704t080000z-bad.invalid-")
    assert "bad.md" in send.reply.body


def test_a_refusal_already_answered_is_only_archived() -> None:
    """A resumed refusal whose row is done is moved, not answered again."""
    facts = arrival(b"not an envelope\n", name="bad.md")
    asked = handle(facts, POLICY, NOW)
    assert isinstance(asked, Ask)
    assert asked.row is not None
    done = row(QUERY, status=Status.DONE)
    plan = handle(replace(facts, looked_up=(asked.row, done)), POLICY, NOW)
    assert isinstance(plan, Plan)
    assert kinds(plan) == ["Forget", "Done"]


@pytest.mark.parametrize("lane", ["inbox", "authorized"])
def test_a_refused_entry_is_forgotten_by_the_gate_under_every_key_it_may_be_held_by(lane: str) -> None:
    """Rule 9: its hold for assets by (lane, name); in authorized/ its hold for signatures by name."""
    plan = planned(arrival(b"not an envelope\n", lane=lane, name="deploy.md"))
    keys = [forget.key for forget in plan.of(Forget)]
    assert keys == (["deploy.md", (lane, "deploy.md")] if lane == "authorized" else [(lane, "deploy.md")])


@pytest.mark.parametrize(
    ("facts", "shape"),
    [
        (arrival(b"not an envelope\n", name="bad.md"), ["Forget", "Quieten"]),
        (replace(arrival(QUERY), read=Unread("is a symbolic link")), ["Forget", "Quieten"]),
    ],
    ids=["invalid", "unreadable"],
)
def test_a_watcher_that_is_not_home_leaves_what_it_cannot_route(facts, shape: list[str]) -> None:
    """Rule 6: no refusal (and no row asked for) on a watcher that is not home."""
    assert kinds(planned(facts, policy(home=False))) == shape


def test_an_id_used_with_other_bytes_is_refused_as_a_conflict_without_claiming_it() -> None:
    """Admission rule 4: the row's sha256 differs; the refusal is keyed on the new bytes, and the
    gate forgets the name first."""
    plan = planned(arrival(QUERY, row=row(QUERY, sha256="0" * 64)))
    assert kinds(plan)[:3] == ["Forget", "Record", "Log:envelope.refused"]
    (record,) = plan.of(Record)
    assert record.key.startswith("invalid:")
    assert record.decision == str(Refusal.CONFLICT)
    assert "conflict: id 20260704t080000z-q was already used" in plan.of(Send)[0].reply.body


def test_an_action_outside_authorized_is_refused_unless_another_watcher_owns_it() -> None:
    """Admission rule 5, and rule 6: `action:` in inbox/ addressed elsewhere is left to that watcher."""
    refused = planned(arrival(envelope(type="instigate", action="deploy")))
    assert refused.of(Record)[0].decision == str(Refusal.ACTION)
    left = planned(arrival(envelope(type="instigate", action="deploy", to="watcher:other")))
    assert kinds(left) == ["Forget", "Quieten"]


def test_a_file_that_vanished_is_nothing_and_one_that_cannot_be_read_is_refused() -> None:
    """Rule 1."""
    gone = planned(replace(arrival(QUERY), read=Unread("does not exist", gone=True)))
    assert kinds(gone) == ["Log:envelope.vanished"]
    unreadable = planned(replace(arrival(QUERY), read=Unread("is a directory")))
    assert kinds(unreadable) == ["Forget", "Record", "Log:envelope.invalid", "Send", "Done"]
    assert "the file is a directory" in unreadable.of(Send)[0].reply.body


def test_a_bad_name_is_refused_by_its_stat() -> None:
    """Rule 2 for an unread file: the key comes from its stat, the reason names the name's fault."""
    facts = replace(arrival(QUERY, name="q\x01.md"), kind=Kind.BAD_NAME, read=None, admitted=None)
    plan = planned(facts)
    assert "has a name that is not valid UTF-8" in plan.of(Send)[0].reply.body
    assert plan.of(Send)[0].reply.to == "human"


# -- rule 3: the ledger's row picks the step ----------------------------------------------------------


@pytest.mark.parametrize(
    ("seen", "shape"),
    [
        (row(QUERY, status=Status.RECEIVED), ["Log:envelope.resumed", "Send", "Done"]),
        (
            row(QUERY, status=Status.RECEIVED, replies=("20260704t080000z-q.result",)),
            ["Log:envelope.resumed", "Done"],
        ),
        (
            row(QUERY, status=Status.QUEUED, target=Target(TargetKind.EXECUTOR, "")),
            ["Log:envelope.resumed", "Start"],
        ),
        (
            row(QUERY, status=Status.EXECUTING),
            ["Log:envelope.resumed", "Advance", "Send", "Done", "Clean"],
        ),
        (
            row(QUERY, status=Status.FINISHED, outcome=Produced("done\n")),
            ["Log:envelope.resumed", "Send", "Done", "Clean"],
        ),
        (row(QUERY, status=Status.DONE), ["Log:envelope.resumed", "Done"]),
        (row(QUERY, status=Status.DONE, archive="archive/2026-07-04/x.md"), ["Forget", "Duplicate"]),
        (row(QUERY, file="other-name.md"), ["Forget", "Duplicate"]),
    ],
    ids=["received", "received-answered", "queued", "executing", "finished", "done", "archived", "copy"],
)
def test_the_row_of_the_same_bytes_picks_the_step(seen, shape: list[str]) -> None:
    """Rule 3 (`core.lifecycle.step`): resume, run as decided, answer the outcome, archive, or a duplicate."""
    assert kinds(planned(arrival(QUERY, row=seen))) == shape


def test_an_execution_found_executing_is_answered_interrupted_and_never_run() -> None:
    """An `executing` row: the outcome is `interrupted, not retried`, recorded, then answered."""
    plan = planned(arrival(QUERY, row=row(QUERY, status=Status.EXECUTING)))
    assert plan.of(Advance) == [Advance("20260704t080000z-q", Status.FINISHED, INTERRUPTED)]
    assert "interrupted, not retried" in plan.of(Send)[0].reply.body
    assert plan.of(Clean) == [Clean("20260704t080000z-q")]
    assert not plan.of(Start)


def test_a_finished_outcome_with_files_is_a_deliverable_only_if_its_folder_is_there() -> None:
    """The deliverable (`Send.files`) needs the outcome's files and the run folder's `out/`."""
    seen = row(QUERY, status=Status.FINISHED, outcome=Produced("built\n", files=True))
    with_folder = planned(arrival(QUERY, row=seen, outputs=True)).of(Send)[0]
    without = planned(arrival(QUERY, row=seen, outputs=False)).of(Send)[0]
    assert with_folder.files == "20260704t080000z-q"
    assert replies.reply_class(with_folder.reply) == replies.ReplyClass.DELIVERABLE
    assert without.files is None


def test_a_move_the_ledger_recorded_but_never_made_is_finished_to_its_target() -> None:
    """Rule 3: `done` with an archive path that does not exist: `FINISH_MOVE` to that path."""
    seen = row(QUERY, status=Status.DONE, archive="archive/2026-07-04/20260704t080000z-q.md")
    plan = planned(arrival(QUERY, row=seen, archive_present=False))
    assert plan.of(Move) == [
        Move("inbox", "20260704t080000z-q.md", seen.archive, "envelope.archived", (("resumed", True),))
    ]


def test_a_second_link_of_an_archived_copy_is_a_cut_short_move_finished_without_reading() -> None:
    """Rule 1: a file with two links, one in `archive/`, is moved there at once."""
    facts = replace(
        arrival(QUERY), stat=replace(arrival(QUERY).stat, links=2), linked="archive/2026-07-04/q.md"
    )
    plan = planned(facts)
    assert plan.of(Move) == [
        Move(
            "inbox",
            "20260704t080000z-q.md",
            "archive/2026-07-04/q.md",
            "envelope.archived",
            (("resumed", True),),
        )
    ]


def test_a_duplicate_under_another_name_is_recorded_and_moved() -> None:
    """Rule 3: the same bytes under another name are a duplicate: no reply, nothing runs."""
    plan = planned(arrival(QUERY, name="q (copy).md", row=row(QUERY)))
    assert plan.of(Duplicate) == [
        Duplicate("20260704t080000z-q", "inbox", "q (copy).md", plan.of(Duplicate)[0].sha256)
    ]
    assert not plan.of(Send)


# -- rules 7 and 8: other watchers -----------------------------------------------------------------------


def test_a_new_id_another_watcher_answered_is_left_on_a_shared_hub() -> None:
    """Rule 7: its reply in outbox/ is from another watcher's name."""
    answered = (("20260704t080000z-q.result.md", "watcher:laptop"),)
    left = planned(arrival(QUERY, answered=answered), policy(shared=True))
    assert kinds(left) == ["Log:envelope.left", "Quieten"]
    ours = planned(
        arrival(QUERY, answered=(("20260704t080000z-q.result.md", "watcher:here"),)), policy(shared=True)
    )
    assert "Send" in kinds(ours)
    alone = planned(arrival(QUERY, answered=answered), policy(shared=False))
    assert "Send" in kinds(alone)


def test_an_unknown_recipient_is_asked_about_again_before_it_is_refused() -> None:
    """Rule 8: the presence files are read again; a seat another watcher answers is left to it."""
    facts = arrival(envelope(to="reviewer"))
    assert handle(facts, POLICY, NOW) == Ask(presences=True)
    refused = handle(replace(facts, rechecked=POLICY.routing), POLICY, NOW)
    assert isinstance(refused, Plan)
    assert "unknown recipient 'reviewer'" in refused.of(Send)[0].reply.body
    taken = replace(POLICY.routing, taken=frozenset({"reviewer"}))
    left = handle(replace(facts, rechecked=taken), POLICY, NOW)
    assert isinstance(left, Plan)
    assert kinds(left) == ["Log:envelope.left", "Quieten"]


def test_a_seat_run_by_a_watcher_that_is_not_home_is_asked_about_again() -> None:
    """Rule 8: before a watcher that is not home runs one of its seats."""
    facts = arrival(envelope(type="instigate", to="coder"))
    assert handle(facts, policy(home=False), NOW) == Ask(presences=True)
    assert isinstance(handle(facts, POLICY, NOW), Plan)  # home: nothing to ask


# -- the handler's own contract -------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600))
def test_any_bytes_give_a_plan_or_an_ask_never_an_exception(data: bytes) -> None:
    """`handle` is total over what a lane can hold: arbitrary bytes are refused, never a crash."""
    facts = arrival(data, name="fuzz.md")
    result = handle(facts, POLICY, NOW)
    assert isinstance(result, Plan | Ask)
    assert isinstance(planned(facts), Plan)


def test_handling_is_a_function_of_its_arguments() -> None:
    """The same facts, policy and time give the same plan (nothing is read or remembered)."""
    facts = arrival(envelope(type="note", body="# A\n"))
    assert planned(facts) == planned(facts)
    assert isinstance(facts.read, Bytes)
    assert planned(facts).of(Log)  # and says what it did, as data


def test_a_plan_notifies_the_human_of_a_reply_arriving() -> None:
    """A reply dropped into inbox/ is recorded and told to the human (`core.notices.of_incoming`)."""
    plan = planned(arrival(envelope(type="error", in_reply_to="20260704t070000z-asked")))
    (notify,) = plan.of(Notify)
    assert notify.notice.event == "incoming"


def test_an_input_held_elsewhere_is_quiet_and_a_resumed_one_is_not_logged_as_left() -> None:
    """Rule 4: left quiet; only a new id says `envelope.left`."""
    other = envelope(to="watcher:other")
    assert kinds(planned(arrival(other))) == ["Log:envelope.left", "Quieten"]
    assert kinds(planned(arrival(other, row=row(other)))) == ["Log:envelope.resumed", "Quieten"]
    assert isinstance(planned(arrival(other)).effects[-1], Quieten)
    assert not [effect for effect in planned(arrival(other)).effects if isinstance(effect, Defer | Forget)]
