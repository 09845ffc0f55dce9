"""The `slopd` commands, black-box: init, send, validate, status, run's lock, tail, notes, exit codes."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from slopd.shell.defaults import default_names
from tests.conftest import SLOPD, HubDir, body_of, envelope_text, front_matter
from tests.polling import until

ID_RULE = re.compile(r"[a-z0-9][a-z0-9._:-]{0,127}")
TYPES = ("instigate", "handoff", "ack", "result", "error", "query", "handshake", "note")
FAST_SCANS = "rescan_interval = 0.2\nsettle = 0.1\n"


def _is_valid_id(value: str) -> bool:
    return ID_RULE.fullmatch(value) is not None and ".." not in value


# -- init ------------------------------------------------------------------------------------


def test_init_creates_every_lane_and_the_guide(tmp_path: Path, hub: HubDir) -> None:
    """`slopd init` makes inbox, authorized, outbox, archive, assets, notes, HUB.md and the hub
    file naming this machine's watcher as home."""
    root = tmp_path / "fresh"
    result = hub.slopd("init", str(root))
    assert result.returncode == 0, result.stderr
    for lane in ("inbox", "authorized", "outbox", "archive", "assets", "notes"):
        assert (root / lane).is_dir(), lane
        assert str(root / lane) in result.stdout
    assert (root / "HUB.md").is_file()
    assert sorted(path.name for path in root.iterdir()) == sorted(
        ["inbox", "authorized", "outbox", "archive", "assets", "notes", "HUB.md", ".slopd"]
    )
    assert f'home = "{default_names()[1]}"' in (root / ".slopd" / "hub.toml").read_text()


def test_hub_guide_explains_envelopes_types_modes_and_replies(hub: HubDir) -> None:
    """HUB.md has the envelope template with every field, all 8 types, both modes, the 4 classes."""
    guide = (hub.root / "HUB.md").read_text(encoding="utf-8")
    template = re.search(r"```markdown\n(.*?)```", guide, re.DOTALL)
    assert template is not None
    for key in ("protocol", "id", "type", "from", "to", "in_reply_to", "created_at", "auth", "mode"):
        assert re.search(rf"^{key}:", template.group(1), re.MULTILINE), key
    for kind in TYPES:
        assert f"`{kind}`" in guide, kind
    assert "execute" in guide
    assert "discuss" in guide
    for reply_class in ("silent", "ping", "hybrid", "deliverable"):
        assert f"`{reply_class}`" in guide, reply_class
    assert "outbox/" in guide
    assert "ID.result.md" in guide
    assert "in_reply_to: <your id>" in guide


def test_hub_guide_template_is_a_valid_envelope(tmp_path: Path, hub: HubDir) -> None:
    """The ```markdown template in HUB.md, its YAML comments stripped, passes `slopd validate`."""
    guide = (hub.root / "HUB.md").read_text(encoding="utf-8")
    found = re.search(r"```markdown\n(.*?)```", guide, re.DOTALL)
    assert found is not None
    lines = found.group(1).split("\n")
    assert lines[0] == "---"
    closing = lines.index("---", 1)
    stripped = [re.sub(r"\s+#.*$", "", line) for line in lines[1:closing]]
    assert stripped != lines[1:closing]  # the template does carry comments
    text = "\n".join(["---", *stripped, *lines[closing:]])
    path = tmp_path / "template.md"
    path.write_text(text, encoding="utf-8")
    result = hub.slopd("validate", str(path))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"{path}: valid" in result.stdout


def test_init_again_changes_nothing(hub: HubDir) -> None:
    """Re-running init on a hub leaves a modified HUB.md and lane files byte-identical, same mtimes."""
    guide = hub.root / "HUB.md"
    guide.write_text(guide.read_text(encoding="utf-8") + "\nLocal rule: be kind.\n", encoding="utf-8")
    drop = hub.drop("keep.md", envelope_text(id="keep-me"))
    note_index = hub.root / "notes" / "INDEX.md"
    note_index.write_text("# my notes\n", encoding="utf-8")
    old = time.time() - 1000
    for path in (guide, drop, note_index):
        os.utime(path, (old, old))
    watched = [guide, drop, note_index]
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in watched}
    listing = sorted(str(path.relative_to(hub.root)) for path in hub.root.rglob("*"))

    result = hub.slopd("init", "--no-home", str(hub.root))

    assert result.returncode == 0, result.stderr
    assert "nothing changed" in result.stdout
    assert "created" not in result.stdout
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in watched} == before
    assert sorted(str(path.relative_to(hub.root)) for path in hub.root.rglob("*")) == listing


