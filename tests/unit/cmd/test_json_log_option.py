"""``[DEFAULT]use_json`` reaches the log set-up of every long-running command: a log
shipper reading one daemon's journal must not meet text lines among the JSON ones."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import pytest
from oslo_config import cfg

import berth.conf


class _SetUp(Exception):
    """Raised by the stand-in log set-up: the command got as far as logging."""


COMMANDS = [("berth.cmd.main", ["serve"]), ("berth.cmd.api", []),
            ("berth.cmd.compute", []), ("berth.cmd.wsproxy", []),
            ("berth.cmd.cni_daemon", [])]


@pytest.mark.parametrize(("module_name", "argv"), COMMANDS,
                         ids=[m.rsplit(".", 1)[1] for m, _ in COMMANDS])
@pytest.mark.parametrize("use_json", [True, False])
def test_the_command_logs_as_use_json_says(module_name: str, argv: list[str],
                                           use_json: bool, tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    module = importlib.import_module(module_name)
    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    monkeypatch.setattr(module, "CONF", conf)
    seen: dict[str, Any] = {}

    def set_up(**kwargs: Any) -> None:
        seen.update(kwargs)
        raise _SetUp

    monkeypatch.setattr(module.log, "setup", set_up)
    conf_file = tmp_path / "berth.conf"
    conf_file.write_text(f"[DEFAULT]\nuse_json = {str(use_json).lower()}\n")
    with pytest.raises(_SetUp):
        module.main(["--config-file", str(conf_file), *argv])
    assert seen.get("use_json") is use_json
