"""The volume drivers a process enables, from ``[volume]``: ``local`` always (it also
holds ``bind`` mounts' injected files), ``cinder`` when ``[volume]driver = cinder``."""

from __future__ import annotations

from oslo_config import cfg

from berth.volume.base import CINDER, LOCAL, VolumeDriver
from berth.volume.local import LocalVolumeDriver


def build_drivers(conf: cfg.ConfigOpts) -> dict[str, VolumeDriver]:
    v = conf.volume
    drivers: dict[str, VolumeDriver] = {
        LOCAL: LocalVolumeDriver(v.volume_dir, v.fstype, v.local_volume_default_size)}
    if v.driver == CINDER:
        from berth.volume.cinder import CinderVolumeDriver

        drivers[CINDER] = CinderVolumeDriver(conf)
    return drivers
