"""slopd's Baton scores beside flux-baton's and lighthouse-keeper's, on the corpus letters (issue 25).

    .venv/bin/python bench/score_compare.py               # the table (docs/baton.md holds a copy)
    .venv/bin/python bench/score_compare.py --markdown    # the same as Markdown tables
    SLOPD_CORPUS=/path/to/corpus .venv/bin/python bench/score_compare.py

slopd scores a letter with the seed's `score_handoff`, exactly (SPEC §11). The two upstream
implementations each changed it: flux-baton's client (`flux_baton.score_handoff` at 505c515)
and lighthouse-keeper's `POST /baton/score` (keeper.py at cce681e). Their scores come from the
corpus's EXPECTED_SCORES.json (computed by running their code on each letter; see the corpus's
EXPECTED_SCORES.md); this script reads it and the letters in place, under
`$SLOPD_CORPUS/baton/` (default: `../shared/corpus/` beside the repository), and scores each
letter with slopd's `baton.score.score_handoff`. Nothing upstream is run or copied here.

Printed: per letter, its words, then each rubric's average and verdict (pass/FAIL) with the
difference from slopd's (theirs − slopd's); per element, the three scores side by side
(slopd/flux/keeper, only where they differ); then per element the mean difference and on how
many letters it differs. Reading only: no timing, nothing asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from slopd.baton.score import score_handoff  # noqa: E402

CORPUS = Path(os.environ.get("SLOPD_CORPUS", HERE.parents[1] / "shared" / "corpus")) / "baton"
ELEMENTS = (
    ("surplus_insight", "surplus"),
    ("causal_chain", "causal"),
    ("honesty", "honesty"),
    ("actionable_signal", "action"),
    ("compression", "compress"),
    ("human_compat", "human"),
    ("precedent_value", "precedent"),
)
RUBRICS = (("flux", "client_flux_baton_score_handoff"), ("keeper", "keeper_POST_baton_score"))


def short(path: str) -> str:
    """A letter's name without the corpus's provenance prefix."""
    name = path.rsplit("/", 1)[-1] if "letters/" in path else path.split("__", 1)[-1]
    name = name.removeprefix("superinstance-")
    for prefix in ("flux-baton__", "lighthouse-keeper__", "flux-baton-test__"):
        name = name.removeprefix(prefix)
    return name.replace("tests__", "").replace("__", " ").rsplit(".", 1)[0]


def rows(expected: list[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for item in expected:
        text = (CORPUS / item["file"]).read_text(encoding="utf-8")
        mine = score_handoff(text)
        row = {"letter": short(item["file"]), "file": item["file"], "words": len(text.split()), "slopd": mine}
        for name, key in RUBRICS:
            row[name] = item[key]
        found.append(row)
    return found


def verdict(result: dict[str, Any]) -> str:
    return "pass" if result["passes"] else "FAIL"


def table(headers: list[str], body: list[list[str]], markdown: bool) -> str:
    if markdown:
        lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
        return "\n".join([*lines, *("| " + " | ".join(row) + " |" for row in body)])
    widths = [max(len(row[column]) for row in [headers, *body]) for column in range(len(headers))]

    def render(row: list[str]) -> str:
        cells = zip(row[1:], widths[1:], strict=True)
        return "  ".join([row[0].ljust(widths[0]), *(cell.rjust(width) for cell, width in cells)])

    return "\n".join([render(headers), "  ".join("-" * width for width in widths), *map(render, body)])


def averages(found: list[dict[str, Any]], markdown: bool) -> str:
    headers = ["letter", "words", "slopd", "flux", "Δ flux", "keeper", "Δ keeper"]
    body = []
    for row in found:
        mine = row["slopd"]
        line = [row["letter"], str(row["words"]), f"{mine['average']:.2f} {verdict(mine)}"]
        for name, _key in RUBRICS:
            theirs = row[name]
            line += [
                f"{theirs['average']:.1f} {verdict(theirs)}",
                f"{theirs['average'] - mine['average']:+.2f}",
            ]
        body.append(line)
    return table(headers, body, markdown)


def elements(found: list[dict[str, Any]], markdown: bool) -> str:
    headers = ["letter", *(label for _name, label in ELEMENTS)]
    body = []
    for row in found:
        line = [row["letter"]]
        for name, _label in ELEMENTS:
            values = [row[rubric]["scores"][name] for rubric in ("slopd", "flux", "keeper")]
            line.append(str(values[0]) if len(set(values)) == 1 else "/".join(map(str, values)))
        body.append(line)
    return table(headers, body, markdown)


def summary(found: list[dict[str, Any]], markdown: bool) -> str:
    headers = ["element"]
    for rubric, _key in RUBRICS:
        headers += [f"mean Δ {rubric}", f"mean |Δ| {rubric}", f"differs ({rubric})"]
    body = []
    for name, label in [*ELEMENTS, ("average", "average")]:
        line = [label]
        for rubric, _key in RUBRICS:
            if name == "average":
                deltas = [row[rubric]["average"] - row["slopd"]["average"] for row in found]
            else:
                deltas = [row[rubric]["scores"][name] - row["slopd"]["scores"][name] for row in found]
            differ = sum(1 for delta in deltas if abs(delta) > 1e-9)
            line += [f"{statistics.mean(deltas):+.2f}", f"{statistics.mean(map(abs, deltas)):.2f}"]
            line.append(f"{differ}/{len(found)}")
        body.append(line)
    verdicts = [
        "gate",
        *(
            part
            for rubric, _key in RUBRICS
            for part in (
                "",
                "",
                f"{sum(1 for row in found if row[rubric]['passes'] != row['slopd']['passes'])}/{len(found)}",
            )
        ),
    ]
    return table(headers, [*body, verdicts], markdown)


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--markdown", action="store_true", help="Markdown tables (as in docs/baton.md)")
    parser.add_argument("--json", help="write the per-letter scores here")
    args = parser.parse_args()
    expected_path = CORPUS / "EXPECTED_SCORES.json"
    if not expected_path.is_file():
        print(
            f"bench/score_compare.py: no {expected_path}; set SLOPD_CORPUS to the folder that holds baton/",
            file=sys.stderr,
        )
        return 2
    found = rows(json.loads(expected_path.read_text(encoding="utf-8")))
    print(f"# {len(found)} letters from {CORPUS}; Δ = theirs − slopd's")
    print("# an element's cell is slopd/flux/keeper where they differ")
    print("\n## Averages and the gate (average ≥ 4.5 and every element ≥ 3)\n")
    print(averages(found, args.markdown))
    print("\n## Elements\n")
    print(elements(found, args.markdown))
    print("\n## Over all letters\n")
    print(summary(found, args.markdown))
    if args.json:
        Path(args.json).write_text(json.dumps(found, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