# -- send ------------------------------------------------------------------------------------


def test_send_writes_one_valid_envelope_from_a_file(tmp_path: Path, hub: HubDir) -> None:
    """`send FILE` prints a valid id and writes exactly inbox/ID.md with the given fields and body."""
    body = "# Parser\n\nPlease take over the parser.\nIt has two bugs.\n"
    body_file = tmp_path / "body.md"
    body_file.write_text(body, encoding="utf-8")
    result = hub.slopd(
        "send",
        "--hub",
        str(hub.root),
        "--type",
        "handoff",
        "--from",
        "claude-code",
        "--to",
        "watcher",
        "--in-reply-to",
        "20260704t071553z-example",
        "--mode",
        "discuss",
        str(body_file),
    )
    assert result.returncode == 0, result.stderr
    sent_id = result.stdout.strip()
    assert _is_valid_id(sent_id), sent_id
    assert hub.lane("inbox") == [f"{sent_id}.md"]  # exactly one file, no temp left behind
    path = hub.root / "inbox" / f"{sent_id}.md"
    text = path.read_text(encoding="utf-8")
    headers = front_matter(text)
    assert headers["protocol"] == "slop.v1"
    assert headers["id"] == sent_id
    assert headers["type"] == "handoff"
    assert headers["from"] == "claude-code"
    assert headers["to"] == "watcher"
    assert headers["in_reply_to"] == "20260704t071553z-example"
    assert headers["mode"] == "discuss"
    assert headers["auth"] == "none"
    assert body_of(text) == body
    checked = hub.slopd("validate", str(path))
    assert checked.returncode == 0, checked.stdout
    assert "valid (handoff" in checked.stdout


def test_send_reads_the_body_from_stdin(hub: HubDir) -> None:
    """`send -` takes the body from stdin and writes a valid envelope with no in_reply_to."""
    body = "Backoff: retry after 2 s, then 4 s.\n"
    result = hub.slopd(
        "send", "--hub", str(hub.root), "--type", "note", "--from", "grok", "--to", "watcher", "-", stdin=body
    )
    assert result.returncode == 0, result.stderr
    sent_id = result.stdout.strip()
    assert _is_valid_id(sent_id), sent_id
    assert hub.lane("inbox") == [f"{sent_id}.md"]
    text = (hub.root / "inbox" / f"{sent_id}.md").read_text(encoding="utf-8")
    headers = front_matter(text)
    assert (headers["type"], headers["from"], headers["to"]) == ("note", "grok", "watcher")
    assert headers["in_reply_to"] is None
    assert "mode" not in headers
    assert body_of(text) == body
    checked = hub.slopd("validate", str(hub.root / "inbox" / f"{sent_id}.md"))
    assert checked.returncode == 0, checked.stdout


def test_send_refuses_an_invalid_sender(hub: HubDir) -> None:
    """`send --from "a b"` exits 2 naming the problem and writes nothing."""
    result = hub.slopd(
        "send",
        "--hub",
        str(hub.root),
        "--type",
        "query",
        "--from",
        "a b",
        "--to",
        "watcher",
        "-",
        stdin="x\n",
    )
    assert result.returncode == 2
    assert "from" in result.stderr
    assert result.stdout == ""
    assert hub.lane("inbox") == []


def test_two_sends_give_different_ids(hub: HubDir) -> None:
    """Two sends in a row get two different ids and two files."""
    ids = []
    for _ in range(2):
        result = hub.slopd(
            "send",
            "--hub",
            str(hub.root),
            "--type",
            "query",
            "--from",
            "me",
            "--to",
            "watcher",
            "-",
            stdin="q\n",
        )
        assert result.returncode == 0, result.stderr
        ids.append(result.stdout.strip())
    assert ids[0] != ids[1]
    assert hub.lane("inbox") == sorted(f"{sent}.md" for sent in ids)


def test_send_wait_prints_the_terminal_reply_from_a_running_daemon(hub: HubDir) -> None:
    """`send --wait` with a daemon running prints the ack of a handshake and the result of a query."""
    hub.write_config(FAST_SCANS)  # the daemon's scans pick the file up quickly
    with hub.running():
        shake = hub.slopd(
            "send", "--hub", str(hub.root), "--type", "handshake", "--from", "me", "--to", "watcher",
            "--wait", "20", "-", stdin="hello\n",
        )  # fmt: skip
        query = hub.slopd(
            "send", "--hub", str(hub.root), "--type", "query", "--from", "me", "--to", "watcher",
            "--wait", "20", "-", stdin="# Limits\n\nWhat is the size limit?\n",
        )  # fmt: skip
    assert shake.returncode == 0, shake.stderr
    shake_id, _, shake_reply = shake.stdout.partition("\n")
    headers = front_matter(shake_reply)
    assert headers["type"] == "ack"
    assert headers["in_reply_to"] == shake_id
    assert query.returncode == 0, query.stderr
    query_id, _, query_reply = query.stdout.partition("\n")
    headers = front_matter(query_reply)
    assert headers["type"] == "result"
    assert headers["in_reply_to"] == query_id
    assert query_reply == hub.reply(query_id, "result")


