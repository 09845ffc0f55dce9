"""The release artefacts: `python -m build` makes an sdist and a wheel, and the wheel works on its own.

The wheel is installed without dependencies into a fresh venv that borrows this environment's
site-packages for them (a `.pth` line, so no index is needed); slopd itself must then come from
the wheel, with the unit templates, the LaunchAgent and the sample hub as package data.
"""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

from slopd.shell.version import version
from tests import ROOT

DATA = [
    "systemd/slopd@.service",
    "systemd/slopd.user.service",
    "launchd/dev.slopd.plist",
    "sample-hub/HUB.md",
]

CHECK = textwrap.dedent(
    """
    import pathlib, sys
    import slopd
    from slopd.cli import main
    from slopd.ops import service
    from slopd.shell.version import version
    venv = pathlib.Path(sys.prefix)
    assert pathlib.Path(slopd.__file__).is_relative_to(venv), slopd.__file__
    for name in ("systemd", "launchd", "sample-hub"):
        assert service.data_path(name).is_relative_to(venv), service.data_path(name)
    assert (service.data_path("systemd") / "slopd@.service").is_file()
    assert (service.data_path("launchd") / "dev.slopd.plist").is_file()
    assert sorted(p.name for p in (service.data_path("sample-hub") / "inbox").iterdir())
    assert main(["service", "install", "--systemd-user", "--hub", sys.argv[1], "--dry-run"]) == 0
    print("version", version())
    """
)


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_build_and_install_from_the_wheel(tmp_path: Path) -> None:
    """The sdist and wheel carry the units, plist and sample hub; the installed wheel finds and uses them."""
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--outdir", str(dist), str(ROOT)], check=True, capture_output=True
    )
    (sdist,) = dist.glob("slopd-*.tar.gz")
    (wheel,) = dist.glob("slopd-*.whl")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert set(DATA) <= names, set(DATA) - names
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    assert {f"slopd/_data/{name}" for name in DATA} <= names

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(wheel)]
    subprocess.run(install, check=True, capture_output=True)
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    Path(purelib, "borrowed-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    hub = tmp_path / "hub"
    made = subprocess.run(
        [venv / "bin" / "slopd", "init", str(hub)], capture_output=True, text=True, check=False
    )
    assert made.returncode == 0, made.stderr
    result = subprocess.run(
        [python, "-c", CHECK, str(hub)], capture_output=True, text=True, check=False, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert f"ExecStart={venv / 'bin' / 'slopd'} run --hub {hub}" in result.stdout
    assert f"version {version()}" in result.stdout
