"""OpenSSH pattern lists (ssh_config(5) PATTERNS), as allowed_signers matches principals and
namespaces with them. Pure.

Rules (OpenSSH `match.c`):
1. A list is comma-separated patterns; it matches when any pattern matches and no `!`-negated
   one does (a list of negations alone matches nothing).
2. A pattern is a glob over bytes (the name and the list in UTF-8, surrogates escaped): `*` is
   any run, `?` one byte, anything else itself.
3. A subpattern of 1023 bytes or more never matches, and makes the whole list not match.
"""

from __future__ import annotations

_MAX_SUBPATTERN = 1023  # match_pattern_list: a longer subpattern never matches


def match_pattern_list(name: str, patterns: str) -> bool:
    """OpenSSH match_pattern_list: any `*`/`?` pattern matches and no `!`-negated one does."""
    subject = name.encode("utf-8", "surrogateescape")
    positive = False
    for item in patterns.encode("utf-8", "surrogateescape").split(b","):
        negated = item.startswith(b"!")
        pattern = item[1:] if negated else item
        if len(pattern) >= _MAX_SUBPATTERN:
            return False
        if _match(subject, pattern):
            if negated:
                return False
            positive = True
    return positive


def _match(subject: bytes, pattern: bytes) -> bool:
    """Glob with `*` (any run) and `?` (one byte), iterative with one backtrack point."""
    s = p = 0
    star, star_s = -1, 0
    while s < len(subject):
        if p < len(pattern) and pattern[p] in (subject[s], ord("?")):
            s, p = s + 1, p + 1
        elif p < len(pattern) and pattern[p] == ord("*"):
            star, star_s, p = p, s, p + 1
        elif star >= 0:
            star_s += 1
            s, p = star_s, star + 1
        else:
            return False
    return all(char == ord("*") for char in pattern[p:])
