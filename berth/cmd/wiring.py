"""Builds berth's parts from the configuration. The only place (with the entry points)
that reads CONF."""

from __future__ import annotations

import ipaddress
import logging
import os
import random
import socket
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from oslo_config import cfg

from berth.cmd import neutron_wiring
from berth.cni.client import DaemonClient
from berth.common import exceptions as exc
from berth.compute.agent import AgentConfig, ComputeAgent
from berth.compute.capsules.docker.engine import DockerCapsules
from berth.compute.deps import AgentSettings, CapsuleEngine
from berth.compute.networking import ContainerNetworks
from berth.compute.periodic.inventory import InventorySettings
from berth.compute.volumes import ContainerVolumes
from berth.conf.cri import STANDARD_CNI_BIN_DIRS
from berth.db import registries
from berth.db.engine import Database, default_url
from berth.db.networks import SubnetPool
from berth.image.base import ImageStoreDriver
from berth.metrics.health import Readiness
from berth.placement.base import Placement
from berth.placement.requests import NodeReservations, unset_ratios
from berth.quota import QuotaEnforcer
from berth.quota.enforce import RESOURCES
from berth.rpc.base import Transport
from berth.runtime.base import RuntimeDriverError
from berth.volume.drivers import build_drivers

if TYPE_CHECKING:  # API-only parts are imported where they are built: berth-compute
    from berth.api.authtoken import IdentityCache, TokenValidator  # never loads the API
    from berth.api.state import ApiState  # (see build_api_state)
    from berth.metrics.http import HealthServer
    from berth.placement.embedded import EmbeddedPlacement
    from berth.scheduler.placement_inventories import ReportedInventories

LOG = logging.getLogger(__name__)


def database_url(conf: cfg.ConfigOpts) -> str:
    return conf.database.connection or default_url(conf.state_path)


def build_database(conf: cfg.ConfigOpts, upgrade: bool = True) -> Database:
    url = database_url(conf)
    if upgrade:
        from berth.db import migrate

        if not migrate.is_current(url):
            _upgrade_in_child(conf)
    return Database(url, pool_size=conf.database.max_pool_size,
                    echo=conf.database.connection_debug)


def _upgrade_in_child(conf: cfg.ConfigOpts) -> None:
    """Run ``berth db upgrade`` in a child process with the same configuration, so that
    Alembic is never loaded into this long-running one (see berth.db.migrate)."""
    import subprocess
    import sys

    args = [sys.executable, "-m", "berth.cmd.main"]
    for path in conf.config_file or []:
        args += ["--config-file", path]
    dirs = conf.config_dir or []
    for path in [dirs] if isinstance(dirs, str) else dirs:
        args += ["--config-dir", path]
    LOG.info("migrating the database (berth db upgrade)")
    done = subprocess.run(args + ["db", "upgrade"], check=False, stdout=subprocess.DEVNULL)
    if done.returncode != 0:
        raise SystemExit(f"berth: the database migration failed (exit {done.returncode}); "
                         f"run `berth db upgrade` to see why.")


def build_transport(conf: cfg.ConfigOpts) -> Transport:
    if conf.transport_url:
        from berth.rpc.oslo import OsloTransport

        return OsloTransport(conf.transport_url, conf.compute.topic, conf.config_file)
    from berth.rpc.inproc import InProcessTransport

    return InProcessTransport()


def build_runtime(conf: cfg.ConfigOpts):  # type: ignore[no-untyped-def]
    if conf.compute.runtime_driver == "simulated":
        from berth.runtime.simulated import SimulatedRuntime

        LOG.warning("[compute]runtime_driver = simulated: containers are simulated in "
                    "memory, for benchmarks only; nothing runs on this node")
        return SimulatedRuntime(start_latency=conf.compute.simulated_start_latency)
    from berth.runtime.docker import DockerRuntime

    d = conf.docker
    return DockerRuntime(base_url=d.api_url, version=d.docker_remote_api_version,
                         timeout=d.default_timeout, ca_file=d.ca_file, cert_file=d.cert_file,
                         key_file=d.key_file, insecure=d.api_insecure)


def _ratio(value: float | None, initial: float) -> float:
    return value if value is not None else initial


