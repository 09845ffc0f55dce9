#!/usr/bin/env python3
"""Coverage-guided fuzzing of the envelope parser with atheris (libFuzzer).

Invariant (slopd/core/validation.py, rule 1): for any bytes, `validation.parse(data, name=...)`
returns an `Envelope` or raises `EnvelopeError` with at least one non-empty reason — under a
Markdown name and under a JSON name. Any other exception, a crash or a hang is a finding.
An `Envelope` names its signatures safely: `auth: none` names none, `auth: signed:A[,B…]` one
or more distinct plain `.sig` file names (no path, no `..`, no dot file, no empty item).

    python fuzz/fuzz_envelope.py -runs=100000            # seed corpus fuzz/corpus/envelope
    python fuzz/fuzz_envelope.py -max_total_time=600 WORK_DIR fuzz/corpus/envelope

Without a corpus directory, new inputs go to a fresh temp directory (printed) and the seed
corpus is read, never written. Every libFuzzer flag works (`-runs`, `-max_len`, `-jobs`, ...).
"""

from __future__ import annotations

import sys

import atheris
from common import libfuzzer_argv

with atheris.instrument_imports(include=["slopd", "yaml"]):
    from slopd.core import envelope, validation

NAMES = ("fuzz.md", "fuzz.json", "FUZZ.MD")


def test_one_input(data: bytes) -> None:
    for name in NAMES:
        try:
            parsed = validation.parse(data, name=name)
        except envelope.EnvelopeError as error:
            if not error.reasons or not all(isinstance(reason, str) and reason for reason in error.reasons):
                raise AssertionError(f"EnvelopeError without reasons for {name}: {error.reasons!r}") from None
            continue
        if not isinstance(parsed, envelope.Envelope):
            raise AssertionError(f"parse returned {type(parsed).__name__} for {name}")
        check_sidecars(parsed, name)


def check_sidecars(parsed: envelope.Envelope, name: str) -> None:
    sidecars = parsed.sidecars
    if (parsed.auth == "none") != (not sidecars) or len(set(sidecars)) != len(sidecars):
        raise AssertionError(f"auth {parsed.auth!r} gave sidecars {sidecars!r} for {name}")
    for sidecar in sidecars:
        if not safe_sidecar(sidecar):
            raise AssertionError(f"auth {parsed.auth!r} gave an unsafe sidecar {sidecar!r} for {name}")


def safe_sidecar(sidecar: str) -> bool:
    """A file name in the order's own lane (stated apart from the parser's pattern, to check it)."""
    plain = not any(char in sidecar for char in "/\\\0,") and sidecar == sidecar.strip()
    return plain and sidecar.endswith(".sig") and not sidecar.startswith(".") and sidecar.isprintable()


def main() -> None:
    atheris.Setup(libfuzzer_argv(sys.argv, "envelope"), test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
