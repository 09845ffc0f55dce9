"""Many machines, one hub (SPEC §7): several `slopd run` daemons watching one hub folder.

Each "machine" is a real `slopd run` with a state dir and a config of its own (its own
`watcher:NAME`), all on one hub whose home watcher `slopd init --home watcher:alpha` recorded.
Their executor appends `$SLOP_ID` and the machine's name to one journal outside the hub, so a
test counts the executions of each id and sees where each ran. Only the home watcher answers
what is addressed to `watcher`, invalid files and lone signatures; every other watcher leaves
those untouched and answers only its own name and its seats.

The replica tests give each machine its own copy of the hub, kept in step by the test as a sync
client would (an input delivered to both, presence files copied): there, neither watcher sees
the other's replies in time, so only the routing rules keep an id from running twice.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import json
import os
import signal
import socket
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import HubDir, RunningDaemon, envelope_text, front_matter, hub_env, toml_argv
from tests.polling import until

pytestmark = pytest.mark.slow  # real daemons on sockets or several watchers: the slow set

PREFIX = "20260801t120000z"

# The executor (argv: MACHINE JOURNAL DELAY [RELEASE]): reads its body, waits for RELEASE when
# one is given (so a test can keep an instigate in flight, its file still in inbox/), sleeps
# DELAY seconds, then journals "ID MACHINE".
EXECUTOR = r"""
cat > /dev/null
if [ -n "$4" ]; then
    i=0
    while [ ! -e "$4" ] && [ "$i" -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
fi
sleep "$3"
printf '%s %s\n' "$SLOP_ID" "$1" >> "$2"
echo "ran $SLOP_ID on $1"
"""


@dataclass
class Machine:
    """One simulated machine: `watcher:NAME`, its state dir and config, on the shared hub."""

    name: str
    hub: HubDir  # shares the hub's root; state and config are this machine's own

    @property
    def watcher(self) -> str:
        return f"watcher:{self.name}"

    def start(self) -> RunningDaemon:
        return RunningDaemon(self.hub)

    def events(self, name: str, **match: Any) -> list[dict[str, Any]]:
        return self.hub.events(name, **match)

    def ledger_ids(self) -> list[str | None]:
        """The ids of every input row in this machine's ledger (None: an input with no valid id)."""
        path = self.hub.state / "ledger.sqlite3"
        with contextlib.closing(sqlite3.connect(path)) as db:
            return [row[0] for row in db.execute("SELECT id FROM inputs")]

    def reload(self, daemon: RunningDaemon, then: str) -> None:
        """SIGHUP its daemon, and wait until it logs `then` once more."""
        seen = len(self.events(then))
        daemon.send_signal(signal.SIGHUP)
        daemon.until(lambda: len(self.events(then)) > seen)

    def presence(self) -> Path:
        return self.hub.root / ".slopd" / "watchers" / f"{self.name}.json"


class Cluster:
    """The shared hub, its journal, and the machines made on it."""

    def __init__(self, tmp: Path, root: Path, env: dict[str, str]) -> None:
        self.tmp, self.root, self.env = tmp, root, env
        self.journal = tmp / "journal"
        self.script = tmp / "executor.sh"
        self.script.write_text(EXECUTOR)
        self.machines: dict[str, Machine] = {}

    @property
    def hub(self) -> HubDir:
        """The hub seen from no machine in particular (its lanes, outbox, archive)."""
        return HubDir(
            root=self.root, state=self.tmp / "no-state", config=self.tmp / "no-config", env=self.env
        )

    def machine(
        self,
        name: str,
        *,
        home: bool | None = None,
        release: Path | None = None,
        delay: float = 0.0,
        extra: str = "",
        settle: float = 0.05,
        root: Path | None = None,
    ) -> Machine:
        """A machine `watcher:NAME` with an executor journaling to the shared journal (on the
        shared hub, or on `root`: a replica of it)."""
        made = Machine(
            name,
            HubDir(
                root=root or self.root,
                state=self.tmp / f"state-{name}",
                config=self.tmp / f"config-{name}.toml",
                env=self.env,
            ),
        )
        self.write_config(made, home=home, release=release, delay=delay, extra=extra, settle=settle)
        self.machines[name] = made
        return made

    def executor_argv(self, machine: str, *, delay: float = 0.0, release: Path | None = None) -> str:
        argv: list[str | os.PathLike[str]] = ["/bin/sh", self.script, machine, self.journal, f"{delay:g}"]
        argv += [release] if release else []
        return toml_argv(argv)

    def write_config(
        self,
        machine: Machine,
        *,
        home: bool | None = None,
        release: Path | None = None,
        delay: float = 0.0,
        extra: str = "",
        settle: float = 0.05,
    ) -> None:
        machine.hub.write_config(
            f'names = ["watcher", "{machine.watcher}"]\n'
            + (f"home = {str(home).lower()}\n" if home is not None else "")
            + f"settle = {settle}\n"
            "rescan_interval = 1\n"
            "[executor]\n"
            f"command = {self.executor_argv(machine.name, delay=delay, release=release)}\n"
            "timeout = 60\n"
            "[auth]\n"
            "sig_grace = 0.5\n" + extra
        )

    def init(self, root: Path, *init: str) -> None:
        result = self.hub.slopd("init", *init, str(root))
        assert result.returncode == 0, result.stderr

    def executions(self) -> list[tuple[str, str]]:
        """(id, machine) for every execution journaled so far."""
        if not self.journal.exists():
            return []
        return [(line.split()[0], line.split()[1]) for line in self.journal.read_text().splitlines()]

    def ran_on(self) -> dict[str, list[str]]:
        """Each executed id: the machines it ran on, once per execution."""
        found: dict[str, list[str]] = {}
        for ident, machine in self.executions():
            found.setdefault(ident, []).append(machine)
        return found

    def drop_instigate(self, ident: str, to: str = "watcher") -> Path:
        return self.hub.drop(
            f"{ident}.md", envelope_text(f"Do {ident}.\n", id=ident, type="instigate", to=to)
        )

    def replies(self, ident: str) -> list[dict[str, Any]]:
        return self.hub.replies_to(ident)

    def answered(self, ident: str) -> bool:
        """Its terminal reply is in outbox/ and its file has left inbox/."""
        done = (self.root / "outbox" / f"{ident}.result.md").exists()
        return done and not (self.root / "inbox" / f"{ident}.md").exists()


def make_cluster(tmp: Path, *init: str) -> Cluster:
    """A hub made by `slopd init INIT… HUB` in `tmp`, with XDG dirs of its own."""
    made = Cluster(tmp, tmp / "hub", hub_env(tmp))
    made.init(made.root, *init)
    return made


@pytest.fixture(name="cluster")
def fixture_cluster(tmp_path: Path) -> Cluster:
    """A hub made by `slopd init --home watcher:alpha`: alpha is its home watcher."""
    made = make_cluster(tmp_path, "--home", "watcher:alpha")
    assert 'home = "watcher:alpha"' in (made.root / ".slopd" / "hub.toml").read_text()
    return made


@contextlib.contextmanager
def running(*machines: Machine, up_timeout: float = 20.0) -> Iterator[list[RunningDaemon]]:
    """Every machine's daemon started together, up for the block, then SIGTERMed: each must exit 0."""
    with contextlib.ExitStack() as stack:
        daemons = [stack.enter_context(machine.start()) for machine in machines]
        for daemon in daemons:
            daemon.up(timeout=up_timeout)
        yield daemons
        codes = {machine.name: daemon.stop() for machine, daemon in zip(machines, daemons, strict=True)}
        assert set(codes.values()) == {0}, codes


def all_of(daemons: list[RunningDaemon], condition: Callable[[], Any], timeout: float = 20.0) -> Any:
    """Wait for `condition`, failing at once if any daemon exits."""

    def check() -> Any:
        for daemon in daemons:
            daemon.check_alive()
        return condition()

    return until(check, timeout)


MARKERS = itertools.count()


def full_scans(machines: Sequence[Machine], daemons: Sequence[RunningDaemon], count: int = 1) -> None:
    """Wait until each daemon has made `count` more full scans of its hub: the positive signal
    behind "nothing was answered twice meanwhile". Only a full scan logs a file that is no
    envelope (`file.unrecognized`; the watcher's events for one are ignored), so a marker written
    now and logged by a daemon proves it scanned after now. Each marker is removed once seen."""
    for _ in range(count):
        marker = f"scan-marker-{next(MARKERS)}.txt"
        paths = {machine.hub.root / "inbox" / marker for machine in machines}
        for path in paths:
            path.write_text("not an envelope\n")
        for machine, daemon in zip(machines, daemons, strict=True):
            daemon.until(functools.partial(machine.events, "file.unrecognized", file=marker))
        for path in paths:
            path.unlink()


def reply_kinds(cluster: Cluster, ident: str) -> list[tuple[str, str]]:
    """(type, from) of every reply to `ident`, sorted."""
    return sorted((str(headers["type"]), str(headers["from"])) for headers in cluster.replies(ident))


# -- 1. the home answers `watcher`; the others leave it ------------------------------------


def test_only_the_home_watcher_runs_generic_instigates(cluster: Cluster) -> None:
    """Alpha (home) and beta (not home) on one hub: 10 instigates `to: watcher` run 10 times, all
    on alpha, each answered once and archived; beta says it is not home, sees each one and leaves
    it — no reply, no archive move, no ledger row."""
    release = cluster.tmp / "release"
    alpha = cluster.machine("alpha", release=release)
    beta = cluster.machine("beta")
    ids = [f"{PREFIX}-gen-{n:02d}" for n in range(10)]
    with running(beta, alpha) as daemons:
        assert beta.events("hub.not_home"), "beta did not say it is not home"
        assert not alpha.events("hub.not_home")
        for ident in ids:
            cluster.drop_instigate(ident)
        # Alpha's executor waits for `release`, so every file stays in inbox/ until beta has
        # looked at it: beta sees each instigate and leaves it.
        all_of(daemons, lambda: {r.get("id") for r in beta.events("envelope.left")} >= set(ids))
        assert cluster.executions() == []
        release.touch()
        all_of(daemons, lambda: all(cluster.answered(ident) for ident in ids))

    assert Counter(cluster.executions()) == Counter({(ident, "alpha"): 1 for ident in ids})
    for ident in ids:
        assert reply_kinds(cluster, ident) == [("ack", "watcher:alpha"), ("result", "watcher:alpha")]
    assert cluster.hub.lane("inbox") == []
    assert cluster.hub.archived() == sorted(f"{ident}.md" for ident in ids)
    assert Counter(alpha.ledger_ids()) == Counter(ids)
    # Beta: not home, and it touched nothing.
    assert beta.events("hub.home", acts_as_home=False, home="watcher:alpha")
    assert beta.ledger_ids() == []
    assert beta.events("reply.written") == []
    assert beta.events("envelope.archived") == []
    assert beta.events("execution.started") == []


# -- 2. a non-home watcher serves its own name ----------------------------------------------


def test_a_non_home_watcher_runs_what_is_addressed_to_it(cluster: Cluster) -> None:
    """Instigates `to: watcher:beta` run on beta only (answered from watcher:beta); alpha, the home,
    leaves each one (`envelope.left`) and records nothing of them."""
    release = cluster.tmp / "release"
    alpha = cluster.machine("alpha")
    beta = cluster.machine("beta", release=release)
    ids = [f"{PREFIX}-beta-{n:02d}" for n in range(4)]
    with running(alpha, beta) as daemons:
        for ident in ids:
            cluster.drop_instigate(ident, to="watcher:beta")
        all_of(daemons, lambda: {r.get("id") for r in alpha.events("envelope.left")} >= set(ids))
        release.touch()
        all_of(daemons, lambda: all(cluster.answered(ident) for ident in ids))

    assert Counter(cluster.executions()) == Counter({(ident, "beta"): 1 for ident in ids})
    for ident in ids:
        assert reply_kinds(cluster, ident) == [("ack", "watcher:beta"), ("result", "watcher:beta")]
        (left,) = alpha.events("envelope.left", id=ident)
        assert "watcher:beta" in left["reason"]
    assert Counter(beta.ledger_ids()) == Counter(ids)
    assert alpha.ledger_ids() == []
    assert alpha.events("reply.written") == []
    assert cluster.hub.archived() == sorted(f"{ident}.md" for ident in ids)


# -- 3. three machines ----------------------------------------------------------------------


def test_three_watchers_each_id_runs_once_on_the_right_machine(cluster: Cluster) -> None:
    """Alpha home, beta and gamma not: generic instigates run once each, on alpha; those named
    `watcher:beta` or `watcher:gamma` run once each, on the machine named."""
    machines = [cluster.machine(name) for name in ("alpha", "beta", "gamma")]
    where = {f"{PREFIX}-gen-{n:02d}": "alpha" for n in range(6)}
    where |= {f"{PREFIX}-to-{name}-{n}": name for name in ("beta", "gamma") for n in range(3)}
    with running(*machines) as daemons:
        for ident, name in where.items():
            cluster.drop_instigate(ident, to="watcher" if name == "alpha" else f"watcher:{name}")
        all_of(daemons, lambda: all(cluster.answered(ident) for ident in where))

    assert cluster.ran_on() == {ident: [name] for ident, name in where.items()}
    for ident, name in where.items():
        assert reply_kinds(cluster, ident) == [("ack", f"watcher:{name}"), ("result", f"watcher:{name}")]
    for machine in machines:
        assert Counter(machine.ledger_ids()) == Counter(
            i for i, name in where.items() if name == machine.name
        )
        assert bool(machine.events("hub.not_home")) == (machine.name != "alpha")
    assert cluster.hub.lane("inbox") == []


# -- 4. what only the home answers ----------------------------------------------------------


def test_what_only_the_home_answers_is_left_by_the_others(cluster: Cluster) -> None:
    """Beta alone leaves untouched, well past a signature's grace and a rescan: an invalid
    envelope, a file that is no envelope, a lone `.sig` in authorized/, a handoff `to: human`, one
    to an unknown recipient and a reply. Once alpha, the home, runs, each gets exactly its answer
    from alpha (one error for each of the first three and the unknown recipient, a result for the
    human, nothing for the reply, which is recorded) and beta never answers or records any."""
    alpha = cluster.machine("alpha")
    beta = cluster.machine("beta")
    hub = cluster.hub
    bad = envelope_text(id=f"{PREFIX}-bad", protocol="slop.v9", type="shout")
    to_human, to_nobody, reply = f"{PREFIX}-human", f"{PREFIX}-nobody", f"{PREFIX}-reply"
    invalid = {
        "inbox/bad.md": hub.drop("bad.md", bad),
        "inbox/junk.md": hub.drop("junk.md", "no front matter at all\n"),
        "authorized/lone.md.sig": hub.drop(
            "lone.md.sig", "-----BEGIN SSH SIGNATURE-----\n", lane="authorized"
        ),
    }
    valid = {
        to_human: hub.drop(f"{to_human}.md", envelope_text(id=to_human, type="handoff", to="human")),
        to_nobody: hub.drop(f"{to_nobody}.md", envelope_text(id=to_nobody, type="handoff", to="nobody")),
        reply: hub.drop(
            f"{reply}.md", envelope_text(id=reply, type="result", in_reply_to=f"{PREFIX}-asked-earlier")
        ),
    }
    dropped = {**invalid, **{f"inbox/{path.name}": path for path in valid.values()}}
    before = {name: path.read_bytes() for name, path in dropped.items()}
    with running(beta) as (beta_daemon,):
        beta_daemon.until(lambda: {r.get("id") for r in beta.events("envelope.left")} >= set(valid))
        full_scans([beta], [beta_daemon], count=2)  # 1 s apart: the signature's grace (0.5 s) is past
        beta_daemon.check_alive()
        assert hub.outbox() == {}
        assert {name: path.read_bytes() for name, path in dropped.items()} == before
    with running(alpha, beta) as daemons:
        all_of(daemons, lambda: hub.lane("inbox") == [] and hub.lane("authorized") == [])
        full_scans([alpha, beta], daemons)  # a rescan more: nothing answered twice

    refusals = [front_matter(text) for text in hub.outbox().values() if "file" in front_matter(text)]
    assert sorted(str(h["file"]) for h in refusals) == sorted(invalid)
    assert {(h["type"], h["from"]) for h in refusals} == {("error", "watcher:alpha")}
    assert reply_kinds(cluster, to_human) == [("result", "watcher:alpha")]
    assert reply_kinds(cluster, to_nobody) == [("error", "watcher:alpha")]
    assert reply_kinds(cluster, reply) == []
    assert len(hub.outbox()) == len(invalid) + 2
    # One row per input: an invalid one under its id when it has a valid one, else under none.
    assert Counter(alpha.ledger_ids()) == Counter([*valid, f"{PREFIX}-bad", None, None])
    assert hub.archived() == sorted(["bad.md", "junk.md", "lone.md.sig", *(f"{i}.md" for i in valid)])
    assert beta.events("reply.written") == []
    assert beta.events("envelope.invalid") == []
    assert beta.events("envelope.archived") == []
    assert beta.ledger_ids() == []


# -- 5. status, two homes, doctor ----------------------------------------------------------


def status_watchers(cluster: Cluster, machine: Machine) -> dict[str, Any]:
    result = machine.hub.slopd(
        "status", "--hub", str(cluster.root), "--state", str(machine.hub.state), "--json"
    )
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)["hub_watchers"]
    return report


