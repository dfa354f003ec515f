"""What the API does for each container operation before it casts to (or calls) the
node's agent: checks (state table, task in progress, host up), the row's API-side
changes, the action record, then the RPC. Routers stay thin; the API never touches
Docker."""

from __future__ import annotations

import itertools
import logging
import uuid as uuidlib
from typing import Any

from sqlalchemy import Row

from berth.api.microversions import APIVersion
from berth.api.operations import networks as networks_api
from berth.api.operations import placing, stale_tasks
from berth.api.operations import quotas as quotas_api
from berth.api.operations import registries as registries_api
from berth.api.operations import volumes as volumes_api
from berth.api.operations.cast_deadlines import awaited, written_with_actions
from berth.api.schemas.container import CreateRequest, validate_create
from berth.api.state import ApiState
from berth.api.views import SHOW_COLUMNS
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute import states, status_writes
from berth.compute.states import Status
from berth.db import actions, containers, nodes
from berth.db import volumes as db_volumes
from berth.db.containers import Expect
from berth.db.models import Container
from berth.image.reference import parse_image
from berth.network.metadata import RequestedNetwork
from berth.placement.base import Allocation
from berth.placement.requests import container_resources
from berth.policies import enforcer as policy
from berth.scheduler.base import RequestSpec

LOG = logging.getLogger(__name__)


def create(state: ApiState, ctx: RequestContext, body: Any, version: APIVersion,
           run: bool) -> Container:
    policy.authorize(ctx, "container:create")
    request = validate_create(body, version, lambda rule: policy.allows(ctx, rule),
                              state.settings.create_limits)
    # Validated: each column has its schema's type. A copy: columns are added below.
    fields: dict[str, Any] = dict(request.fields)
    registry = registries_api.resolve_for_create(state, ctx, request.registry)
    if registry is not None:
        fields.update(registry_id=registry.id, registry_uuid=registry.uuid)
    # Checked again in the insert's transaction, under the project's quota lock, so
    # that concurrent creates cannot all pass this check against one usage.
    deltas = quotas_api.create_deltas(fields)
    deltas["disk"] += volumes_api.new_gib(state, ctx, [
        (volumes_api.mount_source(m), m.get("size")) for m in request.mounts
        if m.get("type") != "bind"])
    quota = quotas_api.check_deltas(state, ctx.project_id, deltas)
    image = parse_image(str(fields["image"]), default_registry=state.settings.default_registry,
                        registry_domain=registry.domain if registry else None)
    _check_name(state, ctx, fields.get("name"))
    if fields.get("disk"):
        _check_disk_quota(state)
    requested_networks = networks_api.resolve_for_create(state, ctx, request.nets)
    if requested_networks:
        fields["cni_metadata"] = networks_api.metadata_of(requested_networks)
    if networks_api.neutron.enabled(state) and fields.get("security_groups"):
        fields["security_groups"] = networks_api.neutron.security_groups(
            state, ctx, fields["security_groups"])
    values: dict[str, Any] = dict(fields, project_id=ctx.project_id, user_id=ctx.user_id,
                                  **status_writes.status_values(
                                      Status.CREATING, was=status_writes.NEW_ROW, uuid=None,
                                      by="create"))
    return volumes_api.created_with(
        state, ctx, lambda: volumes_api.plan(state, ctx, request.mounts),
        lambda mounts: _schedule_and_cast(state, ctx, values, request, mounts, quota,
                                          _checked_ref(fields, image.ref),
                                          requested_networks, run))


def _checked_ref(fields: dict[str, Any], ref: str) -> str:
    """What the node is asked about: a Glance image is a name or id as given (Zun: no
    tag, no registry prefix), a registry's the normalised reference."""
    return str(fields["image"]) if fields.get("image_driver") == "glance" else ref


