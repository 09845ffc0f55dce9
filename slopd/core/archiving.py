"""What goes to `archive/` with an answered input, and how: the moves of `core.answers`. Pure.

Rules:
1. `done` is guarded by the inode that was read (`core.plans.Done`): the very file is moved.
2. An order's signatures go with it (to the copy beside the order's archived copy that one is
   already a link of, when that move was cut short), unless the file is another order's
   `NAME.md.sig` still in the lane (a forged order cannot take away another's signature). A
   duplicate under another name (a sync client's copy) takes only signatures named after
   itself: one named after its original is the original's, archived with it or finished by the
   scan — taking it too could archive it twice (after a move of it cut short by a kill).
   A signature that goes is forgotten by the gate (`Forget`): when it was seen alone before its
   order, that first sight must not make the next signature of the same name (the next order
   under the same file name) refused at once instead of waiting the grace.
3. A move a crash cut short is finished: to the target the ledger or the link says, or to a
   fresh name.
"""

from __future__ import annotations

from slopd.core.envelope import Envelope
from slopd.core.facts import Companion, Input
from slopd.core.names import order_of
from slopd.core.plans import Done, Duplicate, Effect, Forget, Move

Companions = tuple[Companion, ...]


def duplicate(input: Input, envelope: Envelope, sha256: str, companions: Companions) -> list[Effect]:
    return [
        Duplicate(envelope.id, input.lane, input.name, sha256),
        *sidecars(input, envelope, companions, duplicate=True),
    ]


def finish_move(
    input: Input, target: str | None, *, sidecar: bool, envelope: Envelope | None, companions: Companions
) -> list[Effect]:
    """Rule 3: a move into `archive/` that a crash cut short, finished (to `target`, or a fresh name)."""
    if sidecar:
        return [
            Move(
                input.lane,
                input.name,
                target,
                "sidecar.archived",
                (("sidecar", input.name), ("resumed", True)),
            )
        ]
    moved = Move(input.lane, input.name, target, "envelope.archived", (("resumed", True),))
    return [moved, *sidecars(input, envelope, companions)]


def done(input: Input, key: str, envelope: Envelope | None, companions: Companions) -> list[Effect]:
    """Rule 1, then rule 2."""
    return [Done(key, input.lane, input.name, input.inode), *sidecars(input, envelope, companions)]


def sidecars(
    input: Input, envelope: Envelope | None, companions: Companions, *, duplicate: bool = False
) -> list[Effect]:
    """Rule 2: the signatures the order names, or `NAME.sig` if it could not be read."""
    if input.lane != "authorized":
        return []
    found = {companion.name: companion for companion in companions}
    effects: list[Effect] = []
    for name in envelope.sidecars if envelope is not None else (f"{input.name}.sig",):
        companion = found.get(name, Companion(name, present=False))
        order = order_of(name)
        if order not in (None, input.name) and (duplicate or companion.order_present):
            continue  # it belongs to another order in the lane, or to the original of this copy
        if not companion.present:
            continue
        effects.append(Forget(name))
        if companion.linked is not None:  # a second link beside the order's archived copy: finish that move
            fields = (("sidecar", name), ("resumed", True))
            effects.append(Move(input.lane, name, companion.linked, "sidecar.archived", fields))
        else:
            effects.append(Move(input.lane, name, None, "sidecar.archived", (("sidecar", name),)))
    return effects
