"""Where the console is, as a browser sees it: its public URL, its origin and its RP ID. Pure.

Rules (SPEC §15; `[console]` in the config):
1. The public URL is `[console] public_url`, else the URL the server listens on, with
   `localhost` for a loopback address (WebAuthn refuses IP addresses as RP IDs).
2. The RP ID is `[console] rp_id`, else the public URL's host when it is a name.
3. Passkeys need a secure context on a name: https on a name, or http on localhost. When the
   console cannot have that, `problem` says why and what to set; the pages say it, and no
   ceremony starts.
4. Cookies are `Secure` off loopback (the public URL is not `http://localhost`).
5. A state-changing request must come from the public URL's origin (its `Origin` header).
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass

_URL = re.compile(r"(https?)://(\[[^\]]+\]|[^/:]+)(?::([0-9]+))?/?")


@dataclass(frozen=True, slots=True)
class Site:
    public_url: str
    rp_id: str | None
    secure: bool
    problem: str | None = None

    @property
    def origin(self) -> str:
        """Rule 5: the only origin a state-changing request may carry."""
        return self.public_url


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def resolve(listening: str, rp_id: str | None = None, public_url: str | None = None) -> Site:
    """Rules 1-4, from the URL the server listens on and the `[console]` settings."""
    match = _URL.fullmatch(listening)
    if match is None:
        raise ValueError(f"not a URL the server listens on: {listening!r}")
    scheme, host, port = match.group(1), match.group(2), match.group(3)
    address = _address(host)
    if address is not None and address.is_loopback:
        host = "localhost"
    elif address is not None and rp_id is not None:
        host = rp_id
    url = public_url or f"{scheme}://{host}{f':{port}' if port else ''}"
    public = _URL.fullmatch(url)
    assert public is not None  # the config checked public_url; the listening URL was just parsed
    public_scheme, public_host = public.group(1), public.group(2)
    secure = not (public_scheme == "http" and public_host == "localhost")
    if _address(public_host) is not None:
        problem = (
            f"the console is reached at {url}, an address: passkeys need a host name; set "
            "[console] public_url to the https URL you open (a reverse proxy or a tailnet name)"
        )
        return Site(url, None, secure, problem)
    if public_scheme == "http" and public_host != "localhost":
        problem = f"{url} is plain http: passkeys need https on a name (or http://localhost)"
        return Site(url, None, secure, problem)
    return Site(url, rp_id or public_host, secure)


_LOCAL_PATH = re.compile(r"/(?:[A-Za-z0-9][A-Za-z0-9._~%/?=&+-]*)?")


def local_path(wanted: object, fallback: str = "/approvals") -> str:
    """Where to go after signing in: a path of this console only. `//host`, `/\\host` (which
    browsers read as `//host`), a scheme or a control character would send the human elsewhere
    right after a passkey ceremony — an open redirect — so anything but a plain path is `fallback`."""
    text = wanted if isinstance(wanted, str) else ""
    if _LOCAL_PATH.fullmatch(text) is None or "//" in text:
        return fallback
    return text
