"""berth's options, registered and parsed with no file, for unit tests of what is
built from them."""

from __future__ import annotations

from oslo_config import cfg

from berth.conf import register_opts


def conf_with(group: str, **values: object) -> cfg.ConfigOpts:
    """Every option at its default, but ``values`` in ``group``."""
    conf = cfg.ConfigOpts()
    register_opts(conf)
    conf(args=[])
    for name, value in values.items():
        conf.set_override(name, value, group=group)
    return conf
