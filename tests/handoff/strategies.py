"""Hypothesis strategies for MEP handoff logs (SPEC §10): realistic logs, and three-way merge triples.

A log is built from a model (`LogSpec`, `EntrySpec`) and rendered to text, so a test knows what
the text holds without parsing it with the code under test:
- the file header `# Handoff Log` and a description line, an optional HTML comment and `---` rule;
- entries with v1 headers (`## 2026-04-03 — Hot Rod (main)`) and v2 headers
  (`## 2026-04-13 — Skippy | Claude (Hot Rod) | code` plus `**Tag-in:** … | **Tag-out:** …`),
  each with What happened, What's pending (tasks open and done, owner tags, plain bullets) and
  sometimes Watch out for;
- between entries `\\n---\\n\\n` or one blank line; an optional trailing `## Notes` block;
- LF or CRLF line endings, and sometimes no final newline.

`clean_logs` are conformant and warning-free: newest first, every entry distinct (each names its
own PR number), and on a date shared by several entries every one is v2 with a Tag-out that is
comparable (`17:00 UTC`, `14:30ET`, `2:30 pm CET`, `9:00AM ET`, `09:00Z`, a bare `09:00`,
`[active]`) and distinct. Tag-outs are
converted here (CET/CEST with the tz database, ET as MEP's checker reads it: UTC−4 all year),
not with slopd's reader, so the order the strategy writes is an independent oracle of MEP2.

`triples` give (base, ours, theirs) as a git merge driver sees them: base is a clean log; each side
adds new entries on top (newer dates; some added by both sides alike), and edits (ticks a task,
adds a bullet) or deletes some base entries. `Triple.expected_keys` is what the merge rules keep,
derived from the model alone.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from zoneinfo import ZoneInfo

from hypothesis import strategies as st

MEP_ET = dt.timezone(dt.timedelta(hours=-4))  # MEP's checker's ET, the whole year
BERLIN = ZoneInfo("Europe/Berlin")
MACHINES = (
    "Hot Rod (main)",
    "Mac (Nagatha/worktree)",
    "Hot Rod",
    "Mac (feature/handoff-merge)",
    "ci-runner (release → main)",
)
AGENTS = (
    ("Skippy", "Claude (Hot Rod)", "code"),
    ("Grok", "Grok (X)", "brainstorm"),
    ("ChatGPT", "ChatGPT", "research"),
    ("Pierre", "Human", "review"),
    ("Gemini", "Gemini", "cowork"),
    ("Nagatha", "Claude (Mac)", "code"),
    ("Piper", "Claude (CI)", "review"),
)
DONE_THINGS = (
    "Built `/iterate` skill — 7-stage loop, Run Sheet template",
    "Resolved merge conflict in handoff.md",
    "Mapped the GStack sprint model against the iterate skill",
    "Locked decision: stay with Plaud over Circleback ($30/mo, portable)",
    "Rebased the worktree onto main; tests green",
    "Wrote the release notes draft",
)
TASKS = (
    "Post Reddit drafts — 5 posts ready",
    "Wire Piper PR monitor",
    "Fix Pip-Boy frame consistency",
    "Fork gbrain to NukaSoft org",
    "Evaluate GStack sprint model for iterate skill",
)
OWNERS = ("Pierre", "Skippy", "Grok")
TRAPS = (
    "`~/.leo/` still exists as backup — can delete once confirmed",
    "Google Tasks MCP auth broken — needs `node auth.js`",
    "CI cache is stale after the rename",
)
DESCRIPTIONS = (
    "Session handoffs between machines, newest entry first.",
    "Curated context for the next session. Newest on top.",
    "MEP baton for this repository.",
)
FIRST_DAY = dt.date(2025, 11, 1)
LAST_DAY = dt.date(2026, 12, 31)


# -- the model -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Task:
    text: str
    owner: str | None = None
    done: bool = False
    plain: bool = False  # a plain `- ` bullet under What's pending (the grammar allows it)

    def line(self) -> str:
        if self.plain:
            return f"- {self.text}"
        owner = f"**[{self.owner}]** " if self.owner else ""
        return f"- [{'x' if self.done else ' '}] {owner}{self.text}"


@dataclass(frozen=True)
class EntrySpec:
    day: dt.date
    context: str  # v1 `machine (branch)`, or v2 `agent | platform | session-type`
    tags: tuple[str, str] | None  # (Tag-in, Tag-out) as written
    moment: float | None  # the Tag-out in minutes after midnight UTC of `day` (inf: active)
    happened: tuple[str, ...]
    pending: tuple[Task, ...]
    watch: tuple[str, ...]
    curly: bool = False  # `What’s pending` with a curly apostrophe

    @property
    def heading(self) -> str:
        return f"## {self.day.isoformat()} — {self.context}"

    def text(self) -> str:
        """The entry with LF endings, from its heading to its last line (ended by a newline)."""
        lines = [self.heading]
        if self.tags is not None:
            lines.append(f"**Tag-in:** {self.tags[0]} | **Tag-out:** {self.tags[1]}")
        lines += ["", "### What happened", *(f"- {text}" for text in self.happened)]
        lines += ["", "### What’s pending" if self.curly else "### What's pending"]
        lines += [task.line() for task in self.pending]
        if self.watch:
            lines += ["", "### Watch out for", *(f"- {text}" for text in self.watch)]
        return "\n".join(lines) + "\n"

    def key(self) -> str:
        """The entry's identity as the merge rules mean it (endings and trailing spaces aside)."""
        return self.text().strip()


