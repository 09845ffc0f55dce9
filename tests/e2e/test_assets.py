"""Attachments (SPEC §3, SLOP §6 priority 3): `assets/NAME sha256:HEX`, black-box.

An envelope too large to inline points at a file in `assets/` by its SHA-256. slopd waits for
an asset that has not arrived (as for a late signature), refuses a missing or different one
naming it, and hands executions a hashed copy (`SLOP_ASSETS`). In `authorized/` the hashes are
signed bytes, so a human's approval covers the attachment: a tarball swapped after signing is
refused and nothing runs.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import pytest

from slopd.core import assets
from slopd.core.envelope import EnvelopeError
from slopd.core.validation import parse
from tests.conftest import HubDir, envelope_text, front_matter, toml_argv
from tests.e2e.signing.test_orders import ALICE, Lab, fixture_lab, keys, now_stamp  # noqa: F401  # fixtures

RECORD = r"""
import os, sys
from pathlib import Path
paths = [line for line in os.environ["SLOP_ASSETS"].splitlines() if line]
print("assets:", " ".join(Path(path).read_text().strip() for path in paths))
Path(sys.argv[1]).write_text(os.environ["SLOP_ASSETS"])
"""


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def with_assets(text: str, *references: str) -> str:
    """`text` (an envelope) with an `assets:` list added to its front matter."""
    listed = "".join(f"  - {reference}\n" for reference in references)
    return text.replace("\n---\n", f"\nassets:\n{listed}---\n", 1)


def executor_hub(hub: HubDir, tmp_path: Path, *, grace: float = 60) -> Path:
    script = tmp_path / "record.py"
    script.write_text(RECORD)
    seen = tmp_path / "seen.txt"
    hub.write_config(
        f"settle = 0.1\nrescan_interval = 0.5\n[auth]\nsig_grace = {grace}\n"
        f"[executor]\ncommand = {toml_argv(['python3', str(script), str(seen)])}\n"
    )
    return seen


# --- the references (pure) ---


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ("assets/a.tar sha256:" + "0" * 64, "must be a list"),
        (["assets/a.tar"], "is not 'assets/NAME sha256:HEX'"),
        (["assets/../a.tar sha256:" + "0" * 64], "is not 'assets/NAME sha256:HEX'"),
        (["assets/sub/a.tar sha256:" + "0" * 64], "is not 'assets/NAME sha256:HEX'"),
        (["assets/.hidden sha256:" + "0" * 64], "is not 'assets/NAME sha256:HEX'"),
        (["assets/a.tar sha256:" + "0" * 63], "is not 'assets/NAME sha256:HEX'"),
        (["assets/a.tar md5:" + "0" * 32], "is not 'assets/NAME sha256:HEX'"),
        (["assets/a.tar sha256:" + "0" * 64] * 2, "a.tar is listed twice"),
        ([7], "is not 'assets/NAME sha256:HEX'"),
        (
            ["assets/a sha256:" + "0" * 64] * 0 + [f"assets/a{n} sha256:" + "0" * 64 for n in range(65)],
            "at most",
        ),
    ],
)
def test_a_bad_assets_value_is_refused_with_its_reason(value: object, reason: str) -> None:
    """Each malformed `assets` value gives a reason naming the key (the envelope is then invalid)."""
    _found, reasons = assets.parse(value)
    assert reasons
    assert all(text.startswith("assets: ") for text in reasons)
    assert reason in reasons[0]


def test_references_parse_keep_order_and_lower_the_hex() -> None:
    """Valid references keep their order; upper-case hex is read as the same digest."""
    found, reasons = assets.parse(["assets/b.tar sha256:" + "AB" * 32, "assets/a (1).png sha256:" + "0" * 64])
    assert reasons == []
    assert [(asset.name, asset.sha256) for asset in found] == [("b.tar", "ab" * 32), ("a (1).png", "0" * 64)]


def test_an_envelope_with_assets_round_trips_and_a_bad_one_names_every_reason() -> None:
    """The envelope keeps its references (the JSON form given to actions lists them); a bad
    reference is one more reason beside the others."""
    text = with_assets(envelope_text(id="a-1", type="instigate"), "assets/a.tar sha256:" + "0" * 64)
    envelope = parse(text.encode(), name="a.md")
    assert envelope.headers()["assets"] == ["assets/a.tar sha256:" + "0" * 64]
    with pytest.raises(EnvelopeError) as caught:
        parse(with_assets(envelope_text(id="a-1", type="bogus"), "assets/a.tar").encode(), name="a.md")
    assert sorted(reason.split(":")[0] for reason in caught.value.reasons) == ["assets", "type"]


# --- the daemon ---


def send_with_asset(hub: HubDir, source: Path) -> subprocess.CompletedProcess[str]:
    """`slopd send --asset SOURCE` of an empty instigate to `watcher`."""
    argv = ["send", "--hub", str(hub.root), "--type", "instigate", "--from", "ci", "--to", "watcher"]
    return hub.slopd(*argv, "--asset", str(source), stdin="")


def test_send_asset_copies_the_file_and_the_execution_gets_a_verified_copy(
    hub: HubDir, tmp_path: Path
) -> None:
    """`slopd send --asset` puts the file in `assets/` and its digest in the envelope; the
    executor's `SLOP_ASSETS` lists a copy inside its run folder with the same bytes."""
    seen = executor_hub(hub, tmp_path)
    source = tmp_path / "build.txt"
    source.write_text("build 42\n")
    sent = send_with_asset(hub, source)
    assert sent.returncode == 0, sent.stderr
    ident = sent.stdout.strip()
    assert (hub.root / "assets" / "build.txt").read_text() == "build 42\n"
    (dropped,) = (hub.root / "inbox").glob("*.md")
    build = digest(b"build 42\n")
    assert front_matter(dropped.read_text())["assets"] == [f"assets/build.txt sha256:{build}"]
    hub.run_once()
    result = hub.reply(ident.lower(), "result")
    assert "assets: build 42" in result
    (listed,) = seen.read_text().splitlines()
    assert listed.endswith("/assets/build.txt")
    assert not listed.startswith(str(hub.root))  # a copy in the run folder, not the shared file
    assert (hub.root / "assets" / "build.txt").exists()  # assets are shared, never consumed


