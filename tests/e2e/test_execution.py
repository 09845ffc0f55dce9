"""Execution, black-box: the executor, seats, the summarizer and the notifier (SPEC §1, §4, §5, §7, §8).

Every command here is a small Python script written into the test's temp dir (outside the hub)
and configured through a real TOML file; slopd runs as a real subprocess.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HubDir, body_of, envelope_text, front_matter, toml_argv
from tests.polling import until

# One script, many behaviours: `agent.py MODE ARGS…`. It never looks at the envelope except
# through stdin and the SLOP_* environment, like a real agent command.
AGENT = r"""
import json, os, subprocess, sys, time
from pathlib import Path

def append(path, text):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)

def write_atomic(path, text):
    temp = path + ".part"
    Path(temp).write_text(text)
    os.replace(temp, path)

def spawn_grandchild():
    code = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"
    child = subprocess.Popen(
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    return child.pid

def main():
    mode, args = sys.argv[1], sys.argv[2:]
    ident = os.environ.get("SLOP_ID", "no-id")
    data = sys.stdin.buffer.read()
    if mode == "dump":
        out_dir = os.environ.get("SLOP_OUT_DIR", "")
        record = {
            "argv": sys.orig_argv,
            "env": dict(os.environ),
            "stdin": data.decode("utf-8"),
            "out_dir_is_dir": os.path.isdir(out_dir),
            "out_dir_listing": sorted(os.listdir(out_dir)) if os.path.isdir(out_dir) else None,
        }
        write_atomic(os.path.join(args[0], ident + ".json"), json.dumps(record))
        sys.stdout.write(args[1] if len(args) > 1 else "ran " + ident + "\n")
    elif mode == "fail":
        for number in range(int(args[1])):
            sys.stderr.write("stderr line %04d of the failing command\n" % number)
        sys.stdout.write("partial output\n")
        sys.exit(int(args[0]))
    elif mode == "hang":
        grandchild = spawn_grandchild()
        write_atomic(args[0], "%d %d" % (os.getpid(), grandchild))
        time.sleep(600)  # a command that hangs until it is killed
    elif mode == "flood":
        chunk = b"x" * 65536
        total = int(args[0])
        while total > 0:
            sys.stdout.buffer.write(chunk[:total])
            total -= len(chunk)
        sys.stdout.flush()
    elif mode == "deliver":
        out = Path(os.environ["SLOP_OUT_DIR"])
        (out / "report.txt").write_text("the report for " + ident + "\n")
        (out / "sub").mkdir()
        (out / "sub" / "data.json").write_text(json.dumps({"id": ident, "rows": [1, 2, 3]}))
        sys.stdout.write("wrote report.txt and sub/data.json\n")
    elif mode == "length":
        wanted = int(data.decode().split()[-1])
        text = ""
        number = 0
        while len(text) < wanted:
            number += 1
            text += "Sentence number %d of the long result. " % number
        sys.stdout.write(text[:wanted])
    elif mode == "journal":
        append(args[0], "start %s %r\n" % (ident, time.monotonic()))
        time.sleep(float(args[1]))  # the command's work: it runs this long
        append(args[0], "end %s %r %r\n" % (ident, time.monotonic(), time.time()))
        sys.stdout.write("done " + ident + "\n")
    elif mode == "notifier":
        append(args[0], data.decode("utf-8") + "\n<<END>>\n")
    elif mode == "summarize":
        write_atomic(args[0], data.decode("utf-8"))
        sys.stdout.write("SUMMARIZER: %d characters received.\n" % len(data.decode("utf-8")))
    elif mode == "bad-summarizer":
        sys.stdout.write("BOGUS half summary\n")
        sys.exit(4)
    else:
        sys.exit("unknown mode " + mode)

main()
"""

IDS = [f"20260704t0800{n:02d}z-job-{n}" for n in range(10)]


@pytest.fixture(name="agent")
def fixture_agent(tmp_path: Path) -> list[str]:
    """The argv prefix that runs the agent script: [python, agent.py]."""
    script = tmp_path / "tools" / "agent.py"
    script.parent.mkdir()
    script.write_text(AGENT, encoding="utf-8")
    return [sys.executable, str(script)]


def instigate(hub: HubDir, envelope_id: str, body: str = "Do the work.\n", **fields: Any) -> Path:
    fields.setdefault("type", "instigate")
    return hub.drop(f"{envelope_id}.md", envelope_text(body, id=envelope_id, **fields))


def terminal(hub: HubDir, envelope_id: str) -> list[dict[str, Any]]:
    """The result/error replies to `envelope_id`."""
    return [h for h in hub.replies_to(envelope_id) if h["type"] in ("result", "error")]


def notify_events(hub: HubDir, envelope_id: str) -> list[str]:
    return [str(record["text"]) for record in hub.events("notify", id=envelope_id)]


def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie waiting for a reaper counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


@pytest.fixture(name="pidfiles")
def fixture_pidfiles() -> Iterator[list[Path]]:
    """Pid files written by hanging commands; whatever they name is killed at teardown."""
    files: list[Path] = []
    yield files
    for path in files:
        if not path.exists():
            continue
        for pid in (int(word) for word in path.read_text().split()):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)


def max_overlap(journal: Path) -> tuple[int, dict[str, tuple[float, float]]]:
    """The largest number of runs in progress at once, and each id's (start, end)."""
    starts: dict[str, float] = {}
    spans: dict[str, tuple[float, float]] = {}
    for line in journal.read_text().splitlines():
        word, ident, stamp, *_ = line.split()
        if word == "start":
            starts[ident] = float(stamp)
        else:
            spans[ident] = (starts[ident], float(stamp))
    events = sorted(
        [(start, 1) for start, _ in spans.values()] + [(end, -1) for _, end in spans.values()],
        key=lambda event: (event[0], event[1]),
    )
    current = highest = 0
    for _, step in events:
        current += step
        highest = max(highest, current)
    return highest, spans


# -- the executor's contract --------------------------------------------------------------------


def test_instigate_runs_the_executor_with_config_argv_body_on_stdin_and_slop_env(
    hub: HubDir, agent: list[str], tmp_path: Path
) -> None:
    """An instigate gets a silent execute-mode ack, then a result that is the command's stdout."""
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    argv = [*agent, "dump", str(dumps), "Tests pass: 42 of 42.\n"]
    hub.write_config(f"[executor]\ncommand = {toml_argv(argv)}\ntimeout = 30\n")
    body = "# Run the tests\n\nPlease run   the suite.  \n\ttabbed line\n\nlast line without newline"
    hub.env.update(
        NOTIFY_SOCKET=str(tmp_path / "notify.sock"),
        WATCHDOG_USEC="30000000",
        WATCHDOG_PID=str(os.getpid()),
    )
    ident = IDS[0]
    instigate(hub, ident, body, from_="grok", to="watcher")

    hub.run_once()

    ack = hub.reply(ident, "ack")
    ack_headers = front_matter(ack)
    assert ack_headers["type"] == "ack"
    assert ack_headers["class"] == "silent"
    assert ack_headers["mode"] == "execute"
    assert ack_headers["to"] == "grok"
    result = hub.reply(ident, "result")
    headers = front_matter(result)
    assert headers["in_reply_to"] == ident
    assert headers["to"] == "grok"
    assert headers["mode"] == "execute"
    assert headers["class"] == "ping"
    assert body_of(result) == "Tests pass: 42 of 42.\n"
    assert [h["type"] for h in hub.replies_to(ident)] == ["ack", "result"]
    written = [record["reply"] for record in hub.events("reply.written", id=ident)]
    assert written == [f"{ident}.ack", f"{ident}.result"]

    record = json.loads((dumps / f"{ident}.json").read_text())
    assert record["argv"] == argv
    assert record["stdin"] == body
    env = record["env"]
    assert env["SLOP_ID"] == ident
    assert env["SLOP_FROM"] == "grok"
    assert env["SLOP_TO"] == "watcher"
    assert env["SLOP_TYPE"] == "instigate"
    assert Path(env["SLOP_HUB"]).resolve() == hub.root.resolve()
    out_dir = Path(env["SLOP_OUT_DIR"]).resolve()
    assert record["out_dir_is_dir"] is True
    assert record["out_dir_listing"] == []
    assert hub.root.resolve() not in out_dir.parents
    for key in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
        assert key not in env, key
    assert hub.lane("inbox") == []
    assert hub.archived() == [f"{ident}.md"]


def test_hostile_body_reaches_the_command_only_on_stdin(
    hub: HubDir, agent: list[str], tmp_path: Path
) -> None:
    """Shell syntax, options and a 1 MB line in the body never reach argv or a shell."""
    dumps = tmp_path / "dumps"
    dumps.mkdir()
    pwned = tmp_path / "pwned"
    argv = [*agent, "dump", str(dumps)]
    hub.write_config(f"[executor]\ncommand = {toml_argv(argv)}\ntimeout = 30\nmax_parallel = 2\n")
    hostile = (
        f"$(touch {pwned})\n`touch {pwned}`\n; id\n| id\n&& touch {pwned}\n--help\n-rf /\n"
        f"'\"; touch {pwned}; echo \"'\n"
    )
    long_line = "A" * 1_000_000 + "\n"
    instigate(hub, IDS[0], hostile, from_="--help")
    instigate(hub, IDS[1], long_line)

    hub.run_once()

    for ident, body in ((IDS[0], hostile), (IDS[1], long_line)):
        record = json.loads((dumps / f"{ident}.json").read_text())
        assert record["argv"] == argv
        assert record["stdin"] == body
        assert front_matter(hub.reply(ident, "result"))["type"] == "result"
    assert json.loads((dumps / f"{IDS[0]}.json").read_text())["env"]["SLOP_FROM"] == "--help"
    assert not pwned.exists()


def test_nonzero_exit_is_an_error_with_the_code_and_the_tail_of_stderr(hub: HubDir, agent: list[str]) -> None:
    """A command exiting 3 gets an `error` naming code 3 and ending with its last stderr lines."""
    hub.write_config(f"[executor]\ncommand = {toml_argv([*agent, 'fail', '3', '400'])}\ntimeout = 30\n")
    ident = IDS[0]
    instigate(hub, ident)

    hub.run_once()

    assert not (hub.root / "outbox" / f"{ident}.result.md").exists()
    error = hub.reply(ident, "error")
    headers = front_matter(error)
    assert headers["in_reply_to"] == ident
    assert headers["mode"] == "execute"
    assert headers["class"] == "ping"
    text = body_of(error)
    assert "code 3" in text
    assert "stderr line 0399 of the failing command" in text
    assert "stderr line 0000 " not in text  # the tail, not the whole stream
    assert [h["type"] for h in hub.replies_to(ident)] == ["ack", "error"]
    assert hub.archived() == [f"{ident}.md"]


def test_a_command_that_cannot_start_is_an_error_naming_it(hub: HubDir, tmp_path: Path) -> None:
    """An executor path that does not exist gets an `error` naming that path; the daemon goes on."""
    missing = str(tmp_path / "no-such-dir" / "agent-tool")
    hub.write_config(f"[executor]\ncommand = {toml_argv([missing, '-p'])}\ntimeout = 30\n")
    instigate(hub, IDS[0])
    hub.drop("hello.md", envelope_text(id="20260704t080500z-hello", type="handshake"))

    hub.run_once()

    assert missing in body_of(hub.reply(IDS[0], "error"))
    assert [h["type"] for h in terminal(hub, IDS[0])] == ["error"]
    assert front_matter(hub.reply("20260704t080500z-hello", "ack"))["class"] == "silent"
    assert hub.lane("inbox") == []


def test_timeout_is_an_error_and_kills_the_whole_process_group(
    hub: HubDir, agent: list[str], tmp_path: Path, pidfiles: list[Path]
) -> None:
    """A command past its timeout gets `error` "timed out", and its background grandchild dies too."""
    pidfile = tmp_path / "hang.pids"
    pidfiles.append(pidfile)
    hub.write_config(f"[executor]\ncommand = {toml_argv([*agent, 'hang', str(pidfile)])}\ntimeout = 1\n")
    ident = IDS[0]
    instigate(hub, ident)

    hub.run_once()

    error = body_of(hub.reply(ident, "error"))
    assert "timed out" in error
    assert [h["type"] for h in terminal(hub, ident)] == ["error"]
    command_pid, grandchild_pid = (int(word) for word in pidfile.read_text().split())
    until(lambda: not alive(command_pid), timeout=10)
    until(lambda: not alive(grandchild_pid), timeout=10)


def test_stdout_over_the_cap_is_truncated_with_a_note_and_the_daemon_survives(
    hub: HubDir, agent: list[str]
) -> None:
    """5 MB of stdout gives a result cut near 1 MiB with a note; other inputs are still answered."""
    hub.write_config(f"[executor]\ncommand = {toml_argv([*agent, 'flood', str(5 * 1024 * 1024)])}\n")
    ident = IDS[0]
    instigate(hub, ident)
    hub.drop("later.md", envelope_text(id="20260704t090000z-later", type="handshake"))

    hub.run_once()

    result = hub.reply(ident, "result")
    text = body_of(result)
    assert "truncated" in text
    assert text.count("x") <= 1024 * 1024
    assert text.count("x") >= 1000 * 1000
    assert front_matter(result)["class"] == "hybrid"
    assert (hub.root / "outbox" / "20260704t090000z-later.ack.md").exists()
    # the daemon is still healthy: a second run answers a new input
    instigate(hub, IDS[1])
    hub.run_once()
    assert "truncated" in body_of(hub.reply(IDS[1], "result"))
    assert hub.lane("inbox") == []


# -- reply classes ------------------------------------------------------------------------------


def test_files_in_the_out_dir_make_a_deliverable_and_the_notification_is_only_the_path(
    hub: HubDir, agent: list[str]
) -> None:
    """Files written into $SLOP_OUT_DIR land in outbox/RESULT-ID/ and the result is `deliverable`."""
    hub.write_config(f"[executor]\ncommand = {toml_argv([*agent, 'deliver'])}\n")
    ident = IDS[0]
    instigate(hub, ident)

    hub.run_once()

    result = hub.reply(ident, "result")
    assert front_matter(result)["class"] == "deliverable"
    folder = hub.root / "outbox" / f"{ident}.result"
    assert (folder / "report.txt").read_text() == f"the report for {ident}\n"
    assert json.loads((folder / "sub" / "data.json").read_text()) == {"id": ident, "rows": [1, 2, 3]}
    assert sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) == [
        "report.txt",
        "sub",
        "sub/data.json",
    ]
    (text,) = notify_events(hub, ident)
    assert len(text.split()) == 1  # one path, nothing else
    assert text.startswith(f"outbox/{ident}.result")
    assert "report" not in text
    assert "wrote" not in text