NOTES = "## Notes\n\n- Keep this file under 200 lines; archive older entries to handoff-archive.md\n"


@dataclass(frozen=True)
class LogSpec:
    entries: tuple[EntrySpec, ...]
    description: str = DESCRIPTIONS[0]
    comment: bool = False  # an HTML comment in the file header
    rule: bool = True  # a `---` rule closing the file header
    separator: str = "\n---\n\n"  # between blocks; or "\n", a blank line
    notes: bool = False  # a trailing `## Notes` block that is not an entry
    newline: str = "\n"
    final_newline: bool = True

    def preamble(self) -> str:
        text = f"# Handoff Log\n{self.description}\n"
        if self.comment:
            text += "\n<!-- Newest entry first. Entries: ## YYYY-MM-DD — machine (branch) -->\n"
        if self.rule:
            text += "\n---\n"
        return text + "\n"

    def text(self) -> str:
        blocks = [entry.text() for entry in self.entries] + ([NOTES] if self.notes else [])
        text = self.preamble() + self.separator.join(blocks)
        if not self.final_newline:
            text = text.removesuffix("\n")
        return text.replace("\n", self.newline)

    def keys(self) -> list[str]:
        return [entry.key() for entry in self.entries] + ([NOTES.strip()] if self.notes else [])


# -- entries ---------------------------------------------------------------------------------


def _clock(minutes: int, twelve_hour: bool, spaced: bool = True) -> str:
    hour, minute = divmod(minutes, 60)
    if twelve_hour:
        half = "pm" if hour >= 12 else "am"
        return f"{hour % 12 or 12}:{minute:02d}{' ' if spaced else ''}{half if spaced else half.upper()}"
    return f"{hour:02d}:{minute:02d}"


# Strategies are built once: building one per draw costs more than the draw.
# every spelling SPEC §10 lists: `14:30 ET`, `14:30ET`, a bare `09:00` (UTC), `9:00 AM ET`,
# `9:00am ET`, `09:00Z`, `09:00 Z`, `+02:00`, CET/CEST
_ZONES = st.sampled_from(["UTC", "ET", "CET", "+02:00", "Z", "bare"])
_BOOLEANS = st.booleans()
_ONE_IN_SIX = st.integers(0, 5).map(lambda value: value == 0)
_ONE_IN_EIGHT = st.integers(0, 7).map(lambda value: value == 0)
_SESSION_LENGTH = st.integers(15, 240)
_MINUTES = st.integers(480, 1140)  # 08:00-19:00 UTC: see entry_lists
_OWNERS = st.none() | st.sampled_from(OWNERS)
_TASK_TEXTS = st.sampled_from(TASKS)
_AGENTS = st.sampled_from(AGENTS)
_MACHINES = st.sampled_from(MACHINES)
_ACTIVE_SINCE = st.sampled_from(["09:00 UTC", "~08:10 ET"])
_DONE_THINGS = st.lists(st.sampled_from(DONE_THINGS), max_size=2)
_TRAPS = st.lists(st.sampled_from(TRAPS), max_size=2)
_AGENT_ORDERS = st.permutations(AGENTS)


