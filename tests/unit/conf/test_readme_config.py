"""The README's example configuration loads: every key is one of berth's options and
every value is valid for it (a comment after a value would be read as part of it)."""

from __future__ import annotations

import re
from pathlib import Path

from oslo_config import cfg

import berth.conf

ROOT = Path(__file__).resolve().parents[3]


def test_the_readme_example_is_a_valid_berth_conf(tmp_path: Path) -> None:
    blocks = re.findall(r"```ini\n(.*?)```", (ROOT / "README.md").read_text(), re.DOTALL)
    assert len(blocks) == 1
    conf_file = tmp_path / "berth.conf"
    conf_file.write_text(blocks[0])
    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    conf(args=["--config-file", str(conf_file)], default_config_files=[])
    group = "DEFAULT"
    for line in blocks[0].splitlines():
        if line.startswith("["):
            group = line.strip("[]")
        elif line and not line.startswith("#"):
            name, _, text = (part.strip() for part in line.partition("="))
            section = conf if group == "DEFAULT" else conf[group]
            assert name in section, f"[{group}]{name} is not a berth option"
            value = section[name]          # raises when the text is not a valid value
            assert "#" not in str(value), f"[{group}]{name} = {text}: a comment in the value"
