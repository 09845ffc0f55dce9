"""Why slopd reads envelopes itself: python-frontmatter 1.x against `slopd.core.validation.parse`.

Each row is one malformed or hostile file, read by both. python-frontmatter (`frontmatter.load`,
which reads a path as UTF-8 text, strips it, splits on the regex `^-{3,}\\s*$`, loads the part
between with `yaml.load(Loader=CSafeLoader)` and keeps the result only if it is a dict) returns
empty, retyped, truncated or duplicated metadata without an error, or fails with an exception of
whatever kind PyYAML or Python raised; slopd raises `EnvelopeError` with a reason naming the
fault, or reads the exact strings written. The rows where both agree keep the file from passing
vacuously, and the `dumps` tests record what python-frontmatter's writer gives slopd's reader.

Rerun (python-frontmatter comes with the dev extras, `make install`):
`.venv/bin/python -m pytest -q tests/core/test_frontmatter_comparison.py -n0` (`-n0`: in one process).

Where python-frontmatter serves well: its writer. `frontmatter.dumps` (SafeDumper) quotes every
string YAML 1.1 would retype (`'2026-07-04T07:15:54Z'`, `'0755'`, `'yes'`, `'12:30'`, `'~'`),
writes None as `null`, and every header those tests try comes back from slopd's strict reader as
the same string. It does not write the body byte for byte (a blank line is added after the
closing fence and trailing whitespace is stripped) and sorts keys unless `sort_keys=False`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import frontmatter
import pytest
import yaml

from slopd.core.envelope import Envelope, EnvelopeError, render
from slopd.core.validation import parse
from tests.conftest import envelope_text

BOM = b"\xef\xbb\xbf"
VALID = envelope_text()
ID = "20260704t071553z-example"
CREATED_AT = "2026-07-04T07:15:53Z"
FOUR_LEVEL_BOMB = {"a": "&a [x, x]", "b": "&b [*a, *a]", "c": "&c [*b, *b]", "d": "[*c, *c]"}


def md(body: str = "Body text.\n", **fields: Any) -> bytes:
    """A valid envelope's bytes (tests.conftest.envelope_text), with fields overridden or added."""
    return envelope_text(body, **fields).encode()


def replaced(old: str, new: str) -> bytes:
    """VALID with its first `old` replaced by `new`, as bytes."""
    assert old in VALID
    return VALID.replace(old, new, 1).encode()


def fm_load(tmp_path: Path, data: bytes) -> frontmatter.Post:
    """The file as python-frontmatter reads it: `frontmatter.load(path)`."""
    path = tmp_path / "input.md"
    path.write_bytes(data)
    return frontmatter.load(path)


def slopd_reasons(data: bytes) -> tuple[str, ...]:
    with pytest.raises(EnvelopeError) as caught:
        parse(data, name="input.md")
    return caught.value.reasons


def typed(value: object) -> tuple[type, object]:
    """A value with its exact type, so that `False` is not `0` and a `datetime` is not a `date`."""
    return type(value), value


@dataclass(frozen=True)
class Refused:
    """python-frontmatter returns `probe(post) == seen` silently; slopd refuses with `reason`."""

    name: str
    data: bytes
    probe: Callable[[frontmatter.Post], object]
    seen: object
    reason: str


