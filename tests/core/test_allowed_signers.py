"""allowed_signers: parsing and errors naming the line (slopd.core.allowed_signers), pattern lists
(slopd.core.sshpatterns), authorize (slopd.core.authorizing)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from hypothesis import given, settings
from hypothesis import strategies as st

from slopd.core import sshkeys
from slopd.core.allowed_signers import AllowedSignersError, Entry, parse, read
from slopd.core.authorizing import Authorized, Refused, authorize, first_literal
from slopd.core.sshkeys import PublicKey
from slopd.core.sshpatterns import match_pattern_list

ALICE = sshkeys.ed25519(Ed25519PrivateKey.from_private_bytes(b"\x01" * 32).public_key().public_bytes_raw())
BOB = sshkeys.ed25519(Ed25519PrivateKey.from_private_bytes(b"\x02" * 32).public_key().public_bytes_raw())
ALICE_KEY = ALICE.line()
BOB_KEY = BOB.line()
CAROL = sshkeys.ed25519(Ed25519PrivateKey.from_private_bytes(b"\x03" * 32).public_key().public_bytes_raw())
PLUS_TWO = timezone(timedelta(hours=2))
NOW = datetime(2026, 7, 4, 7, 15, 53, tzinfo=UTC)


def one(line: str, zone: tzinfo = PLUS_TWO) -> Entry:
    """The single entry of a one-line file."""
    (entry,) = parse(line + "\n", local_zone=zone)
    return entry


def fails(text: str) -> AllowedSignersError:
    with pytest.raises(AllowedSignersError) as caught:
        parse(text, local_zone=UTC)
    return caught.value


# --- parsing ---


def test_minimal_line() -> None:
    """`principal keytype base64` gives an entry with no options."""
    assert one(f"alice@example.com {ALICE_KEY}") == Entry(1, "alice@example.com", ALICE, None, None, None)


def test_comments_and_blank_lines_are_skipped_and_lines_keep_their_numbers() -> None:
    """Blank, whitespace-only and `#` lines are skipped; entries keep their 1-based line number."""
    text = f"# operators\n\n   \n\t# indented comment\nalice@example.com {ALICE_KEY}\n\nbob {BOB_KEY}\n"
    entries = parse(text, local_zone=UTC)
    assert [(entry.line, entry.principals, entry.public_key) for entry in entries] == [
        (5, "alice@example.com", ALICE),
        (7, "bob", BOB),
    ]


def test_empty_file_has_no_entries() -> None:
    """An empty or comment-only file parses to no entries."""
    assert parse("", local_zone=UTC) == ()
    assert parse("# nobody yet\n", local_zone=UTC) == ()


def test_crlf_line_endings_and_tabs_are_accepted() -> None:
    """CRLF line endings, leading blanks and tab separators are accepted (ssh-keygen accepts them)."""
    entries = parse(f"  alice@example.com\t{ALICE_KEY}\r\nbob {BOB_KEY}\r\n", local_zone=UTC)
    assert [entry.public_key for entry in entries] == [ALICE, BOB]


def test_trailing_comment_after_the_key_is_ignored() -> None:
    """Text after the base64 key is a comment."""
    assert one(f"alice@example.com {ALICE_KEY} Alice's laptop, 2026").public_key == ALICE


def test_principal_list_and_quoted_principals_are_kept_raw() -> None:
    """The principals field is kept as written; a quoted field loses only its quotes."""
    assert one(f"alice@example.com,*@ops.example {ALICE_KEY}").principals == "alice@example.com,*@ops.example"
    assert one(f'"alice@example.com" {ALICE_KEY}').principals == "alice@example.com"


def test_quoted_option_values_may_hold_commas_and_spaces() -> None:
    """`namespaces="a b,slop"` keeps its comma and space, and sits beside other options."""
    entry = one(f'alice namespaces="a b,slop",valid-before="20990101Z" {ALICE_KEY}')
    assert entry.namespaces == "a b,slop"
    assert entry.valid_before == datetime(2099, 1, 1, tzinfo=UTC)


def test_escaped_quote_in_option_value() -> None:
    """`\\"` inside a quoted value stands for a quote, as in OpenSSH's opt_dequote."""
    assert one(f'alice namespaces="sl\\"op" {ALICE_KEY}').namespaces == 'sl"op'


