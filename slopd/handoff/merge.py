"""Three-way merge of handoff logs, entry by entry. Pure.

Rules (SPEC §10):
1. Identical sides, or one side equal to the base, give the other side's bytes unchanged.
2. A side with text but no entry is not a log: the whole file is one conflict, in diff3 form,
   so nothing is dropped silently.
3. An entry is known by its text (line endings and trailing spaces aside); an entry a side
   changed is the one with the base entry's heading that the base does not hold.
4. Every entry of either side is kept once, except one a side deleted and the other left as
   in the base. A change on one side wins over no change; two different changes are both kept,
   ours first. Blocks that are not entries (`## Media Channel`) are kept like entries.
5. Order: newest date first; on one date the later Tag-out first (as lint's MEP2), otherwise
   the order the sides had them, ours before theirs. A block without a date stays after the
   entry it followed.
6. The file header (the preamble) is merged as a whole; both sides changing it differently
   is the only conflict of a log merge, written with standard markers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date

from slopd.handoff import header as headers
from slopd.handoff.grammar import Block, Entry, Log, parse


@dataclass(frozen=True, slots=True)
class Merged:
    text: str
    conflicts: int
    log: bool = True  # merged entry by entry (False: the whole-file fallback of rule 2)


@dataclass(frozen=True, slots=True)
class _Placed:
    block: Block
    source: Log
    last: bool  # the last block of its source: its trailer ends a file


def merge(base: str, ours: str, theirs: str, *, marker_size: int = 7) -> Merged:
    if theirs in (ours, base):
        return Merged(ours, 0)
    if base == ours:
        return Merged(theirs, 0)
    logs = parse(base), parse(ours), parse(theirs)
    if any(text.strip() and not log.blocks for text, log in zip((ours, theirs), logs[1:], strict=True)):
        return Merged(_conflict(ours, base, theirs, marker_size, "\n"), 1, log=False)
    preamble, conflicts = _preamble(*logs, marker_size)
    placed = _order(_blocks(*logs))
    return Merged(preamble + _render(placed, logs[1], logs[2]), conflicts)


def key(block: Block) -> str:
    """Rule 3: what makes two blocks the same."""
    return "\n".join(line.rstrip() for line in block.text.replace("\r\n", "\n").split("\n")).strip()


def _preamble(base: Log, ours: Log, theirs: Log, size: int) -> tuple[str, int]:
    if theirs.preamble in (ours.preamble, base.preamble):
        return ours.preamble, 0
    if base.preamble == ours.preamble:
        return theirs.preamble, 0
    return _conflict(ours.preamble, base.preamble, theirs.preamble, size, ours.newline), 1


def _conflict(ours: str, base: str, theirs: str, size: int, newline: str) -> str:
    def ended(text: str) -> str:
        return text if not text or text.endswith("\n") else text + newline

    marks = ["<" * size + " ours", "|" * size + " base", "=" * size, ">" * size + " theirs"]
    parts = [marks[0], ended(ours), marks[1], ended(base), marks[2], ended(theirs), marks[3]]
    return "".join(part if index % 2 else part + newline for index, part in enumerate(parts))


def _matches(base: Log, side: Log) -> dict[int, _Placed | None]:
    """For each base block (by index): the side's block it became (same or changed), or None."""
    unmatched = list(range(len(side.blocks)))
    found: dict[int, _Placed | None] = {}
    side_keys = [key(block) for block in side.blocks]
    last = len(side.blocks) - 1
    for index, block in enumerate(base.blocks):
        same = next((i for i in unmatched if side_keys[i] == key(block)), None)
        if same is None:
            same = next(
                (
                    i
                    for i in unmatched
                    if side.blocks[i].heading.rstrip() == block.heading.rstrip()
                    and not _in_base(side_keys[i], base)
                ),
                None,
            )
        if same is not None:
            unmatched.remove(same)
            found[index] = _Placed(side.blocks[same], side, same == last)
        else:
            found[index] = None
    return found


def _in_base(text: str, base: Log) -> bool:
    return any(key(block) == text for block in base.blocks)


