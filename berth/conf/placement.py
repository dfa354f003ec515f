"""[placement]: where the compute agent records node inventory and container
allocations.

``driver = embedded`` (default) keeps them in berth's own database. ``driver =
openstack`` uses OpenStack Placement over its REST API, either through Keystone
(``auth_type`` and the plugin's options, e.g. ``auth_type = password``, ``auth_url``,
``username``, ``password``, ``project_name``, ``user_domain_name``,
``project_domain_name``; plus ``region_name``, ``valid_interfaces``) or, with no
``auth_type``, with the static ``token`` sent as ``X-Auth-Token`` to ``endpoint``
(Placement's ``auth_strategy = noauth2`` accepts the token ``admin``).

The session options (``cafile``, ``insecure``, ``timeout``, ...), the auth options and
the adapter options are keystoneauth1's own, so they read as in every OpenStack
service. ``endpoint`` and ``token`` are those of keystoneauth's ``admin_token`` plugin.
"""

from __future__ import annotations

import copy

from oslo_config import cfg

GROUP = "placement"

_DEFAULTS = {"service_type": "placement", "valid_interfaces": ["internal", "public"]}


def _adapter_opts() -> list[cfg.Opt]:
    from keystoneauth1 import loading

    out = []
    for opt in loading.get_adapter_conf_options(include_deprecated=False):
        if opt.dest in _DEFAULTS:
            opt = copy.deepcopy(opt)
            opt.default = _DEFAULTS[opt.dest]
        out.append(opt)
    return out


OWN_OPTS = [
    cfg.StrOpt("driver", default="embedded", choices=["embedded", "openstack"],
               help="embedded: inventory and allocations in berth's database (no extra "
                    "service). openstack: OpenStack Placement over its REST API."),
]


def keystoneauth_opts() -> list[cfg.Opt]:
    """keystoneauth1's options of the group. Registered only for ``driver =
    openstack`` (``register_openstack_opts``): importing keystoneauth1 costs every
    process about 1.4 MiB, and oslo.config keeps the file's values of an option
    registered late."""
    from keystoneauth1 import loading

    return (loading.get_auth_plugin_conf_options("admin_token")      # endpoint, token
            + loading.get_auth_common_conf_options()                  # auth_type, auth_section
            + loading.get_session_conf_options()
            + _adapter_opts())


def all_opts() -> list[cfg.Opt]:
    """Every option of the group (oslo-config-generator)."""
    return OWN_OPTS + keystoneauth_opts()


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OWN_OPTS, group=GROUP)


def register_openstack_opts(conf: cfg.ConfigOpts, group: str = GROUP) -> None:
    """Before reading the OpenStack Placement settings of ``conf`` (idempotent)."""
    conf.register_opts(keystoneauth_opts(), group=group)
