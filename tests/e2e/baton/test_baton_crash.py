"""Crash safety of `slopd baton pack` (SPEC §11), with real SIGKILL: cut short after each of its
file writes, and at random moments while writing a large letter. After each cut, boot sees a
complete generation (the old one, or the new one if GENERATION was written), presents nothing
of the uncommitted one (its letter, its autobiography paragraph, its fitness record), reports
it, and the next pack succeeds without a second evolution record."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import SLOPD, HubDir

pytestmark = pytest.mark.slow
FILES_PER_PACK = 9  # STATE, HANDOFF, SCORE, CURRENT/ ×2, AUTOBIOGRAPHY, evolution ×2, GENERATION


def letter(generation: int, padding: int = 0) -> str:
    return (
        f"# Handoff Letter — Generation {generation}\n\n"
        f"## Who I Was\nGen {generation} was letter-{generation}.\n\n"
        "## Where Things Stand\nThe bug is at line 4 of a file, offset 0x1, byte 2, because it caused "
        "a crash which meant a result.\n\n"
        "## What I'd Do Next\n1. Fix it.\n\n## What I'm Uncertain About\nNot sure; it might be two.\n\n"
        "## Lessons\nThe root cause is a pattern.\n" + ("\n<!-- padding -->" + "x" * 100) * padding
    )


class Keeper:
    def __init__(self, hub: HubDir, tmp: Path) -> None:
        self.hub, self.tmp = hub, tmp
        (tmp / "id.json").write_text('{"name": "v"}')
        (tmp / "state.json").write_text('{"confidence": 0.5, "tasks_completed": 2}')
        assert (
            self.run("init", "--hub", str(hub.root), "--identity", str(tmp / "id.json"), "v").returncode == 0
        )

    def run(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*SLOPD, "baton", *args],
            capture_output=True,
            text=True,
            env=env or self.hub.env,
            timeout=60,
            check=False,
        )

    def lease(self) -> str:
        taken = self.run(
            "lease", "--hub", str(self.hub.root), "--state", str(self.hub.state), "v", "--holder", "g"
        )
        assert taken.returncode == 0, taken.stderr
        return str(json.loads(taken.stdout)["lease_id"])

    def pack_args(self, lease: str, text: str) -> list[str]:
        (self.tmp / "letter.md").write_text(text)
        return [
            "pack", "--hub", str(self.hub.root), "--state", str(self.hub.state), "v", "--lease", lease,
            "--letter", str(self.tmp / "letter.md"), "--state-file", str(self.tmp / "state.json"),
        ]  # fmt: skip

    def boot(self, *, as_text: bool = True) -> tuple[int, dict[str, Any], str]:
        """Boot as JSON (its `files` hold every text presented), after checking that it, and the text
        boot when `as_text`, show nothing of the generations above the one booted."""
        booted = self.run("boot", "--hub", str(self.hub.root), "v", "--json")
        plan = json.loads(booted.stdout)
        outputs = [booted.stdout]
        if as_text:
            shown = self.run("boot", "--hub", str(self.hub.root), "v")
            assert shown.returncode == booted.returncode
            outputs.append(shown.stdout)
        for above in range(plan["generation"] + 1, plan["generation"] + 3):
            for text in outputs:
                nothing_of(above, text)
        return booted.returncode, plan, booted.stderr

    def history(self) -> list[int]:
        path = self.hub.root / "batons" / "v" / "evolution" / "fitness_history.json"
        return [record["generation"] for record in json.loads(path.read_text())]


def nothing_of(generation: int, text: str) -> None:
    """No trace of `generation` in a boot's output: its letter, autobiography paragraph, records."""
    assert f"letter-{generation}" not in text  # the letter, and the autobiography's first sentence of it
    assert f"Gen-{generation} " not in text  # the autobiography's paragraph or folded line
    assert f'"generation": {generation}' not in text  # its STATE.json, fitness or mutation record
    assert f"Generation {generation}\n" not in text


@pytest.fixture(name="keeper")
def fixture_keeper(hub: HubDir, tmp_path: Path) -> Keeper:
    made = Keeper(hub, tmp_path)
    first = made.run(*made.pack_args(made.lease(), letter(1)))
    assert first.returncode == 0, first.stderr
    return made


@pytest.mark.parametrize("cut", range(1, FILES_PER_PACK + 1))
def test_a_pack_killed_after_each_write_leaves_a_bootable_tree_and_the_next_pack_succeeds(
    keeper: Keeper, cut: int
) -> None:
    """Killed after write `cut` of 9: GENERATION is 1 (interrupted v2 reported) or 2 (complete)."""
    lease = keeper.lease()
    env = dict(keeper.hub.env, SLOPD_FAULTS=f"baton.written={cut}")
    killed = keeper.run(*keeper.pack_args(lease, letter(2)), env=env)
    assert killed.returncode == -signal.SIGKILL
    code, plan, warned = keeper.boot()
    assert code == 0, warned
    assert plan["bootable"]
    if cut < FILES_PER_PACK:
        assert plan["generation"] == 1
        assert "interrupted handoff: generations/v2/ exists but GENERATION is 1" in warned
        said = " ".join(plan["left_out"])
        assert ("AUTOBIOGRAPHY.md was written for generation 2" in said) == (cut >= 6), said
        assert ("fitness_history.json: 1 record of generation 2" in said) == (cut >= 7), said
        again = keeper.run(*keeper.pack_args(lease, letter(2)))  # the same lease: it was never released
        assert again.returncode == 0, again.stderr
    else:
        assert plan["generation"] == 2  # GENERATION was written: the generation is complete
        assert "interrupted" not in warned
    assert keeper.history()[:2] == [1, 2]
    third = keeper.run(*keeper.pack_args(keeper.lease(), letter(3)))
    assert third.returncode == 0, third.stderr
    code, plan, warned = keeper.boot()
    assert (code, plan["generation"], warned) == (0, 3, "")
    assert keeper.history() == [1, 2, 3]


@pytest.mark.timeout(180)  # 8 rounds of a ~900 KB pack, a kill, two boots and a redo, on a shared machine
def test_kills_at_random_moments_of_a_large_pack_never_tear_a_generation(keeper: Keeper) -> None:
    """Eight packs of a ~900 KB letter killed at random: boot always sees a whole generation."""
    seed = random.SystemRandom().randrange(2**32)
    rng = random.Random(seed)
    generation = 1
    for _ in range(8):
        lease = keeper.lease()
        args = keeper.pack_args(lease, letter(generation + 1, padding=8500))
        process = subprocess.Popen(
            [*SLOPD, "baton", *args], env=keeper.hub.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(rng.uniform(0.05, 0.6))  # the scenario: SIGKILL at a random moment of the pack
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        code, plan, warned = keeper.boot(as_text=False)
        assert code == 0, (seed, warned)
        assert plan["generation"] in (generation, generation + 1), seed
        if plan["generation"] == generation:
            finished = keeper.run(*args)
            assert finished.returncode == 0, (seed, finished.stderr)
        generation += 1
        assert keeper.history() == list(range(1, generation + 1)), seed
        assert keeper.boot(as_text=False)[1]["generation"] == generation, seed
