"""Hostile input through the real daemon (SPEC §1, §3; research §7–§9): it never crashes the daemon and
never touches anything outside the hub; each hostile file gets an `error` reply naming the file and the
reason, and is archived."""

from __future__ import annotations

import hashlib
import json
import os
import re
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HubDir, body_of, envelope_text, front_matter

OLD = 1_600_000_000  # 2020-09-13: times set on files outside the hub, to see them change


# -- helpers ---------------------------------------------------------------------------------


def age(path: Path | bytes) -> None:
    """Set an entry's own mtime in the past (never through a symlink), so --once reads it at once."""
    os.utime(path, (OLD, OLD), follow_symlinks=False)


def make_outside(tmp_path: Path) -> Path:
    """A directory beside the hub holding a secret, with old atime and mtime."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "secret.txt"
    secret.write_text("ssh-ed25519 AAAA the-secret-key\n", encoding="utf-8")
    os.utime(secret, (OLD - 1000, OLD))
    return outside


def snapshot(root: Path) -> dict[str, tuple[Any, ...]]:
    """Type, size, mtime and content hash (or link target) of everything under `root`; atime excluded."""
    found: dict[str, tuple[Any, ...]] = {}
    for directory, names, files in os.walk(root):
        for name in names + files:
            path = Path(directory) / name
            status = path.lstat()
            if stat.S_ISREG(status.st_mode):
                content: str = hashlib.sha256(path.read_bytes()).hexdigest()
            elif stat.S_ISLNK(status.st_mode):
                content = os.readlink(path)
            else:
                content = ""
            key = str(path.relative_to(root))
            found[key] = (stat.S_IFMT(status.st_mode), status.st_size, status.st_mtime_ns, content)
    return found


def errors_by_file(hub: HubDir) -> dict[str, tuple[dict[str, Any], str]]:
    """Every reply naming an input in `file:`, by that name; two replies for one file fail."""
    found: dict[str, tuple[dict[str, Any], str]] = {}
    for text in hub.outbox().values():
        headers = front_matter(text)
        if "file" in headers:
            assert headers["file"] not in found, f"two replies name {headers['file']}"
            found[headers["file"]] = (headers, body_of(text))
    return found


def error_for(hub: HubDir, file: str, *reason_parts: str) -> tuple[dict[str, Any], str]:
    """The one error reply for `file`; its body names the file and every part of the reason."""
    found = errors_by_file(hub)
    assert file in found, f"no reply names {file}: {sorted(found)}"
    headers, body = found[file]
    assert headers["type"] == "error"
    assert file in body
    for part in reason_parts:
        assert re.search(part, body, re.IGNORECASE), f"{part!r} not in the reply for {file}: {body!r}"
    return headers, body


def log_lines_are_json(hub: HubDir, stderr: str = "") -> list[dict[str, Any]]:
    """Every line of STATE/slopd.log (strict UTF-8) and of stderr is one JSON object; returns the log's."""
    raw = (hub.state / "slopd.log").read_bytes()
    assert b"\x1b" not in raw, "a raw escape character reached the log"
    for line in stderr.splitlines():
        assert isinstance(json.loads(line), dict), line
    records = []
    for line in raw.decode("utf-8").splitlines():
        record = json.loads(line)
        assert isinstance(record, dict), line
        records.append(record)
    return records


