"""The `slopd` command: the only place that turns failures into exit codes.

Exit status: 0 success, 1 a negative answer (invalid, not found, no reply in time), 2 a usage
or set-up error (`core.errors.SetupError`, or an OSError), 130 interrupted. Every error
message names the command, the file and the reason.

`parser` holds every option, built from `core.vocabulary` alone; each command names its handler
`module:function`, imported only when that command runs, so a per-message command pays for
nothing else (`tests/e2e/cli/test_command_imports.py`). The modules it may name are the ones imported
below under `TYPE_CHECKING` — never at run time, but seen by import-linter and mypy, so the
layers contract checks them as it checks everything else (`tests/e2e/cli/test_cli.py` holds the parser's
handlers to this list):

    hubs       init, hub home, status, tail, notes      daemon     run
    messages   send                                     envelopes  validate
    keys       keygen, sign, verify                     operating  doctor, service install
    handoff    handoff …                                standup    standup
    tokens     token add, token revoke                  console    console enroll
    mcp        mcp                                      hooks      hook
    wake       wait                                     baton      baton …
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from slopd.cli import parser as parser_module
from slopd.core.errors import SetupError

if TYPE_CHECKING:  # the command modules (see above): imported when their command runs
    from slopd.cli import (  # noqa: F401
        baton,
        console,
        daemon,
        envelopes,
        handoff,
        hooks,
        hubs,
        keys,
        mcp,
        messages,
        operating,
        standup,
        tokens,
        wake,
    )


def _handler(spec: str) -> Callable[..., int]:
    module, _, function = spec.partition(":")
    handler: Callable[..., int] = getattr(importlib.import_module(module), function)
    return handler


def main(argv: Sequence[str] | None = None) -> int:
    args = parser_module.build().parse_args(argv)
    try:
        return int(_handler(args.handler)(args))
    except SetupError as error:
        print(f"slopd {args.command}: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        if error.filename:
            print(f"slopd {args.command}: {error.filename}: {error.strerror or error}", file=sys.stderr)
        else:  # watchdog raises such; still name what the command was working on
            context = next(
                (value for key in ("hub", "file", "path") if (value := getattr(args, key, None))), "."
            )
            print(f"slopd {args.command}: {error.strerror or error} (working on {context})", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