def doctor_home(cluster: Cluster, machine: Machine) -> tuple[int, list[str]]:
    """`slopd doctor`'s exit status and its lines about topic `home`, for this machine's config
    and state."""
    result = machine.hub.slopd(
        "doctor",
        "--hub",
        str(cluster.root),
        "--config",
        str(machine.hub.config),
        "--state",
        str(machine.hub.state),
    )
    assert result.returncode in (0, 1), result.stderr
    lines = result.stdout.splitlines()
    return result.returncode, [line for line in lines if line.split(None, 1)[-1].startswith("home:")]


def test_status_lists_the_watchers_and_two_homes_are_an_error(cluster: Cluster) -> None:
    """`slopd status --json` lists both watchers with the right home flag and no error; doctor
    says beta is not home. After beta's config says `home = true` and it reloads, both act as home:
    beta logs `hub.two_homes` (and notifies), status reports both, doctor reports a problem."""
    alpha = cluster.machine("alpha")
    beta = cluster.machine("beta")
    with running(alpha, beta) as (_alpha_daemon, beta_daemon):
        all_of([beta_daemon], lambda: alpha.presence().exists() and beta.presence().exists())
        report = status_watchers(cluster, alpha)
        assert report["home"] == "watcher:alpha"
        assert report["two_homes"] == []
        listed = {w["name"]: (w["home"], w["stale"], w["names"], w["host"]) for w in report["watchers"]}
        here = socket.gethostname()
        assert listed == {
            "watcher:alpha": (True, False, ["watcher", "watcher:alpha"], here),
            "watcher:beta": (False, False, ["watcher", "watcher:beta"], here),
        }
        assert all(w["last_seen"] for w in report["watchers"])
        text = alpha.hub.slopd("status", "--hub", str(cluster.root), "--state", str(alpha.hub.state))
        beta_line = [line for line in text.stdout.splitlines() if "watcher watcher:beta" in line]
        assert beta_line, text.stdout
        assert "not home" in beta_line[0], text.stdout
        _code, lines = doctor_home(cluster, alpha)
        assert [line for line in lines if line.startswith("ok")], lines
        assert not [line for line in lines if line.startswith("problem")], lines
        _code, lines = doctor_home(cluster, beta)
        assert [line for line in lines if line.startswith("warn")], lines
        assert not [line for line in lines if line.startswith("problem")], lines

        cluster.write_config(beta, home=True)
        beta_daemon.send_signal(signal.SIGHUP)
        (error,) = beta_daemon.until(lambda: beta.events("hub.two_homes"))
        assert error["level"] == "error"
        assert sorted(error["watchers"]) == ["watcher:alpha", "watcher:beta"]
        notified = [r["text"] for r in beta.events("notify") if "two watchers act as home" in r["text"]]
        assert notified, beta.events("notify")
        assert sorted(status_watchers(cluster, alpha)["two_homes"]) == ["watcher:alpha", "watcher:beta"]
        code, lines = doctor_home(cluster, alpha)
        problems = [line for line in lines if line.startswith("problem")]
        assert code == 1
        assert len(problems) == 1, lines
        assert "two watchers act as home" in problems[0], problems


