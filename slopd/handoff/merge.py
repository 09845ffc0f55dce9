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
   entry it followed, except one that closed its side's file (a trailing `## Notes`): it stays last.
6. The file header (the preamble) is merged as a whole; both sides changing it differently
   is the only conflict of a log merge, written with standard markers.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import date

from slopd.handoff import clock, lines
from slopd.handoff.grammar import FILE_HEADER, Block, Entry, Log, Other, parse


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
    key: str


def _placed(log: Log) -> list[_Placed]:
    last = len(log.blocks) - 1
    return [_Placed(block, log, index == last, key(block)) for index, block in enumerate(log.blocks)]


def merge(base: str, ours: str, theirs: str, *, marker_size: int = 7) -> Merged:
    if theirs in (ours, base):
        return Merged(ours, 0)
    if base == ours:
        return Merged(theirs, 0)
    logs = parse(base), parse(ours), parse(theirs)
    if any(text.strip() and not _is_log(log) for text, log in zip((ours, theirs), logs[1:], strict=True)):
        return Merged(_conflict(ours, base, theirs, marker_size, "\n"), 1, log=False)
    preamble, conflicts = _preamble(*logs, marker_size)
    placed = _order(_blocks(*logs))
    return Merged(preamble + _render(placed, logs[1], logs[2]), conflicts)


def _is_log(log: Log) -> bool:
    """Rule 2: entries, or at least the file header of a log (every entry deleted)."""
    return bool(log.blocks) or any(
        line.rstrip() == FILE_HEADER for line in lines.with_lf(log.preamble).split("\n")
    )


def key(block: Block) -> str:
    """Rule 3: what makes two blocks the same."""
    return "\n".join(line.rstrip() for line in lines.with_lf(block.text).split("\n")).strip()


def _preamble(base: Log, ours: Log, theirs: Log, size: int) -> tuple[str, int]:
    if theirs.preamble in (ours.preamble, base.preamble):
        return ours.preamble, 0
    if base.preamble == ours.preamble:
        return theirs.preamble, 0
    return _conflict(ours.preamble, base.preamble, theirs.preamble, size, ours.newline), 1


def _conflict(ours: str, base: str, theirs: str, size: int, newline: str) -> str:
    def ended(text: str) -> str:
        return text if not text or text.endswith(("\n", "\r")) else text + newline

    marks = ["<" * size + " ours", "|" * size + " base", "=" * size, ">" * size + " theirs"]
    parts = [marks[0], ended(ours), marks[1], ended(base), marks[2], ended(theirs), marks[3]]
    return "".join(part if index % 2 else part + newline for index, part in enumerate(parts))


def _matches(base: list[_Placed], side: list[_Placed]) -> list[_Placed | None]:
    """For each base block: the side's block it became (the same, or changed), or None."""
    by_key: dict[str, list[int]] = {}
    by_heading: dict[str, list[int]] = {}
    base_keys = {item.key for item in base}
    for index, item in enumerate(side):
        by_key.setdefault(item.key, []).append(index)
        if item.key not in base_keys:
            by_heading.setdefault(item.block.heading.rstrip(), []).append(index)
    taken: set[int] = set()
    found: list[_Placed | None] = []
    for item in base:
        same = _first_free(by_key.get(item.key, []), taken)
        if same is None:
            same = _closest(item, by_heading.get(item.block.heading.rstrip(), []), side, taken)
        if same is not None:
            taken.add(same)
        found.append(None if same is None else side[same])
    return found


def _first_free(indices: list[int], taken: set[int]) -> int | None:
    while indices and indices[0] in taken:
        indices.pop(0)
    return indices[0] if indices else None


def _closest(item: _Placed, indices: list[int], side: list[_Placed], taken: set[int]) -> int | None:
    """Rule 3's changed entry: of the free blocks with its heading, the one sharing the most
    content lines with it (none shared: not a change of it, but another entry)."""
    lines = _content(item)
    best, shared = None, 0
    for index in indices:
        if index not in taken and (count := len(lines & _content(side[index]))) > shared:
            best, shared = index, count
    return best


def _content(item: _Placed) -> set[str]:
    return {line for line in item.key.split("\n")[1:] if line.strip() and not line.startswith("#")}


