"""P11: what Keystone authentication adds to ``GET /v1/containers/{uuid}``, with the
token cache warm: the same GET against the run's noauth berth (the baseline) and a
second berth with ``[api]auth_strategy = keystone`` validating a real Keystone token,
sampled alternately so that both see the same machine load. Goal: ≤ 1 ms added at p50.

Needs Keystone on 127.0.0.1:5001 (``.ci/ci-services.sh start keystone``)."""

from __future__ import annotations

import http.client
import json
import time

from support import keystone as ks
from support.berth_proc import BerthProcess

from bench.common import Berth, Result, docker_client, engine_conf, name, percentile, wait


def _getter(port: int, token: str, uuid: str):  # type: ignore[no-untyped-def]
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"X-Auth-Token": token, "OpenStack-API-Version": "container 1.40"}

    def get() -> float:
        t0 = time.perf_counter()
        conn.request("GET", f"/v1/containers/{uuid}", headers=headers)
        response = conn.getresponse()
        body = response.read()
        elapsed = time.perf_counter() - t0
        assert response.status == 200, body[:300]
        return elapsed

    return get, conn


def p11(berth: Berth, samples: int = 2000) -> Result:
    if not ks.answers():
        raise RuntimeError("Keystone does not answer on 127.0.0.1:5001: run "
                           "`.ci/ci-services.sh start keystone` first")
    admin = ks.Keystone()
    admin.set_up()
    admin.close()
    keystone_berth = BerthProcess(
        engine_conf() + "[api]\nauth_strategy = keystone\n[quota]\ncontainers = -1\n"
        + ks.authtoken_conf()).start(timeout=60)
    token = ks.issue_token("berth-alpha-member", project="berth-alpha")
    try:
        plain_uuid = berth.run(name("p11"))
        wait(lambda: berth.status(plain_uuid) == "Running", 60)
        made = json.loads(_post(keystone_berth, token))
        ks_uuid = made["uuid"]
        plain_get, plain_conn = _getter(berth.proc.port, "admin", plain_uuid)
        ks_get, ks_conn = _getter(keystone_berth.port, token, ks_uuid)
        wait(lambda: _status(keystone_berth, token, ks_uuid) == "Running", 60)
        for _ in range(50):       # warm: connections, the token cache, the policy memo
            plain_get()
            ks_get()
        noauth, keystone = [], []
        for _ in range(samples):
            noauth.append(plain_get())
            keystone.append(ks_get())
        plain_conn.close()
        ks_conn.close()
        # For the record: a token berth has not seen yet is validated with Keystone.
        cold = []
        for _ in range(5):
            fresh_get, fresh_conn = _getter(keystone_berth.port, ks.issue_token(
                "berth-alpha-member", project="berth-alpha"), ks_uuid)
            cold.append(fresh_get())
            fresh_conn.close()
    finally:
        keystone_berth.stop()
        client = docker_client()
        for c in client.containers.list(
                all=True, ignore_removed=True,
                filters={"label": f"berth.host={keystone_berth.host}"}):
            c.remove(force=True)
        client.close()
        berth.delete_all()
    p50_noauth, p50_keystone = percentile(noauth, 50), percentile(keystone, 50)
    added = p50_keystone - p50_noauth
    return Result("P11", "GET one container: keystone (warm token cache) vs noauth, p50",
                  p50_keystone, p50_noauth, "s", "≤ 1 ms added at p50", added <= 0.001,
                  p50_keystone / p50_noauth,
                  {"added_ms_p50": added * 1000, "noauth_p50": p50_noauth,
                   "keystone_p50": p50_keystone, "noauth_p99": percentile(noauth, 99),
                   "keystone_p99": percentile(keystone, 99), "samples": samples,
                   "cold_token_median": sorted(cold)[len(cold) // 2]})


def _post(proc: BerthProcess, token: str) -> str:
    from bench.common import COMMAND, IMAGE

    conn = http.client.HTTPConnection("127.0.0.1", proc.port, timeout=120)
    body = json.dumps({"name": name("p11ks"), "image": IMAGE, "command": COMMAND,
                       "memory": 64, "cpu": 0.1})
    conn.request("POST", "/v1/containers?run=true", body=body, headers={
        "X-Auth-Token": token, "Content-Type": "application/json",
        "OpenStack-API-Version": "container 1.40"})
    response = conn.getresponse()
    text = response.read().decode()
    conn.close()
    assert response.status == 202, text
    return text


def _status(proc: BerthProcess, token: str, uuid: str) -> str | None:
    conn = http.client.HTTPConnection("127.0.0.1", proc.port, timeout=60)
    conn.request("GET", f"/v1/containers/{uuid}", headers={
        "X-Auth-Token": token, "OpenStack-API-Version": "container 1.40"})
    response = conn.getresponse()
    status = json.loads(response.read()).get("status")
    conn.close()
    return status
