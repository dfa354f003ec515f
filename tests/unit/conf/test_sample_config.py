"""etc/berth.conf.sample is what ``oslo-config-generator --config-file
etc/oslo-config-generator/berth.conf`` writes today, and every option berth registers
is in it, once, with its help."""

from __future__ import annotations

import io
import tomllib
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest
from oslo_config import cfg, generator

import berth.conf
from berth.conf import cinder_client, glance_client, neutron, placement

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "etc" / "berth.conf.sample"
GENERATOR_CONF = ROOT / "etc" / "oslo-config-generator" / "berth.conf"
REGENERATE = "oslo-config-generator --config-file etc/oslo-config-generator/berth.conf"


def _declared_list_opts() -> EntryPoint:
    """The ``oslo.config.opts`` entry point ``berth`` as pyproject.toml declares it."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    value = project["entry-points"]["oslo.config.opts"]["berth"]
    return EntryPoint(name="berth", value=value, group="oslo.config.opts")


def _generate(monkeypatch: pytest.MonkeyPatch) -> str:
    """The generator's own code with its own settings file; only the entry point is
    taken from pyproject.toml rather than from the installed metadata, so that the
    test does not depend on how (or whether) this tree was installed."""
    loader = _declared_list_opts().load()
    # Only berth's own options: the libraries' groups depend on their installed
    # versions, which berth does not pin (see test_sample_is_current).
    monkeypatch.setattr(generator, "_get_raw_opts_loaders",
                        lambda namespaces: [("berth", loader)] if "berth" in namespaces else [])
    conf = cfg.ConfigOpts()
    generator.register_cli_opts(conf)
    conf(args=["--config-file", str(GENERATOR_CONF)])
    out = io.StringIO()
    generator.generate(conf, output_file=out)
    return out.getvalue()


def test_generator_settings_name_the_sample_and_the_namespace() -> None:
    conf = cfg.ConfigOpts()
    generator.register_cli_opts(conf)
    conf(args=["--config-file", str(GENERATOR_CONF)])
    assert conf.namespace == ["berth", "keystonemiddleware.auth_token", "oslo.policy"]
    assert conf.output_file == "etc/berth.conf.sample"


def test_entry_point_is_berth_conf_list_opts() -> None:
    assert _declared_list_opts().load() is berth.conf.list_opts


#: Groups of the sample that come from the libraries berth configures (the generator's
#: other namespaces): keystonemiddleware's and oslo.policy's.
LIBRARY_GROUPS = ("keystone_authtoken", "oslo_policy")


def _without_groups(text: str, groups: tuple[str, ...]) -> str:
    """``text`` (a sample) without the sections of ``groups``."""
    kept, skipping = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith("[") and line.rstrip().endswith("]"):
            skipping = line.strip()[1:-1] in groups
        if not skipping:
            kept.append(line)
    return "".join(kept)


def test_sample_is_current(monkeypatch: pytest.MonkeyPatch) -> None:
    """berth's own groups are exactly what the generator writes today; the libraries'
    groups are there, as their installed versions last wrote them."""
    expected = _generate(monkeypatch)
    assert "[DEFAULT]" in expected and "[websocket_proxy]" in expected
    sample = SAMPLE.read_text()
    assert all(f"\n[{group}]\n" in sample for group in LIBRARY_GROUPS), (
        f"etc/berth.conf.sample lacks the libraries' groups: run `{REGENERATE}`")
    assert _without_groups(sample, LIBRARY_GROUPS) == expected, (
        f"etc/berth.conf.sample is out of date: run `{REGENERATE}` and commit the result")


def _registered(conf: cfg.ConfigOpts) -> set[tuple[str, str]]:
    """(group, option) of every option registered on ``conf``, through its public
    mapping interface (a group's name maps to its options)."""
    out: set[tuple[str, str]] = set()
    for key in conf:
        value = conf[key]
        if isinstance(value, cfg.ConfigOpts.GroupAttr):
            out |= {(key, name) for name in value}
        else:
            out.add(("DEFAULT", key))
    return out


def test_list_opts_names_every_registered_option_exactly_once() -> None:
    conf = cfg.ConfigOpts()
    berth.conf.register_opts(conf)
    placement.register_openstack_opts(conf)   # registered late, for driver = openstack
    cinder_client.register_auth_opts(conf)     # registered late, by the cinder driver
    neutron.register_auth_opts(conf)           # registered late, by the cni driver
    glance_client.register_auth_opts(conf)     # registered late, by the glance driver
    listed = [(group, opt.dest) for group, opts in berth.conf.list_opts() for opt in opts]
    assert len(listed) == len(set(listed)), "an option is listed twice"
    assert set(listed) == _registered(conf) - _registered(cfg.ConfigOpts())  # oslo's own


def test_every_option_has_help() -> None:
    missing = [f"[{group}]{opt.dest}" for group, opts in berth.conf.list_opts()
               for opt in opts if not (opt.help or "").strip()]
    assert missing == []
