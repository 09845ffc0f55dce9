"""The Baton keeper's HTTP API (SPEC §11) over a real `slopd run --http` on 127.0.0.1: the seed's
paths, the vessel's own seat to lease and commit, 409 and 422 as specified, nothing written by
a refusal, the registry with its last boot and score."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from slopd.baton.score import report
from tests.conftest import HubDir
from tests.e2e.baton.test_baton_pack import Vessel, letter, state
from tests.transport.http_rig import served, with_tokens
from tests.transport.test_http_served import call

pytestmark = pytest.mark.slow  # real daemons on sockets or several watchers: the slow set


def send(url: str, token: str, path: str, body: object) -> tuple[int, Any]:
    data = json.dumps(body).encode()
    return call(f"{url}{path}", token, "POST", data, **{"Content-Type": "application/json"})


def test_lease_commit_and_read_a_vessel_over_http(hub: HubDir, tmp_path: Path) -> None:
    vessel = Vessel(hub, tmp_path, '{"name": "oracle", "project": "slopd"}')
    tokens = with_tokens(hub, ("oracle", "alice"))
    oracle, alice = tokens["oracle"], tokens["alice"]
    with served(hub) as (_daemon, url):
        status, problem = send(url, alice, "/baton/oracle/lease", {"holder": "gen1"})
        assert status == 403, problem  # only the vessel's own seat leases it
        assert problem["type"].endswith("/wrong-seat")
        status, lease = send(url, oracle, "/baton/oracle/lease", {"holder": "gen1", "ttl": 120})
        assert status == 200, lease
        assert lease["generation"] == 1
        assert len(lease["lease_id"]) >= 32  # 128 bits and more, hex
        status, problem = send(url, oracle, "/baton/oracle/lease", {"holder": "rival"})
        assert status == 409
        assert problem["holder"] == "gen1"
        assert problem["expires"] == lease["expires"]

        before = vessel.snapshot()
        commit = {"lease_id": lease["lease_id"], "generation": 1, "letter": letter(1), "state": state()}
        status, problem = send(url, alice, "/baton/oracle/commit", commit)
        assert status == 403
        status, problem = send(url, oracle, "/baton/oracle/commit", {**commit, "generation": 2})
        assert status == 409, problem  # a wrong generation: nothing written
        assert vessel.snapshot() == before
        status, problem = send(url, oracle, "/baton/oracle/commit", {**commit, "letter": "too thin"})
        assert status == 422, problem
        assert problem["score"]["passes"] is False
        assert vessel.snapshot() == before
        status, problem = send(url, oracle, "/baton/oracle/commit", {"lease_id": 7, "state": []})
        assert status == 400
        assert len(problem["errors"]) == 4  # every bad key named
        status, packed = send(url, oracle, "/baton/oracle/commit", commit)
        assert status == 200, packed
        assert (packed["generation"], packed["LOW_QUALITY"], packed["passes"]) == (1, False, True)
        assert (vessel.tree / "GENERATION").read_bytes() == b"1"
        assert packed["projected"]  # the generation's handoff was dropped into the inbox
        status, problem = send(url, oracle, "/baton/oracle/commit", commit)
        assert status == 409  # the lease was released by the commit

        status, scored = send(url, alice, "/baton/oracle/score", {"letter": letter(2)})
        assert status == 200
        assert scored == report(letter(2))  # the one score function, as the CLI and the gate use it
        status, one = call(f"{url}/baton/oracle", alice)
        assert status == 200
        assert (one["generation"], one["lease"], one["last_score"]["passes"]) == (1, None, True)
        status, text = call_text(f"{url}/baton/oracle/autobiography", alice)
        assert status == 200
        assert text == (vessel.tree / "AUTOBIOGRAPHY.md").read_text()
        assert "No generation yet." not in text
        status, _missing = call(f"{url}/baton/nobody", alice)
        assert status == 404
        status, _wrong = call(f"{url}/baton/oracle", "not-a-token")
        assert status == 401

    booted = hub.slopd("baton", "boot", "--hub", str(hub.root), "--state", str(hub.state), "oracle")
    assert booted.returncode == 0, booted.stderr
    with served(hub) as (_daemon, url):
        status, listing = call(f"{url}/baton/registry", alice)
        assert status == 200
        (only,) = listing["vessels"]
        assert only["vessel"] == "oracle"
        assert only["generation"] == 1
        assert only["last_boot"]["generation"] == 1
        assert only["last_score"]["passes"] is True


def call_text(url: str, token: str) -> tuple[int, str]:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return response.status, response.read().decode()


def test_the_api_presents_nothing_of_an_uncommitted_generation(hub: HubDir, tmp_path: Path) -> None:
    """After a pack killed before its marker, the autobiography served is the committed one
    (rebuilt), and `GET /baton/{vessel}` lists what boot leaves out: the same code as the CLI."""
    vessel = Vessel(hub, tmp_path)
    assert vessel.pack(vessel.lease(), letter(1), state()).returncode == 0
    vessel.killed_pack(vessel.lease(), letter(2, "Zebra-of-gen-2 moved it."), state(), writes=8)
    assert "Zebra-of-gen-2" in (vessel.tree / "AUTOBIOGRAPHY.md").read_text()
    alice = with_tokens(hub, ("alice",))["alice"]
    with served(hub) as (_daemon, url):
        status, text = call_text(f"{url}/baton/oracle/autobiography", alice)
        assert status == 200
        assert text.startswith("# Autobiography — oracle (through generation 1)\n")
        assert "**Gen-1 (" in text
        assert "Zebra-of-gen-2" not in text
        assert "Gen-2" not in text
        status, one = call(f"{url}/baton/oracle", alice)
        assert status == 200
        assert one["generation"] == 1
        assert [found.split(" ")[0] for found in one["left_out"]] == [
            "AUTOBIOGRAPHY.md",
            "evolution/fitness_history.json:",
        ]
        assert any("interrupted handoff" in warning for warning in one["warnings"])
