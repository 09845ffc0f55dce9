"""Every `slopd` command and option, in one table, built from imports that cost nothing.

A command's handler is named `module:function` and imported only when that command runs, so
`slopd send` never loads the daemon, watchdog, SQLite or cryptography.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from slopd.cli.examples import epilog
from slopd.core.vocabulary import HOOK_HOSTS, LOG_LEVELS, MAX_ENVELOPE_BYTES, MODES, NAMESPACE, TYPES

_DEFAULT_STATE = "state dir (default $XDG_STATE_HOME/slopd/<hub-id>)"
_DEFAULT_CONFIG = "TOML config (default $XDG_CONFIG_HOME/slopd/config.toml)"
_DEFAULT_LOG = "log file (default STATE/slopd.log)"
_JSON = "print JSON, for scripts"
_VESSEL = "the vessel: one agent lineage, HUB/batons/VESSEL/"


class _Version(argparse.Action):
    """`--version`, reading the package metadata only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_args: object, **_kwargs: object) -> None:
        from slopd.shell.version import version  # noqa: PLC0415  # argparse alone for other commands

        print(f"slopd {version()}")  # on stdout, as argparse's own version action prints
        parser.exit()


class _Formatter(argparse.HelpFormatter):
    """argparse's help, with the example epilog's lines kept as written (a command line is not prose)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("example:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)


class _Parser(argparse.ArgumentParser):
    """argparse's parser, its help as wide as the terminal without importing `shutil` (argparse
    imports it, with bz2 and lzma, for the width, at every `add_argument`: ~4 ms a command)."""

    def _get_formatter(self) -> argparse.HelpFormatter:
        return _Formatter(prog=self.prog, width=_columns() - 2)


def _columns() -> int:
    """`shutil.get_terminal_size().columns`: $COLUMNS, else the terminal's, else 80."""
    try:
        return int(os.environ["COLUMNS"])
    except (KeyError, ValueError):
        pass
    stream = sys.__stdout__
    try:
        return (os.get_terminal_size(stream.fileno()).columns if stream else 0) or 80
    except (AttributeError, ValueError, OSError):
        return 80


def build() -> argparse.ArgumentParser:
    text = "a safe handoff hub between AI agents and their human: SLOP envelopes, MEP logs, the Baton keeper"
    parser: argparse.ArgumentParser = _Parser(prog="slopd", description=text)
    parser.add_argument("--version", action=_Version)
    commands = parser.add_subparsers(dest="command", required=True)

    def command(name: str, handler: str, text: str) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=text, description=text)
        sub.set_defaults(handler=handler)
        return sub

    _hub_commands(command)
    _envelope_commands(command)
    _key_commands(command)
    _handoff_commands(commands)
    _token_commands(commands)
    _console_commands(commands)
    _baton_commands(commands)
    _mcp_command(command)
    _wake_commands(command, commands)
    _operating_commands(command, commands)
    _add_examples(parser, "")
    return parser


def _add_examples(parser: argparse.ArgumentParser, command: str) -> None:
    """Each command's `--help` ends with its example (`cli.examples`), at every depth."""
    parser.epilog = epilog(command)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                _add_examples(sub, f"{command} {name}".strip())


Command = Callable[[str, str, str], argparse.ArgumentParser]


def _hub_and_state(sub: argparse.ArgumentParser) -> None:
    sub.add_argument("--hub", required=True, help="the hub folder")
    sub.add_argument("--state", help=_DEFAULT_STATE)