def test_option_names_are_case_insensitive() -> None:
    """`NAMESPACES=` and `Valid-After=` are the same options as their lowercase spellings."""
    entry = one(f'alice NAMESPACES="slop",Valid-After="20200101Z" {ALICE_KEY}')
    assert entry.namespaces == "slop"
    assert entry.valid_after == datetime(2020, 1, 1, tzinfo=UTC)


@pytest.mark.parametrize(
    ("value", "expected", "offset"),
    [
        ("20260704Z", datetime(2026, 7, 4, tzinfo=UTC), 0),
        ("202607040715Z", datetime(2026, 7, 4, 7, 15, tzinfo=UTC), 0),
        ("20260704071553Z", datetime(2026, 7, 4, 7, 15, 53, tzinfo=UTC), 0),
        ("20260704071553z", datetime(2026, 7, 4, 7, 15, 53, tzinfo=UTC), 0),
        ("20260704071553UTC", datetime(2026, 7, 4, 7, 15, 53, tzinfo=UTC), 0),
        ("20260704", datetime(2026, 7, 3, 22, 0, tzinfo=UTC), 2),
        ("202607040715", datetime(2026, 7, 4, 5, 15, tzinfo=UTC), 2),
        ("20260704071553", datetime(2026, 7, 4, 5, 15, 53, tzinfo=UTC), 2),
    ],
)
def test_time_formats_with_and_without_z(value: str, expected: datetime, offset: int) -> None:
    """Every time format is accepted; with `Z` it is UTC, without it local (here UTC+02:00)."""
    entry = one(f'alice valid-after="{value}",valid-before="20990101" {ALICE_KEY}')
    assert entry.valid_after == expected
    assert entry.valid_after is not None
    assert entry.valid_after.utcoffset() == timedelta(hours=offset)


def test_local_times_use_standard_time_like_ssh_keygen() -> None:
    """Without `Z`, a summer date in a DST zone is read at the zone's standard offset (mktime, tm_isdst=0)."""
    entry = one(f'alice valid-before="20260701" {ALICE_KEY}', ZoneInfo("Europe/Berlin"))
    assert entry.valid_before == datetime(2026, 6, 30, 23, 0, tzinfo=UTC)
    winter = one(f'alice valid-before="20260101" {ALICE_KEY}', ZoneInfo("Europe/Berlin"))
    assert winter.valid_before == datetime(2025, 12, 31, 23, 0, tzinfo=UTC)


