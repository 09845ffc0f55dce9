"""The keeper's two operations over a vessel — pack a generation, boot from one — shared by the
CLI and (next) the HTTP keeper API. A thin shell over the pure modules.

Rules (SPEC §11):
1. `pack` scores the letter (`baton.score`, the one copy), refuses one that fails the gate
   unless accepted as LOW_QUALITY, and commits generation N+1 inside the lease store's
   transaction (`baton.store.Store.commit`): the lease is admitted, every file is written in
   the seed's order (`baton.generations.commit_files`), GENERATION last, then the lease is
   released. A refused pack writes nothing. A pack cut short leaves GENERATION and the lease
   as they were; the next pack with that lease rewrites the generation's files and replaces
   any evolution record the cut-short one appended (never two records for one generation).
2. `boot` reads only what `GENERATION` names (`baton.boot`), the letters and scores of uncommitted
   generations to check them (never presented), and, when AUTOBIOGRAPHY.md was not written for
   GENERATION, the committed generations' files to rebuild it (`baton.committed`).
3. After a commit, the generation is dropped into the hub's inbox as a `handoff` envelope from
   the vessel (`baton.projection`, through `slopd.submit`, the same strict drop as `slopd
   send`), with `project:` when IDENTITY.json names one, so the ordinary pipeline answers it
   and files it in that project's standup. A pack killed between its commit and this drop
   leaves the generation committed without its echo (nothing is redone for it).
4. With a `[baton.summarizer]` configured, its paragraphs are AUTOBIOGRAPHY.md (bounded like
   the deterministic one); a summarizer that fails, times out or writes nothing leaves the
   deterministic autobiography, never a missing or partial one.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any

from slopd import submit
from slopd.baton import boot as boots
from slopd.baton import committed, generations, projection
from slopd.baton.generations import Past
from slopd.baton.leases import Refused
from slopd.baton.score import report
from slopd.baton.store import Store
from slopd.baton.tree import BatonError, Tree
from slopd.core.envelope import EnvelopeError

Summarizer = Callable[[str, list[Past]], str | None]  # (vessel, generations) → paragraphs


@dataclass(frozen=True, slots=True)
class Gated:
    """The letter failed the gate and was not accepted as LOW_QUALITY: nothing written."""

    score: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Packed:
    generation: int
    score: dict[str, Any]
    low_quality: bool
    projected: str | None = None  # the id of the handoff envelope dropped into the inbox

    def as_json(self) -> dict[str, Any]:
        """What a pack answers: the score, the generation written, LOW_QUALITY, the projection."""
        return {
            **self.score,
            "generation": self.generation,
            "LOW_QUALITY": self.low_quality,
            "projected": self.projected,
        }


@dataclass(frozen=True, slots=True)
class Request:
    lease_id: str
    letter: str
    state: dict[str, Any]
    intentions: object | None = None
    context: object | None = None
    accept_low_quality: bool = False
    generation: int | None = None  # the generation the committer expects to write (the HTTP API's)


def pack(
    tree: Tree,
    store: Store,
    request: Request,
    *,
    now: str,
    after_write: Callable[[str], None] = lambda _: None,
    summarize: Summarizer | None = None,
    watcher: str = "watcher",
) -> Packed | Gated | Refused:
    """Rule 1 (`now`: the commit's ISO 8601 time; `after_write`: called with each path written;
    `summarize`: the configured summarizer, rule 4; `watcher`: whom the projection is `to`)."""
    score = report(request.letter)
    low = not score["passes"]
    if low and not request.accept_low_quality:
        return Gated(score)
    lease = store.get(tree.vessel)
    generation = request.generation or (lease.generation if lease is not None else tree.generation() + 1)

    pasts = [*_pasts(tree, generation), Past(generation, now, score["average"], low, request.letter)]
    # Before the store's transaction, so a slow summarizer never holds the lease table's lock;
    # and only for the lease on record, so a commit bound to be refused runs nothing.
    ours = lease is not None and lease.lease_id == request.lease_id and not lease.released
    written = summarize(tree.vessel, pasts) if summarize is not None and ours else None
    told = generations.summarized(tree.vessel, written, generation) if written else None

    def write() -> Packed:
        state = generations.state_record(
            request.state, generation=generation, committed_at=now, low_quality=low
        )
        previous = tree.read_json(f"generations/v{generation - 1}/STATE.json") if generation > 1 else None
        history = _before(tree.read_json("evolution/fitness_history.json"), generation)
        mutations = _before(tree.read_json("evolution/mutations.json"), generation)
        files = generations.commit_files(
            generation,
            state=state,
            letter=request.letter,
            score=score,
            intentions=request.intentions,
            context=request.context,
            autobiography=told or generations.autobiography(tree.vessel, pasts),
            fitness_history=[*history, generations.fitness(state, score, generation)],
            mutations=[
                *mutations,
                generations.mutation(previous if isinstance(previous, dict) else None, state, generation),
            ],
        )
        for path, data in files:
            tree.write(path, data)
            after_write(path)
        return Packed(generation, score, low)

    done = store.commit(tree.vessel, request.lease_id, generation, tree.generation, write)
    if not isinstance(done, Packed):
        return done
    return replace(done, projected=project(tree, generation, request.letter, now, watcher))


def project(tree: Tree, generation: int, letter: str, now: str, watcher: str = "watcher") -> str | None:
    """Rule 3: drop the generation into the inbox as a `handoff` (its id; None if it could not be)."""
    identity = tree.read_json("IDENTITY.json")
    named = identity.get("project") if isinstance(identity, dict) else None
    body = projection.entry(
        tree.vessel,
        generation,
        letter,
        date=now[:10],
        path=f"{tree.where}/generations/v{generation}/HANDOFF.md",
    )
    envelope = submit.compose(
        type="handoff",
        sender=tree.vessel,
        to=watcher,
        body=body,
        slug=f"baton {tree.vessel} v{generation}",
        project=named if isinstance(named, str) else None,
    )
    try:
        submit.submit(tree.hub, envelope)
    except (EnvelopeError, OSError):
        return None  # the generation is committed whatever happens to its echo
    return envelope.id


def _before(value: object, generation: int) -> list[Any]:
    """The records of earlier generations: a pack cut short may have appended this one already."""
    if not isinstance(value, list):
        return []
    return [
        item for item in value if not (isinstance(item, dict) and item.get("generation", 0) >= generation)
    ]


def _pasts(tree: Tree, below: int) -> list[Past]:
    found = []
    for number in tree.generations():
        if number >= below:
            continue
        letter = tree.read(f"generations/v{number}/HANDOFF.md")
        state = tree.read_json(f"generations/v{number}/STATE.json")
        score = tree.read_json(f"generations/v{number}/SCORE.json")
        if letter is None or not isinstance(state, dict) or not isinstance(score, dict):
            continue
        average = score.get("average")
        found.append(
            Past(
                number,
                str(state.get("committed_at", "")),
                float(average) if isinstance(average, int | float) else 0.0,
                bool(state.get("LOW_QUALITY")),
                letter.decode("utf-8", "replace"),
            )
        )
    return found


def boot(tree: Tree, budget: int | None) -> boots.Boot:
    """Rule 2."""
    marker = tree.generation()
    folders = tree.generations()
    above = [number for number in folders if number > marker]
    paths = [
        *boots.l0(marker),
        boots.score_path(marker),
        *boots.OPTIONAL,
        "CURRENT/HANDOFF.md",
        "CURRENT/STATE.json",
        *(path for number in above for path in (boots.letter_path(number), boots.score_path(number))),
    ]
    files = {path: tree.read(path) for path in paths}
    told = files["AUTOBIOGRAPHY.md"]
    rebuilt = None
    if told is not None and committed.through(told.decode("utf-8", "replace")) != marker:
        with suppress(BatonError):  # a garbled committed generation: nothing is presented instead
            rebuilt = generations.autobiography(tree.vessel, _pasts(tree, marker + 1), through=marker)
    return boots.plan(boots.Reading(marker, folders, files, rebuilt), budget)