def _tag_line(draw: st.DrawFn, day: dt.date, utc_minutes: int) -> tuple[str, str]:
    """(Tag-in, Tag-out) as written, for a session ending at `utc_minutes` after midnight UTC of
    `day`, in a zone where that is still `day`."""
    zone = draw(_ZONES)
    twelve_hour = draw(_BOOLEANS) and zone not in ("+02:00", "bare")
    spaced = draw(_BOOLEANS)
    moment = dt.datetime.combine(day, dt.time(), tzinfo=dt.UTC) + dt.timedelta(minutes=utc_minutes)
    if zone == "ET":
        local = moment.astimezone(MEP_ET)
    elif zone == "CET":
        local = moment.astimezone(BERLIN)
        zone = "CEST" if local.utcoffset() == dt.timedelta(hours=2) else "CET"
    elif zone == "+02:00":
        local = moment.astimezone(dt.timezone(dt.timedelta(hours=2)))
    else:
        local = moment
    assert local.date() == day, "utc_minutes is kept where every zone is on the same date"
    minutes = local.hour * 60 + local.minute
    approximate = "~" if draw(_ONE_IN_SIX) else ""
    began = max(0, minutes - draw(_SESSION_LENGTH))
    if zone == "bare":  # a time without a zone is UTC, as MEP's checker reads it
        return _clock(began, False), f"{approximate}{_clock(minutes, False)}"
    gap = " " if draw(_BOOLEANS) else ""
    return (
        f"{_clock(began, twelve_hour, spaced)}{gap}{zone}",
        f"{approximate}{_clock(minutes, twelve_hour, spaced)}{gap}{zone}",
    )


@st.composite
def tasks(draw: st.DrawFn) -> Task:
    """A What's pending item: an open or done task, with or without an owner tag, or a bullet."""
    if draw(_ONE_IN_SIX):
        return Task(draw(_TASK_TEXTS), plain=True)
    return Task(draw(_TASK_TEXTS), draw(_OWNERS), done=draw(_BOOLEANS))


_PENDING = st.lists(tasks(), min_size=1, max_size=3)


def _entry(
    draw: st.DrawFn,
    day: dt.date,
    uid: int,
    utc_minutes: int | None = None,
    active: bool = False,
    agent: tuple[str, str, str] | None = None,
) -> EntrySpec:
    timed = utc_minutes is not None or active
    tags: tuple[str, str] | None = None
    moment: float | None = None
    if timed or agent is not None or draw(_BOOLEANS):
        context = " | ".join(agent or draw(_AGENTS))
        if active:
            tags, moment = (draw(_ACTIVE_SINCE), "[active]"), float("inf")
        else:
            minutes = utc_minutes if utc_minutes is not None else draw(_MINUTES)
            tags, moment = _tag_line(draw, day, minutes), float(minutes)
    else:
        context = draw(_MACHINES)
    happened = (f"Merged PR #{uid}", *draw(_DONE_THINGS))
    return EntrySpec(
        day, context, tags, moment, happened, tuple(draw(_PENDING)), tuple(draw(_TRAPS)), draw(_ONE_IN_EIGHT)
    )


@st.composite
def entries(
    draw: st.DrawFn,
    day: dt.date,
    uid: int,
    utc_minutes: int | None = None,
    active: bool = False,
    agent: tuple[str, str, str] | None = None,
) -> EntrySpec:
    """One entry on `day`; timed (v2 with a comparable Tag-out) when `utc_minutes` or `active`."""
    return _entry(draw, day, uid, utc_minutes, active, agent)


