"""Reading one TOML table of the config: each key taken with its check, every mistake collected.

Rules:
1. A key is read only by `Table.take`, with its check (a function `(value, key) -> value` whose
   docstring says the type it accepts) and its default; a check refuses with `ConfigError`.
2. A check that fails is noted and its default taken, so that the rest is checked too; `finish`
   raises one `ConfigError` with every mistake of the table and of the tables in it, then one per
   key nobody took, naming the key valid at its level that it is closest to (`did you mean`).
3. `record` lists every key and table taken while it runs, in order: the config reference is made
   from that list (`docgen/config.py`), so it cannot drift from what is read.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from slopd.core.errors import SetupError

T = TypeVar("T")


class ConfigError(SetupError):
    """The configuration or the set-up around it is unusable; the message names the key or path.

    `reasons` holds every mistake found (rule 2), `where` the file they are in."""

    def __init__(self, *reasons: str, where: str | None = None) -> None:
        self.reasons, self.where = reasons, where
        head = f"{where}: " if where else ""
        if len(reasons) == 1:
            text = head + reasons[0]
        else:
            text = f"{head}{len(reasons)} mistakes:" + "".join(f"\n  - {reason}" for reason in reasons)
        super().__init__(text)


@dataclass(frozen=True, slots=True)
class Key:
    """A key `parse` takes (rule 3): its dotted name, its check and its default."""

    name: str
    check: Callable[[object, str], object]
    default: object


@dataclass
class Taken:
    """What one `record`ed read took: the keys, the tables it opened, the error it stopped at."""

    keys: list[Key] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    error: ConfigError | None = None


_TAKING: ContextVar[Taken | None] = ContextVar("slopd_config_taking", default=None)


def record(read: Callable[[], object]) -> Taken:
    """Every key and table `read` (a `parse`, or one check) takes, in order (rule 3)."""
    taken = Taken()
    token = _TAKING.set(taken)
    try:
        read()
    except ConfigError as error:
        taken.error = error
    finally:
        _TAKING.reset(token)
    return taken


class Table:
    """A TOML table being read: every key taken is checked; `finish` rejects the leftovers.

    A check that fails is noted and its default taken, so that the rest is checked too;
    `finish` raises one `ConfigError` with every mistake of the table and of the tables in it."""

    def __init__(self, value: object, where: str) -> None:
        if (taking := _TAKING.get()) is not None:
            taking.tables.append(where)
        if not isinstance(value, dict):
            raise ConfigError(f"{where or 'the config'}: must be a table")
        self.values: dict[str, Any] = dict(value)
        self.where = where
        self.known: list[str] = []  # the keys valid here: every name taken
        self.failed: set[str] = set()
        self.errors: list[str] = []

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def take(self, name: str, check: Callable[[object, str], T], default: T) -> T:
        self.known.append(name)
        if (taking := _TAKING.get()) is not None:
            taking.keys.append(Key(self.key(name), check, default))
        if name not in self.values:
            return default
        try:
            return check(self.values.pop(name), self.key(name))
        except ConfigError as error:
            self.failed.add(name)
            self.errors.extend(error.reasons)
            return default

    def error(self, reason: str) -> None:
        """A mistake found after the keys were taken (a missing key, two keys that disagree)."""
        self.errors.append(reason)

    def finish(self) -> None:
        for name in self.values:
            self.errors.append(f"{self.key(name)}: unknown key{_suggestion(name, self.known)}")
        if self.errors:
            raise ConfigError(*self.errors)


def _suggestion(name: str, known: list[str]) -> str:
    import difflib  # noqa: PLC0415  # only for a mistake

    close = difflib.get_close_matches(name, known, n=1)
    return f" — did you mean `{close[0]}`?" if close else ""


def each(items: Iterable[tuple[str, object]], check: Callable[[str, object], T]) -> list[T]:
    """`check` on every item, every failure reported together (rule 2)."""
    checked: list[T] = []
    errors: list[str] = []
    for name, item in items:
        try:
            checked.append(check(name, item))
        except ConfigError as error:
            errors.extend(error.reasons)
    if errors:
        raise ConfigError(*errors)
    return checked


def type_error(key: str, expected: str, value: object) -> ConfigError:
    return ConfigError(f"{key}: expected {expected}, got {type(value).__name__} {value!r}")
