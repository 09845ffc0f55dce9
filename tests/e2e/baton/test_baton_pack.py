"""`slopd baton pack` and `slopd baton boot` (SPEC §11), black-box on a real hub: a generation
commits with its lease, GENERATION last; the gate refuses a weak letter unless it is marked
LOW_QUALITY; evolution records are appended, never overwritten; boot trusts only GENERATION and
tells the truth about a torn tree."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from slopd.baton import generations
from tests.conftest import SLOPD, HubDir


def letter(generation: int, where: str = "The parser is half done.") -> str:
    return (
        f"# Handoff Letter — Generation {generation}\n\n"
        f"## Who I Was\nI was gen {generation} of the oracle line.\n\n"
        f"## Where Things Stand\n{where} The bug is at line 40 of parse.py, offset 0x10, because a byte was "
        "dropped, which meant the file was short.\n\n## What I'd Do Next\n1. Fix the offset.\n2. Rerun.\n\n"
        "## What I'm Uncertain About\nI'm not sure it is the only bug; it might be two.\n\n"
        "## Lessons\nThe root cause was a pattern we saw before.\n"
    )


def state(**extra: Any) -> dict[str, Any]:
    base = {"confidence": 0.5, "tasks_completed": 4, "tasks_failed": 1, "skills": {"parse": 0.5}}
    return base | {"trust": {"a": 0.8}} | extra


class Vessel:
    def __init__(self, hub: HubDir, tmp_path: Path, identity_text: str = '{"name": "oracle"}') -> None:
        self.hub, self.tmp = hub, tmp_path
        self.tree = hub.root / "batons" / "oracle"
        identity = tmp_path / "identity.json"
        identity.write_text(identity_text)
        made = hub.slopd("baton", "init", "--hub", str(hub.root), "--identity", str(identity), "oracle")
        assert made.returncode == 0, made.stderr

    def lease(self, holder: str = "gen", ttl: str = "300") -> str:
        taken = self.hub.slopd(
            "baton", "lease", "--hub", str(self.hub.root), "--state", str(self.hub.state), "oracle",
            "--holder", holder, "--ttl", ttl,
        )  # fmt: skip
        assert taken.returncode == 0, taken.stderr
        return str(json.loads(taken.stdout)["lease_id"])

    def pack(self, lease: str, text: str, agent_state: dict[str, Any], *extra: str) -> Any:
        (self.tmp / "letter.md").write_text(text)
        (self.tmp / "state.json").write_text(json.dumps(agent_state))
        where = ("--hub", str(self.hub.root), "--state", str(self.hub.state), "oracle", "--lease", lease)
        files = ("--letter", str(self.tmp / "letter.md"), "--state-file", str(self.tmp / "state.json"))
        return self.hub.slopd("baton", "pack", *where, *files, *extra)

    def killed_pack(self, lease: str, text: str, agent_state: dict[str, Any], writes: int) -> None:
        """A pack SIGKILLed right after its `writes`-th file write (8: all but GENERATION)."""
        (self.tmp / "letter.md").write_text(text)
        (self.tmp / "state.json").write_text(json.dumps(agent_state))
        where = ("--hub", str(self.hub.root), "--state", str(self.hub.state), "oracle", "--lease", lease)
        files = ("--letter", str(self.tmp / "letter.md"), "--state-file", str(self.tmp / "state.json"))
        killed = subprocess.run(
            [*SLOPD, "baton", "pack", *where, *files],
            env=dict(self.hub.env, SLOPD_FAULTS=f"baton.written={writes}"),
            capture_output=True,
            timeout=60,
            check=False,
        )
        assert killed.returncode == -signal.SIGKILL, killed.stderr

    def json(self, relative: str) -> Any:
        return json.loads((self.tree / relative).read_text())

    def snapshot(self) -> dict[str, bytes]:
        files = (path for path in self.tree.rglob("*") if path.is_file())
        return {str(path.relative_to(self.tree)): path.read_bytes() for path in files}


@pytest.fixture(name="vessel")
def fixture_vessel(hub: HubDir, tmp_path: Path) -> Vessel:
    return Vessel(hub, tmp_path)


def test_a_pack_commits_the_next_generation_and_releases_the_lease(vessel: Vessel) -> None:
    """v1's STATE, HANDOFF, SCORE; CURRENT/ copies; autobiography; evolution; GENERATION = 1."""
    lease = vessel.lease()
    packed = vessel.pack(lease, letter(1), state())
    assert packed.returncode == 0, packed.stderr
    printed = json.loads(packed.stdout)
    assert printed["generation"] == 1
    assert printed["passes"] is True
    assert (vessel.tree / "GENERATION").read_bytes() == b"1"
    committed = vessel.json("generations/v1/STATE.json")
    assert committed["generation"] == 1
    assert committed["confidence"] == 0.5
    assert "LOW_QUALITY" not in committed
    assert (vessel.tree / "generations/v1/HANDOFF.md").read_text() == letter(1)
    assert vessel.json("generations/v1/SCORE.json")["average"] == printed["average"]
    current = (vessel.tree / "CURRENT/HANDOFF.md").read_bytes()
    assert current == (vessel.tree / "generations/v1/HANDOFF.md").read_bytes()
    assert "**Gen-1 " in (vessel.tree / "AUTOBIOGRAPHY.md").read_text()
    assert [record["generation"] for record in vessel.json("evolution/fitness_history.json")] == [1]
    again = vessel.pack(lease, letter(1), state())
    assert again.returncode == 1
    assert "was released" in again.stderr


