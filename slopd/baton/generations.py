"""One generation's commit, and what its records say. Pure.

Rules (SPEC §11):
1. `commit_files` lists a generation's files in the seed's order — `generations/vN/STATE.json`,
   `HANDOFF.md`, `SCORE.json`, then `INTENTIONS.json` and `CONTEXT.json` when given, the
   `CURRENT/` copies, `AUTOBIOGRAPHY.md`, the two `evolution/` records — and `GENERATION` = `N`
   last. The writer writes them in this order, each atomically.
2. STATE.json is the agent's object plus `generation`, `committed_at` and, for a letter that
   failed the gate and was accepted anyway, `"LOW_QUALITY": true`.
3. `fitness` and `mutation` are the records appended to `evolution/` per generation (never
   overwriting earlier ones): the metrics of the seed's table from STATE.json and SCORE.json,
   and what changed in skills, trust and confidence since the previous generation.
4. `autobiography` is deterministic: one paragraph per generation, newest first, each with its
   number, date, score, LOW_QUALITY and the first sentence of Who I Was and Where Things Stand;
   past `limit` characters the oldest generations are folded into one line each, and past that
   the newest paragraph is kept and the oldest lines are dropped, with a count.
5. A configured summarizer's paragraphs (`summarized`) are bounded the same way: whole
   paragraphs, newest first as it wrote them, until `limit`; what does not fit is counted.
6. Either way the first line, `heading`, names the generation the autobiography was written for
   (`# Autobiography — VESSEL (through generation N)`): it is written before GENERATION, and
   boot presents it only when N is GENERATION (`baton.committed`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

AUTOBIOGRAPHY_LIMIT = 4000
_SENTENCE = re.compile(r"(.+?[.!?])(?:\s|$)", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Past:
    """What the autobiography needs of one committed generation."""

    generation: int
    committed_at: str
    average: float
    low_quality: bool
    letter: str


def dump(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode()


def state_record(
    state: dict[str, Any], *, generation: int, committed_at: str, low_quality: bool
) -> dict[str, Any]:
    """Rule 2."""
    record = {**state, "generation": generation, "committed_at": committed_at}
    if low_quality:
        record["LOW_QUALITY"] = True
    else:
        record.pop("LOW_QUALITY", None)
    return record


def commit_files(
    generation: int,
    *,
    state: dict[str, Any],
    letter: str,
    score: dict[str, Any],
    intentions: object | None,
    context: object | None,
    autobiography: str,
    fitness_history: list[Any],
    mutations: list[Any],
) -> list[tuple[str, bytes]]:
    """Rule 1."""
    folder = f"generations/v{generation}"
    files = [
        (f"{folder}/STATE.json", dump(state)),
        (f"{folder}/HANDOFF.md", letter.encode()),
        (f"{folder}/SCORE.json", dump(score)),
    ]
    if intentions is not None:
        files.append((f"{folder}/INTENTIONS.json", dump(intentions)))
    if context is not None:
        files.append((f"{folder}/CONTEXT.json", dump(context)))
    files += [("CURRENT/STATE.json", dump(state)), ("CURRENT/HANDOFF.md", letter.encode())]
    if intentions is not None:
        files.append(("CURRENT/INTENTIONS.json", dump(intentions)))
    files += [
        ("AUTOBIOGRAPHY.md", autobiography.encode()),
        ("evolution/fitness_history.json", dump(fitness_history)),
        ("evolution/mutations.json", dump(mutations)),
        ("GENERATION", str(generation).encode()),
    ]
    return files


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _mapping(value: object) -> dict[str, float]:
    if isinstance(value, dict):
        return {str(key): float(item) for key, item in value.items() if _number(item) is not None}
    if isinstance(value, list):
        return {str(item): 1.0 for item in value}
    return {}


def fitness(state: dict[str, Any], score: dict[str, Any], generation: int) -> dict[str, Any]:
    """Rule 3: the seed's metrics table, one row."""
    completed, failed = _number(state.get("tasks_completed")), _number(state.get("tasks_failed"))
    trust = _mapping(state.get("trust"))
    energy = state.get("energy")
    used = None
    if (
        isinstance(energy, dict)
        and _number(energy.get("budget")) is not None
        and _number(energy.get("remaining")) is not None
    ):
        used = float(energy["budget"]) - float(energy["remaining"])
    return {
        "generation": generation,
        "committed_at": state.get("committed_at"),
        "confidence": _number(state.get("confidence")),
        "tasks_completed": completed,
        "tasks_failed": failed,
        "handoff_score": score["average"],
        "passes": score["passes"],
        "low_quality": bool(state.get("LOW_QUALITY")),
        "skills": len(_mapping(state.get("skills"))),
        "trust_density": sum(trust.values()) / len(trust) if trust else None,
        "energy_per_task": used / completed if used is not None and completed else None,
    }