def node_reservations(conf: cfg.ConfigOpts) -> NodeReservations:
    """The ``[compute]`` reservations and ratios (a ratio left unset: its initial_*
    value): the agent's capacity and Placement inventory, and the API's stand-in for
    a node that reported no inventory."""
    c = conf.compute
    return NodeReservations(
        reserved_cpus=c.reserved_host_cpus, reserved_memory_mb=c.reserved_host_memory_mb,
        reserved_disk_mb=c.reserved_host_disk_mb,
        cpu_allocation_ratio=_ratio(c.cpu_allocation_ratio, c.initial_cpu_allocation_ratio),
        ram_allocation_ratio=_ratio(c.ram_allocation_ratio, c.initial_ram_allocation_ratio),
        disk_allocation_ratio=_ratio(c.disk_allocation_ratio, c.initial_disk_allocation_ratio))


def shared_provider_names(conf: cfg.ConfigOpts) -> tuple[str, ...]:
    """``[compute]host_shared_with_nova``: the names Nova's provider of this node may
    have (empty when not shared). Only OpenStack Placement is Nova's too."""
    if not conf.compute.host_shared_with_nova:
        return ()
    if conf.placement.driver != "openstack":
        LOG.warning("[compute]host_shared_with_nova is true but [placement]driver = %s "
                    "is berth's own: Nova cannot share it. The node reports to a provider "
                    "of its own; set [placement]driver = openstack (Nova's Placement) to "
                    "share Nova's.", conf.placement.driver)
        return ()
    from berth.placement.report import shared_provider_names as names

    return names(conf.host, socket.gethostname(), socket.getfqdn())


def quota_defaults(conf: cfg.ConfigOpts) -> dict[str, int]:
    """``[quota]``: the limits of a project that has none of its own nor a class's."""
    return {k: int(conf.quota[k]) for k in RESOURCES}


def build_networks(conf: cfg.ConfigOpts, db: Database, daemon_url: str | None = None,
                   daemon_client: DaemonClient | None = None) -> ContainerNetworks | None:
    """``[network]driver``: local (plugged by the CNI daemon at ``daemon_url``, by
    default ``[cni_daemon]cni_daemon_host:cni_daemon_port``, or through
    ``daemon_client``: the one of a daemon in this process), cni, kuryr (Docker's
    kuryr-libnetwork plugin) or docker (None)."""
    c = conf.cni_daemon
    url = daemon_url or f"http://{c.cni_daemon_host}:{c.cni_daemon_port}"
    if conf.network.driver == "cni":
        return neutron_wiring.networks(conf, db, url)
    if conf.network.driver == "kuryr":
        return neutron_wiring.kuryr_networks(conf, db, build_runtime(conf).api_client)
    if conf.network.driver != "local":
        return None
    client = daemon_client or DaemonClient(url, timeout=float(c.vif_active_timeout) + 30)
    return ContainerNetworks(db, client, masquerade=conf.network.local_masquerade)


def build_agent(conf: cfg.ConfigOpts, db: Database, transport: Transport,
                networks_url: str | None = None,
                networks_client: DaemonClient | None = None) -> ComputeAgent:
    settings = AgentSettings(
        host=conf.host, default_pull_policy=conf.image_pull_policy.lower(),
        default_registry=conf.docker.default_registry,
        default_registry_username=conf.docker.default_registry_username,
        default_registry_password=conf.docker.default_registry_password,
        default_runtime=conf.container_runtime,
        default_memory_swap=conf.default_memory_swap,
        execute_timeout=conf.docker.execute_timeout,
        task_state_timeout=conf.compute.task_state_timeout,
        create_task_timeout=conf.compute.create_task_timeout,
        database_patience=conf.compute.database_patience,
        resume_container_state=conf.compute.resume_container_state,
        registry_key=registry_key(conf), sandbox_image=conf.sandbox_image,
        sandbox_pull_policy=conf.sandbox_image_pull_policy.lower(),
        init_container_timeout=conf.init_container_timeout,
        remount_container_volume=conf.compute.remount_container_volume,
        cri_restart_backoff=(conf.cri.restart_backoff_initial, conf.cri.restart_backoff_max),
        cni_bin_dirs=tuple(dict.fromkeys(d for d in (conf.cri.cni_bin_dir,
                                                     *STANDARD_CNI_BIN_DIRS) if d)))
    inventory = InventorySettings(
        host=conf.host, reservations=node_reservations(conf),
        reserve_disk_for_image=conf.compute.reserve_disk_for_image,
        enable_cpu_pinning=conf.compute.enable_cpu_pinning,
        shared_provider_names=shared_provider_names(conf),
        ratios_unset=unset_ratios(conf.compute.cpu_allocation_ratio,
                                  conf.compute.ram_allocation_ratio,
                                  conf.compute.disk_allocation_ratio))
    config = AgentConfig(settings=settings, inventory=inventory,
                         availability_zone=conf.default_availability_zone,
                         action_workers=conf.compute.action_workers,
                         periodic_interval_max=conf.periodic_interval_max,
                         sync_container_state_interval=conf.sync_container_state_interval,
                         service_down_time=conf.service_down_time)
    return ComputeAgent(config, db, build_runtime(conf), transport,
                        placement=build_placement(conf, db),
                        quota=QuotaEnforcer(quota_defaults(conf)),
                        networks=build_networks(conf, db, networks_url, networks_client),
                        volumes=build_volumes(conf, db),
                        capsules=build_capsule_engine(conf),
                        image_stores=build_image_stores(conf),
                        image_driver_list=tuple(d.lower() for d in conf.image_driver_list))