@st.composite
def entry_lists(
    draw: st.DrawFn,
    first: dt.date = FIRST_DAY,
    last: dt.date = LAST_DAY,
    min_size: int = 1,
    max_size: int = 6,
    uid_base: int = 100,
) -> tuple[EntrySpec, ...]:
    """Entries newest first: distinct, and on a shared date all timed with distinct Tag-outs."""
    count = draw(st.integers(min_size, min(max_size, len(AGENTS))))
    dates = st.dates(first, last)
    days = [draw(dates) for _ in range(count)]
    # A narrow date range makes shared dates (the same-day ordering rule) common.
    narrow = draw(_BOOLEANS)
    if narrow:
        days = [min(days[0] + dt.timedelta(days=day.toordinal() % 3), last) for day in days]
    made: list[EntrySpec] = []
    for day in sorted(set(days), reverse=True):
        count = days.count(day)
        if count == 1:
            made.append(_entry(draw, day, uid_base + len(made)))
            continue
        # 08:00-19:00 UTC: the same date in UTC, ET, CET/CEST and +02:00, and past the hour of
        # a European daylight-saving switch (CET or CEST is chosen for the whole date here).
        moments = draw(st.lists(_MINUTES, min_size=count, max_size=count, unique=True))
        # Each session of a day has its own agent: entries are matched across sides by heading,
        # and two sessions of one agent on one date share theirs (see test_merge_properties).
        agents = draw(_AGENT_ORDERS)
        active = draw(_BOOLEANS)
        for index, minutes in enumerate(sorted(moments, reverse=True)):
            on = index == 0 and active
            made.append(_entry(draw, day, uid_base + len(made), None if on else minutes, on, agents[index]))
    return tuple(made)


_DESCRIPTIONS = st.sampled_from(DESCRIPTIONS)
_SEPARATORS = st.sampled_from(["\n---\n\n", "\n"])
_NEWLINES = st.sampled_from(["\n", "\r\n"])
_ONE_IN_FOUR = st.integers(0, 3).map(lambda value: value == 0)
_ONE_IN_FIVE = st.integers(0, 4).map(lambda value: value == 0)


@st.composite
def layouts(draw: st.DrawFn, entries_: tuple[EntrySpec, ...]) -> LogSpec:
    return LogSpec(
        entries_,
        description=draw(_DESCRIPTIONS),
        comment=draw(_BOOLEANS),
        rule=draw(_BOOLEANS),
        separator=draw(_SEPARATORS),
        notes=draw(_ONE_IN_FOUR),
        newline=draw(_NEWLINES),
        final_newline=not draw(_ONE_IN_FIVE),
    )


@st.composite
def clean_log_specs(draw: st.DrawFn, min_entries: int = 1, max_entries: int = 6) -> LogSpec:
    return draw(layouts(draw(entry_lists(min_size=min_entries, max_size=max_entries))))


def clean_logs(min_entries: int = 1, max_entries: int = 6) -> st.SearchStrategy[str]:
    """The text of a clean log: it lints with no finding at all."""
    return clean_log_specs(min_entries, max_entries).map(LogSpec.text)


# -- merge triples ---------------------------------------------------------------------------


def tick(entry: EntrySpec) -> EntrySpec:
    """The first open task ticked done (the same edit on either side gives the same entry)."""
    pending = list(entry.pending)
    for index, task in enumerate(pending):
        if not task.plain and not task.done:
            pending[index] = replace(task, done=True)
            return replace(entry, pending=tuple(pending))
    return replace(entry, watch=(*entry.watch, "All tasks were already done"))


def note(entry: EntrySpec, side: str) -> EntrySpec:
    """A bullet only `side` writes under What happened."""
    return replace(entry, happened=(*entry.happened, f"Follow-up from {side}: checked the deploy"))


def warn(entry: EntrySpec, side: str) -> EntrySpec:
    """A Watch out for bullet only `side` writes."""
    return replace(entry, watch=(*entry.watch, f"{side} saw flaky tests on this branch"))