def _hub_commands(command: Command) -> None:
    sub = command("init", "slopd.cli.hubs:init", "create the lanes and HUB.md (changes nothing that exists)")
    sub.add_argument("hub", metavar="HUB", help="the hub folder (made if missing)")
    homing = sub.add_mutually_exclusive_group()
    text = "the hub's home watcher, the one that answers `watcher` (default: the config's watcher:NAME)"
    homing.add_argument("--home", metavar="watcher:NAME", help=text)
    text = "record no home: the first watcher that starts on the hub claims it"
    homing.add_argument("--no-home", action="store_true", help=text)
    text = "the config the watcher will run with: its names give the home (default: the default config)"
    sub.add_argument("--config", help=text)

    sub = command("hub", "slopd.cli.hubs:hub_home", "the hub's own settings: `slopd hub home`")
    verbs = sub.add_subparsers(dest="verb", required=True)
    text = "move the hub's home watcher (then reload every slopd watching the hub)"
    verb = verbs.add_parser("home", help=text, description=text)
    verb.add_argument("--hub", required=True, help="the hub folder")
    verb.add_argument("name", metavar="watcher:NAME", help="the watcher that becomes home")

    sub = command("run", "slopd.cli.daemon:run", "run the daemon on a hub")
    _hub_and_state(sub)
    sub.add_argument("--config", help=_DEFAULT_CONFIG)
    sub.add_argument("--once", action="store_true", help="drain what is there, then exit")
    text = "also serve the HTTP transport on HOST:PORT (default [http] listen; needs slopd[http])"
    sub.add_argument("--http", metavar="HOST:PORT", help=text)
    sub.add_argument(
        "--polling", action="store_true", help="poll the lanes (network/FUSE filesystems without events)"
    )
    sub.add_argument("--log-file", help=_DEFAULT_LOG)
    sub.add_argument("--log-level", default="info", choices=LOG_LEVELS, help="the least level logged")
    sub.add_argument(
        "--grace",
        type=float,
        default=30.0,
        help="seconds running executions get to finish on SIGTERM (default 30)",
    )

    sub = command("status", "slopd.cli.hubs:status", "lanes, pending items, last replies, daemon pid")
    _hub_and_state(sub)
    sub.add_argument("--json", action="store_true", help=_JSON)

    sub = command("tail", "slopd.cli.hubs:tail", "the JSON log, readable")
    _hub_and_state(sub)
    sub.add_argument("-f", "--follow", action="store_true", help="keep printing new lines")
    sub.add_argument("--id", help="only lines about this envelope id")
    sub.add_argument("--level", default="debug", choices=LOG_LEVELS, help="minimum level")
    sub.add_argument("--lane", choices=("inbox", "authorized"), help="only lines about this lane")
    sub.add_argument("-n", "--lines", type=int, default=40, help="how many lines (default 40)")
    sub.add_argument("--log-file", help=_DEFAULT_LOG)

    sub = command("notes", "slopd.cli.hubs:notes", "the indexed notes, newest first, with their text")
    _hub_and_state(sub)
    sub.add_argument("--search", metavar="TEXT", help="only notes whose text, id, sender or title holds TEXT")
    sub.add_argument("--limit", type=int, metavar="N", help="notes per page (default 20)")
    sub.add_argument("--offset", type=int, default=0, metavar="N", help="skip the N newest (the next page)")
    sub.add_argument("--max-chars", type=int, metavar="N", help="each text's bound (default 4000; 0: none)")
    sub.add_argument("--json", action="store_true", help="the MCP tool slop_notes's JSON")


def _envelope_commands(command: Command) -> None:
    sub = command("send", "slopd.cli.messages:send", "drop a valid envelope into the inbox; prints its id")
    where = sub.add_mutually_exclusive_group(required=True)
    where.add_argument("--hub", help="the hub folder to drop it into")
    where.add_argument("--url", help="post it to a hub's HTTP server instead (http[s]://HOST:PORT)")
    text = "with --url: a file holding the seat's token (default: $SLOPD_TOKEN)"
    sub.add_argument("--token-file", metavar="FILE", help=text)
    sub.add_argument("--type", required=True, choices=TYPES, help="the envelope type")
    sub.add_argument("--from", dest="sender", required=True, help="who sends it (your seat)")
    sub.add_argument("--to", required=True, help="the recipient: watcher, watcher:NAME, a seat, human")
    sub.add_argument("--in-reply-to", metavar="ID", help="the id this answers")
    sub.add_argument("--mode", choices=MODES, help="an instigate's mode (default execute)")
    sub.add_argument("--slug", help="a few words for the id")
    text = "the Standing Standup (standups/PROJECT.md) a handoff is filed in, or a handshake tags in to"
    sub.add_argument("--project", help=text)
    sub.add_argument("--wait", type=float, metavar="SECS", help="print the terminal reply")
    text = "copy FILE into assets/ and reference it by its SHA-256 (repeatable)"
    sub.add_argument("--asset", action="append", default=[], metavar="FILE", help=text)
    sub.add_argument("file", nargs="?", metavar="FILE|-", help="the body (- for stdin)")

    sub = command("validate", "slopd.cli.envelopes:validate", "lint envelopes as the daemon would")
    sub.add_argument("files", nargs="+", metavar="FILE", help="envelope files (.md or .json)")
    sub.add_argument(
        "--max-bytes", type=int, default=MAX_ENVELOPE_BYTES, help="the size limit (max_envelope_bytes)"
    )


