"""The envelope parser (SPEC §3): every field rule, the YAML and JSON traps, and its totality."""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from slopd.core import validation
from slopd.core import vocabulary as vocab
from slopd.core.envelope import Envelope, EnvelopeError, render, to_json, wants_discussion
from slopd.core.validation import parse

BASE: dict[str, str | None] = {
    "protocol": "slop.v1",
    "id": "20260704t071553z-example",
    "type": "handoff",
    "from": "claude-code",
    "to": "watcher",
    "in_reply_to": "null",
    "created_at": "2026-07-04T07:15:53Z",
    "auth": "none",
}


def front_text(**fields: str | None) -> str:
    """Front-matter lines for BASE updated by `fields`, values written verbatim as YAML text.

    `from_` sets `from`; a value of None drops the key.
    """
    headers = dict(BASE)
    if "from_" in fields:
        fields["from"] = fields.pop("from_")
    headers.update(fields)
    return "".join(f"{key}: {value}\n" for key, value in headers.items() if value is not None)


def md(body: str = "Body text.\n", /, **fields: str | None) -> bytes:
    """A Markdown envelope: BASE front matter updated by `fields`, then `body`."""
    return f"---\n{front_text(**fields)}---\n{body}".encode()


def raw(front: str, body: str = "Body.\n") -> bytes:
    """A Markdown file with exactly this front-matter text between the fences."""
    return f"---\n{front}---\n{body}".encode()


def fails(data: bytes, name: str = "x.md", **kwargs: Any) -> EnvelopeError:
    with pytest.raises(EnvelopeError) as caught:
        parse(data, name=name, **kwargs)
    return caught.value


def json_doc(**overrides: Any) -> dict[str, Any]:
    document: dict[str, Any] = {key: value for key, value in BASE.items() if key != "in_reply_to"}
    document["in_reply_to"] = None
    document.update(overrides)
    return document


# --- one row per SPEC §3 rule: (fields, the key a rejection must name, or None when valid) ---


def row_fields(**values: str | None) -> dict[str, str | None]:
    return values