def test_send_wait_without_a_daemon_times_out(hub: HubDir) -> None:
    """`send --wait 0.5` with nobody answering exits 1 and names the id it waited for."""
    result = hub.slopd(
        "send", "--hub", str(hub.root), "--type", "query", "--from", "me", "--to", "watcher",
        "--wait", "0.5", "-", stdin="anyone?\n",
    )  # fmt: skip
    assert result.returncode == 1
    sent_id = result.stdout.strip()
    assert _is_valid_id(sent_id)
    assert sent_id in result.stderr
    assert hub.lane("inbox") == [f"{sent_id}.md"]


# -- run: watching and the lock -----------------------------------------------------------


def test_running_daemon_notices_a_new_drop_before_the_safety_rescan(hub: HubDir) -> None:
    """With the default 30 s rescan, a file dropped into a watched inbox is answered within seconds."""
    with hub.running():
        hub.drop("hello.md", envelope_text(id="hello-watch", type="handshake"))
        until((hub.root / "outbox" / "hello-watch.ack.md").exists, timeout=10)
    assert front_matter(hub.reply("hello-watch", "ack"))["in_reply_to"] == "hello-watch"


def test_second_daemon_on_the_same_hub_exits_2_naming_lock_and_pid(hub: HubDir) -> None:
    """A second `slopd run` on the same hub and state exits 2; stderr names the lock and the holder's pid."""
    with hub.running() as first:
        hub.drop("waiting.md", envelope_text(id="not-for-the-second"))
        second = hub.slopd("run", "--hub", str(hub.root), "--state", str(hub.state), "--once", timeout=30)
        assert first.alive()
    assert second.returncode == 2
    assert str(hub.state / "slopd.lock") in second.stderr
    assert str(first.pid) in second.stderr


# -- validate --------------------------------------------------------------------------------


def test_validate_accepts_a_good_file(tmp_path: Path, hub: HubDir) -> None:
    """`validate` on a valid envelope exits 0 and says valid."""
    path = tmp_path / "good.md"
    path.write_text(envelope_text(id="good-one", type="query"), encoding="utf-8")
    result = hub.slopd("validate", str(path))
    assert result.returncode == 0, result.stdout
    assert f"{path}: valid" in result.stdout
    assert "invalid" not in result.stdout


def test_validate_lists_every_reason(tmp_path: Path, hub: HubDir) -> None:
    """`validate` on a file breaking three rules exits 1 and lists all three."""
    path = tmp_path / "bad.md"
    path.write_text(envelope_text(protocol="slop.v2", type="bogus", from_='"a b"'), encoding="utf-8")
    result = hub.slopd("validate", str(path))
    assert result.returncode == 1
    assert f"{path}: invalid" in result.stdout
    reasons = [line for line in result.stdout.splitlines() if line.startswith("  - ")]
    assert len(reasons) == 3, result.stdout
    assert any("protocol" in line for line in reasons)
    assert any("type" in line and "bogus" in line for line in reasons)
    assert any("from" in line and "a b" in line for line in reasons)


def test_validate_several_files_reports_each(tmp_path: Path, hub: HubDir) -> None:
    """`validate good bad` exits 1 and reports both files."""
    good, bad = tmp_path / "good.md", tmp_path / "bad.json"
    good.write_text(envelope_text(id="good-two"), encoding="utf-8")
    bad.write_text('{"protocol": "slop.v1"}', encoding="utf-8")
    result = hub.slopd("validate", str(good), str(bad))
    assert result.returncode == 1
    assert f"{good}: valid" in result.stdout
    assert f"{bad}: invalid" in result.stdout
    assert "id: missing" in result.stdout


def test_validate_refuses_a_symlink(tmp_path: Path, hub: HubDir) -> None:
    """A symlink to a valid envelope is invalid: it is never followed."""
    target = tmp_path / "real.md"
    target.write_text(envelope_text(id="real-one"), encoding="utf-8")
    link = tmp_path / "link.md"
    link.symlink_to(target)
    result = hub.slopd("validate", str(link))
    assert result.returncode == 1
    assert f"{link}: invalid" in result.stdout
    assert "symbolic link" in result.stdout


