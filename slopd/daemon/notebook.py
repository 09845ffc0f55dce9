"""The hub's paged notes index (SPEC §2; `core.notes` rule 2): the files indexing one note writes.

Rules:
1. Indexing a note writes `notes/INDEX.md` (the newest notes) and the page the note is on, each
   from a bounded query of the ledger (an index gives the newest; a page is a range of the
   indexing order) — never from every note, so its cost does not grow with the number of notes.
2. The pages below the note's are written once and left alone. When the one just below is
   missing — a hub indexed by an older slopd, or a page deleted — every missing page below is
   written then, once: the one time indexing a note costs as many pages as there are.
3. A note indexed again (an input redone after a crash) rewrites the same two files with the
   same content.
"""

from __future__ import annotations

from collections.abc import Callable

from slopd.core import notes
from slopd.shell.ledger import Ledger


def files(ledger: Ledger, note_id: str, present: Callable[[str], bool]) -> list[tuple[str, bytes]]:
    """The files of `notes/` to write once `note_id` is in the ledger (`present(name)`: is
    `notes/NAME` there)."""
    seq = ledger.note_seq(note_id)
    total = ledger.last_note_seq()
    written = [(notes.INDEX, notes.render_index(ledger.notes(limit=notes.INDEX_NOTES), total).encode())]
    if seq is None:
        return written
    page = notes.page_of(seq)
    pages = [page]
    if page > 1 and not present(notes.page_name(page - 1)):
        pages = [number for number in range(1, page) if not present(notes.page_name(number))] + [page]
    for number in pages:
        noted = ledger.notes_indexed(*notes.page_span(number))
        written.append((notes.page_name(number), notes.render_page(number, noted).encode()))
    return written
