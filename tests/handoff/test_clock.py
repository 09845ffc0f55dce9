"""Tag-out times (SPEC §10, "Parity with MEP's checker"): one reader for every spelling — `14:30 ET`,
`14:30ET`, a bare `09:00` (UTC, as MEP's checker reads it), `9:00 AM ET`, `9:00am ET`, `09:00Z`,
`09:00 Z`, `+02:00`, CET, BST, JST, AEST … — and any two spellings of one instant compare equal.

The zone offsets below are this test's own statement of the rules (MEP's zones as MEP's checker
fixes them: ET is UTC−4 the whole year), not slopd's table."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from slopd.handoff import clock

# zone -> minutes east of UTC
OFFSETS = {
    "UTC": 0, "Z": 0, "GMT": 0, "ET": -240, "EDT": -240, "EST": -300, "CT": -300, "CST": -360,
    "MT": -360, "PT": -420, "PST": -480, "CET": 60, "CEST": 120, "BST": 60, "EET": 120,
    "IST": 330, "JST": 540, "KST": 540, "AEST": 600, "AEDT": 660, "NZST": 720, "HST": -600,
}  # fmt: skip


@pytest.mark.parametrize(
    ("value", "minutes"),
    [
        ("14:30 ET", 14 * 60 + 30 + 240),
        ("14:30ET", 14 * 60 + 30 + 240),
        ("14:30 et", 14 * 60 + 30 + 240),
        ("09:00", 9 * 60),
        ("9:00", 9 * 60),
        ("9:00 AM ET", 13 * 60),
        ("9:00am ET", 13 * 60),
        ("9:00amET", 13 * 60),
        ("9:00 a.m. ET", 13 * 60),
        ("9:00 PM ET", 25 * 60),
        ("12:00 am UTC", 0),
        ("12:30 pm UTC", 12 * 60 + 30),
        ("09:00Z", 9 * 60),
        ("09:00 Z", 9 * 60),
        ("09:00 +02:00", 7 * 60),
        ("09:00+0200", 7 * 60),
        ("09:00 UTC+2", 7 * 60),
        ("09:00 GMT-05:30", 14 * 60 + 30),
        ("09:00 \u22125", 14 * 60),
        ("09:00 CET", 8 * 60),
        ("09:00 CEST", 7 * 60),
        ("09:00 BST", 8 * 60),
        ("09:00 JST", 0),
        ("09:00 AEST", -60),
        ("09:00 EST", 14 * 60),
        ("09:00 PT", 16 * 60),
        ("~02:50 ET", 2 * 60 + 50 + 240),
        ("  17:00 UTC  ", 17 * 60),
    ],
)
def test_every_spelling_reads_to_minutes_after_midnight_utc(value: str, minutes: int) -> None:
    """A time in any of the spellings SPEC §10 lists gives its minutes after midnight UTC."""
    assert clock.instant(value) == minutes


def test_mep_zones_are_read_as_meps_checker_reads_them() -> None:
    """ET, CT, MT and PT are UTC−4, −5, −6, −7 whatever the date (MEP's table), EST and the like
    their standard offsets."""
    assert {zone: clock.instant(f"12:00 {zone}") for zone in ("ET", "CT", "MT", "PT", "EST", "CST")} == {
        "ET": 16 * 60,
        "CT": 17 * 60,
        "MT": 18 * 60,
        "PT": 19 * 60,
        "EST": 17 * 60,
        "CST": 18 * 60,
    }


@pytest.mark.parametrize("value", ["[active]", "[ACTIVE]", " [active] ", "active", "Active"])
def test_an_active_session_is_later_than_any_time(value: str) -> None:
    """`[active]` (and MEP's bare `active`) is +inf: a session still open sorts above every Tag-out."""
    assert clock.instant(value) == float("inf")


@pytest.mark.parametrize(
    "value", [None, "", "16:45 XYZ", "4pm ET", "late evening", "2026-04-03", "EOL", "(open)", "16:45 UTC+25"]
)
def test_what_is_not_a_time_cannot_be_compared(value: str | None) -> None:
    """An unknown zone, a time without minutes, free text: no instant, and not impossible either."""
    assert clock.instant(value) is None
    assert not clock.impossible(value)


@pytest.mark.parametrize("value", ["24:00 UTC", "25:00", "16:60 ET", "13:00 pm UTC", "0:30 am UTC", "99:99Z"])
def test_a_time_that_does_not_exist_is_impossible(value: str) -> None:
    """An hour or minute out of range is `impossible` (MEP's checker stops on it) and has no instant."""
    assert clock.impossible(value)
    assert clock.instant(value) is None


# -- any spelling of one instant -------------------------------------------------------------------


def _spellings(draw: st.DrawFn, local: int, zone: str) -> str:
    """One way of writing `local` minutes after midnight in `zone`."""
    hour, minute = divmod(local, 60)
    approximate = draw(st.sampled_from(["", "", "~"]))
    if draw(st.booleans()):
        half = draw(st.sampled_from(["am", "AM", "a.m.", "A.M."]))
        half = half.replace("a", "p").replace("A", "P") if hour >= 12 else half
        time = f"{hour % 12 or 12}:{minute:02d}{draw(st.sampled_from(['', ' ']))}{half}"
    else:
        time = f"{hour:02d}:{minute:02d}" if draw(st.booleans()) else f"{hour}:{minute:02d}"
    offset = OFFSETS[zone]
    written = draw(
        st.sampled_from(
            [
                zone,
                zone.lower(),
                f"{'+' if offset >= 0 else '-'}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}",
                f"UTC{'+' if offset >= 0 else '-'}{abs(offset) // 60}"
                + (f":{abs(offset) % 60:02d}" if offset % 60 else ""),
            ]
        )
    )
    if zone == "UTC" and draw(st.booleans()):
        return approximate + time  # a bare time is UTC
    return f"{approximate}{time}{draw(st.sampled_from(['', ' ']))}{written}"


@st.composite
def same_instants(draw: st.DrawFn) -> tuple[int, list[str]]:
    """An instant (minutes after midnight UTC) and several spellings of it, in several zones,
    each zone's local time on the same date."""
    moment = draw(st.integers(0, 24 * 60 - 1))
    zones = [zone for zone in OFFSETS if 0 <= moment + OFFSETS[zone] < 24 * 60]
    picked = draw(st.lists(st.sampled_from(zones), min_size=2, max_size=6))
    return moment, [_spellings(draw, moment + OFFSETS[zone], zone) for zone in picked]


@settings(deadline=None, max_examples=300)
@given(same_instants())
def test_any_two_spellings_of_one_instant_compare_equal(case: tuple[int, list[str]]) -> None:
    """Whatever the zone, the clock (12- or 24-hour), the spaces and the case, one instant reads
    to one number of minutes."""
    moment, spellings = case

    assert {spelling: clock.instant(spelling) for spelling in spellings} == dict.fromkeys(spellings, moment)
