"""The wire format of the HTTP transport: reading a request's parts, writing JSON and problems.

Rules:
1. Query numbers are finite; cursors and limits are whole numbers (digits only, at most 18), a
   bad one is 400 naming the parameter.
2. A media type is parsed as RFC 9110 §8.3.1 says (parameters in any order, values unquoted);
   control characters in it are a 400.
3. A body is read up to `limit` bytes and no further: a declared or actual excess is 413.
4. JSON is compact UTF-8; a problem is `application/problem+json` with its own headers.
"""

from __future__ import annotations

import json
import math

from starlette.requests import Request
from starlette.responses import Response

from slopd.transport.problems import MEDIA_TYPE as PROBLEM
from slopd.transport.problems import Problem


def as_json(body: object, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    data = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    return Response(data, status, headers, media_type="application/json")


def as_problem(problem: Problem, headers: dict[str, str]) -> Response:
    data = json.dumps(problem.body(), ensure_ascii=False).encode()
    return Response(data, problem.status, {**headers, **problem.headers}, media_type=PROBLEM)


def number(request: Request, name: str, default: float, low: float, high: float | None) -> float:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise Problem("bad-request", f"`{name}` must be a number, not {raw!r}") from None
    if not math.isfinite(value) or value < low:
        raise Problem("bad-request", f"`{name}` must be a finite number, at least {low:g}")
    return value if high is None else min(value, high)


def integer(request: Request, name: str, default: int, low: int, high: int | None) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise Problem("bad-request", f"`{name}` must be a whole number, not {raw[:40]!r}")
    value = int(raw)
    if value < low:
        raise Problem("bad-request", f"`{name}` must be at least {low}")
    return value if high is None else min(value, high)


def media_type(header: str) -> tuple[str, dict[str, str]]:
    """`type/subtype` and its parameters, names lower-cased, values unquoted (RFC 9110 §8.3.1)."""
    if any(ord(char) < 0x20 or ord(char) == 0x7F for char in header):
        raise Problem("bad-request", "the Content-Type holds control characters")
    kind, *parts = header.split(";")
    parameters = {}
    for part in parts:
        name, _, value = part.partition("=")
        parameters[name.strip().lower()] = value.strip().strip('"')
    return kind.strip().lower(), parameters


async def read_body(request: Request, limit: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise Problem("too-large", f"{declared} bytes is over the limit of {limit}")
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise Problem("too-large", f"the body is over the limit of {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)
