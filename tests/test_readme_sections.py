"""The README's "Two-person approval" and "Signing with a security key" sections, as written.

The two-person block runs end to end in a fresh directory with the installed `slopd`. The
security-key block needs a physical key to enrol and to sign, so it is checked as far as a
machine without one can: it is valid shell, and the config it tells the user to write is one
slopd accepts, with the action requiring a touch.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import yaml

from slopd.shell.config import parse

ROOT = Path(__file__).resolve().parent.parent


def shell_block(heading: str) -> str:
    """The one ```sh block of the README's section `heading` (a `## ` inside a fence is no heading)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    lines, fenced = [], False
    for line in readme.split(f"## {heading}\n", 1)[1].splitlines(keepends=True):
        if line.startswith("## ") and not fenced:
            break
        fenced ^= line.startswith("```")
        lines.append(line)
    (block,) = re.findall(r"```sh\n(.*?)```", "".join(lines), re.DOTALL)
    return str(block)


def block_env(tmp_path: Path) -> dict[str, str]:
    """A home of its own in `tmp_path`, the installed `slopd` first on PATH, no inherited token."""
    env = dict(os.environ, HOME=str(tmp_path), TMPDIR=str(tmp_path), XDG_STATE_HOME=str(tmp_path / "state"))
    env["PATH"] = f"{Path(sys.executable).parent}:{env['PATH']}"
    env.pop("SLOPD_TOKEN", None)
    return env


def run_block(block: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """`block` under `bash -euo pipefail` in `block_env`, then `pwd`: it must exit 0."""
    result = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + block + "\npwd\n"],
        env={**block_env(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result


def test_the_two_person_approval_block_runs_and_releases_once(tmp_path: Path) -> None:
    """Two humans sign one order; `slopd verify` accepts it; the daemon runs the action once and
    archives the order with both sidecars."""
    result = run_block(shell_block("Two-person approval"), tmp_path)
    assert "good signature by alice@example.com" in result.stdout
    assert "with bob@example.com (SHA256:" in result.stdout
    assert "released by two humans" in result.stdout
    workdir = Path(result.stdout.strip().splitlines()[-1])
    archived = sorted(path.name for path in (workdir / "hub" / "archive").glob("*/*"))
    assert archived == ["order.md", "order.md.bob.sig", "order.md.sig"]


def test_the_security_key_block_is_valid_shell_and_its_config_is_accepted() -> None:
    """`bash -n` accepts the block, and the `[actions.deploy]` it shows parses with `require`."""
    block = shell_block("Signing with a security key")
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
    block = shell_block("MEP handoff logs")
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
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## MEP handoff logs\n", 1)[1].split("\n## ", 1)[0]
    (hook_yaml,) = re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)
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
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    block = shell_block("Agents over HTTP").replace("8787", str(port))
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
    block = shell_block("Baton handoffs between agent generations")
    result = run_block(block, tmp_path)
    workdir = Path(result.stdout.strip().splitlines()[-1])
    tree = workdir / "hub" / "batons" / "oracle"
    assert (tree / "GENERATION").read_text() == "1"
    assert "oracle: generation 1; no live lease; last booted" in result.stdout
    assert (tree / "generations" / "v1" / "HANDOFF.md").read_text() == (workdir / "letter.md").read_text()
