"""Builds berth's parts from the configuration. The only place (with the entry points)
that reads CONF."""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Sequence

from oslo_config import cfg

from berth.api.schemas.container import CreateLimits
from berth.api.state import ApiSettings, ApiState
from berth.compute.agent import AgentConfig, ComputeAgent
from berth.compute.deps import AgentSettings
from berth.compute.periodic.inventory import InventorySettings
from berth.db import migrate, nodes
from berth.db.engine import Database, default_url
from berth.rpc.base import Transport
from berth.rpc.client import ComputeAPI
from berth.scheduler import filters
from berth.scheduler.filter_scheduler import FilterScheduler
from berth.scheduler.host_state import Ratios, load_host_states

LOG = logging.getLogger(__name__)


def database_url(conf: cfg.ConfigOpts) -> str:
    return conf.database.connection or default_url(conf.state_path)


def build_database(conf: cfg.ConfigOpts, upgrade: bool = True) -> Database:
    url = database_url(conf)
    if upgrade:
        migrate.upgrade(url)
    return Database(url, pool_size=conf.database.max_pool_size,
                    echo=conf.database.connection_debug)


def build_transport(conf: cfg.ConfigOpts) -> Transport:
    if conf.transport_url:
        from berth.rpc.oslo import OsloTransport

        return OsloTransport(conf.transport_url, conf.compute.topic, conf.config_file)
    from berth.rpc.inproc import InProcessTransport

    return InProcessTransport()


def build_runtime(conf: cfg.ConfigOpts):  # type: ignore[no-untyped-def]
    from berth.runtime.docker import DockerRuntime

    d = conf.docker
    return DockerRuntime(base_url=d.api_url, version=d.docker_remote_api_version,
                         timeout=d.default_timeout, ca_file=d.ca_file, cert_file=d.cert_file,
                         key_file=d.key_file, insecure=d.api_insecure)


def _ratio(value: float | None, initial: float) -> float:
    return value if value is not None else initial


def ratios(conf: cfg.ConfigOpts) -> Ratios:
    c = conf.compute
    return Ratios(cpu=_ratio(c.cpu_allocation_ratio, c.initial_cpu_allocation_ratio),
                  ram=_ratio(c.ram_allocation_ratio, c.initial_ram_allocation_ratio),
                  reserved_cpus=c.reserved_host_cpus,
                  reserved_memory_mib=c.reserved_host_memory_mb)


def build_agent(conf: cfg.ConfigOpts, db: Database, transport: Transport) -> ComputeAgent:
    r = ratios(conf)
    settings = AgentSettings(
        host=conf.host, default_pull_policy=conf.image_pull_policy.lower(),
        default_registry=conf.docker.default_registry,
        default_registry_username=conf.docker.default_registry_username,
        default_registry_password=conf.docker.default_registry_password,
        default_runtime=conf.container_runtime)
    inventory = InventorySettings(
        host=conf.host, reserved_cpus=r.reserved_cpus, reserved_memory_mib=r.reserved_memory_mib,
        cpu_allocation_ratio=r.cpu, ram_allocation_ratio=r.ram,
        reserve_disk_for_image=conf.compute.reserve_disk_for_image,
        enable_cpu_pinning=conf.compute.enable_cpu_pinning)
    config = AgentConfig(settings=settings, inventory=inventory,
                         availability_zone=conf.default_availability_zone,
                         action_workers=conf.compute.action_workers,
                         periodic_interval_max=conf.periodic_interval_max)
    return ComputeAgent(config, db, build_runtime(conf), transport)


def build_api_state(conf: cfg.ConfigOpts, db: Database, transport: Transport) -> ApiState:
    down_time = conf.service_down_time
    settings = ApiSettings(
        max_limit=conf.api.max_limit, service_down_time=down_time,
        enable_image_validation=conf.api.enable_image_validation,
        unique_container_name_scope=conf.compute.unique_container_name_scope,
        default_registry=conf.docker.default_registry,
        create_limits=CreateLimits(
            min_memory=conf.minimum_memory, max_memory=conf.maximum_memory,
            min_cpu=conf.minimum_cpus, max_cpu=conf.maximum_cpus,
            min_disk=conf.minimum_disk, max_disk=conf.maximum_disk,
            default_cpu=conf.default_cpu, default_memory=conf.default_memory,
            image_driver_list=tuple(conf.image_driver_list),
            default_image_driver=conf.default_image_driver))
    r = ratios(conf)
    scheduler = FilterScheduler(
        lambda: load_host_states(db, r, down_time, conf.default_availability_zone),
        filters.by_name(list(conf.scheduler.enabled_filters), conf.default_schedule_zone))
    compute = ComputeAPI(transport,
                         lambda host: host in nodes.up_compute_hosts(db, down_time),
                         call_timeout=conf.compute.rpc_call_timeout)
    return ApiState(db=db, compute=compute, scheduler=scheduler, settings=settings)


def api_listen_address(conf: cfg.ConfigOpts) -> str:
    if conf.api.host_ip:
        return conf.api.host_ip
    return "127.0.0.1" if conf.api.auth_strategy == "noauth" else conf.my_ip


def warn_if_exposed(conf: cfg.ConfigOpts, address: str) -> None:
    if conf.api.auth_strategy != "noauth":
        return
    try:
        loopback = ipaddress.ip_address(socket.gethostbyname(address)).is_loopback
    except (OSError, ValueError):
        loopback = False
    if not loopback:
        LOG.warning("!!! The API listens on %s:%s WITHOUT AUTHENTICATION (auth_strategy = "
                    "noauth): anyone who can reach this address controls your containers. "
                    "Set [api]host_ip = 127.0.0.1 or [api]auth_strategy = keystone.",
                    address, conf.api.port)


def parse_config(argv: Sequence[str] | None, conf: cfg.ConfigOpts, **kwargs) -> None:  # type: ignore[no-untyped-def]
    conf(args=list(argv) if argv is not None else None, project="berth",
         default_config_files=[], **kwargs)
    if conf.api.auth_strategy == "keystone":
        raise SystemExit("berth: [api]auth_strategy = keystone is not supported yet; "
                         "use noauth (the default) behind a trusted network.")