def test_one_watcher_name_home_on_two_hosts_is_reported_as_two_homes(cluster: Cluster) -> None:
    """A config copied to two machines keeps its `names`: both watchers are `watcher:alpha` and
    both home, and on a synced hub their presence files collide, the sync client keeping one as
    `alpha.json` and the other as a conflict copy. Both records are fresh, say home and come from
    two hosts: `slopd status` must report two homes (SPEC §7: two watchers that both believe they
    are home are detected). Today `core.home.newest` keeps only the newest record of each name, so
    the other host's is hidden and `two_homes` is empty — while each generic instigate runs on both
    machines (each takes the other's replies, `from: watcher:alpha`, for its own)."""
    fake_presence(cluster.root, "alpha", home=True, host="laptop.example")
    conflict = "alpha.sync-conflict-20261201-120000-ABCDEFG.json"
    fake_presence(cluster.root, "alpha", home=True, host="desktop.example", file=conflict)
    report = status_watchers(cluster, cluster.machine("alpha"))
    assert report["two_homes"], report


# -- 6. moving the home ----------------------------------------------------------------------


@pytest.mark.parametrize("first", ["old home", "new home"])
def test_moving_the_home_mid_run_answers_every_id_once(cluster: Cluster, first: str) -> None:
    """Instigates keep arriving while the home moves from alpha to beta (`slopd hub home`, then
    SIGHUP to both, the old home or the new one first): every id runs at most once and is
    answered exactly once (one ack, one result, from one watcher); those dropped after the move
    run on beta; those alpha had acked before it are left to alpha by beta, and alpha runs them.
    Reloaded first, the new home waits for the old one to step down, instigates still arriving."""
    # alpha runs one at a time, 0.3 s each: its queue (~6 s for the first 20) outlasts the move
    # even on a loaded machine, so some instigates it acked are still in flight when beta takes over.
    alpha = cluster.machine("alpha", delay=0.3)
    beta = cluster.machine("beta", delay=0.1)
    ids = [f"{PREFIX}-flow-{n:02d}" for n in range(30)]
    late = ids[20:]
    with running(alpha, beta) as daemons:
        alpha_daemon, beta_daemon = daemons
        moved = threading.Event()

        def feed() -> None:
            for number, ident in enumerate(ids):
                if number == len(ids) - len(late):
                    moved.wait(timeout=30)
                cluster.drop_instigate(ident)
                time.sleep(0.05)  # pacing the feed: instigates keep arriving while the home moves

        feeder = threading.Thread(target=feed)
        feeder.start()
        try:
            all_of(daemons, lambda: sum(cluster.answered(i) for i in ids) >= 5)
            result = cluster.hub.slopd("hub", "home", "--hub", str(cluster.root), "watcher:beta")
            assert result.returncode == 0, result.stderr
            if first == "new home":
                beta.reload(beta_daemon, then="hub.home")
                (waiting,) = beta.events("hub.home", home="watcher:beta")
                assert waiting["acts_as_home"] is False
                assert "watcher:alpha to step down" in waiting["reason"]
            alpha.reload(alpha_daemon, then="hub.home")
            assert alpha.events("hub.home")[-1]["acts_as_home"] is False
            if first == "old home":
                beta_daemon.send_signal(signal.SIGHUP)
            beta_daemon.until(lambda: beta.events("hub.home", acts_as_home=True, home="watcher:beta"))
            moved.set()
        finally:
            moved.set()
            feeder.join(timeout=30)
        all_of(daemons, lambda: all(cluster.answered(ident) for ident in ids), timeout=30)
        full_scans([alpha, beta], daemons)  # a rescan more: nothing answered twice

    ran = cluster.ran_on()
    left_to_alpha = {r["id"] for r in beta.events("envelope.left") if "already answered" in r["reason"]}
    print(
        f"\n[move, {first} first] ran on alpha {sum(m == ['alpha'] for m in ran.values())}, on beta "
        f"{sum(m == ['beta'] for m in ran.values())}; beta left {len(left_to_alpha)} acked by alpha"
    )
    assert {ident: len(machines) for ident, machines in ran.items() if len(machines) > 1} == {}
    assert set(ran) == set(ids)
    for ident in ids:
        kinds = reply_kinds(cluster, ident)
        assert [kind for kind, _sender in kinds] == ["ack", "result"], (ident, kinds)
        assert len({sender for _kind, sender in kinds}) == 1, (ident, kinds)
        assert kinds[0][1] == f"watcher:{ran[ident][0]}"
    assert all(ran[ident] == ["beta"] for ident in late), {i: ran[i] for i in late}
    assert any(machines == ["alpha"] for machines in ran.values())
    assert all(ran[ident] == ["alpha"] for ident in left_to_alpha)
    if first == "old home":
        # Rule 7 was exercised: instigates alpha had acked and queued before the move were left to
        # it by beta. (Reloaded first, beta waits while alpha's queue drains: maybe none are left.)
        assert left_to_alpha, "no instigate was in flight on alpha when the home moved"
    assert cluster.hub.lane("inbox") == []
    assert 'home = "watcher:beta"' in (cluster.root / ".slopd" / "hub.toml").read_text()


