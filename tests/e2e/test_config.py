"""The TOML config of SPEC §8, black-box through `slopd run --once --config …`."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from slopd.shell.config import ConfigError, load, parse
from tests.conftest import HubDir, body_of, envelope_text, front_matter


def _run(hub: HubDir, *extra: str) -> subprocess.CompletedProcess[str]:
    return hub.slopd("run", "--hub", str(hub.root), "--state", str(hub.state), "--once", *extra, timeout=60)


def _run_with(hub: HubDir, config: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return _run(hub, "--config", str(config), *extra)


def _refused(hub: HubDir, result: subprocess.CompletedProcess[str], key: str) -> None:
    """Exit 2, the key named on stderr, and nothing in the hub touched."""
    assert result.returncode == 2, result.stderr
    assert key in result.stderr, result.stderr
    assert hub.lane("inbox") == ["waiting.md"]
    assert hub.outbox() == {}


ALLOWED_LINE = (
    'alice@example.com namespaces="slop" '
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIF6dZTYEu9lKfaU42AFPg6aoc8fwzTz1QvxY9aTQ6rye\n"
)


def _full_config(tmp_path: Path) -> str:
    signers = tmp_path / "trusted" / "allowed_signers"
    signers.parent.mkdir()
    signers.write_text(ALLOWED_LINE, encoding="utf-8")
    return f"""\
names = ["watcher", "watcher:odysseus"]
max_envelope_bytes = 1048576
settle = 0.3
rescan_interval = 30

[executor]
command = ["/bin/cat"]
timeout = 1800
max_parallel = 1

[seats.claude-code]
command = ["/bin/cat"]
timeout = 1800

[actions.deploy]
command = ["/bin/true", "prod"]
timeout = 600

[auth]
allowed_signers = "{signers}"
namespace = "slop"
max_age = 86400
sig_grace = 60

[notify]
command = ["/bin/true", "slopd"]

