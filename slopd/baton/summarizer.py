"""The configured `[baton.summarizer]` (SPEC §11): a command that writes AUTOBIOGRAPHY.md's paragraphs.

Rules:
1. It reads on stdin the vessel and every generation, newest first, as JSON
   (`generations.summary_input`); its stdout, UTF-8, is the paragraphs.
2. A non-zero exit, a timeout, output that is not UTF-8 or is blank: None, and the keeper
   writes the deterministic autobiography instead. It runs with the executor's environment
   rules and in its own process group, killed at the timeout.
"""

from __future__ import annotations

from collections.abc import Callable

from slopd.baton.generations import Past, summary_input
from slopd.shell import executor
from slopd.shell.config import Config

TIMEOUT = 120.0


def command(
    argv: tuple[str, ...], runner: executor.Runner = executor.run
) -> Callable[[str, list[Past]], str | None]:
    def summarize(vessel: str, pasts: list[Past]) -> str | None:
        result = runner(
            argv, stdin=summary_input(vessel, pasts), env=executor.child_environment({}), timeout=TIMEOUT
        )
        if result.exit_code != 0 or result.timed_out:
            return None
        try:
            text = result.stdout.decode("utf-8")
        except UnicodeDecodeError:
            return None
        return text if text.strip() else None

    return summarize


def configured(config: Config) -> Callable[[str, list[Past]], str | None] | None:
    """The config's `[baton.summarizer]`, or None when there is none."""
    return command(config.baton_summarizer) if config.baton_summarizer else None
