"""`slopd baton boot` presents nothing of a generation above GENERATION (SPEC §11), black-box on
real trees: one torn by a pack SIGKILLed before its marker, one torn the way flux-baton's real
tree is (written by hand here), and the corpus's own torn tree read in place. Boot says what it
left out, names a SCORE.json that is another letter's, and a refused boot is not recorded."""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from slopd.baton.score import report
from tests import corpus
from tests.conftest import HubDir
from tests.e2e.baton.test_baton_pack import Vessel, letter, state

TORN = corpus.CORPUS / "baton" / "superinstance-flux-baton-test__tree-at-777702f" / ".baton"

SECRET = "Zebra-of-gen-2 moved the parser."  # only generation 2's letter says it


def nothing_of_generation_2(text: str) -> None:
    """No trace of generation 2 in a boot's output: its letter, autobiography paragraph, records."""
    assert "Zebra-of-gen-2" not in text  # the letter, and its sentence in the autobiography
    assert "I was gen 2" not in text
    assert "Gen-2 " not in text  # an autobiography paragraph or folded line
    assert '"generation": 2' not in text  # its STATE.json, fitness or mutation record


def boot(hub: HubDir, vessel: str = "oracle", *, text: bool = True) -> tuple[int, dict[str, Any], str, str]:
    """The JSON boot, the text boot's stdout ("" unless `text`) and the warnings."""
    where = ("baton", "boot", "--hub", str(hub.root), "--state", str(hub.state), vessel)
    as_json = hub.slopd(*where, "--json")
    shown = ""
    if text:
        as_text = hub.slopd(*where)
        assert as_text.returncode == as_json.returncode
        shown = as_text.stdout
    return as_json.returncode, json.loads(as_json.stdout), shown, as_json.stderr


def registry(hub: HubDir) -> dict[str, Any]:
    listed = hub.slopd("baton", "registry", "--hub", str(hub.root), "--state", str(hub.state), "--json")
    assert listed.returncode == 0, listed.stderr
    return {found["vessel"]: found for found in json.loads(listed.stdout)["vessels"]}


@dataclass(frozen=True)
class Torn:
    vessel: Vessel
    lease: str  # the killed pack's, never released


@pytest.fixture(name="torn")
def fixture_torn(hub: HubDir, tmp_path: Path) -> Torn:
    """Generation 1 committed; generation 2's pack killed after every write but GENERATION."""
    vessel = Vessel(hub, tmp_path)
    assert vessel.pack(vessel.lease(), letter(1), state()).returncode == 0
    lease = vessel.lease()
    vessel.killed_pack(lease, letter(2, SECRET), state(confidence=0.9), writes=8)
    assert (vessel.tree / "GENERATION").read_bytes() == b"1"
    assert "Zebra-of-gen-2" in (vessel.tree / "AUTOBIOGRAPHY.md").read_text()  # what is at stake
    assert '"generation": 2' in (vessel.tree / "evolution" / "fitness_history.json").read_text()
    return Torn(vessel, lease)


def test_a_pack_killed_before_its_marker_boots_generation_1_with_nothing_of_generation_2(torn: Torn) -> None:
    """The letter, the autobiography paragraph and the fitness record of v2 are all left out, and
    said to be; the autobiography is rebuilt from v1; the boot is recorded as generation 1's."""
    hub = torn.vessel.hub
    code, plan, shown, warned = boot(hub)
    assert (code, plan["generation"], plan["bootable"]) == (0, 1, True)
    for text in (json.dumps(plan, ensure_ascii=False), shown):
        nothing_of_generation_2(text)
    assert "interrupted handoff: generations/v2/ exists but GENERATION is 1" in warned
    assert plan["left_out"] == [
        "AUTOBIOGRAPHY.md was written for generation 2, above GENERATION 1 (never committed): "
        "rebuilt from the committed generations (v1) instead",
        "evolution/fitness_history.json: 1 record of generation 2 not presented "
        "(GENERATION is 1: nothing above it was committed)",
    ]
    assert f"left out: {plan['left_out'][0]}" in warned
    assert f"(left out: {plan['left_out'][1]})" in shown
    told = plan["files"]["AUTOBIOGRAPHY.md"]
    assert told.startswith("# Autobiography — oracle (through generation 1)\n")
    assert "**Gen-1 (" in told
    fitness = json.loads(plan["files"]["evolution/fitness_history.json"])
    assert [record["generation"] for record in fitness] == [1]
    assert registry(hub)["oracle"]["last_boot"]["generation"] == 1


def test_once_generation_2_is_committed_its_files_are_presented_whole(torn: Torn) -> None:
    """The killed pack's lease finishes it; then nothing is left out and the tree's own L1 is shown."""
    again = torn.vessel.pack(torn.lease, letter(2, SECRET), state(confidence=0.9))
    assert again.returncode == 0, again.stderr
    code, plan, shown, warned = boot(torn.vessel.hub)
    assert (code, plan["generation"], plan["left_out"], warned) == (0, 2, [], "")
    assert plan["files"]["AUTOBIOGRAPHY.md"] == (torn.vessel.tree / "AUTOBIOGRAPHY.md").read_text()
    assert "Zebra-of-gen-2" in shown