[summarizer]
command = ["/bin/cat"]
"""


def test_every_key_of_the_spec_is_accepted(tmp_path: Path, hub: HubDir) -> None:
    """A config with every top-level and table key of SPEC §8 starts, runs and answers as configured."""
    hub.write_config(_full_config(tmp_path))
    hub.drop("shake.md", envelope_text(id="full-shake", type="handshake"))
    hub.drop("run.md", envelope_text("echo me\n", id="full-run", type="instigate"))
    result = _run_with(hub, hub.config)
    assert result.returncode == 0, result.stderr
    assert front_matter(hub.reply("full-shake", "ack"))["from"] == "watcher:odysseus"
    output = hub.reply("full-run", "result")
    assert body_of(output) == "echo me\n"  # the executor (/bin/cat) ran on the body
    assert hub.lane("inbox") == []


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        pytest.param("bogus = 1\n", "bogus", id="top-level"),
        pytest.param('[executor]\ncommand = ["/bin/cat"]\nbogus = 1\n', "executor.bogus", id="executor"),
        pytest.param('[actions.x]\ncommand = ["/bin/true"]\nbogus = 1\n', "actions.x.bogus", id="action"),
        pytest.param('[auth]\nnamespace = "slop"\nbogus = 1\n', "auth.bogus", id="auth"),
        pytest.param("[http]\nport = 8787\n", "http.port", id="http"),
        pytest.param("[baton]\nbogus = 1\n", "baton.bogus", id="baton"),
        pytest.param("[console]\nbogus = 1\n", "console.bogus", id="console"),
    ],
)
def test_unknown_key_is_refused_by_name(hub: HubDir, toml: str, key: str) -> None:
    """An unknown key anywhere stops slopd at start with exit 2 and its dotted name."""
    hub.drop("waiting.md", envelope_text(id="waiting-1"))
    result = _run_with(hub, hub.write_config(toml))
    _refused(hub, result, key)


@pytest.mark.parametrize(
    ("toml", "key"),
    [
        pytest.param('settle = "fast"\n', "settle", id="settle"),
        pytest.param('[executor]\ncommand = "cat"\n', "executor.command", id="command"),
        pytest.param(
            '[executor]\ncommand = ["/bin/cat"]\ntimeout = true\n', "executor.timeout", id="timeout"
        ),
        pytest.param('names = "watcher"\n', "names", id="names"),
        pytest.param("max_envelope_bytes = 1.5\n", "max_envelope_bytes", id="max_envelope_bytes"),
        pytest.param("[http]\nrate_limit = 0\n", "http.rate_limit", id="rate_limit"),
        pytest.param("[http]\nallow_plaintext = 1\n", "http.allow_plaintext", id="allow_plaintext"),
        pytest.param('[http]\ntls_cert = "c.pem"\n', "http.tls_key", id="tls_cert-alone"),
        pytest.param('[console]\nrp_id = "10.0.0.1"\n', "console.rp_id", id="console-rp_id"),
    ],
)
def test_wrong_type_is_refused_by_name(hub: HubDir, toml: str, key: str) -> None:
    """A value of the wrong type stops slopd at start with exit 2 naming the key."""
    hub.drop("waiting.md", envelope_text(id="waiting-2"))
    result = _run_with(hub, hub.write_config(toml))
    _refused(hub, result, key)


def test_invalid_toml_is_refused(hub: HubDir) -> None:
    """A config that is not TOML stops slopd with exit 2 naming the file."""
    hub.drop("waiting.md", envelope_text(id="waiting-3"))
    result = _run_with(hub, hub.write_config('names = ["watcher"\n[executor\n'))
    _refused(hub, result, str(hub.config))


def test_missing_config_file_is_refused(tmp_path: Path, hub: HubDir) -> None:
    """`--config` naming a file that does not exist is exit 2 naming it, not a silent fallback."""
    hub.drop("waiting.md", envelope_text(id="waiting-4"))
    missing = tmp_path / "nowhere.toml"
    result = _run_with(hub, missing)
    _refused(hub, result, str(missing))


# -- trusted paths never inside the hub ----------------------------------------------------------


def _inside(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 2, result.stderr
    assert "inside the hub" in result.stderr, result.stderr


def test_refuses_a_config_inside_the_hub(hub: HubDir) -> None:
    """A config file inside the hub is refused: agents could rewrite it."""
    hub.drop("waiting.md", envelope_text(id="waiting-5"))
    config = hub.root / "assets" / "config.toml"
    config.write_text('names = ["watcher"]\n', encoding="utf-8")
    result = _run_with(hub, config)
    _inside(result)
    assert str(config) in result.stderr
    assert hub.lane("inbox") == ["waiting.md"]


def test_refuses_allowed_signers_inside_the_hub(hub: HubDir) -> None:
    """`auth.allowed_signers` inside the hub is refused."""
    hub.drop("waiting.md", envelope_text(id="waiting-6"))
    signers = hub.root / "assets" / "allowed_signers"
    signers.write_text("", encoding="utf-8")
    result = _run_with(hub, hub.write_config(f'[auth]\nallowed_signers = "{signers}"\n'))
    _inside(result)
    assert str(signers) in result.stderr
    assert hub.lane("inbox") == ["waiting.md"]


def test_refuses_a_state_dir_inside_the_hub(hub: HubDir) -> None:
    """`--state` inside the hub is refused, and no ledger is made there."""
    hub.drop("waiting.md", envelope_text(id="waiting-7"))
    state = hub.root / "assets" / "state"
    result = hub.slopd("run", "--hub", str(hub.root), "--state", str(state), "--once")
    _inside(result)
    assert not state.exists()
    assert hub.lane("inbox") == ["waiting.md"]


def test_refuses_a_config_symlinked_into_the_hub(tmp_path: Path, hub: HubDir) -> None:
    """A config path outside the hub that is a symlink to a file inside it is refused."""
    hub.drop("waiting.md", envelope_text(id="waiting-8"))
    target = hub.root / "assets" / "config.toml"
    target.write_text('names = ["watcher"]\n', encoding="utf-8")
    link = tmp_path / "linked-config.toml"
    link.symlink_to(target)
    result = _run_with(hub, link)
    _inside(result)
    assert hub.lane("inbox") == ["waiting.md"]


def test_refuses_a_state_dir_symlinked_into_the_hub(tmp_path: Path, hub: HubDir) -> None:
    """A state dir reached through a symlink outside the hub that points into it is refused."""
    hub.drop("waiting.md", envelope_text(id="waiting-9"))
    target = hub.root / "assets" / "state"
    target.mkdir()
    link = tmp_path / "linked-state"
    link.symlink_to(target, target_is_directory=True)
    result = hub.slopd("run", "--hub", str(hub.root), "--state", str(link), "--once")
    _inside(result)
    assert list(target.iterdir()) == []
    assert hub.lane("inbox") == ["waiting.md"]


# -- defaults and the default path ---------------------------------------------------------------


def test_no_config_means_embedded_defaults(hub: HubDir) -> None:
    """With no config anywhere, an instigate is answered with "no executor is configured"."""
    assert not hub.config.exists()
    assert not (Path(hub.env["XDG_CONFIG_HOME"]) / "slopd" / "config.toml").exists()
    hub.drop("run.md", envelope_text("run the tests\n", id="default-run", type="instigate"))
    hub.drop("ask.md", envelope_text(id="default-ask", type="query"))
    hub.run_once(config=False)
    error = hub.reply("default-run", "error")
    assert "no executor is configured" in error
    assert front_matter(error)["from"].startswith("watcher:")
    assert front_matter(hub.reply("default-ask", "result"))["type"] == "result"


def test_default_config_path_is_used_without_flag(hub: HubDir) -> None:
    """A config at $XDG_CONFIG_HOME/slopd/config.toml is read when --config is not given."""
    default = Path(hub.env["XDG_CONFIG_HOME"]) / "slopd" / "config.toml"
    default.parent.mkdir(parents=True)
    default.write_text('names = ["watcher", "watcher:xdg"]\n[executor]\ncommand = ["/bin/cat"]\n')
    hub.drop("run.md", envelope_text("from the default path\n", id="xdg-run", type="instigate"))
    hub.run_once(config=False)
    result = hub.reply("xdg-run", "result")
    assert body_of(result) == "from the default path\n"
    assert front_matter(result)["from"] == "watcher:xdg"


# -- what the keys do ----------------------------------------------------------------------------


def test_names_decide_the_sender_and_which_envelopes_are_ours(hub: HubDir) -> None:
    """With names watcher and watcher:odysseus, replies come from odysseus and ithaca's mail stays."""
    hub.write_config('names = ["watcher", "watcher:odysseus"]\n')
    hub.drop("plain.md", envelope_text(id="to-plain", type="handshake", to="watcher"))
    hub.drop("mine.md", envelope_text(id="to-odysseus", type="query", to="watcher:odysseus"))
    hub.drop("other.md", envelope_text(id="to-ithaca", type="query", to="watcher:ithaca"))
    hub.run_once()
    assert front_matter(hub.reply("to-plain", "ack"))["from"] == "watcher:odysseus"
    mine = front_matter(hub.reply("to-odysseus", "result"))
    assert mine["from"] == "watcher:odysseus"
    assert mine["in_reply_to"] == "to-odysseus"
    assert hub.lane("inbox") == ["other.md"]
    assert hub.replies_to("to-ithaca") == []


