"""Every command answers ``--version`` with the package's version and ``--help`` with
what it runs, where it listens and which configuration it reads. Each runs on a
fresh ConfigOpts (the process-wide CONF is left alone)."""

from __future__ import annotations

import contextlib
import importlib
import sqlite3
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from oslo_config import cfg

import berth.conf

ROOT = Path(__file__).resolve().parents[3]
PYPROJECT_VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
READS_CONFIG = "only the files named with --config-file FILE and --config-dir"


def _run(module_name: str, argv: list[str], monkeypatch: pytest.MonkeyPatch,
         capsys: pytest.CaptureFixture[str]) -> str:
    module = importlib.import_module(module_name)
    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    monkeypatch.setattr(module, "CONF", conf)
    with pytest.raises(SystemExit) as exited:
        module.main(argv)
    assert exited.value.code == 0
    return " ".join(capsys.readouterr().out.split())   # argparse's line breaks undone


COMMANDS = [
    # module, arguments, what the help must say
    ("berth.cmd.main", ["--help"],
     ["usage: berth ", "`berth serve` runs all of it", "berth db upgrade"]),
    ("berth.cmd.main", ["serve", "--help"],
     ["usage: berth serve", "REST API", "compute agent", "console proxy",
      "default 127.0.0.1:9517", ":6784", "unix:///var/run/docker.sock",
      "[database]connection"]),
    ("berth.cmd.main", ["db", "--help"], ["usage: berth db ", "migrations"]),
    ("berth.cmd.main", ["db", "upgrade", "--help"],
     ["usage: berth db upgrade", "Applies every migration", "[database]connection"]),
    ("berth.cmd.main", ["db", "version", "--help"],
     ["usage: berth db version", "migration revision", "[database]connection"]),
    ("berth.cmd.api", ["--help"],
     ["usage: berth-api ", "REST API", "scheduler", "default 127.0.0.1:9517",
      "[DEFAULT]transport_url", "berth db upgrade"]),
    ("berth.cmd.compute", ["--help"],
     ["usage: berth-compute ", "compute agent", "RabbitMQ", "[docker]api_url",
      "berth db upgrade"]),
    ("berth.cmd.wsproxy", ["--help"],
     ["usage: berth-wsproxy ", "console WebSocket proxy", ":6784", "[docker]api_url"]),
    ("berth.cmd.cni_daemon", ["--help"],
     ["usage: berth-cni-daemon ", "local networks", "127.0.0.1:9036",
      "[cni_daemon]registry_file", "root"]),
    ("berth.cmd.status", ["--help"],
     ["usage: berth-status ", "upgrade check", "migration head", "RabbitMQ",
      "0 all passed, 1 a warning, 2 a failure"]),
]


@pytest.mark.parametrize(("module_name", "argv", "phrases"), COMMANDS,
                         ids=[" ".join([m.rsplit(".", 1)[1], *a]) for m, a, _ in COMMANDS])
def test_help_says_what_runs_where_it_listens_and_what_it_reads(
        module_name: str, argv: list[str], phrases: list[str],
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    text = _run(module_name, argv, monkeypatch, capsys)
    missing = [p for p in phrases + [READS_CONFIG] if p not in text]
    assert missing == [], text


@pytest.mark.parametrize("module_name", ["berth.cmd.main", "berth.cmd.api",
                                         "berth.cmd.compute", "berth.cmd.wsproxy",
                                         "berth.cmd.status", "berth.cmd.cni_daemon"])
def test_version_is_the_package_version(
        module_name: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(module_name, ["--version"], monkeypatch, capsys) == PYPROJECT_VERSION


def test_berth_version_in_a_process_of_its_own() -> None:
    done = subprocess.run([sys.executable, "-m", "berth.cmd.main", "--version"], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, PYPROJECT_VERSION), done.stderr


def test_config_file_still_works_after_the_sub_command(tmp_path: Path) -> None:
    """``berth db version --config-file F`` reads F (the files move before the
    sub-command, where argparse knows them): only F's database holds this revision."""
    path = tmp_path / "marked.sqlite"
    with contextlib.closing(sqlite3.connect(path)) as db, db:
        db.execute("CREATE TABLE alembic_version (version_num VARCHAR(32))")
        db.execute("INSERT INTO alembic_version VALUES ('from-the-file')")
    conf_file = tmp_path / "berth.conf"
    conf_file.write_text(f"[database]\nconnection = sqlite:///{path}\n")
    done = subprocess.run([sys.executable, "-m", "berth.cmd.main", "db", "version",
                           "--config-file", str(conf_file)], cwd=ROOT,
                          capture_output=True, text=True, timeout=60, check=False)
    assert (done.returncode, done.stdout.strip()) == (0, "from-the-file"), done.stderr


def test_berth_cni_answers_help_and_version_and_otherwise_is_a_plugin(
        capsys: pytest.CaptureFixture[str]) -> None:
    from berth.cmd import cni

    for argv, phrase in ((["--help"], "CNI 1.0 plugin"), (["--version"], PYPROJECT_VERSION)):
        with pytest.raises(SystemExit) as exited:
            cni.main(argv)
        assert exited.value.code == 0
        assert phrase in " ".join(capsys.readouterr().out.split())
    done = subprocess.run([sys.executable, "-m", "berth.cmd.cni"], cwd=ROOT, input="",
                          env={"CNI_COMMAND": "VERSION", "PATH": "/usr/bin:/bin",
                               "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and '"supportedVersions"' in done.stdout, done.stderr
