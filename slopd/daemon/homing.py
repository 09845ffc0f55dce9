"""Which watcher of a shared hub is home, kept true while the daemon runs (SPEC §7, `core.home`).

Rules:
1. At start and at each reload the home is decided again (config first, then the hub file);
   an absent hub file is claimed for this watcher, loudly; a change is logged.
2. The decision is carried by this module's `policy` (`home`, the seats others answer, whether
   the hub is shared), which the handler reads (`core.handling`, given it by the loop): a watcher that is
   not home leaves everything it does not answer untouched.
3. Every `PRESENCE_EVERY` seconds this watcher's presence file is rewritten and the others'
   are read; two fresh watchers acting as home are an error: logged, kept as the last error
   (status, systemd) and notified to the human, once per pair of names.
4. A handover is safe in either order of reloads: a watcher the hub file makes home does not
   act as home while another watcher's fresh presence still says it is; it looks again every
   `HANDOVER_POLL` seconds (the old home steps down at its reload or stop, or its presence
   goes stale).
   Only the trusted config (`home = true`) skips the wait.
5. A hub file naming a home that never ran on the hub, while this watcher is not it (the
   single-machine trap, `core.home.unseen_home`), is a warning in the log, `hub.home_unseen`,
   with the command that fixes it: at start and reload, once per home named.
"""

from __future__ import annotations

import os
import socket
from dataclasses import replace

from slopd.core import home, notices
from slopd.core.home import Home, Presence
from slopd.core.ids import timestamp
from slopd.core.routing import Policy
from slopd.daemon.parts import Parts
from slopd.shell import hubfile
from slopd.shell.version import version

HANDOVER_POLL = 2.0