def _key_commands(command: Command) -> None:
    text = "write an OpenSSH Ed25519 key pair; print its allowed_signers line"
    sub = command("keygen", "slopd.cli.keys:keygen", text)
    sub.add_argument("path", metavar="PATH", help="the private key; the public key goes to PATH.pub")
    sub.add_argument("--principal", required=True, help="who signs with it: the `from` of their orders")
    sub.add_argument("--namespace", default=NAMESPACE, help="the namespace its allowed_signers line allows")

    sub = command("sign", "slopd.cli.keys:sign", "sign FILE (SSHSIG, namespace slop) into FILE.sig")
    sub.add_argument("--key", required=True, help="an OpenSSH Ed25519 private key")
    sub.add_argument("--namespace", default=NAMESPACE, help="the signature namespace")
    sub.add_argument("--out", metavar="SIG", help="write here, e.g. NAME.md.bob.sig for a second signer")
    sub.add_argument("--force", action="store_true", help="replace an existing signature file")
    sub.add_argument("file", metavar="FILE", help="the file to sign (an order, outside the hub)")

    text = "check FILE.sig over any file as ssh-keygen -Y verify does; for an order, every order check too"
    sub = command("verify", "slopd.cli.keys:verify", text)
    sub.add_argument(
        "--allowed-signers", help="the trusted keys (default: [auth] allowed_signers of --config)"
    )
    sub.add_argument("--config", help="take [auth] and the actions' quorum and require from this config")
    sub.add_argument("--namespace", help=f"the signature namespace (default: the config's, else {NAMESPACE})")
    sub.add_argument("--signature", metavar="SIG", help="the signature of a plain file (default FILE.sig)")
    sub.add_argument("file", metavar="FILE", help="an order, or any signed file")