def _schedule_and_cast(state: ApiState, ctx: RequestContext, values: dict[str, Any],
                       request: CreateRequest, mounts: volumes_api.MountPlan,
                       quota: Any, image_ref: str, requested_networks: list[RequestedNetwork],
                       run: bool) -> Container:
    spec = RequestSpec(cpu=float(values["cpu"]), memory_mib=int(values["memory"]),
                       runtime=values.get("runtime"), disk_gb=int(values.get("disk") or 0),
                       availability_zone=request.availability_zone,
                       requested_host=_requested_host(request.requested_host, mounts.host),
                       hints=request.hints)

    # The uuid is made now: the allocation written with the row is its consumer's.
    values = dict(values, uuid=str(uuidlib.uuid4()))
    allocation = Allocation(values["uuid"], "", container_resources(
        values["cpu"], values["memory"], values.get("disk")),
        ctx.project_id, ctx.user_id)

    def insert(host: str, guard: placing.Guard) -> Container:
        # The row, its create action, its volumes and their mappings in one transaction;
        # the row with the deadline of the cast that follows (cast_deadlines).
        return containers.create(state.db, awaited(state.settings, dict(values, host=host)),
                                 along=lambda uuid: itertools.chain(
                                     [actions.new_action(ctx, uuid, "create")],
                                     mounts.rows(ctx, [uuid])),
                                 guard=guard)

    try:
        selection = state.scheduler.select_destination(spec)
        check_image = None
        if state.settings.enable_image_validation:
            registry = ({"id": values["registry_id"], "uuid": values["registry_uuid"]}
                        if values.get("registry_id") else None)

            def check_image(host: str) -> None:
                # Every node the placement tries, not only the first choice: the
                # agent of the node the row names is the one that must get the image.
                # When it went down since the scheduler's last look (NoValidHost),
                # the create fails as unscheduled.
                _check_image(state, ctx, host, image_ref, values.get("image_driver"),
                             registry=registry)
        selection, row = placing.insert_placed(state, spec, selection, quota, insert,
                                               check_host=check_image, allocation=allocation)
    except exc.NoValidHost as err:
        # Zun's contract: still a 202, with the row in Error saying why. The mounts'
        # volumes are not kept: nothing will use them.
        mounts.undo(state, ctx)
        row = containers.create(state.db, dict(values, **status_writes.status_values(
                                    Status.ERROR, was=status_writes.NEW_ROW, uuid=None,
                                    by="create", status_reason=err.msg)),
                                along=lambda uuid: [actions.new_action(ctx, uuid, "create",
                                                                       failed=True)],
                                guard=quota)
        LOG.warning("container %s not scheduled: %s", row.uuid, err.msg)
        return row
    with container_context(row.uuid):
        row = cast_create(state, ctx, row, selection.host, selection.limits,
                          requested_networks, run,
                          requested_volumes=mounts.wire([row.uuid]))
        LOG.info("create of %s accepted on host %s (run=%s)", image_ref, selection.host, run)
    return row


def _requested_host(asked: str | None, volumes_host: str | None) -> str | None:
    if asked and volumes_host and asked != volumes_host:
        raise exc.Invalid(f"The container's local volumes are on host {volumes_host}; it "
                          f"cannot run on host {asked}.")
    return asked or volumes_host


def cast_create(state: ApiState, ctx: RequestContext, row: Container, host: str,
                limits: Any, requested_networks: list[RequestedNetwork], run: bool,
                requested_volumes: dict[str, Any] | None = None) -> Container:
    """Cast ``container_create`` (of a container or a capsule) to ``host``; when the
    agent cannot be reached, the row goes to Error saying so and its action ends."""
    try:
        state.compute.container_create(ctx, row, limits=dict(limits),
                                       requested_networks=requested_networks,
                                       requested_volumes=requested_volumes or {},
                                       run=run)
    except exc.BerthError as err:
        row = status_writes.mark_error(
            state.db, row.uuid, f"Could not reach the compute agent of {host}: {err.msg}",
            was=row.status)
        actions.action_finish(state.db, row.uuid, ctx.request_id, error=True)
        if state.placement is not None:     # what the placement allocated (a row in
            state.placement.remove_allocation(row.uuid)    # Error holds nothing)
    return row


def _check_name(state: ApiState, ctx: RequestContext, name: str | None) -> None:
    scope = state.settings.unique_container_name_scope
    if not name or not scope:
        return
    project = ctx.project_id if scope == "project" else None
    if containers.name_taken(state.db, name, project):
        raise exc.ContainerAlreadyExists(field="name", value=name)


def _check_disk_quota(state: ApiState) -> None:
    """A ``disk`` limit is refused now when no host could enforce it (Zun accepted it
    and let the create fail on the node)."""
    if not nodes.disk_quota_hosts(state.db, state.settings.service_down_time):
        raise exc.Invalid(
            "No compute host can limit a container's disk: their Docker storage drivers "
            "do not support a root filesystem size (that needs overlay2 on xfs with "
            "project quotas, devicemapper, btrfs or zfs). Create the container without "
            "'disk', and use a volume ('mounts' with a 'size') for sized storage.")


def _check_image(state: ApiState, ctx: RequestContext, host: str, ref: str,
                 driver: str | None, registry: dict[str, Any] | None = None) -> None:
    key = (host, ref, driver or "docker", registry["uuid"] if registry else None)

    def ask() -> bool:
        return bool(state.compute.image_search(ctx, host, ref, driver or "docker",
                                               exact_match=True, registry=registry))

    if not state.image_checks.check(key, ask):
        raise exc.ImageNotFound(
            f"Image {ref} could not be found: host {host} does not have it and its "
            f"registry has no such repository or tag. Check the name and the tag.")