R = "20260704t071553z-orig"  # a valid id to reply to
FIELD_ROWS: list[tuple[str, dict[str, str | None], str | None]] = [
    # protocol: exactly slop.v1
    ("protocol-ok", {"protocol": "slop.v1"}, None),
    ("protocol-v2", {"protocol": "slop.v2"}, "protocol"),
    ("protocol-case", {"protocol": "SLOP.v1"}, "protocol"),
    ("protocol-dot-is-literal", {"protocol": "slopXv1"}, "protocol"),
    ("protocol-trailing-space", {"protocol": '"slop.v1 "'}, "protocol"),
    ("protocol-missing", {"protocol": None}, "protocol"),
    # id: [a-z0-9._:-], starts [a-z0-9], 1-128, no '..', no '/'
    ("id-ok-charset", {"id": "0a.b_c:d-e"}, None),
    ("id-one-char", {"id": "a"}, None),
    ("id-128", {"id": "a" * 128}, None),
    ("id-129", {"id": "a" * 129}, "id"),
    ("id-empty", {"id": "''"}, "id"),
    ("id-leading-dot", {"id": ".hidden"}, "id"),
    ("id-leading-dash", {"id": "-x"}, "id"),
    ("id-leading-underscore", {"id": "_x"}, "id"),
    ("id-dotdot", {"id": "a..b"}, "id"),
    ("id-slash", {"id": "a/b"}, "id"),
    ("id-backslash", {"id": "'a\\b'"}, "id"),
    ("id-uppercase", {"id": "Abc"}, None),
    ("id-seed-example", {"id": "20260704T071553Z-short-slug"}, None),
    ("id-colon-mixed", {"id": "Run:7.B_c-D"}, None),
    ("id-space", {"id": "a b"}, "id"),
    ("id-bidi", {"id": "a\u202eb"}, "id"),
    ("id-non-ascii", {"id": "caf\u00e9"}, "id"),
    ("id-missing", {"id": None}, "id"),
    ("id-list", {"id": "[a, b]"}, "id"),
    # type: one of the eight
    *[
        (
            f"type-{kind}",
            row_fields(type=kind, in_reply_to=R if kind in vocab.REPLY_TYPES else "null"),
            None,
        )
        for kind in vocab.TYPES
    ],
    ("type-unknown", {"type": "command"}, "type"),
    ("type-case", {"type": "Handoff"}, "type"),
    ("type-prefix", {"type": "hand"}, "type"),
    ("type-suffix", {"type": "handoffs"}, "type"),
    ("type-missing", {"type": None}, "type"),
    # from, to: non-empty, [A-Za-z0-9._:@-], <= 128
    ("from-ok", {"from_": "Claude.Code_1:a@b-c"}, None),
    ("from-128", {"from_": "F" * 128}, None),
    ("from-129", {"from_": "F" * 129}, "from"),
    ("from-empty", {"from_": "''"}, "from"),
    ("from-space", {"from_": "claude code"}, "from"),
    ("from-slash", {"from_": "a/b"}, "from"),
    ("from-non-ascii", {"from_": "cl\u00e4ude"}, "from"),
    ("from-newline", {"from_": '"a\\nb"'}, "from"),
    ("from-missing", {"from_": None}, "from"),
    ("to-ok", {"to": "watcher:host-1.example"}, None),
    ("to-128", {"to": "t" * 128}, None),
    ("to-129", {"to": "t" * 129}, "to"),
    ("to-empty", {"to": "''"}, "to"),
    ("to-bidi", {"to": "human\u202e"}, "to"),
    ("to-missing", {"to": None}, "to"),
    # in_reply_to: null or a valid id; required non-null on ack/result/error
    ("irt-null", {"in_reply_to": "null"}, None),
    ("irt-tilde", {"in_reply_to": "~"}, None),
    ("irt-absent", {"in_reply_to": None}, None),
    ("irt-valid", {"in_reply_to": R}, None),
    ("irt-uppercase", {"in_reply_to": "ABC"}, None),
    ("irt-angle-unclosed", {"in_reply_to": "<prior"}, "in_reply_to"),
    ("irt-slash", {"in_reply_to": "a/b"}, "in_reply_to"),
    ("irt-leading-dot", {"in_reply_to": ".a"}, "in_reply_to"),
    ("irt-129", {"in_reply_to": "a" * 129}, "in_reply_to"),
    ("irt-dotdot", {"in_reply_to": "a..b"}, "in_reply_to"),
    *[
        (f"irt-{kind}-valid", row_fields(type=kind, in_reply_to=R), None)
        for kind in sorted(vocab.REPLY_TYPES)
    ],
    *[
        (f"irt-{kind}-null", row_fields(type=kind, in_reply_to="null"), "in_reply_to")
        for kind in sorted(vocab.REPLY_TYPES)
    ],
    *[
        (f"irt-{kind}-absent", row_fields(type=kind, in_reply_to=None), "in_reply_to")
        for kind in sorted(vocab.REPLY_TYPES)
    ],
    # created_at: ISO 8601 in UTC (Z or +00:00), a real instant, kept as written
    ("created-z", {"created_at": "2026-07-04T07:15:53Z"}, None),
    ("created-plus-zero", {"created_at": "2026-07-04T07:15:53+00:00"}, None),
    ("created-fraction", {"created_at": "2026-07-04T07:15:53.250Z"}, None),
    ("created-leap-day", {"created_at": "2028-02-29T23:59:59Z"}, None),
    ("created-quoted", {"created_at": "'2026-07-04T07:15:53Z'"}, None),
    ("created-plus-two", {"created_at": "2026-07-04T07:15:53+02:00"}, "created_at"),
    ("created-minus-five", {"created_at": "2026-07-04T07:15:53-05:00"}, "created_at"),
    ("created-no-zone", {"created_at": "2026-07-04T07:15:53"}, "created_at"),
    ("created-date-only", {"created_at": "2026-07-04"}, "created_at"),
    ("created-lower-z", {"created_at": "2026-07-04t07:15:53z"}, "created_at"),
    ("created-space", {"created_at": "'2026-07-04 07:15:53Z'"}, "created_at"),
    ("created-feb-30", {"created_at": "2026-02-30T07:15:53Z"}, "created_at"),
    ("created-feb-29-non-leap", {"created_at": "2026-02-29T07:15:53Z"}, "created_at"),
    ("created-month-13", {"created_at": "2026-13-01T07:15:53Z"}, "created_at"),
    ("created-hour-25", {"created_at": "2026-07-04T25:00:00Z"}, "created_at"),
    ("created-second-61", {"created_at": "2026-07-04T07:15:61Z"}, "created_at"),
    ("created-arabic-digits", {"created_at": "\u0662\u0660\u0662\u0666-07-04T07:15:53Z"}, "created_at"),
    ("created-missing", {"created_at": None}, None),
    # auth: none or signed:SIDECAR, a plain file name in the same lane
    ("auth-none", {"auth": "none"}, None),
    ("auth-absent", {"auth": None}, None),
    ("auth-signed", {"auth": "signed:o1.md.sig"}, None),
    ("auth-signed-conflict-name", {"auth": "'signed:o1 (1).md.sig'"}, None),
    ("auth-dotdot", {"auth": "signed:../x.sig"}, "auth"),
    ("auth-absolute", {"auth": "signed:/etc/x.sig"}, "auth"),
    ("auth-hidden", {"auth": "signed:.hidden.sig"}, "auth"),
    ("auth-subdir", {"auth": "signed:a/x.sig"}, "auth"),
    ("auth-backslash", {"auth": "'signed:a\\x.sig'"}, "auth"),
    ("auth-not-sig", {"auth": "signed:o1.md"}, "auth"),
    ("auth-empty-sidecar", {"auth": "'signed:'"}, "auth"),
    ("auth-newline", {"auth": '"signed:o1.md.sig\\n"'}, "auth"),
    ("auth-other", {"auth": "gpg"}, "auth"),
    ("auth-case", {"auth": "Signed:o1.md.sig"}, "auth"),
    # mode: optional, execute or discuss
    ("mode-absent", {"mode": None}, None),
    ("mode-execute", {"mode": "execute"}, None),
    ("mode-discuss", {"mode": "discuss"}, None),
    ("mode-other", {"mode": "run"}, "mode"),
    ("mode-case", {"mode": "Discuss"}, "mode"),
    ("mode-bool-word", {"mode": "on"}, "mode"),
    # action: a configured action name (charset only, here)
    ("action-ok", {"action": "deploy-prod_1.2"}, None),
    ("action-64", {"action": "a" * 64}, None),
    ("action-65", {"action": "a" * 65}, "action"),
    ("action-leading-dash", {"action": "-rf"}, "action"),
    ("action-space", {"action": "'rm -rf'"}, "action"),
    ("action-slash", {"action": "../deploy"}, "action"),
]

ATTRIBUTE = {"from_": "sender"}  # the Envelope attribute of a row key, where it differs