def build_image_stores(conf: cfg.ConfigOpts) -> dict[str, ImageStoreDriver]:
    """The image stores ``[DEFAULT]image_driver_list`` names (glance); docker is the
    engine's own pull. Nothing is asked of Glance before a container needs it, and
    a node without Glance does not load its driver (nor tarfile, which it reads
    images with)."""
    names = {d.lower() for d in conf.image_driver_list}
    if "glance" not in names:
        return {}
    from berth.image.glance.driver import GlanceImageDriver

    return {"glance": GlanceImageDriver.from_conf(conf)}


def build_capsule_engine(conf: cfg.ConfigOpts) -> CapsuleEngine:
    """``[DEFAULT]capsule_driver``: what runs capsules, chosen here once: cri (pods on
    containerd's CRI plugin at ``[cri]containerd_socket``, which must answer) or docker
    (a sandbox Docker container and its members)."""
    if conf.capsule_driver != "cri":
        return DockerCapsules()
    # Imported only for it: the cri driver's modules are about 0.3 MiB of an agent
    # that runs its capsules on Docker.
    from berth.compute.capsules.cri.engine import CriCapsules

    c = conf.cri
    if not os.path.exists(c.containerd_socket):
        raise SystemExit(f"berth: [DEFAULT]capsule_driver = cri, but there is no containerd "
                         f"socket at [cri]containerd_socket = {c.containerd_socket}: start "
                         f"containerd with its CRI plugin, or set the option to its socket.")
    try:
        from berth.runtime.cri.client import CriRuntime
    except ImportError as err:
        raise SystemExit(f"berth: [DEFAULT]capsule_driver = cri needs the CRI stubs "
                         f"({err}): pip install 'berth[cri]'.") from err
    log_root = c.log_root or os.path.join(conf.state_path, "cri-logs")
    pods = CriRuntime(c.containerd_socket, c.request_timeout, c.cgroup_parent, log_root)
    try:
        LOG.info("capsules run on %s at %s", pods.version(), c.containerd_socket)
    except RuntimeDriverError as err:
        pods.close()
        raise SystemExit(f"berth: [DEFAULT]capsule_driver = cri: {err.msg}") from err
    if c.cni_conf_dir and conf.network.driver == "local":
        from berth.cni import conflist

        try:
            conflist.write(c.cni_conf_dir, c.cni_bin_dir or None)
        except OSError as err:
            pods.close()
            raise SystemExit(f"berth: cannot give containerd berth's CNI configuration "
                             f"([cri]cni_conf_dir = {c.cni_conf_dir}, cni_bin_dir = "
                             f"{c.cni_bin_dir}): {err}") from err
    return CriCapsules(pods)


def build_volumes(conf: cfg.ConfigOpts, db: Database) -> ContainerVolumes:
    return ContainerVolumes(db, conf.host, build_drivers(conf),
                            timeout_available=conf.volume.timeout_wait_volume_available,
                            timeout_deleted=conf.volume.timeout_wait_volume_deleted)


def build_placement(conf: cfg.ConfigOpts, db: Database) -> Placement:
    """``[placement]driver``: embedded (berth's database) or openstack (REST API)."""
    if conf.placement.driver == "openstack":
        from berth.placement.openstack import OpenStackPlacement

        return OpenStackPlacement.from_conf(conf, "placement")
    from berth.placement.embedded import EmbeddedPlacement

    return EmbeddedPlacement(db)


