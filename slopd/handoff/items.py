"""List items of a section: bullets, tasks, owner tags, and task lines written wrong. Pure.

Rules (SPEC §10):
1. A task is `- [ ] text` (open) or `- [x] text` (done, `X` too), indented or not; a bullet is
   any other `- text`.
2. An owner tag is a leading `**[Name]**` in a task's text.
3. A line that looks like a task but is not written as one — `-[ ]`, `- []`, `* [ ]`,
   `1. [ ]`, `- [ x]`, `- [ ]` with no text — is `malformed`, for lint's MEP5. A Markdown link
   (`- [text](url)`) is an ordinary bullet.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TASK = re.compile(r"(?P<indent>\s*)- \[(?P<mark>[ xX])\] (?P<text>\S.*)")
_TASK_LIKE = re.compile(r"\s*(?:[-*+]|\d+[.)])\s*\[\s*[xX]?\s*\](?!\()")
_BULLET = re.compile(r"\s*[-*+] \S")
_OWNER = re.compile(r"\*\*\[(?P<owner>[^\]\n]+)\]\*\*\s*")


@dataclass(frozen=True, slots=True)
class Item:
    line: int
    text: str  # the line as written, without its ending
    task: bool
    done: bool
    owner: str | None
    body: str  # a task's text after the checkbox and owner tag; a bullet's after the marker
    malformed: bool = False


def read_item(text: str, line: int) -> Item | None:
    """The item that `text` (line number `line`) begins, or None when it begins none."""
    task = _TASK.fullmatch(text)
    if task is not None:
        body = task.group("text")
        owner = _OWNER.match(body)
        return Item(
            line,
            text,
            task=True,
            done=task.group("mark") != " ",
            owner=owner.group("owner").strip() if owner else None,
            body=body[owner.end() :] if owner else body,
        )
    if _TASK_LIKE.match(text):
        return Item(line, text, task=True, done=False, owner=None, body=text.strip(), malformed=True)
    if _BULLET.match(text):
        return Item(line, text, task=False, done=False, owner=None, body=text.strip()[2:])
    return None