@pytest.mark.parametrize(
    ("fields", "key"), [row[1:] for row in FIELD_ROWS], ids=[row[0] for row in FIELD_ROWS]
)
def test_each_field_rule(fields: dict[str, str | None], key: str | None) -> None:
    """Each SPEC §3 field rule accepts what it allows and rejects what it forbids, naming the key."""
    data = md(**fields)
    if key is None:
        envelope = parse(data, name="x.md")
        for name, value in fields.items():
            plain = value is not None and value not in ("null", "~") and value[0] not in "'\"["
            if plain:
                assert getattr(envelope, ATTRIBUTE.get(name, name)) == value, name
        return
    error = fails(data)
    assert len(error.reasons) == 1, error.reasons
    assert error.reasons[0].startswith(f"{key}:"), error.reasons


def test_valid_fields_keep_the_exact_text_written() -> None:
    """Every field of a valid envelope is the exact string written; created_at is never a datetime."""
    envelope = parse(
        md(
            "Hello.\n",
            id="a1.b_c:d-e",
            type="instigate",
            from_="Claude@host",
            to="watcher:box",
            in_reply_to="x9",
            created_at="2026-07-04T07:15:53.120+00:00",
            auth="signed:o1.md.sig",
            mode="discuss",
            action="deploy",
        ),
        name="o1.md",
    )
    assert envelope == Envelope(
        protocol="slop.v1",
        id="a1.b_c:d-e",
        type="instigate",
        sender="Claude@host",
        to="watcher:box",
        created_at="2026-07-04T07:15:53.120+00:00",
        in_reply_to="x9",
        auth="signed:o1.md.sig",
        mode="discuss",
        action="deploy",
        body="Hello.\n",
        extra={},
    )
    assert envelope.sidecars == ("o1.md.sig",)
    assert type(envelope.created_at) is str


def test_absent_optional_fields_take_their_defaults() -> None:
    """Without in_reply_to, auth, mode and action the envelope has None, 'none', None, None."""
    envelope = parse(md(in_reply_to=None, auth=None), name="x.md")
    assert (envelope.in_reply_to, envelope.auth, envelope.mode, envelope.action) == (None, "none", None, None)
    assert envelope.sidecars == ()


def test_every_broken_rule_is_reported_at_once() -> None:
    """An envelope breaking five field rules gets exactly five reasons, one per key."""
    error = fails(
        md(protocol="slop.v2", type="bogus", to="a b", created_at="yesterday", mode="run"),
    )
    assert len(error.reasons) == 5, error.reasons
    assert sorted(reason.split(":", 1)[0] for reason in error.reasons) == sorted(
        ["protocol", "type", "to", "created_at", "mode"]
    )
    assert error.id == BASE["id"]
    assert error.sender == BASE["from"]
    assert str(error) == "; ".join(error.reasons)


@pytest.mark.parametrize(
    ("fields", "expected_id", "expected_sender"),
    [
        ({"mode": "run"}, BASE["id"], BASE["from"]),
        ({"mode": "run", "id": "B/ad"}, None, BASE["from"]),
        ({"mode": "run", "id": "a..b"}, None, BASE["from"]),
        ({"mode": "run", "id": None}, None, BASE["from"]),
        ({"mode": "run", "from_": "a b"}, BASE["id"], None),
        ({"mode": "run", "from_": None}, BASE["id"], None),
        ({"id": "B ad", "from_": "a/b"}, None, None),
    ],
    ids=["both-valid", "bad-id", "dotdot-id", "no-id", "bad-from", "no-from", "neither"],
)
def test_error_carries_id_and_sender_only_when_valid(
    fields: dict[str, str | None], expected_id: str | None, expected_sender: str | None
) -> None:
    """EnvelopeError.id and .sender are set exactly when those fields were themselves valid."""
    error = fails(md(**fields))
    assert (error.id, error.sender) == (expected_id, expected_sender)


def test_structural_errors_carry_no_id_or_sender() -> None:
    """A fault that stops parsing before the fields are read leaves id and sender unset."""
    error = fails(md(extra="&a x"))
    assert (error.id, error.sender) == (None, None)


# --- YAML traps (research §7) ---


def test_yaml_implicit_typing_never_changes_meaning() -> None:
    """Booleans, octals, sexagesimals, underscores and timestamps stay the exact strings written."""
    front = (
        "protocol: slop.v1\nid: a1\ntype: note\nfrom: x\nto: watcher\n"
        "created_at: 2026-07-04T07:15:53Z\n"
        "a_on: on\nb_no: no\nc_yes: yes\nd_off: OFF\ne_true: true\n"
        "f_octal: 0755\ng_clock: 12:30\nh_under: 1_000\ni_hex: 0x1F\nj_float: 1.5\nk_inf: .inf\n"
        "l_nan: .NaN\nm_exp: 1e3\nn_date: 2026-07-04\no_stamp: 2026-07-04T07:15:53+02:00\n"
        "p_tilde: ~\nq_null: null\nr_Null: NULL\ns_empty:\nt_y: y\nu_merge_word: <<\n"
    )
    envelope = parse(raw(front), name="x.md")
    assert envelope.created_at == "2026-07-04T07:15:53Z"
    assert dict(envelope.extra) == {
        "a_on": "on",
        "b_no": "no",
        "c_yes": "yes",
        "d_off": "OFF",
        "e_true": "true",
        "f_octal": "0755",
        "g_clock": "12:30",
        "h_under": "1_000",
        "i_hex": "0x1F",
        "j_float": "1.5",
        "k_inf": ".inf",
        "l_nan": ".NaN",
        "m_exp": "1e3",
        "n_date": "2026-07-04",
        "o_stamp": "2026-07-04T07:15:53+02:00",
        "p_tilde": None,
        "q_null": None,
        "r_Null": None,
        "s_empty": None,
        "t_y": "y",
        "u_merge_word": "<<",
    }


