"""The daemon's anatomy (issue 28): the figures the issue quotes, measured on the tree imported.

    .venv/bin/python bench/anatomy.py            # this checkout
    PYTHONPATH=/tmp/old .venv/bin/python bench/anatomy.py   # another tree, the same harness

Static (the source of the `slopd` package imported, by its AST):
  parts        references to `parts` (a name or an attribute) per module
  foreign      assignments to a field of another object (`a.b = …`, `a.b.c = …` where `a` is not
               `self`/`cls`), in `slopd/daemon/` and `slopd/app.py`: who writes whose fields
  sql          string constants that begin with an SQL keyword, per module
  transports   transport modules importing `slopd.shell.*`, and `slopd.baton.*`
Dynamic (in this process, a real hub in a temp dir, the daemon's loop in a thread; the calls are
counted with `sys.setprofile`, nothing is replaced):
  plan         carrying out one plan (a `query` answered by the built-in summary): from the
               daemon's hand-over of the plan to the end of its batch's commit, the calls of
               slopd functions ("stops"), the modules they are in, and how many times control
               came back into the module that carries plans out from another slopd module
  parses       `core.validation.parse` calls per envelope: one POSTed to /v1/envelopes until its
               reply is in outbox/, one sent by an MCP seat in the daemon's process (`/mcp`),
               and one dropped into inbox/, each followed the same way
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import collections
import contextlib
import functools
import importlib
import logging
import re
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType, FrameType
from typing import Any

import slopd

ROOT = Path(slopd.__file__).resolve().parent
SQL = re.compile(  # tests/shell/test_ledger_owner.py's
    r"\s*(SELECT\s.+\sFROM\s|INSERT\s+INTO\s|UPDATE\s+\w+\s+SET\s|DELETE\s+FROM\s|CREATE\s+(TABLE|INDEX)|"
    r"ALTER\s+TABLE\s|PRAGMA\s|BEGIN(\s+IMMEDIATE)?\s*$|COMMIT\s*$|ROLLBACK\s*$)",
    re.DOTALL,
)
# The functions that carry a plan out, before and after issue 28 (whichever the tree has).
COUNTED = [0]  # parse calls since the last reset
CARRIERS = (("slopd.daemon.effects", "carry_out"), ("slopd.daemon.interpreter", "execute"))
COMMIT = ("slopd.daemon.batch", "commit")


def modules() -> Iterator[tuple[str, ast.Module]]:
    for path in sorted(ROOT.rglob("*.py")):
        name = "slopd." + ".".join(path.relative_to(ROOT).with_suffix("").parts)
        yield name.removesuffix(".__init__"), ast.parse(path.read_text(encoding="utf-8"))


def static() -> dict[str, Any]:
    parts: collections.Counter[str] = collections.Counter()
    foreign: list[str] = []
    sql: collections.Counter[str] = collections.Counter()
    shell_users, baton_users = set(), set()
    for name, tree in modules():
        for node in ast.walk(tree):
            daemon = name.startswith(("slopd.daemon", "slopd.app"))
            if daemon and (
                (isinstance(node, ast.Name) and node.id == "parts")
                or (isinstance(node, ast.Attribute) and node.attr == "parts")
            ):
                parts[name] += 1
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and SQL.match(node.value):
                sql[name] += 1
            if isinstance(node, ast.Import | ast.ImportFrom) and name.startswith("slopd.transport"):
                imported = (
                    [alias.name for alias in node.names]
                    if isinstance(node, ast.Import)
                    else [node.module or ""]
                )
                if any(module.startswith("slopd.shell") for module in imported):
                    shell_users.add(name)
                if any(module.startswith("slopd.baton") for module in imported):
                    baton_users.add(name)
            if daemon and isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                for target in targets:
                    for one in target.elts if isinstance(target, ast.Tuple) else [target]:
                        if isinstance(one, ast.Attribute) and not (
                            isinstance(one.value, ast.Name) and one.value.id in ("self", "cls")
                        ):
                            foreign.append(f"{name}:{node.lineno} {ast.unparse(one)}")
    return {
        "parts": parts,
        "foreign": foreign,
        "sql": sql,
        "shell_users": sorted(shell_users),
        "baton_users": sorted(baton_users),
    }


# -- dynamic -----------------------------------------------------------------------------------


def envelope(id: str, sender: str = "alice") -> bytes:
    return (
        f"---\nprotocol: slop.v1\nid: {id}\ntype: query\nfrom: {sender}\nto: watcher\n"
        "created_at: 2026-07-04T07:15:53Z\nauth: none\n---\nWhat is the state of the parser?\n"
    ).encode()


@contextlib.contextmanager
def hub(config: str = "") -> Iterator[tuple[Path, Path, Path]]:
    with tempfile.TemporaryDirectory(prefix="slopd-anatomy-") as base:
        root, state, conf = Path(base) / "hub", Path(base) / "state", Path(base) / "config.toml"
        for lane in ("inbox", "authorized", "outbox", "archive", "notes", "assets", "standups"):
            (root / lane).mkdir(parents=True)
        conf.write_text(f"settle = 0.05\n{config}", encoding="utf-8")
        yield root, state, conf


def code_of(module: str, name: str) -> list[CodeType]:
    try:
        found = importlib.import_module(module)
    except ImportError:
        return []
    codes = []
    for value in vars(found).values():
        for candidate in (value, *vars(value).values()) if isinstance(value, type) else (value,):
            code = getattr(candidate, "__code__", None)
            if code is not None and code.co_name == name and code.co_filename == found.__file__:
                codes.append(code)
    return codes


def gone(path: Path) -> bool:
    return not path.exists()


def until(condition: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the daemon did not answer in time")
        time.sleep(0.01)


def one_plan() -> dict[str, Any]:
    """Stops of one plan: the calls between the plan's hand-over and the end of its commit, and
    the walk of control across modules (a call into, or a return to, another module)."""
    from slopd import app  # noqa: PLC0415

    carriers = [code for module, name in CARRIERS for code in code_of(module, name)]
    commits = code_of(*COMMIT)
    carrier_files = {code.co_filename for code in carriers}
    calls: list[str] = []
    walk: list[str] = []
    depth = [0]

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        code = frame.f_code
        if event == "call" and (code in carriers or code in commits):
            depth[0] += 1
        elif event == "return" and (code in carriers or code in commits):
            depth[0] -= 1
            back = frame.f_back
            if depth[0] == 0 or back is None:
                return
            code = back.f_code  # control returns to the caller
        if depth[0] == 0 or event not in ("call", "return") or not code.co_filename.startswith(str(ROOT)):
            return
        if event == "return":
            back = frame.f_back
            if back is None or not back.f_code.co_filename.startswith(str(ROOT)):
                return
            code = back.f_code
        module = Path(code.co_filename).relative_to(ROOT).as_posix()
        if event == "call":
            calls.append(module)
        if not walk or walk[-1] != module:
            walk.append(module)

    with hub() as (root, state, conf):
        (root / "inbox" / "q.md").write_bytes(envelope("20260704t071553z-query-anatomy"))
        with app.start(root, config_path=conf, state=state, log_stream=None) as opened:
            daemon = opened.daemon()
            sys.setprofile(profile)
            try:
                daemon.run(stop=threading.Event(), once=True, grace=1.0)
            finally:
                sys.setprofile(None)
        assert (root / "outbox" / "20260704t071553z-query-anatomy.result.md").exists()
    carrier_modules = {Path(name).relative_to(ROOT).as_posix() for name in carrier_files}
    return {
        "calls": len(calls),
        "stops": len(walk),
        "modules": len(set(walk)),
        "reentries": max(sum(1 for module in walk if module in carrier_modules) - 1, 0),
        "by_module": collections.Counter(calls),
        "walk": walk,
    }


def parses() -> dict[str, int]:
    """`parse` calls per envelope, over HTTP and through the folder."""
    from slopd import app  # noqa: PLC0415
    from slopd.core import validation  # noqa: PLC0415
    from slopd.transport import tokens  # noqa: PLC0415

    target = validation.parse.__code__
    lock = threading.Lock()

    def profile(frame: FrameType, event: str, _arg: object) -> None:
        if event == "call" and frame.f_code is target:
            with lock:
                COUNTED[0] += 1

    found: dict[str, int] = {}
    with hub() as (root, state, conf):
        token = tokens.new_token(b"\x01" * 32)
        (conf.parent / "tokens").write_text(tokens.add("", "alice", token), encoding="utf-8")
        with conf.open("a", encoding="utf-8") as config:
            config.write(f'[http]\ntokens = "{conf.parent / "tokens"}"\nrate_limit = 1000000\n')
        threading.setprofile(profile)
        sys.setprofile(profile)
        try:
            with app.start(root, config_path=conf, state=state, log_stream=None) as opened:
                asyncio.run(served(opened, token, found))
        finally:
            sys.setprofile(None)
            threading.setprofile(None)
    return found


async def served(opened: Any, token: str, found: dict[str, int]) -> None:
    """One envelope POSTed, then one dropped, each followed until it is answered and archived."""
    import httpx2  # noqa: PLC0415

    from slopd.transport.server.app import build  # noqa: PLC0415

    try:
        from slopd.transport.assembly import make_service  # noqa: PLC0415
    except ImportError:  # a tree from before issue 28
        from slopd.transport.server.serve import make_service  # type: ignore[attr-defined,no-redef]  # noqa: PLC0415

    root, stop = opened.root, threading.Event()
    service = make_service(opened)
    service.doorbell.open()
    daemon = opened.daemon()
    thread = threading.Thread(target=lambda: daemon.run(stop=stop), daemon=True)
    thread.start()
    transport = httpx2.ASGITransport(app=build(service))
    try:
        async with httpx2.AsyncClient(transport=transport, base_url="http://slopd.test") as client:
            for path, id in (("http", "20260704t071553z-http-1"), ("folder", "20260704t071553z-file-1")):
                COUNTED[0] = 0
                if path == "http":
                    sent = await client.post(
                        "/v1/envelopes",
                        content=envelope(id),
                        headers={"Authorization": f"Bearer {token}", "Content-Type": "text/markdown"},
                    )
                    assert sent.status_code == 202, sent.text
                else:
                    (root / "inbox" / f"{id}.md").write_bytes(envelope(id))
                reply, dropped = root / "outbox" / f"{id}.result.md", root / "inbox" / f"{id}.md"
                await asyncio.to_thread(until, reply.exists)
                await asyncio.to_thread(until, functools.partial(gone, dropped))
                found[path] = COUNTED[0]
        found["mcp"] = await asyncio.to_thread(seat_send, opened)
    finally:
        stop.set()
        daemon.wakeup.set()
        thread.join(timeout=30)
        service.doorbell.close()
        service.receipts.close()


def seat_send(opened: Any) -> int:
    """The MCP seat's `slop_send` in the daemon's process (what `/mcp` runs), until answered."""
    from slopd.transport.mcp.seat import Seat  # noqa: PLC0415

    kwargs = {"arrived": opened.arrived}
    if hasattr(opened, "admit"):
        kwargs["admit"] = opened.admit
    seat = Seat(opened.hub, opened.state, "bob", opened.config, **kwargs)
    try:
        COUNTED[0] = 0
        sent = seat.send(type="query", to="watcher", body="What is left?\n")
        reply = opened.root / "outbox" / f"{sent['id'].lower()}.result.md"
        until(reply.exists)
        until(functools.partial(gone, opened.root / "inbox" / f"{sent['id']}.md"))
        return COUNTED[0]
    finally:
        seat.close()


def main() -> None:
    for noisy in ("httpx", "httpx2"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--list", action="store_true", help="list every foreign write and SQL module")
    args = parser.parse_args()
    print(f"slopd from {ROOT}")
    found = static()
    parts = found["parts"]
    print(f"parts: {sum(parts.values())} references in {len(parts)} modules: {dict(parts.most_common())}")
    print(f"foreign writes (daemon, app): {len(found['foreign'])}")
    if args.list:
        for write in found["foreign"]:
            print(f"  {write}")
    sql = found["sql"]
    print(f"SQL strings: {sum(sql.values())} in {len(sql)} modules: {dict(sql.most_common())}")
    print(
        f"transport modules importing shell: {len(found['shell_users'])}, baton: {len(found['baton_users'])}"
    )
    plan = one_plan()
    print(
        f"one plan (a query, the built-in summary): {plan['stops']} stops in {plan['modules']} modules "
        f"(control crossing a module boundary), {plan['reentries']} re-entries into the carrier; "
        f"{plan['calls']} calls of slopd functions"
    )
    if args.list:
        print("  walk: " + " > ".join(plan["walk"]))
        for module, count in plan["by_module"].most_common():
            print(f"  {count:4d} {module}")
    counted = parses()
    print(
        f"parses per envelope: HTTP {counted['http']}, MCP seat {counted['mcp']}, folder {counted['folder']}"
    )


if __name__ == "__main__":
    main()