def _blocks(base: Log, ours: Log, theirs: Log) -> list[_Placed]:
    """Rule 4, in the sides' order: ours' blocks, each block only theirs holds placed just
    before the block that follows it in theirs (at the end when none does)."""
    mine, yours = _matches(base, ours), _matches(base, theirs)
    gone: set[str] = set()  # base texts that must not come back: deleted, or changed on one side
    replaced: dict[str, _Placed] = {}  # ours' unchanged copy -> theirs' change
    alias: dict[str, str] = {}  # theirs' unchanged copy -> ours' change (where theirs' order anchors)
    for index, block in enumerate(base.blocks):
        old, a, b = key(block), mine[index], yours[index]
        a_same, b_same = a is not None and key(a.block) == old, b is not None and key(b.block) == old
        if (a is None and (b is None or b_same)) or (b is None and a_same) or (b_same and not a_same):
            gone.add(old)
        if a_same and b is not None and not b_same:
            replaced[old] = b
        if b_same and a is not None and not a_same:
            alias[old] = key(a.block)
    result: list[_Placed] = []
    where: dict[str, int] = {}

    def fresh(placed: _Placed) -> bool:
        text = key(placed.block)
        return text not in where and text not in gone

    for position, block in enumerate(ours.blocks):
        placed = replaced.get(key(block)) or _Placed(block, ours, position == len(ours.blocks) - 1)
        if fresh(placed):
            where[key(placed.block)] = len(result)
            result.append(placed)
    waiting: list[_Placed] = []
    for position, block in enumerate(theirs.blocks):
        text = key(block)
        text = alias.get(text, text)
        if text in where:
            at = where[text]
            result[at:at] = waiting
            where = {key(item.block): index for index, item in enumerate(result)}
            waiting = []
            continue
        placed = _Placed(block, theirs, position == len(theirs.blocks) - 1)
        if fresh(placed) and all(key(item.block) != text for item in waiting):
            waiting.append(placed)
    return result + waiting


def _order(placed: list[_Placed]) -> list[_Placed]:
    """Rule 5: a stable sort by date, then the same-day entries with comparable Tag-outs
    sorted among the places they hold."""
    days: list[date] = []
    current: date | None = None
    for item in placed:
        day = item.block.header.day if isinstance(item.block, Entry) else None
        current = day or current
        days.append(current or date.max)
    ranked = sorted(range(len(placed)), key=lambda index: days[index], reverse=True)
    ordered = [placed[index] for index in ranked]
    ordered_days = [days[index] for index in ranked]
    for day in set(ordered_days):
        slots = [
            i
            for i, (item, d) in enumerate(zip(ordered, ordered_days, strict=True))
            if d == day and _moment(item) is not None
        ]
        timed = sorted((ordered[i] for i in slots), key=lambda item: -(_moment(item) or 0.0))
        for slot, item in zip(slots, timed, strict=True):
            ordered[slot] = item
    return ordered


def _moment(placed: _Placed) -> float | None:
    block = placed.block
    if not isinstance(block, Entry) or block.tags is None:
        return None
    return headers.instant(block.tags.tag_out, block.header.day)


def _render(placed: list[_Placed], ours: Log, theirs: Log) -> str:
    separator = _separator(ours) or _separator(theirs) or ours.newline
    parts: list[str] = []
    for index, item in enumerate(placed):
        block, newline = item.block, item.source.newline
        text = block.text if block.text.endswith("\n") else block.text + newline
        if index == len(placed) - 1:
            ending = ours.blocks[-1].trailer if ours.blocks else block.trailer
            parts.append(block.text + block.trailer if item.last and item.source is ours else text + ending)
        else:
            parts.append(text + (block.trailer if block.trailer and not item.last else separator))
    return "".join(parts)


def _separator(log: Log) -> str | None:
    """The layout most often between the blocks of `log`."""
    trailers = Counter(block.trailer for block in log.blocks[:-1] if block.trailer)
    return trailers.most_common(1)[0][0] if trailers else None