def bind_socket(path: Path) -> None:
    """Leave a Unix socket file at `path` (through /proc when the path is too long for sun_path)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as server:
        if len(os.fsencode(path)) < 100:
            server.bind(str(path))
        else:
            fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
            try:
                server.bind(f"/proc/self/fd/{fd}/{path.name}")
            finally:
                os.close(fd)
    assert stat.S_ISSOCK(path.lstat().st_mode)


def drop_bytes(hub: HubDir, name: bytes, data: bytes) -> bytes:
    """Create `inbox/NAME` from a bytes name (it may not be valid UTF-8)."""
    path = os.fsencode(hub.root / "inbox") + b"/" + name
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    age(path)
    return path


def front(text: str, body: str = "Body.\n") -> bytes:
    return f"---\n{text}\n---\n{body}".encode()


def archived_entry(hub: HubDir, name: str) -> Path:
    found = [day / name for day in (hub.root / "archive").iterdir() if name in os.listdir(day)]
    assert len(found) == 1, f"{name} archived {len(found)} times"
    return found[0]


# -- links and special files -----------------------------------------------------------------


def test_symlink_to_a_secret_is_refused_and_the_secret_never_touched(hub: HubDir, tmp_path: Path) -> None:
    """`x.md` → a file outside the hub: an error about the link; the target is never read or moved."""
    outside = make_outside(tmp_path)
    secret = outside / "secret.txt"
    before = secret.stat()
    link = hub.root / "inbox" / "x.md"
    os.symlink(secret, link)
    age(link)
    hub.run_once()

    after = secret.stat()
    assert (after.st_mtime_ns, after.st_atime_ns, after.st_size) == (
        before.st_mtime_ns,
        before.st_atime_ns,
        before.st_size,
    ), "the secret was read or written"
    assert secret.read_text(encoding="utf-8") == "ssh-ed25519 AAAA the-secret-key\n"
    headers, body = error_for(hub, "inbox/x.md", "symbolic link")
    assert headers["in_reply_to"] is None
    assert "the-secret-key" not in body
    assert not any("the-secret-key" in text for text in hub.outbox().values())
    assert hub.lane("inbox") == []
    archived = archived_entry(hub, "x.md")
    assert archived.is_symlink(), "the link itself is archived, not its target"
    assert os.readlink(archived) == str(secret)
    assert "the-secret-key" not in (hub.state / "slopd.log").read_text(encoding="utf-8")


def test_hardlinked_file_is_refused_and_its_other_link_untouched(hub: HubDir, tmp_path: Path) -> None:
    """A lane file with two links gets an error; the other link keeps its content and mtime."""
    outside = make_outside(tmp_path)
    other = outside / "other.md"
    other.write_text(envelope_text(id="hl1", type="handshake"), encoding="utf-8")
    age(other)
    before = other.read_bytes(), other.stat().st_mtime_ns
    inside = hub.root / "inbox" / "h.md"
    os.link(other, inside)
    assert inside.stat().st_nlink == 2
    hub.run_once()

    error_for(hub, "inbox/h.md", "hard link")
    assert not hub.replies_to("hl1"), "the hardlinked envelope must not be read and answered"
    assert (other.read_bytes(), other.stat().st_mtime_ns) == before
    assert hub.lane("inbox") == []
    archived_entry(hub, "h.md")


def test_special_files_and_bad_links_are_refused_without_hanging(hub: HubDir, tmp_path: Path) -> None:
    """Symlinks to /dev/zero and to nowhere, a FIFO, a directory and a socket named *.md each get an error."""
    outside = make_outside(tmp_path)
    before = snapshot(outside)
    inbox = hub.root / "inbox"
    os.symlink("/dev/zero", inbox / "zero.md")
    os.symlink(tmp_path / "nowhere" / "missing.md", inbox / "dangling.md")
    os.mkfifo(inbox / "fifo.md")
    (inbox / "dir.md").mkdir()
    (inbox / "dir.md" / "inner.md").write_text(envelope_text(id="inner1", type="handshake"), encoding="utf-8")
    bind_socket(inbox / "sock.md")
    for name in ("zero.md", "dangling.md", "fifo.md", "dir.md", "sock.md"):
        age(inbox / name)
    hub.run_once(timeout=30)

    error_for(hub, "inbox/zero.md", "symbolic link")
    error_for(hub, "inbox/dangling.md", "symbolic link")
    error_for(hub, "inbox/fifo.md", "FIFO")
    error_for(hub, "inbox/dir.md", "directory")
    error_for(hub, "inbox/sock.md", "socket")
    assert len(hub.outbox()) == 5
    assert not hub.replies_to("inner1"), "nothing inside a directory named *.md is read"
    assert hub.lane("inbox") == []
    assert stat.S_ISFIFO(archived_entry(hub, "fifo.md").lstat().st_mode)
    assert archived_entry(hub, "dir.md").is_dir()
    assert stat.S_ISSOCK(archived_entry(hub, "sock.md").lstat().st_mode)
    assert archived_entry(hub, "zero.md").is_symlink()
    assert archived_entry(hub, "dangling.md").is_symlink()
    assert snapshot(outside) == before


# -- hostile bytes and names -----------------------------------------------------------------


def test_undecodable_content_and_nul_bytes_get_errors_naming_the_offset(hub: HubDir) -> None:
    """Non-UTF-8 content gets an error naming the byte offset, a NUL byte one naming the NUL; archived."""
    latin = envelope_text("Caf\xe9 cr\xe8me.\n", id="latin1").encode("latin-1")
    offset = latin.index(b"\xe9")
    hub.drop("latin.md", latin)
    hub.drop("nul.md", envelope_text("Before\x00after.\n", id="nul1"))
    result = hub.run_once()

    error_for(hub, "inbox/latin.md", "UTF-8", rf"\b{offset}\b")
    error_for(hub, "inbox/nul.md", "NUL")
    assert len(hub.outbox()) == 2
    log_lines_are_json(hub, result.stderr)
    assert hub.lane("inbox") == []
    assert archived_entry(hub, "latin.md").read_bytes() == latin


def test_undecodable_file_name_gets_an_escaped_error_and_is_archived(hub: HubDir) -> None:
    """A name with invalid UTF-8 bytes gets one error whose `file:` is escaped ASCII; the log stays JSON."""
    bad_name = drop_bytes(hub, b"bad-\xff\xfe.md", envelope_text(id="badname1", type="handshake").encode())
    result = hub.run_once()

    records = log_lines_are_json(hub, result.stderr)
    failed = [record for record in records if record.get("event") == "envelope.failed"]
    assert not failed, f"handling the file raised: {failed[0].get('exception', '')[-300:]}"
    named = [file for file in errors_by_file(hub) if file.startswith("inbox/bad-")]
    assert len(named) == 1, f"the undecodable name got no reply: {sorted(errors_by_file(hub))}"
    file = named[0]
    assert file.isascii(), f"the file name is not escaped: {file!r}"
    assert file.isprintable()
    headers, _ = error_for(hub, file, "UTF-8")
    assert headers["in_reply_to"] is None
    assert not hub.replies_to("badname1"), "an envelope with a bad name is not answered as valid"
    assert len(hub.outbox()) == 1
    assert any(
        record.get("event") == "envelope.invalid" and "bad-" in str(record.get("file")) for record in records
    )
    assert hub.lane("inbox") == []
    day = next((hub.root / "archive").iterdir())
    assert os.path.basename(bad_name) in os.listdir(os.fsencode(day))


def test_path_traversal_ids_and_list_front_matter_get_errors(hub: HubDir, tmp_path: Path) -> None:
    """Ids with `/` or `..` and list front matter are rejected; nothing is written outside outbox/."""
    outside = make_outside(tmp_path)
    before = snapshot(outside)
    hub.drop("slash.md", envelope_text(id="../../outside/evil"))
    hub.drop("dots.md", envelope_text(id="a..b"))
    hub.drop("list.md", front("- protocol: slop.v1\n- id: list1\n- type: handshake"))
    hub.run_once()

    for name in ("slash.md", "dots.md"):
        headers, _ = error_for(hub, f"inbox/{name}", "id")
        assert headers["in_reply_to"] is None
    error_for(hub, "inbox/list.md", "mapping")
    assert len(hub.outbox()) == 3
    assert all(path.is_file() for path in (hub.root / "outbox").iterdir()), "a reply made a subdirectory"
    assert snapshot(outside) == before
    assert not list(tmp_path.rglob("*evil*"))
    assert sorted(hub.archived()) == ["dots.md", "list.md", "slash.md"]


def test_deep_nesting_is_rejected_without_crashing(hub: HubDir) -> None:
    """60 KB of `[` and 50,000-deep nesting (YAML and JSON) inside 1 MiB get errors; the process exits 0."""
    hub.drop("brackets.md", front("x: " + "[" * 60_000))
    hub.drop("braces.md", front("protocol: slop.v1\nx: " + "{a: " * 50_000))
    hub.drop("deep.json", '{"id": "deep1", "x": ' + "[" * 50_000 + "]" * 50_000 + "}")
    hub.run_once()

    error_for(hub, "inbox/brackets.md", "nest")
    error_for(hub, "inbox/braces.md")
    error_for(hub, "inbox/deep.json", "nest")
    assert len(hub.outbox()) == 3
    assert hub.lane("inbox") == []
    assert sorted(hub.archived()) == ["braces.md", "brackets.md", "deep.json"]


def test_billion_laughs_and_python_tags_are_rejected(hub: HubDir, tmp_path: Path) -> None:
    """YAML aliases (billion laughs) and a `!!python/object/apply` tag get errors; the tag never runs."""
    laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 9):
        previous, name = chr(ord("a") + level - 1), chr(ord("a") + level)
        laughs.append(f"{name}: &{name} [{','.join(['*' + previous] * 9)}]")
    pwned = tmp_path / f"pwned-{os.getpid()}"
    hub.drop("laughs.md", front("protocol: slop.v1\nid: laughs1\n" + "\n".join(laughs)))
    hub.drop(
        "pwn.md", front(f"protocol: slop.v1\nid: pwn1\nx: !!python/object/apply:os.system ['touch {pwned}']")
    )
    hub.run_once()

    error_for(hub, "inbox/laughs.md", "alias|anchor")
    error_for(hub, "inbox/pwn.md", "tag")
    assert not pwned.exists(), "the YAML tag was executed"
    assert len(hub.outbox()) == 2
    assert sorted(hub.archived()) == ["laughs.md", "pwn.md"]
    for line in (hub.state / "slopd.log").read_text(encoding="utf-8").splitlines():
        assert len(line) < 4096, f"an unbounded log line: {line[:200]}…"


def test_huge_sparse_files_are_refused_by_size(hub: HubDir) -> None:
    """A 2 GB and a 1 TB sparse file get an error saying they are over the size limit."""
    for name, size in (("two-gb.md", 2 * 1024**3), ("one-tb.md", 1024**4)):
        path = hub.root / "inbox" / name
        with path.open("wb") as handle:
            handle.write(b"---\n")
            handle.truncate(size)
        age(path)
    hub.run_once(timeout=30)

    error_for(hub, "inbox/two-gb.md", "over the .*limit", str(2 * 1024**3))
    error_for(hub, "inbox/one-tb.md", "over the .*limit", str(1024**4))
    assert hub.lane("inbox") == []
    assert archived_entry(hub, "one-tb.md").stat().st_size == 1024**4


# -- lanes replaced by symlinks --------------------------------------------------------------


def test_inbox_symlinked_outside_the_hub_is_never_processed(hub: HubDir, tmp_path: Path) -> None:
    """`inbox` → a directory outside the hub: nothing there is read, answered or moved; the run exits 0."""
    outside = make_outside(tmp_path)
    (outside / "e.md").write_text(envelope_text(id="out1", type="handshake"), encoding="utf-8")
    age(outside / "e.md")
    before = snapshot(outside)
    (hub.root / "inbox").rmdir()
    (hub.root / "inbox").symlink_to(outside, target_is_directory=True)

    result = hub.slopd("run", "--hub", str(hub.root), "--state", str(hub.state), "--once")

    assert result.returncode == 0, result.stderr
    assert snapshot(outside) == before
    assert hub.outbox() == {}
    assert hub.archived() == []


@pytest.mark.parametrize("lane", ["outbox", "archive", "notes"])
def test_output_lane_symlinked_outside_is_never_written_and_the_input_kept(
    hub: HubDir, tmp_path: Path, lane: str
) -> None:
    """A lane slopd writes → a dir outside: nothing written there, the input kept, answered once restored."""
    outside = make_outside(tmp_path)
    before = snapshot(outside)
    text = envelope_text("# Keep me\n", id="lane1", type="note")
    hub.drop("note.md", text)
    (hub.root / lane).rmdir()
    (hub.root / lane).symlink_to(outside, target_is_directory=True)

    hub.run_once()

    assert snapshot(outside) == before
    assert (hub.root / "inbox" / "note.md").read_text(encoding="utf-8") == text, "the input was lost"

    (hub.root / lane).unlink()
    (hub.root / lane).mkdir()
    hub.run_once()

    assert list(hub.outbox()) == ["lane1.ack.md"]
    assert hub.lane("inbox") == []
    assert hub.archived() == ["note.md"]
    assert "Keep me" in (hub.root / "notes" / "INDEX.md").read_text(encoding="utf-8")
    assert snapshot(outside) == before


def test_inbox_swapped_for_a_symlink_while_running_is_never_processed(hub: HubDir, tmp_path: Path) -> None:
    """A running daemon whose inbox becomes a symlink leaves the outside directory alone and keeps running."""
    hub.write_config("rescan_interval = 0.1\nsettle = 0\n")
    outside = make_outside(tmp_path)
    (outside / "e.md").write_text(envelope_text(id="out1", type="handshake"), encoding="utf-8")
    age(outside / "e.md")
    before = snapshot(outside)
    with hub.running() as daemon:
        hub.drop("first.md", envelope_text(id="first1", type="handshake"))
        daemon.until((hub.root / "outbox" / "first1.ack.md").exists)
        (hub.root / "inbox").rename(hub.root / "inbox.old")
        (hub.root / "inbox").symlink_to(outside, target_is_directory=True)
        seen = len(hub.log_records())
        daemon.until(lambda: any(r.get("event") == "lane.unreadable" for r in hub.log_records()[seen:]))
        hub.drop("after.md", envelope_text(id="after1", type="handshake"), lane="authorized")
        daemon.until((hub.root / "outbox" / "after1.error.md").exists)
        assert daemon.alive(), "the daemon died"
    assert snapshot(outside) == before
    assert not hub.replies_to("out1")


# -- log injection ---------------------------------------------------------------------------


def test_newlines_and_escapes_cannot_forge_or_split_log_lines(hub: HubDir) -> None:
    """Newlines and ANSI escapes in `from`, a body or a file name stay inside one JSON object."""
    forged = '\n{"event": "forged", "level": "critical"}\n'
    hub.drop(
        "inj.md",
        front(
            'protocol: slop.v1\nid: inj1\ntype: query\nfrom: "evil\\n\\e[31mred"\nto: watcher\n'
            "created_at: 2026-07-04T07:15:53Z",
            body=f"\x1b[31mred{forged}",
        ),
    )
    hub.drop(
        "res.md",
        envelope_text(f"\x1b[31mDone{forged}\x1b[0m", id="inj2", type="result", in_reply_to="q-older"),
    )
    hub.drop("inj\n\x1b[31m.md", envelope_text(id="inj3", type="handshake"))
    result = hub.run_once()

    records = log_lines_are_json(hub, result.stderr)
    assert not any(record.get("event") == "forged" for record in records)
    invalid = [r for r in records if r.get("event") == "envelope.invalid" and r.get("id") == "inj1"]
    assert len(invalid) == 1
    assert any(str(reason).startswith("from:") for reason in invalid[0]["reasons"]), invalid[0]
    headers, _ = error_for(hub, "inbox/inj.md", "from")
    assert headers["in_reply_to"] == "inj1"
    assert headers["to"] == "human", "an invalid `from` is never used as a recipient"
    assert [r for r in records if r.get("event") == "notify" and r.get("id") == "inj2"]
    named = [file for file in errors_by_file(hub) if file.startswith("inbox/inj") and file != "inbox/inj.md"]
    assert len(named) == 1
    assert "\n" not in named[0]
    assert "\x1b" not in named[0]
    for text in hub.outbox().values():
        assert "\x1b" not in front_matter(text).get("file", "")
    assert hub.lane("inbox") == []


# -- everything at once ----------------------------------------------------------------------


def test_every_hostile_file_in_one_run_is_answered_once_and_nothing_outside_changes(
    hub: HubDir, tmp_path: Path
) -> None:
    """All hostile inputs dropped together: exit 0, one error each, all archived, the outside untouched."""
    outside = make_outside(tmp_path)
    secret = outside / "secret.txt"
    other = outside / "other.md"
    other.write_text(envelope_text(id="all-hl", type="handshake"), encoding="utf-8")
    age(other)
    (outside / "e.md").write_text(envelope_text(id="all-out", type="handshake"), encoding="utf-8")
    age(outside / "e.md")
    pwned = outside / "pwned"
    inbox = hub.root / "inbox"
    expected = {
        "inbox/secret.md": "symbolic link",
        "inbox/zero.md": "symbolic link",
        "inbox/dangling.md": "symbolic link",
        "inbox/hard.md": "hard link",
        "inbox/fifo.md": "FIFO",
        "inbox/dir.md": "directory",
        "inbox/sock.md": "socket",
        "inbox/latin.md": "UTF-8",
        "inbox/nul.md": "NUL",
        "inbox/slash.md": "id",
        "inbox/dots.md": "id",
        "inbox/list.md": "mapping",
        "inbox/brackets.md": "nest",
        "inbox/braces.md": "",
        "inbox/deep.json": "nest",
        "inbox/laughs.md": "alias|anchor",
        "inbox/pwn.md": "tag",
        "inbox/two-gb.md": "limit",
        "inbox/one-tb.md": "limit",
        "inbox/inj.md": "from",
    }
    os.symlink(secret, inbox / "secret.md")
    os.symlink("/dev/zero", inbox / "zero.md")
    os.symlink(tmp_path / "nowhere.md", inbox / "dangling.md")
    os.link(other, inbox / "hard.md")
    os.mkfifo(inbox / "fifo.md")
    (inbox / "dir.md").mkdir()
    bind_socket(inbox / "sock.md")
    for name in ("secret.md", "zero.md", "dangling.md", "fifo.md", "dir.md", "sock.md"):
        age(inbox / name)
    hub.drop("latin.md", envelope_text("Caf\xe9\n", id="all-latin").encode("latin-1"))
    hub.drop("nul.md", envelope_text("a\x00b\n", id="all-nul"))
    hub.drop("slash.md", envelope_text(id="a/b"))
    hub.drop("dots.md", envelope_text(id="a..b"))
    hub.drop("list.md", front("- protocol: slop.v1\n- id: all-list"))
    hub.drop("brackets.md", front("x: " + "[" * 60_000))
    hub.drop("braces.md", front("x: " + "{a: " * 50_000))
    hub.drop("deep.json", '{"x": ' + "[" * 50_000 + "]" * 50_000 + "}")
    laughs = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, 9):
        previous, name = chr(ord("a") + level - 1), chr(ord("a") + level)
        laughs.append(f"{name}: &{name} [{','.join(['*' + previous] * 9)}]")
    hub.drop("laughs.md", front("\n".join(laughs)))
    hub.drop("pwn.md", front(f"x: !!python/object/apply:os.system ['touch {pwned}']"))
    for name, size in (("two-gb.md", 2 * 1024**3), ("one-tb.md", 1024**4)):
        with (inbox / name).open("wb") as handle:
            handle.truncate(size)
        age(inbox / name)
    hub.drop("inj.md", envelope_text(id="all-inj", from_='"evil\\n\\e[31m"'))
    bad_name = drop_bytes(hub, b"bad-\xff.md", envelope_text(id="all-bad", type="handshake").encode())
    before = snapshot(outside)
    secret_times = secret.stat().st_atime_ns, secret.stat().st_mtime_ns

    result = hub.run_once(timeout=60)

    assert (secret.stat().st_atime_ns, secret.stat().st_mtime_ns) == secret_times
    assert snapshot(outside) == before
    assert not pwned.exists()
    log_lines_are_json(hub, result.stderr)
    for file, reason in expected.items():
        error_for(hub, file, reason)
    replies = errors_by_file(hub)
    extra = sorted(set(replies) - set(expected))
    assert len(extra) == 1, f"the undecodable name got no reply: {extra}"
    assert extra[0].isascii()
    assert extra[0].startswith("inbox/bad-")
    assert len(hub.outbox()) == len(expected) + 1, "one reply per hostile file, and nothing else"
    assert hub.lane("inbox") == []
    assert len(hub.archived()) == len(expected) + 1
    assert os.path.basename(bad_name) in os.listdir(os.fsencode(next((hub.root / "archive").iterdir())))
