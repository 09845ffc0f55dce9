"""`slopd baton …` (SPEC §11): `score` a letter, `init` a vessel, `lease` its next generation,
`pack` (commit) it, `boot` from the last one, print its `metrics`.

Exit status: score 0 when the letter passes the gate, 1 when it does not; init 1 when the
vessel exists; lease 1 while another lease is live (naming its holder and expiry); pack 1 when
the letter fails the gate or the lease is refused (nothing written); boot 1 when GENERATION's
state or letter is missing; 2 a file that cannot be read or a usage error.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from slopd.app import load_config
from slopd.baton import keeper, leases, summarizer
from slopd.baton.metrics import render as render_metrics
from slopd.baton.metrics import rows as metric_rows
from slopd.baton.registry import registry as registry_of
from slopd.baton.score import report
from slopd.baton.store import Store
from slopd.baton.tree import BatonError, Tree
from slopd.core.errors import UsageError
from slopd.core.ids import stamp_seconds, timestamp
from slopd.ops import running
from slopd.shell import faults, reads
from slopd.shell.lanes import Hub, require_hub

MAX_LETTER_BYTES = 1 << 20


def score(args: argparse.Namespace) -> int:
    data = sys.stdin.buffer.read() if args.file == "-" else _read(Path(args.file))
    try:
        letter = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise OSError(0, f"not UTF-8 ({error.reason} at byte {error.start})", args.file) from None
    result = report(letter)
    print(json.dumps(result, indent=2))
    return 0 if result["passes"] else 1


def _read(path: Path) -> bytes:
    contents = reads.read_once(path, MAX_LETTER_BYTES)
    if isinstance(contents, reads.Unreadable):
        raise OSError(0, f"the file {contents.reason}", str(path))
    return contents.data


def _tree(hub: Hub, vessel: str) -> Tree:
    try:
        return Tree(hub, vessel)
    except ValueError as error:
        raise UsageError(str(error)) from None


def init(args: argparse.Namespace) -> int:
    try:
        identity = json.loads(_read(Path(args.identity)).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"{args.identity}: not a JSON document: {error}") from None
    if not isinstance(identity, dict):
        raise UsageError(f"{args.identity}: IDENTITY.json must be a JSON object")
    hub = Hub(require_hub(args.hub))
    try:
        tree = _tree(hub, args.vessel)
        if tree.exists():
            print(
                f"slopd baton init: {args.hub}/{tree.where} exists already; nothing written", file=sys.stderr
            )
            return 1
        tree.init(identity)
    finally:
        hub.close()
    print(f"{args.hub}/{tree.where}: vessel {args.vessel} at generation 0")
    return 0


def lease(args: argparse.Namespace) -> int:
    root = require_hub(args.hub).absolute()
    try:
        ttl = leases.check_ttl(args.ttl)
    except ValueError as error:
        raise UsageError(str(error)) from None
    hub = Hub(root)
    try:
        tree = _tree(hub, args.vessel)
        store = Store(running.locate(root, args.state).state)
        taken = store.take(args.vessel, args.holder, ttl, tree.generation)
    except BatonError as error:
        raise UsageError(f"{error.filename}: {error.strerror}") from None
    finally:
        hub.close()
    if isinstance(taken, leases.Held):
        until = stamp_seconds(taken.expires)
        print(f"slopd baton lease: {args.vessel} is leased to {taken.holder} until {until}", file=sys.stderr)
        return 1
    print(
        json.dumps(
            {
                "lease_id": taken.lease_id,
                "expires": stamp_seconds(taken.expires),
                "generation": taken.generation,
            }
        )
    )
    return 0


def _json_file(name: str | None, what: str) -> object | None:
    if name is None:
        return None
    try:
        value: object = json.loads(_read(Path(name)).decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"{name}: the {what} is not a JSON document: {error}") from None
    return value


def pack(args: argparse.Namespace) -> int:
    root = require_hub(args.hub).absolute()
    letter = _read(Path(args.letter)).decode("utf-8", "replace")
    state = _json_file(args.state_file, "state")
    if not isinstance(state, dict):
        raise UsageError(f"{args.state_file}: the state must be a JSON object")
    request = keeper.Request(
        lease_id=args.lease,
        letter=letter,
        state=state,
        intentions=_json_file(args.intentions, "intentions"),
        context=_json_file(args.context, "context"),
        accept_low_quality=args.accept_low_quality,
    )
    config = load_config(root, Path(args.config) if args.config else None)
    summarize = summarizer.configured(config)
    hub = Hub(root)
    try:
        tree = _tree(hub, args.vessel)
        now = timestamp(datetime.now(UTC))
        store = Store(running.locate(root, args.state).state)
        done = keeper.pack(
            tree,
            store,
            request,
            now=now,
            after_write=lambda _path: faults.passed("baton.written"),
            summarize=summarize,
            watcher=config.watcher,
        )
    except BatonError as error:
        raise UsageError(f"{error.filename}: {error.strerror}") from None
    finally:
        hub.close()
    if isinstance(done, keeper.Gated):
        print(json.dumps(done.score, indent=2))
        hint = "--accept-low-quality commits it marked LOW_QUALITY"
        print(f"slopd baton pack: the letter fails the gate; nothing written ({hint})", file=sys.stderr)
        return 1
    if isinstance(done, leases.Refused):
        print(f"slopd baton pack: refused, nothing written: {done.reason}", file=sys.stderr)
        return 1
    print(json.dumps(done.as_json(), indent=2))
    return 0


def boot(args: argparse.Namespace) -> int:
    root = require_hub(args.hub).absolute()
    hub = Hub(root)
    try:
        tree = _tree(hub, args.vessel)
        booted = keeper.boot(tree, args.budget)
        if booted.bootable:  # a refused boot (exit 1) is no BATON_RECEIVED
            Store(running.locate(root, args.state).state).record_boot(
                args.vessel, booted.generation, bootable=True
            )
    except BatonError as error:
        raise UsageError(f"{error.filename}: {error.strerror}") from None
    finally:
        hub.close()
    for warning in booted.warnings:
        print(f"slopd baton boot: warning: {warning}", file=sys.stderr)
    for left in booted.left_out:
        print(f"slopd baton boot: left out: {left}", file=sys.stderr)
    if args.json:
        print(json.dumps(booted.as_json(), indent=2))
    else:
        print(f"# {args.vessel}: generation {booted.generation} ({booted.tokens} tokens)")
        for path, text in booted.loaded.items():
            print(f"\n## {path}\n\n{text.rstrip()}")
        if booted.skipped:
            print(f"\n(over the budget, not loaded: {', '.join(booted.skipped)})")
        for left in booted.left_out:
            print(f"\n(left out: {left})")
    return 0 if booted.bootable else 1


def registry(args: argparse.Namespace) -> int:
    root = require_hub(args.hub).absolute()
    hub = Hub(root)
    try:
        entries = registry_of(hub, Store(running.locate(root, args.state).state), now=time.time())
    finally:
        hub.close()
    if args.json:
        print(json.dumps({"vessels": entries}, indent=2))
        return 0
    for found in entries:
        lease = found["lease"]
        leased = f"leased to {lease['holder']} until {lease['expires']}" if lease else "no live lease"
        booted = found["last_boot"]
        last = f"last booted {booted['at']} (v{booted['generation']})" if booted else "never booted"
        score = found["last_score"]
        scored = f"score {score['average']}" if score else "no score"
        generation = found["generation"] if found["generation"] is not None else found.get("error")
        print(f"{found['vessel']}: generation {generation}; {leased}; {last}; {scored}")
    return 0


def metrics(args: argparse.Namespace) -> int:
    hub = Hub(require_hub(args.hub))
    try:
        tree = _tree(hub, args.vessel)
        marker = tree.generation()
        table = metric_rows(tree.read_json("evolution/fitness_history.json"), marker)
    except BatonError as error:
        raise UsageError(f"{error.filename}: {error.strerror}") from None
    finally:
        hub.close()
    if args.plot:
        from slopd.baton import plot  # noqa: PLC0415  # matplotlib is loaded only for a plot

        plot.draw(args.vessel, table, Path(args.plot))
    if args.json:
        print(json.dumps({"generation_count": marker, "generations": table}, indent=2))
    else:
        print(render_metrics(table, marker), end="")
    return 0