def test_long_stdout_is_hybrid_and_short_stdout_is_ping(hub: HubDir, agent: list[str]) -> None:
    """2,000 characters of stdout give a `hybrid` result notified in ≤ 280 chars + path; 20 give `ping`."""
    hub.write_config(f"[executor]\ncommand = {toml_argv([*agent, 'length'])}\nmax_parallel = 2\n")
    long_id, short_id = IDS[0], IDS[1]
    instigate(hub, long_id, "Write 2000\n")
    instigate(hub, short_id, "Write 20\n")

    hub.run_once()

    long_result = hub.reply(long_id, "result")
    assert front_matter(long_result)["class"] == "hybrid"
    assert len(body_of(long_result)) >= 2000
    (text,) = notify_events(hub, long_id)
    path = f"outbox/{long_id}.result.md"
    assert path in text
    assert len(text) - len(path) <= 280
    assert body_of(long_result).strip() not in text

    short_result = hub.reply(short_id, "result")
    assert front_matter(short_result)["class"] == "ping"
    (short_text,) = notify_events(hub, short_id)
    assert body_of(short_result).strip() in short_text
    assert len(short_text) <= 280


# -- concurrency --------------------------------------------------------------------------------


def test_max_parallel_two_runs_at_most_two_at_once_and_acks_do_not_wait(
    hub: HubDir, agent: list[str], tmp_path: Path
) -> None:
    """With max_parallel = 2, four 1 s runs overlap two at a time; a handshake is acked meanwhile."""
    journal = tmp_path / "journal"
    argv = [*agent, "journal", str(journal), "1"]
    hub.write_config(f"[executor]\ncommand = {toml_argv(argv)}\ntimeout = 30\nmax_parallel = 2\n")
    for ident in IDS[:4]:
        instigate(hub, ident)
    hub.drop("hello.md", envelope_text(id="20260704t081000z-hello", type="handshake"))

    hub.run_once(timeout=15)  # four runs of 1 s, two at a time

    highest, spans = max_overlap(journal)
    assert sorted(spans) == sorted(IDS[:4])
    assert highest == 2
    for ident in IDS[:4]:
        assert body_of(hub.reply(ident, "result")) == f"done {ident}\n"
    ack = hub.root / "outbox" / "20260704t081000z-hello.ack.md"
    last_end_wall = max(float(line.split()[3]) for line in journal.read_text().splitlines() if line[0] == "e")
    assert ack.stat().st_mtime < last_end_wall