def test_send_asset_refuses_to_replace_other_bytes_of_the_same_name(hub: HubDir, tmp_path: Path) -> None:
    """A second `--asset` with the same name and other bytes is refused; nothing is dropped."""
    (hub.root / "assets" / "build.txt").write_text("someone else's\n")
    source = tmp_path / "build.txt"
    source.write_text("mine\n")
    sent = send_with_asset(hub, source)
    assert sent.returncode == 2
    assert "assets/build.txt already holds other bytes" in sent.stderr
    assert list((hub.root / "inbox").iterdir()) == []
    assert (hub.root / "assets" / "build.txt").read_text() == "someone else's\n"


def test_a_late_asset_is_waited_for_and_then_the_envelope_runs(hub: HubDir, tmp_path: Path) -> None:
    """The envelope arrives first (sync order): held, no reply; the asset lands; it runs."""
    executor_hub(hub, tmp_path)
    data = b"late bytes\n"
    hub.drop(
        "late.md",
        with_assets(envelope_text(id="late-1", type="instigate"), f"assets/late.bin sha256:{digest(data)}"),
    )
    with hub.running() as daemon:
        daemon.until(lambda: hub.events("envelope.held", id="late-1"))
        assert hub.outbox() == {}
        hub.drop("late.bin", data, lane="assets")
        daemon.until(lambda: "late-1.result.md" in hub.outbox())
    assert "assets: late bytes" in hub.reply("late-1", "result")