def test_validate_notes_a_name_the_daemon_ignores(tmp_path: Path, hub: HubDir) -> None:
    """`validate .x.md` still checks the file but notes that the daemon ignores that name."""
    path = tmp_path / ".x.md"
    path.write_text(envelope_text(id="hidden-one"), encoding="utf-8")
    result = hub.slopd("validate", str(path))
    assert result.returncode == 0, result.stdout
    assert "ignores" in result.stdout
    assert f"{path}: valid" in result.stdout


# -- status ----------------------------------------------------------------------------------


def test_status_before_any_run(hub: HubDir) -> None:
    """Before any run, status says no daemon and counts the waiting files (not temp ones)."""
    hub.drop("one.md", envelope_text(id="one"))
    hub.drop("two.json", json.dumps({"protocol": "slop.v1"}))
    (hub.root / "inbox" / ".half.md.tmp").write_text("partial", encoding="utf-8")
    result = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state))
    assert result.returncode == 0, result.stderr
    assert "not running" in result.stdout
    assert re.search(r"^inbox:\s*2 waiting, 1 ignored", result.stdout, re.MULTILINE), result.stdout
    assert "one.md" in result.stdout
    assert "two.json" in result.stdout
    assert "ledger:  none yet" in result.stdout


def test_status_after_a_run_shows_ledger_and_last_replies(hub: HubDir) -> None:
    """After a run, status shows the ledger counts and the replies written, in text and JSON."""
    hub.drop("shake.md", envelope_text(id="shake-1", type="handshake"))
    hub.drop("ask.md", envelope_text(id="ask-1", type="query"))
    hub.run_once()

    text = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state))
    assert text.returncode == 0, text.stderr
    assert "done 2" in text.stdout
    assert "last replies:" in text.stdout
    assert "outbox/shake-1.ack.md" in text.stdout
    assert "outbox/ask-1.result.md" in text.stdout

    raw = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state), "--json")
    assert raw.returncode == 0, raw.stderr
    report = json.loads(raw.stdout)
    assert {"hub", "daemon", "lanes", "ledger", "last_replies"} <= set(report)
    assert report["daemon"]["running"] is False
    assert report["lanes"]["inbox"]["waiting"] == []
    assert report["ledger"]["done"] == 2
    assert {reply["path"] for reply in report["last_replies"]} == {
        "outbox/shake-1.ack.md",
        "outbox/ask-1.result.md",
    }


def test_status_reports_the_running_daemon_and_its_pid(hub: HubDir) -> None:
    """With a daemon in the background, status says running and gives that daemon's pid."""
    with hub.running() as daemon:
        text = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state))
        raw = hub.slopd("status", "--hub", str(hub.root), "--state", str(hub.state), "--json")
    assert text.returncode == 0, text.stderr
    assert f"running (pid {daemon.pid})" in text.stdout
    report = json.loads(raw.stdout)
    assert report["daemon"]["running"] is True
    assert report["daemon"]["pid"] == daemon.pid
    assert report["daemon"]["since"].endswith("Z")


# -- tail ------------------------------------------------------------------------------------


def _run_mixed(hub: HubDir) -> None:
    hub.drop("shake.md", envelope_text(id="shake-2", type="handshake"))
    hub.drop("ask.md", envelope_text(id="ask-2", type="query"))
    hub.drop("broken.md", "no front matter here\n")
    hub.run_once()


def _tail(hub: HubDir, *extra: str) -> list[str]:
    result = hub.slopd("tail", "--hub", str(hub.root), "--state", str(hub.state), *extra)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_tail_shows_readable_lines(hub: HubDir) -> None:
    """`tail` prints one readable line per record (not raw JSON) with the event names."""
    _run_mixed(hub)
    lines = _tail(hub)
    assert lines
    assert not any(line.lstrip().startswith("{") for line in lines)
    shown = "\n".join(lines)
    for event in ("daemon.started", "envelope.received", "reply.written", "envelope.archived"):
        assert event in shown, event
    assert "id=ask-2" in shown


def test_tail_by_id_shows_one_envelope_life(hub: HubDir) -> None:
    """`tail --id` shows only that envelope's lines, and all of its life, in order."""
    _run_mixed(hub)
    lines = _tail(hub, "--id", "ask-2")
    assert lines
    assert all("ask-2" in line for line in lines)
    assert not any("shake-2" in line or "broken.md" in line for line in lines)
    events = [line.split()[2] for line in lines]
    life = ["envelope.received", "reply.written", "envelope.archived"]
    assert [event for event in events if event in life] == life