def test_max_envelope_bytes_limits_the_size(hub: HubDir) -> None:
    """With max_envelope_bytes = 2000, a 3,000-byte envelope gets a too-large error; a small one passes."""
    hub.write_config("max_envelope_bytes = 2000\n")
    big = envelope_text("x" * 3000 + "\n", id="too-big", type="query")
    assert len(big.encode()) > 3000
    hub.drop("big.md", big)
    hub.drop("small.md", envelope_text("y" * 1500 + "\n", id="small-enough", type="query"))
    hub.run_once()
    errors = [text for text in hub.outbox().values() if front_matter(text)["type"] == "error"]
    assert len(errors) == 1
    headers = front_matter(errors[0])
    assert headers["file"] == "inbox/big.md"
    assert "2000-byte limit" in errors[0]
    assert front_matter(hub.reply("small-enough", "result"))["in_reply_to"] == "small-enough"
    assert hub.lane("inbox") == []


def test_relative_paths_in_the_config_are_relative_to_the_config_file(tmp_path: Path) -> None:
    """`allowed_signers` and an action's `cwd`, written relative, are taken from the config
    file's folder and handed on absolute, wherever slopd is started."""
    folder = tmp_path / "etc"
    folder.mkdir()
    path = folder / "config.toml"
    path.write_text(
        '[auth]\nallowed_signers = "keys/allowed"\n'
        '[actions.deploy]\ncommand = ["true"]\ncwd = "work"\n'
        '[actions.here]\ncommand = ["true"]\ncwd = "/srv/app"\n',
        encoding="utf-8",
    )
    config = load(path)
    assert config.auth.allowed_signers == folder / "keys" / "allowed"
    assert config.actions["deploy"].cwd == str(folder / "work")
    assert config.actions["here"].cwd == "/srv/app"


