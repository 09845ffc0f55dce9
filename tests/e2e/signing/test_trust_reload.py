"""Trusted files re-read without a signal (SPEC §14, issue 24 point 4), against a long-running daemon.

The allowed-signers file: a key added is trusted by the next order, a broken file trusts nobody, a
key removed is refused again — all without SIGHUP, and `slopd verify` agrees with the daemon
throughout. The tokens file: a token revoked by `slopd token revoke` is refused on its
very next request, and a revocation is logged within a second even with no request.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import httpx2
import pytest

from slopd.shell import log
from slopd.shell.reloading import Reloading, version
from tests.conftest import HubDir, RunningDaemon, body_of, toml_argv, toml_string
from tests.transport.http_rig import bearer, served, with_tokens

DEADLINE = 20.0


def keygen(hub: HubDir, path: Path, principal: str) -> str:
    """A new key pair by `slopd keygen`; its allowed_signers line."""
    made = hub.slopd("keygen", str(path), "--principal", principal)
    assert made.returncode == 0, made.stderr
    return made.stdout


def order(hub: HubDir, tmp: Path, ident: str, key: Path, principal: str) -> Path:
    """A `hello` order from `principal`, signed with `key` by `slopd sign`, outside the hub."""
    path = tmp / "orders" / f"{ident}.md"
    path.parent.mkdir(exist_ok=True)
    created = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    path.write_text(
        f"---\nprotocol: slop.v1\nid: {ident}\ntype: instigate\nfrom: {principal}\nto: watcher\n"
        f"in_reply_to: null\ncreated_at: {created}\nauth: signed:{ident}.md.sig\naction: hello\n"
        "---\nSay hello.\n",
        encoding="utf-8",
    )
    signed = hub.slopd("sign", "--key", str(key), str(path))
    assert signed.returncode == 0, signed.stderr
    return path


def drop_order(hub: HubDir, path: Path) -> None:
    hub.drop(f"{path.name}.sig", Path(f"{path}.sig").read_bytes(), lane="authorized")
    hub.drop(path.name, path.read_bytes(), lane="authorized")


def answer(daemon: RunningDaemon, hub: HubDir, ident: str) -> tuple[str, str]:
    """The terminal reply to `ident`: its type and body."""
    outbox = hub.root / "outbox"

    def found() -> tuple[str, str] | None:
        for kind in ("result", "error"):
            path = outbox / f"{ident}.{kind}.md"
            if path.exists():
                return kind, body_of(path.read_text(encoding="utf-8"))
        return None

    answered: tuple[str, str] = daemon.until(found, timeout=DEADLINE)
    return answered


def verify(hub: HubDir, signers: Path, path: Path) -> int:
    return hub.slopd("verify", "--allowed-signers", str(signers), str(path)).returncode


def test_allowed_signers_edits_take_effect_without_a_signal(hub: HubDir, tmp_path: Path) -> None:
    """A key added runs its order with no SIGHUP; a broken file trusts nobody (fails closed, logged:
    an order then is refused, saying why); the key removed again is refused; `slopd verify` and the
    daemon agree at every step."""
    keys = tmp_path / "keys"
    keys.mkdir()
    alice_line = keygen(hub, keys / "alice", "alice")
    bob_line = keygen(hub, keys / "bob", "bob")
    signers = tmp_path / "trust" / "allowed_signers"
    signers.parent.mkdir()
    signers.write_text(alice_line, encoding="utf-8")
    hub.write_config(
        f"settle = 0.05\n[actions.hello]\ncommand = {toml_argv(['/bin/echo', 'hello ran'])}\n"
        f"[auth]\nallowed_signers = {toml_string(signers)}\nsig_grace = 5\n"
    )
    with hub.running() as daemon:
        before = order(hub, tmp_path, "20260704t090000z-bob-before", keys / "bob", "bob")
        drop_order(hub, before)
        kind, body = answer(daemon, hub, before.stem)
        assert kind == "error", body
        assert "allowed_signers" in body
        assert verify(hub, signers, before) == 1

        signers.write_text(alice_line + bob_line, encoding="utf-8")  # in place, no signal
        added = order(hub, tmp_path, "20260704t090100z-bob-added", keys / "bob", "bob")
        assert verify(hub, signers, added) == 0
        drop_order(hub, added)
        assert answer(daemon, hub, added.stem) == ("result", "hello ran\n")
        (reloaded,) = hub.events("trust.reloaded")
        assert (reloaded["path"], reloaded["signers"]) == (str(signers), 2)

        signers.write_text(alice_line + bob_line + "bob@example.com\n", encoding="utf-8")  # no key
        daemon.until(lambda: hub.events("trust.reload_failed"), timeout=DEADLINE)  # seen without an order
        closed = order(hub, tmp_path, "20260704t090200z-bob-closed", keys / "bob", "bob")
        assert verify(hub, signers, closed) != 0  # slopd verify cannot use the file either
        drop_order(hub, closed)
        kind, body = answer(daemon, hub, closed.stem)
        assert kind == "error", body
        assert "the allowed_signers file cannot be used" in body
        assert "no signer is trusted" in body
        (failed,) = hub.events("trust.reload_failed")
        assert "missing key" in failed["reason"]
        assert failed["level"] == "error"

        replaced = signers.with_name("allowed_signers.new")
        replaced.write_text(alice_line, encoding="utf-8")
        replaced.replace(signers)  # atomic, as editors save: a new inode
        revoked = order(hub, tmp_path, "20260704t090300z-bob-revoked", keys / "bob", "bob")
        assert verify(hub, signers, revoked) == 1
        drop_order(hub, revoked)
        kind, body = answer(daemon, hub, revoked.stem)
        assert kind == "error", body
        assert "allowed_signers" in body
        assert [event["signers"] for event in hub.events("trust.reloaded")] == [2, 1]
    assert hub.events("config.reloaded") == []  # no SIGHUP was ever sent


@pytest.mark.slow  # a real daemon serving HTTP, like the other served tests
def test_a_revoked_token_is_refused_on_its_next_request_and_logged_without_one(hub: HubDir) -> None:
    """`slopd token revoke` while the daemon serves: bob's next request is a 401 at once; carol's
    revocation is logged (`tokens.reloaded`) before she asks again; a broken file opens no seat (fails
    closed) until it is mended, and then alice is back."""
    tokens = with_tokens(hub, ("alice", "bob", "carol"))
    path = hub.config.parent / "tokens"
    with served(hub) as (daemon, url), httpx2.Client(base_url=url, timeout=30) as client:
        for seat in ("alice", "bob", "carol"):
            assert client.get("/v1/replies", headers=bearer(tokens[seat])).status_code == 200

        assert hub.slopd("token", "revoke", "--tokens", str(path), "bob").returncode == 0
        assert client.get("/v1/replies", headers=bearer(tokens["bob"])).status_code == 401

        assert hub.slopd("token", "revoke", "--tokens", str(path), "carol").returncode == 0
        daemon.until(lambda: [e for e in hub.events("tokens.reloaded") if e["seats"] == ["alice"]])
        assert client.get("/v1/replies", headers=bearer(tokens["carol"])).status_code == 401

        good = path.read_text(encoding="utf-8")
        path.write_text(good + "not a token line\n", encoding="utf-8")
        daemon.until(lambda: hub.events("tokens.reload_failed"))
        assert client.get("/v1/replies", headers=bearer(tokens["alice"])).status_code == 401

        path.write_text(good, encoding="utf-8")
        daemon.until(lambda: len(hub.events("tokens.reloaded")) == 3)
        assert client.get("/v1/replies", headers=bearer(tokens["alice"])).status_code == 200
    reloads = [event["seats"] for event in hub.events("tokens.reloaded")]
    assert reloads == [["alice", "carol"], ["alice"], ["alice"]]
    assert hub.events("config.reloaded") == []


# -- the pure parts of `shell.reloading` ---------------------------------------------------------


def _same_size_new_mtime(path: Path) -> None:
    path.write_text("two")
    os.utime(path, (1, 1))  # an mtime of its own, as a later save has


def _new_size(path: Path) -> None:
    path.write_text("longer text")


def _atomic_replace_same_bytes(path: Path) -> None:
    new = path.with_name("new")
    new.write_text("one")
    new.replace(path)


@pytest.mark.parametrize("change", [_same_size_new_mtime, _new_size, _atomic_replace_same_bytes])
def test_any_new_version_of_the_file_is_reloaded(tmp_path: Path, change: Callable[[Path], None]) -> None:
    """An edit in place, a resize or an atomic replace with identical bytes each count as a change."""
    path = tmp_path / "file"
    path.write_text("one")
    seen = version(path)
    loads: list[str] = []

    def load() -> str:
        loads.append(path.read_text())
        return loads[-1]

    with log.capture() as events:
        watched = Reloading(path, load, "one", seen, log.get(), "thing")
        assert watched.check() == "one"
        assert loads == []  # the same version: not read again
        change(path)
        assert watched.check() == path.read_text()
    assert len(loads) == 1
    assert [event["event"] for event in events] == ["thing.reloaded"]


def test_a_bad_version_keeps_the_last_good_value_and_is_reported_once(tmp_path: Path) -> None:
    """Without `closed`, a version that fails to load keeps the value and logs one error, however often
    it is looked at; a missing file too; the next good version is taken."""
    path = tmp_path / "file"
    path.write_text("good")

    def load() -> str:
        text = path.read_text()
        if "bad" in text:
            raise ValueError("line 1: bad")
        return text

    with log.capture() as events:
        watched = Reloading(path, load, "good", version(path), log.get(), "thing", every=0.0)
        path.write_text("bad!")
        assert [watched.check() for _ in range(3)] == ["good"] * 3
        path.unlink()
        assert [watched.poll(now) for now in (1.0, 2.0)] == [1.0, 2.0]
        assert watched.value == "good"
        path.write_text("better")
        assert watched.check() == "better"
    assert [(event["event"], event.get("reason")) for event in events] == [
        ("thing.reload_failed", "line 1: bad"),
        ("thing.reload_failed", "it cannot be read (missing, or no access)"),
        ("thing.reloaded", None),
    ]


def test_with_closed_a_bad_or_missing_version_fails_closed_until_mended(tmp_path: Path) -> None:
    """The trust root's way (rule 3): a bad or missing file gives `closed(reason)` — never the last
    good value — reported once per version; the next good version is taken again."""
    path = tmp_path / "file"
    path.write_text("good")

    def load() -> str:
        text = path.read_text()
        if "bad" in text:
            raise ValueError("line 1: bad")
        return text

    with log.capture() as events:
        watched = Reloading(
            path,
            load,
            "good",
            version(path),
            log.get(),
            "trust",
            every=0.0,
            closed=lambda why: f"NOBODY ({why})",
        )
        path.write_text("bad!")
        assert [watched.check() for _ in range(2)] == [f"NOBODY ({path}: line 1: bad)"] * 2
        path.unlink()
        assert watched.check() == f"NOBODY ({path}: it cannot be read (missing, or no access))"
        path.write_text("mended")
        assert watched.check() == "mended"
    assert [(event["event"], event.get("kept", "")[:7]) for event in events] == [
        ("trust.reload_failed", "nothing"),
        ("trust.reload_failed", "nothing"),
        ("trust.reloaded", ""),
    ]


def test_poll_looks_at_most_once_per_interval(tmp_path: Path) -> None:
    """`poll` stats the file only when `every` seconds have passed: a change is seen at the next look."""
    path = tmp_path / "file"
    path.write_text("one")
    watched = Reloading(path, path.read_text, "one", version(path), log.get(), "thing", every=1.0)
    assert watched.poll(10.0) == 11.0
    path.write_text("three")
    with log.capture():
        assert watched.poll(10.5) == 11.0
        assert watched.value == "one"
        assert watched.poll(11.0) == 12.0
    assert watched.value == "three"