def mutation(previous: dict[str, Any] | None, state: dict[str, Any], generation: int) -> dict[str, Any]:
    """Rule 3: what changed since the previous generation's STATE.json."""
    before = previous or {}
    old_skills, new_skills = _mapping(before.get("skills")), _mapping(state.get("skills"))
    old_trust, new_trust = _mapping(before.get("trust")), _mapping(state.get("trust"))
    confidence, earlier = _number(state.get("confidence")), _number(before.get("confidence"))
    return {
        "generation": generation,
        "skills_added": sorted(set(new_skills) - set(old_skills)),
        "skills_removed": sorted(set(old_skills) - set(new_skills)),
        "skills_changed": {
            k: round(new_skills[k] - old_skills[k], 6)
            for k in sorted(new_skills)
            if k in old_skills and new_skills[k] != old_skills[k]
        },
        "trust_changed": {
            k: round(new_trust.get(k, 0.0) - old_trust.get(k, 0.0), 6)
            for k in sorted(set(new_trust) | set(old_trust))
            if new_trust.get(k) != old_trust.get(k)
        },
        "confidence_delta": None if confidence is None or earlier is None else round(confidence - earlier, 6),
    }


def section_sentence(letter: str, title: str) -> str:
    """The first sentence under a `## TITLE` heading (case-insensitive), or "" when absent."""
    found = re.search(
        r"^#{1,6}\s*" + re.escape(title) + r"\b[^\n]*\n(.*?)(?=^#{1,6}\s|\Z)",
        letter,
        re.IGNORECASE | re.MULTILINE | re.DOTALL,
    )
    if found is None:
        return ""
    text = " ".join(line.strip(" -*\t") for line in found.group(1).splitlines() if line.strip())
    sentence = _SENTENCE.match(text)
    return (sentence.group(1) if sentence else text).strip()


def paragraph(past: Past) -> str:
    flags = " LOW_QUALITY." if past.low_quality else ""
    who, where = (
        section_sentence(past.letter, "Who I Was"),
        section_sentence(past.letter, "Where Things Stand"),
    )
    said = " ".join(part for part in (who, where) if part)
    return f"**{_label(past)}**.{flags} {said}".rstrip()


def _label(past: Past) -> str:
    return f"Gen-{past.generation} ({past.committed_at[:10]}, score {past.average:.1f})"


def summary_input(vessel: str, pasts: list[Past]) -> bytes:
    """What a summarizer reads on stdin: the vessel and every generation, newest first."""
    newest = sorted(pasts, key=lambda past: past.generation, reverse=True)
    generations = [
        {
            "generation": past.generation,
            "committed_at": past.committed_at,
            "score": past.average,
            "LOW_QUALITY": past.low_quality,
            "letter": past.letter,
        }
        for past in newest
    ]
    return json.dumps({"vessel": vessel, "generations": generations}, ensure_ascii=False).encode()


def heading(vessel: str, through: int) -> str:
    """Rule 6."""
    return f"# Autobiography — {vessel} (through generation {through})\n\n"


def summarized(vessel: str, text: str, through: int, limit: int = AUTOBIOGRAPHY_LIMIT) -> str:
    """Rules 5 and 6 (`through`: the generation being committed)."""
    head = heading(vessel, through)
    paragraphs = [part.strip() for part in re.split(r"\n\s*\n", text.strip()) if part.strip()]
    body = head
    for shown, part in enumerate(paragraphs):
        rest = len(paragraphs) - shown - 1
        note = f"\n\n(… {rest} more paragraphs not shown)\n" if rest else "\n"
        if len(body) + len(part) + len(note) + 2 > limit:
            missing = len(paragraphs) - shown
            return (body + f"(… {missing} more paragraphs not shown)\n")[:limit]
        body += part + "\n\n"
    return body.rstrip("\n") + "\n"


def autobiography(
    vessel: str, pasts: list[Past], limit: int = AUTOBIOGRAPHY_LIMIT, *, through: int | None = None
) -> str:
    """Rules 4 and 6 (`through`: the generation it is written for; by default the newest of `pasts`)."""
    newest = sorted(pasts, key=lambda past: past.generation, reverse=True)
    upto = through if through is not None else (newest[0].generation if newest else 0)
    head = heading(vessel, upto)
    if not newest:
        return head + ("No generation yet.\n" if upto == 0 else "No committed generation could be read.\n")
    full = [paragraph(past) for past in newest]
    for kept in range(len(full), -1, -1):
        folded = [
            f"- Gen-{past.generation} ({past.committed_at[:10]}, score {past.average:.1f})"
            for past in newest[kept:]
        ]
        text = head + "\n\n".join(full[:kept]) + ("\n\n" + "\n".join(folded) if folded else "") + "\n"
        if len(text) <= limit:
            return text
    for kept in (1, 0):  # even one line per generation is too long: drop the oldest, counted
        body = head + ("".join(full[:kept]) + "\n\n" if kept else "")
        for shown, past in enumerate(newest[kept:], start=kept):
            line = f"- {_label(past)}\n"
            if len(body) + len(line) + 48 > limit:
                body += f"- … {len(newest) - shown} older generations not shown\n"
                break
            body += line
        if len(body) <= limit:
            return body
    return body[:limit]
