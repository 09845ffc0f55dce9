"""Shared helpers for slopd's benchmarks: hubs, envelopes, daemons, /proc readings, statistics.

Scratch trees live under `$BENCH_TMP` (default `/var/tmp/slopd-bench`) and are deleted when the
script exits, never between runs: on ext4 without a journal (this kind of machine), inodes freed
in the last ~30 s are skipped on every create, so deleting thousands of files between runs would
slow the next run's creates 10-30x and contaminate it.
"""

from __future__ import annotations

import atexit
import ctypes
import ctypes.util
import math
import os
import platform
import select
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

SLOPD = [sys.executable, "-m", "slopd"]
TICKS = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")
SCRATCH = os.environ.get("BENCH_TMP", "/var/tmp/slopd-bench")
_TO_DELETE: list[Path] = []
_PREPARED: set[str] = set()


def precompile() -> None:
    """Byte-compile slopd and the bench scripts, as an installed package is compiled once.

    Under PYTHONDONTWRITEBYTECODE (set on some machines) every start would otherwise compile
    slopd's modules again, about 0.1 s per spawn that no user pays.
    """
    here = Path(__file__).resolve().parent
    sources = [str(here.parent / "slopd"), str(here)]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *sources], check=True)


# -- scratch space ---------------------------------------------------------------------------


def scratch(prefix: str) -> Path:
    """A fresh directory under the scratch base, removed when the script exits."""
    if SCRATCH not in _PREPARED:
        os.makedirs(SCRATCH, exist_ok=True)
        # Orlov: each new top dir lands in its own block group, away from recently freed inodes.
        subprocess.run(["chattr", "+T", SCRATCH], capture_output=True, check=False)
        _PREPARED.add(SCRATCH)
    path = Path(tempfile.mkdtemp(prefix=prefix, dir=SCRATCH))
    _TO_DELETE.append(path)
    return path


@atexit.register
def _cleanup() -> None:
    if os.environ.get("BENCH_KEEP"):
        return
    for path in _TO_DELETE:
        shutil.rmtree(path, ignore_errors=True)
    _TO_DELETE.clear()


def make_hub(config: str = "") -> tuple[Path, Path, Path]:
    """A fresh hub, its state dir and config file, all in a new scratch dir."""
    base = scratch("slopd-")
    hub = base / "hub"
    subprocess.run([*SLOPD, "init", str(hub)], check=True, capture_output=True)
    (base / "staging").mkdir()
    cfg = base / "config.toml"
    cfg.write_text(config, encoding="utf-8")
    return hub, base / "state", cfg


# -- envelopes -------------------------------------------------------------------------------

BODY = (
    "# Bench handoff\n\n"
    "The parser refactor is half done: the tokenizer is split out and its tests pass. "
    "What is left is the error recovery in the statement parser and the docs.\n\n"
    "## What's pending\n\n"
    "- port the error-recovery tests\n- update docs/parser.md\n- remove the old entry point\n\n"
    + "A sentence of context to give the body a realistic size for a hand-off between agents. "
    * 9
)


def envelope(
    index: int, kind: str = "handoff", body_bytes: int = 900, nonce: str = "bench"
) -> tuple[str, bytes]:
    """An envelope like an agent's handoff (~1.3 KB), its id derived from `index`."""
    envelope_id = f"20260704t071553z-{nonce}-{index:07d}"
    body = BODY[:body_bytes]
    text = (
        f"---\nprotocol: slop.v1\nid: {envelope_id}\ntype: {kind}\nfrom: bench\nto: watcher\n"
        f"in_reply_to: null\ncreated_at: 2026-07-04T07:15:53Z\nauth: none\n---\n{body}\n"
    )
    return envelope_id, text.encode()


def reply_name(envelope_id: str, kind: str = "handoff") -> str:
    return f"{envelope_id}.{'ack' if kind in ('handshake', 'note') else 'result'}.md"


# -- daemons ---------------------------------------------------------------------------------


