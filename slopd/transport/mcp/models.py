"""The MCP tools' results, typed (the SDK's structured output): one model per tool."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Result(BaseModel):
    pending: int = Field(description="replies to this seat not yet acked (slop_replies, slop_ack)")
    daemon_note: str | None = Field(
        default=None,
        description="set when no running daemon was found for this hub: replies will not be tracked",
    )


class Daemon(BaseModel):
    running: bool
    pid: int | None
    state: str = Field(description="the state dir (ledger) this seat uses: the running daemon's, if found")


class Limits(BaseModel):
    max_envelope_bytes: int
    max_wait_s: float


class HubInfo(Result):
    seat: str
    hub: str
    daemon: Daemon
    lanes: list[str]
    reply_types: list[str]
    reply_classes: list[str] = Field(
        description="what a reply's `class` says: silent, ping, hybrid, deliverable"
    )
    limits: Limits
    hub_md: str = Field(description="the first lines of the hub's HUB.md: its rules for agents")


class Receipt(Result):
    id: str
    seat: str
    received_at: str
    sha256: str
    seq: int | None
    status: str
    replayed: bool = False


class Reply(BaseModel):
    seq: int
    id: str
    type: str
    reply_class: str = Field(alias="class")
    in_reply_to: str | None
    path: str
    written_at: str
    acked: bool
    summary: str

    model_config = {"populate_by_name": True}


class Status(Result):
    id: str
    state: str = Field(description="received, executing, done or duplicate")
    replies: list[Reply]
    terminal: bool


class Feed(Result):
    replies: list[Reply]
    next_cursor: int = Field(description="pass as `after` next time; reading never consumes")
    has_more: bool
    tail_cursor: int


class Waited(Result):
    reply: Reply | None = Field(description="the reply that came, or null when the wait timed out")
    text: str | None = Field(description="the reply whole, up to 20,000 characters (slop_read pages on)")
    timed_out: bool
    cursor: int = Field(description="this seat's wake cursor: replies after it are new to slop_wait")


class Page(Result):
    id: str
    path: str
    text: str
    offset: int
    total_chars: int
    next_offset: int | None
    files: list[str] = Field(description="a deliverable's files (outbox/ID/…)")


class Acked(Result):
    id: str
    acked: bool


class Note(BaseModel):
    id: str
    sender: str = Field(alias="from")
    created_at: str
    title: str
    text: str = Field(description="the note's text (its body), its first max_chars characters")
    total_chars: int = Field(description="the length of the whole text")
    truncated: bool = Field(description="true when text is cut at max_chars")

    model_config = {"populate_by_name": True}


class Notes(Result):
    notes: list[Note] = Field(description="newest first")
    total: int = Field(description="how many notes match, in all")
    offset: int
    next_offset: int | None = Field(description="pass as `offset` for the next page; null at the end")


class Approval(Result):
    path: str = Field(description="the draft order, in outbox/drafts/ (never authorized/)")
    order: str
    sender: str = Field(alias="from")
    sign_with_slopd: str
    sign_with_ssh_keygen: str
    then: str
    note: str

    model_config = {"populate_by_name": True}


class Finding(BaseModel):
    line: int
    rule: str
    severity: str
    message: str
    fix: str


class Lint(Result):
    conformant: bool
    findings: list[Finding]


class Standup(Result):
    project: str
    found: bool
    standup: dict[str, Any] | None


class Baton(Result):
    vessel: str
    data: dict[str, Any]