class Homing:
    def __init__(self, parts: Parts) -> None:
        self.parts = parts
        self.current: Home | None = None
        self.policy: Policy = parts.config.policy()
        self.next_presence = 0.0
        self.handing_over = False
        self._changed = False  # what this watcher answers changed: look at what it left again
        self._rivals: tuple[str, ...] = ()
        self._unseen: str | None = None

    def reconfigure(self, parts: Parts) -> None:
        """A reload's snapshot; the home is decided again by `resolve`, which the loop calls next."""
        self.parts = parts

    def take_changed(self) -> bool:
        """Whether what this watcher answers changed since the last call (inputs it left may be
        its own now, or no longer)."""
        changed, self._changed = self._changed, False
        return changed

    def resolve(self, others: list[Presence] | None = None) -> Home:
        """Rule 1, then rule 2 (`others`: the presence files, when just read)."""
        parts = self.parts
        config, root = parts.config, parts.hub.root
        own = home.specific_name(config.names)
        hub_home, problem = hubfile.read_home(root)
        if config.home is None and hub_home is None and problem is None:
            try:
                claimed = hubfile.claim(root, own)
            except OSError as error:  # a full disk, a read-only hub: act as home, claim next time
                parts.log.error("hub.home_unclaimed", home=own, reason=str(error))
                claimed = False
            if claimed:
                parts.log.warning(
                    "hub.home_claimed",
                    home=own,
                    path=f"{home.FOLDER}/{home.HUB_FILE}",
                    reason="the hub had no home watcher; this one is it now (move it: slopd hub home)",
                )
            hub_home, problem = hubfile.read_home(root)
        decided = home.decide(config.home, hub_home, config.names, problem)
        others = hubfile.presences(root) if others is None else others
        self.handing_over = False
        if decided.home and config.home is None:
            now = parts.clock.wall()
            old = [
                other.name for other in others if other.home and other.name != own and home.fresh(other, now)
            ]
            if old:  # rule 4: the home moved here; the old home has not stepped down yet
                decided = Home(False, own, f"the home moved here; waiting for {', '.join(old)} to step down")
                self.handing_over = True
        if decided != self.current:
            usual = decided.home and self.current is None  # the common start: not worth a warning
            log = parts.log.info if usual else parts.log.warning
            log(
                "hub.home",
                home=decided.name,
                this_watcher=own,
                acts_as_home=decided.home,
                reason=decided.reason,
            )
            if not decided.home:
                parts.log.warning(
                    "hub.not_home",
                    answering=sorted(set(config.names) - home.GENERIC | set(config.seats)),
                    leaving=sorted(home.GENERIC),
                )
        self._say_unseen(home.unseen_home(config.home, hub_home, config.names, others))
        if self.current is not None and decided.home != self.current.home:
            self._changed = True
        self.current = decided
        self._apply(others)
        self.next_presence = 0.0
        return decided

    def _say_unseen(self, unseen: str | None) -> None:
        """Rule 5, once per home it names."""
        if unseen is not None and unseen != self._unseen:
            parts = self.parts
            own = home.specific_name(parts.config.names)
            text, fix = home.unseen_text(unseen, own, str(parts.hub.root))
            parts.log.warning("hub.home_unseen", home=unseen, this_watcher=own, reason=text, fix=fix)
        self._unseen = unseen

    def _presence(self, *, stopped: bool = False) -> Presence:
        parts, config = self.parts, self.parts.config
        assert self.current is not None
        return Presence(
            name=home.specific_name(config.names),
            host=socket.gethostname(),
            pid=os.getpid(),
            version=version(),
            names=tuple(config.names),
            home=self.current.home and not stopped,
            last_seen=timestamp(parts.clock.wall()),
            seats=tuple(config.seats),
            stopped=stopped,
            state=str(parts.state_dir),
        )

    def stopped(self) -> None:
        """At shutdown: the presence says this watcher stopped, so a new home need not wait for
        it to go stale (rule 4)."""
        if self.current is None:
            return
        try:
            hubfile.write_presence(self.parts.hub.root, self._presence(stopped=True))
        except OSError as error:
            self.parts.log.error("presence.unwritable", reason=str(error))

    def refresh(self) -> None:
        """Read the presence files again now (before refusing a recipient as unknown)."""
        self._apply(hubfile.presences(self.parts.hub.root))

    def _apply(self, others: list[Presence]) -> None:
        """Rule 2, and rule 5 of `core.home`: which seats another watcher answers."""
        parts, current = self.parts, self.current
        assert current is not None
        config = parts.config
        own = home.specific_name(config.names)
        taken = home.taken(own, current.home, current.name, config.seats, others)
        if taken != self.policy.taken:
            parts.log.info("hub.seats_elsewhere", seats=sorted(taken))
            self._changed = True
        host = socket.gethostname()
        shared = any((other.name, other.host) != (own, host) for other in others)
        self.policy = replace(config.policy(), home=current.home, taken=taken, shared=shared)

    def tick(self, now: float) -> None:
        """Rule 3, when due (`next_presence`, monotonic); during a handover, rule 4 again."""
        if now < self.next_presence:
            return
        parts = self.parts
        others = hubfile.presences(parts.hub.root)  # before this watcher's own file is rewritten
        if self.handing_over:
            self.resolve(others)
        else:
            self._apply(others)
        self.next_presence = now + (HANDOVER_POLL if self.handing_over else home.PRESENCE_EVERY)
        presence = self._presence()
        try:
            hubfile.write_presence(parts.hub.root, presence)
        except OSError as error:
            parts.log.error("presence.unwritable", reason=str(error))
        rest = [other for other in others if (other.name, other.host) != (presence.name, presence.host)]
        rivals = tuple(home.rivals([*rest, presence], parts.clock.wall()))
        if rivals and rivals != self._rivals:
            names = ", ".join(rivals)
            text = f"two watchers act as home of {parts.hub.root}: {names}; set home = false on all but one"
            parts.log.error("hub.two_homes", watchers=list(rivals), reason=text)
            parts.health.failed(text)
            parts.notifier.notify(notices.alert(text), now, parts.log)
        self._rivals = rivals
