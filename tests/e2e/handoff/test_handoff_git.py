"""The MEP merge driver inside real `git` (SPEC §10, the seed's "autonomous merge test").

Real repositories and clones in a temp dir, a HOME and global git config of their own, the
driver registered with `slopd handoff install-merge-driver` and run by git itself. The last
tests replay a real divergent MEP log (CRMinarian/gbrain, see the corpus MANIFEST §C) by reading
its BASE/OURS/THEIRS files at test time; they are skipped when that corpus is not on the machine.
"""

from __future__ import annotations

import difflib
import json
import subprocess
from collections import Counter
from pathlib import Path

import pytest

from slopd.handoff.grammar import Entry, parse
from slopd.handoff.merge import key
from tests import ROOT, corpus
from tests.conftest import SLOPD, git_env

FIXTURES = ROOT / "tests" / "fixtures" / "handoff"
MERGE_CASE = corpus.CORPUS / "mep" / "merge-case__crminarian-gbrain__handoff"  # read, never copied (licences)


@pytest.fixture(name="env")
def fixture_env(tmp_path: Path) -> dict[str, str]:
    return git_env(tmp_path)


def run_git(env: dict[str, str], cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=60
    )


def git(env: dict[str, str], cwd: Path, *args: str | Path) -> str:
    done = run_git(env, cwd, *args)
    assert done.returncode == 0, f"git {' '.join(map(str, args))}:\n{done.stdout}{done.stderr}"
    return done.stdout


def slopd(env: dict[str, str], cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SLOPD, *map(str, args)], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=60
    )