def start(hub: Path, state: Path, config: Path, *extra: str) -> subprocess.Popen[bytes]:
    env = dict(os.environ, XDG_CONFIG_HOME=str(config.parent / "xdg"))
    return subprocess.Popen(
        [*SLOPD, "run", "--hub", str(hub), "--state", str(state), "--config", str(config), *extra],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def wait_until(condition, timeout: float = 120.0, interval: float = 0.0002) -> float:  # type: ignore[no-untyped-def]
    """Spin until `condition()` is true; returns the monotonic time it became true."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("benchmark condition not met")
        time.sleep(interval)
    return time.monotonic()


# -- /proc readings --------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_mb(pid: int) -> float:
    pages = int(Path(f"/proc/{pid}/statm").read_text().split()[1])
    return pages * PAGE / 1e6


def process_tree(pid: int) -> list[int]:
    """`pid` and all its live descendants."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as children:
                    todo += [int(child) for child in children.read().split()]
        except OSError:
            continue
    return found


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds of a process tree: every live thread (schedstat, ns resolution) plus the CPU of
    children already reaped by their parents (cutime + cstime), so short-lived helpers count."""
    total = 0.0
    for member in process_tree(pid):
        try:
            for task in os.listdir(f"/proc/{member}/task"):
                with open(f"/proc/{member}/task/{task}/schedstat") as schedstat:
                    total += int(schedstat.read().split()[0]) / 1e9
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[13]) + int(fields[14])) / TICKS
        except (OSError, ValueError, IndexError):
            continue
    return total


def tree_cpu_times(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a process tree from `/proc/PID/stat`: each process's threads,
    the exited ones too (a thread pool's workers come and go), and its reaped children; tick
    resolution (`tree_cpu_seconds` sums the live threads only, at ns resolution)."""
    user = system = 0.0
    for member in process_tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        user += (int(fields[11]) + int(fields[13])) / TICKS
        system += (int(fields[12]) + int(fields[14])) / TICKS
    return user, system


def tree_rss_mb(pid: int) -> float:
    total = 0.0
    for member in process_tree(pid):
        try:
            total += rss_mb(member)
        except (OSError, ValueError, IndexError):
            continue
    return total


# -- reply watcher (bare inotify through ctypes: no dependency, same for every contender) -----

_IN_CLOSE_WRITE = 0x008
_IN_MOVED_TO = 0x080
_IN_Q_OVERFLOW = 0x4000
_EVENT = struct.Struct("iIII")


class ReplyWatcher:
    """Stamps (CLOCK_MONOTONIC) each file that appears in `directory` by rename or close-after-write.

    Dot-names are ignored (temp files). On an inotify queue overflow the directory is listed and
    every new name gets the listing time, an upper bound; `overflowed` says so.
    """

    def __init__(self, directory: Path) -> None:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        self.directory = directory
        self.fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1 failed")
        if libc.inotify_add_watch(self.fd, os.fsencode(directory), _IN_CLOSE_WRITE | _IN_MOVED_TO) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {directory} failed")
        self.seen: dict[str, float] = {}
        self.overflowed = False
        self._wake_r, self._wake_w = os.pipe()
        self._changed = threading.Condition()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        while True:
            ready = {fd for fd, _ in poller.poll()}
            now = time.monotonic()
            if self._wake_r in ready:
                return
            try:
                data = os.read(self.fd, 1 << 20)
            except BlockingIOError:
                continue
            offset = 0
            while offset < len(data):
                _wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                raw = data[offset + _EVENT.size : offset + _EVENT.size + length].rstrip(b"\0")
                offset += _EVENT.size + length
                if mask & _IN_Q_OVERFLOW:
                    self.overflowed = True
                    for name in os.listdir(self.directory):
                        if not name.startswith("."):
                            self.seen.setdefault(name, now)
                    continue
                name = os.fsdecode(raw)
                if name and not name.startswith("."):
                    self.seen.setdefault(name, now)
            with self._changed:
                self._changed.notify_all()

    def wait_for(self, names: Iterable[str], timeout: float) -> bool:
        """True once every name was seen; False at the deadline."""
        wanted = list(names)
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                wanted = [name for name in wanted if name not in self.seen]
                if not wanted:
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(timeout=min(left, 0.5))

    def close(self) -> None:
        os.write(self._wake_w, b"x")
        self._thread.join()
        for fd in (self.fd, self._wake_r, self._wake_w):
            os.close(fd)


# -- statistics and tables -------------------------------------------------------------------


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    if not ordered:
        nan = float("nan")
        return {"median": nan, "p90": nan, "p99": nan, "min": nan, "max": nan}

    def at(fraction: float) -> float:
        return ordered[min(int(fraction * len(ordered)), len(ordered) - 1)]

    return {
        "median": statistics.median(ordered),
        "p90": at(0.90),
        "p99": at(0.99),
        "min": ordered[0],
        "max": ordered[-1],
    }


def table(title: str, rows: list[tuple[str, dict[str, float]]], unit: str) -> str:
    lines = [title, f"{'':28} {'median':>10} {'p90':>10} {'p99':>10} {'min':>10} {'max':>10}  ({unit})"]
    for label, values in rows:
        cells = " ".join(f"{values[key]:>10.2f}" for key in ("median", "p90", "p99", "min", "max"))
        lines.append(f"{label:28} {cells}")
    return "\n".join(lines)


def render_table(headers: list[str], rows: list[list[str]]) -> str:
    """A plain-text table: first column left-aligned, the others right-aligned."""
    widths = [max(len(row[column]) for row in [headers, *rows]) for column in range(len(headers))]

    def line(row: list[str]) -> str:
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)
        ]
        return "  ".join(cells).rstrip()

    return "\n".join([line(headers), "  ".join("-" * width for width in widths), *map(line, rows)])