def _blocks(base: Log, ours: Log, theirs: Log) -> list[_Placed]:
    """Rule 4, in the sides' order: ours' blocks, each block only theirs holds placed just
    before the block that follows it in theirs (at the end when none does)."""
    old_side, our_side, their_side = _placed(base), _placed(ours), _placed(theirs)
    mine, yours = _matches(old_side, our_side), _matches(old_side, their_side)
    gone: set[str] = set()  # base texts that must not come back: deleted, or changed on one side
    replaced: dict[str, _Placed] = {}  # ours' unchanged copy -> theirs' change
    alias: dict[str, str] = {}  # theirs' unchanged copy -> ours' change (where theirs' order anchors)
    for item, a, b in zip(old_side, mine, yours, strict=True):
        old = item.key
        a_same, b_same = a is not None and a.key == old, b is not None and b.key == old
        if (a is None and (b is None or b_same)) or (b is None and a_same) or (b_same and not a_same):
            gone.add(old)
        if a_same and b is not None and not b_same:
            replaced[old] = b
        if b_same and a is not None and not a_same:
            alias[old] = a.key
    result: list[_Placed] = []
    where: dict[str, int] = {}
    for item in our_side:
        placed = replaced.get(item.key, item)
        if placed.key not in where and placed.key not in gone:
            where[placed.key] = len(result)
            result.append(placed)
    before: dict[int, list[_Placed]] = {}  # theirs-only blocks to go before result[index]
    waiting: list[_Placed] = []
    held: set[str] = set()
    for item in their_side:
        anchor = where.get(alias.get(item.key, item.key))
        if anchor is not None:
            before.setdefault(anchor, []).extend(waiting)
            waiting = []
        elif item.key not in gone and item.key not in held:
            held.add(item.key)
            waiting.append(item)
    merged: list[_Placed] = []
    for index, item in enumerate(result):
        merged += before.get(index, [])
        merged.append(item)
    return merged + waiting


def _order(placed: list[_Placed]) -> list[_Placed]:
    """Rule 5: a stable sort by date, then the same-day entries with comparable Tag-outs
    sorted among the places they hold."""
    days: list[date] = []
    current: date | None = None
    for item in placed:
        if isinstance(item.block, Other) and item.last:
            days.append(date.min)  # a section closing its side's file stays at the end of the merge
            continue
        day = item.block.header.day if isinstance(item.block, Entry) else None
        current = day or current
        days.append(current or date.max)
    ranked = sorted(range(len(placed)), key=lambda index: days[index], reverse=True)
    ordered = [placed[index] for index in ranked]
    slots: dict[date, list[tuple[int, float]]] = {}
    for position, index in enumerate(ranked):
        moment = _moment(placed[index])
        if moment is not None:
            slots.setdefault(days[index], []).append((position, moment))
    for timed in slots.values():
        items = sorted(((ordered[position], moment) for position, moment in timed), key=lambda pair: -pair[1])
        for (position, _), (item, _) in zip(timed, items, strict=True):
            ordered[position] = item
    return ordered


def _moment(placed: _Placed) -> float | None:
    block = placed.block
    return clock.instant(block.tag_out) if isinstance(block, Entry) else None


def _render(placed: list[_Placed], ours: Log, theirs: Log) -> str:
    separator = _separator(ours) or _separator(theirs) or ours.newline
    parts: list[str] = []
    for index, item in enumerate(placed):
        block, newline = item.block, item.source.newline
        text = block.text if block.text.endswith(("\n", "\r")) else block.text + newline
        if index == len(placed) - 1:
            ending = ours.blocks[-1].trailer if ours.blocks else block.trailer
            parts.append(block.text + block.trailer if item.last and item.source is ours else text + ending)
        else:
            parts.append(text + (block.trailer if block.trailer and not item.last else separator))
    text = "".join(parts)
    if ours.blocks and not (ours.blocks[-1].text + ours.blocks[-1].trailer).endswith(("\n", "\r")):
        text = text.removesuffix("\n").removesuffix("\r")  # ours ended without a newline: so does the merge
    return text


def _separator(log: Log) -> str | None:
    """The layout most often between the blocks of `log`."""
    trailers = Counter(block.trailer for block in log.blocks[:-1] if block.trailer)
    return trailers.most_common(1)[0][0] if trailers else None