# --- errors name the line ---


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (f"alice frobnicate {ALICE_KEY}", "unknown option 'frobnicate'"),
        (f'alice namespaces="slop",frobnicate="1" {ALICE_KEY}', "unknown option 'frobnicate'"),
        (f'alice namespaces="slop",,valid-before="20990101" {ALICE_KEY}', "empty option"),
        (f'alice namespaces="slop", {ALICE_KEY}', "malformed options"),
        (f'alice namespaces="slop"x {ALICE_KEY}', "malformed options"),
        (f"alice namespaces=slop {ALICE_KEY}", "the value of 'namespaces' must be in double quotes"),
        (f"alice valid-before=20200101 {ALICE_KEY}", "the value of 'valid-before' must be in double quotes"),
        (f'alice namespaces="slop {ALICE_KEY}', "unterminated quote"),
        (f'alice namespaces="a",namespaces="b" {ALICE_KEY}', "option 'namespaces' given twice"),
        (f'alice valid-before="2026-07-04" {ALICE_KEY}', "valid-before '2026-07-04' is not YYYYMMDD"),
        (f'alice valid-before="2026070" {ALICE_KEY}', "valid-before '2026070' is not YYYYMMDD"),
        (f'alice valid-before="20261304" {ALICE_KEY}', "valid-before '20261304': month must be in 1..12"),
        (f'alice valid-before="20260230" {ALICE_KEY}', "valid-before '20260230': day is out of range"),
        (f'alice valid-after="19700101Z" {ALICE_KEY}', "valid-after '19700101Z' is not after 1970"),
        (
            f'alice valid-after="20260101Z",valid-before="20260101Z" {ALICE_KEY}',
            "valid-before is not after valid-after",
        ),
        (ALICE_KEY + " alice@example.com", "missing principals: the line starts with a key"),
        ("garbage", "missing key"),
        ("alice ssh-ed25519", "missing key"),
        ('alice namespaces="slop"', "missing key"),
        ("this is not a key line", "unknown option 'is'"),
        ('"alice', "unterminated quote"),
        ('al"ice ' + ALICE_KEY, "unterminated quote"),
        ('al"i"ce ' + ALICE_KEY, "malformed principals"),
        ("alice sk-ssh-ed25519@openssh.com AAAA", "malformed key: truncated key type"),
        ("alice ssh-ed25519 AAAA*AAA", "malformed key: invalid base64"),
        ("alice ssh-ed25519 " + ALICE_KEY.split()[1][:-4], "malformed key: truncated public key"),
        (
            "alice ssh-ed25519 AAAAB3NzaC1yc2EAAAADAQABAAAAgQ==",
            "malformed key: the line says 'ssh-ed25519', the key is 'ssh-rsa'",
        ),
    ],
)
def test_bad_lines_raise_naming_the_line(line: str, reason: str) -> None:
    """Every malformed line raises `AllowedSignersError` with its number and reason."""
    error = fails(f"# header\nbob {BOB_KEY}\n{line}\nbob {BOB_KEY}\n")
    assert error.line == 3
    assert error.reason.startswith(reason), error.reason
    assert str(error).startswith("allowed_signers line 3: ")


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        (f"alice cert-authority {ALICE_KEY}", "cert-authority lines are not used for orders (list each key)"),
        (
            f'alice Cert-Authority,namespaces="slop" {ALICE_KEY}',
            "cert-authority lines are not used for orders",
        ),
        (
            f'alice namespaces="slop",cert-authority {ALICE_KEY}',
            "cert-authority lines are not used for orders",
        ),
        (
            "alice ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAAAgQ== rsa@laptop",
            "key type 'ssh-rsa' is not accepted for orders",
        ),
        (
            "alice ecdsa-sha2-nistp256 AAAAE2VjZHNh",
            "key type 'ecdsa-sha2-nistp256' is not accepted for orders",
        ),
        (
            'alice namespaces="git" ssh-ed25519-cert-v01@openssh.com AAAA',
            "key type 'ssh-ed25519-cert-v01@openssh.com' is not accepted for orders",
        ),
        (
            "alice ssh-mldsa44-ed25519@openssh.com AAAA",
            "key type 'ssh-mldsa44-ed25519@openssh.com' is not accepted for orders",
        ),
    ],
)
def test_lines_of_other_key_types_are_skipped_not_refused(line: str, reason: str) -> None:
    """The file kept for git signing holds colleagues' RSA and ECDSA keys: such a line is skipped,
    reported with its number and reason, and the lines around it still count."""
    signers = read(f"# header\nbob {BOB_KEY}\n{line}\nalice {ALICE_KEY}\n", local_zone=UTC)
    assert [(entry.line, entry.public_key) for entry in signers.entries] == [(2, BOB), (4, ALICE)]
    assert [skipped.line for skipped in signers.skipped] == [3]
    assert signers.skipped[0].reason.startswith(reason)


LINE_PARTS = st.sampled_from(
    [
        "alice",
        "*@x",
        '"q p"',
        "namespaces=",
        "valid-after=",
        "valid-before=",
        "cert-authority",
        '"20260704"',
        '"2026070412Z"',
        '"slop"',
        ",",
        '"',
        "\\",
        " ",
        "\t",
        "ssh-ed25519",
        "ssh-rsa",
        ALICE_KEY.split()[1],
        "AAAA",
        "#",
    ]
)


@settings(deadline=None, max_examples=500)
@given(text=st.one_of(st.text(max_size=120), st.lists(LINE_PARTS, max_size=12).map("".join)))
def test_parse_raises_only_allowed_signers_error(text: str) -> None:
    """Any text parses to entries or raises `AllowedSignersError` naming a line, nothing else."""
    line: int | None = None
    try:
        entries = parse(text, local_zone=PLUS_TWO)
    except AllowedSignersError as error:
        line = error.line
    else:
        assert all(len(entry.public_key.point) == 32 for entry in entries)
    assert line is None or 1 <= line <= text.count("\n") + 1


# --- match_pattern_list ---


