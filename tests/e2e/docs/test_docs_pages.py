"""The command blocks of the documentation pages, run as written (`tests/docs_blocks.py`).

Each tutorial's and how-to guide's block runs end to end in a fresh home with the installed
`slopd`. The security-key block needs a physical key to enrol and to sign, so it is checked as
far as a machine without one can: it is valid shell, and the config it tells the user to write
is one slopd accepts, with the action requiring a touch.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from slopd.shell.config import parse
from tests.docs_blocks import block_env, blocks, run_block, shell_block
from tests.ports import free_port


def test_the_first_hub_tutorial_runs_and_answers_a_query_a_note_and_an_instigate(tmp_path: Path) -> None:
    """The defaults: the query gets a summary result, the note an ack and an index entry, the
    instigate an error (no executor) — and every input is archived."""
    result = run_block(shell_block("docs/first-hub.md"), tmp_path)
    assert "**Is anyone there?**" in result.stdout
    assert "Note indexed into notes/INDEX.md." in result.stdout
    assert "no executor is configured on this watcher; nothing was run" in result.stdout
    assert "exit 1: no executor" in result.stdout
    assert "The build server moves on Friday." in (tmp_path / "hub" / "notes" / "INDEX.md").read_text()
    assert len(list((tmp_path / "hub" / "archive").glob("*/*.md"))) == 3
    assert list((tmp_path / "hub" / "inbox").iterdir()) == []


def test_the_first_signed_order_tutorial_runs_the_executor_and_the_signed_action(tmp_path: Path) -> None:
    """The instigate is executed; the signed order verifies, runs its action once and leaves
    authorized/ empty (the order and its signature archived)."""
    result = run_block(shell_block("docs/first-signed-order.md"), tmp_path)
    assert "The request has 7 words." in result.stdout
    assert "good signature by me@example.com" in result.stdout
    assert "hello from a signed order" in result.stdout
    assert "daemon:  running" in result.stdout
    assert "order.verified" in result.stdout
    assert sorted(path.name for path in (tmp_path / "hub" / "authorized").iterdir()) == []
    archived = sorted(path.name for path in (tmp_path / "hub" / "archive").glob("*/order.md*"))
    assert archived == ["order.md", "order.md.sig"]


def test_the_several_machines_block_records_moves_and_reports_the_home(tmp_path: Path) -> None:
    """The laptop is home after `init --home`, its presence is listed, the home moves to the
    desktop, and doctor — the desktop never having run on this hub — says nothing generic would be
    answered here, with the command that moves the home back (SPEC §14)."""
    result = run_block(shell_block("docs/several-machines.md"), tmp_path)
    assert "home:    watcher:laptop" in result.stdout
    assert "watcher watcher:laptop on" in result.stdout
    assert "home watcher watcher:laptop -> watcher:desktop" in result.stdout
    assert "problem home: nothing addressed to `watcher` or `human` will be answered" in result.stdout
    assert "watcher:laptop" in result.stdout.split("problem home:", 1)[1].split("Fix: ", 1)[1]
    hub_file = (tmp_path / "Dropbox" / "hub" / ".slopd" / "hub.toml").read_text()
    assert 'home = "watcher:desktop"' in hub_file


def test_the_two_person_approval_block_runs_and_releases_once(tmp_path: Path) -> None:
    """Two humans sign one order; `slopd verify` accepts it; the daemon runs the action once and
    archives the order with both sidecars."""
    result = run_block(shell_block("docs/quorum.md"), tmp_path)
    assert "good signature by alice@example.com" in result.stdout
    assert "with bob@example.com (SHA256:" in result.stdout
    assert "released by two humans" in result.stdout
    workdir = Path(result.stdout.strip().splitlines()[-1])
    archived = sorted(path.name for path in (workdir / "hub" / "archive").glob("*/*"))
    assert archived == ["order.md", "order.md.bob.sig", "order.md.sig"]


def test_the_security_key_block_is_valid_shell_and_its_config_is_accepted() -> None:
    """`bash -n` accepts the block, and the `[actions.deploy]` it shows parses with `require`."""
    block = shell_block("docs/security-keys.md")
    checked = subprocess.run(["bash", "-n"], input=block, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    toml = "\n".join(
        line.removeprefix("#      ").split("  #")[0]
        for line in block.splitlines()
        if line.startswith("#      ")
    )
    config = parse(toml)
    assert config.actions["deploy"].require == "touch"
    assert "ssh-keygen -t ed25519-sk" in block
    assert "ssh-keygen -Y sign -f ~/.ssh/id_ed25519_sk -n slop" in block


def test_the_mep_block_runs_and_registers_the_merge_driver(tmp_path: Path) -> None:
    """The MEP block writes a conformant log, registers the driver and commits; its pre-commit
    hook is valid YAML naming a command that lints."""
    block = shell_block("docs/mep-logs.md")
    result = run_block(block, tmp_path, GIT_CONFIG_NOSYSTEM="1")
    repo = Path(result.stdout.strip().splitlines()[-1])
    assert "handoff.md merge=mep" in (repo / ".gitattributes").read_text()
    driver = subprocess.run(
        ["git", "-C", str(repo), "config", "merge.mep.driver"], capture_output=True, text=True, check=True
    )
    assert driver.stdout.strip().endswith("handoff merge --marker-size %L %O %A %B")
    committed = subprocess.run(
        ["git", "-C", str(repo), "show", "HEAD:handoff.md"], capture_output=True, text=True, check=True
    )
    assert "- [ ] **[Pierre]** Review the parser" in committed.stdout
    (hook_yaml,) = blocks("docs/mep-logs.md", "yaml")
    hook = yaml.safe_load(hook_yaml)["repos"][0]["hooks"][0]
    linted = subprocess.run(
        [*hook["entry"].split(), str(repo / "handoff.md")],
        env=block_env(tmp_path),
        capture_output=True,
        text=True,
        check=False,
    )
    assert linted.returncode == 0, linted.stdout + linted.stderr
    assert re.search(hook["files"], "machines/handoff.md")
    assert not re.search(hook["files"], "handoff.md.bak")


def test_the_agents_over_http_block_runs_posts_reads_and_sends(tmp_path: Path) -> None:
    """A token, the daemon with --http, a curl POST (202), the reply read back, `slopd send --url`
    with --wait; the port is swapped for a free one so parallel runs cannot collide."""
    port = free_port()
    block = shell_block("docs/agents.md", "Agents over HTTP").replace("8787", str(port))
    result = run_block(block, tmp_path)
    receipt = re.search(
        r'\{"id":"20261201t090000z-hello","seat":"claude-code".*?"status":"accepted"\}', result.stdout
    )
    assert receipt is not None, result.stdout
    assert '"terminal":true' in result.stdout
    assert "type: ack" in result.stdout  # slopd send --wait printed the note's ack
    workdir = Path(result.stdout.strip().splitlines()[-1])
    assert "slopd_" not in (workdir / "tokens").read_text()
    archived = sorted(path.name for path in (workdir / "hub" / "archive").glob("*/*.md"))
    assert "20261201t090000z-hello.md" in archived
    assert len(archived) == 2


def test_the_baton_block_runs_init_lease_pack_boot_and_registry(tmp_path: Path) -> None:
    """The letter in the block passes the gate; the pack commits generation 1; boot and the
    registry see it, with the boot recorded."""
    block = shell_block("docs/baton-lineage.md")
    result = run_block(block, tmp_path)
    workdir = Path(result.stdout.strip().splitlines()[-1])
    tree = workdir / "hub" / "batons" / "oracle"
    assert (tree / "GENERATION").read_text() == "1"
    assert "oracle: generation 1; no live lease; last booted" in result.stdout
    assert (tree / "generations" / "v1" / "HANDOFF.md").read_text() == (workdir / "letter.md").read_text()
