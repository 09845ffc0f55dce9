"""`/mcp` under the rules every HTTP request shares (SPEC §14; issue 24 point 6), in-process
through Starlette's TestClient (the app's lifespan runs the SDK's session manager): the server's
own and the configured origins accepted, other origins 403 and foreign hosts 421 (problem+json);
the seat's rate limit, shared with `/v1`, with its headers on every answer and 429 over quota;
503 while stopping; every answer counted in /metrics. (The real server, its drain and the MCP
conformance suite: `test_http_conformance.py`, slow.)"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import httpx2
import pytest
from starlette.testclient import TestClient

from slopd import app
from slopd.core import origins
from slopd.transport.assembly import make_service
from slopd.transport.server.app import Service, build
from tests.conftest import HubDir
from tests.transport.http_rig import bearer, markdown, problem, with_tokens
from tests.transport.mcp.test_stdio_and_http import INITIALIZE, MCP_HEADERS

SERVED = "http://127.0.0.1:8787"  # where the TestClient says it connected (the ASGI scope's `server`)
CONSOLE = "https://console.example:8443"


@contextlib.contextmanager
def serving(hub: HubDir, bind: str = "127.0.0.1") -> Iterator[tuple[Service, TestClient]]:
    """The app over an open hub (no daemon loop), its lifespan entered, as if bound to `bind`."""
    with app.start(hub.root, config_path=hub.config, state=hub.state, log_stream=None) as opened:
        service = make_service(opened, bind)
        try:
            with TestClient(build(service), base_url=SERVED) as client:
                yield service, client
        finally:
            service.receipts.close()


def initialize(client: TestClient, token: str, **headers: str) -> httpx2.Response:
    return client.post("/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **bearer(token), **headers})


def rate_limited(response: httpx2.Response) -> dict[str, str]:
    """The draft-ietf-httpapi-ratelimit-headers pair the answer carries."""
    return {name: response.headers[name] for name in ("ratelimit-policy", "ratelimit")}


@pytest.mark.parametrize(
    ("origin", "host", "status"),
    [
        (None, None, 200),
        (SERVED, None, 200),
        ("http://localhost:8787", None, 200),
        ("HTTP://LocalHost:8787", None, 200),
        ("http://[::1]:8787", None, 200),
        (CONSOLE, None, 200),
        ("https://CONSOLE.example:8443", None, 200),
        ("http://127.0.0.1:8788", None, 403),  # another port: another origin
        ("https://127.0.0.1:8787", None, 403),  # another scheme
        ("http://evil.example:8787", None, 403),
        ("https://console.example", None, 403),  # the configured host, not its port
        ("null", None, 403),
        ("http://127.0.0.1:8787/", None, 403),  # not an origin (a path)
        ("", None, 403),
        (None, "evil.example:8787", 421),
        ("http://evil.example:8787", "evil.example:8787", 421),  # DNS rebinding: both the attacker's
        (None, "localhost:8787", 200),
        (None, "localhost", 200),
        (None, "console.example:8443", 200),  # a configured origin's host (a proxy in front)
        (CONSOLE, "console.example:8443", 200),
    ],
)
def test_mcp_accepts_its_own_and_configured_origins_and_refuses_others(
    hub: HubDir, origin: str | None, host: str | None, status: int
) -> None:
    """An Origin of the server's own scheme, port and names (loopback forms alike) or configured
    in `[http] allowed_origins` reaches the SDK; any other is 403 and a foreign Host 421, as
    problem+json with the rate-limit headers."""
    tokens = with_tokens(hub, ("claude-code",), extra=f'allowed_origins = ["{CONSOLE}"]\n')
    sent = {key: value for key, value in (("Origin", origin), ("Host", host)) if value is not None}
    with serving(hub) as (_service, client):
        answer = initialize(client, tokens["claude-code"], **sent)
    assert answer.status_code == status, answer.text
    assert rate_limited(answer)["ratelimit-policy"] == '"default";q=1000000;w=60'
    if status == 200:
        assert '"result"' in answer.text
    elif status == 403:
        body = problem(answer, 403, "forbidden-origin")
        assert repr(origin) in body["detail"]
    else:
        assert repr(host) in problem(answer, 421, "misdirected")["detail"]


def test_a_server_bound_elsewhere_takes_its_own_address_and_no_loopback_origin(hub: HubDir) -> None:
    """Bound to another address, the server's own origin is that address at its port; a loopback
    Host is still answered (a local client), but a loopback Origin is not its own."""
    tokens = with_tokens(hub, ("claude-code",))
    with serving(hub, bind="192.0.2.7") as (_service, client):
        own = initialize(client, tokens["claude-code"], Host="192.0.2.7:8787", Origin="http://192.0.2.7:8787")
        assert own.status_code == 200, own.text
        reached = initialize(client, tokens["claude-code"], Origin=SERVED)  # the address connected to
        assert reached.status_code == 200, reached.text
        other = initialize(client, tokens["claude-code"], Origin="http://localhost:8787")
        problem(other, 403, "forbidden-origin")


def test_mcp_spends_the_seats_quota_shared_with_v1_and_says_so(hub: HubDir) -> None:
    """Each /mcp answer carries the seat's RateLimit headers, counting down the quota /v1 spends
    too; over it, /mcp and /v1 both answer 429 + Retry-After; another seat is untouched."""
    tokens = with_tokens(hub, ("claude-code", "bob"), extra="rate_limit = 3\n")
    with serving(hub) as (_service, client):
        first = initialize(client, tokens["claude-code"])
        assert first.status_code == 200
        assert rate_limited(first) == {
            "ratelimit-policy": '"default";q=3;w=60',
            "ratelimit": '"default";r=2;t=60',
        }
        posted = client.post(
            "/v1/envelopes",
            content=markdown("20261202t120000z-quota", sender="claude-code"),
            headers={"Content-Type": "text/markdown", **bearer(tokens["claude-code"])},
        )
        assert posted.status_code == 202
        assert rate_limited(posted)["ratelimit"].startswith('"default";r=1;')
        third = initialize(client, tokens["claude-code"])
        assert third.status_code == 200
        assert rate_limited(third)["ratelimit"].startswith('"default";r=0;')
        for over in (
            initialize(client, tokens["claude-code"]),
            client.get("/v1/replies", headers=bearer(tokens["claude-code"])),
        ):
            body = problem(over, 429, "rate-limited")
            assert "3 requests a minute" in body["detail"]
            assert 1 <= int(over.headers["retry-after"]) <= 60
            assert rate_limited(over)["ratelimit"].startswith('"default";r=0;')
        assert initialize(client, tokens["bob"]).status_code == 200


def test_mcp_refuses_with_503_while_stopping_and_401_without_a_token(hub: HubDir) -> None:
    """While the server stops, /mcp answers 503 + Retry-After like /v1; without a token, 401 with
    the client address's rate-limit headers; both counted in /metrics under route /mcp."""
    tokens = with_tokens(hub, ("claude-code",))
    with serving(hub) as (service, client):
        refused = client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        problem(refused, 401, "unauthorized")
        assert refused.headers["www-authenticate"] == 'Bearer realm="slopd"'
        assert "ratelimit" in refused.headers
        assert initialize(client, tokens["claude-code"]).status_code == 200
        service.stopping = True
        stopping = initialize(client, tokens["claude-code"])
        problem(stopping, 503, "stopping")
        assert stopping.headers["retry-after"] == "5"
        service.stopping = False
        counted = client.get("/metrics").text
    for status in (200, 401, 503):
        assert f'slopd_http_requests_total{{route="/mcp",status="{status}"}} 1.0' in counted


