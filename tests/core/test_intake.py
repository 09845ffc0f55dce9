"""`slopd.core.intake.Intake`, the pure part of the watcher: which lane entries are due, and when.

Times are plain numbers handed in (the daemon passes `time.monotonic()`); the values used here
are exact in binary floating point so that "due at `now`" is a statement about the rules, not
about rounding.
"""

from __future__ import annotations

import math

from hypothesis import given, settings
from hypothesis import strategies as st

from slopd.core.intake import Hint, Intake, Oldest, Where

W = ("inbox", "a.md")
OTHER = ("inbox", "b.md")
ORDER = ("authorized", "o1.md")


def sig(size: int = 10, mtime: int = 1, ino: int = 7, ctime: int | None = None) -> tuple[int, int, int, int]:
    """A signature as `Entry.signature` makes it: (inode, size, mtime_ns, ctime_ns)."""
    return (ino, size, mtime, mtime if ctime is None else ctime)


def make(settle: float = 1.0, writer_timeout: float = 30.0, track_writers: bool = True) -> Intake:
    return Intake(settle=settle, writer_timeout=writer_timeout, track_writers=track_writers)


# -- arrived and scanned ----------------------------------------------------------------------


def test_a_renamed_in_file_is_due_at_once_even_with_a_huge_settle() -> None:
    """`arrived` means complete: due at the very instant of the hint, whatever `settle` is."""
    intake = make(settle=1e9)
    intake.hinted(W, Hint.ARRIVED, sig(), now=100.0)
    assert intake.due(100.0) == [W]
    assert intake.next_deadline() == 100.0
    assert intake.confirm(W, sig(), now=100.0) is True
    assert intake.due(100.0) == []
    assert len(intake) == 0


def test_an_arrival_cancels_a_pending_settle_and_an_open_writer() -> None:
    """A file first seen being written, then replaced by a rename, is due at once."""
    intake = make(settle=60.0)
    intake.hinted(W, Hint.CREATED, sig(size=0), now=100.0)
    intake.hinted(W, Hint.WRITTEN, sig(size=5), now=101.0)
    assert intake.due(150.0) == []
    intake.hinted(W, Hint.ARRIVED, sig(size=9, ino=8), now=151.0)
    assert intake.due(151.0) == [W]


def test_a_scanned_file_older_than_settle_is_due_at_once() -> None:
    """A scan that finds a file last written `settle` or more seconds ago makes it due now."""
    intake = make(settle=5.0)
    intake.scanned(W, sig(), age=5.0, now=100.0)
    intake.scanned(OTHER, sig(ino=8), age=3600.0, now=100.0)
    assert sorted(intake.due(100.0)) == [W, OTHER]


def test_a_freshly_written_scanned_file_waits_until_its_last_write_is_settle_old() -> None:
    """A file written `age` < `settle` ago is due once `settle` has passed since that write."""
    intake = make(settle=5.0)
    intake.scanned(W, sig(), age=4.5, now=100.0)
    assert intake.due(100.0) == []
    assert intake.due(100.25) == []
    assert intake.next_deadline() == 100.5
    assert intake.due(100.5) == [W]
    assert intake.confirm(W, sig(), now=100.5) is True


def test_a_scanned_file_that_changes_before_it_is_due_waits_a_whole_settle_again() -> None:
    """Counting from the mtime never shortens the wait of a file still being written: a change
    seen when it falls due starts a full `settle` from then."""
    intake = make(settle=5.0)
    intake.scanned(W, sig(size=10), age=4.5, now=100.0)
    assert intake.due(100.5) == [W]
    assert intake.confirm(W, sig(size=20, mtime=2), now=100.5) is False
    assert intake.due(105.25) == []
    assert intake.due(105.5) == [W]


def test_a_scanned_file_with_a_future_mtime_waits_a_whole_settle() -> None:
    """An mtime ahead of our clock (another machine's) proves nothing: the full `settle` applies."""
    intake = make(settle=5.0)
    intake.scanned(W, sig(), age=-30.0, now=100.0)
    assert intake.due(104.9) == []
    assert intake.due(105.0) == [W]


@settings(max_examples=300, deadline=None)
@given(
    settle=st.integers(0, 3600),
    age=st.integers(0, 7200),
    now=st.integers(0, 10**6),
)
def test_scanned_due_iff_old_enough_property(settle: int, age: int, now: int) -> None:
    """For any settle/age/now: due at the scan iff age ≥ settle, else exactly when its last write
    is `settle` old."""
    intake = make(settle=float(settle))
    intake.scanned(W, sig(), age=float(age), now=float(now))
    assert (intake.due(float(now)) == [W]) == (age >= settle)
    assert intake.due(float(now + max(settle - age, 0))) == [W]
    if settle > 0 and age < settle:
        assert intake.next_deadline() == now + settle - age