def get(state: ApiState, ctx: RequestContext, ident: str, rule: str) -> Container:
    """The container, if the caller passes ``rule`` on it. Admins find any project's
    container; others only their own project's: another project's is a 404, as one
    that does not exist, so that its existence does not leak."""
    row = containers.get(state.db, ident, None if ctx.is_admin else ctx.project_id)
    policy.authorize(ctx, rule, row)
    return row


def show_on_loop(state: ApiState, ctx: RequestContext, ident: str) -> Row[Any] | None:
    """``show``'s answer when it is the stored row as it is, read on the event loop
    (``Database.reads_on_loop``) as a row of ``views.SHOW_COLUMNS``; None when
    ``show`` must run (on a thread): another database, or a row whose agent must be
    asked or whose stale task must be failed. A status poll then costs no thread hop
    and no ORM session (bench P1, P5)."""
    if not state.db.reads_on_loop:
        return None
    row = containers.get_columns_on_loop(state.db, ident, SHOW_COLUMNS,
                                         None if ctx.is_admin else ctx.project_id)
    return row if _stored_row_answers(state, row) else None


def _stored_row_answers(state: ApiState, row: Container | Row[Any]) -> bool:
    """Whether show answers with the row as stored: never placed, no Docker container
    yet, or (``berth serve``) the agent's event stream keeps it current, which is what
    the agent's container_show would answer, without the hop. Not when the host is
    down: a stale task may have to be failed first."""
    if not row.host:
        return True
    return state.host_is_up(row.host) and (state.local_state_live(row.host)
                                           or not row.container_id)


def show(state: ApiState, ctx: RequestContext, ident: str) -> Container:
    """The row, refreshed from Docker by its agent when the agent is up; the stored row
    when it is down (with a task past its deadline failed: ``stale_tasks``)."""
    row = get(state, ctx, ident, "container:get_one")
    if _stored_row_answers(state, row):
        return row
    if row.host and not state.host_is_up(row.host):
        return stale_tasks.expire_if_stale(state, row, host_is_up=lambda _host: False)
    if row.container_id:
        try:
            state.compute.container_show(ctx, row)
            row = containers.get_by_uuid(state.db, row.uuid)
        except exc.ContainerNotFound:
            raise
        except exc.BerthError as err:
            LOG.warning("could not refresh container %s from its agent: %s", row.uuid, err.msg)
    return row


def _ready_for(row: Container, action: str) -> None:
    states.check_action_allowed(action, row.status or "", row.uuid)
    if row.task_state:
        raise exc.TaskInProgress(uuid=row.uuid, task_state=row.task_state)


def start(state: ApiState, ctx: RequestContext, ident: str) -> None:
    row = get(state, ctx, ident, "container:start")
    _ready_for(row, "start")
    state.compute.check_host(row)
    actions.action_start(state.db, ctx, row.uuid, "start")
    state.compute.container_start(ctx, row)


def stop(state: ApiState, ctx: RequestContext, ident: str, timeout: int | None) -> None:
    row = get(state, ctx, ident, "container:stop")
    _ready_for(row, "stop")
    state.compute.check_host(row)
    actions.action_start(state.db, ctx, row.uuid, "stop")
    state.compute.container_stop(ctx, row, timeout)


def delete(state: ApiState, ctx: RequestContext, ident: str, force: bool, stop: bool) -> None:
    row = get(state, ctx, ident, "container:delete")
    if force and not stop:
        policy.authorize(ctx, "container:delete_force", row)
    states.check_action_allowed(states.delete_action(force, stop), row.status or "", row.uuid)
    if row.task_state and not force:
        raise exc.TaskInProgress(uuid=row.uuid, task_state=row.task_state)
    if not row.host:
        LOG.info("container %s was never placed; removing its row", row.uuid)
        # Its volumes were released by the create that failed (or never attached):
        # only its mappings of kept volumes remain.
        db_volumes.delete_mappings(state.db, row.uuid)
        containers.destroy(state.db, row.uuid)
        return
    state.compute.check_host(row)
    was_running = row.status == Status.RUNNING
    # Compare-and-swap: if a flow changed the row since it was checked above, the
    # delete is refused rather than racing it. A forced delete wins whatever the row
    # is doing (the agent's delete takes the task over).
    expect = containers.ANYTHING if force else Expect(status=row.status, task_state=None)
    stopping = stop and was_running
    row = written_with_actions(state, ctx, row.uuid, status_writes.status_values(
        Status.DELETING, was=row.status, uuid=row.uuid, by="delete"),
        ("stop", "delete") if stopping else ("delete",), expect=expect)
    if stopping:
        state.compute.container_stop(ctx, row, 10)
    state.compute.container_delete(ctx, row, force)