def test_max_parallel_one_never_overlaps_and_a_handshake_dropped_meanwhile_is_acked(
    hub: HubDir, agent: list[str], tmp_path: Path
) -> None:
    """With max_parallel = 1 no two runs overlap, and a handshake dropped mid-run is acked before they end."""
    journal = tmp_path / "journal"
    argv = [*agent, "journal", str(journal), "1"]
    hub.write_config(
        f"rescan_interval = 0.2\n[executor]\ncommand = {toml_argv(argv)}\ntimeout = 30\nmax_parallel = 1\n"
    )
    for ident in IDS[:4]:
        instigate(hub, ident)
    with hub.running():
        until(lambda: journal.exists() and "start" in journal.read_text())
        hub.drop("hello.md", envelope_text(id="20260704t081000z-hello", type="handshake"))
        ack = hub.root / "outbox" / "20260704t081000z-hello.ack.md"
        until(ack.exists)
        until(lambda: all((hub.root / "outbox" / f"{i}.result.md").exists() for i in IDS[:4]), timeout=15)

    highest, spans = max_overlap(journal)
    assert sorted(spans) == sorted(IDS[:4])
    assert highest == 1
    last_end_wall = max(float(line.split()[3]) for line in journal.read_text().splitlines() if line[0] == "e")
    assert ack.stat().st_mtime < last_end_wall
    assert front_matter(ack.read_text())["class"] == "silent"