REFUSED = (
    # Structure: no metadata at all, and no error.
    Refused(
        "no-closing-fence",
        b"---\nprotocol: slop.v1\nid: a1\nto: watcher\n",
        lambda post: post.metadata,
        {},
        "front matter has no closing '---' line",
    ),
    Refused(
        "top-level-list",
        b"---\n- protocol: slop.v1\n- id: a1\n---\nBody.\n",
        lambda post: post.metadata,
        {},
        "must be a mapping of keys to values, not list",
    ),
    Refused(
        "top-level-scalar",
        b"---\nprotocol slop.v1 id a1\n---\nBody.\n",
        lambda post: post.metadata,
        {},
        "must be a mapping of keys to values, not str",
    ),
    Refused(
        "empty-front-matter",
        b"---\n---\nBody.\n",
        lambda post: post.metadata,
        {},
        "must be a mapping of keys to values, not empty",
    ),
    # Meaning changed by YAML 1.1 implicit typing or explicit tags.
    Refused("auth-no", md(auth="no"), lambda post: post["auth"], False, "auth: must be none or signed:FILE"),
    Refused(
        "date-only-created-at",
        md(created_at="2026-07-04"),
        lambda post: post["created_at"],
        date(2026, 7, 4),
        "created_at: must be ISO 8601 in UTC, got '2026-07-04'",
    ),
    Refused(
        "binary-tag-id",
        md(id="!!binary aGVsbG8="),
        lambda post: post["id"],
        b"hello",
        "explicit tag 'tag:yaml.org,2002:binary' is not allowed",
    ),
    Refused(
        "int-tag-id",
        md(id="!!int '7'"),
        lambda post: post["id"],
        7,
        "explicit tag 'tag:yaml.org,2002:int' is not allowed",
    ),
    Refused(
        "set-tag",
        md(tags="!!set {a, b}"),
        lambda post: post["tags"],
        {"a", "b"},
        "explicit tag 'tag:yaml.org,2002:set' is not allowed",
    ),
    # Keys: the last duplicate wins; a merge key supplies a field the file never states.
    Refused(
        "duplicate-id",
        replaced(f"id: {ID}\n", "id: first\nid: second\n"),
        lambda post: post["id"],
        "second",
        "line 3: duplicate key 'id'",
    ),
    Refused(
        "merge-key-supplies-to",
        replaced("to: watcher\n", "<<: {to: watcher}\n"),
        lambda post: post["to"],
        "watcher",
        "to: missing",
    ),
    # Size and shape limits python-frontmatter does not have.
    Refused(
        "alias-bomb-four-levels",
        md(**FOUR_LEVEL_BOMB),
        lambda post: json.dumps(post["d"]).count('"x"'),
        16,
        "anchors and aliases are not allowed",
    ),
    Refused(
        "nesting-33-levels",
        md(deep="[" * 33 + "]" * 33),
        lambda post: json.dumps(post["deep"]).count("["),
        33,
        "nesting deeper than 32 levels",
    ),
    Refused(
        "front-matter-over-64-kib",
        md(pad="x" * 70_000),
        lambda post: len(str(post["pad"])),
        70_000,
        "front matter is over 65536 bytes",
    ),
    Refused(
        "nul-in-body",
        md("a\0b\n"),
        lambda post: "\0" in post.content,
        True,
        "contains a NUL byte",
    ),
    # Fences: python-frontmatter's `^-{3,}\s*$` on stripped text takes lines slopd does not. A
    # fence with trailing spaces or tabs is a fence to both (SPEC §3).
    Refused(
        "four-dash-fences",
        VALID.replace("---\n", "----\n").encode(),
        lambda post: post["id"],
        ID,
        "no front matter: the file must start with a line '---'",
    ),
    Refused(
        "leading-blank-line",
        b"\n" + VALID.encode(),
        lambda post: post["id"],
        ID,
        "no front matter: the file must start with a line '---'",
    ),
    Refused(
        "json-block-in-markdown",
        b'{\n"id": "a1", "to": "watcher"\n}\nBody.\n',
        lambda post: post.metadata,
        {"id": "a1", "to": "watcher"},
        "no front matter: the file must start with a line '---'",
    ),
)


@pytest.mark.parametrize("row", REFUSED, ids=[row.name for row in REFUSED])
def test_python_frontmatter_reads_silently_what_slopd_refuses_by_name(tmp_path: Path, row: Refused) -> None:
    """python-frontmatter returns metadata without an error where slopd names the fault."""
    assert typed(row.probe(fm_load(tmp_path, row.data))) == typed(row.seen)
    assert any(row.reason in reason for reason in slopd_reasons(row.data)), slopd_reasons(row.data)


@dataclass(frozen=True)
class Kept:
    """slopd reads `got(envelope) == wanted`; python-frontmatter gives `probe(post) == seen`."""

    name: str
    data: bytes
    got: Callable[[Envelope], object]
    wanted: object
    probe: Callable[[frontmatter.Post], object]
    seen: object


