"""`core.handling.handle` for what is not a lane entry: unfinished rows at start-up, an execution's
recorded outcome, a summarizer's answer — and the interpreter's side of the contract."""

from __future__ import annotations

import ast

import pytest

from slopd.core import replies
from slopd.core.admission import Examined, examine
from slopd.core.envelope import Envelope
from slopd.core.facts import Companion, Executed, Input, Recovered, Summarized
from slopd.core.lifecycle import Status
from slopd.core.outcome import Failed, Produced, RunResult
from slopd.core.plans import Advance, Clean, Done, Log, Move, Send
from tests import ROOT
from tests.daemon.facts import WALL, envelope, kinds, planned, row

QUERY = envelope()
INPUT = Input("inbox", "20260704t080000z-q.md", 77)
SLOPD = ROOT / "slopd"


def parsed(data: bytes) -> Envelope:
    examined = examine(data, name="x.md", lane="inbox", max_bytes=1 << 20)
    assert isinstance(examined, Examined), examined
    return examined.envelope


@pytest.mark.parametrize(
    ("status", "outcome", "present", "shape"),
    [
        (Status.EXECUTING, None, True, ["Log:execution.interrupted", "Advance", "Send", "Done", "Clean"]),
        (Status.FINISHED, Produced("ok\n"), True, ["Send", "Done", "Clean"]),
        (Status.RECEIVED, None, False, ["Send", "Done"]),
        (Status.QUEUED, None, False, ["Send", "Done"]),
        (Status.RECEIVED, None, True, []),
        (Status.QUEUED, None, True, []),
    ],
    ids=["executing", "finished", "vanished", "vanished-queued", "scan", "scan-queued"],
)
def test_an_unfinished_row_at_start_is_answered_by_its_recovery_step(
    status: Status, outcome: Produced | None, present: bool, shape: list[str]
) -> None:
    """`core.lifecycle.recovery_step`: interrupted, answered from the outcome, said vanished, or
    left to the scan (nothing at all); never run again."""
    found = planned(Recovered(row(QUERY, status=status, outcome=outcome), present))
    assert kinds(found) == shape
    assert found.bind == ((("id", "20260704t080000z-q"),) if shape else ())
    for done in found.of(Done):
        assert done.inode is None  # the file is not read now: only marked done; the scan moves it


def test_a_row_whose_file_vanished_is_told_so() -> None:
    plan = planned(Recovered(row(QUERY), False))
    (send,) = plan.of(Send)
    assert send.reply.type == "error"
    assert "vanished from the hub before it was handled" in send.reply.body


def test_an_executions_outcome_is_answered_with_its_deliverable_and_its_folder_removed() -> None:
    """`core.answers` rule 4: the outcome is recorded already; its reply, done, then the folder."""
    facts = Executed(INPUT, parsed(QUERY), Produced("built\n", files=True), (), outputs=True)
    plan = planned(facts)
    assert kinds(plan) == ["Send", "Done", "Clean"]
    assert plan.of(Send)[0].files == "20260704t080000z-q"
    assert plan.of(Done) == [Done("20260704t080000z-q", "inbox", INPUT.name, 77)]
    assert plan.of(Clean) == [Clean("20260704t080000z-q")]
    assert not plan.of(Advance)


def test_a_failed_execution_is_an_error_reply() -> None:
    plan = planned(Executed(INPUT, parsed(QUERY), Failed(("the command exited with code 3",)), ()))
    (send,) = plan.of(Send)
    assert send.reply.type == "error"
    assert "exited with code 3" in send.reply.body


def test_a_summarizers_answer_is_the_discussions_result() -> None:
    result = RunResult(0, b"A summary.\n", b"")
    plan = planned(Summarized(INPUT, parsed(QUERY), "A summary.", result, ()))
    assert kinds(plan) == ["Send", "Done"]
    assert plan.of(Send)[0].reply.body == "A summary.\n"


def test_a_failed_summarizer_falls_back_to_the_built_in_summary_and_says_so() -> None:
    result = RunResult(2, b"", b"boom", timed_out=False)
    plan = planned(Summarized(INPUT, parsed(QUERY), None, result, ()))
    assert kinds(plan)[0] == "Log:summarizer.failed"
    assert plan.of(Log)[0].fields == (("exit_code", 2), ("timed_out", False))
    assert "Summary of query" in plan.of(Send)[0].reply.body


def test_a_summary_already_sent_is_not_sent_again_nor_its_standup_changed() -> None:
    """`core.answers` rule 2."""
    handoff = parsed(envelope(type="handoff", project="parser"))
    fresh = planned(Summarized(INPUT, handoff, "Filed.", RunResult(0, b"", b""), ()))
    assert fresh.of(Send)[0].standup is not None
    sent = planned(
        Summarized(INPUT, handoff, "Filed.", RunResult(0, b"", b""), ("20260704t080000z-q.result",))
    )
    assert kinds(sent) == ["Done"]


def test_an_order_answered_after_its_run_takes_its_signature_along() -> None:
    order = Input("authorized", "o.md", 5)
    data = envelope("20260704t080000z-o", "instigate", auth="signed:o.md.sig", action="deploy", from_="a@b.c")
    facts = Executed(order, parsed(data), Produced("ok\n"), (), companions=(Companion("o.md.sig"),))
    assert planned(facts).of(Move) == [
        Move("authorized", "o.md.sig", None, "sidecar.archived", (("sidecar", "o.md.sig"),))
    ]


def test_a_standup_paragraph_joins_a_reply_as_the_old_code_wrote_it() -> None:
    """`core.replies.noted`: a result's paragraph on its own line (its class chosen again), an
    ack's on its one line; a refusal says `refused: standup`."""
    result = replies.result(answering="x", to="a", text="Summary.\n", mode="discuss", watcher="w", now=WALL)
    noted = replies.noted(result, "Filed into standups/p.md.")
    assert noted.body == "Summary.\n\nFiled into standups/p.md."
    assert replies.reply_class(noted) == replies.ReplyClass.PING
    long = replies.noted(result, "x" * 300, refused="standup")
    assert replies.reply_class(long) == replies.ReplyClass.HYBRID
    assert long.extra["refused"] == "standup"
    ack = replies.ack(
        answering="x", to="a", text="Handshake received by w.", mode="discuss", watcher="w", now=WALL
    )
    assert replies.noted(ack, "Tagged in.").body == "Handshake received by w. Tagged in.\n"


LEDGER_READS = {"get", "archive_paths", "unfinished", "announced", "counts", "note_seq", "last_replies"}


def test_the_interpreter_reads_no_ledger_row_and_has_no_policy() -> None:
    """`daemon.interpreter` decides nothing: no ledger read, no routing, no admission."""
    tree = ast.parse((SLOPD / "daemon" / "interpreter.py").read_text(encoding="utf-8"))
    called = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    imported = {
        alias.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) for alias in node.names
    } | {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert not called & LEDGER_READS
    assert not called & {"decide", "examine", "judge", "step", "elsewhere", "policy"}
    assert not {"slopd.core.routing", "slopd.core.admission", "slopd.core.lifecycle.step"} & imported
