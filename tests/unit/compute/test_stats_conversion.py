"""From a non-streamed ``docker stats`` answer to Zun's stats keys (behaviours.md §6.5):
the engine dict -> StatsSample (runtime.docker.inspection) -> view (compute.flows)."""

from __future__ import annotations

import pytest

from berth.compute.flows.inspection import cpu_percent, memory_used, stats_view
from berth.runtime.docker.inspection import sample_from_stats
from berth.runtime.inspection_types import StatsSample

MIB = 1024 * 1024

#: Shaped like Docker 20.10's answer on cgroup v1 (values chosen to be checkable).
CGROUP_V1 = {
    "cpu_stats": {"cpu_usage": {"total_usage": 3_500_000_000,
                                "percpu_usage": [1_000_000_000, 2_500_000_000]},
                  "system_cpu_usage": 120_000_000_000, "online_cpus": 2},
    "precpu_stats": {"cpu_usage": {"total_usage": 3_000_000_000},
                     "system_cpu_usage": 118_000_000_000, "online_cpus": 2},
    "memory_stats": {"usage": 50 * MIB, "limit": 64 * MIB,
                     "stats": {"total_inactive_file": 10 * MIB, "inactive_file": 3 * MIB}},
    "blkio_stats": {"io_service_bytes_recursive": [
        {"major": 8, "minor": 0, "op": "Read", "value": 4096},
        {"major": 8, "minor": 0, "op": "Write", "value": 8192},
        {"major": 8, "minor": 16, "op": "Read", "value": 1000},
        {"major": 8, "minor": 0, "op": "Sync", "value": 99999},
        {"major": 8, "minor": 0, "op": "Total", "value": 13288},
    ]},
    "networks": {"eth0": {"rx_bytes": 736, "tx_bytes": 100},
                 "eth1": {"rx_bytes": 64, "tx_bytes": 20}},
}


def sample(**overrides: int) -> StatsSample:
    values = {"cpu_total": 0, "system_total": 0, "precpu_total": 0, "presystem_total": 0,
              "online_cpus": 1, "mem_usage": 0, "mem_inactive_file": 0, "mem_limit": 0,
              "block_read": 0, "block_write": 0, "net_rx": 0, "net_tx": 0}
    values.update(overrides)
    return StatsSample(**values)


def test_cgroup_v1_answer_becomes_zun_keys_with_docker_cli_cpu_and_memory():
    view = stats_view("web", sample_from_stats(CGROUP_V1))
    assert set(view) == {"CONTAINER", "CPU %", "MEM USAGE(MiB)", "MEM LIMIT(MiB)", "MEM %",
                         "BLOCK I/O(B)", "NET I/O(B)"}
    assert view["CONTAINER"] == "web"
    # 0.5 s of CPU over 2 s of node time, on 2 CPUs: 50 %.
    assert view["CPU %"] == pytest.approx(50.0)
    # cgroup v1: total_inactive_file is the cache, not inactive_file.
    assert view["MEM USAGE(MiB)"] == pytest.approx(40.0)
    assert view["MEM LIMIT(MiB)"] == pytest.approx(64.0)
    assert view["MEM %"] == pytest.approx(62.5)
    assert view["BLOCK I/O(B)"] == "5096/8192"
    assert view["NET I/O(B)"] == "800/120"


def test_numbers_are_floats_and_io_figures_are_strings():
    view = stats_view("web", sample_from_stats(CGROUP_V1))
    for key in ("CPU %", "MEM USAGE(MiB)", "MEM LIMIT(MiB)", "MEM %"):
        assert isinstance(view[key], float), key
    assert isinstance(view["BLOCK I/O(B)"], str)
    assert isinstance(view["NET I/O(B)"], str)


def test_cgroup_v2_uses_inactive_file_and_lowercase_block_ops():
    answer = {
        "cpu_stats": {"cpu_usage": {"total_usage": 20}, "system_cpu_usage": 1000,
                      "online_cpus": 4},
        "precpu_stats": {"cpu_usage": {"total_usage": 10}, "system_cpu_usage": 900},
        "memory_stats": {"usage": 8 * MIB, "limit": 16 * MIB,
                         "stats": {"inactive_file": 2 * MIB}},
        "blkio_stats": {"io_service_bytes_recursive": [
            {"op": "read", "value": 7}, {"op": "write", "value": 9}]},
    }
    got = sample_from_stats(answer)
    assert (got.mem_inactive_file, got.block_read, got.block_write) == (2 * MIB, 7, 9)
    view = stats_view("c", got)
    assert view["MEM USAGE(MiB)"] == pytest.approx(6.0)
    assert view["CPU %"] == pytest.approx(10 / 100 * 4 * 100)


def test_missing_sections_count_as_zero_without_networks_or_blkio():
    view = stats_view("c", sample_from_stats({"memory_stats": {}, "blkio_stats":
                                              {"io_service_bytes_recursive": None}}))
    assert view == {"CONTAINER": "c", "CPU %": 0.0, "MEM USAGE(MiB)": 0.0,
                    "MEM LIMIT(MiB)": 0.0, "MEM %": 0.0, "BLOCK I/O(B)": "0/0",
                    "NET I/O(B)": "0/0"}


def test_online_cpus_falls_back_to_the_percpu_list():
    answer = {"cpu_stats": {"cpu_usage": {"total_usage": 1, "percpu_usage": [1, 0, 0]}}}
    assert sample_from_stats(answer).online_cpus == 3


@pytest.mark.parametrize("cpu,precpu,system,presystem", [
    (5, 5, 200, 100),     # idle: no CPU time used
    (5, 9, 200, 100),     # the counter went back (container restarted)
    (9, 5, 100, 100),     # no node time passed
])
def test_cpu_is_zero_when_a_delta_is_not_positive(cpu, precpu, system, presystem):
    got = sample(cpu_total=cpu, precpu_total=precpu, system_total=system,
                 presystem_total=presystem)
    assert cpu_percent(got) == 0.0


def test_cpu_counts_every_busy_cpu_beyond_one_hundred_percent():
    busy_two = sample(cpu_total=2000, precpu_total=0, system_total=2000,
                      presystem_total=0, online_cpus=2)
    assert cpu_percent(busy_two) == pytest.approx(200.0)


def test_memory_used_keeps_usage_when_the_cache_figure_is_not_below_it():
    assert memory_used(sample(mem_usage=10, mem_inactive_file=10)) == 10
    assert memory_used(sample(mem_usage=10, mem_inactive_file=0)) == 10
    assert memory_used(sample(mem_usage=10, mem_inactive_file=4)) == 6
