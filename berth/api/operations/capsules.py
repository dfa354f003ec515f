"""Capsules (api-v1.md §8): what the API does before it casts to the chosen node.

A create checks the template, the project's quota (a capsule's members count as
containers; its cpu and memory as the capsule's sums), schedules the capsule as one
request of its sums, then writes the capsule row, its members' rows and the create
action in one transaction and casts ``container_create`` with the capsule, as Zun.
A capsule that cannot be scheduled is still a 202, in Error saying why.
"""

from __future__ import annotations

import itertools
import logging
import uuid as uuidlib
from collections.abc import Mapping
from typing import Any

from fastapi import Request

from berth.api.links import links
from berth.api.microversions import APIVersion
from berth.api.operations import networks as networks_api
from berth.api.operations import placing
from berth.api.operations import quotas as quotas_api
from berth.api.operations import volumes as volumes_api
from berth.api.operations.cast_deadlines import awaited, written_with_actions
from berth.api.operations.containers import cast_create
from berth.api.schemas.capsule import ParsedCapsule, parse_template
from berth.api.state import ApiState
from berth.api.views import container_view, format_time, shown_keys
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute import status_writes
from berth.compute.states import Status
from berth.db import actions, capsules, containers
from berth.db.models import Container
from berth.policies import enforcer as policy
from berth.scheduler.base import RequestSpec

LOG = logging.getLogger(__name__)

_NEW_VIEW_FROM = APIVersion(1, 32)
VIEW_KEYS = ("uuid", "user_id", "project_id", "created_at", "updated_at", "addresses",
             "status", "status_reason", "name", "labels", "annotations", "memory", "cpu")


def create(state: ApiState, ctx: RequestContext, body: Any) -> Container:
    policy.authorize(ctx, "capsule:create")
    parsed = parse_template(body, state.settings.create_limits,
                            policy.allows(ctx, "container:create:image_pull_policy"))
    capsule = parsed.capsule
    deltas = {"containers": len(parsed.members), "cpu": capsule["cpu"],
              "memory": int(capsule["memory"]),
              "disk": volumes_api.new_gib(state, ctx, [
                  (v.get("source") or f"{capsule['name']}-{v['name']}", v.get("size"))
                  for v in parsed.volumes])}
    quota = quotas_api.check_deltas(state, ctx.project_id, deltas)
    values: dict[str, Any] = dict(
        capsule, project_id=ctx.project_id, user_id=ctx.user_id,
        **status_writes.status_values(Status.CREATING, was=status_writes.NEW_ROW, uuid=None,
                                      by="capsule create"),
        image=state.settings.sandbox_image,
        image_driver="docker")
    # The pod's networks (the cri driver plugs them: capsules.cri.network).
    requested_networks = networks_api.resolve_for_create(state, ctx, parsed.nets or None)
    if requested_networks:
        values["cni_metadata"] = networks_api.metadata_of(requested_networks)
    # The members' ports are the capsule's: they share its network namespace, and a
    # local network's rules open them on it (capsules.network).
    ports: dict[str, Any] = {p: {} for m in parsed.members
                             for p in (m.get("exposed_ports") or {})}
    if ports:
        values["exposed_ports"] = ports
    # The members' images come from [DEFAULT]default_image_driver, as in Zun (a
    # member names no driver); the sandbox's from the sandbox image driver.
    members = [dict(m, uuid=str(uuidlib.uuid4()), project_id=ctx.project_id,
                    user_id=ctx.user_id, **status_writes.status_values(
                        Status.CREATING, was=status_writes.NEW_ROW, uuid=None,
                        by="capsule create"),
                    image_driver=state.settings.create_limits.default_image_driver)
               for m in parsed.members]
    return volumes_api.created_with(
        state, ctx, lambda: volumes_api.plan_capsule(state, ctx, str(capsule["name"]),
                                                     parsed.volumes, parsed.mounts),
        lambda mounts: _schedule_and_cast(state, ctx, parsed, values, members, mounts, quota))


