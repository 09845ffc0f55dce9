"""The LaunchAgent plist, checked on Linux: `plistlib` parses it, and each key has launchd's type.

`plutil -lint` only exists on macOS and checks syntax alone; launchd itself ignores a key of the
wrong type (a `<string>yes</string>` RunAtLoad) without a word, so the types are checked here.
"""

from __future__ import annotations

import plistlib
import xml.parsers.expat
from pathlib import Path
from typing import Any

import pytest

from slopd.ops import service, servicefiles

SHIPPED = service.data_path("launchd") / "dev.slopd.plist"
# launchd.plist(5) keys slopd uses or that an operator may reasonably add, with their types.
KEY_TYPES: dict[str, type] = {
    "Label": str,
    "ProgramArguments": list,
    "EnvironmentVariables": dict,
    "RunAtLoad": bool,
    "KeepAlive": dict,
    "ThrottleInterval": int,
    "ExitTimeOut": int,
    "ProcessType": str,
    "Umask": int,
    "StandardOutPath": str,
    "StandardErrorPath": str,
    "WorkingDirectory": str,
    "Nice": int,
    "LowPriorityIO": bool,
}
PROCESS_TYPES = {"Background", "Standard", "Adaptive", "Interactive"}


def problems(plist: dict[str, Any]) -> list[str]:
    """What launchd would silently ignore or misread in this plist, one line each."""
    found = [f"unknown key {key}" for key in plist if key not in KEY_TYPES]
    for key, expected in KEY_TYPES.items():
        value = plist.get(key)
        if value is None:
            continue
        # bool is an int in Python; launchd tells <true/> from <integer> apart.
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            found.append(f"{key} is {type(value).__name__}, not {expected.__name__}")
    if not plist.get("Label"):
        found.append("no Label")
    argv = plist.get("ProgramArguments")
    if not isinstance(argv, list) or not argv or not all(isinstance(arg, str) for arg in argv):
        found.append("ProgramArguments is not a non-empty list of strings")
    elif not argv[0].startswith("/"):
        found.append("ProgramArguments[0] is not an absolute path")
    keep_alive = plist.get("KeepAlive", {})
    if isinstance(keep_alive, dict) and not all(isinstance(value, bool) for value in keep_alive.values()):
        found.append("KeepAlive values are not booleans")
    if plist.get("ProcessType") not in PROCESS_TYPES:
        found.append("ProcessType is not one of " + ", ".join(sorted(PROCESS_TYPES)))
    env = plist.get("EnvironmentVariables", {})
    if isinstance(env, dict) and not all(isinstance(value, str) for value in env.values()):
        found.append("EnvironmentVariables values are not strings")
    return found


def rendered(tmp_path: Path) -> bytes:
    return servicefiles.render_launchd(
        SHIPPED.read_bytes(),
        slopd=Path("/Users/alice/.local/bin/slopd"),
        hub=Path("/Users/alice/Library/CloudStorage/Dropbox/hub"),
        config=Path("/Users/alice/.config/slopd/config.toml"),
        state=Path("/Users/alice/.local/state/slopd/hub-0123456789"),
        label="dev.slopd.Library-CloudStorage-Dropbox-hub",
        log=Path("/Users/alice/Library/Logs/slopd-Library-CloudStorage-Dropbox-hub.log"),
        path_env="/opt/homebrew/bin:/usr/bin:/bin",
    )


def test_shipped_plist_is_valid() -> None:
    """The shipped plist parses and every key has the type launchd expects."""
    with SHIPPED.open("rb") as file:
        plist = plistlib.load(file)
    assert problems(plist) == []
    assert plist["RunAtLoad"] is True
    assert plist["KeepAlive"] == {"SuccessfulExit": False}
    assert plist["ProcessType"] == "Background"
    assert plist["Umask"] == 0o077
    assert plist["ExitTimeOut"] > servicefiles.GRACE
    assert plist["ProgramArguments"][1:3] == ["run", "--hub"]
    assert SHIPPED.name == plist["Label"] + ".plist"


def test_rendered_plist_is_valid_and_names_this_installation(tmp_path: Path) -> None:
    """A rendered plist parses, passes the type checks and carries the real paths and PATH."""
    data = rendered(tmp_path)
    path = tmp_path / "dev.slopd.Library-CloudStorage-Dropbox-hub.plist"
    path.write_bytes(data)
    with path.open("rb") as file:
        plist = plistlib.load(file)
    assert problems(plist) == []
    assert plist["ProgramArguments"] == [
        "/Users/alice/.local/bin/slopd",
        "run",
        "--hub",
        "/Users/alice/Library/CloudStorage/Dropbox/hub",
        "--state",
        "/Users/alice/.local/state/slopd/hub-0123456789",
        "--config",
        "/Users/alice/.config/slopd/config.toml",
        "--grace",
        str(servicefiles.GRACE),
    ]
    assert plist["Label"] == "dev.slopd.Library-CloudStorage-Dropbox-hub"
    assert plist["StandardErrorPath"] == plist["StandardOutPath"]
    assert plist["StandardOutPath"] == "/Users/alice/Library/Logs/slopd-Library-CloudStorage-Dropbox-hub.log"
    assert plist["EnvironmentVariables"]["PATH"] == "/opt/homebrew/bin:/usr/bin:/bin"
    assert plist["RunAtLoad"] is True
    assert plist["ThrottleInterval"] == 10


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("RunAtLoad", "yes", "RunAtLoad is str, not bool"),
        ("ThrottleInterval", True, "ThrottleInterval is bool, not int"),
        ("Umask", "077", "Umask is str, not int"),
        ("ProgramArguments", "/usr/local/bin/slopd run", "ProgramArguments is str, not list"),
        ("ProgramArguments", ["slopd", "run"], "not an absolute path"),
        ("KeepAlive", {"SuccessfulExit": "no"}, "KeepAlive values"),
        ("ProcessType", "Backgroud", "ProcessType is not one of"),
        ("Program", "/usr/local/bin/slopd", "unknown key Program"),
        ("Label", "", "no Label"),
    ],
)
def test_checks_catch_wrong_types(key: str, value: object, expected: str) -> None:
    """A value of the wrong type, or an unknown key, survives a plist round trip and is reported."""
    plist = plistlib.loads(SHIPPED.read_bytes())
    plist[key] = value
    found = problems(plistlib.loads(plistlib.dumps(plist)))
    assert any(expected in line for line in found), found


def test_truncated_plist_does_not_parse() -> None:
    """A truncated file is an XML error, not a half-read job."""
    data = SHIPPED.read_bytes()
    with pytest.raises(xml.parsers.expat.ExpatError):
        plistlib.loads(data[: len(data) // 2])
