"""What the Neutron TCP tests print when a client never reaches its server.

The TCP wait of ``test_neutron_containers`` failed now and then in clean-clone CI runs
(both containers Running on ACTIVE ports, no TCP exchange in 90 s) and never here. The
report is built to tell the possible causes apart at the next failure:

- **late, not dead**: a TCP connect made from the client's namespace *now* succeeds,
  so the path works and only the client's loop gave up (it tries 60 times);
- **dropped by a flow**: ``ovs-appctl ofproto/trace`` of the client's SYN, and of the
  server's SYN-ACK, names the OpenFlow table that drops it (the OVS firewall's
  remote-group conjunctions live in tables 71-82: a server whose ingress flows never
  learnt the client's address drops the SYN there);
- **never left the container**: TX checksum offload still on (``ethtool -k``), an
  interface down, no neighbour entry;
- **Neutron's side**: both ports as Neutron holds them (status, groups, addresses) and
  the OVS agent's log lines that name either port.

Every command's failure is written down in the report, never raised: the report
explains a failure and must not hide it.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx

AGENT_LOG = Path("/var/tmp/berth-ci/neutron/log/ovs-agent.log")
SERVER_PORT = 8080
#: The client port the traced segments carry (any unprivileged one).
CLIENT_PORT = 40000


def sh(*argv: str, timeout: float = 30) -> str:
    """``argv``'s output (its last 6,000 characters), or why it could not run."""
    try:
        done = subprocess.run(argv, check=False, capture_output=True, text=True,
                              timeout=timeout)
        out = (done.stdout + done.stderr)[-6000:]
        if done.returncode:
            out += f"(exit {done.returncode})"
    except (OSError, subprocess.SubprocessError) as err:
        out = f"(could not run: {err})"
    return f"$ {' '.join(argv)}\n{out}"


def container_pid(uuid: str) -> int:
    out = subprocess.run(["docker", "inspect", "-f", "{{.State.Pid}}", f"zun-{uuid}"],
                         check=True, capture_output=True, text=True).stdout
    return int(out.strip())


def _neutron_ports(neutron_url: str, uuid: str) -> list[dict[str, Any]]:
    try:
        body = httpx.get(f"{neutron_url}/v2.0/ports", params={"device_id": uuid},
                         timeout=30).json()
        return list(body.get("ports", []))
    except (httpx.HTTPError, ValueError) as err:
        return [{"error": f"Neutron did not answer: {err}"}]


def _ofport(port_id: str) -> str:
    out = subprocess.run(["ovs-vsctl", "--if-exists", "get", "Interface",
                          f"tap{port_id[:11]}", "ofport"], check=False,
                         capture_output=True, text=True).stdout.strip()
    return out or "?"


def _trace(what: str, ofport: str, src: dict[str, Any], dst: dict[str, Any],
           ports: tuple[int, int], flags: str, ct: str) -> str:
    """ofproto/trace of one TCP segment (``ports``: its source and destination) from
    ``src``'s Neutron port to ``dst``'s, the OVS firewall's conntrack lookups answered
    with ``ct`` (``trk,new`` for a SYN)."""
    try:
        src_ip = src["fixed_ips"][0]["ip_address"]
        dst_ip = dst["fixed_ips"][0]["ip_address"]
    except (KeyError, IndexError):
        return f"{what}: no addresses to trace"
    flow = (f"in_port={ofport},tcp,dl_src={src.get('mac_address')},"
            f"dl_dst={dst.get('mac_address')},nw_src={src_ip},nw_dst={dst_ip},"
            f"tp_src={ports[0]},tp_dst={ports[1]},tcp_flags={flags}")
    return f"{what}:\n" + sh("ovs-appctl", "ofproto/trace", "br-int", flow,
                            "--ct-next", ct, "--ct-next", ct)


def _probe(pid: int, address: str) -> str:
    """A TCP connect from the client's namespace to the server, now."""
    return sh("nsenter", f"--net=/proc/{pid}/ns/net", "timeout", "5", "bash", "-c",
              f"exec 3<>/dev/tcp/{address}/{SERVER_PORT} && echo CONNECTED", timeout=15)


def _agent_lines(port_ids: list[str], limit: int = 60) -> str:
    if not AGENT_LOG.exists():
        return f"(no {AGENT_LOG})"
    short = [p[:11] for p in port_ids]
    lines = [line for line in AGENT_LOG.read_text(errors="replace").splitlines()
             if any(p in line for p in port_ids + short)
             or "security_group" in line.lower() and "member" in line.lower()]
    return "\n".join(line[:400] for line in lines[-limit:])


def report(http: httpx.Client, neutron_url: str, client: str, server: str,
           logs: str) -> str:
    """Everything above, for the ``client`` container that never reached ``server``."""
    parts = [sh("ovs-vsctl", "show"),
             sh("ovs-vsctl", "--columns=name,ofport,error,admin_state,link_state,"
                "external_ids,other_config", "list", "interface"),
             sh("ovs-ofctl", "dump-flows", "br-int"),
             sh("ovs-appctl", "dpif/show"),
             f"client logs: {logs[-1000:]}"]
    ports: dict[str, list[dict[str, Any]]] = {}
    for uuid in (client, server):
        try:
            parts.append(f"--- {uuid}: {http.get(f'/v1/containers/{uuid}').text[:2000]}")
        except httpx.HTTPError as err:
            parts.append(f"--- {uuid}: the API did not answer ({err})")
        ports[uuid] = _neutron_ports(neutron_url, uuid)
        parts.append(f"Neutron ports: {json.dumps(ports[uuid], indent=1)[:3000]}")
        try:
            pid = container_pid(uuid)
        except (subprocess.CalledProcessError, ValueError):
            parts.append("(no container process)")
            continue
        for cmd in (["ip", "-d", "addr"], ["ip", "route"], ["ip", "neigh"],
                    ["ip", "-s", "link"], ["ethtool", "-k", "eth0"]):
            parts.append(sh("nsenter", f"--net=/proc/{pid}/ns/net", *cmd))
    c_ports, s_ports = ports[client], ports[server]
    if c_ports and s_ports and "id" in c_ports[0] and "id" in s_ports[0]:
        c, s = c_ports[0], s_ports[0]
        parts.append(_trace("the client's SYN", _ofport(c["id"]), c, s,
                            (CLIENT_PORT, SERVER_PORT), "syn", "trk,new"))
        parts.append(_trace("the server's SYN-ACK", _ofport(s["id"]), s, c,
                            (SERVER_PORT, CLIENT_PORT), "syn|ack", "trk,est"))
        try:
            parts.append("a connect now: " + _probe(container_pid(client),
                                                    s["fixed_ips"][0]["ip_address"]))
        except (subprocess.CalledProcessError, ValueError, KeyError, IndexError) as err:
            parts.append(f"a connect now: could not try ({err})")
        parts.append("OVS agent log:\n" + _agent_lines([c["id"], s["id"]]))
    return "\n".join(parts)
