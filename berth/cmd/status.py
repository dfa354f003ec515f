"""``berth-status upgrade check``: oslo.upgradecheck's command, as every OpenStack
service has one. Run it after installing a new berth and ``berth db upgrade``, before
restarting the services, and whenever a deployment looks wrong; its exit status is
oslo.upgradecheck's (0 success, 1 warning, 2 failure, 255 a check raised). It only
reads: the database, RabbitMQ's login, Placement and the configuration."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from oslo_config import cfg
from oslo_upgradecheck import upgradecheck
from oslo_upgradecheck.upgradecheck import Code, Result

from berth import conf as berth_conf
from berth.cmd import helptext, wiring
from berth.conf import CONF
from berth.status import database, messaging, options, placement, unstorable_rows

if TYPE_CHECKING:
    from berth.placement.openstack import OpenStackPlacement


def _reported(check: Callable[[UpgradeChecks], Result]) -> Callable[[UpgradeChecks], Result]:
    """An option the check reads that holds a value it does not accept is that check's
    Failure (the option values check names them all), rather than an error that ends
    every check (oslo.upgradecheck's exit status 255)."""
    @functools.wraps(check)
    def run(self: UpgradeChecks) -> Result:
        try:
            return check(self)
        except cfg.ConfigFileValueError as err:
            return Result(Code.FAILURE, f"Not checked: an option it reads has a value "
                                        f"berth does not accept ({options.reason(err)}); "
                                        f"see the option values check.")
    return run


class UpgradeChecks(upgradecheck.UpgradeCommands):
    """The checks, in the order they print; each reads its options from ``conf``."""

    display_title = "berth upgrade check"

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        self.conf = conf

    def _database(self) -> Result:
        return database.check_schema(wiring.database_url(self.conf))

    def _agents(self) -> Result:
        return database.check_agents(wiring.database_url(self.conf),
                                     self.conf.service_down_time)

    def _unstorable(self) -> Result:
        return unstorable_rows.check_unstorable_rows(wiring.database_url(self.conf))

    def _messaging(self) -> Result:
        return messaging.check_messaging(self.conf.transport_url)

    def _placement(self) -> Result:
        def connect() -> OpenStackPlacement:
            from berth.placement.openstack import OpenStackPlacement

            return OpenStackPlacement.from_conf(self.conf, "placement")

        return placement.check_placement(self.conf.placement.driver, connect)

    def _deprecated(self) -> Result:
        return options.check_deprecated(self.conf, berth_conf.list_opts())

    def _values(self) -> Result:
        return options.check_values(self.conf, berth_conf.list_opts())

    def _unsafe(self) -> Result:
        c = self.conf
        address = wiring.api_listen_address(c)
        return options.check_unsafe([
            options.keystone_without_service_user(c.api.auth_strategy,
                                                  _authtoken_auth_type(c)),
            options.exposed_noauth(c.api.auth_strategy, address, c.api.port,
                                   wiring.is_loopback(address)),
            options.docker_plain_tcp(_docker_problem(c)),
            options.shared_key_missing(c.transport_url, c.auth_encryption_key),
            options.tls_refused(_tls_problems(c)),
            options.console_cert_unused(_unused_console_cert(c)),
            options.nova_sharing_without_placement(c.compute.host_shared_with_nova,
                                                   c.placement.driver),
            options.glance_without_identity(c.default_image_driver, c.image_driver_list,
                                            c.api.auth_strategy, _glance_auth_type(c),
                                            c.glance_client.endpoint_override),
        ])

    _upgrade_checks = (
        ("Database schema", _reported(_database)),
        ("Compute agents", _reported(_agents)),
        ("Rows with unstorable strings", _reported(_unstorable)),
        ("RabbitMQ", _reported(_messaging)),
        ("Placement", _reported(_placement)),
        ("Options berth ignores", _reported(_deprecated)),
        ("Option values", _values),
        ("Unsafe or refused settings", _reported(_unsafe)),
    )


def _glance_auth_type(conf: cfg.ConfigOpts) -> str | None:
    """``[glance_client]auth_type`` (keystoneauth's, registered as the glance driver
    registers it)."""
    from berth.conf import glance_client

    glance_client.register_auth_opts(conf)
    return conf.glance_client.auth_type  # type: ignore[no-any-return]


def _authtoken_auth_type(conf: cfg.ConfigOpts) -> str | None:
    """``[keystone_authtoken]auth_type``; its options are keystonemiddleware's, registered
    here as the API registers them."""
    if conf.api.auth_strategy != "keystone":
        return None
    from keystonemiddleware import auth_token

    for group, opts in auth_token.list_opts():
        conf.register_opts(opts, group=group)
    value: str | None = conf.keystone_authtoken.auth_type
    return value


def _docker_problem(conf: cfg.ConfigOpts) -> str | None:
    """Why the console proxy would refuse ``[docker]api_url``, or None."""
    from berth.console.docker_socket import engine_address

    d = conf.docker
    try:
        engine_address(d.api_url, ca_file=d.ca_file, cert_file=d.cert_file,
                       key_file=d.key_file, insecure=d.api_insecure)
    except (ValueError, OSError) as err:
        return str(err)
    return None


def _tls_problems(conf: cfg.ConfigOpts) -> list[str]:
    """Why the API's or the console proxy's TLS settings would stop them."""
    from berth.cmd import tls
    from berth.common.tls import TLSConfigError

    problems = []
    for build in (tls.api_context, tls.console_context):
        try:
            build(conf)
        except TLSConfigError as err:
            problems.append(str(err))
    return problems


def _unused_console_cert(conf: cfg.ConfigOpts) -> str | None:
    from berth.cmd import tls

    return tls.unused_console_cert(conf)


def main(argv: Sequence[str] | None = None) -> int:
    checks = UpgradeChecks(CONF)
    upgradecheck.register_cli_options(CONF, checks)
    # Not parse_config: a setting every other command refuses is reported here instead.
    wiring.read_config(argv if argv is not None else sys.argv[1:], CONF,
                       prog="berth-status", description=helptext.STATUS)
    upgradecheck.CONF = CONF   # where oslo.upgradecheck's check() reads --json
    return upgradecheck.run(CONF)


if __name__ == "__main__":
    sys.exit(main())