def test_a_bare_word_in_a_known_field_is_not_a_bool() -> None:
    """`mode: on` is rejected as the string 'on', not silently read as True or dropped."""
    error = fails(md(mode="on"))
    assert error.reasons == ("mode: must be execute or discuss, got 'on'",)


BILLION_LAUGHS = "".join(
    [
        "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n",
        *[f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)],
    ]
)

STRUCTURAL_ROWS: list[tuple[str, bytes, str]] = [
    (
        "duplicate-key",
        raw(
            "protocol: slop.v1\nid: a1\nid: a2\ntype: note\nfrom: x\nto: watcher\n"
            "created_at: 2026-07-04T07:15:53Z\n"
        ),
        "duplicate key 'id'",
    ),
    ("duplicate-unknown-key", md(extra="1").replace(b"extra: 1\n", b"extra: 1\nextra: 2\n"), "duplicate"),
    ("anchor-alias", md(x="&a hello", y="*a"), "anchors and aliases"),
    ("anchor-only", md(x="&a hello"), "anchors and aliases"),
    ("billion-laughs", raw(BILLION_LAUGHS), "anchors and aliases"),
    ("python-object", md(x="!!python/object/apply:os.system ['echo pwned']"), "tag"),
    ("python-name", md(x="!!python/name:os.system"), "tag"),
    ("custom-tag", md(x="!custom value"), "tag"),
    ("str-tag", md(x="!!str 5"), "tag"),
    ("verbatim-tag", md(x="!<tag:yaml.org,2002:int> 5"), "tag"),
    ("tag-directive", raw("%TAG !e! tag:example.com,2000:\n--- \na: !e!x b\n"), "front matter"),
    ("list-front-matter", raw("- protocol: slop.v1\n- id: a1\n"), "mapping"),
    ("scalar-front-matter", raw("just some text\n"), "mapping"),
    ("empty-front-matter", raw(""), "empty"),
    ("comment-only-front-matter", raw("# nothing here\n"), "empty"),
    ("no-closing-fence", b"---\nprotocol: slop.v1\nid: a1\n", "closing"),
    ("no-closing-fence-at-all", b"---\n", "closing"),
    ("no-opening-fence", b"protocol: slop.v1\n---\n", "front matter"),
    ("fence-with-text", b"--- x\nid: a1\n---\n", "front matter"),
    ("four-dashes", b"----\nid: a1\n----\n", "front matter"),
    ("empty-file", b"", "front matter"),
    ("two-documents", raw("a: b\n--- # next\nc: d\n"), "more than one YAML document"),
    ("document-end-then-more", raw("a: b\n...\n--- # next\nc: d\n"), "more than one YAML document"),
    ("non-string-key", md(extra="1").replace(b"extra: 1\n", b"[a, b]: 1\n"), "keys must be strings"),
    ("null-key", md(extra="1").replace(b"extra: 1\n", b"~: 1\n"), "keys must be strings"),
    ("syntax-error", md(x="[unclosed"), "front matter"),
    ("tab-indent", raw("a:\n\t- b\n"), "front matter"),
    ("body-key", raw(front_text(body="smuggled")), "body"),
]


@pytest.mark.parametrize(
    ("data", "needle"), [row[1:] for row in STRUCTURAL_ROWS], ids=[row[0] for row in STRUCTURAL_ROWS]
)
def test_structural_faults_are_rejected_with_one_reason(data: bytes, needle: str) -> None:
    """YAML and fence faults stop parsing with a single reason that says what is wrong."""
    error = fails(data)
    assert len(error.reasons) == 1, error.reasons
    assert needle in error.reasons[0], error.reasons


def nested_front(levels: int) -> bytes:
    """Front matter whose deepest collection is `levels` deep, counting the top mapping as 1."""
    inner = levels - 1
    return md(deep="[" * inner + "x" + "]" * inner)


def test_nesting_32_is_accepted() -> None:
    """A front matter nested exactly 32 collections deep (the top mapping included) is valid."""
    envelope = parse(nested_front(32), name="x.md")
    value: Any = envelope.extra["deep"]
    depth = 1
    while isinstance(value, list):
        depth += 1
        value = value[0]
    assert (depth, value) == (32, "x")


def test_nesting_33_is_rejected() -> None:
    """One level more than the limit is an error naming the nesting."""
    error = fails(nested_front(33))
    assert "nesting deeper than 32" in error.reasons[0]


@pytest.mark.parametrize("depth", [1_000, 30_000], ids=["1k", "30k-segfault-size"])
def test_deep_flow_nesting_under_the_size_cap_is_an_error_not_a_crash(depth: int) -> None:
    """`[` nested deep enough to crash PyYAML's composer is rejected by the streaming prescan."""
    error = fails(md(deep="[" * depth))
    assert "nesting" in error.reasons[0]


def test_200k_deep_brackets_raise_envelope_error() -> None:
    """200,000 nested `[` (research §7.3) gives an EnvelopeError, never a crash."""
    error = fails(b"---\nx: " + b"[" * 200_000 + b"\n---\n")
    assert len(error.reasons) == 1


def test_front_matter_over_64_kib_is_rejected() -> None:
    """Front matter larger than 64 KiB is rejected before any YAML is read."""
    error = fails(md(x="a" * (64 * 1024)))
    assert error.reasons == ("front matter is over 65536 bytes",)