def test_a_second_scan_does_not_restart_the_wait() -> None:
    """Rescanning an unchanged candidate keeps its original clock (no starvation by rescans)."""
    intake = make(settle=5.0)
    intake.scanned(W, sig(), age=0.0, now=100.0)
    intake.scanned(W, sig(), age=3.0, now=103.0)
    assert intake.due(105.0) == [W]


# -- confirm ----------------------------------------------------------------------------------


def test_a_changed_signature_at_confirm_re_arms_the_settle() -> None:
    """If the file changed between due and confirm it is not read, and settle starts over."""
    intake = make(settle=1.0)
    intake.scanned(W, sig(size=10), age=0.0, now=100.0)
    assert intake.due(101.0) == [W]
    assert intake.confirm(W, sig(size=20, mtime=2), now=101.0) is False
    assert intake.due(101.5) == []
    assert intake.next_deadline() == 102.0
    assert intake.due(102.0) == [W]
    assert intake.confirm(W, sig(size=30, mtime=3), now=102.0) is False  # changed again
    assert intake.confirm(W, sig(size=30, mtime=3), now=103.0) is True


def test_a_ctime_or_inode_change_alone_also_re_arms() -> None:
    """Every part of the signature counts: a replaced inode or a metadata change is a change."""
    intake = make(settle=1.0)
    intake.scanned(W, sig(), age=0.0, now=100.0)
    assert intake.confirm(W, sig(ino=99), now=101.0) is False
    assert intake.confirm(W, sig(ino=99, ctime=5), now=102.0) is False
    assert intake.confirm(W, sig(ino=99, ctime=5), now=103.0) is True


def test_confirm_of_a_vanished_or_unknown_file_is_false_and_forgets_it() -> None:
    """A file gone at confirm time leaves the candidates; an unknown name is never confirmed."""
    intake = make(settle=0.0)
    intake.scanned(W, sig(), age=1.0, now=100.0)
    assert intake.confirm(W, None, now=100.0) is False
    assert len(intake) == 0
    assert intake.due(1e9) == []
    assert intake.confirm(OTHER, sig(), now=100.0) is False


def test_a_hint_that_the_file_is_gone_drops_it() -> None:
    """A hint whose lstat found nothing removes the candidate and any writer record."""
    intake = make(settle=1.0)
    intake.hinted(W, Hint.WRITTEN, sig(), now=100.0)
    intake.hinted(W, Hint.CLOSED, None, now=100.5)
    assert len(intake) == 0
    assert intake.next_deadline() == math.inf


# -- writers ----------------------------------------------------------------------------------


def test_a_tracked_writer_blocks_until_closed_then_settle_applies() -> None:
    """`written` with writers tracked: not due while open (however still), due `settle` after close."""
    intake = make(settle=1.0, writer_timeout=30.0)
    intake.hinted(W, Hint.WRITTEN, sig(size=5), now=100.0)
    assert intake.due(101.0) == []  # settled by size and mtime, but the writer still has it open
    assert intake.due(129.0) == []
    intake.hinted(W, Hint.CLOSED, sig(size=5), now=110.0)
    # Unchanged since the last write at 100: settle counts from there, so due at once.
    assert intake.due(110.0) == [W]


def test_a_close_after_a_last_change_waits_settle_from_the_change() -> None:
    """A close that comes with a new signature restarts the settle clock at the close."""
    intake = make(settle=1.0, writer_timeout=30.0)
    intake.hinted(W, Hint.WRITTEN, sig(size=5), now=100.0)
    intake.hinted(W, Hint.CLOSED, sig(size=9, mtime=2), now=100.5)
    assert intake.due(101.0) == []
    assert intake.due(101.5) == [W]


def test_an_empty_created_file_counts_as_an_open_writer() -> None:
    """`created` with size 0 means a writer is about to write: blocked until `closed`."""
    intake = make(settle=1.0, writer_timeout=30.0)
    intake.hinted(W, Hint.CREATED, sig(size=0), now=100.0)
    assert intake.due(120.0) == []
    intake.hinted(W, Hint.CLOSED, sig(size=0), now=120.0)
    assert intake.due(120.0) == [W]


