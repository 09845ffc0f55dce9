"""`slopd baton init` and `slopd baton lease` (SPEC §11), black-box on a real hub."""

from __future__ import annotations

import json
import os
import time
from datetime import UTC, datetime
from pathlib import Path

from tests.conftest import HubDir


def identity(tmp_path: Path, text: str = '{"name": "oracle", "project": "slopd"}') -> Path:
    path = tmp_path / "identity.json"
    path.write_text(text)
    return path


def test_init_makes_a_vessel_at_generation_zero(hub: HubDir, tmp_path: Path) -> None:
    """The tree has IDENTITY.json as given, empty evolution records and GENERATION = 0."""
    made = hub.slopd("baton", "init", "--hub", str(hub.root), "--identity", str(identity(tmp_path)), "oracle")
    assert made.returncode == 0, made.stderr
    tree = hub.root / "batons" / "oracle"
    assert (tree / "GENERATION").read_bytes() == b"0"
    assert json.loads((tree / "IDENTITY.json").read_text()) == {"name": "oracle", "project": "slopd"}
    assert json.loads((tree / "evolution" / "fitness_history.json").read_text()) == []
    assert json.loads((tree / "evolution" / "mutations.json").read_text()) == []
    assert "No generation yet." in (tree / "AUTOBIOGRAPHY.md").read_text()
    assert [path.name for path in tree.rglob(".*")] == []  # no temporary file left


def test_init_refuses_an_existing_vessel_and_bad_input_writing_nothing(hub: HubDir, tmp_path: Path) -> None:
    """An existing vessel exits 1 unchanged; a bad name, non-JSON or non-object identity exits 2."""
    good = str(identity(tmp_path))
    assert hub.slopd("baton", "init", "--hub", str(hub.root), "--identity", good, "oracle").returncode == 0
    (hub.root / "batons" / "oracle" / "GENERATION").write_bytes(b"7")
    again = hub.slopd("baton", "init", "--hub", str(hub.root), "--identity", good, "oracle")
    assert again.returncode == 1
    assert "exists already" in again.stderr
    assert (hub.root / "batons" / "oracle" / "GENERATION").read_bytes() == b"7"
    for name, text, said in (
        ("Bad/Name", '{"name": "x"}', "is not a vessel name"),
        ("fresh", "not json", "not a JSON document"),
        ("fresh", "[1, 2]", "must be a JSON object"),
    ):
        refused = hub.slopd(
            "baton", "init", "--hub", str(hub.root), "--identity", str(identity(tmp_path, text)), name
        )
        assert refused.returncode == 2, (name, text)
        assert said in refused.stderr
    assert sorted(path.name for path in (hub.root / "batons").iterdir()) == ["oracle"]


def test_init_never_writes_through_a_symlinked_batons_folder(hub: HubDir, tmp_path: Path) -> None:
    """batons/ pointing elsewhere is refused; the place it points to stays empty."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, hub.root / "batons")
    refused = hub.slopd(
        "baton", "init", "--hub", str(hub.root), "--identity", str(identity(tmp_path)), "oracle"
    )
    assert refused.returncode == 2
    assert list(elsewhere.iterdir()) == []


def test_lease_prints_a_lease_refuses_a_rival_and_expires(hub: HubDir, tmp_path: Path) -> None:
    """JSON {lease_id, expires, generation}; a rival exits 1 naming the holder; after the ttl, a new id."""
    hub.slopd("baton", "init", "--hub", str(hub.root), "--identity", str(identity(tmp_path)), "oracle")
    base = ("baton", "lease", "--hub", str(hub.root), "--state", str(hub.state), "oracle")
    first = hub.slopd(*base, "--holder", "gen1", "--ttl", "3")  # long enough for a loaded machine's rival
    assert first.returncode == 0, first.stderr
    lease = json.loads(first.stdout)
    assert set(lease) == {"lease_id", "expires", "generation"}
    assert lease["generation"] == 1
    assert len(lease["lease_id"]) == 64
    rival = hub.slopd(*base, "--holder", "gen1-rival")
    assert rival.returncode == 1
    assert f"oracle is leased to gen1 until {lease['expires']}" in rival.stderr
    expires = datetime.strptime(lease["expires"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    time.sleep(max(expires - time.time(), 0.0) + 1.1)  # the lease expires (its stamp is in whole seconds)
    after = hub.slopd(*base, "--holder", "gen1-rival")
    assert after.returncode == 0, after.stderr
    assert json.loads(after.stdout)["lease_id"] != lease["lease_id"]
    assert not (hub.root / "batons" / "oracle" / "batons.sqlite").exists()  # lease state is never in the hub
    assert (hub.state / "batons.sqlite").exists()


def test_lease_of_an_unknown_vessel_or_a_bad_ttl_is_a_usage_error(hub: HubDir) -> None:
    """No GENERATION marker: exit 2 naming it; a ttl of 0 is refused before anything is stored."""
    missing = hub.slopd(
        "baton", "lease", "--hub", str(hub.root), "--state", str(hub.state), "ghost", "--holder", "x"
    )
    assert missing.returncode == 2
    assert "batons/ghost/GENERATION" in missing.stderr
    zero = hub.slopd(
        "baton",
        "lease",
        "--hub",
        str(hub.root),
        "--state",
        str(hub.state),
        "ghost",
        "--holder",
        "x",
        "--ttl",
        "0",
    )
    assert zero.returncode == 2
    assert "a lease lasts" in zero.stderr


def test_the_registry_lists_each_vessel_with_its_lease_and_last_boot(hub: HubDir, tmp_path: Path) -> None:
    """`slopd baton registry`: every vessel, its GENERATION, a live lease's holder, the last boot
    (recorded by `slopd baton boot`, the seed's BATON_RECEIVED)."""
    where = ("--hub", str(hub.root), "--state", str(hub.state))
    for name in ("oracle", "scribe"):
        made = hub.slopd("baton", "init", "--hub", str(hub.root), "--identity", str(identity(tmp_path)), name)
        assert made.returncode == 0, made.stderr
    assert hub.slopd("baton", "lease", *where, "oracle", "--holder", "gen1").returncode == 0
    assert hub.slopd("baton", "boot", *where, "scribe").returncode == 0
    listed = hub.slopd("baton", "registry", *where, "--json")
    assert listed.returncode == 0, listed.stderr
    vessels = {found["vessel"]: found for found in json.loads(listed.stdout)["vessels"]}
    assert sorted(vessels) == ["oracle", "scribe"]
    assert vessels["oracle"]["lease"]["holder"] == "gen1"
    assert vessels["oracle"]["last_boot"] is None
    assert vessels["scribe"]["lease"] is None
    assert vessels["scribe"]["last_boot"]["generation"] == 0
    assert vessels["scribe"]["last_boot"]["bootable"] is True
    assert {found["generation"] for found in vessels.values()} == {0}
    text = hub.slopd("baton", "registry", *where)
    assert "oracle: generation 0; leased to gen1 until" in text.stdout
    assert "scribe: generation 0; no live lease; last booted" in text.stdout