def test_a_large_body_is_fine_when_the_front_matter_is_small() -> None:
    """The 64 KiB cap applies to the front matter only, not to the Markdown body."""
    envelope = parse(md("b" * 200_000), name="x.md")
    assert len(envelope.body) == 200_000


def test_file_over_the_byte_limit_is_rejected() -> None:
    """A file one byte over the limit is rejected; one at the limit is accepted."""
    data = md()
    assert parse(data, name="x.md", max_bytes=len(data)).id == BASE["id"]
    error = fails(data, max_bytes=len(data) - 1)
    assert error.reasons == (f"file is {len(data)} bytes, over the {len(data) - 1}-byte limit",)
    big = md("x" * vocab.MAX_ENVELOPE_BYTES)
    assert "over the 1048576-byte limit" in fails(big).reasons[0]


def test_too_many_yaml_events_are_rejected() -> None:
    """A flat list of more than 10,000 items is refused by the event cap."""
    error = fails(md(many="[" + ",".join(["a"] * 10_001) + "]"))
    assert "events" in error.reasons[0]


# --- encoding ---


def test_invalid_utf8_names_the_byte_offset() -> None:
    """Invalid UTF-8 is rejected with the offset of the first bad byte."""
    data = md()
    offset = data.index(b"claude-code")
    error = fails(data[:offset] + b"\xff" + data[offset + 1 :])
    assert error.reasons == (f"not valid UTF-8 (byte offset {offset})",)


def test_truncated_multibyte_sequence_is_invalid_utf8() -> None:
    """A file ending in the middle of a UTF-8 sequence is rejected."""
    error = fails(md("caf\u00e9")[:-1])
    assert "not valid UTF-8" in error.reasons[0]


@pytest.mark.parametrize("where", ["front", "body"])
def test_nul_byte_is_rejected(where: str) -> None:
    """A NUL byte anywhere in the file is rejected."""
    data = md(x="a\0b") if where == "front" else md("a\0b")
    assert "NUL" in fails(data).reasons[0]


def test_nul_byte_in_json_is_rejected() -> None:
    """A raw NUL byte in a JSON file is rejected like in Markdown."""
    data = json.dumps(json_doc()).encode() + b"\0"
    assert "NUL" in fails(data, name="x.json").reasons[0]


def test_leading_bom_is_tolerated() -> None:
    """One leading UTF-8 BOM is skipped in both forms; the envelope is the same without it."""
    assert parse(validation.BOM + md(), name="x.md") == parse(md(), name="x.md")
    data = json.dumps(json_doc(body="b")).encode()
    assert parse(validation.BOM + data, name="x.json") == parse(data, name="x.json")


def test_a_second_bom_is_not_tolerated() -> None:
    """Only one BOM is stripped: a second one leaves the file without its opening fence."""
    assert "front matter" in fails(validation.BOM + validation.BOM + md()).reasons[0]


def test_crlf_line_endings_are_accepted_for_the_fences() -> None:
    """A file written with CRLF parses, with no carriage returns in the field values."""
    data = md("").replace(b"\n", b"\r\n") + b"Line one.\r\nLine two.\r\n"
    envelope = parse(data, name="x.md")
    assert envelope.id == BASE["id"]
    assert envelope.created_at == BASE["created_at"]
    assert envelope.body == "Line one.\r\nLine two.\r\n"


@pytest.mark.parametrize("trail", [" ", "  ", "\t", " \r", "\t \r"])
def test_a_fence_with_trailing_whitespace_is_the_fence(trail: str) -> None:
    """SPEC §3: `--- ` (phone apps, Windows editors) opens and closes the front matter like `---`."""
    plain = md("Body.\n")
    both = plain.replace(b"---\n", f"---{trail}\n".encode())
    assert parse(both, name="x.md") == parse(plain, name="x.md")
    opening_only = plain.replace(b"---\n", f"---{trail}\n".encode(), 1)
    assert parse(opening_only, name="x.md") == parse(plain, name="x.md")


def test_other_text_on_the_fence_line_is_no_fence() -> None:
    """Only whitespace may trail the fence: `--- yaml` or `----` still has no front matter."""
    for first in (b"--- yaml\n", b"----\n", b" ---\n"):
        assert "no front matter" in fails(md().replace(b"---\n", first, 1)).reasons[0]


def test_the_body_is_kept_byte_for_byte() -> None:
    """Everything after the closing fence is the body, including later `---` lines."""
    body = "\n# Title\n\n---\nnot: front matter\n---\ntrailing   \n\n"
    assert parse(md(body), name="x.md").body == body


def test_missing_newline_after_closing_fence_gives_empty_body() -> None:
    """A closing `---` at the very end of the file ends the front matter with an empty body."""
    data = md("").removesuffix(b"\n")
    assert data.endswith(b"---")
    assert parse(data, name="x.md").body == ""


def test_a_json_looking_md_is_not_parsed_as_json() -> None:
    """A `.md` whose first line is `{` is held to Markdown rules, unlike the same bytes as `.json`."""
    data = json.dumps(json_doc(body="b"), indent=1).encode()
    assert data.startswith(b"{\n")
    assert "front matter" in fails(data, name="x.md").reasons[0]
    assert parse(data, name="x.json").id == BASE["id"]


# --- JSON form ---


def test_json_envelope_with_body() -> None:
    """A JSON object with the front-matter keys and `body` is the same envelope as its Markdown twin."""
    data = json.dumps(json_doc(body="Body text.\n", extra_key="kept")).encode()
    envelope = parse(data, name="Upper.JSON")
    assert envelope.body == "Body text.\n"
    assert dict(envelope.extra) == {"extra_key": "kept"}
    twin = parse(md(extra_key="kept"), name="x.md")
    assert envelope == twin


