"""berth's configuration: oslo.config, with Zun's groups, option names and defaults.

One module per option group. ``CONF`` is the process-wide object; read it in ``cmd/``
and in constructors, never deep inside a flow.
"""

from oslo_config import cfg

from berth.conf import (
    api,
    cinder_client,
    cni_daemon,
    compute,
    cri,
    database,
    default,
    docker,
    glance,
    glance_client,
    network,
    neutron,
    neutron_client,
    placement,
    quota,
    scheduler,
    ssl,
    volume,
    websocket_proxy,
)

CONF = cfg.CONF

_MODULES = (default, api, compute, database, docker, scheduler, websocket_proxy, quota,
            placement, cni_daemon, network, neutron, neutron_client, volume, cinder_client,
            cri, ssl, glance, glance_client)


def register_opts(conf: cfg.ConfigOpts) -> None:
    for module in _MODULES:
        module.register_opts(conf)


def list_opts() -> list[tuple[str, list[cfg.Opt]]]:
    """For oslo-config-generator: every group and its options."""
    return [(m.GROUP, list(m.all_opts() if hasattr(m, "all_opts") else m.OPTS))
            for m in _MODULES]


register_opts(CONF)