def test_a_created_file_with_content_is_not_an_open_writer() -> None:
    """`created` with content (a hard link) only waits for settle."""
    intake = make(settle=1.0, writer_timeout=30.0)
    intake.hinted(W, Hint.CREATED, sig(size=50), now=100.0)
    assert intake.due(100.5) == []
    assert intake.due(101.0) == [W]


def test_untracked_writers_only_re_arm_settle() -> None:
    """With `track_writers=False` (polling) a `written` hint only restarts the settle clock."""
    intake = make(settle=1.0, writer_timeout=30.0, track_writers=False)
    intake.hinted(W, Hint.CREATED, sig(size=0), now=100.0)
    intake.hinted(W, Hint.WRITTEN, sig(size=5), now=100.5)
    assert intake.due(101.0) == []
    assert intake.next_deadline() == 101.5
    assert intake.due(101.5) == [W]


def test_an_open_writer_that_never_closes_is_presumed_gone_after_writer_timeout() -> None:
    """No `closed` within `writer_timeout` of the last write: settle rules apply again."""
    intake = make(settle=1.0, writer_timeout=30.0)
    intake.hinted(W, Hint.WRITTEN, sig(size=5), now=100.0)
    assert intake.next_deadline() == 130.0
    assert intake.due(129.5) == []
    assert intake.due(130.0) == [W]
    intake.hinted(OTHER, Hint.WRITTEN, sig(size=5, ino=8), now=100.0)
    intake.hinted(OTHER, Hint.WRITTEN, sig(size=6, ino=8, mtime=2), now=120.0)  # a later write
    assert OTHER not in intake.due(149.5)
    assert OTHER in intake.due(150.0)


@settings(max_examples=300, deadline=None)
@given(
    gaps=st.lists(st.integers(0, 40), min_size=1, max_size=12),
    settle=st.integers(0, 10),
    writer_timeout=st.integers(1, 60),
)
def test_an_open_writer_is_never_due_early_property(
    gaps: list[int], settle: int, writer_timeout: int
) -> None:
    """Writes at any times, no close: never due before `writer_timeout` and `settle` after the last."""
    intake = make(settle=float(settle), writer_timeout=float(writer_timeout))
    now = 1000
    intake.hinted(W, Hint.CREATED, sig(size=0), now=float(now))
    for number, gap in enumerate(gaps, start=1):
        now += gap
        intake.hinted(W, Hint.WRITTEN, sig(size=number, mtime=number), now=float(now))
        assert intake.due(float(now)) == []
    ready = now + max(settle, writer_timeout)
    for probe in range(now, ready):
        assert intake.due(float(probe)) == []
    assert intake.next_deadline() == ready
    assert intake.due(float(ready)) == [W]


# -- quiet, failed, forgotten -----------------------------------------------------------------


def test_a_quiet_entry_is_ignored_by_scans_until_its_signature_changes() -> None:
    """Quiet names (not inputs, left for another watcher, held) are skipped until they change."""
    intake = make(settle=0.0)
    intake.quiet(W, sig())
    assert intake.is_quiet(W, sig())
    intake.scanned(W, sig(), age=100.0, now=100.0)
    assert intake.due(100.0) == []
    intake.scanned(W, sig(size=11, mtime=2), age=100.0, now=101.0)
    assert intake.due(101.0) == [W]


def test_release_makes_a_quiet_entry_a_candidate_again() -> None:
    """`release` (a held order's signature arrived) lets the next scan take the unchanged file."""
    intake = make(settle=0.0)
    intake.quiet(ORDER, sig())
    intake.release(ORDER)
    assert not intake.is_quiet(ORDER, sig())
    intake.scanned(ORDER, sig(), age=0.0, now=100.0)
    assert intake.due(100.0) == [ORDER]


def test_a_failed_input_waits_for_the_next_full_scan() -> None:
    """After `failed`, scans skip it until `scan_started` begins a new full scan."""
    intake = make(settle=0.0)
    intake.failed(W)
    intake.scanned(W, sig(), age=10.0, now=100.0)
    assert intake.due(100.0) == []
    intake.scan_started()
    intake.scanned(W, sig(), age=10.0, now=101.0)
    assert intake.due(101.0) == [W]