def test_json_without_body_has_empty_body() -> None:
    """`body` is optional in the JSON form."""
    assert parse(json.dumps(json_doc()).encode(), name="x.json").body == ""


def test_json_field_rules_report_every_reason() -> None:
    """The JSON form goes through the same field rules, all reported together."""
    data = json.dumps(json_doc(id=5, type="bogus", mode=True, created_at="2026-07-04")).encode()
    error = fails(data, name="x.json")
    assert sorted(reason.split(":", 1)[0] for reason in error.reasons) == [
        "created_at",
        "id",
        "mode",
        "type",
    ]
    assert error.id is None
    assert error.sender == BASE["from"]


JSON_ROWS: list[tuple[str, bytes, str]] = [
    ("duplicate-key", b'{"id": "a1", "id": "a2"}', "duplicate key 'id'"),
    ("nan", b'{"x": NaN}', "NaN"),
    ("infinity", b'{"x": Infinity}', "Infinity"),
    ("minus-infinity", b'{"x": -Infinity}', "Infinity"),
    ("list", b'[{"id": "a1"}]', "one object"),
    ("string", b'"hello"', "one object"),
    ("number", b"42", "one object"),
    ("null", b"null", "one object"),
    ("empty", b"", "invalid JSON"),
    ("trailing-garbage", b"{} {}", "invalid JSON"),
    ("two-objects-lines", b"{}\n{}\n", "invalid JSON"),
    ("body-number", json.dumps(json_doc(body=5)).encode(), "body"),
    ("body-null", json.dumps(json_doc(body=None)).encode(), "body"),
    ("body-list", json.dumps(json_doc(body=["a"])).encode(), "body"),
    ("huge-int", b'{"x": ' + b"9" * 5000 + b"}", "invalid JSON"),
]


@pytest.mark.parametrize(
    ("data", "needle"), [row[1:] for row in JSON_ROWS], ids=[row[0] for row in JSON_ROWS]
)
def test_json_structural_faults(data: bytes, needle: str) -> None:
    """Malformed or non-object JSON is one EnvelopeError saying why."""
    error = fails(data, name="x.json")
    assert len(error.reasons) == 1, error.reasons
    assert needle in error.reasons[0], error.reasons


def json_nested(levels: int) -> bytes:
    inner = levels - 1
    text = json.dumps(json_doc())[:-1] + ', "deep": ' + "[" * inner + '"x"' + "]" * inner + "}"
    return text.encode()


def test_json_nesting_32_is_accepted_and_33_rejected() -> None:
    """The JSON form has the same 32-level limit, counting the top object as level 1."""
    assert parse(json_nested(32), name="x.json").id == BASE["id"]
    error = fails(json_nested(33), name="x.json")
    assert error.reasons == ("JSON nesting deeper than 32 levels",)


@pytest.mark.parametrize("opener", ["[", '{"a":'], ids=["lists", "objects"])
def test_json_100k_nesting_is_an_error_not_a_crash(opener: str) -> None:
    """100,000 nested levels give an EnvelopeError, never a RecursionError or a crash."""
    data = ('{"x": ' + opener * 100_000).encode()
    error = fails(data, name="x.json")
    assert len(error.reasons) == 1


@pytest.mark.parametrize("number", ["1e999", "-1e999"])
def test_json_overflowing_number_is_rejected_like_infinity(number: str) -> None:
    """A number too large for a float (`1e999`) is rejected like `Infinity`: it never reaches `to_json`."""
    data = json.dumps(json_doc())[:-1].encode() + f', "x": {number}}}'.encode()
    assert fails(data, name="x.json").reasons == (f"invalid JSON: number {number} is too large",)


def test_json_largest_floats_stay_json_numbers_in_to_json() -> None:
    """`1e308`, still a finite float, is kept, and `to_json` writes it as a number, never `Infinity`."""
    data = json.dumps(json_doc())[:-1].encode() + b', "x": 1e308, "y": -1e308}'
    envelope = parse(data, name="x.json")
    assert dict(envelope.extra) == {"x": 1e308, "y": -1e308}

    def refuse(constant: str) -> None:
        raise ValueError(constant)

    assert json.loads(to_json(envelope), parse_constant=refuse)["x"] == 1e308


def json_with_body_escape(escaped: str) -> bytes:
    """A `.json` envelope whose `body` is written with the JSON escape text `escaped`."""
    return json.dumps(json_doc())[:-1].encode() + f', "body": "{escaped}"}}'.encode()


@pytest.mark.parametrize(
    ("escaped", "reason"),
    [
        ("\\ud800", "JSON strings must be valid Unicode (no lone surrogates)"),
        ("a\\udfffb", "JSON strings must be valid Unicode (no lone surrogates)"),
        ("\\u0000", "JSON strings must not contain NUL"),
    ],
    ids=["lone-high-surrogate", "lone-low-surrogate", "escaped-nul"],
)
def test_a_json_escape_to_a_lone_surrogate_or_nul_is_rejected(escaped: str, reason: str) -> None:
    """A `.json` escape decoding to a lone surrogate or to NUL is rejected, as those raw bytes would be."""
    assert fails(json_with_body_escape(escaped), name="x.json").reasons == (reason,)