def _handoff_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    text = "MEP handoff logs: lint, merge (a git merge driver), install the driver, add an entry"
    handoff = commands.add_parser("handoff", help=text, description=text)
    verbs = handoff.add_subparsers(dest="verb", required=True)

    def verb(name: str, handler: str, text: str) -> argparse.ArgumentParser:
        sub = verbs.add_parser(name, help=text, description=text)
        sub.set_defaults(handler=f"slopd.cli.handoff:{handler}")
        return sub

    sub = verb(
        "lint", "lint_files", "check handoff logs against the MEP schema (FILE:LINE: RULE message — fix)"
    )
    sub.add_argument("files", nargs="+", metavar="FILE", help="handoff logs")
    sub.add_argument("--json", action="store_true", help="one object per file")
    sub.add_argument("--strict", action="store_true", help="warnings fail too (exit 1)")

    sub = verb("merge", "merge", "a git merge driver: merge THEIRS into OURS, entry by entry, losing none")
    sub.add_argument(
        "--marker-size", type=int, default=7, metavar="N", help="conflict marker length (git's %%L)"
    )
    for name, text in (("base", "%%O"), ("ours", "%%A, where the result goes"), ("theirs", "%%B")):
        sub.add_argument(name, metavar=name.upper(), help=f"git's {text}")

    text = "register the merge driver in a git repository (git config + .gitattributes); idempotent"
    sub = verb("install-merge-driver", "install_merge_driver", text)
    sub.add_argument("--repo", default=".", metavar="DIR", help="the repository (default: here)")
    text = "a path pattern to merge with the driver (repeatable; default handoff.md, machines/handoff.md)"
    sub.add_argument("--pattern", action="append", default=[], metavar="GLOB", help=text)

    text = "prepend a conformant entry to FILE (sections from the options, or Markdown on stdin)"
    sub = verb("new", "new", text)
    sub.add_argument("file", metavar="FILE", help="the handoff log (made if missing)")
    sub.add_argument("--agent", required=True, help="who wrote the entry (v2 agent name)")
    sub.add_argument("--context", help="v1 header context: 'machine (branch)'")
    sub.add_argument("--platform", help="v2: the platform, e.g. 'Claude (Hot Rod)'")
    sub.add_argument("--session-type", help="v2: code, cowork, brainstorm, research, …")
    sub.add_argument("--date", help="YYYY-MM-DD (default: today, UTC)")
    sub.add_argument("--tag-in", metavar="TIME", help="e.g. '14:30 ET'")
    sub.add_argument("--tag-out", metavar="TIME", help="e.g. '16:45 ET' or [active]")
    for name, text in (
        ("happened", "a What happened bullet"),
        ("pending", "a What's pending task"),
        ("watch", "a Watch out for bullet"),
    ):
        sub.add_argument(
            f"--{name}", action="append", default=[], metavar="TEXT", help=f"{text} (repeatable)"
        )

    text = "a project's Standing Standup: the party line, the latest entry, open tasks by owner"
    sub = commands.add_parser("standup", help=text, description=text)
    sub.set_defaults(handler="slopd.cli.standup:show")
    sub.add_argument("--hub", required=True, help="the hub folder")
    sub.add_argument("project", metavar="PROJECT", help="the project (standups/PROJECT.md)")
    sub.add_argument("--json", action="store_true", help=_JSON)


def _token_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    text = "the seats' bearer tokens for HTTP and MCP: only their hashes are stored"
    token = commands.add_parser("token", help=text, description=text)
    verbs = token.add_subparsers(dest="verb", required=True)
    for verb, text in (
        ("add", "make a new token for SEAT, print it once, store its hash in the tokens file"),
        ("revoke", "remove every token of SEAT from the tokens file"),
    ):
        sub = verbs.add_parser(verb, help=text, description=text)
        sub.set_defaults(handler=f"slopd.cli.tokens:{verb}")
        sub.add_argument("--tokens", required=True, metavar="F", help="the tokens file (outside the hub)")
        sub.add_argument("seat", metavar="SEAT", help="the `from` the token may send as")


def _console_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    text = "the human's console (slopd run --http serves it at /; needs slopd[console])"
    console = commands.add_parser("console", help=text, description=text)
    verbs = console.add_subparsers(dest="verb", required=True)
    text = (
        "print a one-time code (10 minutes) for the console's enrolment page, show the new "
        "passkey's allowed_signers line, and append it when you answer yes"
    )
    sub = verbs.add_parser("enroll", help=text, description=text)
    sub.set_defaults(handler="slopd.cli.console:enroll")
    _hub_and_state(sub)
    sub.add_argument(
        "--principal", required=True, help="who the passkey signs as (an allowed_signers principal)"
    )
    sub.add_argument("--config", help=_DEFAULT_CONFIG)
    sub.add_argument("--yes", action="store_true", help="append the line without asking (scripts)")


def _mcp_command(command: Command) -> None:
    text = "serve a seat of the hub as MCP tools on stdio (for coding agents; needs slopd[mcp])"
    sub = command("mcp", "slopd.cli.mcp:serve", text)
    where = sub.add_mutually_exclusive_group(required=True)
    where.add_argument("--hub", help="the hub folder")
    text = "a daemon's HTTP server instead (its /mcp; the token in $SLOPD_TOKEN fixes the seat)"
    where.add_argument("--url", help=text)
    sub.add_argument("--state", help=_DEFAULT_STATE)
    sub.add_argument("--seat", help="with --hub: the seat this session speaks for (default $SLOPD_SEAT)")
    sub.add_argument("--config", help=_DEFAULT_CONFIG)


