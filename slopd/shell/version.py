"""This installation's version: the one source every surface reports (`slopd --version`, the
presence files, MCP's `serverInfo.version`, `/openapi.json`) — the package metadata, which
`pyproject.toml`'s `version` sets. Read once, on first use: `importlib.metadata` costs
milliseconds at start-up, which per-message commands must not pay."""

from __future__ import annotations

from functools import cache

UNKNOWN = "0+unknown"  # running from a tree that was never installed


@cache
def version() -> str:
    from importlib import metadata  # noqa: PLC0415  # only when a version is asked for

    try:
        return metadata.version("slopd")
    except metadata.PackageNotFoundError:
        return UNKNOWN
