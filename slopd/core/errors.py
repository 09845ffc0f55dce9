"""The one error family that ends a command with exit status 2.

```
SetupError              how slopd was called or set up cannot work (exit 2, message names it)
├── UsageError          a command line that cannot be carried out   (cli)
├── ConfigError         the config or a trusted file around it      (shell.config)
└── LaneError           a hub lane is missing or not a directory    (shell.lanes; also an OSError)
```
Every expected outcome that is not a set-up problem is a value, never an exception
(`EnvelopeError` is the parser's one exception, answered with an error reply).
"""

from __future__ import annotations


class SetupError(Exception):
    """slopd cannot work as called or set up; the message names the file, key or option."""


class UsageError(SetupError):
    """A problem with how slopd was called: exit 2."""
