"""Lane names (research §4): temp names ignored, conflict copies processed, unsafe names flagged."""

from __future__ import annotations

import pytest

from slopd.core.names import Kind, classify, is_sane, is_sync_temp

LANES = ["inbox", "authorized"]

IGNORED = [
    ".syncthing.x.md.tmp",
    "~syncthing~x.md.tmp",
    ".syncthing.0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef.tmp",
    "x.md.partial",
    "x.md.3f2a1b.partial",
    "~$x.md",
    "~WRL0001.tmp",
    ".#x.md",
    ".x.md.swp",
    ".x.md.swo",
    "x.md.swp",
    "x.md.crdownload",
    ".x.md.icloud",
    "x.md.icloud",
    "4913",
    "#x.md#",
    "x.md~",
    "x.json~",
    "desktop.ini",
    "Thumbs.db",
    ".DS_Store",
    "._x.md",
    ".~lock.x.md#",
    ".tmp.drivedownload",
    ".dropbox.cache",
    "x.md.part",
    "x.md.filepart",
    "x.md.download",
    "x.md.tmp",
    "x.md.temp",
    "x.md.kate-swp",
    "Icon\r",
    ".x.md",
    ".hidden.json",
    ".stfolder",
    # case variants
    "X.MD.PART",
    "x.md.PARTIAL",
    "X.md.Tmp",
    "x.md.CRDOWNLOAD",
    "X.MD.SWP",
    "x.md.ICLOUD",
    "x.md.FilePart",
    "x.md.Download",
    "DESKTOP.INI",
    "thumbs.db",
    "THUMBS.DB",
    ".ds_store",
    "ICON\r",
]


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("name", IGNORED, ids=[ascii(name) for name in IGNORED])
def test_temp_and_partial_names_are_ignored(name: str, lane: str) -> None:
    """Sync-client, browser and editor temp names are IGNORED in every lane."""
    assert classify(name, lane=lane) is Kind.IGNORED


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize(
    "name",
    [".x.md.sig", "x.md.sig.tmp", "~$x.md.sig", "x.md.sig~", "x.md.sig.part"],
)
def test_temp_names_of_sidecars_are_ignored(name: str, lane: str) -> None:
    """A sidecar under a temp name is ignored until it is renamed, in either lane."""
    assert classify(name, lane=lane) is Kind.IGNORED


CONFLICT_COPIES = [
    "o1 (conflicted copy 2026-01-01).md",
    "o1 (alice's conflicted copy 2026-01-01).md",
    "o1 (conflicted copy 2026-01-01 120000).md",
    "o1.sync-conflict-20260101-120000-ABCDEFG.md",
    "o1_conflict-20260101-120000.md",
    "o1 (1).md",
    "o1 2.md",
    "o1-LAPTOP.md",
    "o1 (1).json",
    "o1.sync-conflict-20260101-120000-ABCDEFG.json",
]


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("name", CONFLICT_COPIES)
def test_conflict_copies_are_inputs(name: str, lane: str) -> None:
    """Conflict copies are ordinary inputs (the ledger de-duplicates them by id)."""
    assert classify(name, lane=lane) is Kind.INPUT


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize(
    "name",
    ["o1.md", "o1.json", "O1.MD", "o1.Json", "20260704t071553z-x.md", "caf\u00e9.md", "a b.md", "x.md.md"],
)
def test_md_and_json_are_inputs(name: str, lane: str) -> None:
    """Names ending `.md` or `.json` in any case are inputs in both lanes."""
    assert classify(name, lane=lane) is Kind.INPUT


@pytest.mark.parametrize(
    ("name", "lane", "kind"),
    [
        ("o1.md.sig", "authorized", Kind.SIDECAR),
        ("O1.MD.SIG", "authorized", Kind.SIDECAR),
        ("o1 (1).md.sig", "authorized", Kind.SIDECAR),
        ("o1.md.sig", "inbox", Kind.OTHER),
        ("O1.MD.SIG", "inbox", Kind.OTHER),
        ("o1.json.sig", "authorized", Kind.OTHER),
        ("o1.sig", "authorized", Kind.OTHER),
    ],
)
def test_sidecars_exist_only_in_authorized(name: str, lane: str, kind: Kind) -> None:
    """`.md.sig` is a SIDECAR in authorized/ only; elsewhere, and other `.sig` names, are OTHER."""
    assert classify(name, lane=lane) is kind


