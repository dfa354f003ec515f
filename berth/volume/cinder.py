"""The ``cinder`` volume driver: OpenStack Cinder volumes through python-cinderclient
(``cinder_api``) and os-brick (``cinder_brick``), mounted at ``volume_dir/<uuid>``.

Attach, on the agent::

    connector properties of this node (os-brick)
    3.44+:  attachment_create(volume, connector) ─► connection info
    older:  reserve ─► initialize_connection(volume, connector) ─► connection info
    os-brick connect_volume (a connector made WITH the connection info)  ─► device/file
    3.44+:  attachment_complete          older: attach(mountpoint=device, host)
    mount the device at volume_dir/<uuid> (mkfs [volume]fstype first if the device
    holds no filesystem yet)

Each step that fails undoes the ones before it, last first (umount, disconnect,
attachment_delete or terminate_connection/detach/unreserve). Detach is the same walk
backwards and is idempotent: what is not there any more is skipped.

What ``attach`` returns for remounts (``VolumeRef.connection_info``, the driver's own
record): ``{"connection_info": <Cinder's>, "attachment_id": <id or None>,
"device_path": <what os-brick gave>}``. A remount (agent restart, node reboot) with
that record and the volume still attached to this host in Cinder only connects and
mounts again.
"""

from __future__ import annotations

import importlib.util
import logging
import os
import re
import time
from collections.abc import Callable
from typing import Any

from oslo_config import cfg

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.volume import cinder_brick, mounts
from berth.volume.base import (
    CINDER,
    Attached,
    FoundVolume,
    VolumeDriver,
    VolumeRef,
    attachable,
)
from berth.volume.cinder_api import CinderAPI, CinderSessions

LOG = logging.getLogger(__name__)

_UUID = re.compile(r"^[0-9a-fA-F]{8}-?([0-9a-fA-F]{4}-?){3}[0-9a-fA-F]{12}$")
#: Cinder statuses a volume leaves only through an operator.
_FAILED = ("error", "error_deleting", "error_restoring", "error_extending",
           "error_managing")


def _volume_id(ref: VolumeRef) -> str:
    if not ref.cinder_volume_id:
        raise exc.VolumeError(reason=f"volume {ref.uuid} has no Cinder volume id: it was "
                                     f"never created in Cinder; delete it")
    return ref.cinder_volume_id


class _Undo:
    """What an attach did so far, undone last first when a later step fails; a step
    whose undo fails is logged, so that the error the caller sees is the first one."""

    def __init__(self, volume: str) -> None:
        self._volume = volume
        self._steps: list[tuple[str, Callable[[], Any]]] = []

    def push(self, what: str, step: Callable[[], Any]) -> None:
        self._steps.append((what, step))

    def drop(self, *names: str) -> None:
        """Forget these steps: a later one undoes what they would have."""
        self._steps = [s for s in self._steps if s[0] not in names]

    def run(self) -> None:
        while self._steps:
            what, step = self._steps.pop()
            try:
                step()
            except Exception as err:  # noqa: BLE001 - keep undoing the rest
                LOG.warning("volume %s: could not undo a failed attach (%s): %s",
                            self._volume, what, err)