# -- seats, summarizer, notifier, defaults ------------------------------------------------------


def test_an_instigate_to_a_seat_runs_the_seat_command_not_the_executor(
    hub: HubDir, agent: list[str], tmp_path: Path
) -> None:
    """`to: claude-code` with `[seats.claude-code]` runs the seat's argv; the executor never runs."""
    executor_dumps, seat_dumps = tmp_path / "executor", tmp_path / "seat"
    executor_dumps.mkdir()
    seat_dumps.mkdir()
    seat_argv = [*agent, "dump", str(seat_dumps), "the seat answered\n"]
    hub.write_config(
        f"[executor]\ncommand = {toml_argv([*agent, 'dump', str(executor_dumps), 'executor'])}\n"
        f"[seats.claude-code]\ncommand = {toml_argv(seat_argv)}\ntimeout = 30\n"
    )
    ident = IDS[0]
    instigate(hub, ident, "Refactor the parser.\n", from_="human", to="claude-code")

    hub.run_once()

    assert body_of(hub.reply(ident, "result")) == "the seat answered\n"
    record = json.loads((seat_dumps / f"{ident}.json").read_text())
    assert record["argv"] == seat_argv
    assert record["env"]["SLOP_TO"] == "claude-code"
    assert record["stdin"] == "Refactor the parser.\n"
    assert list(executor_dumps.iterdir()) == []