def test_tail_level_warning_hides_info(hub: HubDir) -> None:
    """`tail --level warning` shows the invalid input's warning and no info line."""
    _run_mixed(hub)
    lines = _tail(hub, "--level", "warning")
    assert any("envelope.invalid" in line for line in lines)
    assert {line.split()[1] for line in lines} <= {"warning", "error", "critical"}


def test_tail_follow_prints_new_lines(hub: HubDir) -> None:
    """`tail -f` keeps printing lines as a later run appends them."""
    hub.drop("first.md", envelope_text(id="first-run", type="handshake"))
    hub.run_once()
    follower = subprocess.Popen(
        [*SLOPD, "tail", "--hub", str(hub.root), "--state", str(hub.state), "-f"],
        env=hub.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        assert follower.stdout is not None
        for line in follower.stdout:
            lines.put(line)

    reader = threading.Thread(target=pump, daemon=True)
    reader.start()

    def saw(text: str) -> bool:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                if text in lines.get(timeout=0.1):
                    return True
            except queue.Empty:
                if follower.poll() is not None:
                    return False
        return False

    try:
        assert saw("daemon.stopped")  # the backlog is printed: the follower has read to the end
        hub.drop("second.md", envelope_text(id="second-run", type="handshake"))
        hub.run_once()
        assert saw("id=second-run")
    finally:
        follower.kill()
        follower.communicate(timeout=10)
        reader.join(timeout=10)


# -- notes -----------------------------------------------------------------------------------


def test_notes_lists_newest_first_and_searches(hub: HubDir) -> None:
    """`notes` lists notes newest first; `--search` is case-insensitive; no match exits 1."""
    dates = {
        "note-old": "2026-07-01T08:00:00Z",
        "note-new": "2026-07-03T08:00:00Z",
        "note-mid": "2026-07-02T08:00:00Z",
    }
    bodies = {
        "note-old": "Use exponential Backoff on 429.\n",
        "note-new": "The parser lives in src/parse.\n",
        "note-mid": "Tests run with make test.\n",
    }
    for note_id, created in dates.items():
        hub.drop(f"{note_id}.md", envelope_text(bodies[note_id], id=note_id, type="note", created_at=created))
    hub.run_once()
    base = ("notes", "--hub", str(hub.root), "--state", str(hub.state))

    listed = hub.slopd(*base)
    assert listed.returncode == 0, listed.stderr
    positions = [listed.stdout.index(note_id) for note_id in ("note-new", "note-mid", "note-old")]
    assert positions == sorted(positions), listed.stdout
    assert "src/parse" in listed.stdout

    found = hub.slopd(*base, "--search", "BACKOFF")
    assert found.returncode == 0, found.stderr
    assert "note-old" in found.stdout
    assert "note-new" not in found.stdout
    assert "note-mid" not in found.stdout

    missing = hub.slopd(*base, "--search", "zebra")
    assert missing.returncode == 1
    assert "note-" not in missing.stdout


# -- exit codes ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        ["status"],
        ["tail"],
        ["notes"],
        ["run", "--once"],
        ["send", "--type", "query", "--from", "me", "--to", "watcher", "-"],
    ],
)
def test_not_a_hub_exits_2_naming_the_path(tmp_path: Path, hub: HubDir, command: list[str]) -> None:
    """A --hub that is not a hub is a usage error (exit 2) whose message names the path."""
    elsewhere = tmp_path / "not-a-hub"
    elsewhere.mkdir()
    extra = [] if command[0] == "send" else ["--state", str(hub.state)]
    result = hub.slopd(command[0], "--hub", str(elsewhere), *extra, *command[1:], stdin="x\n")
    assert result.returncode == 2
    assert str(elsewhere) in result.stderr
    assert list(elsewhere.iterdir()) == []


def test_unknown_subcommand_exits_2(hub: HubDir) -> None:
    """An unknown subcommand is a usage error: exit 2."""
    result = hub.slopd("frobnicate", "--hub", str(hub.root))
    assert result.returncode == 2
    assert "frobnicate" in result.stderr


def test_no_subcommand_exits_2(hub: HubDir) -> None:
    """`slopd` with no subcommand is a usage error (exit 2), not a crash."""
    result = subprocess.run(
        [sys.executable, "-m", "slopd"], capture_output=True, text=True, env=hub.env, check=False
    )
    assert result.returncode == 2
    assert "usage" in result.stderr
