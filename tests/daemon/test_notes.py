"""Notes an agent can read (SPEC §2, §13; issue 25 item 5), on a real hub and ledger: the text of
each note, newest first, a page at a time; `--search` finds a word of the text; the hub's
`notes/` is a paged index whose upkeep per note does not grow with the number of notes."""

from __future__ import annotations

import json
import os
import random
import sqlite3
from pathlib import Path

import pytest

from slopd.core import notes
from slopd.core.layout import LEDGER_FILE
from slopd.core.notes import Note
from slopd.daemon import notebook
from slopd.shell.ledger import Ledger
from slopd.shell.ledger import sql as statements
from tests.conftest import HubDir, envelope_text


def seed(path: Path, count: int, *, start: int = 0) -> list[str]:
    """`count` notes put in a ledger as an older slopd left them (no pages); created_at shuffled,
    so neither the indexing order nor its reverse is the newest-first order. Their ids, in order."""
    order = list(range(start, start + count))
    random.Random(count).shuffle(order)
    ledger = Ledger(path)
    try:
        with ledger.writing() as unit:
            for number in order:
                created = f"2026-07-{number // 1440 + 1:02d}T{number // 60 % 24:02d}:{number % 60:02d}:00Z"
                body = f"#learning\n- worked: trick {number}\n- pitfall: word-{number}-only-here\n"
                unit.add_note(Note(f"n-{number:05d}", "grok", created, "#learning", body), now=created)
    finally:
        ledger.close()
    return [f"n-{number:05d}" for number in order]


def drop_note(hub: HubDir, ident: str, body: str, created_at: str = "2026-12-01T10:00:00Z") -> None:
    hub.drop(f"{ident}.md", envelope_text(body, id=ident, type="note", created_at=created_at))


def test_reads_are_newest_first_pages_of_the_same_order_and_search_finds_a_word_of_the_text(
    tmp_path: Path,
) -> None:
    path = tmp_path / LEDGER_FILE
    seed(path, 40)
    ledger = Ledger(path)
    every = ledger.notes()
    assert [note.id for note in every] == [f"n-{number:05d}" for number in range(39, -1, -1)]
    for offset in (0, 7, 35, 40):
        assert ledger.notes(limit=10, offset=offset) == every[offset : offset + 10]
    (found,) = ledger.notes("WORD-17-ONLY")  # a word of the body alone, any case
    assert found.id == "n-00017"
    assert ledger.count_notes() == 40
    assert ledger.count_notes("pitfall") == 40
    assert ledger.count_notes("word-17-only") == 1
    assert ledger.last_note_seq() == 40
    seq = ledger.note_seq("n-00017")
    assert seq is not None
    assert [note.id for note in ledger.notes_indexed(seq, seq)] == ["n-00017"]
    ledger.close()


def test_the_newest_notes_are_read_through_an_index_never_by_sorting_every_note(tmp_path: Path) -> None:
    """What keeps indexing a note bounded: the digest's query walks an index (no sort of all rows),
    and a page's is a range of rowids (it sorts that page's rows only)."""
    Ledger(tmp_path / LEDGER_FILE).close()
    with sqlite3.connect(tmp_path / LEDGER_FILE) as connection:

        def plan(sql: str, parameters: tuple[int, ...]) -> str:
            return " ".join(row[3] for row in connection.execute("EXPLAIN QUERY PLAN " + sql, parameters))

        newest = plan(statements.NOTES[False], (50, 0))
        assert "USE TEMP B-TREE" not in newest
        assert "USING INDEX notes_by_time" in newest
        assert "USING INTEGER PRIMARY KEY (rowid>? AND rowid<?)" in plan(statements.NOTES_PAGE, (101, 200))


def snapshot(folder: Path) -> dict[str, tuple[bytes, int, int]]:
    return {
        path.name: (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_ino)
        for path in folder.iterdir()
    }