KEPT = (
    Kept("leading-bom", BOM + VALID.encode(), lambda e: e.id, ID, lambda post: post.metadata, {}),
    Kept(
        "timestamp-created-at",
        VALID.encode(),
        lambda e: e.created_at,
        CREATED_AT,
        lambda post: post["created_at"],
        datetime(2026, 7, 4, 7, 15, 53, tzinfo=UTC),
    ),
    Kept("octal-id", md(id="0755"), lambda e: e.id, "0755", lambda post: post["id"], 493),
    Kept("sexagesimal-id", md(id="12:30"), lambda e: e.id, "12:30", lambda post: post["id"], 750),
    Kept(
        "date-id",
        md(id="2026-07-04"),
        lambda e: e.id,
        "2026-07-04",
        lambda post: post["id"],
        date(2026, 7, 4),
    ),
    Kept("to-on", md(to="on"), lambda e: e.to, "on", lambda post: post["to"], True),
    Kept("hex-to", md(to="0x1F"), lambda e: e.to, "0x1F", lambda post: post["to"], 31),
    Kept(
        "body-whitespace",
        md("\n    indented code\n\n"),
        lambda e: e.body,
        "\n    indented code\n\n",
        lambda post: post.content,
        "indented code",
    ),
    Kept(
        "crlf-body",
        VALID.replace("\n", "\r\n").encode(),
        lambda e: e.body,
        "Body text.\r\n",
        lambda post: post.content,
        "Body text.",
    ),
)


@pytest.mark.parametrize("row", KEPT, ids=[row.name for row in KEPT])
def test_slopd_keeps_the_exact_text_python_frontmatter_drops_or_retypes(tmp_path: Path, row: Kept) -> None:
    """slopd reads the exact strings written where python-frontmatter loses or retypes them."""
    assert typed(row.got(parse(row.data, name="input.md"))) == typed(row.wanted)
    assert typed(row.probe(fm_load(tmp_path, row.data))) == typed(row.seen)


@dataclass(frozen=True)
class Crashed:
    """python-frontmatter raises `error` (not one library error type); slopd refuses with `reason`."""

    name: str
    data: bytes
    error: type[Exception]
    reason: str


CRASHED = (
    Crashed(
        "not-utf-8",
        VALID.encode() + b"\xff",
        UnicodeDecodeError,
        f"not valid UTF-8 (byte offset {len(VALID.encode())})",
    ),
    Crashed("nul-in-front-matter", md(x="a\0b"), yaml.reader.ReaderError, "contains a NUL byte"),
    Crashed(
        "python-tag",
        md(x="!!python/object/apply:os.system ['true']"),
        yaml.constructor.ConstructorError,
        "explicit tag 'tag:yaml.org,2002:python/object/apply:os.system' is not allowed",
    ),
    Crashed("null-key", md(**{"~": "x"}), TypeError, "keys must be strings"),
)


@pytest.mark.parametrize("row", CRASHED, ids=[row.name for row in CRASHED])
def test_both_refuse_but_only_slopd_has_one_error_type(tmp_path: Path, row: Crashed) -> None:
    """python-frontmatter fails with PyYAML's or Python's own exception; slopd with EnvelopeError."""
    with pytest.raises(row.error):
        fm_load(tmp_path, row.data)
    assert any(row.reason in reason for reason in slopd_reasons(row.data)), slopd_reasons(row.data)


@pytest.mark.parametrize("key", ["on", "yes", "content", "handler"])
def test_extra_keys_that_crash_python_frontmatter_are_plain_strings_to_slopd(
    tmp_path: Path, key: str
) -> None:
    """`on:`/`yes:` (bool keys) and `content:`/`handler:` (Post's own arguments) raise TypeError."""
    with pytest.raises(TypeError):
        fm_load(tmp_path, md(**{key: "x"}))
    assert parse(md(**{key: "x"}), name="input.md").extra == {key: "x"}


AGREED = {
    "clean": VALID.encode(),
    "crlf": VALID.replace("\n", "\r\n").encode(),
    "quoted-created-at": md(created_at=f'"{CREATED_AT}"'),
    "tilde-in-reply-to": md(in_reply_to="~"),
    "unknown-string-key": md(note='"reviewed"'),
    "rule-in-body": md("Intro.\n\n---\nnot: front matter\n---\nEnd.\n"),
}


@pytest.mark.parametrize("data", AGREED.values(), ids=AGREED.keys())
def test_both_read_a_clean_envelope_to_the_same_keys_and_strings(tmp_path: Path, data: bytes) -> None:
    """On a well-formed envelope both give the same keys, the same strings and the same body text."""
    envelope, post = parse(data, name="input.md"), fm_load(tmp_path, data)
    headers = envelope.headers()
    assert set(post.keys()) == set(headers)
    for key, value in headers.items():
        seen = post[key]
        shown = seen.strftime("%Y-%m-%dT%H:%M:%SZ") if isinstance(seen, datetime) else seen
        assert typed(shown) == typed(value), key
    assert post.content == envelope.body.replace("\r\n", "\n").strip()
    assert frontmatter.checks(data.decode())