def _wake_commands(command: Command, commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    text = "answer an agent host's hook (JSON on stdin and stdout): new replies, approvals, outstanding waits"
    sub = command("hook", "slopd.cli.hooks:hook", text)
    sub.add_argument("host", choices=HOOK_HOSTS, help="the agent host whose hook protocol to speak")
    text = (
        "the host's event: SessionStart, UserPromptSubmit, Stop (Gemini: SessionStart, BeforeAgent, "
        "AfterAgent); or `settings` to print the host's hook configuration"
    )
    sub.add_argument("event", metavar="EVENT", help=text)
    _hub_and_state(sub)
    sub.add_argument("--seat", help="the seat this agent speaks for (default $SLOPD_SEAT)")
    text = "at the stop event: first wait up to S seconds (≤ 50) for an outstanding reply (default 0)"
    sub.add_argument("--wait", type=float, default=0.0, metavar="S", help=text)
    text = "at the stop event: ask the agent to go on at most N times a session (default 3)"
    sub.add_argument("--max-blocks", type=int, default=3, metavar="N", help=text)

    text = "block until a reply for a seat comes (woken by the filesystem, or the HTTP feed), print it"
    sub = command("wait", "slopd.cli.wake:wait", text)
    where = sub.add_mutually_exclusive_group(required=True)
    where.add_argument("--hub", help="the hub folder")
    where.add_argument("--url", help="a daemon's HTTP server instead (the token's seat; long-polls its feed)")
    sub.add_argument("--seat", help="with --hub: whose replies (default $SLOPD_SEAT)")
    sub.add_argument("--state", help=_DEFAULT_STATE)
    text = "the terminal reply to this envelope instead of any new reply (repeatable: the first of them)"
    sub.add_argument("--id", action="append", default=[], metavar="ID", help=text)
    sub.add_argument(
        "--timeout", type=float, metavar="S", help="give up after S seconds: exit 1 (default: wait)"
    )
    sub.add_argument("--json", action="store_true", help="print the reply as one JSON object (with its seq)")
    text = "with --url: a file holding the seat's token (default: $SLOPD_TOKEN)"
    sub.add_argument("--token-file", metavar="FILE", help=text)
    text = "with --url: a reply is new after this seq (default: the feed's tail when it starts)"
    sub.add_argument("--after", type=int, metavar="SEQ", help=text)


def _baton_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    text = "the Baton keeper: generational handoffs of one agent lineage"
    baton = commands.add_parser("baton", help=text, description=text)
    verbs = baton.add_subparsers(dest="verb", required=True)
    text = "score a handoff letter with the seed's rubric; exit 1 when it fails the gate"
    sub = verbs.add_parser("score", help=text, description=text)
    sub.set_defaults(handler="slopd.cli.baton:score")
    sub.add_argument("file", metavar="FILE|-", help="the letter (- for stdin)")

    text = "create a vessel's tree, HUB/batons/VESSEL/, at generation 0"
    sub = verbs.add_parser("init", help=text, description=text)
    sub.set_defaults(handler="slopd.cli.baton:init")
    sub.add_argument("--hub", required=True, help="the hub folder")
    sub.add_argument("--identity", required=True, metavar="FILE.json", help="the agent's IDENTITY.json")
    sub.add_argument("vessel", metavar="VESSEL", help=_VESSEL)

    text = "lease a vessel's next generation: prints {lease_id, expires, generation}; exit 1 while leased"
    sub = verbs.add_parser("lease", help=text, description=text)
    sub.set_defaults(handler="slopd.cli.baton:lease")
    _hub_and_state(sub)
    sub.add_argument("--holder", required=True, help="who takes the lease (named to anyone refused)")
    sub.add_argument(
        "--ttl", type=float, default=300.0, metavar="SECS", help="seconds until it expires (300)"
    )
    sub.add_argument("vessel", metavar="VESSEL", help=_VESSEL)

    text = "score, gate and commit the next generation with a live lease; prints the score JSON"
    sub = verbs.add_parser("pack", help=text, description=text)
    sub.set_defaults(handler="slopd.cli.baton:pack")
    _hub_and_state(sub)
    sub.add_argument("--lease", required=True, metavar="ID", help="the live lease's id (slopd baton lease)")
    sub.add_argument("--letter", required=True, metavar="F", help="the handoff letter (Markdown)")
    sub.add_argument("--state-file", required=True, metavar="F", help="the generation's STATE.json")
    sub.add_argument("--intentions", metavar="F", help="INTENTIONS.json")
    sub.add_argument("--context", metavar="F", help="CONTEXT.json")
    text = "commit a letter that fails the gate, marked LOW_QUALITY"
    sub.add_argument("--accept-low-quality", action="store_true", help=text)
    sub.add_argument("--config", help=_DEFAULT_CONFIG + "; its [baton.summarizer] writes AUTOBIOGRAPHY.md")
    sub.add_argument("vessel", metavar="VESSEL", help=_VESSEL)
    _baton_reading_commands(verbs)


def _baton_reading_commands(verbs: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    text = "the seed's metrics table, one row per generation, from evolution/fitness_history.json"
    sub = verbs.add_parser("metrics", help=text, description=text)
    sub.set_defaults(handler="slopd.cli.baton:metrics")
    sub.add_argument("--hub", required=True, help="the hub folder")
    sub.add_argument("--json", action="store_true", help=_JSON)
    sub.add_argument("--plot", metavar="FILE.png", help="draw the metrics too (needs the slopd[plot] extra)")
    sub.add_argument("vessel", metavar="VESSEL", help=_VESSEL)

    text = "what the next generation reads: GENERATION's state and letter, then what the budget allows"
    sub = verbs.add_parser("boot", help=text, description=text)
    sub.set_defaults(handler="slopd.cli.baton:boot")
    _hub_and_state(sub)
    sub.add_argument(
        "--budget", type=int, metavar="TOKENS", help="tokens (characters / 4) for IDENTITY and L1"
    )
    sub.add_argument("--json", action="store_true", help=_JSON)
    sub.add_argument("vessel", metavar="VESSEL", help=_VESSEL)

    text = "every vessel of the hub: GENERATION, live lease, last boot, last score"
    sub = verbs.add_parser("registry", help=text, description=text)
    sub.set_defaults(handler="slopd.cli.baton:registry")
    _hub_and_state(sub)
    sub.add_argument("--json", action="store_true", help=_JSON)


def _operating_commands(
    command: Command, commands: argparse._SubParsersAction[argparse.ArgumentParser]
) -> None:
    text = "check the set-up of a hub and explain each problem in plain words"
    sub = command("doctor", "slopd.cli.operating:doctor", text)
    sub.add_argument("--hub", required=True, help="the hub folder")
    sub.add_argument("--config", help=_DEFAULT_CONFIG)
    sub.add_argument("--state", help=_DEFAULT_STATE)

    text = "install slopd as a service (systemd or launchd)"
    service = commands.add_parser("service", help=text, description=text)
    actions = service.add_subparsers(dest="service_command", required=True)
    text = "render the unit or LaunchAgent with this installation's paths, write it, print what to run"
    install = actions.add_parser("install", help=text, description=text)
    install.set_defaults(handler="slopd.cli.operating:service_install")
    kind = install.add_mutually_exclusive_group(required=True)
    for flag, help_text in (
        ("systemd", "a system service, slopd@HUB.service (run as root)"),
        ("systemd-user", "a per-user service (systemctl --user)"),
        ("launchd", "a macOS LaunchAgent"),
    ):
        kind.add_argument(f"--{flag}", dest="kind", action="store_const", const=flag, help=help_text)
    install.add_argument("--hub", required=True, help="the hub folder")
    install.add_argument("--config", help="TOML config (default: the default config, if it exists)")
    install.add_argument("--dry-run", action="store_true", help="print the files; write nothing")
    install.add_argument("--target-dir", metavar="DIR", help="write into DIR instead of the usual place")
