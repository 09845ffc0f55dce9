"""The JSON log (SPEC §9): one object a line, every input traceable by id, hostile-safe, rotatable."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slopd.shell import log
from tests.conftest import HubDir, envelope_text
from tests.polling import until

LIFE = ["envelope.received", "reply.written", "envelope.archived"]


def _records(data: bytes) -> list[dict[str, Any]]:
    """Parse a log: every b"\\n"-separated line must be one JSON object (no blank or split lines)."""
    assert data.endswith(b"\n"), data[-200:]
    records = []
    for raw in data[:-1].split(b"\n"):
        record = json.loads(raw)
        assert isinstance(record, dict), raw
        records.append(record)
    return records


def _log(hub: HubDir, name: str = "slopd.log") -> list[dict[str, Any]]:
    """STATE/NAME read strictly, for the tests of the log's format (the others use `hub.log_records`)."""
    return _records((hub.state / name).read_bytes())


def _drop_bytes(hub: HubDir, name: bytes, content: bytes) -> None:
    """Drop a file whose name is raw bytes (possibly with control characters), already settled."""
    path = os.fsencode(hub.root / "inbox") + b"/" + name
    temp = os.fsencode(hub.root / "inbox") + b"/.hostile.tmp"
    with open(temp, "wb") as handle:
        handle.write(content)
    old = time.time() - 5
    os.utime(temp, (old, old))
    os.rename(temp, path)


def test_every_line_is_json_and_envelope_lines_carry_id_and_lane(hub: HubDir) -> None:
    """After a mixed run, every log line (file and stderr) is JSON with timestamp, level and event,
    and every line about a valid input carries its id and lane."""
    inputs = {
        "shake.md": envelope_text(id="log-shake", type="handshake"),
        "ask.md": envelope_text(id="log-ask", type="query"),
        "note.md": envelope_text("A breadcrumb.\n", id="log-note", type="note"),
        "run.md": envelope_text("run it\n", id="log-run", type="instigate"),
        "reply.md": envelope_text(id="log-reply", type="ack", in_reply_to="somebody-else"),
        "again.md": envelope_text(id="log-shake", type="handshake", from_="someone-else"),
    }
    for name, text in inputs.items():
        hub.drop(name, text)
    hub.drop("broken.md", "no front matter at all\n")
    expected_id = {
        "shake.md": "log-shake",
        "ask.md": "log-ask",
        "note.md": "log-note",
        "run.md": "log-run",
        "reply.md": "log-reply",
        "again.md": "log-shake",
    }
    result = hub.run_once()

    records = _log(hub)
    assert len(records) >= 20
    for record in records:
        assert {"timestamp", "level", "event"} <= set(record), record
        assert record["level"] in ("debug", "info", "warning", "error", "critical")
    about_files = [record for record in records if "file" in record]
    assert {record["file"] for record in about_files} == {*inputs, "broken.md"}
    for record in about_files:
        assert record.get("lane") == "inbox", record
        if record["file"] in expected_id:
            assert record.get("id") == expected_id[record["file"]], record
    conflict = [
        record for record in records if record["event"] == "envelope.refused" and record["file"] == "again.md"
    ]
    assert [record["refusal"] for record in conflict] == ["conflict"]  # the same id, other bytes (SPEC §14)
    assert any(record["event"] == "envelope.invalid" and record["file"] == "broken.md" for record in records)

    streamed = _records(result.stderr.encode())
    assert [record["event"] for record in streamed] == [record["event"] for record in records]


def test_one_envelope_life_is_traceable_by_id_in_order(hub: HubDir) -> None:
    """Filtering the log by one id gives received (with its decision) → reply.written → archived."""
    hub.drop("other.md", envelope_text(id="noise-before", type="handshake"))
    hub.drop("ask.md", envelope_text(id="traced-ask", type="query"))
    hub.drop("later.md", envelope_text(id="noise-after", type="handshake"))
    hub.run_once()
    mine = [record for record in hub.log_records() if record.get("id") == "traced-ask"]
    events = [record["event"] for record in mine]
    assert [event for event in events if event in LIFE] == LIFE
    received = next(record for record in mine if record["event"] == "envelope.received")
    assert received["decision"] == "discuss"
    written = next(record for record in mine if record["event"] == "reply.written")
    assert written["reply"] == "traced-ask.result"
    archived = next(record for record in mine if record["event"] == "envelope.archived")
    assert archived["archive"].endswith("/ask.md")
    assert (hub.root / archived["archive"]).is_file()