def test_an_instigate_to_the_watcher_with_only_a_seat_configured_is_an_error(
    hub: HubDir, agent: list[str], tmp_path: Path
) -> None:
    """A seat is not an executor: `to: watcher` with no [executor] gets an error and runs nothing."""
    seat_dumps = tmp_path / "seat"
    seat_dumps.mkdir()
    hub.write_config(f"[seats.claude-code]\ncommand = {toml_argv([*agent, 'dump', str(seat_dumps)])}\n")
    ident = IDS[0]
    instigate(hub, ident, to="watcher")

    hub.run_once()

    assert [h["type"] for h in terminal(hub, ident)] == ["error"]
    assert "executor" in body_of(hub.reply(ident, "error"))
    assert list(seat_dumps.iterdir()) == []
    assert hub.archived() == [f"{ident}.md"]


def test_a_configured_summarizer_writes_the_handoff_result(
    hub: HubDir, agent: list[str], tmp_path: Path
) -> None:
    """A handoff's result body is the summarizer's stdout, and the summarizer got the body on stdin."""
    received = tmp_path / "summarizer-stdin"
    hub.write_config(f"[summarizer]\ncommand = {toml_argv([*agent, 'summarize', str(received)])}\n")
    body = "# Parser rewrite\n\nThe tokenizer is done. The grammar is next.\n"
    ident = "20260704t072000z-handoff-parser"
    hub.drop("handoff.md", envelope_text(body, id=ident, type="handoff"))

    hub.run_once()

    result = hub.reply(ident, "result")
    assert body_of(result).strip() == f"SUMMARIZER: {len(body)} characters received."
    assert front_matter(result)["mode"] == "discuss"
    assert received.read_text() == body
    assert hub.archived() == ["handoff.md"]


