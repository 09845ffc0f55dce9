"""The `slopd` command: the only place that turns failures into exit codes.

Exit status: 0 success, 1 a negative answer (invalid, not found, no reply in time), 2 a usage
or set-up error (`core.errors.SetupError`, or an OSError), 130 interrupted. Every error
message names the command, the file and the reason.

The commands live by what they touch: `hubs` (init, run, status, tail, notes), `envelopes`
(send, validate), `keys` (keygen, sign, verify), `operating` (doctor, service); `parser`
holds every option.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence

from slopd.cli import parser as parser_module
from slopd.core.errors import SetupError


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