def add_entry(env: dict[str, str], repo: Path, agent: str, date: str, tag_out: str, happened: str) -> None:
    """`slopd handoff new` a v2 entry into repo/handoff.md and commit it."""
    done = slopd(
        env, repo, "handoff", "new", "handoff.md", "--agent", agent, "--platform", f"{agent}'s box",
        "--session-type", "code", "--date", date, "--tag-in", "07:00 UTC", "--tag-out", tag_out,
        "--happened", happened, "--pending", f"Follow up on: {happened}",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    git(env, repo, "commit", "-q", "-am", f"handoff: {happened}")


def headings(text: str) -> list[str]:
    return [line for line in text.split("\n") if line.startswith("## ")]


def install(env: dict[str, str], repo: Path) -> None:
    done = slopd(env, repo, "handoff", "install-merge-driver")
    assert done.returncode == 0, done.stderr


def lint_strict_clean(env: dict[str, str], path: Path) -> None:
    done = slopd(env, path.parent, "handoff", "lint", "--strict", path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def unmerged(env: dict[str, str], repo: Path) -> list[str]:
    return git(env, repo, "diff", "--name-only", "--diff-filter=U").split()


@pytest.fixture(name="repo")
def fixture_repo(tmp_path: Path, env: dict[str, str]) -> Path:
    """A repository on `main` holding the two-entry valid log as handoff.md."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(env, repo, "init", "-q", "-b", "main")
    (repo / "handoff.md").write_bytes((FIXTURES / "valid.md").read_bytes())
    git(env, repo, "add", "handoff.md")
    git(env, repo, "commit", "-q", "-m", "the handoff log")
    return repo


OLD = headings((FIXTURES / "valid.md").read_text(encoding="utf-8"))


def test_autonomous_merge_of_two_clones(env: dict[str, str], tmp_path: Path, repo: Path) -> None:
    """Two clones each add a newer entry; with the driver `git pull` merges them with no human step."""
    origin = tmp_path / "origin.git"
    git(env, tmp_path, "clone", "-q", "--bare", repo, origin)
    attic, cellar = tmp_path / "attic", tmp_path / "cellar"
    git(env, tmp_path, "clone", "-q", origin, attic)
    git(env, tmp_path, "clone", "-q", origin, cellar)
    add_entry(env, attic, "Wren", "2026-05-22", "10:00 UTC", "Attic work")
    add_entry(env, cellar, "Otto", "2026-05-23", "11:00 UTC", "Cellar work")
    git(env, cellar, "push", "-q", "origin", "main")
    install(env, attic)
    pulled = run_git(env, attic, "pull", "--no-rebase", "--no-edit", "origin", "main")
    assert pulled.returncode == 0, pulled.stdout + pulled.stderr
    assert "CONFLICT" not in pulled.stdout + pulled.stderr
    assert unmerged(env, attic) == []
    assert git(env, attic, "status", "--porcelain", "--untracked-files=no") == ""
    parents = git(env, attic, "rev-list", "--parents", "-n", "1", "HEAD").split()
    assert len(parents) == 3  # a real merge commit, made without an editor or a hand
    text = (attic / "handoff.md").read_text(encoding="utf-8")
    assert "<<<<<<<" not in text
    assert headings(text) == [
        "## 2026-05-23 — Otto | Otto's box | code",
        "## 2026-05-22 — Wren | Wren's box | code",
        *OLD,
    ]
    for bullet in (
        "Attic work",
        "Cellar work",
        "Wired the backup job to the new bucket",
        "Compared three bucket providers",
    ):
        assert text.count(f"\n- {bullet}\n") == 1
    lint_strict_clean(env, attic / "handoff.md")


def test_same_day_entries_are_merged_by_tag_out(env: dict[str, str], repo: Path) -> None:
    """Two new same-day entries come out later Tag-out first, zones applied (09:30 ET is after 12:45 UTC)."""
    git(env, repo, "checkout", "-q", "-b", "theirs")
    add_entry(env, repo, "Otto", "2026-05-21", "09:30 ET", "Late session")
    git(env, repo, "checkout", "-q", "main")
    add_entry(env, repo, "Wren", "2026-05-21", "12:45 UTC", "Early session")
    install(env, repo)
    merged = run_git(env, repo, "merge", "--no-edit", "theirs")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = (repo / "handoff.md").read_text(encoding="utf-8")
    assert headings(text) == [
        "## 2026-05-21 — Otto | Otto's box | code",
        "## 2026-05-21 — Wren | Wren's box | code",
        *OLD,
    ]
    lint_strict_clean(env, repo / "handoff.md")


def test_remerging_is_stable(env: dict[str, str], repo: Path) -> None:
    """Merging both ways agrees, a criss-cross re-merge keeps each entry once, and a no-op merge is one."""
    install(env, repo)
    git(env, repo, "checkout", "-q", "-b", "b")
    add_entry(env, repo, "Otto", "2026-05-23", "11:00 UTC", "B first")
    git(env, repo, "checkout", "-q", "-b", "a", "main")
    add_entry(env, repo, "Wren", "2026-05-22", "10:00 UTC", "A first")
    a_tip = git(env, repo, "rev-parse", "HEAD").strip()
    git(env, repo, "merge", "-q", "--no-edit", "b")
    on_a = (repo / "handoff.md").read_bytes()
    git(env, repo, "checkout", "-q", "b")
    git(env, repo, "merge", "-q", "--no-edit", a_tip)
    assert (repo / "handoff.md").read_bytes() == on_a
    add_entry(env, repo, "Otto", "2026-05-25", "11:00 UTC", "B second")
    git(env, repo, "checkout", "-q", "a")
    add_entry(env, repo, "Wren", "2026-05-24", "10:00 UTC", "A second")
    assert len(git(env, repo, "merge-base", "--all", "a", "b").split()) == 2  # criss-cross
    merged = run_git(env, repo, "merge", "--no-edit", "b")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    text = (repo / "handoff.md").read_text(encoding="utf-8")
    assert [line.split(" — ")[0] for line in headings(text)] == [
        "## 2026-05-25",
        "## 2026-05-24",
        "## 2026-05-23",
        "## 2026-05-22",
        "## 2026-05-20",
        "## 2026-05-19",
    ]
    lint_strict_clean(env, repo / "handoff.md")
    before = (repo / "handoff.md").read_bytes()
    again = run_git(env, repo, "merge", "--no-edit", "b")
    assert again.returncode == 0
    assert "Already up to date" in again.stdout
    assert (repo / "handoff.md").read_bytes() == before


def test_without_the_driver_git_conflicts(env: dict[str, str], repo: Path) -> None:
    """Without the driver, the same two top-of-file entries make plain `git merge` stop with a conflict."""
    git(env, repo, "checkout", "-q", "-b", "theirs")
    add_entry(env, repo, "Otto", "2026-05-23", "11:00 UTC", "Theirs")
    git(env, repo, "checkout", "-q", "main")
    add_entry(env, repo, "Wren", "2026-05-22", "10:00 UTC", "Ours")
    merged = run_git(env, repo, "merge", "--no-edit", "theirs")
    assert merged.returncode == 1
    assert "CONFLICT" in merged.stdout
    assert unmerged(env, repo) == ["handoff.md"]


def test_header_conflict_reaches_git_with_its_markers(env: dict[str, str], repo: Path) -> None:
    """A file header both sides reworded differently stops git, with git's 7-character markers in the file."""
    description = "Notes passed from one session to the next. Newest entry on top."
    install(env, repo)
    git(env, repo, "checkout", "-q", "-b", "theirs")
    path = repo / "handoff.md"
    path.write_text(path.read_text(encoding="utf-8").replace(description, "Theirs: the cellar log."), "utf-8")
    git(env, repo, "commit", "-q", "-am", "theirs: header")
    git(env, repo, "checkout", "-q", "main")
    path.write_text(path.read_text(encoding="utf-8").replace(description, "Ours: the attic log."), "utf-8")
    git(env, repo, "commit", "-q", "-am", "ours: header")
    add_entry(env, repo, "Wren", "2026-05-22", "10:00 UTC", "Ours")
    merged = run_git(env, repo, "merge", "--no-edit", "theirs")
    assert merged.returncode == 1
    assert unmerged(env, repo) == ["handoff.md"]
    lines = path.read_text(encoding="utf-8").split("\n")
    assert [line for line in lines if line.startswith(("<<<<", "====", ">>>>"))] == [
        "<<<<<<< ours",
        "=======",
        ">>>>>>> theirs",
    ]
    assert "Ours: the attic log." in lines
    assert "Theirs: the cellar log." in lines
    assert headings("\n".join(lines)) == ["## 2026-05-22 — Wren | Wren's box | code", *OLD]


# ------------------------------------------------------------------ the real gbrain divergence


def case_file(prefix: str) -> Path:
    if not MERGE_CASE.is_dir():
        pytest.skip(corpus.missing(MERGE_CASE))
    [found] = sorted(MERGE_CASE.glob(f"{prefix}__*.md"))
    return found


def entry_keys(text: str) -> list[tuple[str, str]]:
    """Each entry as (its `## ` heading, its text), in file order."""
    return [(block.heading, key(block)) for block in parse(text).blocks if isinstance(block, Entry)]


@pytest.fixture(name="gbrain")
def fixture_gbrain(tmp_path: Path, env: dict[str, str]) -> Path:
    """A repository where `ours` and `theirs` diverged from BASE exactly as gbrain's handoff.md did."""
    base, ours, theirs = case_file("BASE"), case_file("OURS"), case_file("THEIRS")
    repo = tmp_path / "gbrain"
    repo.mkdir()
    git(env, repo, "init", "-q", "-b", "ours")
    path = repo / "handoff.md"
    path.write_bytes(base.read_bytes())
    git(env, repo, "add", "handoff.md")
    git(env, repo, "commit", "-q", "-m", "base")
    git(env, repo, "branch", "theirs")
    path.write_bytes(ours.read_bytes())
    git(env, repo, "commit", "-q", "-am", "ours: four new entries")
    git(env, repo, "checkout", "-q", "theirs")
    path.write_bytes(theirs.read_bytes())
    git(env, repo, "commit", "-q", "-am", "theirs: one new entry")
    git(env, repo, "checkout", "-q", "ours")
    return repo


@pytest.mark.corpus
def test_real_divergent_log_merges_with_the_driver(env: dict[str, str], gbrain: Path) -> None:
    """The real gbrain divergence merges (exit 0) with each entry of OURS and THEIRS once, newest first."""
    ours = case_file("OURS").read_text(encoding="utf-8")
    theirs = case_file("THEIRS").read_text(encoding="utf-8")
    install(env, gbrain)
    merged = run_git(env, gbrain, "merge", "--no-edit", "theirs")
    assert merged.returncode == 0, merged.stdout + merged.stderr
    assert unmerged(env, gbrain) == []
    text = (gbrain / "handoff.md").read_text(encoding="utf-8")
    assert "<<<<<<<" not in text
    result = entry_keys(text)
    wanted = set(entry_keys(ours)) | set(entry_keys(theirs))
    assert len(wanted) == 7
    assert Counter(result) == Counter(dict.fromkeys(wanted, 1))
    days = [block.header.day for block in parse(text).entries]
    dated = [day for day in days if day is not None]
    assert len(dated) == len(days) == 7
    assert dated == sorted(dated, reverse=True)
    # the two 2026-04-20 entries have free-text Tag-outs: ours first, then theirs
    assert [heading for heading, _ in result if "2026-04-20" in heading] == [
        "## 2026-04-20 — Claude | Claude (Code) | office-hours + product-strategy",
        "## 2026-04-20 — Claude | Claude (Code desktop, MBP) | split + scrub + EOL",
    ]
    lint = slopd(env, gbrain, "handoff", "lint", "--json", "handoff.md")
    report = json.loads(lint.stdout)
    assert report["conformant"] is True
    assert {finding["rule"] for finding in report["findings"]} <= {"MEP11"}


@pytest.mark.corpus
def test_real_divergent_log_matches_the_committed_resolution(env: dict[str, str], gbrain: Path) -> None:
    """The driver gives gbrain's committed resolution plus the one blank line that resolution dropped."""
    committed = case_file("MERGED").read_text(encoding="utf-8").split("\n")
    install(env, gbrain)
    git(env, gbrain, "merge", "-q", "--no-edit", "theirs")
    ours = (gbrain / "handoff.md").read_text(encoding="utf-8").split("\n")
    changes = [
        (tag, committed[i1:i2], ours[j1:j2])
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=committed, b=ours, autojunk=False).get_opcodes()
        if tag != "equal"
    ]
    assert changes == [("insert", [], [""])]


@pytest.mark.corpus
def test_real_divergent_log_conflicts_without_the_driver(
    env: dict[str, str], gbrain: Path, tmp_path: Path
) -> None:
    """Without the driver this divergence stops `git merge`, and `git merge-file` finds one conflict hunk."""
    merged = run_git(env, gbrain, "merge", "--no-edit", "theirs")
    assert merged.returncode == 1
    assert "CONFLICT" in merged.stdout
    assert unmerged(env, gbrain) == ["handoff.md"]
    assert (
        sum(line.startswith("<<<<<<<") for line in (gbrain / "handoff.md").read_text("utf-8").split("\n"))
        == 1
    )
    copies = []
    for name in ("OURS", "BASE", "THEIRS"):
        copy = tmp_path / f"{name.lower()}.md"
        copy.write_bytes(case_file(name).read_bytes())
        copies.append(copy)
    file_merge = run_git(env, tmp_path, "merge-file", "-p", *copies)
    assert file_merge.returncode == 1  # git merge-file exits with the number of conflicts
    assert file_merge.stdout.count("\n<<<<<<< ") == 1
