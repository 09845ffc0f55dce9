"""The seat tokens file (SPEC §12), pure: parse, the constant-time lookup, add and revoke."""

from __future__ import annotations

import hashlib
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from slopd.transport import tokens

SEATS = st.from_regex(r"[A-Za-z0-9._:@-]{1,20}", fullmatch=True)


def line(seat: str, token: str) -> str:
    return f"{seat} sha256:{hashlib.sha256(token.encode()).hexdigest()}"


def test_a_token_names_its_seat_and_nothing_else_does() -> None:
    """The lookup answers the seat of a listed token, None for any other string."""
    listed = tokens.parse(f"# seats\n{line('claude', 'tok-a')}\n\n{line('grok', 'tok-b')}\n")
    assert listed.problems == ()
    assert listed.seat_of("tok-a") == "claude"
    assert listed.seat_of("tok-b") == "grok"
    for other in ("", "tok-", "tok-a ", "TOK-A", hashlib.sha256(b"tok-a").hexdigest()):
        assert listed.seat_of(other) is None
    assert listed.seats() == ["claude", "grok"]


def test_the_hash_is_stored_never_the_token() -> None:
    """`add` writes `SEAT sha256:HEX` of the token; the token itself is nowhere in the text."""
    token = tokens.new_token(os.urandom(32))
    text = tokens.add("# mine\n", "claude", token)
    assert token not in text
    assert text == f"# mine\n{line('claude', token)}\n"
    assert tokens.parse(text).seat_of(token) == "claude"


def test_new_tokens_carry_256_random_bits_behind_a_prefix() -> None:
    """`slopd_` and 43 URL-safe characters; 32 bytes are required."""
    token = tokens.new_token(bytes(range(32)))
    assert token.startswith("slopd_")
    assert len(token) == len("slopd_") + 43
    assert set(token[6:]) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    with pytest.raises(ValueError, match="32 random bytes"):
        tokens.new_token(b"short")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("claude\n", "line 1: expected `SEAT sha256:HEX`, got 1 fields"),
        ("claude sha256:abc\n", "line 1: the hash is not `sha256:` and 64 lower-case hex digits"),
        ("claude slopd_AAAA\n", "was a token pasted?"),
        (f"bad/seat sha256:{'a' * 64}\n", "line 1: 'bad/seat' is not a seat"),
        (f"a sha256:{'A' * 64}\n", "64 lower-case hex digits"),
        (f"a sha256:{'a' * 64}\nb sha256:{'a' * 64}\n", "line 2: the same token as line 1"),
        (f"a sha256:{'a' * 64} extra\n", "got 3 fields"),
    ],
)
def test_every_bad_line_is_reported_with_its_number(text: str, reason: str) -> None:
    """A bad line is named and left out; the others still count."""
    parsed = tokens.parse(text + f"ok sha256:{'b' * 64}\n")
    assert any(reason in problem for problem in parsed.problems), parsed.problems
    assert "ok" in parsed.seats()


def test_revoke_removes_every_token_of_the_seat_and_keeps_the_rest() -> None:
    """Comments, other seats and their order stay; a seat named only in a comment is not touched."""
    text = f"# claude sha256:x\r\n{line('claude', 'a')}\r\n{line('grok', 'b')}\r\n{line('claude', 'c')}\r\n"
    kept, removed = tokens.revoke(text, "claude")
    assert removed == 2
    assert kept == f"# claude sha256:x\r\n{line('grok', 'b')}\r\n"
    assert tokens.revoke(kept, "claude") == (kept, 0)


def test_add_keeps_crlf_and_a_missing_final_newline() -> None:
    """The new line follows the file's own line endings."""
    assert tokens.add("# a\r\n# b", "s", "t") == f"# a\r\n# b\r\n{line('s', 't')}\r\n"
    with pytest.raises(ValueError, match="is not a seat"):
        tokens.add("", "no seat", "t")


@given(st.lists(st.tuples(SEATS, st.text(min_size=1)), max_size=8, unique_by=lambda pair: pair[1]), st.text())
def test_the_lookup_is_exact_for_any_tokens(pairs: list[tuple[str, str]], probe: str) -> None:
    """Whatever the tokens, each finds its seat (the last listed, when one token is listed
    twice under different seats, cannot happen: that is refused), and a stranger finds none."""
    text = ""
    for seat, token in pairs:
        text = tokens.add(text, seat, token)
    parsed = tokens.parse(text)
    assert parsed.problems == ()
    for seat, token in pairs:
        assert parsed.seat_of(token) == seat
    if probe not in {token for _, token in pairs}:
        assert parsed.seat_of(probe) is None


@given(st.text())
def test_parse_never_raises(text: str) -> None:
    """Any text gives entries and problems, nothing else."""
    parsed = tokens.parse(text)
    assert all(problem.startswith("line ") for problem in parsed.problems)