@dataclass(frozen=True)
class Triple:
    base_spec: LogSpec
    ours_spec: LogSpec
    theirs_spec: LogSpec
    ours_versions: tuple[EntrySpec | None, ...]  # per base entry: what ours made of it (None: deleted)
    theirs_versions: tuple[EntrySpec | None, ...]

    @property
    def base(self) -> str:
        return self.base_spec.text()

    @property
    def ours(self) -> str:
        return self.ours_spec.text()

    @property
    def theirs(self) -> str:
        return self.theirs_spec.text()

    def expected_keys(self) -> set[str]:
        """What the merge keeps: both sides' new entries; for a base entry, a change over no
        change, two different changes both, and nothing when one side deleted it and the other
        left it as it was."""
        kept: set[str] = set()
        base_keys = set(self.base_spec.keys())
        for spec in (self.ours_spec, self.theirs_spec):
            kept |= {entry.key() for entry in spec.entries if entry.key() not in base_keys}
        for old, mine, yours in zip(
            self.base_spec.entries, self.ours_versions, self.theirs_versions, strict=True
        ):
            if mine == old and yours == old:
                kept.add(old.key())
            # A deletion facing an unchanged entry drops it; facing a change, the change is new
            # text of that side and was kept above. Two changes were both kept above.
        if self.base_spec.notes:
            kept.add(NOTES.strip())
        return kept

    def expected_entry_order(self) -> list[str]:
        """The keys of the merged entries in order: newest date first, the later Tag-out first,
        the two versions of an entry both sides changed ours first."""
        ours = {entry.key(): entry for entry in self.ours_spec.entries}
        theirs = {entry.key(): entry for entry in self.theirs_spec.entries}
        kept = self.expected_keys()
        ranked = [(entry, 0) for key, entry in ours.items() if key in kept]
        ranked += [(entry, 1) for key, entry in theirs.items() if key in kept and key not in ours]
        ranked.sort(key=lambda pair: (-pair[0].day.toordinal(), -(pair[0].moment or 0.0), pair[1]))
        return [entry.key() for entry, _ in ranked]


def _side(
    base: tuple[EntrySpec, ...], operations: list[str], side: str, in_happened: bool
) -> tuple[EntrySpec | None, ...]:
    versions: list[EntrySpec | None] = []
    for entry, operation in zip(base, operations, strict=True):
        if operation == "delete":
            versions.append(None)
        elif operation == "tick":
            versions.append(tick(entry))
        elif operation == "note":
            versions.append(note(entry, side) if in_happened else warn(entry, side))
        else:
            versions.append(entry)
    return tuple(versions)


_WHERE = st.sampled_from(["ours", "theirs", "both"])
_OPERATIONS = st.sampled_from(["keep", "keep", "keep", "tick", "note", "delete"])
_HEADER_CHANGES = st.sampled_from(["none", "ours", "theirs"])


@st.composite
def triples(draw: st.DrawFn, max_base: int = 5, max_new: int = 5) -> Triple:
    """(base, ours, theirs): base a clean log; each side adds entries on top and edits or
    deletes some base entries; the file header changes on at most one side."""
    base = draw(clean_log_specs(min_entries=1, max_entries=max_base))
    newest = base.entries[0].day
    pool = draw(
        entry_lists(
            first=newest + dt.timedelta(days=1),
            last=newest + dt.timedelta(days=20),
            min_size=0,
            max_size=max_new,
            uid_base=500,
        )
    )
    where = [draw(_WHERE) for _ in pool]
    added_ours = tuple(entry for entry, side in zip(pool, where, strict=True) if side != "theirs")
    added_theirs = tuple(entry for entry, side in zip(pool, where, strict=True) if side != "ours")
    ours_operations = [draw(_OPERATIONS) for _ in base.entries]
    theirs_operations = [draw(_OPERATIONS) for _ in base.entries]
    # A side keeps one entry at least: a file header alone is not a log (merge rule 2).
    if not added_ours and set(ours_operations) == {"delete"}:
        ours_operations[0] = "keep"
    if not added_theirs and set(theirs_operations) == {"delete"}:
        theirs_operations[0] = "keep"
    ours_versions = _side(base.entries, ours_operations, "ours", draw(_BOOLEANS))
    theirs_versions = _side(base.entries, theirs_operations, "theirs", draw(_BOOLEANS))
    ours = replace(base, entries=added_ours + tuple(e for e in ours_versions if e is not None))
    theirs = replace(base, entries=added_theirs + tuple(e for e in theirs_versions if e is not None))
    header = draw(_HEADER_CHANGES)
    if header == "ours":
        ours = replace(ours, description="Handoffs of the ours branch, newest entry first.")
    elif header == "theirs":
        theirs = replace(theirs, description="Handoffs of the theirs branch, newest entry first.")
    return Triple(base, ours, theirs, ours_versions, theirs_versions)
