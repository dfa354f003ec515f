"""Tables. Names and columns follow Zun's records (model.md) so that the wire views
and an operator's knowledge carry over; berth adds only what its fixes need."""

from __future__ import annotations

import datetime as dt
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    select,
)
from sqlalchemy.orm import Mapped, column_property, mapped_column

# The embedded Placement's tables live in their own module; importing it here puts
# them on Base.metadata whenever the models are loaded (create_all, autogenerate).
from berth.db import placement_models as _placement_models  # noqa: F401
from berth.db.base import Base, Timestamp, TimestampMixin
from berth.network.addresses import Addresses
from berth.network.metadata import CniMetadata


class Container(TimestampMixin, Base):
    """A container, a capsule or a capsule member (``container_type`` 0/1/2/3)."""

    __tablename__ = "container"
    __table_args__ = (
        UniqueConstraint("uuid", name="uniq_container0uuid"),
        Index("container_host_idx", "host"),
        Index("container_project_idx", "project_id"),
        Index("container_name_idx", "name"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    container_id: Mapped[str | None] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(255))
    project_id: Mapped[str | None] = mapped_column(String(255))
    user_id: Mapped[str | None] = mapped_column(String(255))
    image: Mapped[str | None] = mapped_column(String(255))
    image_driver: Mapped[str | None] = mapped_column(String(255))
    image_pull_policy: Mapped[str | None] = mapped_column(Text)
    command: Mapped[Any] = mapped_column(JSON, nullable=True)
    entrypoint: Mapped[Any] = mapped_column(JSON, nullable=True)
    cpu: Mapped[float | None] = mapped_column(Float)
    cpu_policy: Mapped[str | None] = mapped_column(String(255), default="shared")
    cpuset: Mapped[Any] = mapped_column(JSON, nullable=True)
    memory: Mapped[str | None] = mapped_column(String(255))
    disk: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[str | None] = mapped_column(String(20))
    status_reason: Mapped[str | None] = mapped_column(Text)
    status_detail: Mapped[str | None] = mapped_column(String(50))
    task_state: Mapped[str | None] = mapped_column(String(20))
    environment: Mapped[Any] = mapped_column(JSON, nullable=True)
    workdir: Mapped[str | None] = mapped_column(String(255))
    ports: Mapped[Any] = mapped_column(JSON, nullable=True)
    exposed_ports: Mapped[Any] = mapped_column(JSON, nullable=True)
    #: A capsule's DNS options for its sandbox: {"nameservers": [...], "searches":
    #: [...], "options": [{"name": ..., "value": ...}]} (berth; Zun has none).
    dns_config: Mapped[Any] = mapped_column(JSON, nullable=True)
    hostname: Mapped[str | None] = mapped_column(String(63))
    labels: Mapped[Any] = mapped_column(JSON, nullable=True)
    annotations: Mapped[Any] = mapped_column(JSON, nullable=True)
    addresses: Mapped[Addresses | None] = mapped_column(JSON, nullable=True)
    security_groups: Mapped[Any] = mapped_column(JSON, nullable=True)
    host: Mapped[str | None] = mapped_column(String(255))
    restart_policy: Mapped[Any] = mapped_column(JSON, nullable=True)
    interactive: Mapped[bool] = mapped_column(Boolean, default=False)
    tty: Mapped[bool] = mapped_column(Boolean, default=False)
    auto_remove: Mapped[bool] = mapped_column(Boolean, default=False)
    auto_heal: Mapped[bool] = mapped_column(Boolean, default=False)
    runtime: Mapped[str | None] = mapped_column(String(32))
    privileged: Mapped[bool] = mapped_column(Boolean, default=False)
    healthcheck: Mapped[Any] = mapped_column(JSON, nullable=True)
    websocket_url: Mapped[str | None] = mapped_column(String(255))
    websocket_token: Mapped[str | None] = mapped_column(String(255))
    started_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    registry_id: Mapped[int | None] = mapped_column(Integer)
    #: The row's networks and their plug (``berth.network.metadata``).
    cni_metadata: Mapped[CniMetadata | None] = mapped_column(JSON, nullable=True)
    capsule_id: Mapped[int | None] = mapped_column(
        Integer, ForeignKey("container.id", ondelete="CASCADE"))
    container_type: Mapped[int] = mapped_column(Integer, default=0, nullable=False)
    #: When the current task_state must be over (berth: a lost cast cannot leave a
    #: container busy forever; the owner's sync, or the API, fails it after this).
    task_deadline: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class ComputeNode(TimestampMixin, Base):
    __tablename__ = "compute_node"
    __table_args__ = (
        UniqueConstraint("hostname", name="uniq_compute_node0hostname"),
        UniqueConstraint("rp_uuid", name="uniq_compute_node0rp_uuid"),
    )

    uuid: Mapped[str] = mapped_column(String(36), primary_key=True)
    rp_uuid: Mapped[str | None] = mapped_column(String(36))
    hostname: Mapped[str] = mapped_column(String(255), nullable=False)
    numa_topology: Mapped[Any] = mapped_column(JSON, nullable=True)
    mem_total: Mapped[int] = mapped_column(Integer, default=0)
    mem_free: Mapped[int] = mapped_column(Integer, default=0)
    mem_available: Mapped[int] = mapped_column(Integer, default=0)
    mem_used: Mapped[int] = mapped_column(Integer, default=0)
    total_containers: Mapped[int] = mapped_column(Integer, default=0)
    running_containers: Mapped[int] = mapped_column(Integer, default=0)
    paused_containers: Mapped[int] = mapped_column(Integer, default=0)
    stopped_containers: Mapped[int] = mapped_column(Integer, default=0)
    cpus: Mapped[int] = mapped_column(Integer, default=0)
    cpu_used: Mapped[float] = mapped_column(Float, default=0.0)
    architecture: Mapped[str | None] = mapped_column(String(32))
    os_type: Mapped[str | None] = mapped_column(String(32))
    os: Mapped[str | None] = mapped_column(String(64))
    kernel_version: Mapped[str | None] = mapped_column(String(128))
    labels: Mapped[Any] = mapped_column(JSON, nullable=True)
    disk_total: Mapped[int] = mapped_column(Integer, default=0)
    disk_used: Mapped[int] = mapped_column(Integer, default=0)
    disk_quota_supported: Mapped[bool] = mapped_column(Boolean, default=False)
    runtimes: Mapped[Any] = mapped_column(JSON, nullable=True)
    enable_cpu_pinning: Mapped[bool] = mapped_column(Boolean, default=False)
    pci_stats: Mapped[str | None] = mapped_column(Text)


class ZunService(TimestampMixin, Base):
    __tablename__ = "zun_service"
    __table_args__ = (UniqueConstraint("host", "binary", name="uniq_zun_service0host0binary"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    host: Mapped[str] = mapped_column(String(255), nullable=False)
    binary: Mapped[str] = mapped_column(String(255), nullable=False)
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    disabled_reason: Mapped[str | None] = mapped_column(String(255))
    last_seen_up: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    forced_down: Mapped[bool] = mapped_column(Boolean, default=False)
    report_count: Mapped[int] = mapped_column(Integer, default=0)
    availability_zone: Mapped[str | None] = mapped_column(String(255))


class ContainerAction(TimestampMixin, Base):
    __tablename__ = "container_actions"
    __table_args__ = (
        Index("container_uuid_idx", "container_uuid"),
        Index("container_actions_req_idx", "container_uuid", "request_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    action: Mapped[str | None] = mapped_column(String(255))
    container_uuid: Mapped[str] = mapped_column(
        String(36), ForeignKey("container.uuid", ondelete="CASCADE"), nullable=False)
    request_id: Mapped[str | None] = mapped_column(String(255))
    user_id: Mapped[str | None] = mapped_column(String(255))
    project_id: Mapped[str | None] = mapped_column(String(255))
    start_time: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    finish_time: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    message: Mapped[str | None] = mapped_column(String(255))


class ContainerActionEvent(TimestampMixin, Base):
    __tablename__ = "container_actions_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    event: Mapped[str | None] = mapped_column(String(255))
    action_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("container_actions.id", ondelete="CASCADE"), nullable=False)
    start_time: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    finish_time: Mapped[dt.datetime | None] = mapped_column(Timestamp)
    result: Mapped[str | None] = mapped_column(String(255))
    traceback: Mapped[str | None] = mapped_column(Text)
    details: Mapped[str | None] = mapped_column(Text)


class ExecInstance(TimestampMixin, Base):
    """An interactive exec session (console proxy)."""

    __tablename__ = "exec_instance"
    __table_args__ = (UniqueConstraint("container_id", "exec_id",
                                       name="uniq_exec_instance0container_id_exec_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    container_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("container.id", ondelete="CASCADE"), nullable=False)
    exec_id: Mapped[str] = mapped_column(String(255), nullable=False)
    token: Mapped[str | None] = mapped_column(String(255))
    url: Mapped[str | None] = mapped_column(String(255))
    #: "<height>x<width>" last asked for a console on a CRI streaming server (the
    #: console proxy sends it on the stream's resize channel).
    tty_size: Mapped[str | None] = mapped_column(String(32))


class ConsoleToken(TimestampMixin, Base):
    """A single-use, expiring console token (berth: Zun's never expire). Only a hash
    of the token is stored."""

    __tablename__ = "console_token"
    __table_args__ = (UniqueConstraint("token_hash", name="uniq_console_token0hash"),
                      Index("console_token_container_idx", "container_uuid"))

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(128), nullable=False)
    container_uuid: Mapped[str] = mapped_column(
        String(36), ForeignKey("container.uuid", ondelete="CASCADE"), nullable=False)
    exec_id: Mapped[str | None] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(16), nullable=False)      # attach | exec
    expires_at: Mapped[dt.datetime] = mapped_column(Timestamp, nullable=False)
    used_at: Mapped[dt.datetime | None] = mapped_column(Timestamp)


class Image(TimestampMixin, Base):
    __tablename__ = "image"
    __table_args__ = (UniqueConstraint("repo", "tag", "host", name="uniq_image0repotaghost"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False, unique=True)
    image_id: Mapped[str | None] = mapped_column(String(255))
    project_id: Mapped[str | None] = mapped_column(String(255))
    user_id: Mapped[str | None] = mapped_column(String(255))
    repo: Mapped[str | None] = mapped_column(String(255))
    tag: Mapped[str | None] = mapped_column(String(255))
    size: Mapped[str | None] = mapped_column(String(255))
    host: Mapped[str | None] = mapped_column(String(255))


class Registry(TimestampMixin, Base):
    __tablename__ = "registry"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False, unique=True)
    project_id: Mapped[str | None] = mapped_column(String(255))
    user_id: Mapped[str | None] = mapped_column(String(255))
    name: Mapped[str | None] = mapped_column(String(255))
    domain: Mapped[str] = mapped_column(String(255), nullable=False)
    username: Mapped[str | None] = mapped_column(String(255))
    password: Mapped[str | None] = mapped_column(Text)   # encrypted at rest


class Quota(TimestampMixin, Base):
    __tablename__ = "quotas"
    __table_args__ = (UniqueConstraint("project_id", "resource",
                                       name="uniq_quotas0project_id0resource"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    project_id: Mapped[str] = mapped_column(String(255), nullable=False)
    resource: Mapped[str] = mapped_column(String(255), nullable=False)
    hard_limit: Mapped[int] = mapped_column(Integer, nullable=False)


class ProjectQuotaLock(Base):
    """One row per project whose quota was ever enforced: what an enforcement locks
    (``SELECT ... FOR UPDATE``) so that reading the project's usage and the write that
    grows it are one atomic step for every API worker and agent (PostgreSQL, MariaDB;
    SQLite's write transactions are serialised already). See ``berth.quota``."""

    __tablename__ = "project_quota_locks"

    project_id: Mapped[str] = mapped_column(String(255), primary_key=True)


class QuotaClass(TimestampMixin, Base):
    __tablename__ = "quota_classes"
    __table_args__ = (UniqueConstraint("class_name", "resource",
                                       name="uniq_quota_classes0class_name0resource"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    class_name: Mapped[str] = mapped_column(String(255), nullable=False)
    resource: Mapped[str] = mapped_column(String(255), nullable=False)
    hard_limit: Mapped[int] = mapped_column(Integer, nullable=False)


# The container view shows the uuid of the container's registry while the row keeps
# Zun's integer registry_id: a read-only column loaded with every container row (no
# extra query). Set it when creating a row (expire_on_flush=False keeps that value,
# which the view reads from the detached object).
Container.registry_uuid = column_property(  # type: ignore[attr-defined]
    select(Registry.uuid).where(Registry.id == Container.registry_id)
    .correlate_except(Registry).scalar_subquery(), expire_on_flush=False)


def registry_uuid_of(registry_id: Any) -> Any:
    """The same for a row read or written without the ORM: the uuid of the registry
    whose id is ``registry_id`` (a column of the statement's source, the table or a
    CTE of its UPDATE), as a scalar subquery labelled ``registry_uuid``."""
    return (select(Registry.uuid).where(Registry.id == registry_id)
            .scalar_subquery().label("registry_uuid"))


class Network(TimestampMixin, Base):
    """A network containers are plugged into. Zun's record (model.md §6.6) with the
    columns a local network needs: its subnet (and IPv6 subnet), gateway and bridge.
    ``default_of`` holds the project id of the project whose default network it is (unique, so two
    first creates of a project cannot make two defaults); ``subnet`` is unique, so
    two networks cannot be carved from one slice of the pool."""

    __tablename__ = "network"
    __table_args__ = (
        UniqueConstraint("uuid", name="uniq_network0uuid"),
        UniqueConstraint("subnet", name="uniq_network0subnet"),
        UniqueConstraint("subnet_v6", name="uniq_network0subnet_v6"),
        UniqueConstraint("default_of", name="uniq_network0default_of"),
        UniqueConstraint("neutron_net_id", "host", name="uniq_network0neutron_net_id0host"),
        Index("network_project_idx", "project_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    name: Mapped[str | None] = mapped_column(String(255))
    neutron_net_id: Mapped[str | None] = mapped_column(String(255))
    #: Zun: the Docker network's id. Local networks have none (no Docker network).
    network_id: Mapped[str | None] = mapped_column(String(255))
    host: Mapped[str | None] = mapped_column(String(255))
    project_id: Mapped[str | None] = mapped_column(String(255))
    user_id: Mapped[str | None] = mapped_column(String(255))
    subnet: Mapped[str] = mapped_column(String(43), nullable=False)
    gateway: Mapped[str] = mapped_column(String(39), nullable=False)
    #: A dual-stack network's IPv6 subnet (its gateway mirrors ``gateway``); None: IPv4 only.
    subnet_v6: Mapped[str | None] = mapped_column(String(43))
    bridge: Mapped[str] = mapped_column(String(15), nullable=False)
    shared: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    default_of: Mapped[str | None] = mapped_column(String(255))


class OverlayAddress(TimestampMixin, Base):
    """One address of a local network that spans nodes (``[network]local_overlay``),
    held by one attachment on one node: the network-wide IPAM (``(network_uuid,
    address)`` is unique, so two nodes cannot hand out one address) and what every
    other node's CNI daemon writes into its VXLAN forwarding and neighbour tables
    (``berth.network.overlay``) and its security-group rules. ``owner`` is the
    attachment's key (network/container/ifname); ``tunnel_ip`` the holding node's
    underlay address."""

    __tablename__ = "overlay_address"
    __table_args__ = (
        UniqueConstraint("network_uuid", "address", name="uniq_overlay_address0network0address"),
        UniqueConstraint("network_uuid", "owner", name="uniq_overlay_address0network0owner"),
        Index("overlay_address_host_idx", "host"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    network_uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    address: Mapped[str] = mapped_column(String(39), nullable=False)
    owner: Mapped[str] = mapped_column(String(255), nullable=False)
    mac: Mapped[str] = mapped_column(String(17), nullable=False)
    host: Mapped[str] = mapped_column(String(255), nullable=False)
    tunnel_ip: Mapped[str] = mapped_column(String(39), nullable=False)
    #: The attachment's policy (``berth.network.policy.Policy.to_dict``): every node's
    #: security-group rules count it among its groups' members. None: no policy.
    policy: Mapped[Any] = mapped_column(JSON, nullable=True)


class Volume(TimestampMixin, Base):
    """A volume (Zun's record, model.md §6.4): a Cinder volume (``cinder_volume_id``)
    or a local one, which is either a filesystem in a sparse file on ``host`` (with a
    ``size`` in GiB and, when a mount named it, a ``name`` unique in its project) or
    an injected file (``contents``, base64). ``host`` is where it is attached: a local
    volume's data lives there, so its containers are scheduled there."""

    __tablename__ = "volume"
    __table_args__ = (
        UniqueConstraint("uuid", name="uniq_volume0uuid"),
        UniqueConstraint("volume_provider", "project_id", "name",
                         name="uniq_volume0provider0project0name"),
        Index("volume_host_idx", "host"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    name: Mapped[str | None] = mapped_column(String(255))
    project_id: Mapped[str | None] = mapped_column(String(255))
    user_id: Mapped[str | None] = mapped_column(String(255))
    cinder_volume_id: Mapped[str | None] = mapped_column(String(36))
    volume_provider: Mapped[str] = mapped_column(String(36), nullable=False)
    connection_info: Mapped[str | None] = mapped_column(Text)
    host: Mapped[str | None] = mapped_column(String(255))
    auto_remove: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
    contents: Mapped[str | None] = mapped_column(Text)
    size: Mapped[int | None] = mapped_column(Integer)


class VolumeMapping(TimestampMixin, Base):
    """One volume mounted at one path of one container (model.md §6.4). Written by the
    API with the container's row (berth: Zun's agent writes them while attaching, so a
    crash between left volumes nobody pointed at); removed with the container. A
    volume with no mapping left is detached, and removed when ``auto_remove``."""

    __tablename__ = "volume_mapping"
    __table_args__ = (
        UniqueConstraint("uuid", name="uniq_volume_mapping0uuid"),
        Index("volume_mapping_container_idx", "container_uuid"),
        Index("volume_mapping_volume_idx", "volume_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    project_id: Mapped[str | None] = mapped_column(String(255))
    user_id: Mapped[str | None] = mapped_column(String(255))
    volume_id: Mapped[int] = mapped_column(
        Integer, ForeignKey("volume.id", ondelete="CASCADE"), nullable=False)
    container_path: Mapped[str] = mapped_column(String(255), nullable=False)
    container_uuid: Mapped[str] = mapped_column(String(36), nullable=False)
    read_only: Mapped[bool] = mapped_column(Boolean, default=False, nullable=False)
