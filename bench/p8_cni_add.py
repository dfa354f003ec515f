"""P8: CNI ADD latency, ``berth-cni`` + ``berth-cni-daemon`` against Debian's reference
``bridge`` plugin with ``host-local`` IPAM doing the same work (a bridge with a gateway
address, a veth pair into a fresh namespace, an address and a default route).

Each side plugs ``n`` namespaces one after the other into a network that already has
one member (so neither side pays for making its bridge in the timed ADDs), then
removes them. The figure is the daemon's own time (the HTTP call the plugin makes),
which is what the compute agent pays when it calls the daemon directly; the detail
also has the ``berth-cni`` executable's (a Python interpreter's start-up on top). Needs root and
``containernetworking-plugins`` (/usr/lib/cni); addresses are 10.244.25x.0/24 inside
namespaces the benchmark makes and deletes.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from bench.common import Result, median, ratio

ROOT = Path(__file__).resolve().parents[1]
REFERENCE_DIR = "/usr/lib/cni"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(extra: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.update(extra)
    return env


def _plugin(cmd: list[str], command: str, config: dict[str, Any], cid: str, netns: str,
            cni_path: str = "") -> float:
    env = _env({"CNI_COMMAND": command, "CNI_CONTAINERID": cid, "CNI_NETNS": netns,
                "CNI_IFNAME": "eth0", "CNI_ARGS": "", "CNI_PATH": cni_path})
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, input=json.dumps(config).encode(),
                          capture_output=True, timeout=120, check=False)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"{cmd[0]} {command} failed: {done.stdout!r} {done.stderr!r}")
    return elapsed


def _daemon_call(port: int, path: str, body: dict[str, Any]) -> float:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    t0 = time.perf_counter()
    conn.request("POST", path, body=json.dumps(body))
    response = conn.getresponse()
    response.read()
    elapsed = time.perf_counter() - t0
    conn.close()
    if response.status not in (200, 204):
        raise RuntimeError(f"daemon answered {response.status} to {path}")
    return elapsed


def _measure(n: int, add, delete) -> list[float]:  # type: ignore[no-untyped-def]
    names = [f"p8-{uuid.uuid4().hex[:8]}" for _ in range(n + 1)]
    for name in names:
        subprocess.run(["ip", "netns", "add", name], check=True)
    try:
        add(names[0], "warm")  # the network's bridge and rules exist from here on
        times = [add(name, f"c{i}") for i, name in enumerate(names[1:])]
        for i, name in enumerate(names[1:]):
            delete(name, f"c{i}")
        delete(names[0], "warm")
        return times
    finally:
        for name in names:
            subprocess.run(["ip", "netns", "del", name], check=False, capture_output=True)


def p8(_berth: object = None, n: int = 20) -> Result:
    if not os.path.exists(os.path.join(REFERENCE_DIR, "bridge")):
        raise RuntimeError("install containernetworking-plugins for the reference plugin")
    work = Path(tempfile.mkdtemp(prefix="p8-"))
    port = _free_port()
    conf = work / "berth.conf"
    conf.write_text(f"[DEFAULT]\nstate_path = {work}\n[cni_daemon]\n"
                    f"cni_daemon_port = {port}\n")
    daemon = subprocess.Popen([sys.executable, "-m", "berth.cmd.cni_daemon",
                               "--config-file", str(conf)], env=_env({}), cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    plugin = [str(Path(sys.executable).parent / "berth-cni")]
    if not os.path.exists(plugin[0]):
        plugin = [sys.executable, "-m", "berth.cmd.cni"]
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        berth_cfg = {"cniVersion": "1.0.0", "name": "p8-berth", "type": "berth-cni",
                     "ipam": {"subnet": "10.244.251.0/24"},
                     "daemonUrl": f"http://127.0.0.1:{port}"}
        ref_cfg = {"cniVersion": "1.0.0", "name": "p8-ref", "type": "bridge",
                   "bridge": "p8ref0", "isGateway": True, "isDefaultGateway": True,
                   "ipam": {"type": "host-local", "subnet": "10.244.252.0/24",
                            "dataDir": str(work / "host-local")}}

        def wire(command: str, ns: str, cid: str) -> dict[str, Any]:
            return {"command": command, "container_id": cid, "ifname": "eth0",
                    "netns": f"/var/run/netns/{ns}", "args": {}, "path": "",
                    "config": berth_cfg}

        berth_exec = _measure(
            n, lambda ns, cid: _plugin(plugin, "ADD", berth_cfg, cid, f"/var/run/netns/{ns}"),
            lambda ns, cid: _plugin(plugin, "DEL", berth_cfg, cid, f"/var/run/netns/{ns}"))
        berth_daemon = _measure(
            n, lambda ns, cid: _daemon_call(port, "/addNetwork", wire("ADD", ns, cid)),
            lambda ns, cid: _daemon_call(port, "/delNetwork", wire("DEL", ns, cid)))
        reference = _measure(
            n, lambda ns, cid: _plugin([f"{REFERENCE_DIR}/bridge"], "ADD", ref_cfg, cid,
                                       f"/var/run/netns/{ns}", REFERENCE_DIR),
            lambda ns, cid: _plugin([f"{REFERENCE_DIR}/bridge"], "DEL", ref_cfg, cid,
                                    f"/var/run/netns/{ns}", REFERENCE_DIR))
    finally:
        daemon.terminate()
        daemon.wait(timeout=10)
        subprocess.run(["ip", "link", "del", "p8ref0"], check=False, capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    d, e, r = median(berth_daemon), median(berth_exec), median(reference)
    # The daemon's add is what the compute agent pays (it calls the daemon directly);
    # a CNI runtime (containerd's CRI) pays the plugin's exec on top, in the detail.
    return Result("P8", "CNI ADD, median: berth-cni-daemon's add vs the reference bridge "
                  "plugin's exec", d, r, "s", "≤ 1.5 × reference", d <= 1.5 * r, ratio(d, r),
                  {"berth_cni_exec_median_s": e, "berth_cni_exec_ratio": ratio(e, r),
                   "berth_daemon_s": berth_daemon, "berth_exec_s": berth_exec,
                   "reference_s": reference, "n": n})

if __name__ == "__main__":
    result = p8()
    print(json.dumps(result.as_dict(), indent=1))
