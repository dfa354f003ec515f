"""What the API does for the lifecycle actions before the node's agent acts: reboot,
pause, unpause, kill, rebuild, update (PATCH and resize_container), rename and
security groups.

Every action that reaches an agent goes through the same gate: the state table
(409 naming the status and the allowed ones), no task in progress (409), the host's
agent up (409), then the action row (``container_actions``), then the RPC with Zun's
method and argument names. An API-side status change (Restarting, Rebuilding) is a
compare-and-swap on the row, carries the deadline of the cast (``cast_deadlines``), and
is undone when the cast cannot be sent, so a refused request leaves the row as it was.
"""

from __future__ import annotations

import logging
from typing import Any

from berth.api.operations import networks as networks_api
from berth.api.operations import quotas as quotas_api
from berth.api.operations.cast_deadlines import written_with_actions
from berth.api.operations.containers import _check_image, _check_name, _ready_for, get
from berth.api.state import ApiState
from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.common.log import container_context
from berth.compute import status_writes
from berth.compute.states import Status
from berth.db import actions, containers
from berth.db.containers import Expect
from berth.db.models import Container
from berth.image.reference import parse_image

LOG = logging.getLogger(__name__)

RESOURCE_FIELDS = ("cpu", "memory")


def _prepare(state: ApiState, ctx: RequestContext, ident: str, action: str,
             needs_engine: bool = True) -> Container:
    """The container, if ``action`` may start now. ``needs_engine``: the action works
    on its Docker container, so one must exist (a failed rebuild leaves none)."""
    row = get(state, ctx, ident, f"container:{action}")
    _ready_for(row, action)
    if needs_engine:
        _require_created(row)
    state.compute.check_host(row)
    return row


def _require_created(row: Container) -> None:
    if not row.container_id:
        raise exc.UncreatedContainer(
            f"Cannot operate an uncreated container: {row.uuid} has no Docker container "
            f"(status {row.status}). Rebuild it first.")


def _cast(state: ApiState, ctx: RequestContext, row: Container, action: str, method: str,
          undo: dict[str, Any] | None = None, recorded: bool = False, **kw: Any) -> None:
    """Record ``action`` (unless ``recorded``: begun with the status the API wrote,
    ``_set_status``) and cast ``method``; if the cast cannot be sent, finish the
    action with Error and put back the ``undo`` values the API had written."""
    with container_context(row.uuid):
        if not recorded:
            actions.action_start(state.db, ctx, row.uuid, action)
        try:
            state.compute.cast(ctx, row, method, **kw)
        except exc.BerthError as err:
            LOG.warning("%s could not be sent to host %s: %s", method, row.host, err.msg)
            actions.action_finish(state.db, row.uuid, ctx.request_id, error=True)
            if undo:
                containers.update_(state.db, row.uuid, undo)
            raise
        LOG.info("%s accepted (host %s)", action, row.host)


def _set_status(state: ApiState, ctx: RequestContext, row: Container,
                values: dict[str, Any], action: str) -> Container:
    """Write the API-side change (with the deadline of the cast that follows) only if
    nobody changed the row since it was read, with ``action`` begun in the same
    commit (``cast_deadlines.written_with_actions``)."""
    return written_with_actions(state, ctx, row.uuid, values, (action,),
                                expect=Expect(task_state=None, status=row.status))


def reboot(state: ApiState, ctx: RequestContext, ident: str, timeout: int | None) -> None:
    row = _prepare(state, ctx, ident, "reboot")
    undo = status_writes.status_values(str(row.status), was=Status.RESTARTING,
                                       uuid=row.uuid, by="reboot's undo",
                                       task_deadline=row.task_deadline)
    row = _set_status(state, ctx, row, status_writes.status_values(
        Status.RESTARTING, was=row.status, uuid=row.uuid, by="reboot"), "reboot")
    _cast(state, ctx, row, "reboot", "container_reboot", undo=undo, recorded=True,
          timeout=timeout)


def pause(state: ApiState, ctx: RequestContext, ident: str) -> None:
    row = _prepare(state, ctx, ident, "pause")
    _cast(state, ctx, row, "pause", "container_pause")


def unpause(state: ApiState, ctx: RequestContext, ident: str) -> None:
    row = _prepare(state, ctx, ident, "unpause")
    _cast(state, ctx, row, "unpause", "container_unpause")


def kill(state: ApiState, ctx: RequestContext, ident: str, signal: str | None) -> None:
    row = _prepare(state, ctx, ident, "kill")
    _cast(state, ctx, row, "kill", "container_kill", signal=signal)


def rebuild(state: ApiState, ctx: RequestContext, ident: str, image: str | None,
            image_driver: str | None, run: bool | None) -> None:
    """Rebuild from ``image`` (None: the current one); restarted afterwards iff it was
    Running (or as ``run`` says). The new image is checked like at create: a bad
    reference, or with image validation an image nobody has, is a 400 and changes
    nothing."""
    row = _prepare(state, ctx, ident, "rebuild", needs_engine=False)
    values: dict[str, Any] = status_writes.status_values(
        Status.REBUILDING, was=row.status, uuid=row.uuid, by="rebuild")
    if image is not None:
        ref = parse_image(image, default_registry=state.settings.default_registry)
        if state.settings.enable_image_validation and row.host:
            driver = image_driver or row.image_driver
            # A Glance image is asked for as given (its name or id), as at create.
            _check_image(state, ctx, row.host, image if driver == "glance" else ref.ref,
                         driver)
        values["image"] = image
    if image_driver is not None:
        values["image_driver"] = image_driver
    undo = {k: getattr(row, k) for k in (*values, "task_deadline")}   # the cast's too
    if run is None:
        run = row.status == Status.RUNNING
    row = _set_status(state, ctx, row, values, "rebuild")
    _cast(state, ctx, row, "rebuild", "container_rebuild", undo=undo, recorded=True,
          run=run)


