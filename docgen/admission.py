"""The admission refusals table (`docs/explanation/admission.md`): each refusal, made by the code
itself, with the reason it gives and how the folder, HTTP and MCP answer it."""

from __future__ import annotations

from docgen.markdown import table
from slopd.core import admission
from slopd.core.admission import Examined, Refusal, Refused
from slopd.transport.problems import TITLES
from slopd.transport.server.intake import refusal as http_refusal

_FOLDER = {
    Refusal.INVALID: "`error` reply listing every reason; archived",
    Refusal.WRONG_SEAT: "— (a file has no seat)",
    Refusal.CONFLICT: "`error` reply; archived; nothing runs",
    Refusal.ACTION: "`error` reply; archived",
}
_MCP = {
    Refusal.INVALID: "tool error listing every reason",
    Refusal.WRONG_SEAT: "— (the seat is fixed: no tool takes `from`)",
    Refusal.CONFLICT: "tool error",
    Refusal.ACTION: "tool error (`action` is no `slop_send` argument)",
}


def _envelope(**fields: str) -> bytes:
    headers = {"protocol": "slop.v1", "id": "ID", "type": "handoff", "from": "claude-code", "to": "watcher"}
    headers.update(fields)
    return (
        "---\n" + "".join(f"{key}: {value}\n" for key, value in headers.items()) + "---\nBody.\n"
    ).encode()


def _examine(data: bytes, seat: str | None = None) -> Examined | Refused:
    return admission.examine(data, name="x.md", lane="inbox", max_bytes=1 << 20, seat=seat)


def _sample(refusal: Refusal) -> Refused:
    """A real refusal of each kind, made by admission itself."""
    made: object
    match refusal:
        case Refusal.INVALID:
            made = _examine(_envelope(to="bad to!"))
        case Refusal.WRONG_SEAT:
            made = _examine(_envelope(**{"from": "bob"}), seat="alice")
        case Refusal.CONFLICT:
            examined = _examine(_envelope())
            assert isinstance(examined, Examined)
            made = admission.judge(examined, "0" * 64)
        case Refusal.ACTION:
            examined = _examine(_envelope(type="instigate", action="deploy"))
            assert isinstance(examined, Examined)
            made = admission.judge(examined, None)
    assert isinstance(made, Refused), made
    return made


def refusals() -> str:
    rows = []
    for refusal in Refusal:
        sample = _sample(refusal)
        problem = http_refusal(sample)
        status = TITLES[problem.kind][0]
        reason = sample.reasons[0].replace(sample.sha256, "SHA256")
        rows.append(
            (f"`{refusal}`", f"`{reason}`", _FOLDER[refusal], f"{status} `{problem.kind}`", _MCP[refusal])
        )
    return table(("refusal", "reason (an example)", "folder", "HTTP", "MCP"), rows)
