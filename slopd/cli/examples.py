"""One example per command, shown at the end of its `--help` and in the CLI reference.

Rules:
1. A key is the command as typed after `slopd` (`"baton pack"`); `""` is `slopd` itself. Every
   command and command group has one (`tests/e2e/cli/test_help_examples.py`).
2. An example is one command line a user can adapt; it parses with the real parser (the test
   parses each), and uses the same names as the docs: `~/hub`, `~/.config/slopd/…`, `me@example.com`.
3. Import-free: `slopd send` pays for this module on every call.
"""

from __future__ import annotations

EXAMPLES: dict[str, str] = {
    "": "slopd init ~/hub && slopd run --hub ~/hub",
    "init": "slopd init ~/Dropbox/hub --config ~/.config/slopd/config.toml",
    "hub": "slopd hub home --hub ~/Dropbox/hub watcher:desktop",
    "hub home": "slopd hub home --hub ~/Dropbox/hub watcher:desktop",
    "run": "slopd run --hub ~/hub --config ~/.config/slopd/config.toml --http 127.0.0.1:8787",
    "status": "slopd status --hub ~/hub --json",
    "tail": "slopd tail --hub ~/hub -f --id 20261201t090000z-hello",
    "notes": "slopd notes --hub ~/hub --search backoff",
    "send": "echo 'Is it up?' | slopd send --hub ~/hub --type query --from me --to watcher --wait 30 -",
    "validate": "slopd validate ~/hub/inbox/*.md",
    "keygen": "slopd keygen ~/.config/slopd/me --principal me@example.com >> ~/.config/slopd/allowed_signers",
    "sign": "slopd sign --key ~/.config/slopd/me order.md",
    "verify": "slopd verify --config ~/.config/slopd/config.toml order.md",
    "handoff": "slopd handoff lint handoff.md",
    "handoff lint": "slopd handoff lint --strict handoff.md machines/handoff.md",
    "handoff merge": "slopd handoff merge --marker-size 7 base.md ours.md theirs.md",
    "handoff install-merge-driver": "slopd handoff install-merge-driver --repo ~/project",
    "handoff new": (
        "slopd handoff new handoff.md --agent Claude --context 'laptop (main)' "
        "--happened 'Wrote the parser' --pending 'Review the parser'"
    ),
    "standup": "slopd standup --hub ~/hub myproject",
    "token": "slopd token add --tokens ~/.config/slopd/tokens claude-code",
    "token add": "slopd token add --tokens ~/.config/slopd/tokens claude-code",
    "token revoke": "slopd token revoke --tokens ~/.config/slopd/tokens claude-code",
    "baton": "slopd baton boot --hub ~/hub oracle",
    "baton score": "slopd baton score letter.md",
    "baton init": "slopd baton init --hub ~/hub --identity oracle.json oracle",
    "baton lease": "slopd baton lease --hub ~/hub oracle --holder gen2",
    "baton pack": "slopd baton pack --hub ~/hub oracle --lease ID --letter letter.md --state-file state.json",
    "baton metrics": "slopd baton metrics --hub ~/hub oracle --plot metrics.png",
    "baton boot": "slopd baton boot --hub ~/hub oracle --budget 2000",
    "baton registry": "slopd baton registry --hub ~/hub --json",
    "mcp": "slopd mcp --hub ~/hub --seat claude-code",
    "wait": "slopd wait --hub ~/hub --seat claude-code --timeout 600",
    "hook": "slopd hook claude-code SessionStart --hub ~/hub --seat claude-code",
    "doctor": "slopd doctor --hub ~/hub",
    "console": "slopd console enroll --hub ~/hub --principal me@example.com",
    "console enroll": "slopd console enroll --hub ~/hub --principal me@example.com",
    "service": "slopd service install --systemd-user --hub ~/hub --dry-run",
    "service install": "slopd service install --systemd-user --hub ~/hub --dry-run",
}


def epilog(command: str) -> str | None:
    """The `--help` epilog of `command` (see rule 1), or None when it has no example."""
    example = EXAMPLES.get(command)
    return None if example is None else f"example:\n  {example}"