@pytest.mark.parametrize(
    ("escaped", "body"),
    [
        ("\\ud83d\\ude00", "\U0001f600"),
        ("\\u001b[31mred", "\x1b[31mred"),
        ("tab\\there", "tab\there"),
        ("\\u2028\\u0085", "\u2028\x85"),
    ],
    ids=["surrogate-pair", "escape-character", "tab", "unicode-line-breaks"],
)
def test_a_parsed_json_envelope_can_be_rendered_and_read_back(escaped: str, body: str) -> None:
    """A `.json` body escape decoding to valid text is accepted, and the envelope renders to an `.md` twin."""
    envelope = parse(json_with_body_escape(escaped), name="x.json")
    assert envelope.body == body
    assert parse(render(envelope), name="x.md") == envelope


# --- extra keys, render, to_json ---


def test_unknown_keys_are_kept_in_order() -> None:
    """Unknown keys land in `extra` in the order written, with their plain values."""
    front = (
        "zeta: 1\nprotocol: slop.v1\nalpha: [a, b]\nid: a1\ntype: note\nmid: {k: v}\nfrom: x\n"
        "to: watcher\ncreated_at: 2026-07-04T07:15:53Z\nlast: ~\n"
    )
    envelope = parse(raw(front), name="x.md")
    assert list(envelope.extra) == ["zeta", "alpha", "mid", "last"]
    assert dict(envelope.extra) == {"zeta": "1", "alpha": ["a", "b"], "mid": {"k": "v"}, "last": None}


def test_unknown_keys_never_fill_known_fields() -> None:
    """A `sender` or `mode_` key is extra data, not the `from` or `mode` field."""
    envelope = parse(md(sender="mallory", mode_="execute", Mode="execute"), name="x.md")
    assert envelope.sender == BASE["from"]
    assert envelope.mode is None
    assert dict(envelope.extra) == {"sender": "mallory", "mode_": "execute", "Mode": "execute"}


def test_render_then_parse_gives_an_equal_envelope() -> None:
    """`render` writes the canonical Markdown form that `parse` reads back unchanged."""
    original = parse(
        md(
            "# Title\n\n---\nbody with a fence\n",
            type="result",
            in_reply_to="a0",
            mode="execute",
            auth="signed:o1.md.sig",
            flag="on",
            perm="0755",
            when="2026-07-04T07:15:53Z",
            nothing="~",
            items="[a, 'null', '']",
        ),
        name="x.md",
    )
    again = parse(render(original), name="again.md")
    assert again == original
    assert again.extra == {
        "flag": "on",
        "perm": "0755",
        "when": "2026-07-04T07:15:53Z",
        "nothing": None,
        "items": ["a", "null", ""],
    }


def test_render_puts_known_keys_first_in_canonical_order() -> None:
    """Rendered front matter lists the known keys in the SPEC §3 order, then the unknown keys."""
    envelope = parse(raw("z: 1\n" + front_text(mode="discuss", action="go")), name="x.md")
    head = render(envelope).decode().split("---\n")[1]
    keys = [line.split(":", 1)[0] for line in head.splitlines()]
    assert keys == [
        "protocol",
        "id",
        "type",
        "from",
        "to",
        "in_reply_to",
        "created_at",
        "auth",
        "mode",
        "action",
        "z",
    ]


def test_to_json_is_the_front_matter_keys_plus_body() -> None:
    """`to_json` gives one object: the front-matter keys in canonical order, extra keys, then body."""
    envelope = parse(md("Hello \u00e9.\n", mode="discuss", zz="1", aa="[x]"), name="x.md")
    document = json.loads(to_json(envelope))
    assert list(document) == [
        "protocol",
        "id",
        "type",
        "from",
        "to",
        "in_reply_to",
        "created_at",
        "auth",
        "mode",
        "zz",
        "aa",
        "body",
    ]
    assert document["from"] == BASE["from"]
    assert document["in_reply_to"] is None
    assert document["body"] == "Hello \u00e9.\n"
    assert parse(to_json(envelope).encode(), name="x.json") == envelope


# --- discuss only ---


@pytest.mark.parametrize(
    ("mode", "body", "expected"),
    [
        ("discuss", "Please run the tests.", True),
        (None, "Discuss only: what would you change?", True),
        (None, "This is DISCUSS-ONLY.", True),
        (None, "discuss_only", True),
        (None, "Let us discuss  only the plan.", True),
        (None, "discuss\nonly", True),
        ("execute", "Discuss only, please.", True),
        (None, "This needs discussion.", False),
        (None, "We should only discuss it.", False),
        (None, "discussion only", False),
        (None, "", False),
        ("execute", "Run it.", False),
    ],
)
def test_wants_discussion(mode: str | None, body: str, expected: bool) -> None:
    """`mode: discuss` or "discuss only" (any case, `-`/`_`/space) marks a message discuss-mode."""
    envelope = parse(md(body, mode=mode, type="instigate"), name="x.md")
    assert wants_discussion(envelope) is expected


# --- hypothesis: totality and round trip ---


def parse_or_error(data: bytes, name: str) -> Envelope | EnvelopeError:
    try:
        return parse(data, name=name)
    except EnvelopeError as error:
        caught = error
    assert caught.reasons
    assert all(isinstance(reason, str) and reason for reason in caught.reasons)
    return caught


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=2048), name=st.sampled_from(["x.md", "x.json", "X.MD", "x.JSON", "x"]))
def test_arbitrary_bytes_give_an_envelope_or_an_envelope_error(data: bytes, name: str) -> None:
    """`parse` is total: any bytes give an Envelope or an EnvelopeError, nothing else."""
    assert isinstance(parse_or_error(data, name), Envelope | EnvelopeError)


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(
    front=st.text(max_size=600),
    body=st.text(max_size=100),
    name=st.sampled_from(["x.md", "x.json"]),
)
def test_arbitrary_front_matter_text_gives_an_envelope_or_an_envelope_error(
    front: str, body: str, name: str
) -> None:
    """Any text between the fences (surrogates and all) gives an Envelope or an EnvelopeError."""
    data = ("---\n" + front + "\n---\n" + body).encode("utf-8", "surrogatepass")
    assert isinstance(parse_or_error(data, name), Envelope | EnvelopeError)


