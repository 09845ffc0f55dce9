"""The checks of single config values: numbers, strings, argvs, names, paths, URLs, origins.

Rules:
1. A check is `(value, key) -> value`: it returns the value as the config holds it, or raises
   `ConfigError` naming `key` and what was expected; a list's mistakes are reported together.
2. A check's docstring is the type the config reference shows for its keys (`table` rule 3): a
   check without one stops the reference's generator.
3. A duration is a finite number of seconds of at most `MAX_SECONDS`; booleans are not numbers.
"""

from __future__ import annotations

import math
import urllib.parse
from pathlib import Path

from slopd.core import origins
from slopd.core.orders import REQUIREMENTS
from slopd.core.validation import PARTY_PATTERN
from slopd.shell.config.table import ConfigError, Table, each, type_error

MAX_SECONDS = 1e9  # about 31 years: any longer duration is a mistake, and overflows date arithmetic


def _number(value: object, key: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise type_error(key, "a number", value)
    if not math.isfinite(value) or abs(value) > MAX_SECONDS:
        raise ConfigError(f"{key}: must be a finite number of seconds up to {MAX_SECONDS:g}, got {value!r}")
    return float(value)


def positive(value: object, key: str) -> float:
    """seconds, more than 0"""
    number = _number(value, key)
    if number <= 0:
        raise ConfigError(f"{key}: must be greater than 0")
    return number


def non_negative(value: object, key: str) -> float:
    """seconds, 0 or more"""
    number = _number(value, key)
    if number < 0:
        raise ConfigError(f"{key}: must not be negative")
    return number


def positive_int(value: object, key: str) -> int:
    """an integer, 1 or more"""
    if isinstance(value, bool) or not isinstance(value, int):
        raise type_error(key, "an integer", value)
    if value < 1:
        raise ConfigError(f"{key}: must be at least 1")
    return value


def string(value: object, key: str) -> str:
    """a non-empty string"""
    if not isinstance(value, str) or not value:
        raise type_error(key, "a non-empty string", value)
    return value


def argv(value: object, key: str) -> tuple[str, ...]:
    """an argv: a non-empty list of strings, run without a shell"""
    if not isinstance(value, list) or not value:
        raise type_error(key, "a non-empty list of strings (an argv)", value)
    return tuple(string(item, f"{key}[{index}]") for index, item in enumerate(value))


def names(value: object, key: str) -> tuple[str, ...]:
    """a non-empty list of recipient names"""
    found = argv(value, key)
    bad = [
        f"{key}: {name!r} is not a valid recipient name"
        for name in found
        if not PARTY_PATTERN.fullmatch(name)
    ]
    if bad:
        raise ConfigError(*bad)
    return found


def env(value: object, key: str) -> dict[str, str]:
    """a table of strings"""
    table = Table(value, key)
    values = each(table.values.items(), lambda name, item: (name, string(item, table.key(name))))
    return dict(values)


def requirement(value: object, key: str) -> str:
    """`"touch"` or `"verified"`"""
    text = string(value, key)
    if text not in REQUIREMENTS:
        raise ConfigError(f"{key}: must be one of {', '.join(map(repr, REQUIREMENTS))}, got {text!r}")
    return text


def boolean(value: object, key: str) -> bool:
    """true or false"""
    if not isinstance(value, bool):
        raise type_error(key, "true or false", value)
    return value


def http_url(value: object, key: str) -> str:
    """an http(s) URL"""
    text = string(value, key)
    try:
        parts = urllib.parse.urlsplit(text)
        parts.port  # noqa: B018  # raises for a port out of range or not a number
    except ValueError as error:
        raise ConfigError(f"{key}: {text!r} is not a URL: {error}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{key}: expected an http:// or https:// URL with a host, got {text!r}")
    return text


def path(value: object, key: str) -> Path:
    """a path, relative to the config file's folder"""
    return Path(string(value, key))


def origin_list(value: object, key: str) -> tuple[origins.Origin, ...]:
    """a list of origins (`https://host[:port]`)"""
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise type_error(key, 'a list of origins such as "https://console.example:8443"', value)
    found, errors = [], []
    for index, item in enumerate(value):
        try:
            found.append(origins.parse(item))
        except origins.OriginError as error:
            errors.append(f"{key}[{index}]: {error}")
    if errors:
        raise ConfigError("; ".join(errors))
    return tuple(found)
