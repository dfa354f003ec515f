"""What the Neutron TCP tests print when a client never reaches its server.

The TCP wait of ``test_neutron_containers`` failed now and then in clean-clone CI runs
(both containers Running on ACTIVE ports, no TCP exchange in 90 s). This report found
its cause once reproduced (docs/testing.md): the OVS agent had no remote-group rule for
the client's address. It stays for any next failure. The report is built to tell the possible causes apart at the next failure. CI shows only
the head of a long failure, so it begins with a few lines on each cause, and the whole
dumps come after them:

- **late, not dead**: a TCP connect made from the client's namespace *now* succeeds,
  so the path works and only the client's loop gave up (it tries 60 times);
- **dropped by a flow**: ``ovs-appctl ofproto/trace`` of the client's SYN, and of the
  server's SYN-ACK, names the OpenFlow table that drops it (the OVS firewall's
  remote-group conjunctions live in tables 71-82: a server whose ingress flows never
  learnt the client's address drops the SYN there);
- **never left the container**: TX checksum offload still on (``ethtool -k``), an
  interface down, no neighbour entry, the namespaces' packet counters (sent by the
  client, received by the server?), the rules that dropped packets and the datapath's
  flows;
- **Neutron's side**: both ports as Neutron holds them (status, groups, addresses) and
  the OVS agent's log lines that name either port.

Every command's failure is written down in the report, never raised: the report
explains a failure and must not hide it.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx

AGENT_LOG = Path("/var/tmp/berth-ci/neutron/log/ovs-agent.log")
VSWITCHD_LOG = AGENT_LOG.with_name("ovs-vswitchd.log")
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
           ports: tuple[int, int], flags: str, ct: str) -> tuple[str, str]:
    """ofproto/trace of one TCP segment (``ports``: its source and destination) from
    ``src``'s Neutron port to ``dst``'s, the OVS firewall's conntrack lookups answered
    with ``ct`` (``trk,new`` for a SYN): its verdict (the tables it went through and its
    datapath actions, a few lines) and the whole trace."""
    try:
        src_ip = src["fixed_ips"][0]["ip_address"]
        dst_ip = dst["fixed_ips"][0]["ip_address"]
    except (KeyError, IndexError):
        return f"{what}: no addresses to trace", ""
    flow = (f"in_port={ofport},tcp,dl_src={src.get('mac_address')},"
            f"dl_dst={dst.get('mac_address')},nw_src={src_ip},nw_dst={dst_ip},"
            f"tp_src={ports[0]},tp_dst={ports[1]},tcp_flags={flags}")
    whole = sh("ovs-appctl", "ofproto/trace", "br-int", flow, "--ct-next", ct,
               "--ct-next", ct)
    tables = [line.strip().split(".")[0] for line in whole.splitlines()
              if line.strip()[:2].isdigit() and "." in line.strip()[:4]]
    ends = [line.strip() for line in whole.splitlines()
            if "Datapath actions" in line or "drop" in line.lower()]
    verdict = (f"{what}: tables {' '.join(dict.fromkeys(tables)) or '?'}; "
               + " | ".join(ends[-4:]))
    return verdict, f"{what}:\n{whole}"


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
             or "member" in line.lower() and ("security_group" in line.lower()
                                              or "security group" in line.lower())]
    return "\n".join(line[:400] for line in lines[-limit:])


def _packet_flows(addresses: dict[str, str]) -> str:
    """How far packets went through br-int's OpenFlow tables (packets per table), the
    rules that match on each of ``addresses`` (name → IP: a server whose ingress never
    learnt its client's address has no remote-group rule for it), the rules that
    dropped packets."""
    out = subprocess.run(["ovs-ofctl", "dump-flows", "br-int"], check=False,
                         capture_output=True, text=True).stdout
    naming = []
    for name, ip in addresses.items():
        rules = [line.split("priority=", 1)[-1] for line in out.splitlines()
                 if f"nw_src={ip}," in line or f"nw_src={ip} " in line
                 or f"nw_dst={ip}," in line or f"nw_dst={ip} " in line]
        naming.append(f"rules naming the {name}'s {ip}: {len(rules)}\n"
                      + "\n".join(f"  {r}" for r in rules[:8]))
    per_table: dict[str, int] = {}
    drops = []
    for line in out.splitlines():
        counted = re.search(r"\bn_packets=(\d+)", line)
        packets = int(counted.group(1)) if counted else 0
        in_table = re.search(r"\btable=(\d+)", line)
        table = in_table.group(1) if in_table else "0"   # ovs-ofctl omits table 0
        per_table[table] = per_table.get(table, 0) + packets
        if "actions=drop" in line and packets:
            drops.append(line.strip())
    tables = " ".join(f"{t}:{n}" for t, n in sorted(per_table.items(),
                                                       key=lambda kv: int(kv[0])))
    return (f"packets per br-int table: {tables or '(no flows)'}\n"
            + "".join(f"{n}\n" for n in naming)
            + "rules that dropped packets:\n" + ("\n".join(drops)[-2500:] or "(none)"))


def _inside(pid: int) -> tuple[str, str]:
    """A namespace's neighbours, counters and TX checksumming (short), and its
    addresses, routes and offloads (whole)."""
    netns = ("nsenter", f"--net=/proc/{pid}/ns/net")
    offloads = sh(*netns, "ethtool", "-k", "eth0")
    tx = [line.strip() for line in offloads.splitlines() if "tx-checksumming" in line]
    short = "\n".join([sh(*netns, "ip", "neigh"), sh(*netns, "ip", "-s", "-o", "link"),
                       ", ".join(tx) or "tx-checksumming: ?"])
    whole = "\n".join([sh(*netns, "ip", "-d", "addr"), sh(*netns, "ip", "route"),
                       offloads])
    return short, whole


def _port_summary(port: dict[str, Any]) -> str:
    keys = ("id", "status", "binding:host_id", "binding:vif_type", "security_groups",
            "fixed_ips", "mac_address", "error")
    return json.dumps({k: port[k] for k in keys if k in port})


def _vswitchd_lines(taps: list[str], limit: int = 15) -> str:
    """ovs-vswitchd's warnings and errors (a tap it could not read, say), those about the
    two taps first."""
    if not VSWITCHD_LOG.exists():
        return f"(no {VSWITCHD_LOG})"
    lines = [line for line in VSWITCHD_LOG.read_text(errors="replace").splitlines()
             if "|INFO|" not in line and "|DBG|" not in line]
    about = [line for line in lines if any(t in line for t in taps)]
    return "\n".join(line[:300] for line in (about or lines)[-limit:]) or "(none)"


def _berth_lines(berth_log: str, names: list[str], limit: int = 40) -> str:
    """berth's log lines that name a container or a port of the two (plugs, re-plugs,
    waits for ACTIVE, errors)."""
    lines = [line for line in berth_log.splitlines() if any(n in line for n in names)]
    return "\n".join(line[:300] for line in lines[-limit:]) or "(none)"


def report(http: httpx.Client, neutron_url: str, client: str, server: str,
           logs: str, berth_log: str = "") -> str:
    """Everything above, for the ``client`` container that never reached ``server``
    (``berth_log``: the log of the berth that runs them): first what tells the causes
    apart, a few lines each (CI shows only the head of a long failure), then the whole
    dumps."""
    # the head, in order: the short verdicts, then the longer lines
    verdicts: list[str] = []
    details = [f"client logs (end): {logs[-300:]!r}"]
    tail: list[str] = []
    ports: dict[str, list[dict[str, Any]]] = {}
    for name, uuid in (("client", client), ("server", server)):
        try:
            tail.append(f"--- {uuid}: {http.get(f'/v1/containers/{uuid}').text[:2000]}")
        except httpx.HTTPError as err:
            tail.append(f"--- {uuid}: the API did not answer ({err})")
        ports[uuid] = _neutron_ports(neutron_url, uuid)
        details.append(f"{name} {uuid} Neutron ports: "
                       + "; ".join(_port_summary(p) for p in ports[uuid]))
        try:
            pid = container_pid(uuid)
        except (subprocess.CalledProcessError, ValueError):
            details.append(f"{name}: no container process")
            continue
        short, whole = _inside(pid)
        details.append(f"{name} namespace:\n{short}")
        tail.append(f"{name} namespace:\n{whole}")
    c_ports, s_ports = ports[client], ports[server]
    addresses = {name: ip["ip_address"] for name, found in (("client", c_ports),
                                                          ("server", s_ports))
                 for port in found[:1] for ip in port.get("fixed_ips", [])[:1]}
    if c_ports and s_ports and "id" in c_ports[0] and "id" in s_ports[0]:
        c, s = c_ports[0], s_ports[0]
        try:
            verdicts.append("a connect now: " + _probe(container_pid(client),
                                                       s["fixed_ips"][0]["ip_address"]))
        except (subprocess.CalledProcessError, ValueError, KeyError, IndexError) as err:
            verdicts.append(f"a connect now: could not try ({err})")
        for args in (("the client's SYN", _ofport(c["id"]), c, s,
                      (CLIENT_PORT, SERVER_PORT), "syn", "trk,new"),
                     ("the server's SYN-ACK", _ofport(s["id"]), s, c,
                      (SERVER_PORT, CLIENT_PORT), "syn|ack", "trk,est")):
            verdict, whole = _trace(*args)
            verdicts.append(verdict)
            tail.append(whole)
        verdicts.append(sh("ovs-ofctl", "dump-ports", "br-int"))
        taps = [f"tap{c['id'][:11]}", f"tap{s['id'][:11]}"]
        details.append("ovs-vswitchd's warnings:\n" + _vswitchd_lines(taps))
        details.append("berth's log about them:\n" + _berth_lines(
            berth_log, [client, server, c["id"], s["id"]]))
        tail.append("OVS agent log:\n" + _agent_lines([c["id"], s["id"]]))
    verdicts.append(_packet_flows(addresses))
    # what the userspace datapath actually does with the traffic now
    details.append(sh("ovs-appctl", "dpctl/dump-flows")[-2500:])
    head = verdicts + details
    tail += [sh("ovs-vsctl", "show"),
             sh("ovs-vsctl", "--columns=name,ofport,error,admin_state,link_state,"
                "external_ids,other_config", "list", "interface"),
             sh("ovs-appctl", "dpif/show"),
             sh("ovs-ofctl", "dump-flows", "br-int")]
    return "\n".join(["=== what tells the causes apart", *head,
                      "=== the whole dumps", *tail])