@pytest.mark.parametrize(
    ("text", "reasons"),
    [
        ("ftp://x.example", ["the scheme must be http or https, not 'ftp'"]),
        ("https://x.example/", ["an origin has no path (drop '/')"]),
        ("https://user@x.example", ["an origin has no user or password"]),
        ("https://x.example?q", ["an origin has no query or fragment"]),
        ("https://x.example:99999", ["the port must be a number from 0 to 65535"]),
        (
            "null",
            [
                "the scheme must be http or https, not 'missing'",
                "an origin has no path (drop 'null')",
                "the host is missing",
            ],
        ),
        ("http://a b", ["it holds spaces or control characters"]),
    ],
)
def test_an_origin_that_is_not_one_is_refused_with_every_reason(text: str, reasons: list[str]) -> None:
    """`origins.parse` names every reason a text is not `scheme://host[:port]`."""
    with pytest.raises(origins.OriginError) as raised:
        origins.parse(text)
    assert raised.value.reasons == reasons


@pytest.mark.parametrize(
    ("text", "same"),
    [
        ("http://x.example:80", "http://x.example"),
        ("https://X.Example:443", "https://x.example"),
        ("http://[::1]:8787", "http://[::1]:8787"),
    ],
)
def test_origins_compare_by_scheme_host_and_port_default_or_not(text: str, same: str) -> None:
    """The default port written or not, and the host's case, make no difference."""
    assert origins.parse(text) == origins.parse(same)
    assert str(origins.parse(text)) == same


def test_the_config_names_every_bad_origin(hub: HubDir) -> None:
    """`[http] allowed_origins` with two bad entries: `slopd run` exits 2 naming both."""
    hub.write_config('[http]\nallowed_origins = ["https://ok.example", "https://x.example/app", "file://"]\n')
    done = hub.slopd(
        "run", "--hub", str(hub.root), "--state", str(hub.state), "--config", str(hub.config), "--once"
    )
    assert done.returncode == 2, done.stderr
    assert "http.allowed_origins[1]" in done.stderr
    assert "no path (drop '/app')" in done.stderr
    assert "http.allowed_origins[2]" in done.stderr
    assert "ok.example" not in done.stderr