def test_evolution_records_are_appended_per_generation(vessel: Vessel) -> None:
    """Two generations: two fitness records, two mutations (v2's relative to v1), both in L1, newest first."""
    vessel.pack(vessel.lease(), letter(1), state())
    grown = state(confidence=0.75, skills={"parse": 0.9, "lex": 0.3})
    second = vessel.pack(vessel.lease(), letter(2, "The parser is done."), grown)
    assert second.returncode == 0, second.stderr
    history = vessel.json("evolution/fitness_history.json")
    assert [(record["generation"], record["confidence"]) for record in history] == [(1, 0.5), (2, 0.75)]
    mutation = vessel.json("evolution/mutations.json")[1]
    assert mutation["skills_added"] == ["lex"]
    assert mutation["confidence_delta"] == 0.25
    autobiography = (vessel.tree / "AUTOBIOGRAPHY.md").read_text()
    assert autobiography.index("**Gen-2 ") < autobiography.index("**Gen-1 ")
    assert "The parser is done." in autobiography
    assert (vessel.tree / "generations/v1/HANDOFF.md").read_text() == letter(1)  # history is never rewritten


def test_a_letter_that_fails_the_gate_is_refused_or_committed_low_quality(vessel: Vessel) -> None:
    """Exit 1 and nothing written; with --accept-low-quality, committed with LOW_QUALITY, and boot warns."""
    lease = vessel.lease()
    before = vessel.snapshot()
    weak = vessel.pack(lease, "Done.", state())
    assert weak.returncode == 1
    assert json.loads(weak.stdout)["passes"] is False
    assert vessel.snapshot() == before
    accepted = vessel.pack(lease, "Done.", state(), "--accept-low-quality")
    assert accepted.returncode == 0, accepted.stderr
    assert vessel.json("generations/v1/STATE.json")["LOW_QUALITY"] is True
    booted = vessel.hub.slopd("baton", "boot", "--hub", str(vessel.hub.root), "oracle", "--json")
    assert booted.returncode == 0
    assert "LOW_QUALITY" in booted.stderr


def test_a_pack_without_the_live_lease_writes_nothing(vessel: Vessel) -> None:
    """An unknown id, and an expired lease, are refused with the reason; the tree is unchanged."""
    before = vessel.snapshot()
    unknown = vessel.pack("f" * 64, letter(1), state())
    assert unknown.returncode == 1
    assert "no such lease" in unknown.stderr
    lease = vessel.lease(ttl="1")
    time.sleep(1.1)  # the scenario, not a check: the 1-second lease expires
    expired = vessel.pack(lease, letter(1), state())
    assert expired.returncode == 1
    assert "expired" in expired.stderr
    assert vessel.snapshot() == before


def test_boot_reads_only_what_generation_names_within_the_budget(vessel: Vessel) -> None:
    """L0 always; the optional files while the budget allows; an uncommitted v2 is reported, not read."""
    vessel.pack(vessel.lease(), letter(1), state())
    (vessel.tree / "generations" / "v2").mkdir()
    (vessel.tree / "generations" / "v2" / "HANDOFF.md").write_text(letter(2, "An interrupted handoff."))
    (vessel.tree / "CURRENT" / "HANDOFF.md").write_text(letter(2, "An interrupted handoff."))
    boot = ("baton", "boot", "--hub", str(vessel.hub.root), "oracle", "--json")
    booted = vessel.hub.slopd(*boot, "--budget", "10")
    assert booted.returncode == 0, booted.stderr
    plan = json.loads(booted.stdout)
    assert plan["loaded"] == ["generations/v1/STATE.json", "generations/v1/HANDOFF.md"]
    assert plan["skipped"] == ["IDENTITY.json", "AUTOBIOGRAPHY.md", "evolution/fitness_history.json"]
    assert "An interrupted handoff." not in booted.stdout
    assert "interrupted handoff: generations/v2/ exists but GENERATION is 1" in booted.stderr
    assert "CURRENT/HANDOFF.md differs from generations/v1/HANDOFF.md" in booted.stderr
    full = json.loads(vessel.hub.slopd(*boot).stdout)
    assert full["loaded"][2:] == ["IDENTITY.json", "AUTOBIOGRAPHY.md", "evolution/fitness_history.json"]


