"""What a capsule's sandbox publishes and resolves with, read from its rows, for both
drivers (the docker driver's sandbox container, the cri driver's pod):

* the members' ``hostPort``\\ s (stored by the API with the port they publish, in the
  member's ``exposed_ports``: ``{"8080/tcp": {"hostPort": 18080}}``): Docker's port
  bindings on the sandbox, or the pod's port mappings that containerd hands to the
  CNI ``portmap`` plugin (``berth.cni.conflist``);
* the template's ``spec.dnsConfig`` (the capsule's ``dns_config``): the sandbox's
  resolv.conf, which its members share.

A host port that another capsule of the node publishes fails the create before
anything is made (``taken_host_ports``): Docker would refuse it at the sandbox's
start, but the CNI ``portmap`` plugin adds its rules without looking, and the newer
pod would silently take the port's traffic. Two creates racing for one port on one
node are not ordered by this check (the docker driver's engine still refuses the
second).
"""

from __future__ import annotations

from collections.abc import Iterable

from berth.compute.states import Status
from berth.db import capsules, containers
from berth.db.engine import Database
from berth.db.models import Container
from berth.runtime import base as rt


def published_ports(members: Iterable[Container]) -> tuple[rt.PublishedPort, ...]:
    """Every member port that asks for a host port, in port order."""
    found: dict[tuple[int, str], rt.PublishedPort] = {}
    for member in members:
        for key, value in (member.exposed_ports or {}).items():
            host_port = (value or {}).get("hostPort") if isinstance(value, dict) else None
            if not host_port:
                continue
            number, _, protocol = str(key).partition("/")
            port = rt.PublishedPort(container_port=int(number), host_port=int(host_port),
                                    protocol=(protocol or "tcp").lower())
            found[(port.host_port, port.protocol)] = port
    return tuple(found[k] for k in sorted(found))


def dns_config(capsule: Container) -> rt.DnsConfig | None:
    """The capsule's resolver; None when its template set none (the node's)."""
    config = capsule.dns_config or None
    if not config:
        return None
    options = tuple(f"{o['name']}:{o['value']}" if o.get("value") not in (None, "")
                    else str(o["name"]) for o in config.get("options") or [])
    return rt.DnsConfig(servers=tuple(config.get("nameservers") or ()),
                        searches=tuple(config.get("searches") or ()), options=options)


def taken_host_ports(db: Database, host: str, capsule: Container,
                     wanted: Iterable[rt.PublishedPort]) -> dict[rt.PublishedPort, str]:
    """Which of ``wanted`` another live capsule of ``host`` publishes: each with that
    capsule's name (or uuid)."""
    wanted_keys = {(p.host_port, p.protocol): p for p in wanted}
    if not wanted_keys:
        return {}
    others = [c for c in containers.list_by_host(db, host, capsules.CAPSULE)
              if c.uuid != capsule.uuid
              and c.status not in (Status.ERROR.value, Status.DELETED.value)]
    taken: dict[rt.PublishedPort, str] = {}
    members_of = capsules.members_of_many(db, [c.id for c in others])
    for other in others:
        inits, members = members_of[other.id]
        for port in published_ports(inits + members):
            mine = wanted_keys.get((port.host_port, port.protocol))
            if mine is not None:
                taken[mine] = other.name or other.uuid
    return taken