def build_api_state(conf: cfg.ConfigOpts, db: Database, transport: Transport) -> ApiState:
    # Imported here, not at module level, so that berth-compute (which imports this
    # module) never loads the API's schemas, the scheduler or the RPC client.
    from berth.api.schemas.container import CreateLimits
    from berth.api.state import ApiSettings, ApiState
    from berth.cmd.tls import console_base_url
    from berth.db import nodes
    from berth.rpc.client import ComputeAPI
    from berth.scheduler import filters, weighers
    from berth.scheduler.filter_scheduler import FilterScheduler
    from berth.scheduler.host_cache import HostStateCache
    from berth.scheduler.host_state import STATIC_MAX_AGE, HostStateReads

    down_time = conf.service_down_time
    settings = ApiSettings(
        max_limit=conf.api.max_limit, service_down_time=down_time,
        task_state_timeout=conf.compute.task_state_timeout,
        max_request_body_size=conf.api.max_request_body_size,
        body_timeout=conf.api.body_timeout,
        enable_image_validation=conf.api.enable_image_validation,
        unique_container_name_scope=conf.compute.unique_container_name_scope,
        default_registry=conf.docker.default_registry,
        create_limits=CreateLimits(
            min_memory=conf.minimum_memory, max_memory=conf.maximum_memory,
            min_cpu=conf.minimum_cpus, max_cpu=conf.maximum_cpus,
            min_disk=conf.minimum_disk, max_disk=conf.maximum_disk,
            default_cpu=conf.default_cpu, default_memory=conf.default_memory,
            image_driver_list=tuple(conf.image_driver_list),
            default_image_driver=conf.default_image_driver),
        console_base_url=console_base_url(conf),
        console_token_ttl=conf.websocket_proxy.token_ttl,
        quota_defaults=quota_defaults(conf),
        registry_key=registry_key(conf),
        default_availability_zone=conf.default_availability_zone,
        sandbox_image=conf.sandbox_image,
        network_driver=conf.network.driver,
        subnet_pool=check_subnet_pools(conf),
        volume_driver=conf.volume.driver,
        local_volume_default_size=conf.volume.local_volume_default_size,
        volume_delete_timeout=conf.volume.timeout_wait_volume_deleted)
    reservations = node_reservations(conf)
    elsewhere = reported_inventories(conf, db)
    up_hosts = nodes.UpHosts(db, down_time)
    scheduler = FilterScheduler(
        HostStateCache(HostStateReads(db, reservations, down_time,
                                      conf.default_availability_zone, elsewhere,
                                      # 0: every create reads all of it
                                      STATIC_MAX_AGE if conf.scheduler.host_state_max_age
                                      else 0.0, services_seen=up_hosts.learn),
                       conf.scheduler.host_state_max_age),
        filters.by_name(list(conf.scheduler.enabled_filters), conf.default_schedule_zone),
        weighers.by_name(list(conf.scheduler.enabled_weighers), {
            "RAMWeigher": conf.scheduler.ram_weight_multiplier,
            "CPUWeigher": conf.scheduler.cpu_weight_multiplier}),
        rng=random.Random(),
        weighed_percentage=conf.scheduler.percentage_of_nodes_to_score)
    compute = ComputeAPI(transport, up_hosts, call_timeout=conf.compute.rpc_call_timeout)
    return ApiState(db=db, compute=compute, scheduler=scheduler, settings=settings,
                    up_hosts=up_hosts, volume_drivers=build_drivers(conf),
                    neutron=neutron_wiring.neutron_api(conf),
                    readiness=Readiness({"database": db.ping, "rpc": transport.check}),
                    placement=_placement_in_database(conf, db))


def _placement_in_database(conf: cfg.ConfigOpts, db: Database) -> EmbeddedPlacement | None:
    """The embedded Placement, for the API to allocate in; None with OpenStack's."""
    if conf.placement.driver == "openstack":
        return None
    from berth.placement.embedded import EmbeddedPlacement

    return EmbeddedPlacement(db)


def reported_inventories(conf: cfg.ConfigOpts, db: Database) -> ReportedInventories | None:
    """With OpenStack Placement the nodes' inventories are there, not in the database:
    the scheduler asks for them (``ReportedInventories``). None with the embedded
    Placement, or when the API has no credentials for Placement (then the API's own
    [compute] options stand in for every node's, as they did)."""
    if conf.placement.driver != "openstack":
        return None
    from berth.placement.base import PlacementError
    from berth.scheduler.placement_inventories import ReportedInventories

    try:
        return ReportedInventories(build_placement(conf, db))
    except PlacementError as err:
        LOG.warning("the scheduler cannot read the nodes' inventories from Placement (%s); "
                    "it assumes the API's [compute] options for every node", err.msg)
        return None


