"""Start-up reconciliation of this node's volumes, after the containers' own recovery
(so that interrupted creates are already failed and interrupted deletes done).

    mapping whose container row is gone           removed (a delete that crashed
                                                    between the row and its mappings)
    volume no mapping points at, auto-remove      removed with its data (a failed
                                                    create's undo, or a delete, that
                                                    crashed half-way)
    volume a container needs, not attached        attached again when
                                                    [compute]remount_container_volume
                                                    (a reboot unmounted it); failure:
                                                    the container in Error, saying so
    volume no container needs, still attached     detached (an undo or a delete that
                                                    crashed half-way)

One volume's failure is logged and the next is reconciled.
"""

from __future__ import annotations

import logging

from berth.common import exceptions as exc
from berth.compute import status_writes
from berth.compute.volumes.attachments import ContainerVolumes, needs_attached
from berth.db import volumes as db_volumes

LOG = logging.getLogger(__name__)

REMOUNT_FAILED = "Internal error on recovering container volume"


def reconcile_volumes(volumes: ContainerVolumes, remount: bool) -> None:
    removed = db_volumes.orphan_mappings(volumes.db)
    if removed:
        LOG.info("removed %d volume mappings whose container is gone", removed)
    for volume in db_volumes.on_host(volumes.db, volumes.host):
        try:
            users = db_volumes.users_of(volumes.db, volume.id)
            needed = [uuid for uuid, needs in needs_attached(users) if needs]
            if needed and remount and not volumes.is_attached(volume):
                _remount(volumes, volume, needed)
            else:
                volumes.settle(None, volume)
        except exc.BerthError as err:
            LOG.error("volume %s could not be reconciled: %s", volume.uuid, err.msg)


def _remount(volumes: ContainerVolumes, volume: db_volumes.Volume, needed: list[str]) -> None:
    driver = volumes.driver(volume.volume_provider)
    try:
        attached = driver.attach(None, volumes.ref(volume))
    except exc.BerthError as err:
        LOG.error("volume %s could not be mounted again: %s", volume.uuid, err.msg)
        for uuid in needed:
            status_writes.mark_error(volumes.db, uuid, f"{REMOUNT_FAILED}: {err.msg}",
                                     was=None)
        return
    db_volumes.set_attached(volumes.db, volume.id, volumes.host, attached.connection_info)
    LOG.info("volume %s mounted again for %d containers", volume.uuid, len(needed))