YAMLISH = st.sampled_from(
    [
        "protocol: slop.v1\n",
        "id: a1\n",
        "type: note\n",
        "from: x\n",
        "to: watcher\n",
        "created_at: 2026-07-04T07:15:53Z\n",
        "a: &x [1]\n",
        "b: *x\n",
        "c: !!str x\n",
        "d: [[[[\n",
        "e: {f: g}\n",
        "- item\n",
        "--- \n",
        "...\n",
        "? k\n: v\n",
        "  indented: 1\n",
        "\t\n",
        '"quoted \\ud800"\n',
        "'\n",
        "%YAML 1.1\n",
        "body: x\n",
    ]
)


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(pieces=st.lists(YAMLISH, max_size=12))
def test_yaml_like_front_matter_gives_an_envelope_or_an_envelope_error(pieces: list[str]) -> None:
    """Front matter assembled from hostile YAML fragments never escapes as another exception."""
    data = ("---\n" + "".join(pieces) + "\n---\n").encode()
    assert isinstance(parse_or_error(data, "x.md"), Envelope | EnvelopeError)


def valid_id() -> st.SearchStrategy[str]:
    return st.from_regex(validation.ID_PATTERN, fullmatch=True).filter(lambda text: ".." not in text)


@st.composite
def created_at(draw: st.DrawFn) -> str:
    moment = draw(st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(9999, 12, 31, 23, 59, 59)))
    text = moment.replace(tzinfo=None).strftime("%Y-%m-%dT%H:%M:%S")
    if draw(st.booleans()):
        text += "." + draw(st.from_regex(r"[0-9]{1,6}", fullmatch=True))
    text += draw(st.sampled_from(["Z", "+00:00"]))
    assert validation.CREATED_AT_PATTERN.fullmatch(text)
    return text


# NEL (U+0085) is left out here: its own test below shows `render` loses it (a known failure).
SAFE_TEXT = st.text(st.characters(codec="utf-8", exclude_characters="\0\x85"), max_size=80)
EXTRA_VALUE = st.one_of(st.none(), SAFE_TEXT, st.lists(SAFE_TEXT, max_size=3))
EXTRA_KEY = SAFE_TEXT.filter(lambda key: key not in validation.KNOWN_KEYS and key != "body")


@st.composite
def envelopes(draw: st.DrawFn) -> Envelope:
    kind = draw(st.sampled_from(vocab.TYPES))
    reply_to = draw(valid_id()) if kind in vocab.REPLY_TYPES else draw(st.none() | valid_id())
    sidecar = st.from_regex(validation.SIDECAR_PATTERN, fullmatch=True).map(lambda name: "signed:" + name)
    return Envelope(
        protocol=vocab.PROTOCOL,
        id=draw(valid_id()),
        type=kind,
        sender=draw(st.from_regex(validation.PARTY_PATTERN, fullmatch=True)),
        to=draw(st.from_regex(validation.PARTY_PATTERN, fullmatch=True)),
        created_at=draw(created_at()),
        in_reply_to=reply_to,
        auth=draw(st.just("none") | sidecar),
        mode=draw(st.sampled_from([None, *vocab.MODES])),
        action=draw(st.none() | st.from_regex(validation.ACTION_PATTERN, fullmatch=True)),
        body=draw(st.text(st.characters(codec="utf-8", exclude_characters="\0"))),
        extra=draw(st.dictionaries(EXTRA_KEY, EXTRA_VALUE, max_size=4)),
    )


@settings(deadline=None, max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(envelope=envelopes())
def test_render_parse_round_trip(envelope: Envelope) -> None:
    """For any valid envelope, parsing its rendering gives it back, extra keys in order."""
    again = parse(render(envelope), name="x.md")
    assert again == envelope
    assert list(again.extra) == list(envelope.extra)
    assert parse(to_json(envelope).encode(), name="x.json") == envelope


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ('"\\x85"', {"note": "\x85"}),
        ('"line\\x85break"', {"note": "line\x85break"}),
        ('["\\x85"]', {"note": ["\x85"]}),
    ],
    ids=["value", "inside-value", "list-item"],
)
def test_render_keeps_a_next_line_character_in_extra(written: str, expected: dict[str, Any]) -> None:
    """An extra value holding U+0085 (NEL), written as a YAML escape, survives render then parse."""
    envelope = parse(md(note=written), name="x.md")
    assert dict(envelope.extra) == expected
    assert parse(render(envelope), name="x.md").extra == expected


def test_a_template_placeholder_in_reply_to_is_null_where_no_link_is_needed() -> None:
    """SLOP §9's note keeps `in_reply_to: <prior-handoff-id>`: read as null; on a reply it is refused."""
    assert parse(md(type="note", in_reply_to="<prior-handoff-id>"), name="x.md").in_reply_to is None
    error = fails(md(type="ack", in_reply_to="<prior-handoff-id>"))
    assert [reason.split(":", 1)[0] for reason in error.reasons] == ["in_reply_to"]


def test_ids_keep_their_case_and_compare_by_the_lower_case_key() -> None:
    """The id is kept as written; `key` is what the ledger and reply names use."""
    envelope = parse(md(id="20260704T071553Z-Short-Slug"), name="x.md")
    assert (envelope.id, envelope.key) == ("20260704T071553Z-Short-Slug", "20260704t071553z-short-slug")