# -- the machine -----------------------------------------------------------------------------


def filesystem(path: str) -> str:
    """`ext4 (rw,relatime,…) on /dev/vda, journal: none` for the mount holding `path`."""
    best, described, device = "", "?", ""
    try:
        with open("/proc/mounts") as mounts:
            for line in mounts:
                parts = line.split()
                mount = parts[1]
                if (path == mount or path.startswith(mount.rstrip("/") + "/")) and len(mount) >= len(best):
                    best, device = mount, parts[0]
                    described = f"{parts[2]} ({parts[3]}) on {parts[0]} mounted at {mount}"
    except OSError:
        return described
    journal = ""
    try:
        task = Path(f"/sys/fs/ext4/{device.rsplit('/', 1)[-1]}/journal_task").read_text().strip()
        journal = f", ext4 journal: {'none' if task in ('', '<none>') else task}"
    except OSError:
        pass
    return described + journal


def machine_line(packages: Iterable[str] = ("watchdog", "PyYAML", "cryptography")) -> str:
    import sqlite3  # noqa: PLC0415
    from importlib import metadata  # noqa: PLC0415

    versions = []
    for package in packages:
        try:
            versions.append(f"{package} {metadata.version(package)}")
        except metadata.PackageNotFoundError:
            versions.append(f"{package} missing")
    try:
        model = next(
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        )
    except (OSError, StopIteration):
        model = platform.processor() or "?"
    load = " ".join(f"{value:.2f}" for value in os.getloadavg())
    os.makedirs(SCRATCH, exist_ok=True)
    return (
        f"{os.cpu_count()} cores ({model}), {os.sysconf('SC_PHYS_PAGES') * PAGE / 2**30:.0f} GiB; "
        f"Linux {platform.release()}; {SCRATCH}: {filesystem(os.path.realpath(SCRATCH))}; "
        f"Python {platform.python_version()}, SQLite {sqlite3.sqlite_version}, {', '.join(versions)}; "
        f"load average at start {load}"
    )


def spread(values: list[float], show: Callable[[float], str]) -> str:
    """`median [min-max]` of per-run values."""
    finite = [value for value in values if not math.isnan(value)]
    if not finite:
        return "n/a"
    if len(finite) == 1:
        return show(finite[0])
    return f"{show(statistics.median(finite))} [{show(min(finite))}-{show(max(finite))}]"