def test_forget_missing_drops_candidates_writers_and_quiet_entries() -> None:
    """Entries a scan no longer sees are forgotten in every table; present ones are kept."""
    gone_writer = ("inbox", "writer.md")
    intake = make(settle=1.0, writer_timeout=30.0)
    intake.scanned(W, sig(), age=0.0, now=100.0)
    intake.scanned(OTHER, sig(ino=8), age=0.0, now=100.0)
    intake.hinted(gone_writer, Hint.WRITTEN, sig(ino=9), now=100.0)
    intake.quiet(ORDER, sig(ino=10))
    intake.forget_missing({OTHER})
    assert len(intake) == 1
    assert intake.due(101.0) == [OTHER]
    assert not intake.is_quiet(ORDER, sig(ino=10))
    # The writer record went too: the same name found again by a scan is not held by it.
    intake.scanned(gone_writer, sig(ino=9), age=5.0, now=200.0)
    assert gone_writer in intake.due(200.0)


def test_next_deadline_is_the_earliest_wait() -> None:
    """`next_deadline`: infinity when empty, otherwise the earliest moment any candidate is due."""
    intake = make(settle=2.0, writer_timeout=30.0)
    assert intake.next_deadline() == math.inf
    intake.hinted(W, Hint.WRITTEN, sig(), now=100.0)
    assert intake.next_deadline() == 130.0
    intake.scanned(OTHER, sig(ino=8), age=0.0, now=110.0)
    assert intake.next_deadline() == 112.0
    intake.hinted(ORDER, Hint.ARRIVED, sig(ino=9), now=111.0)
    assert intake.next_deadline() == 111.0
    assert intake.confirm(ORDER, sig(ino=9), now=111.0)
    assert intake.next_deadline() == 112.0


@given(
    st.dictionaries(
        st.tuples(st.sampled_from(["inbox", "authorized"]), st.text(min_size=1, max_size=6)),
        st.integers(min_value=0, max_value=50),
        max_size=60,
    ),
    st.integers(min_value=0, max_value=70),
)
def test_oldest_keeps_exactly_the_room_oldest_in_order(mtimes: dict[Where, int], room: int) -> None:
    """The `room` oldest are kept (of equal mtimes, the first offered), handed out oldest first."""
    oldest: Oldest[str] = Oldest(room)
    for where, mtime in mtimes.items():
        oldest.offer(where, mtime, f"item {where}")
    kept = sorted(mtimes, key=lambda where: mtimes[where])[:room]  # a stable sort: offer order
    expected = sorted(kept, key=lambda where: (mtimes[where], where))
    assert [where for where, _ in oldest.sorted()] == expected
    assert [item for _, item in oldest.sorted()] == [f"item {where}" for where in expected]
    assert oldest.overflowed == (len(mtimes) > room)


def test_a_delivery_from_a_sync_client_waits_for_its_mtime_to_be_settle_old_however_fresh() -> None:
    """`delivered` (renamed in from a sync client's temp name) right after its last write is not
    complete, unlike `arrived`: it is due once its mtime is `settle` old."""
    intake = make(settle=5.0)
    fresh = sig(mtime=100 * 10**9, ctime=100 * 10**9 + 10**8)  # renamed 0.1 s after its last write
    intake.hinted(W, Hint.DELIVERED, fresh, now=100.1, wall=100.1)
    intake.hinted(OTHER, Hint.ARRIVED, fresh, now=100.1, wall=100.1)
    assert intake.due(100.1) == [OTHER]
    assert intake.due(104.9) == [OTHER]
    assert sorted(intake.due(105.0)) == [W, OTHER]


def test_a_complete_file_stays_due_when_a_later_event_says_nothing_new() -> None:
    """Rule 6: the link's `created` (or a `written`) delivered after the writer's own `arrived`
    leaves the unchanged file due at once; a changed signature is a change, and waits again."""
    intake = make(settle=5.0)
    intake.hinted(W, Hint.ARRIVED, sig(), now=100.0)
    intake.hinted(W, Hint.CREATED, sig(), now=100.5)
    intake.hinted(W, Hint.WRITTEN, sig(), now=100.5)
    assert intake.due(100.5) == [W]
    intake.hinted(W, Hint.WRITTEN, sig(size=11), now=101.0)
    assert intake.due(101.0) == []
    assert intake.next_deadline() == 101.0 + 30.0  # a writer now: it waits out writer_timeout


def test_a_deferred_order_is_still_woken_by_an_arrival() -> None:
    """Rule 6 keeps only a candidate that is due: one deferred to later (an order waiting for its
    signatures) is made due at once by an `arrived` about it, unchanged as it is."""
    intake = make(settle=5.0)
    intake.defer(ORDER, sig(), until=160.0)
    intake.hinted(ORDER, Hint.ARRIVED, sig(), now=100.0)
    assert intake.due(100.0) == [ORDER]
