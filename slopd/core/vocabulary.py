"""The words and limits every layer shares, in a module that imports nothing.

The CLI's parser is built from these without importing the modules that use them (YAML,
cryptography, SQLite), so a command pays only for what it runs.
"""

from __future__ import annotations

PROTOCOL = "slop.v1"
TYPES = ("instigate", "handoff", "ack", "result", "error", "query", "handshake", "note")
REPLY_TYPES = frozenset({"ack", "result", "error"})
MODES = ("execute", "discuss")
MAX_ENVELOPE_BYTES = 1024 * 1024
NAMESPACE = "slop"  # the SSHSIG namespace of signed orders
LOG_LEVELS = ("debug", "info", "warning", "error", "critical")
MAX_WAIT = 50.0  # seconds an MCP tool, a hook or `slopd wait` blocks at most in one call (SPEC §13, §16)
HOOK_HOSTS = ("claude-code", "codex", "gemini")  # `slopd hook HOST`: agent hosts whose hooks slopd answers