def test_the_commit_writes_in_the_seeds_order_with_generation_last() -> None:
    """The file list the writer follows: generation files, CURRENT/, L1, evolution, GENERATION."""
    files = [path for path, _ in generations.commit_files(
        3, state={}, letter="x", score={"average": 5}, intentions=[], context={}, autobiography="a",
        fitness_history=[], mutations=[],
    )]  # fmt: skip
    names = ("STATE.json", "HANDOFF.md", "SCORE.json", "INTENTIONS.json", "CONTEXT.json")
    assert files == [
        *(f"generations/v3/{name}" for name in names),
        "CURRENT/STATE.json", "CURRENT/HANDOFF.md", "CURRENT/INTENTIONS.json",
        "AUTOBIOGRAPHY.md", "evolution/fitness_history.json", "evolution/mutations.json",
        "GENERATION",
    ]  # fmt: skip


def test_a_commit_is_projected_into_the_inbox_and_its_project_standup(hub: HubDir, tmp_path: Path) -> None:
    """The pack drops a `handoff` from the vessel; the daemon answers it and files it in the standup."""
    vessel = Vessel(hub, tmp_path, '{"name": "oracle", "project": "parser"}')
    packed = vessel.pack(vessel.lease(), letter(1), state())
    assert packed.returncode == 0, packed.stderr
    projected = json.loads(packed.stdout)["projected"]
    dropped = (hub.root / "inbox" / f"{projected}.md").read_text()
    assert "type: handoff" in dropped
    assert "from: oracle" in dropped
    assert "project: parser" in dropped
    assert "- [ ] Fix the offset." in dropped
    hub.run_once()
    standup = (hub.root / "standups" / "parser.md").read_text()
    assert "## " in standup
    assert "— oracle (generation 1)" in standup
    assert "Full letter: `batons/oracle/generations/v1/HANDOFF.md`" in standup
    result = hub.reply(projected, "result")
    assert "the entry is in its log" in result


def test_boot_reports_a_score_that_is_not_the_letters(vessel: Vessel) -> None:
    """A SCORE.json beside another letter (as in the real torn tree) is named at boot: by its word
    count when it records one, else by an average the seed's function does not give the letter."""
    vessel.pack(vessel.lease(), letter(1), state())
    boot = ("baton", "boot", "--hub", str(vessel.hub.root), "oracle", "--json")
    assert "SCORE.json" not in vessel.hub.slopd(*boot).stderr
    words = len(letter(1).split())
    (vessel.tree / "generations" / "v1" / "HANDOFF.md").write_text("Done.")
    said = vessel.hub.slopd(*boot).stderr
    assert f"generations/v1/SCORE.json is the score of another letter: it counts {words} words" in said
    assert "generations/v1/HANDOFF.md beside it has 1 words and scores 1.29" in said
    score = vessel.tree / "generations" / "v1" / "SCORE.json"
    score.write_text(json.dumps({"average": 7.1, "passes": True}))  # no word count, as some keepers write
    assert (
        "generations/v1/SCORE.json records 7.1 but the letter beside it scores 1.29"
        in vessel.hub.slopd(*boot).stderr
    )
    score.write_text(json.dumps({"average": 1.3, "passes": False}))  # rounded to one decimal: the same score
    assert "SCORE.json" not in vessel.hub.slopd(*boot).stderr


def test_metrics_print_the_seeds_table_per_generation(vessel: Vessel) -> None:
    """One row per committed generation with its deltas; only up to GENERATION; --json too."""
    vessel.pack(vessel.lease(), letter(1), state())
    vessel.pack(vessel.lease(), letter(2), state(confidence=0.8, skills={"parse": 0.9, "lex": 0.2}))
    history = vessel.json("evolution/fitness_history.json")
    history.append({**history[-1], "generation": 3})  # as if a pack of v3 had been cut short
    (vessel.tree / "evolution" / "fitness_history.json").write_text(json.dumps(history))
    shown = vessel.hub.slopd("baton", "metrics", "--hub", str(vessel.hub.root), "oracle", "--json")
    assert shown.returncode == 0, shown.stderr
    table = json.loads(shown.stdout)
    assert table["generation_count"] == 2
    rows = table["generations"]
    assert [row["generation"] for row in rows] == [1, 2]
    assert rows[1]["confidence_delta"] == 0.3
    assert rows[1]["skills_growth"] == 1.0
    assert rows[0]["confidence_delta"] is None
    text = vessel.hub.slopd("baton", "metrics", "--hub", str(vessel.hub.root), "oracle").stdout
    assert text.splitlines()[0].split() == [
        "gen",
        "confidence",
        "Δconf",
        "tasks",
        "score",
        "skills",
        "Δskills",
        "trust",
        "energy/task",
    ]
    assert text.rstrip().endswith("generation_count 2")


