"""The README's example configurations load: every key is one of berth's options and
every value is valid for it (a comment after a value would be read as part of it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from oslo_config import cfg

import berth.conf

ROOT = Path(__file__).resolve().parents[3]


BLOCKS = re.findall(r"```ini\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_the_readme_examples_are_valid_berth_confs(tmp_path: Path, block: str) -> None:
    conf_file = tmp_path / "berth.conf"
    conf_file.write_text(block)
    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    if "[cinder_client]" in block:     # the driver registers keystoneauth's at start
        from keystoneauth1 import loading

        from berth.conf import cinder_client
        cinder_client.register_auth_opts(conf)
        conf.register_opts(loading.get_auth_plugin_conf_options("password"),
                           group="cinder_client")
    conf(args=["--config-file", str(conf_file)], default_config_files=[])
    group = "DEFAULT"
    for line in block.splitlines():
        if line.startswith("["):
            group = line.strip("[]")
        elif line and not line.startswith("#"):
            name, _, text = (part.strip() for part in line.partition("="))
            section = conf if group == "DEFAULT" else conf[group]
            assert name in section, f"[{group}]{name} is not a berth option"
            value = section[name]          # raises when the text is not a valid value
            assert "#" not in str(value), f"[{group}]{name} = {text}: a comment in the value"