def test_the_http_table_resolves_its_paths_beside_the_config_and_keeps_tokens_out_of_the_hub(
    tmp_path: Path, hub: HubDir
) -> None:
    """[http] paths are relative to the config file; a tokens file inside the hub stops slopd at start."""
    config = tmp_path / "etc" / "slopd.toml"
    config.parent.mkdir()
    config.write_text(
        '[http]\nlisten = "127.0.0.1:8787"\ntokens = "tokens"\ntls_cert = "c.pem"\ntls_key = "k.pem"\n'
    )
    http = load(config).http
    assert http.listen == "127.0.0.1:8787"
    assert http.tokens == config.parent / "tokens"
    assert (http.tls_cert, http.tls_key) == (config.parent / "c.pem", config.parent / "k.pem")
    assert (http.rate_limit, http.max_body, http.allow_plaintext) == (120, None, False)
    hub.drop("waiting.md", envelope_text(id="waiting-http"))
    inside = hub.write_config(f'[http]\ntokens = "{hub.root / "tokens"}"\n')
    _refused(hub, _run_with(hub, inside), "the tokens file")


THREE_MISTAKES = """\
settle = "fast"

[executr]
command = ["/bin/cat"]

[auth]
max_age = -1
"""


def test_every_mistake_is_reported_at_once_with_did_you_mean(hub: HubDir) -> None:
    """Three mistakes, three lines, each naming its key; a near miss names the key it resembles;
    `slopd doctor` lists the same three as problems."""
    hub.drop("waiting.md", envelope_text(id="waiting-3"))
    result = _run_with(hub, hub.write_config(THREE_MISTAKES))
    _refused(hub, result, "3 mistakes")
    assert result.stderr == (
        f"slopd run: {hub.config}: 3 mistakes:\n"
        "  - settle: expected a number, got str 'fast'\n"
        "  - auth.max_age: must be greater than 0\n"
        "  - executr: unknown key — did you mean `executor`?\n"
    )
    doctor = hub.slopd("doctor", "--hub", str(hub.root), "--config", str(hub.config))
    assert doctor.returncode == 1
    problems = [line for line in doctor.stdout.splitlines() if line.startswith("problem config:")]
    assert [line.split(": ", 2)[2].split(" Fix:")[0].removesuffix(".") for line in problems] == [
        "settle: expected a number, got str 'fast'",
        "auth.max_age: must be greater than 0",
        "executr: unknown key — did you mean `executor`?",
    ]


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        pytest.param("[executor]\ncomand = 1\n", ["executor.command: missing",
                     "executor.comand: unknown key — did you mean `command`?"], id="nested near miss"),
        pytest.param('[http]\ntls_cert = 1\n', ["http.tls_cert: expected a non-empty string, got int 1"],
                     id="no knock-on error"),
        pytest.param('[actions.a]\ncommand = 1\n[actions.b]\ncommand = 2\n', [
            "actions.a.command: expected a non-empty list of strings (an argv), got int 1",
            "actions.b.command: expected a non-empty list of strings (an argv), got int 2",
        ], id="two actions"),
        pytest.param("zzz = 1\n", ["zzz: unknown key"], id="nothing close"),
    ],
)  # fmt: skip
def test_each_mistake_once_and_no_knock_on_errors(toml: str, said: list[str]) -> None:
    """Every mistake is listed once; a key that failed its check adds no second error."""
    with pytest.raises(ConfigError) as raised:
        parse(toml)
    assert list(raised.value.reasons) == said