def test_metrics_plot_draws_a_png(vessel: Vessel, tmp_path: Path) -> None:
    """--plot writes a PNG of the metrics (matplotlib, the slopd[plot] extra) and still prints the table."""
    vessel.pack(vessel.lease(), letter(1), state())
    vessel.pack(vessel.lease(), letter(2), state(confidence=0.8))
    picture = tmp_path / "metrics.png"
    drawn = vessel.hub.slopd(
        "baton", "metrics", "--hub", str(vessel.hub.root), "oracle", "--plot", str(picture)
    )
    assert drawn.returncode == 0, drawn.stderr
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert picture.stat().st_size > 10_000
    assert "generation_count 2" in drawn.stdout


def test_metrics_plot_without_matplotlib_says_how_to_install_it(vessel: Vessel, tmp_path: Path) -> None:
    """Without the extra, --plot exits 2 naming `slopd[plot]`, and writes no file."""
    vessel.pack(vessel.lease(), letter(1), state())
    picture = tmp_path / "metrics.png"
    argv = ["baton", "metrics", "--hub", str(vessel.hub.root), "oracle", "--plot", str(picture)]
    code = (
        "import sys; sys.modules['matplotlib'] = None  # as if the extra were not installed\n"
        "from slopd.cli import main; sys.exit(main(sys.argv[1:]))"
    )
    ran = subprocess.run(
        [sys.executable, "-c", code, *argv], capture_output=True, text=True, env=vessel.hub.env, check=False
    )
    assert ran.returncode == 2
    assert "pip install 'slopd[plot]'" in ran.stderr
    assert not picture.exists()


def test_a_configured_summarizer_writes_the_autobiography_and_a_failing_one_does_not(
    vessel: Vessel, tmp_path: Path
) -> None:
    """[baton.summarizer]: its stdout (given every generation as JSON) is AUTOBIOGRAPHY.md,
    bounded; one that exits non-zero leaves the deterministic autobiography."""
    script = tmp_path / "summarize.py"
    script.write_text(
        "import json, sys\n"
        "sent = json.load(sys.stdin)\n"
        "print('\\n\\n'.join(f\"{sent['vessel']} gen {g['generation']} said {len(g['letter'])} chars\""
        " for g in sent['generations']))\n"
    )
    config = tmp_path / "etc" / "slopd.toml"
    config.parent.mkdir()
    config.write_text(f'[baton.summarizer]\ncommand = ["{sys.executable}", "{script}"]\n')
    packed = vessel.pack(vessel.lease(), letter(1), state(), "--config", str(config))
    assert packed.returncode == 0, packed.stderr
    told = (vessel.tree / "AUTOBIOGRAPHY.md").read_text()
    assert (
        told
        == f"# Autobiography — oracle (through generation 1)\n\noracle gen 1 said {len(letter(1))} chars\n"
    )
    config.write_text('[baton.summarizer]\ncommand = ["/bin/false"]\n')
    packed = vessel.pack(vessel.lease(), letter(2), state(), "--config", str(config))
    assert packed.returncode == 0, packed.stderr
    fallback = (vessel.tree / "AUTOBIOGRAPHY.md").read_text()
    assert "**Gen-2 " in fallback
    assert "**Gen-1 " in fallback


def test_the_projection_is_addressed_to_the_configured_watcher(vessel: Vessel, tmp_path: Path) -> None:
    """A hub whose watcher is named only `watcher:laptop` gets the commit's handoff addressed to it."""
    config = tmp_path / "etc" / "slopd.toml"
    config.parent.mkdir()
    config.write_text('names = ["watcher:laptop"]\n')
    packed = vessel.pack(vessel.lease(), letter(1), state(), "--config", str(config))
    assert packed.returncode == 0, packed.stderr
    projected = json.loads(packed.stdout)["projected"]
    text = (vessel.hub.root / "inbox" / f"{projected}.md").read_text()
    assert "\nto: watcher:laptop\n" in text
