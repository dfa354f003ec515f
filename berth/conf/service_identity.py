"""berth's own identity towards an OpenStack service, in that service's option group.

``[cinder_client]``, ``[glance_client]`` and ``[neutron]`` each hold their own options
and keystoneauth's ``auth_type`` and ``auth_section`` (the plugin's own options are
registered when it is loaded). The keystoneauth ones are registered late, by the driver
that calls the service (``register_auth_opts``): importing keystoneauth1 costs every
process about 1.4 MiB, and oslo.config keeps the file's values of an option registered
late. ``IdentityGroup`` gives such a module its three functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from oslo_config import cfg


def keystoneauth_opts() -> list[cfg.Opt]:
    """keystoneauth1's ``auth_type`` and ``auth_section``."""
    from keystoneauth1 import loading

    return loading.get_auth_common_conf_options()


@dataclass(frozen=True)
class IdentityGroup:
    """An option group with the service's own options and berth's identity in it."""

    group: str
    opts: list[cfg.Opt]

    def all_opts(self) -> list[cfg.Opt]:
        """Every option of the group (oslo-config-generator)."""
        return self.opts + keystoneauth_opts()

    def register_opts(self, conf: cfg.ConfigOpts) -> None:
        """The service's own options, at start-up."""
        conf.register_opts(self.opts, group=self.group)

    def register_auth_opts(self, conf: cfg.ConfigOpts) -> None:
        """Before reading berth's own identity in the group from ``conf`` (idempotent)."""
        conf.register_opts(keystoneauth_opts(), group=self.group)
