"""``berth-cni`` called by containerd for a pod (``capsule_driver = cri``).

containerd runs the first configuration of its CNI ``conf_dir`` for every pod: one
file for all of them, so the file cannot name a capsule's network. berth writes a
configuration (``berth.cni.conflist``) whose plugin is ``berth-cni`` with the
capability ``io.kubernetes.cri.pod-annotations``: containerd then passes each pod's
annotations in ``runtimeConfig``, on ADD and on DEL alike (also after a restart of
containerd, which keeps the pod's configuration). The compute agent writes the pod's
networks there when it makes the pod::

    berth.network/networks = [{"config": <network_config of the network>,
                               "ifname": "eth0", "ip": "10.244.0.7" | null}, ...]
    berth.network/daemon   = "http://127.0.0.1:9036"   # this agent's berth-cni-daemon

For each entry the plugin sends the daemon the request the agent sends for a
container (same body, same checks), so a pod's interfaces are the daemon's like any
other: its registry, its IPAM, its sync pass. ADD plugs every network in order (the
first one undone when a later one fails) and answers one result with all the
interfaces; DEL unplugs every network and succeeds when nothing is plugged, and
when the daemon does not answer (see ``handle``).

A pod without berth's annotations (a capsule of an agent whose ``[network]driver``
is ``docker``, or a pod berth did not make) goes to the ``delegate`` of the
configuration, another plugin (Debian's ``bridge``) run from ``CNI_PATH`` with the
same environment, whose answer is passed through.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from typing import Any

from berth.cni.client import DaemonClient
from berth.cni.contract import CniError, CniRequest, Code, Command, parse_request

NETWORKS = "berth.network/networks"
DAEMON = "berth.network/daemon"
CAPABILITY = "io.kubernetes.cri.pod-annotations"


def is_pod_config(config: Mapping[str, Any]) -> bool:
    """Whether the configuration is the conflist's (no network of its own)."""
    ipam = config.get("ipam")
    return bool(config.get("podNetworks")) and not (isinstance(ipam, Mapping)
                                                     and ipam.get("subnet"))


def pod_annotations(networks: list[dict[str, Any]], daemon_url: str) -> dict[str, str]:
    """The pod's annotations that name its networks (the agent's side)."""
    return {NETWORKS: json.dumps(networks, sort_keys=True), DAEMON: daemon_url}


def handle(env: Mapping[str, str], config: Mapping[str, Any]) -> dict[str, Any] | None:
    """One invocation in pod mode: the result for ADD, None for DEL and CHECK."""
    version = str(config.get("cniVersion") or "1.0.0")
    pod = (config.get("runtimeConfig") or {}).get(CAPABILITY) or {}
    raw = pod.get(NETWORKS) if isinstance(pod, Mapping) else None
    if not raw:
        return _delegate(env, config, version)
    try:
        entries = json.loads(raw)
        client = DaemonClient(str(pod.get(DAEMON) or ""))
    except ValueError as exc:
        raise CniError(Code.INVALID_NETWORK_CONFIG, f"pod annotation {NETWORKS} or {DAEMON} "
                       f"is not berth's", str(exc), version=version) from exc
    requests = [_request(env, entry, version) for entry in entries]
    command = (env.get("CNI_COMMAND") or "").upper()
    if command == Command.ADD:
        return _add(client, requests, version)
    failures = []
    for request in requests:
        try:
            client.call(request)
        except CniError as err:
            if command == Command.CHECK:
                raise
            if err.code == Code.TRY_AGAIN_LATER:
                # The daemon is down (its agent stopped, or moved to another port): a
                # DEL that failed would keep containerd from ever removing the pod.
                # The veth goes with the pod's namespace, and the daemon's sync pass
                # frees the address of an attachment whose namespace is gone.
                sys.stderr.write(f"berth-cni: {err.msg}; {request.key} is left to the "
                                 f"daemon's sync pass\n")
                continue
            failures.append(err)
    if failures:       # every network was tried; the runtime calls DEL again
        raise failures[0]
    return None


def _request(env: Mapping[str, str], entry: Any, version: str) -> CniRequest:
    if not isinstance(entry, Mapping) or not isinstance(entry.get("config"), Mapping):
        raise CniError(Code.INVALID_NETWORK_CONFIG,
                       f"pod annotation {NETWORKS}: an entry is not {{config, ifname, ip}}",
                       version=version)
    args = f"IP={entry['ip']}" if entry.get("ip") else ""
    sub = dict(env, CNI_IFNAME=str(entry.get("ifname") or "eth0"), CNI_ARGS=args)
    network = dict(entry["config"], cniVersion=version)
    return parse_request(sub, json.dumps(network).encode())


def _add(client: DaemonClient, requests: list[CniRequest], version: str) -> dict[str, Any]:
    done: list[CniRequest] = []
    merged: dict[str, Any] = {"cniVersion": version, "interfaces": [], "ips": [],
                              "routes": [], "dns": {}}
    try:
        for request in requests:
            result = client.call(request) or {}
            base = len(merged["interfaces"])
            merged["interfaces"] += result.get("interfaces") or []
            for ip in result.get("ips") or []:
                merged["ips"].append(dict(ip, interface=base + int(ip.get("interface", 2))))
            if not merged["routes"]:
                merged["routes"] = result.get("routes") or []
            done.append(request)
    except CniError:
        for request in done:
            undo = CniRequest(command=Command.DEL, container_id=request.container_id,
                              ifname=request.ifname, netns=request.netns,
                              config=request.config, path=request.path)
            try:
                client.call(undo)
            except CniError:
                pass        # the daemon's sync pass removes it with the namespace
        raise
    return merged


def _delegate(env: Mapping[str, str], config: Mapping[str, Any],
              version: str) -> dict[str, Any] | None:
    delegate = config.get("delegate")
    if not isinstance(delegate, Mapping) or not delegate.get("type"):
        raise CniError(Code.INVALID_NETWORK_CONFIG,
                       f"this pod names no berth network (pod annotation {NETWORKS}) and "
                       f"the configuration has no delegate: make the pod with berth, or "
                       f"give the configuration a delegate plugin", version=version)
    plugin = str(delegate["type"])
    found = [os.path.join(d, plugin) for d in (env.get("CNI_PATH") or "").split(":") if d]
    path = next((p for p in found if os.access(p, os.X_OK)), None)
    if path is None:
        raise CniError(Code.INVALID_NETWORK_CONFIG, f"delegate plugin {plugin} is not in "
                       f"CNI_PATH ({env.get('CNI_PATH')})", version=version)
    body = dict(delegate, cniVersion=version, name=config.get("name"))
    if "prevResult" in config:
        body["prevResult"] = config["prevResult"]
    done = subprocess.run([path], input=json.dumps(body).encode(), env=dict(env),
                          capture_output=True, check=False, timeout=120)
    answer = json.loads(done.stdout) if done.stdout.strip() else None
    if done.returncode != 0:
        error = answer if isinstance(answer, dict) else {}
        raise CniError(int(error.get("code", Code.DRIVER_FAILURE)),
                       str(error.get("msg") or f"delegate plugin {plugin} failed"),
                       str(error.get("details") or done.stderr[-500:].decode(errors="replace")),
                       version=version)
    return answer if isinstance(answer, dict) else None