@pytest.mark.parametrize(
    ("name", "patterns", "expected"),
    [
        ("alice@example.com", "alice@example.com", True),
        ("alice@example.com", "bob@example.com", False),
        ("alice@example.com", "Alice@example.com", False),
        ("alice@example.com", "*", True),
        ("", "*", True),
        ("alice@example.com", "*@example.com", True),
        ("alice@example.org", "*@example.com", False),
        ("alice@example.com", "alic?@example.com", True),
        ("alic@example.com", "alic?@example.com", False),
        ("alice@example.com", "a*e@*.com", True),
        ("alice@example.com", "*a*b*", False),
        ("aaa", "a*a*a", True),
        ("aa", "a*a*a", False),
        ("alice2", "alice@example.com,alice2", True),
        ("carol", "alice@example.com,alice2", False),
        ("bad@x", "!bad@x,*@x", False),
        ("good@x", "!bad@x,*@x", True),
        ("bad@x", "*@x,!bad@x", False),
        ("other@y", "!bad@x", False),
        ("alice", "", False),
        ("", "", True),
        ("alice", ",alice", True),
        ("alice", "!*", False),
        ("alice", "a" * 1100 + ",alice", False),  # OpenSSH: an over-long subpattern fails the list
        ("a" * 1100, "a" * 1100, False),
    ],
)
def test_match_pattern_list(name: str, patterns: str, expected: bool) -> None:
    """OpenSSH pattern lists: `*`, `?`, comma lists, `!` negation vetoes, case-sensitive."""
    assert match_pattern_list(name, patterns) is expected


@settings(deadline=None, max_examples=300)
@given(name=st.text(max_size=30), patterns=st.text(max_size=30))
def test_match_pattern_list_is_total(name: str, patterns: str) -> None:
    """Any name and pattern text gives a bool, never an exception."""
    assert match_pattern_list(name, patterns) in (True, False)


@settings(deadline=None, max_examples=300)
@given(name=st.text(alphabet="ab@.", max_size=12))
def test_star_matches_everything_and_exact_matches_itself(name: str) -> None:
    """`*` matches any name, and a name without wildcards or commas matches itself."""
    assert match_pattern_list(name, "*")
    if name:
        assert match_pattern_list(name, name)


# --- authorize ---

ENTRIES = parse(
    "\n".join(
        [
            f"alice@example.com {ALICE_KEY}",
            f'*@ops.example namespaces="deploy,slop" {ALICE_KEY}',
            f'carol@example.com namespaces="git" {ALICE_KEY}',
            f'dave@example.com valid-before="20260101Z" {ALICE_KEY}',
            f'erin@example.com valid-after="20270101Z" {ALICE_KEY}',
            f'frank@example.com namespaces="git",valid-before="20200101Z" {ALICE_KEY}',
            f'frank@example.com valid-before="20200101Z" {ALICE_KEY}',
            f'gina@example.com valid-before="20200101Z" {ALICE_KEY}',
            f"gina@example.com {ALICE_KEY}",
            f'!mallory@ops.example,*@ops.example namespaces="git" {BOB_KEY}',
        ]
    ),
    local_zone=UTC,
)


@pytest.mark.parametrize(
    ("key", "principal", "namespace", "now", "expected"),
    [
        (ALICE, "alice@example.com", "slop", NOW, Authorized(1)),
        (ALICE, "anyone@ops.example", "slop", NOW, Authorized(2)),
        (ALICE, "gina@example.com", "slop", NOW, Authorized(9)),
        (BOB, "bob@ops.example", "git", NOW, Authorized(10)),
        (BOB, "alice@example.com", "slop", NOW, Refused("key not allowed for principal 'alice@example.com'")),
        (ALICE, "mallory", "slop", NOW, Refused("key not allowed for principal 'mallory'")),
        (
            BOB,
            "mallory@ops.example",
            "git",
            NOW,
            Refused("key not allowed for principal 'mallory@ops.example'"),
        ),
        (ALICE, "anyone@ops.example", "git", NOW, Refused("key not permitted for namespace 'git'")),
        (ALICE, "carol@example.com", "slop", NOW, Refused("key not permitted for namespace 'slop'")),
        (
            ALICE,
            "dave@example.com",
            "slop",
            NOW,
            Refused("key expired (valid-before 2026-01-01T00:00:00+00:00)"),
        ),
        (
            ALICE,
            "erin@example.com",
            "slop",
            NOW,
            Refused("key not yet valid (valid-after 2027-01-01T00:00:00+00:00)"),
        ),
        (
            ALICE,
            "frank@example.com",
            "slop",
            NOW,
            Refused("key expired (valid-before 2020-01-01T00:00:00+00:00)"),
        ),
        (ALICE, "dave@example.com", "slop", datetime(2026, 1, 1, tzinfo=UTC), Authorized(4)),
        (
            ALICE,
            "dave@example.com",
            "slop",
            datetime(2026, 1, 1, 0, 0, 1, tzinfo=UTC),
            Refused("key expired (valid-before 2026-01-01T00:00:00+00:00)"),
        ),
        (ALICE, "erin@example.com", "slop", datetime(2027, 1, 1, tzinfo=UTC), Authorized(5)),
        (
            ALICE,
            "erin@example.com",
            "slop",
            datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC),
            Refused("key not yet valid (valid-after 2027-01-01T00:00:00+00:00)"),
        ),
        (CAROL, "alice@example.com", "slop", NOW, Refused("key not in allowed_signers")),
    ],
    ids=[
        "exact principal",
        "wildcard principal and namespace list",
        "second line allows after an expired one",
        "negated list lets others through",
        "other key's principal",
        "unknown principal",
        "negated principal",
        "namespace outside the list",
        "namespace not permitted",
        "expired",
        "not yet valid",
        "most specific reason wins",
        "valid-before is inclusive",
        "one second after valid-before",
        "valid-after is inclusive",
        "one second before valid-after",
        "unknown key",
    ],
)
def test_authorize(key: PublicKey, principal: str, namespace: str, now: datetime, expected: object) -> None:
    """A key is authorized when any line with it matches principal, namespace and time; else the reason."""
    assert authorize(ENTRIES, public_key=key, principal=principal, namespace=namespace, now=now) == expected


