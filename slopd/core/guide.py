"""`HUB.md`: the page an AI agent reads to talk to this hub, written by `slopd init`."""

from __future__ import annotations

GUIDE = """\
# This folder is a SLOP hub

A watcher (slopd) reads this folder and answers every message dropped into it. This page is
all an agent needs to talk to it. Protocol: SLOP.md v1 (`protocol: slop.v1`).

## Lanes

| folder | who writes | what |
|---|---|---|
| `inbox/` | any agent or human | your messages: `NAME.md` (YAML front matter + Markdown) or `NAME.json` |
| `authorized/` | the human only | human-signed orders (`NAME.md` + `NAME.md.sig`). Agents never write here. |
| `outbox/` | the watcher | replies, one file each: `REPLY-ID.md` (and `REPLY-ID/` for produced files) |
| `archive/` | the watcher | every consumed input, by day: `archive/YYYY-MM-DD/NAME` |
| `assets/` | anyone | large attachments; refer to them as `assets/NAME` instead of inlining |
| `notes/` | the watcher | `INDEX.md`: the newest notes, newest first; read it before you start |
| `standups/` | the watcher; humans edit Scope and Pointers | `PROJECT.md`: a project's Standing Standup |

## Sending a message

Write the file under a temporary name that starts with a dot (for example `inbox/.NAME.md.tmp`),
then rename it to `inbox/NAME.md` — the watcher ignores dotfiles, so it never reads half a file.
Never overwrite an earlier message: to correct one, send a new message whose `in_reply_to` is
the old id. The file name does not matter to the watcher; the `id` inside does.

```markdown
---
protocol: slop.v1
id: 20260704t071553z-short-slug      # see the id rules below; must be new
type: handoff                        # instigate | handoff | query | handshake | note | ack | result | error
from: claude-code                    # who you are: one seat per surface
to: watcher                          # the watcher, `human`, or a seat this watcher runs
in_reply_to: null                    # the id you answer, or null (required on ack/result/error)
created_at: 2026-07-04T07:15:53Z     # now, ISO 8601 in UTC (Z or +00:00)
auth: none                           # none (signed:NAME.md.sig is for the human's authorized/ lane)
mode: discuss                        # optional: execute | discuss
---

# A title

What you want, in Markdown.
```

The same as JSON: one object with the same keys plus an optional `"body"` string.

Rules the watcher enforces (a message that breaks any gets an `error` reply listing every
reason, and is archived):

- `protocol` is exactly `slop.v1`.
- `id`: 1-128 characters of `A-Z a-z 0-9 . _ : -`, starting with a letter or digit, no `..`.
  Ids compare without regard to case (`Run-7` and `run-7` are one id); lower case is the
  canonical form: `20260704t071553z-short-slug`.
- `from` and `to`: 1-128 characters of `A-Z a-z 0-9 . _ : @ -`.
- `created_at`: `YYYY-MM-DDTHH:MM:SS` (optional fraction) then `Z` or `+00:00`. It may be
  left out, except in `authorized/`: then the time the watcher first saw the file stands in.
- The file is UTF-8, at most {max_bytes} bytes, front matter nested at most 32 levels; YAML
  anchors, aliases, tags and duplicate keys are refused. Values are read as written: `on`,
  `no`, `0755` stay text.
- `body` is not a front-matter key; unknown keys are kept but change nothing.

## Types, and what you get back

| you send | the watcher | you get |
|---|---|---|
| `handshake` | notes that you exist | `ack` (silent) |
| `note` | indexes it into `notes/INDEX.md` | `ack` (silent) |
| `query`, `handoff` | summarizes it for the human (discuss) | `result` |
| `instigate` | runs the configured executor on your body (execute) | `ack`, then `result` or `error` |
| `ack`, `result`, `error` | records it and tells the human | nothing (never a reply to a reply) |

**Execute vs discuss.** Only `instigate` executes. Add `mode: discuss`, or write "discuss only"
anywhere in the body, and it is summarized instead — nothing runs. Irreversible actions never
run from `inbox/`: they run only from human-signed orders in `authorized/`.

**Standing Standups.** Add `project: NAME` (lower case: `a-z 0-9 . _ -`) to a `handshake` to
tag in on `standups/NAME.md`, and to a `handoff` whose body is one MEP entry (`## YYYY-MM-DD —
Agent | Platform | session-type`, a `**Tag-in:** … | **Tag-out:** …` line, `### What happened`,
`### What's pending` with `- [ ]` tasks, optionally `### Watch out for`) to file it there and tag
out. The `result` lists the project's open tasks by owner, or why the entry was not filed; a
reply to an entry (or a `project:`) that was refused carries `refused: standup` in its front
matter, so a script can tell a refusal from a filed entry without reading the text.

**Duplicates and conflicts.** The same message again (the same bytes under an id the watcher
has seen) is archived and ignored: no second run, no second reply. Other content under an id
already used is refused with an `error` naming the conflict, and nothing runs: a corrected
message needs a new id. A message carrying `action:` here is refused the same way (actions run
only from signed orders in `authorized/`); a refused message never takes its id, so you may send
it again without the mistake.

**Recipients.** This watcher answers to: {names}. Use `to: human` for the human. A message to
another `watcher:NAME` is left in place for that watcher; any other recipient is an error.

## Finding your reply

Replies land in `outbox/` as `ID.ack.md`, `ID.result.md` or `ID.error.md`, where `ID` is your
message's id in lower case (a rejected file gets `ID.invalid-HASH.md`, or `input.invalid-HASH.md` when its id
was unreadable). Each reply is an envelope with `in_reply_to: <your id>` and a `class`:

| class | meaning |
|---|---|
| `silent` | an ack; the human is not disturbed |
| `ping` | a short result or an error; the human sees the text |
| `hybrid` | a longer result; the human sees a summary and the path |
| `deliverable` | the execution produced files, in `outbox/REPLY-ID/` |

Files whose names start with `.slopd-tmp-` and end with `.tmp` are the watcher's own, still
being written: skip them. No such file ever matches `*.md`, `*.json` or `*.sig`, so a script
that collects `outbox/*.md` (even with a glob that matches dotfiles) only ever reads finished
replies.

If you are unsure whether your message arrived, look for a reply with your id before you send
it again — and if you send it again, keep the same id and the same bytes: that is always safe.
"""


def render(*, names: tuple[str, ...], max_bytes: int) -> str:
    shown = ", ".join(f"`{name}`" for name in names)
    return GUIDE.replace("{names}", shown).replace("{max_bytes}", str(max_bytes))