@pytest.mark.parametrize(
    ("present", "reason"),
    [
        (None, "assets/x.bin did not arrive within 0.5 s"),
        (b"other bytes\n", "asset assets/x.bin does not match"),
    ],
    ids=["missing-after-grace", "mismatch"],
)
def test_a_missing_or_different_asset_is_an_error_naming_it_and_nothing_runs(
    hub: HubDir, tmp_path: Path, present: bytes | None, reason: str
) -> None:
    """After the grace a missing asset, and at once a mismatched one, get an error naming it;
    the executor never runs; the envelope is archived; the asset file is left in place."""
    seen = executor_hub(hub, tmp_path, grace=0.5)
    if present is not None:
        hub.drop("x.bin", present, lane="assets")
    hub.drop(
        "x.md",
        with_assets(envelope_text(id="x-1", type="instigate"), f"assets/x.bin sha256:{digest(b'good')}"),
    )
    with hub.running() as daemon:
        daemon.until(lambda: "x-1.error.md" in hub.outbox())
    assert reason in hub.reply("x-1", "error")
    assert not seen.exists()
    assert hub.archived() == ["x.md"]
    assert (hub.root / "assets" / "x.bin").exists() == (present is not None)


def test_a_symlinked_asset_is_refused_not_followed(hub: HubDir, tmp_path: Path) -> None:
    """`assets/NAME` as a link to a file with the right bytes is still refused: never followed."""
    seen = executor_hub(hub, tmp_path)
    target = tmp_path / "outside.bin"
    target.write_bytes(b"right bytes")
    (hub.root / "assets" / "link.bin").symlink_to(target)
    hub.drop(
        "l.md",
        with_assets(
            envelope_text(id="l-1", type="instigate"), f"assets/link.bin sha256:{digest(b'right bytes')}"
        ),
    )
    hub.run_once()
    assert "asset assets/link.bin" in hub.reply("l-1", "error")
    assert not seen.exists()


def signed_order_with_asset(lab: Lab, ident: str, data: bytes) -> tuple[bytes, bytes]:
    """An order for `deploy` that references `assets/build.tar` by the digest of `data`, signed by Alice."""
    text = (
        f"---\nprotocol: slop.v1\nid: {ident}\ntype: instigate\nfrom: {ALICE}\nto: watcher\n"
        f"created_at: {now_stamp()}\nauth: signed:{ident}.md.sig\naction: deploy\n"
        f"assets:\n  - assets/build.tar sha256:{digest(data)}\n---\nDeploy the attached build.\n"
    ).encode()
    return text, lab.sign(f"{ident}.md", text)


def test_a_signed_orders_approval_covers_its_attachment(lab: Lab) -> None:
    """The human signed an order naming the tarball's digest: with that tarball the action runs
    (its JSON stdin lists the reference); with the tarball swapped after signing it is refused
    naming the asset, and nothing runs."""
    good = b"the build alice reviewed\n"
    order, signature = signed_order_with_asset(lab, "deploy-1", good)
    lab.hub.drop("build.tar", good, lane="assets")
    lab.drop("deploy-1.md", order, signature)
    lab.hub.run_once()
    assert lab.runs() == ["deploy-1"]
    stdin = json.loads((lab.records / "deploy-1" / "stdin.json").read_text())
    assert stdin["assets"] == [f"assets/build.tar sha256:{digest(good)}"]
    assert lab.record("deploy-1")["env"]["SLOP_ASSETS"].endswith("/assets/build.tar")

    order, signature = signed_order_with_asset(lab, "deploy-2", good)
    (lab.hub.root / "assets" / "build.tar").write_bytes(b"a build with a backdoor\n")
    lab.drop("deploy-2.md", order, signature)
    lab.hub.run_once()
    assert lab.runs() == ["deploy-1"]
    error = lab.hub.reply("deploy-2", "error")
    assert "asset assets/build.tar does not match" in error
