"""`[console]` (SPEC §15): the RP ID, the session lifetime and the public URL, strictly checked."""

from __future__ import annotations

import pytest

from slopd.shell.config import ConfigError, Console, parse


def test_the_defaults_derive_everything_from_where_the_server_listens() -> None:
    """No `[console]`: no RP ID or public URL of its own, sessions of 12 hours."""
    assert parse("").console == Console(rp_id=None, session_ttl=43200.0, public_url=None)


def test_every_key_is_read() -> None:
    """`rp_id`, `session_ttl` and `public_url` are taken as given (the URL without a final slash)."""
    console = parse(
        '[console]\nrp_id = "example.com"\nsession_ttl = 600\npublic_url = "https://slopd.example.com:8443/"\n'
    ).console
    assert console == Console("example.com", 600.0, "https://slopd.example.com:8443")


@pytest.mark.parametrize(
    ("toml", "reason"),
    [
        ("bogus = 1", "console.bogus: unknown key"),
        ("session_ttl = 0", "console.session_ttl: must be greater than 0"),
        ('session_ttl = "12h"', "console.session_ttl: expected a number"),
        ('rp_id = "127.0.0.1"', "console.rp_id: '127.0.0.1' is not a lower-case host name"),
        (
            'rp_id = "https://example.com"',
            "console.rp_id: 'https://example.com' is not a lower-case host name",
        ),
        ('rp_id = "example.com:443"', "console.rp_id: 'example.com:443' is not a lower-case host name"),
        ('rp_id = "Example.com"', "console.rp_id: 'Example.com' is not a lower-case host name"),
        (
            'public_url = "slopd.example.com"',
            "console.public_url: 'slopd.example.com' is not SCHEME://HOST[:PORT]",
        ),
        (
            'public_url = "https://example.com/slopd"',
            "console.public_url: 'https://example.com/slopd' is not",
        ),
        ('public_url = "http://example.com"', "browsers allow passkeys only on https (or http://localhost)"),
        (
            'public_url = "https://10.0.0.2:8787"',
            "the host must be a lower-case name (passkeys refuse addresses)",
        ),
        (
            'rp_id = "example.com"\npublic_url = "https://example.org"',
            "console.rp_id: 'example.com' cannot be used from 'https://example.org'",
        ),
        (
            'rp_id = "a.example.com"\npublic_url = "https://example.com"',
            "console.rp_id: 'a.example.com' cannot be used from 'https://example.com'",
        ),
    ],
)
def test_a_console_setting_that_cannot_work_is_refused_naming_the_key_and_why(toml: str, reason: str) -> None:
    """An unknown key, a bad lifetime, an RP ID that is an address or not a bare name, a URL with a
    path, plain http off localhost, or an RP ID its URL cannot use: a `ConfigError` saying so."""
    with pytest.raises(ConfigError) as refused:
        parse(f"[console]\n{toml}\n")
    assert reason in str(refused.value), str(refused.value)


def test_an_rp_id_may_be_a_parent_of_the_public_host() -> None:
    """A passkey for `example.com` works on `https://console.example.com` (WebAuthn's suffix rule)."""
    console = parse('[console]\nrp_id = "example.com"\npublic_url = "https://console.example.com"\n').console
    assert (console.rp_id, console.public_url) == ("example.com", "https://console.example.com")