def build_health_server(conf: cfg.ConfigOpts, agent: ComputeAgent) -> HealthServer | None:
    """berth-compute's /metrics, /healthz and /readyz listener; None when
    ``[compute]metrics_port`` is 0 (disabled)."""
    if not conf.compute.metrics_port:
        return None
    from berth.metrics.http import HealthServer

    return HealthServer(conf.compute.metrics_host, conf.compute.metrics_port,
                        Readiness(agent.readiness_checks()))


def registry_key(conf: cfg.ConfigOpts) -> bytes:
    """The key that encrypts registry passwords (see berth.db.registries)."""
    return registries.load_key(conf.auth_encryption_key, conf.state_path)


def api_listen_address(conf: cfg.ConfigOpts) -> str:
    if conf.api.host_ip:
        return conf.api.host_ip
    return "127.0.0.1" if conf.api.auth_strategy == "noauth" else conf.my_ip


def is_loopback(address: str) -> bool:
    """Does ``address`` (a name or an IP) resolve to a loopback address? False when it
    does not resolve."""
    try:
        return ipaddress.ip_address(socket.gethostbyname(address)).is_loopback
    except (OSError, ValueError):
        return False


def warn_if_exposed(conf: cfg.ConfigOpts, address: str) -> None:
    if conf.api.auth_strategy != "noauth":
        return
    if not is_loopback(address):
        LOG.warning("!!! The API listens on %s:%s WITHOUT AUTHENTICATION (auth_strategy = "
                    "noauth): anyone who can reach this address controls your containers. "
                    "Set [api]host_ip = 127.0.0.1 or [api]auth_strategy = keystone.",
                    address, conf.api.port)


_FILE_OPTS = ("--config-file", "--config-dir")


def config_files_first(argv: Sequence[str]) -> list[str]:
    """``berth db upgrade --config-file F`` as well as ``berth --config-file F db
    upgrade``: argparse knows the global options only before a sub-command, so the
    config file options move to the front (their order among themselves is kept)."""
    front: list[str] = []
    rest: list[str] = []
    args = list(argv)
    i = 0
    while i < len(args):
        if args[i] in _FILE_OPTS and i + 1 < len(args):
            front += args[i:i + 2]
            i += 2
            continue
        joined = args[i].startswith(tuple(o + "=" for o in _FILE_OPTS))
        (front if joined else rest).append(args[i])
        i += 1
    return front + rest


def read_config(argv: Sequence[str] | None, conf: cfg.ConfigOpts, **kwargs) -> None:  # type: ignore[no-untyped-def]
    """Parse the command line and the files it names. ``kwargs``: ConfigOpts's
    (``prog``, ``description`` ...); every command answers ``--version`` and ends
    its ``--help`` with which configuration it reads."""
    from berth.cmd import helptext
    from berth.version import version_string

    args = config_files_first(argv if argv is not None else sys.argv[1:])
    kwargs.setdefault("epilog", helptext.CONFIG)
    conf(args=args, project="berth", default_config_files=[], version=version_string(),
         **kwargs)


def parse_config(argv: Sequence[str] | None, conf: cfg.ConfigOpts, **kwargs) -> None:  # type: ignore[no-untyped-def]
    """``read_config`` (kept as the entry points' one call: checks of the whole
    configuration go here)."""
    read_config(argv, conf, **kwargs)


def build_keystone_auth(conf: cfg.ConfigOpts) -> tuple[TokenValidator, IdentityCache] | None:
    """The API's token validation when ``[api]auth_strategy = keystone`` (else None):
    keystonemiddleware reading ``[keystone_authtoken]``, and berth's cache of validated
    identities for its ``token_cache_time``."""
    if conf.api.auth_strategy != "keystone":
        return None
    from berth.api.authtoken import IdentityCache, TokenValidator

    validator = TokenValidator(conf)
    return validator, IdentityCache(float(conf.keystone_authtoken.token_cache_time))


def check_subnet_pools(conf: cfg.ConfigOpts) -> SubnetPool:
    """``[network]``'s pools, checked now: a pool that cannot work is refused at
    start-up (``SystemExit`` saying which option and why), not at the first network a
    user asks for."""
    pool = SubnetPool(conf.network.local_subnet_pool, conf.network.local_subnet_prefix,
                      conf.network.local_masquerade, conf.network.local_subnet_pool_v6)
    if conf.network.driver == "local":
        try:
            pool.subnet6(pool.subnets()[0])
        except (exc.BerthError, ValueError) as err:
            raise SystemExit(f"berth: {getattr(err, 'msg', err)}") from err
    return pool
