"""A loopback port for a server a test starts itself, on a port it must name in advance.

Rule: the port is free when chosen and lies below the kernel's ephemeral range. A port from
`bind(0)` lies inside that range, where an outgoing connection of a test running alongside may
take it between the probe and the server's own bind (Syncthing then exits with "address already
in use"; CI saw it). Below the range only another listener that names its port can collide, which
a test starting a long-lived server still guards against by starting again on a fresh port.
"""

from __future__ import annotations

import random
import socket
from pathlib import Path

LOWEST = 10_000


def free_port() -> int:
    """A loopback TCP port nothing listens on now, in [10000, start of the ephemeral range)."""
    ceiling = _ephemeral_start()
    for _ in range(200):
        port = random.randrange(LOWEST, ceiling)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise AssertionError(f"no free loopback port in {LOWEST}-{ceiling - 1}")


def _ephemeral_start() -> int:
    try:
        start = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        start = 32768  # Linux's default; macOS's range starts at 49152
    return max(start, LOWEST + 1_000)