def _schedule_and_cast(state: ApiState, ctx: RequestContext, parsed: ParsedCapsule,
                       values: dict[str, Any], members: list[dict[str, Any]],
                       mounts: volumes_api.MountPlan, quota: Any) -> Container:
    capsule = parsed.capsule
    spec = RequestSpec(cpu=float(capsule["cpu"]), memory_mib=int(capsule["memory"]),
                       availability_zone=parsed.availability_zone,
                       requested_host=mounts.host)
    member_uuids = [str(m["uuid"]) for m in members]

    def insert(host: str, guard: placing.Guard) -> Container:
        # The capsule, its members, its create action, its volumes and their mappings
        # in one transaction.
        return capsules.create(state.db, awaited(state.settings, dict(values, host=host)),
                               [dict(m, host=host) for m in members],
                               along=lambda uuid: itertools.chain(
                                   [actions.new_action(ctx, uuid, "create")],
                                   mounts.rows(ctx, member_uuids)),
                               guard=guard)

    try:
        selection = state.scheduler.select_destination(spec)
        selection, row = placing.insert_placed(state, spec, selection, quota, insert)
    except exc.NoValidHost as err:
        mounts.undo(state, ctx)
        row = capsules.create(state.db, dict(values, **status_writes.status_values(
                                  Status.ERROR, was=status_writes.NEW_ROW, uuid=None,
                                  by="capsule create", status_reason=err.msg)), members,
                              along=lambda uuid: [actions.new_action(ctx, uuid, "create",
                                                                     failed=True)],
                              guard=quota)
        LOG.warning("capsule %s not scheduled: %s", row.uuid, err.msg)
        return row
    with container_context(row.uuid):
        row = cast_create(state, ctx, row, selection.host, selection.limits, [], run=False,
                          requested_volumes=mounts.wire(member_uuids))
        LOG.info("capsule %s (%d members) accepted on host %s", row.name,
                 len(members), selection.host)
    return row


def get(state: ApiState, ctx: RequestContext, ident: str, rule: str) -> Container:
    """By uuid or name, if the caller passes ``rule`` on it; admins see every
    project's, others only their own (another project's is a 404)."""
    try:
        row = containers.get(state.db, ident, None if ctx.is_admin else ctx.project_id,
                             container_type=capsules.CAPSULE)
    except exc.ContainerNotFound:
        raise exc.CapsuleNotFound(capsule=ident) from None
    policy.authorize(ctx, rule, row)
    return row


def delete(state: ApiState, ctx: RequestContext, ident: str) -> None:
    """Mark it Deleting and cast the delete to its node (which takes the task over);
    a capsule never placed has only rows to remove."""
    row = get(state, ctx, ident, "capsule:delete")
    if not row.host:
        LOG.info("capsule %s was never placed; removing its rows", row.uuid)
        capsules.destroy(state.db, row.uuid)
        return
    state.compute.check_host(row)
    row = written_with_actions(state, ctx, row.uuid, status_writes.status_values(
        Status.DELETING, was=row.status, uuid=row.uuid, by="capsule delete"), ("delete",))
    state.compute.container_delete(ctx, row, True)


def list_views(state: ApiState, rows: list[Container], *, ctx: RequestContext,
               version: APIVersion, request: Request | None = None) -> list[dict[str, Any]]:
    """``view`` of each row of a list (their members read in one query), each with its
    ``links`` (given the request) as Zun's capsule list gives them (seen against Zun 18,
    tests/compat)."""
    members = capsules.members_of_many(state.db, [row.id for row in rows])
    return [view(state, row, ctx=ctx, version=version, members=members[row.id],
                 request=request) for row in rows]


def view(state: ApiState, row: Container, *, ctx: RequestContext, version: APIVersion,
         request: Request | None = None,
         members: tuple[list[Container], list[Container]] | None = None) -> dict[str, Any]:
    """The capsule as Zun shows it at ``version`` (its members included) to ``ctx``:
    ``host`` only with ``capsule:get:host``, members' fields as ``views.shown_keys``."""
    shown = shown_keys(ctx)
    out: dict[str, Any] = {key: getattr(row, key) for key in VIEW_KEYS}
    out["created_at"] = format_time(row.created_at)
    out["updated_at"] = format_time(row.updated_at)
    out["addresses"] = row.addresses or {}
    out["labels"] = row.labels or {}
    out["annotations"] = row.annotations or {}
    inits, regular = members if members is not None else capsules.members_of(state.db,
                                                                               row.id)
    out["init_containers"] = [container_view(m, shown=shown) for m in inits]
    out["containers"] = [container_view(m, shown=shown) for m in regular]
    restart: Mapping[str, Any] = row.restart_policy or {"Name": "always",
                                                       "MaximumRetryCount": "0"}
    out["restart_policy"] = dict(restart)
    if policy.allows(ctx, "capsule:get:host", row):
        out["host"] = row.host
    if version < _NEW_VIEW_FROM:
        out["meta_name"] = out.pop("name")
        out["meta_labels"] = out.pop("labels")
        out["restart_policy"] = restart.get("Name")
        out.update(volumes_info={}, containers_uuids=[], init_containers_uuids=[],
                   capsule_version="")
    if request is not None:
        out["links"] = links(request, "capsules", row.uuid)
    return out
