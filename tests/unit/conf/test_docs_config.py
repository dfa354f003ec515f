"""The example configurations of the docs pages (their ```ini blocks that no page test
writes to a file) load: every key is one of berth's options (or of
the libraries berth configures: keystonemiddleware with its password plugin, and
oslo.policy) and every value is valid for it (a comment after a value would be read as
part of it)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from oslo_config import cfg

import berth.conf

ROOT = Path(__file__).resolve().parents[3]


def _options(block: str) -> cfg.ConfigOpts:
    from keystoneauth1 import loading
    from keystonemiddleware import auth_token
    from oslo_policy import opts as policy_opts

    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    for group, opts in auth_token.list_opts() + policy_opts.list_opts():
        conf.register_opts(opts, group=group)
    if "[keystone_authtoken]" in block:   # the service user's auth_url is required
        conf.register_opts(loading.get_auth_plugin_conf_options("password"),
                           group="keystone_authtoken")
    if "[cinder_client]" in block:     # the cinder driver registers keystoneauth's at start
        from berth.conf import cinder_client
        cinder_client.register_auth_opts(conf)
        conf.register_opts(loading.get_auth_plugin_conf_options("password"),
                           group="cinder_client")
    if "[placement]" in block:         # so does [placement]driver = openstack
        from berth.conf import placement
        placement.register_openstack_opts(conf)
        conf.register_opts(loading.get_auth_plugin_conf_options("password"), group="placement")
    if "[glance_client]" in block:     # so does the glance image driver
        from berth.conf import glance_client
        glance_client.register_auth_opts(conf)
        conf.register_opts(loading.get_auth_plugin_conf_options("password"),
                           group="glance_client")
    if "[neutron]" in block:           # so does the cni network driver
        from berth.conf import neutron
        neutron.register_auth_opts(conf)
        conf.register_opts(loading.get_auth_plugin_conf_options("password"), group="neutron")
    return conf


BLOCKS = [block for page in sorted((ROOT / "docs").glob("*.md"))
          for block in re.findall(r"```ini\n(.*?)```", page.read_text(), re.DOTALL)]


@pytest.mark.parametrize("block", BLOCKS, ids=[f"block{i}" for i in range(len(BLOCKS))])
def test_the_docs_examples_are_valid_berth_confs(tmp_path: Path, block: str) -> None:
    assert len(BLOCKS) >= 6     # configuration's, Keystone's, Cinder's, Neutron's, ...
    conf_file = tmp_path / "berth.conf"
    conf_file.write_text(block)
    conf = _options(block)
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