def test_authorize_with_no_entries() -> None:
    """An empty allowed_signers authorizes nobody."""
    assert authorize((), public_key=ALICE, principal="alice", namespace="slop", now=NOW) == Refused(
        "key not in allowed_signers"
    )


def test_authorize_compares_local_times_as_instants() -> None:
    """A local valid-before (UTC+02:00) expires at the right UTC instant."""
    entries = parse(f'alice valid-before="202607041200" {ALICE_KEY}\n', local_zone=PLUS_TWO)
    at_limit = datetime(2026, 7, 4, 10, 0, tzinfo=UTC)
    assert authorize(
        entries, public_key=ALICE, principal="alice", namespace="slop", now=at_limit
    ) == Authorized(1)
    later = at_limit + timedelta(seconds=1)
    verdict = authorize(entries, public_key=ALICE, principal="alice", namespace="slop", now=later)
    assert verdict == Refused("key expired (valid-before 2026-07-04T12:00:00+02:00)")


@pytest.mark.parametrize(
    ("lines", "namespace", "expected"),
    [
        ([f"alice@example.com {ALICE_KEY}"], "slop", ("alice@example.com", Authorized(1))),
        ([f"*@ops.example,!x,alice,bob {ALICE_KEY}"], "slop", ("alice", Authorized(1))),
        ([f"!alice,alice,bob {ALICE_KEY}"], "slop", ("bob", Authorized(1))),
        ([f"a?ice,*,!b {ALICE_KEY}"], "slop", None),
        ([f'alice namespaces="git" {ALICE_KEY}', f"bob {ALICE_KEY}"], "slop", ("bob", Authorized(2))),
        ([f'alice valid-before="20200101Z" {ALICE_KEY}', f"cy {ALICE_KEY}"], "slop", ("cy", Authorized(2))),
        ([f"bob {BOB_KEY}"], "slop", None),
    ],
    ids=[
        "the one principal",
        "patterns and negations are passed over",
        "a literal its own list negates is passed over",
        "only patterns: none",
        "an entry for another namespace is passed over",
        "an expired entry is passed over",
        "another key's entry: none",
    ],
)
def test_first_literal(lines: list[str], namespace: str, expected: object) -> None:
    """Rule 2: the signer named for a key no principal was claimed for (a co-signer, a passkey)."""
    entries = parse("\n".join(lines) + "\n", local_zone=UTC)
    assert first_literal(entries, public_key=ALICE, namespace=namespace, now=NOW) == expected


def test_hostile_principal_is_shown_escaped() -> None:
    """A principal with control characters is escaped and bounded in the refusal reason."""
    verdict = authorize(ENTRIES, public_key=ALICE, principal="\x1b[2J\n" * 40, namespace="slop", now=NOW)
    assert isinstance(verdict, Refused)
    assert "\n" not in verdict.reason
    assert "\x1b" not in verdict.reason
    assert len(verdict.reason) < 120
