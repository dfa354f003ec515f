"""``python -m bench [ID ...]``: run the benchmarks (all by default), print a table
(measure, berth, baseline, ratio, goal) and write it as JSON to bench/results/.

Both sides of every benchmark use the Docker engine ``DOCKER_HOST`` names (else the
local socket), which must hold the test image: nothing is pulled."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import traceback

import docker

from bench import (
    i1_glance_create,
    p1_p2_create,
    p1n_network_create,
    p3_state_latency,
    p4_sync_rows,
    p5_api_latency,
    p6_agent_memory,
    p6_memory,
    p7_restart,
    p8_cni_add,
    p9_capsule_create,
    p10_volume_create,
    p11_auth_cost,
    p12_cri_capsule,
    p13_dashboard_list,
    p14_neutron_create,
    p16_overlay_datapath,
    p16c_overlay_create,
    z_zun,
)
from bench.common import Berth, MissingImage, Result, docker_client, require_images

BENCHMARKS = {
    "P1": p1_p2_create.p1,
    "P1N": p1n_network_create.p1n,
    "P2": p1_p2_create.p2,
    "P3": p3_state_latency.p3,
    "P4": p4_sync_rows.p4,
    "P5": p5_api_latency.p5,
    "P6": p6_memory.p6,
    "P6A": p6_agent_memory.p6_agent,
    "P7": p7_restart.p7,
    "P8": p8_cni_add.p8,
    "P9": p9_capsule_create.p9,
    "P10": p10_volume_create.p10,
    "P11": p11_auth_cost.p11,
    "P12": p12_cri_capsule.p12,
    "P13": p13_dashboard_list.p13,
    "P14": p14_neutron_create.p14,
    "I1": i1_glance_create.i1,
    "I2": i1_glance_create.i2,
    "Z1": z_zun.z1,
    "Z3": z_zun.z3,
    "P16": p16_overlay_datapath.p16,
    "P16C": p16c_overlay_create.p16c,
}


def _verdict(met: bool | None) -> str:
    return "NOT RUN" if met is None else "MET" if met else "MISSED"


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("ids", nargs="*", help="benchmarks to run (default: all)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = parser.parse_args(argv)
    ids = [i.upper() for i in args.ids] or list(BENCHMARKS)
    unknown = [i for i in ids if i not in BENCHMARKS]
    if unknown:
        parser.error(f"no benchmark {', '.join(unknown)}; there are {', '.join(BENCHMARKS)}")
    try:
        client = docker_client()
        try:
            require_images(client)
        finally:
            client.close()
    except (MissingImage, docker.errors.DockerException) as err:
        print(f"python -m bench: {err}", file=sys.stderr)
        return 2
    results: list[Result] = []
    # Benchmarks create more containers than the default quotas allow.
    berth = Berth("[quota]\ncontainers = -1\nmemory = -1\ncpu = -1\ndisk = -1\n"
                  "[compute]\ncpu_allocation_ratio = 64\n")
    failed = []
    try:
        for bid in ids:
            print(f"running {bid} ...", file=sys.stderr, flush=True)
            try:
                results.append(BENCHMARKS[bid](berth))
            except Exception as err:  # noqa: BLE001 - one failure must not lose the rest
                traceback.print_exc()
                failed.append(bid)
                results.append(Result(bid, f"FAILED: {type(err).__name__}: {err}"[:58], None,
                                      None, "", "-", None, detail={"error": repr(err)}))
    finally:
        berth.stop()
    print(f"{'id':4} {'measure':58} {'berth':>10} {'baseline':>10} {'unit':5} "
          f"{'ratio':>7}  goal")
    for r in results:
        print(f"{r.id:4} {r.measure[:58]:58} {_fmt(r.berth):>10} {_fmt(r.baseline):>10} "
              f"{r.unit:5} {_fmt(r.ratio):>7}  {r.goal} {_verdict(r.met)}")
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, time.strftime("bench-%Y%m%d-%H%M%S.json"))
    with open(path, "w") as fh:
        json.dump([r.as_dict() for r in results], fh, indent=2)
    print(f"results written to {path}", file=sys.stderr)
    if failed:
        print(f"failed to run: {', '.join(failed)} (tracebacks above)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