LONG_ASCII = "a" * 252 + ".md"  # 255 bytes
LONG_MULTIBYTE = "\u20ac" * 84 + ".md"  # 252 + 3 = 255 bytes in 87 characters

BAD = [
    "x\udcff.md",
    "\udce9t\udce9.json",
    "x\n.md",
    "x\r.md",
    "x\t.md",
    "x\x00.md",
    "x\x1b[31m.md",
    "x\x7f.md",
    "x\x85.md",
    "x\x9b.md",
    "x\u202e.md",
    "x\u202edm.json",
    "x\u200e.md",
    "x\u200f.md",
    "x\u2066.md",
    "x\u2069.md",
    "x\u061c.md",
    "a\\b.md",
    "a/b.md",
    "a" * 253 + ".md",
    "\u20ac" * 85 + ".md",
]


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize("name", BAD, ids=[ascii(name)[:40] for name in BAD])
def test_unsafe_input_names_are_bad_names(name: str, lane: str) -> None:
    """Undecodable, control, bidi, separator and over-255-byte input names are BAD_NAME."""
    assert classify(name, lane=lane) is Kind.BAD_NAME


@pytest.mark.parametrize("name", ["x\u202e.md.sig", "x\udcff.md.sig", "s" * 250 + ".md.sig"])
def test_unsafe_sidecar_names_are_bad_names(name: str) -> None:
    """A sidecar with an unsafe name is BAD_NAME in authorized/."""
    assert classify(name, lane="authorized") is Kind.BAD_NAME


@pytest.mark.parametrize("name", [LONG_ASCII, LONG_MULTIBYTE])
def test_a_255_byte_name_is_fine(name: str) -> None:
    """The limit counts UTF-8 bytes: exactly 255 bytes is still a sane input name."""
    assert len(name.encode()) == 255
    assert classify(name, lane="inbox") is Kind.INPUT


@pytest.mark.parametrize("lane", LANES)
@pytest.mark.parametrize(
    "name",
    ["readme.txt", "o1.yaml", "o1.md.bak", "o1.mdx", "o1", "notes", "o1.md.sig.bak", "x\u202e.txt"],
)
def test_anything_else_is_other(name: str, lane: str) -> None:
    """Names that are neither ignored nor inputs are OTHER, even when their characters are unsafe."""
    assert classify(name, lane=lane) is Kind.OTHER


def test_is_sane() -> None:
    """`is_sane` allows spaces, parentheses and non-ASCII letters but not controls or bidi marks."""
    assert is_sane("o1 (conflicted copy 2026-01-01).md")
    assert is_sane("r\u00e9sum\u00e9 \u65e5\u672c.md")
    assert not is_sane("x\u2067.md")
    assert not is_sane("x\x01.md")
    assert not is_sane("x\udc80.md")


@pytest.mark.parametrize(
    ("name", "sync_temp"),
    [
        (".syncthing.x.md.tmp", True),
        (".syncthing.20260704t071553z-a.json.tmp", True),
        ("~syncthing~x.md.tmp", True),
        ("x.md.!sync", True),
        (".SYNCTHING.X.MD.TMP", True),
        (".x.md.tmp", False),  # an agent's own temp name: its rename is a local, complete drop
        (".slopd-tmp-ab12-x.md.tmp", False),
        ("x.md", False),
        ("syncthing.x.md.tmp", False),
    ],
)
def test_sync_client_temp_names(name: str, sync_temp: bool) -> None:
    """Syncthing's and Resilio's receiving names are sync temps; an agent's dot-temp is not."""
    assert is_sync_temp(name) is sync_temp
