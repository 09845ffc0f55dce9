"""The handoff letter's score: the seed's `score_handoff`, exactly, and its prose as advice. Pure.

Rules (SPEC §11; seed `002_…`, "Every handoff is scored by the keeper before commit"):
1. `score_handoff` is the seed's function, the only copy in slopd — the CLI, the commit gate
   and the HTTP API all call it. Its quirks are the seed's and are kept: markers are plain
   substrings of the lower-cased letter (`"line"` is in "pipeline", `"result"` in "results");
   the numbered-step check `"1."`–`"4."` looks at the letter as written; `"what i'd do next"`
   has a straight apostrophe; the average is not rounded.
2. The gate is the code: `passes = average ≥ 4.5 and every element ≥ 3`.
3. The seed's prose asks more — per-element minimums (Surplus ≥ 4, Causal ≥ 4, Honesty ≥ 5,
   Actionable ≥ 5, Compression ≥ 3, Human ≥ 4, Precedent ≥ 3) and a rewrite below an average of
   5.0. `advice` reports each shortfall; it never changes `passes`.
"""

from __future__ import annotations

from typing import Any

SPECIFIC = ("line", "0x", "file", "byte", "offset", "register")
CHAIN = ("because", "which meant", "so i", "caused", "led to", "result")
HONESTY = ("uncertain", "not sure", "guess", "might", "possibly", "don't know")
SECTIONS = ("who i was", "where things stand", "uncertain")
LESSONS = ("lesson", "pattern", "this means", "the systemic issue", "root cause")
PROSE_MINIMUMS = {
    "surplus_insight": 4,
    "causal_chain": 4,
    "honesty": 5,
    "actionable_signal": 5,
    "compression": 3,
    "human_compat": 4,
    "precedent_value": 3,
}
PROSE_REWRITE_BELOW = 5.0


def _count(markers: tuple[str, ...], lower: str) -> int:
    return sum(1 for marker in markers if marker in lower)


def score_handoff(letter: str) -> dict[str, Any]:
    """Score a handoff letter: `{"scores", "average", "passes"}`, as the seed defines it."""
    lower = letter.lower()
    scores: dict[str, int] = {}
    scores["surplus_insight"] = min(10, _count(SPECIFIC, lower) * 2)
    scores["causal_chain"] = min(10, _count(CHAIN, lower) * 2)
    scores["honesty"] = min(10, _count(HONESTY, lower) * 2)
    has_next = "what i'd do next" in lower or "next steps" in lower
    has_numbered = any(f"{i}." in letter for i in range(1, 5))
    scores["actionable_signal"] = 8 if (has_next and has_numbered) else 3
    words = len(letter.split())
    if words < 200:
        scores["compression"] = 6
    elif words < 400:
        scores["compression"] = 8
    elif words < 600:
        scores["compression"] = 5
    else:
        scores["compression"] = 3
    scores["human_compat"] = min(10, _count(SECTIONS, lower) * 4)
    scores["precedent_value"] = min(10, _count(LESSONS, lower) * 3)
    average = sum(scores.values()) / len(scores)
    passes = average >= 4.5 and all(value >= 3 for value in scores.values())
    return {"scores": scores, "average": average, "passes": passes}


def advice(result: dict[str, Any]) -> list[str]:
    """Rule 3: where the score falls short of the seed's prose (advisory only)."""
    found = [
        f"{name} {value} is below the seed's prose minimum of {PROSE_MINIMUMS[name]}"
        for name, value in result["scores"].items()
        if value < PROSE_MINIMUMS[name]
    ]
    if result["average"] < PROSE_REWRITE_BELOW:
        average = f"{result['average']:.2f}"
        found.append(
            f"the average {average} is below {PROSE_REWRITE_BELOW}: the seed's prose asks for a rewrite"
        )
    return found


def report(letter: str) -> dict[str, Any]:
    """What `slopd baton score` prints and the keeper stores as SCORE.json."""
    result = score_handoff(letter)
    return {**result, "words": len(letter.split()), "advisory": advice(result)}
