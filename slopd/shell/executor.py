"""Running configured commands: fixed argv, untrusted data only on stdin and in `SLOP_*`.

Rules:
1. argv comes from the config alone; there is never a shell.
2. The child gets its own session (process group); on timeout or cancel the whole group gets
   SIGTERM, then SIGKILL after a short grace.
3. The child's environment is the daemon's minus systemd's notify/watchdog/socket variables
   and any inherited `SLOP_*`, plus the `SLOP_*` values given.
4. stdout is kept up to a cap (the rest is drained and dropped); stderr keeps its tail.
5. `run` never raises for the child's behaviour: it returns a `core.outcome.RunResult`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from slopd.core.outcome import RunResult

STDOUT_CAP = 1024 * 1024
STDERR_TAIL = 4096
KILL_GRACE = 2.0
_DAEMON_ONLY = (
    "NOTIFY_SOCKET",
    "WATCHDOG_USEC",
    "WATCHDOG_PID",
    "LISTEN_FDS",
    "LISTEN_PID",
    "LISTEN_FDNAMES",
)


Runner = Callable[..., RunResult]  # `run`'s signature; tests pass their own


def child_environment(slop: Mapping[str, str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in _DAEMON_ONLY and not key.startswith("SLOP_")
    }
    env.update(extra or {})
    env.update(slop)
    return env


class _Drain(threading.Thread):
    """Read a pipe to its end, keeping the head (stdout) or the tail (stderr)."""

    def __init__(self, pipe: object, *, keep_head: int = 0, keep_tail: int = 0) -> None:
        super().__init__(daemon=True)
        self.pipe = pipe
        self.keep_head, self.keep_tail = keep_head, keep_tail
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = False

    def run(self) -> None:
        read = self.pipe.read1  # type: ignore[attr-defined]  # a BufferedReader
        while chunk := read(65536):
            if self.keep_head:
                room = self.keep_head - len(self.head)
                self.head += chunk[: max(room, 0)]
                self.dropped = self.dropped or len(chunk) > room
            if self.keep_tail:
                self.tail += chunk
                del self.tail[: max(len(self.tail) - self.keep_tail, 0)]


def _feed(pipe: object, data: bytes) -> None:
    with contextlib.suppress(OSError):
        pipe.write(data)  # type: ignore[attr-defined]
    with contextlib.suppress(OSError):
        pipe.close()  # type: ignore[attr-defined]


def _kill_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def run(
    argv: Sequence[str],
    *,
    stdin: bytes,
    env: Mapping[str, str],
    timeout: float,
    cwd: Path | None = None,
    cancel: threading.Event | None = None,
    stdout_cap: int = STDOUT_CAP,
) -> RunResult:
    """Run `argv` to completion, timeout or cancellation."""
    try:
        process = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as error:
        return RunResult(None, b"", b"", start_error=f"{argv[0]}: {error.strerror or error}")
    out = _Drain(process.stdout, keep_head=stdout_cap)
    err = _Drain(process.stderr, keep_tail=STDERR_TAIL)
    feeder = threading.Thread(target=_feed, args=(process.stdin, stdin), daemon=True)
    for thread in (out, err, feeder):
        thread.start()
    deadline = time.monotonic() + timeout
    timed_out = cancelled = False
    while process.poll() is None:
        if cancel is not None and cancel.is_set():
            cancelled = True
        elif time.monotonic() >= deadline:
            timed_out = True
        if timed_out or cancelled:
            _stop(process)
            break
        try:
            process.wait(timeout=0.05 if cancel is not None else max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            continue
    # The child is gone; descendants that kept its pipes open are ended with it.
    out.join(timeout=1.0)
    err.join(timeout=1.0)
    if out.is_alive() or err.is_alive():
        _kill_group(process.pid, signal.SIGKILL)
        out.join()
        err.join()
    return RunResult(
        exit_code=process.returncode,
        stdout=bytes(out.head),
        stderr_tail=bytes(err.tail),
        timed_out=timed_out,
        cancelled=cancelled,
        truncated=out.dropped,
    )


def _stop(process: subprocess.Popen[bytes]) -> None:
    _kill_group(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=KILL_GRACE)
    _kill_group(process.pid, signal.SIGKILL)
    process.wait()