def test_an_invalid_input_with_a_valid_id_is_traceable_by_that_id(hub: HubDir) -> None:
    """An invalid input whose id is valid has that id on every line of its life, so `tail --id` shows it."""
    hub.drop("bad.md", envelope_text(id="bad-but-named", type="bogus"))
    hub.run_once()
    lines = [record for record in hub.log_records() if record.get("file") == "bad.md"]
    events = [record["event"] for record in lines]
    assert events[0] == "envelope.invalid"
    assert "reply.written" in events
    assert "envelope.archived" in events
    for record in lines:
        assert record.get("id") == "bad-but-named", record
    shown = hub.slopd("tail", "--hub", str(hub.root), "--state", str(hub.state), "--id", "bad-but-named")
    assert shown.returncode == 0, shown.stderr
    assert "reply.written" in shown.stdout
    assert "envelope.archived" in shown.stdout


def test_hostile_names_and_bodies_keep_one_json_object_per_line(hub: HubDir) -> None:
    """A newline or ANSI escape in a file name, and ANSI in a body, cannot split or colour the log."""
    _drop_bytes(hub, b"a\nb.md", b"no front matter\n")
    _drop_bytes(hub, b"\x1b[31mred\x1b[0m.md", b"no front matter either\n")
    ansi_body = "\x1b[2J\x1b[31mALERT\x1b[0m: all is fine.\r\nSecond line.\n"
    hub.drop("ansi.md", envelope_text(ansi_body, id="ansi-body", type="query"))
    result = hub.run_once()

    data = (hub.state / "slopd.log").read_bytes()
    assert b"\x1b" not in data
    assert b"\r" not in data
    records = _records(data)
    files = {record.get("file") for record in records}
    assert "a\nb.md" in files
    assert "\x1b[31mred\x1b[0m.md" in files
    assert any(record.get("id") == "ansi-body" and record["event"] == "reply.written" for record in records)
    assert "\x1b" not in result.stderr
    assert len(_records(result.stderr.encode())) == len(records)
    assert hub.lane("inbox") == []


def test_log_is_reopened_after_rotation(tmp_path: Path, hub: HubDir) -> None:
    """After logrotate renames slopd.log, the running daemon writes its next lines to a new slopd.log."""
    hub.write_config("rescan_interval = 0.2\nsettle = 0.1\n")
    log = hub.state / "slopd.log"
    rotated = hub.state / "slopd.log.1"
    with hub.running():
        log.rename(rotated)
        hub.drop("after.md", envelope_text(id="after-rotation", type="handshake"))
        until(lambda: log.exists() and b'"after-rotation"' in log.read_bytes())
        until((hub.root / "outbox" / "after-rotation.ack.md").exists)
    fresh = _log(hub)
    assert any(r.get("id") == "after-rotation" and r["event"] == "envelope.received" for r in fresh)
    old = _log(hub, "slopd.log.1")
    assert old[0]["event"] == "daemon.started"
    assert not any(record.get("id") == "after-rotation" for record in old)


def test_log_file_option_writes_there_instead(tmp_path: Path, hub: HubDir) -> None:
    """`run --log-file PATH` writes the JSON log to PATH and not to STATE/slopd.log; tail reads it."""
    custom = tmp_path / "logs" / "custom.log"
    custom.parent.mkdir()
    hub.drop("ask.md", envelope_text(id="custom-log", type="query"))
    hub.run_once("--log-file", str(custom))
    records = _records(custom.read_bytes())
    assert any(r.get("id") == "custom-log" and r["event"] == "envelope.received" for r in records)
    assert not (hub.state / "slopd.log").exists()
    shown = hub.slopd(
        "tail",
        "--hub",
        str(hub.root),
        "--state",
        str(hub.state),
        "--log-file",
        str(custom),
        "--id",
        "custom-log",
    )
    assert shown.returncode == 0, shown.stderr
    assert "envelope.received" in shown.stdout


@pytest.mark.parametrize(
    "moment", [0.0, 0.5, 59.999999, 1_780_000_000.25, 1_780_000_000.000001, 4_102_444_799.75]
)
def test_timestamps_are_iso_utc_with_microseconds(moment: float) -> None:
    """The log's own timestamp formatter (cached per second) agrees with datetime, second after second."""
    expected = datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert log.timestamp(moment) == expected
    assert log.timestamp(moment + 1) == datetime.fromtimestamp(moment + 1, UTC).strftime(
        "%Y-%m-%dT%H:%M:%S.%fZ"
    )
    assert log.timestamp(moment) == expected, "the cached second is replaced, not reused"


@given(st.floats(min_value=0, max_value=4_102_444_799, allow_nan=False))
def test_timestamps_match_datetime_for_any_moment(moment: float) -> None:
    assert log.timestamp(moment) == datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
