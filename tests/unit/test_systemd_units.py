"""etc/systemd/*.service: each starts a console script berth installs (pyproject's
[project.scripts]) with the deployment's config file, together they start every
service, and systemd itself accepts them (``systemd-analyze verify``, when present)."""

from __future__ import annotations

import configparser
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
UNITS = sorted((ROOT / "etc" / "systemd").glob("*.service"))
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
INSTALL_DIR = "/opt/berth/bin/"


def _exec_start(unit: Path) -> list[str]:
    parser = configparser.ConfigParser(strict=False, interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # keys are case-sensitive
    parser.read(unit)
    return shlex.split(parser["Service"]["ExecStart"])


@pytest.mark.parametrize("unit", UNITS, ids=[u.name for u in UNITS])
def test_exec_start_runs_an_installed_console_script_with_the_config_file(unit: Path) -> None:
    argv = _exec_start(unit)
    assert argv[0].startswith(INSTALL_DIR)
    assert Path(argv[0]).name in SCRIPTS
    assert argv[-2:] == ["--config-file", "/etc/berth/berth.conf"]


def test_the_units_start_every_service() -> None:
    started = {" ".join([Path(a[0]).name, *a[1:-2]]) for a in map(_exec_start, UNITS)}
    assert started == {"berth serve", "berth-api", "berth-compute", "berth-wsproxy",
                       "berth-cni-daemon"}


def test_systemd_accepts_the_units(tmp_path: Path) -> None:
    """The units as installed with the scripts of this Python's environment."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    bin_dir = Path(sys.executable).parent
    missing = [a[0] for a in map(_exec_start, UNITS)
               if not (bin_dir / Path(a[0]).name).exists()]
    if missing:
        pytest.skip(f"berth's console scripts are not installed in {bin_dir}: {missing}")
    for unit in UNITS:
        (tmp_path / unit.name).write_text(unit.read_text().replace(INSTALL_DIR, f"{bin_dir}/"))
    done = subprocess.run([analyze, "verify", *sorted(map(str, tmp_path.iterdir()))],
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