def test_a_tree_torn_like_flux_batons_boots_nothing_of_the_uncommitted_generation(
    hub: HubDir, tmp_path: Path
) -> None:
    """As flux-baton's client leaves a tree whose marker write failed: an autobiography of only
    "Gen-2" that names no generation, a fitness history of only gen 2's record, and a v2 SCORE.json
    scored on the other letter (CURRENT/'s). Boot shows none of it and says why."""
    vessel = Vessel(hub, tmp_path)
    assert vessel.pack(vessel.lease(), letter(1), state()).returncode == 0
    other = letter(2, "The cross-assembler is 90% done, a long story. " * 8)
    tree = vessel.tree
    (tree / "generations" / "v2").mkdir()
    (tree / "generations" / "v2" / "HANDOFF.md").write_text(letter(2, SECRET))
    flux_score = {**report(other), "word_count": len(other.split())}
    del flux_score["words"]
    (tree / "generations" / "v2" / "SCORE.json").write_text(json.dumps(flux_score))
    (tree / "CURRENT" / "HANDOFF.md").write_text(other)
    (tree / "AUTOBIOGRAPHY.md").write_text(f"# Autobiography\n\n## Gen-2 (score: 7.1)\n\n{SECRET}\n")
    (tree / "evolution" / "fitness_history.json").write_text('[{"generation": 2, "handoff_score": 7.1}]')

    code, plan, shown, warned = boot(hub)
    assert (code, plan["generation"]) == (0, 1)
    for text in (json.dumps(plan, ensure_ascii=False), shown):
        nothing_of_generation_2(text)
        assert "7.1" not in text
    assert plan["left_out"][0] == (
        "AUTOBIOGRAPHY.md does not say which generation it was written for: "
        "rebuilt from the committed generations (v1) instead"
    )
    assert plan["left_out"][1].startswith("evolution/fitness_history.json: 1 record of generation 2 not")
    assert json.loads(plan["files"]["evolution/fitness_history.json"]) == []
    words, mine = len(other.split()), len(letter(2, SECRET).split())
    assert (
        f"generations/v2/SCORE.json is the score of another letter: it counts {words} words and an "
        f"average of {flux_score['average']}; generations/v2/HANDOFF.md beside it has {mine} words"
    ) in warned
    assert "CURRENT/HANDOFF.md differs from generations/v1/HANDOFF.md; the latter is read" in warned


def test_a_refused_boot_is_not_recorded_as_a_boot(hub: HubDir, tmp_path: Path) -> None:
    """Exit 1 (GENERATION's own files missing) leaves the registry's last boot the earlier one."""
    vessel = Vessel(hub, tmp_path)
    assert boot(hub, text=False)[0] == 0  # generation 0, recorded
    assert vessel.pack(vessel.lease(), letter(1), state()).returncode == 0
    (vessel.tree / "generations" / "v1" / "STATE.json").unlink()
    code, plan, _shown, warned = boot(hub, text=False)
    assert (code, plan["generation"], plan["bootable"]) == (1, 1, False)
    assert "generations/v1/STATE.json is missing: generation 1 cannot be booted from" in warned
    assert registry(hub)["oracle"]["last_boot"]["generation"] == 0
    listed = hub.slopd("baton", "registry", "--hub", str(hub.root), "--state", str(hub.state))
    assert "(v0)" in listed.stdout
    assert "(v1)" not in listed.stdout


@pytest.mark.corpus
def test_the_real_torn_tree_is_refused_and_nothing_of_its_generation_2_is_printed(hub: HubDir) -> None:
    """The corpus's flux-baton-test `.baton/` at 777702f, read in place (copied into the test's temp
    hub, never into the repo): GENERATION 1 with only generation 2's data. Boot refuses (exit 1),
    prints none of gen 2 — not "Gen-2 (score: 7.1)", not its fitness record, not a letter —
    names v2's SCORE.json as another letter's, and the refused boot is not recorded."""
    if not TORN.is_dir():
        pytest.skip(corpus.missing(TORN))
    (hub.root / "batons").mkdir()
    shutil.copytree(TORN, hub.root / "batons" / "flux")
    code, plan, shown, warned = boot(hub, "flux")
    assert (code, plan["generation"], plan["bootable"]) == (1, 1, False)
    assert not any(path.startswith(("generations/v2", "CURRENT")) for path in plan["loaded"])
    for text in (json.dumps(plan, ensure_ascii=False), shown):
        assert "Gen-2" not in text
        assert "(score: 7.1)" not in text
        assert '"generation": 2' not in text
        assert "cross_asm.py" not in text  # both letters' text, and the autobiography's
        assert "The root cause is" not in text
    assert "interrupted handoff: generations/v2/ exists but GENERATION is 1" in warned
    assert "gap in the generations: v1 missing" in warned
    assert "generations/v1/HANDOFF.md is missing" in warned
    assert "CURRENT/HANDOFF.md is there but generations/v1/HANDOFF.md is not" in warned
    assert (
        "generations/v2/SCORE.json is the score of another letter: it counts 253 words and an average "
        "of 7.1; generations/v2/HANDOFF.md beside it has 214 words and scores 5.71"
    ) in warned
    assert plan["left_out"] == [
        "AUTOBIOGRAPHY.md does not say which generation it was written for: "
        "rebuilt from the committed generations (v1) instead",
        "evolution/fitness_history.json: 1 record of generation 2 not presented "
        "(GENERATION is 1: nothing above it was committed)",
    ]
    assert registry(hub)["flux"]["last_boot"] is None