def test_frontmatter_checks_disagrees_with_what_it_then_parses() -> None:
    """`checks` says a file with no closing fence has front matter, and a BOM file has none."""
    unclosed = "---\nprotocol: slop.v1\nid: a1\n"
    assert frontmatter.checks(unclosed)
    assert frontmatter.loads(unclosed).metadata == {}
    assert not frontmatter.checks((BOM + VALID.encode()).decode())
    assert parse(BOM + VALID.encode(), name="input.md").id == ID


def post_of(body: str, headers: dict[str, str | None]) -> frontmatter.Post:
    """A Post with these headers, set after construction (`Post(**headers)` clashes on `handler`)."""
    post = frontmatter.Post(body)
    post.metadata.update(headers)
    return post


REPLY_HEADERS: dict[str, str | None] = {
    "protocol": "slop.v1",
    "id": f"{ID}.ack",
    "type": "ack",
    "from": "watcher",
    "to": "claude-code",
    "in_reply_to": ID,
    "created_at": "2026-07-04T07:15:54Z",
    "auth": "none",
    "class": "accepted",
    "mode": "discuss",
}
ERROR_HEADERS: dict[str, str | None] = REPLY_HEADERS | {
    "id": "input.invalid-3f2a",
    "type": "error",
    "to": "human",
    "in_reply_to": None,
    "created_at": "2026-07-04T07:15:54.123456+00:00",
    "file": "bad.md",
}
AWKWARD_VALUES = [
    "0755",
    "yes",
    "no",
    "on",
    "12:30",
    "~",
    "null",
    "2026-07-04",
    "1e3",
    "a\u2028b",
    " lead",
    "#x",
]


# Where python-frontmatter serves: its writer's headers are safe for slopd's reader; its body is not.
@pytest.mark.parametrize("headers", [REPLY_HEADERS, ERROR_HEADERS], ids=["ack", "error-without-id"])
def test_frontmatter_dumps_headers_round_trip_through_slopd(headers: dict[str, str | None]) -> None:
    """`dumps` quotes the timestamp, writes `null`, and slopd reads every header back unchanged."""
    extra: dict[str, str | None] = {f"x{number}": value for number, value in enumerate(AWKWARD_VALUES)}
    text = frontmatter.dumps(post_of("Done.\n", headers | extra), sort_keys=False)
    assert f"created_at: '{headers['created_at']}'\n" in text
    if headers["in_reply_to"] is None:
        assert "\nin_reply_to: null\n" in text
    envelope = parse(text.encode(), name="reply.md")
    assert envelope.headers() == headers | extra


def test_frontmatter_dumps_sorts_keys_and_reshapes_the_body() -> None:
    """By default keys come out sorted; the body gains a leading newline and loses its trailing one."""
    body = "Done.\n\nexit 0\n"
    text = frontmatter.dumps(post_of(body, REPLY_HEADERS))
    assert text.splitlines()[1:4] == ["auth: none", "class: accepted", "created_at: '2026-07-04T07:15:54Z'"]
    envelope = parse(text.encode(), name="reply.md")
    assert envelope.body == "\nDone.\n\nexit 0"
    slopd_own = render(replace(envelope, body=body))
    assert slopd_own.startswith(b"---\nprotocol: slop.v1\nid: ")
    assert parse(slopd_own, name="reply.md").body == body


def test_frontmatter_load_then_dump_rewrites_the_envelope() -> None:
    """A load-and-dump through python-frontmatter breaks `created_at` and turns id `0755` into `493`."""
    text = frontmatter.dumps(frontmatter.loads(envelope_text(id="0755")), sort_keys=False)
    assert "\nid: 493\n" in text
    assert "\ncreated_at: 2026-07-04 07:15:53+00:00\n" in text
    assert slopd_reasons(text.encode()) == (
        "created_at: must be ISO 8601 in UTC, got '2026-07-04 07:15:53+00:00'",
    )
    quoted = envelope_text(id="0755", created_at=f"'{CREATED_AT}'")
    rewritten = frontmatter.dumps(frontmatter.loads(quoted), sort_keys=False).encode()
    assert parse(rewritten, name="input.md").id == "493"  # a valid id, just not the one written
