"""The commands that operate an installation: doctor, service install.

Rules:
1. Their handler is `slopd.cli.operating`.
2. `service install` writes nothing with `--dry-run`, and only into `--target-dir` when given.
"""

from __future__ import annotations

from slopd.cli.parser.options import DEFAULT_CONFIG, DEFAULT_STATE, Commands, command


def add(commands: Commands) -> None:
    text = "check the set-up of a hub and explain each problem in plain words"
    sub = command(commands, "doctor", "slopd.cli.operating:doctor", text)
    sub.add_argument("--hub", required=True, help="the hub folder")
    sub.add_argument("--config", help=DEFAULT_CONFIG)
    sub.add_argument("--state", help=DEFAULT_STATE)

    text = "install slopd as a service (systemd or launchd)"
    service = commands.add_parser("service", help=text, description=text)
    actions = service.add_subparsers(dest="service_command", required=True)
    text = "render the unit or LaunchAgent with this installation's paths, write it, print what to run"
    install = command(actions, "install", "slopd.cli.operating:service_install", text)
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
