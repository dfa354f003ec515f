"""The CNI configuration berth gives containerd for capsules' pods
(``capsule_driver = cri`` with ``[network]driver = local``).

containerd's CRI plugin runs the first ``*.conf``/``*.conflist`` of its ``conf_dir``
(in name order) for every pod and watches the directory. The compute agent writes
``00-berth.conflist`` there at start-up (so it is first), and links the ``berth-cni``
executable into containerd's ``bin_dir``::

    {"cniVersion": "1.0.0", "name": "berth-pods",
     "plugins": [{"type": "berth-cni", "podNetworks": true,
                  "capabilities": {"io.kubernetes.cri.pod-annotations": true},
                  "delegate": <the first plugin of the next configuration, if any>},
                 {"type": "portmap", "capabilities": {"portMappings": true},
                  "snat": true}]}        # when bin_dir has portmap: hostPort

Which berth network a pod joins is not in the file: each pod's annotations carry its
networks and its agent's daemon (``berth.cni.pod``), so one file serves every agent
and every capsule of the node. A pod without them (an agent with
``[network]driver = docker``) goes to ``delegate``: the configuration the directory
held before berth's, Debian's ``bridge`` plugin in the tests' containerd.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from berth.cni.pod import CAPABILITY

LOG = logging.getLogger(__name__)

FILE_NAME = "00-berth.conflist"
PLUGIN = "berth-cni"
#: The standard plugin that publishes a pod's host ports (iptables DNAT), chained
#: after berth-cni (whose result gives it the pod's addresses); containerd passes it
#: the pod's port mappings through the ``portMappings`` capability. SNAT makes
#: connections from the node itself to a published port work.
PORTMAP: dict[str, Any] = {"type": "portmap", "capabilities": {"portMappings": True},
                           "snat": True}


def conflist(delegate: dict[str, Any] | None, portmap: bool = False) -> dict[str, Any]:
    plugin: dict[str, Any] = {"type": PLUGIN, "podNetworks": True,
                              "capabilities": {CAPABILITY: True}}
    if delegate:
        plugin["delegate"] = delegate
    plugins = [plugin]
    if portmap:
        plugins.append(PORTMAP)
    return {"cniVersion": "1.0.0", "name": "berth-pods", "plugins": plugins}


def has_portmap(bin_dir: str | None) -> bool:
    """Whether containerd finds the standard ``portmap`` plugin in ``bin_dir``
    (without it in the chain, every pod's ADD would fail: it is left out, and pods'
    host ports are not published)."""
    return bool(bin_dir) and os.access(Path(str(bin_dir)) / "portmap", os.X_OK)


def first_other_plugin(conf_dir: Path) -> dict[str, Any] | None:
    """The first plugin of the first configuration in ``conf_dir`` that is not berth's
    (what containerd would run without berth's file)."""
    for path in sorted(conf_dir.glob("*.conf*")):
        if path.name == FILE_NAME or path.suffix not in (".conf", ".conflist", ".json"):
            continue
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        plugin = (data.get("plugins") or [None])[0] if "plugins" in data else data
        if isinstance(plugin, dict) and plugin.get("type") and plugin["type"] != PLUGIN:
            return {k: v for k, v in plugin.items() if k not in ("cniVersion", "name")}
    return None


def write(conf_dir: str, bin_dir: str | None) -> Path:
    """Write berth's configuration into ``conf_dir`` (atomically, only when it
    changes) and link ``berth-cni`` into ``bin_dir``; the file's path. OSError when a
    directory cannot be written: the caller says which option to fix."""
    directory = Path(conf_dir)
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / FILE_NAME
    portmap = has_portmap(bin_dir)
    if not portmap:
        LOG.warning("no portmap CNI plugin in %s ([cri]cni_bin_dir): capsules' hostPort "
                    "are not published on this node", bin_dir)
    text = json.dumps(conflist(first_other_plugin(directory), portmap), indent=1,
                      sort_keys=True)
    if not path.exists() or path.read_text() != text:
        tmp = directory / f".{FILE_NAME}.{os.getpid()}"
        tmp.write_text(text)
        os.replace(tmp, path)
        LOG.info("wrote containerd's CNI configuration %s (pods plugged by berth-cni)", path)
    if bin_dir:
        install_plugin(Path(bin_dir))
    return path


def install_plugin(bin_dir: Path) -> None:
    """``bin_dir``/berth-cni points at this installation's executable."""
    beside = Path(sys.executable).with_name(PLUGIN)
    source = str(beside) if os.access(beside, os.X_OK) else shutil.which(PLUGIN)
    if source is None:
        raise OSError(f"the {PLUGIN} executable is not installed beside {sys.executable} "
                      f"nor on PATH")
    target = bin_dir / PLUGIN
    if target.is_symlink() and os.readlink(target) == source:
        return
    bin_dir.mkdir(parents=True, exist_ok=True)
    tmp = bin_dir / f".{PLUGIN}.{os.getpid()}"
    tmp.unlink(missing_ok=True)
    tmp.symlink_to(source)
    os.replace(tmp, target)
    LOG.info("linked %s to %s for containerd", target, source)
