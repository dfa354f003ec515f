"""os-brick on this node: the connector properties Cinder is given, and connecting a
volume's device (or file) from the connection info Cinder answers.

os-brick is imported on native threads: oslo.service's threading backend is selected
and eventlet kept out, as ``berth.rpc.oslo`` does (os-brick imports oslo.service's
looping calls, whose default backend is eventlet). Its privileged calls go through
oslo.privsep's daemon, started with ``[privsep_osbrick]helper_command``; when that is
not set and berth runs as root, berth points it at the ``privsep-helper`` beside its
own Python (oslo.privsep's own default runs it through ``sudo``, which a node need not
have).
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

from oslo_config import cfg

_lock = threading.Lock()
_connector_module: Any = None


def connector_module(conf: cfg.ConfigOpts) -> Any:
    """``os_brick.initiator.connector``, imported and set up once per process."""
    global _connector_module
    with _lock:
        if _connector_module is None:
            sys.modules.setdefault("eventlet", None)  # type: ignore[arg-type]
            from oslo_service import backend  # type: ignore[import-untyped]

            if backend.get_backend_type() is None:
                backend.init_backend(backend.BackendType.THREADING)
            import os_brick
            import os_brick.privileged
            from os_brick.initiator import connector

            _set_privsep_defaults(conf)
            os_brick.setup(cfg.CONF)
            _connector_module = connector
        return _connector_module


def _set_privsep_defaults(conf: cfg.ConfigOpts) -> None:
    """oslo.privsep and os-brick read the process-wide ``cfg.CONF``."""
    g = cfg.CONF.privsep_osbrick
    if not g.helper_command and os.geteuid() == 0:
        helper = os.path.join(os.path.dirname(sys.executable), "privsep-helper")
        files = [a for f in (getattr(conf, "config_file", None) or [])
                 for a in ("--config-file", f)]
        # oslo.privsep's daemon imports eventlet only to see whether it is patched, and
        # forwards eventlet's deprecation warning into berth's log on every start.
        quiet = "PYTHONWARNINGS=ignore::Warning:oslo_privsep.daemon"
        cfg.CONF.set_default("helper_command", " ".join(["env", quiet, helper, *files]),
                             group="privsep_osbrick")
    if not cfg.CONF.oslo_concurrency.lock_path:
        cfg.CONF.set_default("lock_path", os.path.join(conf.state_path, "os-brick-locks"),
                             group="oslo_concurrency")


def connector_properties(conf: cfg.ConfigOpts, host: str, use_multipath: bool
                         ) -> dict[str, Any]:
    """What Cinder needs to know of this node to export a volume to it (its IP,
    host name, initiator names, multipath)."""
    connector = connector_module(conf)
    return dict(connector.get_connector_properties(
        None, conf.my_ip, use_multipath, enforce_multipath=True, host=host))


def normalized(info: dict[str, Any]) -> dict[str, Any]:
    """Cinder's connection info in one shape: ``driver_volume_type``, ``data`` and the
    backend's extras beside them (``mount_point_base`` for NFS). The legacy
    initialize_connection answers that shape; an attachment's connection_info may come
    flat, with data's keys beside ``driver_volume_type``."""
    if "driver_volume_type" not in info:
        raise ValueError(f"Cinder's connection info names no driver_volume_type: {info}")
    if isinstance(info.get("data"), dict):
        return dict(info)
    return {"driver_volume_type": info["driver_volume_type"],
            "data": {k: v for k, v in info.items() if k != "driver_volume_type"}}


def factory_conn(info: dict[str, Any]) -> dict[str, Any]:
    """The ``conn`` os-brick's connector factory is given: data's keys and the top
    level's together. File-based connectors (NFS, GlusterFS, ...) take their mount point
    base from it; without it they cannot be made at all."""
    return {**info["data"], **info}


def connector_for(conf: cfg.ConfigOpts, info: dict[str, Any], use_multipath: bool) -> Any:
    module = connector_module(conf)
    return module.InitiatorConnector.factory(
        info["driver_volume_type"], None, use_multipath=use_multipath,
        device_scan_attempts=3, conn=factory_conn(info))