def fake_presence(
    root: Path, name: str, *, home: bool, host: str = "elsewhere.example", file: str | None = None
) -> None:
    """A fresh presence file of `watcher:NAME`, as another machine's slopd writes it (and a sync
    client brings it here, maybe as a conflict copy named `file`)."""
    record = {
        "name": f"watcher:{name}",
        "host": host,
        "pid": 4242,
        "version": "0.1.0",
        "names": ["watcher", f"watcher:{name}"],
        "home": home,
        "last_seen": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    folder = root / ".slopd" / "watchers"
    folder.mkdir(parents=True, exist_ok=True)
    temp = folder / f".{name}.json.tmp"
    temp.write_text(json.dumps(record))
    temp.rename(folder / (file or f"{name}.json"))


def test_an_input_dropped_during_a_handover_is_answered_by_the_new_home(cluster: Cluster) -> None:
    """The home moves to beta while alpha (on another machine: its presence file, written here)
    still says it is home, so beta, reloaded, waits for it to step down and leaves a generic
    instigate dropped meanwhile. Once alpha's presence says it stepped down, beta acts as home and
    answers that instigate (SPEC §7: a change of home takes effect), once. (Until 844b3df it
    stayed in inbox/ for good: the handover completed without a look at what beta had left.)"""
    beta = cluster.machine("beta")
    ident = f"{PREFIX}-handover"
    fake_presence(cluster.root, "alpha", home=True)
    with running(beta) as (beta_daemon,):
        assert cluster.hub.slopd("hub", "home", "--hub", str(cluster.root), "watcher:beta").returncode == 0
        beta.reload(beta_daemon, then="hub.home")
        assert "watcher:alpha to step down" in beta.events("hub.home")[-1]["reason"]
        cluster.drop_instigate(ident)
        beta_daemon.until(lambda: beta.events("envelope.left", id=ident))
        fake_presence(cluster.root, "alpha", home=False)  # alpha stepped down
        beta_daemon.until(lambda: beta.events("hub.home", acts_as_home=True, home="watcher:beta"))
        beta_daemon.until(lambda: cluster.answered(ident), timeout=10)
        full_scans([beta], [beta_daemon])  # a rescan more: nothing answered twice

    assert cluster.ran_on() == {ident: ["beta"]}
    assert reply_kinds(cluster, ident) == [("ack", "watcher:beta"), ("result", "watcher:beta")]


# -- 7. the home crashes ---------------------------------------------------------------------


def test_a_crashed_home_leaves_generic_inputs_until_it_restarts(cluster: Cluster) -> None:
    """After `kill -9` of alpha, the home, generic inputs stay untouched in inbox/ (beta sees and
    leaves them, and never answers); alpha restarted answers each one once."""
    alpha = cluster.machine("alpha")
    beta = cluster.machine("beta")
    ids = [f"{PREFIX}-orphan-{n}" for n in range(4)]
    with running(beta) as (beta_daemon,):
        with alpha.start() as crashed:
            crashed.up()
            until(alpha.presence().exists)
            crashed.kill9()
        for ident in ids:
            cluster.drop_instigate(ident)
        beta_daemon.until(lambda: {r.get("id") for r in beta.events("envelope.left")} >= set(ids))
        full_scans([beta], [beta_daemon])  # a rescan more
        beta_daemon.check_alive()
        assert cluster.hub.lane("inbox") == sorted(f"{ident}.md" for ident in ids)
        assert cluster.hub.outbox() == {}
        assert cluster.executions() == []
        with running(alpha) as (alpha_daemon,):
            alpha_daemon.until(lambda: all(cluster.answered(ident) for ident in ids))
            full_scans([beta, alpha], [beta_daemon, alpha_daemon])  # a rescan more: nothing answered twice

    assert Counter(cluster.executions()) == Counter({(ident, "alpha"): 1 for ident in ids})
    for ident in ids:
        assert reply_kinds(cluster, ident) == [("ack", "watcher:alpha"), ("result", "watcher:alpha")]
    assert beta.ledger_ids() == []
    assert beta.events("reply.written") == []


# -- claiming a hub with no home ---------------------------------------------------------------


def test_two_watchers_starting_on_a_hub_without_a_home_claim_it_once(tmp_path: Path) -> None:
    """On a hub made with `--no-home`, two daemons started together: exactly one claims the hub
    (`hub.home_claimed`, the hub file names it), the other says it is not home, and generic
    instigates run once each, on the claimer."""
    cluster = make_cluster(tmp_path, "--no-home")
    assert not (cluster.root / ".slopd" / "hub.toml").exists()
    alpha, beta = cluster.machine("alpha"), cluster.machine("beta")
    ids = [f"{PREFIX}-claimed-{n}" for n in range(3)]
    with running(alpha, beta) as daemons:
        claims = [(m.name, r["home"]) for m in (alpha, beta) for r in m.events("hub.home_claimed")]
        assert len(claims) == 1, claims
        (claimer, claimed), other = claims[0], beta if claims[0][0] == "alpha" else alpha
        assert claimed == f"watcher:{claimer}"
        assert f'home = "watcher:{claimer}"' in (cluster.root / ".slopd" / "hub.toml").read_text()
        assert other.events("hub.not_home")
        for ident in ids:
            cluster.drop_instigate(ident)
        all_of(daemons, lambda: all(cluster.answered(ident) for ident in ids))

    assert cluster.ran_on() == {ident: [claimer] for ident in ids}


# -- replicas: the hub as two machines see it through a sync client ----------------------------


def replicas(tmp: Path) -> tuple[Cluster, Path, Path]:
    """Two replicas of one hub whose home is watcher:alpha, kept in step by the test itself: an
    input is delivered to both, as a sync client delivers it, and nothing else is copied (a
    reply takes longer to come back than a decision takes)."""
    cluster = make_cluster(tmp, "--home", "watcher:alpha")
    replica_b = tmp / "replica-b"
    cluster.init(replica_b, "--home", "watcher:alpha")
    return cluster, cluster.root, replica_b


def deliver(replicas: tuple[Path, ...], ident: str, to: str) -> None:
    """The same instigate dropped into every replica's inbox/."""
    text = envelope_text(f"Do {ident}.\n", id=ident, type="instigate", to=to)
    for root in replicas:
        HubDir(root=root, state=root, config=root, env={}).drop(f"{ident}.md", text)


def copy_presences(daemons: list[RunningDaemon], *machines: Machine) -> None:
    """Copy every machine's presence file to every replica, as a sync client would."""
    for daemon, machine in zip(daemons, machines, strict=True):
        daemon.until(machine.presence().exists)
    for source in machines:
        for target in machines:
            copy = target.hub.root / ".slopd" / "watchers" / source.presence().name
            if copy != source.presence():
                temp = copy.with_name(f".{copy.name}.tmp")
                temp.write_bytes(source.presence().read_bytes())
                temp.rename(copy)


def share_presences(daemons: list[RunningDaemon], *machines: Machine) -> None:
    """Copy the presence files to every replica, then reload each daemon, so each knows the
    others before anything is delivered."""
    copy_presences(daemons, *machines)
    for daemon, machine in zip(daemons, machines, strict=True):
        machine.reload(daemon, then="config.reloaded")


def seat(name: str, cluster: Cluster, journaled_as: str) -> str:
    """A config's `[seats.NAME]` running the journaling executor as `journaled_as`."""
    return f"[seats.{name}]\ncommand = {cluster.executor_argv(journaled_as)}\n"


def settled_on(machine: Machine, ident: str) -> bool:
    """This machine has answered `ident` on its replica, or logged leaving it."""
    answered = any(
        (machine.hub.root / "outbox" / f"{ident}.{kind}.md").exists() for kind in ("result", "error")
    )
    gone = not (machine.hub.root / "inbox" / f"{ident}.md").exists()
    return (answered and gone) or bool(machine.events("envelope.left", id=ident))


def answers(machines: tuple[Machine, ...], ident: str) -> list[tuple[str, str]]:
    """(type, from) of every reply to `ident` on any replica, as they would be once synced."""
    found = {
        name: text
        for machine in machines
        for name, text in machine.hub.outbox().items()
        if front_matter(text).get("in_reply_to") == ident
    }
    return sorted((str(front_matter(t)["type"]), str(front_matter(t)["from"])) for t in found.values())


def test_on_two_replicas_each_watcher_answers_only_its_own(tmp_path: Path) -> None:
    """Alpha on replica A (home), beta on replica B, each instigate delivered to both: the generic
    ones run on alpha only and stay untouched in B's inbox/; those to watcher:beta run on beta
    only and stay untouched in A's inbox/ — whichever replica sees it first."""
    cluster, replica_a, replica_b = replicas(tmp_path)
    alpha = cluster.machine("alpha", root=replica_a)
    beta = cluster.machine("beta", root=replica_b)
    where = {f"{PREFIX}-gen-{n}": "alpha" for n in range(3)} | {
        f"{PREFIX}-to-beta-{n}": "beta" for n in range(2)
    }
    with running(alpha, beta) as daemons:
        for ident, name in where.items():
            deliver((replica_a, replica_b), ident, "watcher" if name == "alpha" else "watcher:beta")
        all_of(daemons, lambda: all(settled_on(m, i) for m in (alpha, beta) for i in where))

    assert cluster.ran_on() == {ident: [name] for ident, name in where.items()}
    for ident, name in where.items():
        assert answers((alpha, beta), ident) == [("ack", f"watcher:{name}"), ("result", f"watcher:{name}")]
        left_on = replica_b if name == "alpha" else replica_a
        assert (left_on / "inbox" / f"{ident}.md").exists()


def test_an_instigate_to_a_seat_of_a_non_home_watcher_is_answered_only_there(tmp_path: Path) -> None:
    """Beta (not home) has a seat `reviewer`, alpha (home) has none; an instigate `to: reviewer`
    delivered to both replicas runs once, on beta, and gets no other answer: alpha, knowing beta's
    seats from its presence file, leaves it. SPEC §7: the other watchers answer their own name
    *and their seats*. (Until 844b3df alpha answered it too, with an error "unknown recipient".)"""
    cluster, replica_a, replica_b = replicas(tmp_path)
    alpha = cluster.machine("alpha", root=replica_a)
    beta = cluster.machine("beta", root=replica_b, extra=seat("reviewer", cluster, "beta"))
    ident = f"{PREFIX}-review"
    with running(alpha, beta) as daemons:
        share_presences(daemons, alpha, beta)
        deliver((replica_a, replica_b), ident, "reviewer")
        all_of(daemons, lambda: settled_on(alpha, ident) and settled_on(beta, ident))

    assert cluster.ran_on() == {ident: ["beta"]}
    assert answers((alpha, beta), ident) == [("ack", "watcher:beta"), ("result", "watcher:beta")]
    (left,) = alpha.events("envelope.left", id=ident)
    assert "seat" in left["reason"], left


def ran_on_alpha_only(cluster: Cluster, alpha: Machine, beta: Machine, ident: str) -> None:
    """The seat's instigate ran once, on the home alpha, and beta left it as alpha's seat."""
    assert cluster.ran_on() == {ident: ["alpha"]}
    assert answers((alpha, beta), ident) == [("ack", "watcher:alpha"), ("result", "watcher:alpha")]
    left = beta.events("envelope.left", id=ident)
    assert left, "beta did not leave it"
    assert all("seat" in record["reason"] for record in left), left


def test_a_seat_configured_on_two_watchers_runs_each_instigate_once(tmp_path: Path) -> None:
    """Alpha (home) and beta both configure the seat `reviewer` (one config copied to both
    machines, as a laptop and a desktop often share one); an instigate `to: reviewer` delivered to
    both replicas runs once, on the home: beta, knowing from alpha's presence that the home has
    that seat, leaves it. (Until 844b3df both ran it: each looked in outbox/ for the other's ack,
    pipeline rule 7, before the other's ack had synced.)"""
    cluster, replica_a, replica_b = replicas(tmp_path)
    alpha = cluster.machine("alpha", root=replica_a, extra=seat("reviewer", cluster, "alpha"))
    beta = cluster.machine("beta", root=replica_b, extra=seat("reviewer", cluster, "beta"))
    ident = f"{PREFIX}-review"
    with running(alpha, beta) as daemons:
        share_presences(daemons, alpha, beta)
        deliver((replica_a, replica_b), ident, "reviewer")
        all_of(daemons, lambda: settled_on(alpha, ident) and settled_on(beta, ident))

    ran_on_alpha_only(cluster, alpha, beta, ident)


def test_a_seat_of_the_home_is_left_by_a_watcher_that_learns_of_it_after_starting(tmp_path: Path) -> None:
    """Alpha (home) and beta both have the seat `reviewer`. Beta starts before alpha's presence
    has reached its replica; the presence arrives (copied in, as a sync client does, no reload),
    then an instigate `to: reviewer`, delivered to both replicas. It runs once, on the home
    (core.home rule 5: a seat the home has is the home's): beta reads the presence files again
    before running a seat. (Until ff22c29 beta ran it too: it read them only at start, at a reload
    and every 60 s.)"""
    cluster, replica_a, replica_b = replicas(tmp_path)
    alpha = cluster.machine("alpha", root=replica_a, extra=seat("reviewer", cluster, "alpha"))
    beta = cluster.machine("beta", root=replica_b, extra=seat("reviewer", cluster, "beta"))
    ident = f"{PREFIX}-review"
    with running(alpha, beta) as daemons:
        copy_presences(daemons, alpha, beta)  # no reload: beta started without alpha's presence
        deliver((replica_a, replica_b), ident, "reviewer")
        all_of(daemons, lambda: settled_on(alpha, ident) and settled_on(beta, ident))

    ran_on_alpha_only(cluster, alpha, beta, ident)


def test_seats_on_one_hub_each_run_once_where_they_belong(cluster: Cluster) -> None:
    """On one shared hub, alpha (home) has the seat `builder`; beta has `builder` too and
    `reviewer`, which only it has. With alpha's presence there before beta starts, instigates to
    `builder` run once each, on alpha (a seat the home has is the home's), and those to `reviewer`
    once each, on beta (alpha leaves another watcher's seat instead of refusing it as unknown)."""
    alpha = cluster.machine("alpha", extra=seat("builder", cluster, "alpha"))
    beta = cluster.machine("beta", extra=seat("builder", cluster, "beta") + seat("reviewer", cluster, "beta"))
    where = {f"{PREFIX}-build-{n}": ("builder", "alpha") for n in range(3)}
    where |= {f"{PREFIX}-review-{n}": ("reviewer", "beta") for n in range(3)}
    with running(alpha) as (alpha_daemon,):
        alpha_daemon.until(alpha.presence().exists)
        with running(beta) as (beta_daemon,):
            for ident, (to, _machine) in where.items():
                cluster.drop_instigate(ident, to=to)
            all_of([alpha_daemon, beta_daemon], lambda: all(cluster.answered(i) for i in where))
            full_scans([alpha, beta], [alpha_daemon, beta_daemon])  # a rescan more: nothing answered twice

    assert cluster.ran_on() == {ident: [machine] for ident, (_to, machine) in where.items()}
    for ident, (_to, machine) in where.items():
        assert reply_kinds(cluster, ident) == [
            ("ack", f"watcher:{machine}"),
            ("result", f"watcher:{machine}"),
        ]
    assert cluster.hub.lane("inbox") == []