def update(state: ApiState, ctx: RequestContext, ident: str, changes: dict[str, Any]
           ) -> Container:
    """PATCH: name and auto_heal are saved here; new cpu/memory go through the agent
    (synchronous container_update: claim on the node, docker update, save)."""
    row = get(state, ctx, ident, "container:update")
    _ready_for(row, "update")
    changes = dict(changes)
    if "name" in changes:
        if changes["name"] == row.name and set(changes) == {"name"}:
            raise _same_name(row)
        if changes["name"] != row.name:
            _check_name(state, ctx, str(changes["name"]))
    resources = {k: changes[k] for k in RESOURCE_FIELDS
                 if k in changes and changes[k] != getattr(row, k)}
    if not resources:
        values = {k: v for k, v in changes.items() if k not in RESOURCE_FIELDS}
        if not values:
            return row
        LOG.info("container %s: %s saved", row.uuid, ", ".join(sorted(values)))
        return containers.update_(state.db, row.uuid, values, expect=containers.NO_TASK)
    _require_created(row)
    _check_quota(state, ctx, row, resources)
    with container_context(row.uuid):
        try:
            state.compute.call(ctx, row, "container_update", patch=changes)
        except exc.ResourcesUnavailable as err:
            raise exc.Conflict(
                f"Cannot update container {row.uuid}: host {row.host} has no room for "
                f"it ({err.kwargs.get('reason') or err.msg}). Ask for less, or free "
                f"resources on that host.") from err
        LOG.info("container %s: resources updated to %s", row.uuid, resources)
    return containers.get_by_uuid(state.db, row.uuid)


def resize(state: ApiState, ctx: RequestContext, ident: str, changes: dict[str, Any]
           ) -> Container:
    """resize_container: the asynchronous update; answers with the values before it."""
    row = _prepare(state, ctx, ident, "resize_container")
    _check_quota(state, ctx, row, changes)   # Zun skipped quotas on resize_container
    with container_context(row.uuid):
        state.compute.cast(ctx, row, "resize_container", patch=dict(changes))
        LOG.info("resize to %s accepted (host %s)", changes, row.host)
    return row


def _check_quota(state: ApiState, ctx: RequestContext, row: Container,
                 resources: dict[str, Any]) -> None:
    """OverQuota (403) when the new cpu/memory would take the project over its quota."""
    cpu_delta = float(resources["cpu"]) - float(row.cpu or 0) if "cpu" in resources else 0.0
    mem_delta = (int(resources["memory"]) - int(row.memory or 0)
                 if "memory" in resources else 0)
    quotas_api.check_quota_delta(state, ctx, row.project_id, cpu_delta, mem_delta)


def rename(state: ApiState, ctx: RequestContext, ident: str, name: str) -> Container:
    """POST .../rename (1.1-1.13): only the row changes; Docker's name stays zun-<uuid>."""
    row = get(state, ctx, ident, "container:rename")
    if row.task_state:
        raise exc.TaskInProgress(uuid=row.uuid, task_state=row.task_state)
    if name == row.name:
        raise _same_name(row)
    _check_name(state, ctx, name)
    return containers.update_(state.db, row.uuid, {"name": name},
                              expect=containers.NO_TASK)


def _same_name(row: Container) -> exc.Conflict:
    return exc.Conflict(f"Container {row.uuid} is already named {row.name}: the new name "
                        f"must differ from the current one.")


def add_security_group(state: ApiState, ctx: RequestContext, ident: str, name: str) -> None:
    row = _prepare(state, ctx, ident, "add_security_group", needs_engine=False)
    if networks_api.neutron.enabled(state):   # Neutron's groups, recorded by id
        name = networks_api.neutron.security_group(state, ctx, name)
    if name in (row.security_groups or []):
        raise exc.InvalidParameterValue(
            err=f"Security group {name} is already on container {row.uuid}; nothing to add.")
    _cast(state, ctx, row, "add_security_group", "add_security_group", security_group=name)


def remove_security_group(state: ApiState, ctx: RequestContext, ident: str, name: str
                          ) -> None:
    row = _prepare(state, ctx, ident, "remove_security_group", needs_engine=False)
    groups = row.security_groups or []
    if networks_api.neutron.enabled(state) and name not in groups:
        name = networks_api.neutron.security_group(state, ctx, name)
    if name not in groups:
        on = ", ".join(groups) if groups else "none"
        raise exc.InvalidParameterValue(
            err=f"Security group {name} is not on container {row.uuid} (it has: {on}); "
                f"nothing to remove.")
    _cast(state, ctx, row, "remove_security_group", "remove_security_group",
          security_group=name)