class CinderVolumeDriver(VolumeDriver):
    provider = CINDER

    def __init__(self, conf: cfg.ConfigOpts, *, poll_interval: float = 1.0) -> None:
        missing = [name for module, name in (("cinderclient", "python-cinderclient"),
                                             ("os_brick", "os-brick"))
                   if importlib.util.find_spec(module) is None]
        if missing:
            raise exc.VolumeError(reason=(
                f"[volume]driver = cinder needs {' and '.join(missing)}: install berth "
                f"with its 'cinder' extra (pip install 'berth[cinder]')"))
        self._conf = conf
        self._sessions = CinderSessions(conf)
        self.volume_dir = conf.volume.volume_dir
        self.fstype = conf.volume.fstype
        self.use_multipath = conf.volume.use_multipath
        self.host = conf.host
        self.poll_interval = poll_interval

    def api(self, ctx: RequestContext | None) -> CinderAPI:
        return self._sessions.api(ctx)

    def mount_path(self, ref: VolumeRef) -> str:
        return os.path.join(self.volume_dir, ref.uuid)

    # -- API side -------------------------------------------------------------------

    def find(self, ctx: RequestContext, source: str) -> FoundVolume:
        api = self.api(ctx)
        volume = api.volume_or_none(source) if _UUID.match(source) else None
        if volume is None:
            named = api.volumes_named(source)
            if not named:
                raise exc.VolumeNotFound(reason=(
                    f"Cinder has no volume with id or name {source!r} in project "
                    f"{ctx.project_id}: create it first, or give a size to have one made"))
            if len(named) > 1:
                ids = ", ".join(sorted(v.id for v in named))
                raise exc.VolumeNotFound(reason=(
                    f"several Cinder volumes are named {source!r} ({ids}): give the id "
                    f"of the one to use"))
            volume = named[0]
        found = FoundVolume(volume_id=str(volume.id), status=str(volume.status),
                            multiattach=bool(getattr(volume, "multiattach", False)),
                            size_gib=getattr(volume, "size", None))
        if not attachable(found.status, found.multiattach):
            raise exc.VolumeUnavailable(reason=(
                f"Cinder volume {found.volume_id} is {found.status}"
                f"{'' if found.multiattach else ' and not multi-attach'}: it can be used "
                f"when it is available (or in-use, for a multi-attach volume)"))
        return found

    def create(self, ctx: RequestContext, size_gib: int, name: str | None = None) -> str:
        volume_id = self.api(ctx).create(size_gib, name)
        LOG.info("created Cinder volume %s (%s GiB, name %s)", volume_id, size_gib, name)
        return volume_id

    def delete(self, ctx: RequestContext | None, ref: VolumeRef, timeout: float) -> None:
        if not ref.cinder_volume_id:
            return
        api = self.api(ctx)
        volume_id = ref.cinder_volume_id
        try:
            api.delete(volume_id)
        except exc.VolumeNotFound:
            LOG.info("volume %s: Cinder volume %s is gone already", ref.uuid, volume_id)
            return
        deadline = time.monotonic() + timeout
        while (volume := api.volume_or_none(volume_id)) is not None:
            if volume.status == "error_deleting":
                raise exc.VolumeError(reason=(
                    f"Cinder could not delete volume {volume_id} (of volume {ref.uuid}): "
                    f"it is error_deleting; see cinder-volume's log, reset its status and "
                    f"delete it again"))
            if time.monotonic() >= deadline:
                raise exc.VolumeError(reason=(
                    f"Cinder volume {volume_id} (of volume {ref.uuid}) is still "
                    f"{volume.status} {timeout:g} s after its delete; raise "
                    f"[volume]timeout_wait_volume_deleted or delete it by hand"))
            time.sleep(self.poll_interval)
        LOG.info("volume %s: deleted Cinder volume %s", ref.uuid, volume_id)

    # -- agent side -----------------------------------------------------------------

    def wait_available(self, ctx: RequestContext | None, ref: VolumeRef,
                       timeout: float) -> None:
        volume_id = _volume_id(ref)
        api = self.api(ctx)
        deadline = time.monotonic() + timeout
        while True:
            volume = api.volume(volume_id)
            status = str(volume.status)
            if attachable(status, bool(getattr(volume, "multiattach", False))):
                return
            if status in _FAILED:
                raise exc.VolumeUnavailable(reason=(
                    f"Cinder volume {volume_id} (of volume {ref.uuid}) is in status "
                    f"{status}: see cinder-volume's log; delete it and use another"))
            if time.monotonic() >= deadline:
                raise exc.VolumeUnavailable(reason=(
                    f"Cinder volume {volume_id} (of volume {ref.uuid}) is still {status} "
                    f"after {timeout:g} s; raise [volume]timeout_wait_volume_available "
                    f"or check Cinder's scheduler and volume services"))
            time.sleep(min(self.poll_interval, max(0.0, deadline - time.monotonic())))

    def is_attached(self, ref: VolumeRef) -> bool:
        return mounts.is_mounted(self.mount_path(ref))

    def attach(self, ctx: RequestContext | None, ref: VolumeRef) -> Attached:
        path = self.mount_path(ref)
        if mounts.is_mounted(path):
            return Attached(path, ref.connection_info)
        volume_id = _volume_id(ref)
        api = self.api(ctx)
        volume = api.volume(volume_id)
        mine = self._attachments_here(volume)
        if mine and ref.connection_info:
            LOG.info("volume %s: Cinder volume %s is still attached here: remounting it",
                     ref.uuid, volume_id)
            self._connect_and_mount(ref, ref.connection_info, _Undo(ref.uuid))
            return Attached(path, ref.connection_info)
        if mine:
            LOG.warning("volume %s: Cinder volume %s has attachments to this host that "
                        "berth has no record of (an interrupted attach): releasing them "
                        "first", ref.uuid, volume_id)
            self._release(api, ref, volume, mine, None)
        started = time.monotonic()
        record = self._attach_new(api, ref, volume_id)
        LOG.info("volume %s: attached Cinder volume %s at %s in %.2f s (%s)", ref.uuid,
                 volume_id, path, time.monotonic() - started,
                 "attachments API" if api.attachments_api else "legacy calls")
        return Attached(path, record)

    def _attach_new(self, api: CinderAPI, ref: VolumeRef, volume_id: str
                    ) -> dict[str, Any]:
        connector = cinder_brick.connector_properties(self._conf, self.host,
                                                      self.use_multipath)
        undo = _Undo(ref.uuid)
        try:
            attachment_id: str | None = None
            if api.attachments_api:
                attachment = api.attachment_create(volume_id, connector)
                attachment_id = str(attachment["id"])
                undo.push("attachment_delete",
                          lambda: api.attachment_delete(str(attachment_id)))
                info = cinder_brick.normalized(attachment["connection_info"])
            else:
                api.reserve(volume_id)
                undo.push("unreserve", lambda: api.unreserve(volume_id))
                info = cinder_brick.normalized(
                    api.initialize_connection(volume_id, connector))
                undo.push("terminate_connection",
                          lambda: api.terminate_connection(volume_id, connector))
            record: dict[str, Any] = {"connection_info": info,
                                      "attachment_id": attachment_id}
            device = self._connect(ref, info, undo)
            record["device_path"] = device
            if api.attachments_api:
                api.attachment_complete(str(attachment_id))
            else:
                api.attach(volume_id, device, self.host)
                # Attached in Cinder: from now on it is undone as a detach is (the
                # host's side first, then begin_detaching, terminate_connection, detach).
                undo.drop("unreserve", "terminate_connection", "disconnect_volume")
                undo.push("legacy detach", lambda: self._legacy_detach(
                    api, volume_id, connector, None))
                undo.push("disconnect_volume", lambda: self._disconnect(ref, record))
            self._mount(ref, device, undo)
            return record
        except BaseException:
            undo.run()
            raise

    def _connect(self, ref: VolumeRef, info: dict[str, Any], undo: _Undo) -> str:
        try:
            brick = cinder_brick.connector_for(self._conf, info, self.use_multipath)
            device = brick.connect_volume(info["data"])
        except Exception as err:
            raise exc.VolumeError(reason=(
                f"volume {ref.uuid}: os-brick could not connect the "
                f"{info.get('driver_volume_type')} volume to this node: {err}")) from err
        undo.push("disconnect_volume", lambda: brick.disconnect_volume(info["data"], device))
        path = device.get("path") if isinstance(device, dict) else None
        if not path:
            raise exc.VolumeError(reason=(f"volume {ref.uuid}: os-brick connected it but "
                                          f"named no device ({device})"))
        return str(path)

    def _mount(self, ref: VolumeRef, device: str, undo: _Undo) -> None:
        path = self.mount_path(ref)
        os.makedirs(path, exist_ok=True)
        undo.push("rmdir", lambda: _rmdir(path))
        if mounts.mount_or_format(device, path, self.fstype):
            LOG.info("volume %s: made a %s filesystem on %s", ref.uuid, self.fstype, device)
        undo.push("umount", lambda: mounts.umount(path))

    def _connect_and_mount(self, ref: VolumeRef, record: dict[str, Any], undo: _Undo
                           ) -> None:
        try:
            device = self._connect(ref, record["connection_info"], undo)
            self._mount(ref, device, undo)
        except BaseException:
            undo.run()
            raise

    def detach(self, ctx: RequestContext | None, ref: VolumeRef) -> None:
        path = self.mount_path(ref)
        mounts.umount(path)
        _rmdir(path)
        record = ref.connection_info
        if record:
            self._disconnect(ref, record)
        if not ref.cinder_volume_id:
            return
        api = self.api(ctx)
        volume = api.volume_or_none(ref.cinder_volume_id)
        if volume is None:
            LOG.info("volume %s: Cinder volume %s is gone: nothing to detach there",
                     ref.uuid, ref.cinder_volume_id)
            return
        self._release(api, ref, volume, self._attachments_here(volume), record)
        LOG.info("volume %s: detached Cinder volume %s", ref.uuid, ref.cinder_volume_id)

    def _disconnect(self, ref: VolumeRef, record: dict[str, Any]) -> None:
        info = record["connection_info"]
        try:
            brick = cinder_brick.connector_for(self._conf, info, self.use_multipath)
            brick.disconnect_volume(info["data"], {"path": record.get("device_path")})
        except Exception as err:
            raise exc.VolumeError(reason=(
                f"volume {ref.uuid}: os-brick could not disconnect it from this node "
                f"({err}); detach it again once the device is free")) from err

    def _attachments_here(self, volume: Any) -> list[dict[str, Any]]:
        return [a for a in (getattr(volume, "attachments", None) or [])
                if a.get("host_name") == self.host]

    def _release(self, api: CinderAPI, ref: VolumeRef, volume: Any,
                 attachments: list[dict[str, Any]], record: dict[str, Any] | None) -> None:
        """Cinder's side of a detach: this host's attachments of ``volume`` ended."""
        volume_id = str(volume.id)
        by_api = api.attachments_api if record is None else bool(record.get("attachment_id"))
        connector = None
        for attachment in attachments:
            attachment_id = attachment.get("attachment_id") or attachment.get("id")
            if by_api and api.attachments_api:
                try:
                    api.attachment_delete(str(attachment_id))
                except exc.VolumeNotFound:
                    pass
                continue
            if connector is None:
                connector = cinder_brick.connector_properties(self._conf, self.host,
                                                              self.use_multipath)
            self._legacy_detach(api, volume_id, connector, attachment_id)

    @staticmethod
    def _legacy_detach(api: CinderAPI, volume_id: str, connector: dict[str, Any],
                       attachment_id: str | None) -> None:
        try:
            api.begin_detaching(volume_id)
        except exc.VolumeError as err:   # e.g. another host's detach of a multi-attach
            LOG.info("Cinder volume %s: begin_detaching refused (%s); detaching anyway",
                     volume_id, err)
        api.terminate_connection(volume_id, connector)
        api.detach(volume_id, attachment_id)


def _rmdir(path: str) -> None:
    try:
        os.rmdir(path)
    except FileNotFoundError:
        pass
    except OSError as err:
        LOG.warning("could not remove the mount point %s: %s", path, err)
