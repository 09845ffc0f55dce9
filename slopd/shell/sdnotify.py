"""sd_notify: tell systemd we are ready, alive, reloading or stopping. A few lines, never raising.

Rules:
1. Without `NOTIFY_SOCKET` every call is a no-op; a path starting `/` is a socket file, one
   starting `@` an abstract socket; anything else (vsock) is ignored.
2. A send never raises and never blocks: a service manager that went away or stopped reading
   must not take the daemon with it.
3. The watchdog is on only when `WATCHDOG_USEC` is set and `WATCHDOG_PID` (if set) is ours;
   pings are due every half interval.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping


class SystemdNotifier:
    def __init__(self, environ: Mapping[str, str] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.address = env.get("NOTIFY_SOCKET", "")
        usec = env.get("WATCHDOG_USEC", "")
        pid = env.get("WATCHDOG_PID", "")
        ours = not pid or pid == str(os.getpid())
        self.watchdog_interval = int(usec) / 2e6 if usec.isdigit() and int(usec) > 0 and ours else None
        self._next_ping = 0.0

    def send(self, message: str) -> bool:
        """Send one datagram of newline-separated assignments; False if it could not go."""
        address = self.address
        if not address or address[0] not in "/@":
            return False
        target = "\0" + address[1:] if address[0] == "@" else address
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
                sock.setblocking(False)  # a manager that stopped reading must not stall the loop
                sock.connect(target)
                sock.send(message.encode("utf-8", "replace"))
        except OSError:
            return False
        return True

    def ready(self, status: str) -> None:
        self.send(f"READY=1\nSTATUS={status}")

    def status(self, text: str) -> None:
        self.send(f"STATUS={text}")

    def reloading(self) -> None:
        self.send(f"RELOADING=1\nMONOTONIC_USEC={time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000}")

    def stopping(self) -> None:
        self.send("STOPPING=1")

    def ping_due(self, now: float) -> float:
        """When the next watchdog ping is due (inf when the watchdog is off)."""
        return self._next_ping if self.watchdog_interval is not None else float("inf")

    def ping(self, now: float) -> None:
        """`WATCHDOG=1` — call only when the loop and the observer are known to be healthy."""
        if self.watchdog_interval is not None and now >= self._next_ping:
            self.send("WATCHDOG=1")
            self._next_ping = now + self.watchdog_interval