def test_a_failing_summarizer_falls_back_to_the_built_in_summary(hub: HubDir, agent: list[str]) -> None:
    """When the summarizer exits non-zero the result is still written, with the built-in summary."""
    hub.write_config(f"[summarizer]\ncommand = {toml_argv([*agent, 'bad-summarizer'])}\n")
    ident = "20260704t072000z-handoff-parser"
    body = "# Parser rewrite\n\nThe tokenizer is done. The grammar is next.\n"
    hub.drop("handoff.md", envelope_text(body, id=ident, type="handoff"))

    hub.run_once()

    assert [h["type"] for h in hub.replies_to(ident)] == ["result"]
    text = body_of(hub.reply(ident, "result"))
    assert "BOGUS" not in text
    assert "Parser rewrite" in text
    assert "The tokenizer is done." in text
    assert hub.archived() == ["handoff.md"]


def test_the_notifier_gets_short_texts_never_the_whole_payload(
    hub: HubDir, agent: list[str], tmp_path: Path
) -> None:
    """The notify command receives ≤ 280 chars for an error and ≤ 280 chars + path for a long result."""
    notes = tmp_path / "notifications"
    hub.write_config(
        f"[executor]\ncommand = {toml_argv([*agent, 'length'])}\n"
        f"[seats.failer]\ncommand = {toml_argv([*agent, 'fail', '7', '200'])}\n"
        f"[notify]\ncommand = {toml_argv([*agent, 'notifier', str(notes)])}\n"
    )
    long_id, failing_id = IDS[0], IDS[1]
    instigate(hub, long_id, "Write 5000\n")
    instigate(hub, failing_id, to="failer")

    def delivered() -> list[str]:
        if not notes.exists():
            return []
        found = [chunk.strip("\n") for chunk in notes.read_text().split("<<END>>") if chunk.strip()]
        return found if len(found) >= 2 else []

    # a running daemon: the notifier runs beside the loop, so give it a loop that stays up
    with hub.running():
        received = until(delivered, timeout=15)

    long_body = body_of(hub.reply(long_id, "result"))
    assert len(long_body) >= 5000
    error_body = body_of(hub.reply(failing_id, "error"))
    assert len(error_body) > 2 * 280

    assert len(received) == 2
    error_note = next(text for text in received if failing_id in text and "result" not in text)
    assert len(error_note) <= 280
    path = f"outbox/{long_id}.result.md"
    result_note = next(text for text in received if path in text)
    assert len(result_note) - len(path) <= 280
    assert "stderr line 0000" not in notes.read_text()
    assert long_body.strip() not in notes.read_text()


def test_without_any_config_an_instigate_is_refused_and_nothing_runs(hub: HubDir, tmp_path: Path) -> None:
    """With no config file at all, an instigate gets an `error` saying no executor is configured."""
    assert not hub.config.exists()
    pwned = tmp_path / "pwned"
    ident = IDS[0]
    instigate(hub, ident, f"$(touch {pwned})\n")

    hub.run_once(config=False)

    assert [h["type"] for h in hub.replies_to(ident)] == ["error"]
    text = body_of(hub.reply(ident, "error"))
    assert "no executor" in text
    assert front_matter(hub.reply(ident, "error"))["mode"] == "execute"
    assert not pwned.exists()
    with contextlib.closing(sqlite3.connect(hub.state / "ledger.sqlite3")) as db:
        status, outcome = db.execute("SELECT status, outcome FROM inputs WHERE id = ?", (ident,)).fetchone()
    assert status == "done"
    assert outcome is None
    assert hub.archived() == [f"{ident}.md"]
