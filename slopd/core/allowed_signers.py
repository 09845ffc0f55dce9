"""The OpenSSH allowed_signers file (ssh-keygen(1) ALLOWED SIGNERS): text in, frozen entries out.

Rules (SPEC §6; research §1.5; OpenSSH `sshsig.c`, `misc.c`):
1. A line is `principals [options] keytype base64 [comment…]`; blank lines and `#` lines are
   skipped; fields are separated by spaces or tabs; a `"…"` value may hold spaces and commas.
2. Options are comma-separated, names case-insensitive: `namespaces="…"`, `valid-after="…"`,
   `valid-before="…"`, each at most once. Values must be quoted, as ssh-keygen requires.
3. This is the file people keep for git commit signing, so a line with a key type slopd does not
   accept for orders (RSA, ECDSA, certificates, hybrids: `core.sshkeys`) or a `cert-authority`
   line is skipped, and `read` reports it as `Skipped` for a warning. Where ssh-keygen skips a
   *bad* line and carries on, `read` raises `AllowedSignersError` naming the line: slopd refuses
   to start rather than drop a line silently (unknown options, malformed lines, keys or times).
4. Times are `YYYYMMDD`, `YYYYMMDDHHMM` or `YYYYMMDDHHMMSS`, UTC with a `Z` (or `UTC`) suffix,
   else in `local_zone` read as ssh-keygen reads it: `mktime` with `tm_isdst = 0`, so the
   zone's standard offset even in summer.
5. Whom the entries allow to sign, with which key, where and when, is `core.authorizing`'s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo

from slopd.core import sshkeys
from slopd.core.sshkeys import PublicKey
from slopd.core.wire import SignatureError, show

_TIME = re.compile(r"([0-9]{8}|[0-9]{12}|[0-9]{14})((?i:z|utc)?)")
_KEY_TYPE = re.compile(r"(?:ssh-|ecdsa-|sk-|rsa-|webauthn-)\S+")
# A first field that is a key type OpenSSH knows, not a principal that merely starts like one.
_KNOWN_KEY_TYPE = re.compile(
    r"(?:ssh-(?:ed25519|ed448|rsa|dss|mldsa\S*)|ecdsa-sha2-nistp(?:256|384|521)"
    r"|(?:webauthn-)?sk-\S+@openssh\.com|rsa-sha2-(?:256|512))(?:-cert-v01@openssh\.com)?"
)
_CERT_AUTHORITY = re.compile(r"(?:^|,)cert-authority(?:,|=|$)", re.IGNORECASE)
_TIME_OPTIONS = ("valid-after", "valid-before")


class AllowedSignersError(ValueError):
    """A line slopd will not accept; the message names the line number and why."""

    line: int

    def __init__(self, line: int, reason: str) -> None:
        self.line = line
        self.reason = reason
        super().__init__(f"allowed_signers line {line}: {reason}")


@dataclass(frozen=True, slots=True)
class Entry:
    line: int
    principals: str
    public_key: PublicKey
    namespaces: str | None
    valid_after: datetime | None
    valid_before: datetime | None


@dataclass(frozen=True, slots=True)
class Skipped:
    """A line left out (rule 3), for the warning at start and in `slopd doctor`."""

    line: int
    reason: str


@dataclass(frozen=True, slots=True)
class Signers:
    entries: tuple[Entry, ...]
    skipped: tuple[Skipped, ...] = ()


def read(text: str, *, local_zone: tzinfo) -> Signers:
    """Every entry of an allowed_signers file and every line skipped; raises `AllowedSignersError`
    at the first bad line."""
    entries, skipped = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        entry = _parse_line(number, line.removesuffix("\r"), local_zone)
        if isinstance(entry, Entry):
            entries.append(entry)
        elif entry is not None:
            skipped.append(entry)
    return Signers(tuple(entries), tuple(skipped))


def parse(text: str, *, local_zone: tzinfo) -> tuple[Entry, ...]:
    """The entries of `read` (the lines it skips left out)."""
    return read(text, local_zone=local_zone).entries


def _field(text: str, number: int) -> tuple[str, str]:
    """The text up to the first space or tab outside double quotes, and the rest after blanks."""
    quoted = False
    at = 0
    while at < len(text):
        char = text[at]
        if char == "\\" and text[at + 1 : at + 2] == '"':
            at += 1
        elif char == '"':
            quoted = not quoted
        elif char in " \t" and not quoted:
            break
        at += 1
    if quoted:
        raise AllowedSignersError(number, "unterminated quote")
    return text[:at], text[at:].lstrip(" \t")


def _parse_line(number: int, line: str, local_zone: tzinfo) -> Entry | Skipped | None:
    text = line.lstrip(" \t")
    if not text or text.startswith("#"):
        return None
    principals, rest = _field(text, number)
    if _KNOWN_KEY_TYPE.fullmatch(principals):
        raise AllowedSignersError(number, "missing principals: the line starts with a key")
    if principals.startswith('"') and principals.endswith('"') and len(principals) >= 2:
        principals = principals[1:-1]
    if not principals or '"' in principals:
        raise AllowedSignersError(number, "malformed principals")
    token, rest = _field(rest, number)
    if not token:
        raise AllowedSignersError(number, "missing key")
    options: dict[str, str] = {}
    if not _KEY_TYPE.fullmatch(token):
        if _CERT_AUTHORITY.search(token):
            return Skipped(number, "cert-authority lines are not used for orders (list each key)")
        options = _parse_options(token, number)
        token, rest = _field(rest, number)
    keytype = token
    blob, _, _comment = rest.replace("\t", " ").partition(" ")
    if not keytype or not blob:
        raise AllowedSignersError(number, "missing key")
    try:
        public_key = sshkeys.from_fields(keytype, blob)
    except sshkeys.UnacceptedKeyTypeError as error:
        return Skipped(number, error.reason)
    except SignatureError as error:
        raise AllowedSignersError(number, error.reason) from None
    valid_after, valid_before = (
        _parse_time(options[name], name, number, local_zone) if name in options else None
        for name in _TIME_OPTIONS
    )
    if valid_after is not None and valid_before is not None and valid_before <= valid_after:
        raise AllowedSignersError(number, "valid-before is not after valid-after")
    return Entry(number, principals, public_key, options.get("namespaces"), valid_after, valid_before)


def _parse_options(token: str, number: int) -> dict[str, str]:
    options: dict[str, str] = {}
    rest = token
    while True:
        name, equals, rest = rest.partition("=")
        lowered = name.lower()
        if not equals or lowered not in ("namespaces", *_TIME_OPTIONS):
            shown = name.partition(",")[0]
            raise AllowedSignersError(number, f"unknown option {show(shown)}" if shown else "empty option")
        if lowered in options:
            raise AllowedSignersError(number, f"option {lowered!r} given twice")
        value, rest = _dequote(rest, lowered, number)
        options[lowered] = value
        if not rest:
            return options
        if not rest.startswith(",") or rest == ",":
            raise AllowedSignersError(number, f"malformed options after {lowered!r}")
        rest = rest[1:]


def _dequote(text: str, name: str, number: int) -> tuple[str, str]:
    """A `"…"` value (`\\"` stands for a quote) and the text after it, as OpenSSH's opt_dequote."""
    if not text.startswith('"'):
        raise AllowedSignersError(number, f"the value of {name!r} must be in double quotes")
    value: list[str] = []
    at = 1
    while at < len(text) and text[at] != '"':
        if text[at] == "\\" and text[at + 1 : at + 2] == '"':
            at += 1
        value.append(text[at])
        at += 1
    if at >= len(text):
        raise AllowedSignersError(number, f"the value of {name!r} has no closing quote")
    return "".join(value), text[at + 1 :]


def _parse_time(value: str, name: str, number: int, local_zone: tzinfo) -> datetime:
    match = _TIME.fullmatch(value)
    if match is None:
        raise AllowedSignersError(number, f"{name} {value!r} is not YYYYMMDD[HHMM[SS]][Z]")
    digits, utc = match.groups()
    month, day, hour, minute, second = (int(digits[at : at + 2] or "0") for at in range(4, 14, 2))
    try:
        moment = datetime(int(digits[:4]), month, day, hour, minute, second)
    except ValueError as error:
        raise AllowedSignersError(number, f"{name} {value!r}: {error}") from None
    if utc:
        moment = moment.replace(tzinfo=UTC)
    else:
        moment = moment.replace(tzinfo=timezone(_standard_offset(moment, local_zone)))
    if moment <= datetime(1970, 1, 1, tzinfo=UTC):
        raise AllowedSignersError(number, f"{name} {value!r} is not after 1970")
    return moment


def _standard_offset(moment: datetime, zone: tzinfo) -> timedelta:
    """The zone's offset at `moment` without daylight saving, as `mktime` with `tm_isdst = 0`."""
    offset = zone.utcoffset(moment) or timedelta(0)
    return offset - (zone.dst(moment) or timedelta(0))
