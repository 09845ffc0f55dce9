"""`slopd handoff lint|new|merge|install-merge-driver` (SPEC §10), driven as a user would.

Every test runs the real `slopd` command in a subprocess (`tests.conftest.SLOPD`) on real files
in a temp dir. The fixtures in `tests/fixtures/handoff/` are our own text in the shapes of MEP's
own conformance fixtures (valid, valid-v2-sameday, valid-active, valid-mojibake-dash,
invalid-order, invalid-sameday, invalid-missing-section). `install-merge-driver` runs against
real `git` repositories, with a HOME and global config of their own.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests import ROOT
from tests.conftest import SLOPD, git_env

FIXTURES = ROOT / "tests" / "fixtures" / "handoff"
VALID_QUIET = ("valid.md", "valid-v2-sameday.md", "valid-active.md")
FINDING = re.compile(r"(?P<file>.+?):(?P<line>\d+): (?P<rule>MEP\d+) (?P<message>.+) — (?P<fix>.+)")
V2_TAGS = ("--tag-in", "08:00 UTC", "--tag-out", "09:15 UTC")


@pytest.fixture(name="env")
def fixture_env(tmp_path: Path) -> dict[str, str]:
    return git_env(tmp_path)


def slopd(
    env: dict[str, str], *args: str | Path, stdin: str | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*SLOPD, *map(str, args)],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=False,
    )


def fixture_copy(tmp_path: Path, name: str, *, crlf: bool = False) -> Path:
    data = (FIXTURES / name).read_bytes()
    target = tmp_path / name
    target.write_bytes(data.replace(b"\n", b"\r\n") if crlf else data)
    return target


def headings(text: str) -> list[str]:
    return [line.rstrip("\r") for line in text.split("\n") if line.startswith("## ")]


def findings(result: subprocess.CompletedProcess[str]) -> list[dict[str, str]]:
    """The finding lines of a text-mode lint run; every stdout line must be one."""
    lines = result.stdout.splitlines()
    parsed = [FINDING.fullmatch(line) for line in lines]
    assert all(parsed), f"not in FILE:LINE: RULE message — fix form:\n{result.stdout}"
    return [match.groupdict() for match in parsed if match]


def lint_json(env: dict[str, str], *files: Path) -> Any:
    result = slopd(env, "handoff", "lint", "--json", *files)
    return json.loads(result.stdout)


# ---------------------------------------------------------------------------------------- lint


@pytest.mark.parametrize("name", VALID_QUIET)
def test_lint_valid_fixture_is_silent(env: dict[str, str], name: str) -> None:
    """A conformant log (two dates, same day by Tag-out, [active] on top) exits 0 and prints nothing."""
    result = slopd(env, "handoff", "lint", "--strict", FIXTURES / name)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")


def test_lint_mojibake_dash_is_valid_with_a_warning(env: dict[str, str]) -> None:
    """A double-encoded em dash (`â€”`) in a date header is read: exit 0, no error, an MEP9 warning."""
    path = FIXTURES / "valid-mojibake-dash.md"
    assert "\u00e2\u20ac\u201d" in path.read_text(encoding="utf-8")
    result = slopd(env, "handoff", "lint", path)
    assert result.returncode == 0, result.stdout + result.stderr
    assert [(found["line"], found["rule"]) for found in findings(result)] == [("7", "MEP9")]
    report = lint_json(env, path)
    assert report["conformant"] is True
    assert {finding["severity"] for finding in report["findings"]} == {"warning"}


@pytest.mark.parametrize(
    ("name", "line", "rule"),
    [
        ("invalid-order.md", 18, "MEP2"),
        ("invalid-sameday.md", 18, "MEP2"),
        ("invalid-missing-section.md", 7, "MEP3"),
    ],
)
def test_lint_invalid_fixture_names_rule_and_line(
    env: dict[str, str], name: str, line: int, rule: str
) -> None:
    """A non-conformant log exits 1 with the rule it breaks at the line of the offending entry."""
    path = FIXTURES / name
    result = slopd(env, "handoff", "lint", path)
    assert result.returncode == 1, result.stdout + result.stderr
    found = findings(result)
    assert [(item["file"], int(item["line"]), item["rule"]) for item in found] == [(str(path), line, rule)]


def test_lint_text_line_is_file_line_rule_message_fix(env: dict[str, str], tmp_path: Path) -> None:
    """Each text finding is exactly `FILE:LINE: RULE message — fix`, the same fields --json gives."""
    path = fixture_copy(tmp_path, "invalid-order.md")
    text = slopd(env, "handoff", "lint", path)
    report = lint_json(env, path)
    expected = [
        f"{path}:{item['line']}: {item['rule']} {item['message']} — {item['fix']}"
        for item in report["findings"]
    ]
    assert expected
    assert text.stdout.splitlines() == expected


def test_lint_json_shape_for_one_file(env: dict[str, str]) -> None:
    """--json on one file prints one {file, conformant, findings: [{line, rule, severity, message, fix}]}."""
    path = FIXTURES / "invalid-missing-section.md"
    result = slopd(env, "handoff", "lint", "--json", path)
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert isinstance(report, dict)
    assert set(report) == {"file", "conformant", "findings"}
    assert (report["file"], report["conformant"]) == (str(path), False)
    [finding] = report["findings"]
    assert finding == {
        "line": 7,
        "rule": "MEP3",
        "severity": "error",
        "message": finding["message"],
        "fix": finding["fix"],
    }
    assert "What's pending" in finding["message"]
    assert finding["fix"]


def test_lint_json_lists_several_files_in_order(env: dict[str, str]) -> None:
    """--json on several files prints a list of per-file objects, in the order given."""
    paths = [FIXTURES / "valid.md", FIXTURES / "invalid-order.md", FIXTURES / "valid-active.md"]
    result = slopd(env, "handoff", "lint", "--json", *paths)
    assert result.returncode == 1
    reports = json.loads(result.stdout)
    assert isinstance(reports, list)
    assert [(item["file"], item["conformant"]) for item in reports] == [
        (str(paths[0]), True),
        (str(paths[1]), False),
        (str(paths[2]), True),
    ]
    assert reports[0]["findings"] == [] == reports[2]["findings"]
    assert [(item["line"], item["rule"]) for item in reports[1]["findings"]] == [(18, "MEP2")]


def test_lint_strict_fails_a_warning_only_file(env: dict[str, str], tmp_path: Path) -> None:
    """A file with warnings only (an ASCII ` - ` separator) exits 0, and 1 under --strict."""
    path = fixture_copy(tmp_path, "valid.md")
    path.write_text(
        path.read_text(encoding="utf-8").replace("2026-05-19 —", "2026-05-19 -"), encoding="utf-8"
    )
    plain = slopd(env, "handoff", "lint", path)
    strict = slopd(env, "handoff", "lint", "--strict", path)
    assert plain.returncode == 0
    assert strict.returncode == 1
    assert (
        [item["rule"] for item in findings(plain)] == ["MEP9"] == [item["rule"] for item in findings(strict)]
    )


def test_lint_unreadable_file_exits_2_and_the_others_are_linted(env: dict[str, str], tmp_path: Path) -> None:
    """A missing file and a directory exit 2, named on stderr, and the files after them are still linted."""
    missing, folder = tmp_path / "nowhere.md", tmp_path / "folder.md"
    folder.mkdir()
    invalid = FIXTURES / "invalid-sameday.md"
    result = slopd(env, "handoff", "lint", missing, folder, invalid, FIXTURES / "valid.md")
    assert result.returncode == 2
    assert str(missing) in result.stderr
    assert str(folder) in result.stderr
    assert [(item["file"], item["rule"]) for item in findings(result)] == [(str(invalid), "MEP2")]
    reports = lint_json(env, missing, invalid)
    assert [item["file"] for item in reports] == [str(missing), str(invalid)]
    assert "error" in reports[0]
    assert "conformant" not in reports[0]
    assert reports[1]["conformant"] is False


def test_lint_crlf_file(env: dict[str, str], tmp_path: Path) -> None:
    """CRLF line endings change nothing: a valid log is clean, an invalid one is found at the same line."""
    valid = fixture_copy(tmp_path, "valid-v2-sameday.md", crlf=True)
    invalid = fixture_copy(tmp_path, "invalid-order.md", crlf=True)
    clean = slopd(env, "handoff", "lint", "--strict", valid)
    assert (clean.returncode, clean.stdout) == (0, "")
    bad = slopd(env, "handoff", "lint", invalid)
    assert bad.returncode == 1
    assert [(item["line"], item["rule"]) for item in findings(bad)] == [("18", "MEP2")]


def test_lint_invalid_utf8_is_mep1(env: dict[str, str], tmp_path: Path) -> None:
    """Bytes that are not UTF-8 are an MEP1 error at their line; the rest of the log is still checked."""
    path = tmp_path / "latin1.md"
    data = (FIXTURES / "valid.md").read_bytes().replace(b"Compared three", b"Compar\xe9 three")
    path.write_bytes(data)
    line = data[: data.index(b"\xe9")].count(b"\n") + 1
    result = slopd(env, "handoff", "lint", path)
    assert result.returncode == 1
    assert [(int(item["line"]), item["rule"]) for item in findings(result)] == [(line, "MEP1")]
    report = lint_json(env, path)
    assert report["conformant"] is False
    assert [(item["line"], item["rule"], item["severity"]) for item in report["findings"]] == [
        (line, "MEP1", "error")
    ]


def test_lint_nul_byte_is_mep1(env: dict[str, str], tmp_path: Path) -> None:
    """A NUL byte makes the file not plain text: MEP1 at its line."""
    path = tmp_path / "nul.md"
    data = (FIXTURES / "valid.md").read_bytes().replace(b"backup job", b"backup\0job")
    path.write_bytes(data)
    result = slopd(env, "handoff", "lint", path)
    assert result.returncode == 1
    line = data[: data.index(b"\0")].count(b"\n") + 1
    assert [(int(item["line"]), item["rule"]) for item in findings(result)] == [(line, "MEP1")]


# ----------------------------------------------------------------------------------------- new


def test_new_v1_entry_creates_the_log(env: dict[str, str], tmp_path: Path) -> None:
    """`new --context` on a missing file writes the file header and a v1 entry that lints clean."""
    path = tmp_path / "handoff.md"
    result = slopd(
        env, "handoff", "new", path, "--agent", "Wren", "--context", "Attic (main)", "--date", "2026-05-20",
        "--happened", "Moved the cron job", "--pending", "Watch the next run",
        "--watch", "Disk is nearly full",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Handoff Log\n")
    assert headings(text) == ["## 2026-05-20 — Attic (main)"]
    body = text[text.index("## 2026-05-20") :]
    assert body == (
        "## 2026-05-20 — Attic (main)\n\n### What happened\n- Moved the cron job\n\n"
        "### What's pending\n- [ ] Watch the next run\n\n### Watch out for\n- Disk is nearly full\n"
    )
    lint = slopd(env, "handoff", "lint", "--strict", path)
    assert (lint.returncode, lint.stdout) == (0, "")


def test_new_v2_entry_creates_the_log(env: dict[str, str], tmp_path: Path) -> None:
    """`new --platform --session-type` writes a v2 heading with its Tag line into a new, lint-clean log."""
    path = tmp_path / "machines" / "handoff.md"
    path.parent.mkdir()
    result = slopd(
        env, "handoff", "new", path, "--agent", "Otto", "--platform", "Codex (Cellar)", "--session-type",
        "research", "--date", "2026-05-21", *V2_TAGS,
        "--happened", "Read the logs", "--pending", "Write it up",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = path.read_text(encoding="utf-8")
    assert text.startswith("# Handoff Log\n")
    assert headings(text) == ["## 2026-05-21 — Otto | Codex (Cellar) | research"]
    assert "\n**Tag-in:** 08:00 UTC | **Tag-out:** 09:15 UTC\n" in text
    assert "### What's pending\n- [ ] Write it up\n" in text
    lint = slopd(env, "handoff", "lint", "--strict", path)
    assert (lint.returncode, lint.stdout) == (0, "")


def test_new_prepends_above_the_existing_entries(env: dict[str, str], tmp_path: Path) -> None:
    """A newer entry goes on top; the old entries keep their bytes, and no temp file is left behind."""
    path = fixture_copy(tmp_path, "valid.md")
    old = path.read_text(encoding="utf-8")
    result = slopd(
        env, "handoff", "new", path, "--agent", "Wren", "--platform", "Claude (Attic)", "--session-type",
        "code", "--date", "2026-05-22", *V2_TAGS,
        "--happened", "Shipped the fix", "--pending", "Tag a release",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = path.read_text(encoding="utf-8")
    assert headings(text) == ["## 2026-05-22 — Wren | Claude (Attic) | code", *headings(old)]
    first_old = old.index("## 2026-05-20")
    assert text.startswith(old[:first_old])
    assert text.endswith(old[first_old:])
    assert sorted(item.name for item in tmp_path.iterdir()) == ["home", "valid.md"]
    assert slopd(env, "handoff", "lint", "--strict", path).returncode == 0


def test_new_sections_from_stdin_are_used_as_written(env: dict[str, str], tmp_path: Path) -> None:
    """With no --happened/--pending/--watch, stdin gives the sections as Markdown, kept verbatim."""
    path = fixture_copy(tmp_path, "valid.md")
    sections = (
        "### What happened\n- Rewrote `sync.py` — see **PR 7**\n  - kept the old flag for now\n\n"
        "### What's pending\n- [ ] **[Otto]** Review PR 7\n- [x] Ran the suite\n\n"
        "### Watch out for\n- The flag goes away in June\n"
    )
    result = slopd(
        env, "handoff", "new", path, "--agent", "Wren", "--platform", "Claude (Attic)", "--session-type",
        "code", "--date", "2026-05-22", *V2_TAGS, stdin=sections,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    text = path.read_text(encoding="utf-8")
    top = "## 2026-05-22 — Wren | Claude (Attic) | code\n**Tag-in:** 08:00 UTC | **Tag-out:** 09:15 UTC\n\n"
    assert top + sections in text
    assert headings(text)[0] == top.split("\n", 1)[0]
    assert slopd(env, "handoff", "lint", "--strict", path).returncode == 0


REFUSED = {
    "no What happened": [*V2_TAGS, "--pending", "Only a pending item"],
    "not a calendar date": ["--date", "2026-02-30", *V2_TAGS, "--happened", "x", "--pending", "y"],
    "not a date at all": ["--date", "last-tuesday", *V2_TAGS, "--happened", "x", "--pending", "y"],
    "v2 without a Tag line": ["--happened", "x", "--pending", "y"],
    "a half Tag line": ["--tag-in", "08:00 UTC", "--happened", "x", "--pending", "y"],
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_new_refuses_an_entry_that_would_not_lint(env: dict[str, str], tmp_path: Path, case: str) -> None:
    """An entry that would not lint clean is refused: exit 1, findings on stderr, the file byte-identical."""
    path = fixture_copy(tmp_path, "valid.md")
    before = path.read_bytes()
    result = slopd(
        env, "handoff", "new", path, "--agent", "Wren", "--platform", "Claude (Attic)",
        "--session-type", "code", "--date", "2026-05-22", *REFUSED[case],
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "refused" in result.stderr
    assert re.search(r": MEP\d+ ", result.stderr), result.stderr
    assert path.read_bytes() == before
    assert sorted(item.name for item in tmp_path.iterdir()) == ["home", "valid.md"]


@pytest.mark.parametrize(
    "stdin",
    [
        "",
        "Just a paragraph, no sections.\n",
        "### What happened\n- a\n\n### What's pending\n- [ ] b\n\n## 2026-05-23 — Desk (main)\n\n"
        "### What happened\n- c\n\n### What's pending\n- [ ] d\n",
    ],
    ids=["empty", "no-sections", "two-entries"],
)
def test_new_refuses_bad_stdin_sections(env: dict[str, str], tmp_path: Path, stdin: str) -> None:
    """Stdin sections that are missing or smuggle in a second entry are refused, and nothing is written."""
    path = fixture_copy(tmp_path, "valid.md")
    before = path.read_bytes()
    result = slopd(
        env, "handoff", "new", path, "--agent", "Wren", "--context", "Attic (main)", "--date", "2026-05-22",
        stdin=stdin,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert "refused" in result.stderr
    assert path.read_bytes() == before


def test_new_refused_entry_does_not_create_a_missing_file(env: dict[str, str], tmp_path: Path) -> None:
    """A refused entry for a file that does not exist leaves no file behind."""
    path = tmp_path / "handoff.md"
    result = slopd(
        env, "handoff", "new", path, "--agent", "Wren", "--context", "Attic (main)", "--date", "2026-13-01",
        "--happened", "x", "--pending", "y",
    )  # fmt: skip
    assert result.returncode == 1
    assert not path.exists()
    assert sorted(item.name for item in tmp_path.iterdir()) == ["home"]


def test_new_usage_errors_exit_2(env: dict[str, str], tmp_path: Path) -> None:
    """--context with --platform, or --platform without --session-type, is a usage error: exit 2, no file."""
    path = tmp_path / "handoff.md"
    both = slopd(
        env, "handoff", "new", path, "--agent", "A", "--context", "Desk (main)", "--platform", "P",
        "--session-type", "code", "--happened", "x", "--pending", "y",
    )  # fmt: skip
    half = slopd(
        env, "handoff", "new", path, "--agent", "A", "--platform", "P", "--happened", "x", "--pending", "y"
    )
    assert (both.returncode, half.returncode) == (2, 2)
    assert "--context" in both.stderr
    assert "--session-type" in half.stderr
    assert not path.exists()


def test_new_older_entry_is_filed_in_date_order(env: dict[str, str], tmp_path: Path) -> None:
    """An entry older than the log's entries goes below them, not on top, so the log stays newest-first."""
    path = fixture_copy(tmp_path, "valid.md")
    old = headings(path.read_text(encoding="utf-8"))
    result = slopd(
        env, "handoff", "new", path, "--agent", "Otto", "--context", "Cellar (main)", "--date", "2026-05-01",
        "--happened", "Late notes from the first of the month", "--pending", "Nothing",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert headings(path.read_text(encoding="utf-8")) == [*old, "## 2026-05-01 — Cellar (main)"]
    lint = slopd(env, "handoff", "lint", "--strict", path)
    assert (lint.returncode, lint.stdout) == (0, "")


def test_new_same_day_entry_goes_by_tag_out(env: dict[str, str], tmp_path: Path) -> None:
    """On a date the log already has, an entry that tagged out earlier goes below the later session."""
    path = fixture_copy(tmp_path, "valid-v2-sameday.md")
    old = headings(path.read_text(encoding="utf-8"))
    result = slopd(
        env, "handoff", "new", path, "--agent", "Mira", "--platform", "Gemini", "--session-type", "review",
        "--date", "2026-05-21", "--tag-in", "18:00 UTC", "--tag-out", "19:00 UTC", "--happened", "Reviewed",
        "--pending", "Merge it",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert headings(path.read_text(encoding="utf-8")) == [
        old[0],
        "## 2026-05-21 — Mira | Gemini | review",
        old[1],
    ]
    assert slopd(env, "handoff", "lint", "--strict", path).returncode == 0


def test_new_reads_every_tag_out_spelling_and_orders_by_the_instant(
    env: dict[str, str], tmp_path: Path
) -> None:
    """`handoff new` takes Tag-outs in MEP's spellings and the common others, and files each one
    by its instant: the log ends newest first and lints clean, warnings included."""
    path = tmp_path / "handoff.md"
    # 13:00 UTC, 18:30 UTC, 09:00 UTC, 15:00 UTC, 07:00 UTC, 23:00 UTC
    spellings = ("9:00 AM ET", "14:30ET", "09:00", "17:00 CEST", "09:00 +02:00", "11:00pm Z")
    for agent, tag_out in zip("ABCDEF", spellings, strict=True):
        result = slopd(
            env, "handoff", "new", path, "--agent", agent, "--platform", "Claude", "--session-type", "code",
            "--date", "2026-05-21", "--tag-in", "00:00 UTC", "--tag-out", tag_out, "--happened", "x",
            "--pending", "y",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
    agents = [heading.split(" — ")[1][0] for heading in headings(path.read_text(encoding="utf-8"))]

    assert agents == ["F", "B", "D", "A", "C", "E"]
    lint = slopd(env, "handoff", "lint", "--strict", path)
    assert (lint.returncode, lint.stdout) == (0, "")


def test_new_keeps_crlf(env: dict[str, str], tmp_path: Path) -> None:
    """A CRLF log stays CRLF: every line of the result, the new entry's included, ends in CRLF."""
    path = fixture_copy(tmp_path, "valid.md", crlf=True)
    old = path.read_bytes()
    result = slopd(
        env, "handoff", "new", path, "--agent", "Wren", "--context", "Attic (main)", "--date", "2026-05-22",
        "--happened", "One", "--pending", "Two",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    data = path.read_bytes()
    assert data.endswith(old[old.index(b"## 2026-05-20") :])
    assert data.count(b"\n") == data.count(b"\r\n") > old.count(b"\r\n")
    assert b"## 2026-05-22 \xe2\x80\x94 Attic (main)\r\n" in data
    assert slopd(env, "handoff", "lint", "--strict", path).returncode == 0


def test_new_keeps_the_file_mode(env: dict[str, str], tmp_path: Path) -> None:
    """Rewriting the log keeps its permission bits."""
    path = fixture_copy(tmp_path, "valid.md")
    path.chmod(0o640)
    result = slopd(
        env, "handoff", "new", path, "--agent", "Wren", "--context", "Attic (main)", "--date", "2026-05-22",
        "--happened", "One", "--pending", "Two",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "2026-05-22" in path.read_text(encoding="utf-8")
    assert stat.S_IMODE(path.stat().st_mode) == 0o640


# --------------------------------------------------------------------------------------- merge

BASE_LOG = (FIXTURES / "valid.md").read_text(encoding="utf-8")


def entry(heading: str, happened: str, pending: str = "- [ ] Follow up") -> str:
    """An entry block, with the `---` separator the fixtures use after it."""
    return f"{heading}\n\n### What happened\n{happened}\n\n### What's pending\n{pending}\n\n---\n\n"


def with_entries(*entries: str, log: str = BASE_LOG) -> str:
    """`log` with `entries` put above its first entry."""
    first = log.index("## ")
    return log[:first] + "".join(entries) + log[first:]


def three_way(tmp_path: Path, base: str, ours: str, theirs: str) -> tuple[Path, Path, Path]:
    paths = tmp_path / "base.md", tmp_path / "ours.md", tmp_path / "theirs.md"
    for path, text in zip(paths, (base, ours, theirs), strict=True):
        path.write_text(text, encoding="utf-8")
    return paths


OURS_NEW = entry("## 2026-05-22 — Wren | Claude (Attic) | code", "- Ours: new work")
THEIRS_NEW = entry("## 2026-05-23 — Otto | Codex (Cellar) | code", "- Theirs: newer work")


def v2(text: str) -> str:
    """A v2 entry block from `entry` text, with a Tag line under its heading."""
    heading, rest = text.split("\n", 1)
    return f"{heading}\n**Tag-in:** 08:00 UTC | **Tag-out:** 09:00 UTC\n{rest}"


def test_merge_cli_clean_writes_into_ours(env: dict[str, str], tmp_path: Path) -> None:
    """Both sides adding an entry merge cleanly (exit 0) into OURS, newest first, BASE and THEIRS kept."""
    ours_text, theirs_text = with_entries(v2(OURS_NEW)), with_entries(v2(THEIRS_NEW))
    base, ours, theirs = three_way(tmp_path, BASE_LOG, ours_text, theirs_text)
    result = slopd(env, "handoff", "merge", base, ours, theirs)
    assert result.returncode == 0, result.stderr
    merged = ours.read_text(encoding="utf-8")
    assert headings(merged) == [
        "## 2026-05-23 — Otto | Codex (Cellar) | code",
        "## 2026-05-22 — Wren | Claude (Attic) | code",
        *headings(BASE_LOG),
    ]
    assert merged == with_entries(v2(THEIRS_NEW), v2(OURS_NEW))
    assert (base.read_text(encoding="utf-8"), theirs.read_text(encoding="utf-8")) == (BASE_LOG, theirs_text)
    lint = slopd(env, "handoff", "lint", "--strict", ours)
    assert (lint.returncode, lint.stdout) == (0, "")


def test_merge_cli_header_conflict_uses_marker_size(env: dict[str, str], tmp_path: Path) -> None:
    """A file header both sides changed differently exits 1 with --marker-size markers; entries merge."""
    description = "Notes passed from one session to the next. Newest entry on top."
    ours_text = with_entries(v2(OURS_NEW), log=BASE_LOG.replace(description, "Ours: the attic log."))
    theirs_text = BASE_LOG.replace(description, "Theirs: the cellar log.")
    base, ours, theirs = three_way(tmp_path, BASE_LOG, ours_text, theirs_text)
    result = slopd(env, "handoff", "merge", "--marker-size", "10", base, ours, theirs)
    assert result.returncode == 1
    merged = ours.read_text(encoding="utf-8")
    lines = merged.split("\n")
    marks = [line for line in lines if line.startswith(("<<<", "|||", "===", ">>>"))]
    assert all(re.fullmatch(r"([<=>|])\1{9}( .*)?", line) for line in marks), marks
    assert [line[0] for line in marks] == ["<", "|", "=", ">"]
    assert lines.index("<" * 10 + " ours") < lines.index("Ours: the attic log.") < lines.index("=" * 10)
    assert lines.index("=" * 10) < lines.index("Theirs: the cellar log.") < lines.index(">" * 10 + " theirs")
    assert headings(merged) == ["## 2026-05-22 — Wren | Claude (Attic) | code", *headings(BASE_LOG)]


def test_merge_cli_non_log_side_is_a_conflict_losing_nothing(env: dict[str, str], tmp_path: Path) -> None:
    """A side that is not a handoff log gives a conflict (exit 1) whose text holds all of both sides."""
    ours_text = with_entries(v2(OURS_NEW))
    theirs_text = "Someone replaced the log\nwith a shopping list:\n- eggs\n- milk\n"
    base, ours, theirs = three_way(tmp_path, BASE_LOG, ours_text, theirs_text)
    result = slopd(env, "handoff", "merge", base, ours, theirs)
    assert result.returncode == 1
    merged = ours.read_text(encoding="utf-8")
    assert "\n<<<<<<<" in "\n" + merged
    assert "\n=======\n" in merged
    assert "\n>>>>>>>" in merged
    assert ours_text in merged
    assert theirs_text in merged


def test_merge_cli_marker_size_below_one_is_a_usage_error(env: dict[str, str], tmp_path: Path) -> None:
    """--marker-size 0 is refused with exit 2 and OURS is left alone."""
    base, ours, theirs = three_way(
        tmp_path, BASE_LOG, with_entries(v2(OURS_NEW)), with_entries(v2(THEIRS_NEW))
    )
    before = ours.read_bytes()
    result = slopd(env, "handoff", "merge", "--marker-size", "0", base, ours, theirs)
    assert result.returncode == 2
    assert "--marker-size" in result.stderr
    assert ours.read_bytes() == before


def test_merge_cli_theirs_change_to_an_old_entry_is_taken(env: dict[str, str], tmp_path: Path) -> None:
    """An old entry that theirs changed (a task ticked) and ours left alone appears once, changed."""
    ticked = BASE_LOG.replace(
        "- [ ] **[Wren]** Move the backups over", "- [x] **[Wren]** Move the backups over"
    )
    base, ours, theirs = three_way(tmp_path, BASE_LOG, with_entries(v2(OURS_NEW)), ticked)
    result = slopd(env, "handoff", "merge", base, ours, theirs)
    assert result.returncode == 0, result.stderr
    merged = ours.read_text(encoding="utf-8")
    assert merged == with_entries(v2(OURS_NEW), log=ticked)


def test_merge_cli_ours_change_to_an_old_entry_is_taken(env: dict[str, str], tmp_path: Path) -> None:
    """An old entry that ours changed (a task ticked) and theirs left alone appears once, changed."""
    ticked = BASE_LOG.replace(
        "- [ ] **[Wren]** Move the backups over", "- [x] **[Wren]** Move the backups over"
    )
    base, ours, theirs = three_way(tmp_path, BASE_LOG, ticked, with_entries(v2(THEIRS_NEW)))
    result = slopd(env, "handoff", "merge", base, ours, theirs)
    assert result.returncode == 0, result.stderr
    merged = ours.read_text(encoding="utf-8")
    assert "- [ ] **[Wren]** Move the backups over" not in merged
    assert merged == with_entries(v2(THEIRS_NEW), log=ticked)


def test_merge_cli_both_changed_an_entry_keeps_both_versions(env: dict[str, str], tmp_path: Path) -> None:
    """An entry both sides changed differently is kept in both versions, ours first; exit 0."""
    old = "- Compared three bucket providers"
    ours_text = BASE_LOG.replace(old, "- Compared three bucket providers (ours: picked B)")
    theirs_text = BASE_LOG.replace(old, "- Compared three bucket providers (theirs: picked C)")
    base, ours, theirs = three_way(tmp_path, BASE_LOG, ours_text, theirs_text)
    result = slopd(env, "handoff", "merge", base, ours, theirs)
    assert result.returncode == 0, result.stderr
    merged = ours.read_text(encoding="utf-8")
    assert headings(merged) == [*headings(BASE_LOG), headings(BASE_LOG)[-1]]
    assert merged.index("(ours: picked B)") < merged.index("(theirs: picked C)")
    assert old + "\n" not in merged


def test_merge_cli_entry_deleted_on_one_side_is_deleted(env: dict[str, str], tmp_path: Path) -> None:
    """An entry ours deleted and theirs left as in BASE is gone from the merge; theirs' new entry arrives."""
    ours_text = BASE_LOG[: BASE_LOG.index("## 2026-05-19")].removesuffix("\n---\n\n")
    assert headings(ours_text) == headings(BASE_LOG)[:1]
    base, ours, theirs = three_way(tmp_path, BASE_LOG, ours_text, with_entries(v2(THEIRS_NEW)))
    result = slopd(env, "handoff", "merge", base, ours, theirs)
    assert result.returncode == 0, result.stderr
    merged = ours.read_text(encoding="utf-8")
    assert headings(merged) == ["## 2026-05-23 — Otto | Codex (Cellar) | code", headings(BASE_LOG)[0]]
    assert "Compared three bucket providers" not in merged


V1_BASE = (
    "# Handoff Log\n\nOne machine's notes to the next.\n\n---\n\n"
    "## 2026-05-21 — Desk (main)\n\n### What happened\n- Morning: set up the box\n\n"
    "### What's pending\n- [ ] Install the tools\n"
)


def test_merge_cli_same_day_untimed_entries_keep_each_sides_order(
    env: dict[str, str], tmp_path: Path
) -> None:
    """Same-day v1 entries (no Tag-out) keep each side's order: both new entries stay above the old one."""
    ours_text = with_entries(entry("## 2026-05-21 — Laptop (feature)", "- Evening: ours"), log=V1_BASE)
    theirs_text = with_entries(entry("## 2026-05-21 — Tower (fix)", "- Evening: theirs"), log=V1_BASE)
    base, ours, theirs = three_way(tmp_path, V1_BASE, ours_text, theirs_text)
    result = slopd(env, "handoff", "merge", base, ours, theirs)
    assert result.returncode == 0, result.stderr
    assert headings(ours.read_text(encoding="utf-8")) == [
        "## 2026-05-21 — Laptop (feature)",
        "## 2026-05-21 — Tower (fix)",
        "## 2026-05-21 — Desk (main)",
    ]


# ------------------------------------------------------------------------- install-merge-driver


def git(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=60
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


@pytest.fixture(name="repo")
def fixture_repo(tmp_path: Path, env: dict[str, str]) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(env, repo, "init", "-q", "-b", "main")
    return repo


def test_install_sets_the_driver_config(env: dict[str, str], repo: Path) -> None:
    """merge.mep.driver runs an existing slopd by absolute path with %L %O %A %B; merge.mep.name is set."""
    result = slopd(env, "handoff", "install-merge-driver", cwd=repo)
    assert result.returncode == 0, result.stderr
    driver = git(env, repo, "config", "--local", "--get", "merge.mep.driver").strip()
    assert driver.endswith(" handoff merge --marker-size %L %O %A %B")
    program = shlex.split(driver)[0]
    assert Path(program).is_absolute()
    assert Path(program).is_file()
    assert os.access(program, os.X_OK)
    assert git(env, repo, "config", "--local", "--get", "merge.mep.name").strip()
    version = subprocess.run([program, "--version"], capture_output=True, text=True, env=env, check=False)
    assert version.returncode == 0
    assert (version.stdout + version.stderr).startswith("slopd ")


def test_install_writes_default_gitattributes(env: dict[str, str], repo: Path) -> None:
    """Without --pattern, .gitattributes routes handoff.md and machines/handoff.md to the driver."""
    result = slopd(env, "handoff", "install-merge-driver", "--repo", repo)
    assert result.returncode == 0, result.stderr
    lines = (repo / ".gitattributes").read_text(encoding="utf-8").splitlines()
    assert lines == ["handoff.md merge=mep", "machines/handoff.md merge=mep"]
    checked = git(env, repo, "check-attr", "merge", "--", "handoff.md", "machines/handoff.md", "notes.md")
    assert checked.splitlines() == [
        "handoff.md: merge: mep",
        "machines/handoff.md: merge: mep",
        "notes.md: merge: unspecified",
    ]


def test_install_with_patterns_and_from_a_subfolder(env: dict[str, str], repo: Path) -> None:
    """--pattern replaces the defaults, and a --repo inside the work tree writes the top .gitattributes."""
    inner = repo / "docs"
    inner.mkdir()
    result = slopd(
        env,
        "handoff",
        "install-merge-driver",
        "--repo",
        inner,
        "--pattern",
        "standups/*.md",
        "--pattern",
        "BATON.md",
    )
    assert result.returncode == 0, result.stderr
    assert not (inner / ".gitattributes").exists()
    assert (repo / ".gitattributes").read_text(
        encoding="utf-8"
    ) == "standups/*.md merge=mep\nBATON.md merge=mep\n"


def test_install_keeps_existing_gitattributes_lines(env: dict[str, str], repo: Path) -> None:
    """Existing .gitattributes lines (the last with no newline) are kept as they were; new lines follow."""
    attributes = repo / ".gitattributes"
    attributes.write_bytes(b"*.png binary\n# shell scripts\n*.sh text eol=lf")
    result = slopd(env, "handoff", "install-merge-driver", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert attributes.read_bytes() == (
        b"*.png binary\n# shell scripts\n*.sh text eol=lf\n"
        b"handoff.md merge=mep\nmachines/handoff.md merge=mep\n"
    )


def test_install_keeps_crlf_gitattributes(env: dict[str, str], repo: Path) -> None:
    """A CRLF .gitattributes keeps its CRLF lines, and the added lines are CRLF too."""
    attributes = repo / ".gitattributes"
    attributes.write_bytes(b"*.png binary\r\n*.sh text eol=lf\r\n")
    result = slopd(env, "handoff", "install-merge-driver", cwd=repo)
    assert result.returncode == 0, result.stderr
    assert attributes.read_bytes() == (
        b"*.png binary\r\n*.sh text eol=lf\r\nhandoff.md merge=mep\r\nmachines/handoff.md merge=mep\r\n"
    )


def test_install_twice_adds_nothing(env: dict[str, str], repo: Path) -> None:
    """A second run leaves .gitattributes and the git config exactly as the first left them."""
    first = slopd(env, "handoff", "install-merge-driver", cwd=repo)
    assert first.returncode == 0, first.stderr
    attributes, config = (repo / ".gitattributes").read_bytes(), (repo / ".git" / "config").read_bytes()
    second = slopd(env, "handoff", "install-merge-driver", cwd=repo)
    assert second.returncode == 0, second.stderr
    assert (repo / ".gitattributes").read_bytes() == attributes
    assert (repo / ".git" / "config").read_bytes() == config
    assert "added" not in second.stdout
    assert git(env, repo, "config", "--get-all", "merge.mep.driver").count("\n") == 1


def test_install_outside_a_repository_exits_2(env: dict[str, str], tmp_path: Path) -> None:
    """Outside any git repository it exits 2, says it is not a git repository, and writes nothing."""
    plain = tmp_path / "plain"
    plain.mkdir()
    result = slopd(env, "handoff", "install-merge-driver", "--repo", plain)
    assert result.returncode == 2
    assert "not a git repository" in result.stderr
    assert str(plain) in result.stderr
    assert list(plain.iterdir()) == []