def test_the_hubs_index_is_paged_and_a_note_rewrites_only_the_digest_and_its_page(hub: HubDir) -> None:
    """A hub whose 150 notes were indexed by an older slopd gets its pages once; from then on a
    note rewrites INDEX.md (the 50 newest) and its own page, and no other page."""
    hub.state.mkdir(parents=True, exist_ok=True)
    seeded = seed(hub.state / LEDGER_FILE, 150)
    drop_note(hub, "fresh-1", "#learning\n- worked: the fresh trick\n")
    hub.run_once()
    folder = hub.root / "notes"
    assert sorted(os.listdir(folder)) == ["INDEX.md", "page-0001.md", "page-0002.md"]
    index = (folder / "INDEX.md").read_text()
    assert "The 50 newest of the 151 `type: note`s this hub has received, newest first." in index
    shown = [line.split("`")[1] for line in index.splitlines() if line.startswith("## ")]
    assert shown == ["fresh-1", *(f"n-{number:05d}" for number in range(149, 100, -1))]
    assert "- worked: the fresh trick" in index
    pages = [(folder / name).read_text() for name in ("page-0001.md", "page-0002.md")]
    on_pages = [
        [line.split("`")[1] for line in page.splitlines() if line.startswith("## ")] for page in pages
    ]
    assert sorted(on_pages[0]) == sorted(seeded[:100])  # the first 100 indexed
    assert on_pages[0] == sorted(on_pages[0], reverse=True)  # newest first (ids grow with created_at)
    assert sorted(on_pages[1]) == sorted([*seeded[100:], "fresh-1"])

    before = snapshot(folder)
    drop_note(hub, "fresh-2", "#learning\n- pitfall: the second one\n", "2026-12-01T11:00:00Z")
    hub.run_once()
    after = snapshot(folder)
    assert after["page-0001.md"] == before["page-0001.md"]  # not rewritten: same bytes, time, inode
    assert {name for name in after if after[name] != before.get(name)} == {"INDEX.md", "page-0002.md"}
    assert "`fresh-2`" in (folder / "page-0002.md").read_text()
    assert "`n-00100`" not in (folder / "INDEX.md").read_text()  # fell out of the 50 newest


@pytest.fixture(name="noted")
def fixture_noted(hub: HubDir) -> HubDir:
    """Three notes through the daemon, the middle one long."""
    for number, created in ((1, "2026-07-01"), (2, "2026-07-02"), (3, "2026-07-03")):
        body = f"# Note {number}\n\n- worked: zebra{number} backoff\n" + ("x" * 5000 if number == 2 else "")
        drop_note(hub, f"note-{number}", body, f"{created}T09:00:00Z")
    hub.run_once()
    return hub


def test_slopd_notes_prints_each_text_a_page_at_a_time_and_search_finds_the_text(noted: HubDir) -> None:
    where = ("notes", "--hub", str(noted.root), "--state", str(noted.state))
    listed = noted.slopd(*where)
    assert listed.returncode == 0, listed.stderr
    assert listed.stdout.index("note-3") < listed.stdout.index("note-2") < listed.stdout.index("note-1")
    assert "- worked: zebra3 backoff" in listed.stdout
    (long,) = json.loads(noted.slopd(*where, "--search", "zebra2", "--json").stdout)["notes"]
    assert long["total_chars"] > 5000
    assert f"(… cut at 4000 of {long['total_chars']} characters: --max-chars 0 shows all)" in listed.stdout
    assert "x" * 4000 not in listed.stdout
    whole = noted.slopd(*where, "--search", "ZEBRA2", "--max-chars", "0")
    assert whole.returncode == 0
    assert "x" * 5000 in whole.stdout
    assert "note-1" not in whole.stdout
    paged = noted.slopd(*where, "--limit", "1", "--offset", "1")
    assert "note-2" in paged.stdout
    assert "note-3" not in paged.stdout
    assert "(notes 2 to 2 of 3: --offset 2 for the next)" in paged.stderr
    as_json = json.loads(noted.slopd(*where, "--limit", "2", "--max-chars", "10", "--json").stdout)
    assert [(found["id"], found["text"], found["truncated"]) for found in as_json["notes"]] == [
        ("note-3", "# Note 3\n\n", True),
        ("note-2", "# Note 2\n\n", True),
    ]
    assert (as_json["total"], as_json["next_offset"]) == (3, 2)
    assert noted.slopd(*where, "--search", "nowhere").returncode == 1


def test_slopd_notes_refuses_a_bad_page_naming_every_reason(noted: HubDir) -> None:
    bad = noted.slopd(
        "notes", "--hub", str(noted.root), "--limit", "0", "--offset", "-1", "--max-chars", "-5"
    )
    assert bad.returncode == 2
    assert "--limit 0: at least 1" in bad.stderr
    assert "--offset -1: 0 or more" in bad.stderr
    assert "--max-chars -5: 0 (all) or more" in bad.stderr


def test_a_note_indexed_again_rewrites_the_same_files(tmp_path: Path) -> None:
    """`daemon.notebook` rule 3, on a real ledger: the files for a note already indexed are the same."""
    seed(tmp_path / LEDGER_FILE, 120)
    ledger = Ledger(tmp_path / LEDGER_FILE)
    everything = dict(notebook.files(ledger, "n-00007", lambda _name: False))
    assert sorted(everything) == ["INDEX.md", "page-0001.md"]  # nothing missing below page 1
    seq = ledger.note_seq("n-00007")
    assert seq is not None
    again = dict(notebook.files(ledger, "n-00007", lambda _name: True))
    assert again == {
        "INDEX.md": everything["INDEX.md"],
        notes.page_name(notes.page_of(seq)): everything["page-0001.md"],
    }
    late = ledger.notes_indexed(101, 120)[0].id
    rebuilt = dict(notebook.files(ledger, late, lambda name: name != "page-0001.md"))
    assert sorted(rebuilt) == ["INDEX.md", "page-0001.md", "page-0002.md"]
    ledger.close()
