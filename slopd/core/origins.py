"""Web origins (RFC 6454) and which of them may reach `/mcp` from a browser (SPEC §14). Pure.

Rules:
1. An origin is `scheme://host[:port]` with scheme `http` or `https`, nothing else: no user,
   path, query or fragment. It compares by scheme, lower-cased host and port, the default port
   (80, 443) written or not; `parse` names every reason a text is not one.
2. The server answers for the loopback names (`127.0.0.1`, `localhost`, `[::1]`), the address it
   is bound to, the address a connection reached, and the hosts of `[http] allowed_origins`; a
   `Host` naming anything else is refused (DNS rebinding). A `Host` with no port, or any port,
   names the same host.
3. A request's `Origin` is accepted when it is the server's own — its scheme, the port it
   serves on, and the address it is bound to or the connection reached (with the loopback names
   when bound to loopback or to every address) — or one of `allowed_origins`; `null` (an opaque
   origin) and anything that is not an origin are refused.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "[::1]"})
EVERY_ADDRESS = frozenset({"0.0.0.0", "[::]"})  # noqa: S104  # a bind to these serves loopback too


@dataclass(frozen=True, slots=True)
class Origin:
    scheme: str
    host: str  # lower-case; an IPv6 address in brackets
    port: int

    def __str__(self) -> str:
        port = "" if DEFAULT_PORTS[self.scheme] == self.port else f":{self.port}"
        return f"{self.scheme}://{self.host}{port}"


class OriginError(ValueError):
    def __init__(self, text: str, reasons: list[str]) -> None:
        super().__init__(f"{text!r} is not an origin (scheme://host[:port]): {'; '.join(reasons)}")
        self.reasons = reasons


def bracketed(host: str) -> str:
    """A host as a URL writes it: an IPv6 address in brackets, names lower-cased."""
    host = host.lower()
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def parse(text: str) -> Origin:
    """Rule 1: the origin `text` serializes, or `OriginError` naming every reason it is not one."""
    reasons: list[str] = []
    if any(ord(char) <= 0x20 or ord(char) == 0x7F for char in text):
        raise OriginError(text, ["it holds spaces or control characters"])
    parts = urlsplit(text)
    if parts.scheme not in DEFAULT_PORTS:
        reasons.append(f"the scheme must be http or https, not {parts.scheme or 'missing'!r}")
    if parts.username is not None or parts.password is not None:
        reasons.append("an origin has no user or password")
    if parts.path:
        reasons.append(f"an origin has no path (drop {parts.path!r})")
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        reasons.append("an origin has no query or fragment")
    if not parts.hostname:
        reasons.append("the host is missing")
    try:
        port = parts.port
    except ValueError:
        reasons.append("the port must be a number from 0 to 65535")
        port = None
    if reasons:
        raise OriginError(text, reasons)
    assert parts.hostname is not None
    return Origin(parts.scheme, bracketed(parts.hostname), port or DEFAULT_PORTS[parts.scheme])


def host_name(header: str) -> str:
    """The host of a `Host` header (`name`, `name:port`, `[v6]:port`), lower-cased, port dropped."""
    header = header.strip().lower()
    if header.startswith("["):
        return header[: header.find("]") + 1] if "]" in header else header
    return header.rpartition(":")[0] if ":" in header else header


def is_loopback(host: str) -> bool:
    host = host.strip("[]").lower()
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Gate:
    """Rules 2 and 3 for one server: bound to `bind`, `allowed` configured."""

    bind: str
    allowed: frozenset[Origin] = frozenset()

    @classmethod
    def of(cls, bind: str, allowed: Iterable[Origin]) -> Gate:
        return cls(bracketed(bind), frozenset(allowed))

    def own_names(self, reached: str) -> frozenset[str]:
        """Rule 3's names: the bound and the reached address, and loopback's if it serves there."""
        names = frozenset({self.bind, bracketed(reached)})
        if is_loopback(self.bind) or self.bind in EVERY_ADDRESS:
            return names | LOOPBACK_NAMES
        return names

    def host_allowed(self, header: str | None, reached: str) -> bool:
        """Rule 2, for the `Host` header of a connection that reached address `reached`."""
        if not header:
            return False
        name = host_name(header)
        names = LOOPBACK_NAMES | {self.bind, bracketed(reached)}
        return name in names or any(origin.host == name for origin in self.allowed)

    def origin_allowed(self, header: str, scheme: str, reached: str, port: int) -> bool:
        """Rule 3, for an `Origin` header on a connection to `scheme` at `reached`:`port`."""
        try:
            origin = parse(header)
        except OriginError:
            return False
        if origin in self.allowed:
            return True
        return (origin.scheme, origin.port) == (scheme, port) and origin.host in self.own_names(reached)
