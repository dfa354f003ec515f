"""The recording helpers of berth/metrics/catalog.py: what each counts, and under
which labels."""

from __future__ import annotations

import pytest
from support.metrics import sample

from berth.common import exceptions as exc
from berth.metrics import catalog


def test_action_name_is_the_zun_event_without_its_prefixes() -> None:
    assert catalog.action_name("compute__do_container_stop") == "stop"
    assert catalog.action_name("compute__do_container_create") == "create"
    assert catalog.action_name("compute__add_security_group") == "add_security_group"


def test_timed_action_counts_success_error_and_a_failure_that_returns() -> None:
    before = {r: sample("berth_compute_actions_total", action="t-act", result=r)
              for r in ("success", "error")}
    timed = sample("berth_compute_action_duration_seconds_count", action="t-act")
    with catalog.timed_action("t-act"):
        pass
    with pytest.raises(ValueError), catalog.timed_action("t-act"):
        raise ValueError("boom")
    with catalog.timed_action("t-act") as result:
        result.fail()
    assert sample("berth_compute_actions_total", action="t-act", result="success") \
        == before["success"] + 1
    assert sample("berth_compute_actions_total", action="t-act", result="error") \
        == before["error"] + 2
    assert sample("berth_compute_action_duration_seconds_count", action="t-act") == timed + 3


def test_create_phase_times_ok_and_error_apart() -> None:
    ok = sample("berth_compute_create_phase_duration_seconds_count", phase="pull", result="ok")
    bad = sample("berth_compute_create_phase_duration_seconds_count", phase="pull",
                 result="error")
    with catalog.create_phase("pull"):
        pass
    with pytest.raises(RuntimeError), catalog.create_phase("pull"):
        raise RuntimeError
    assert sample("berth_compute_create_phase_duration_seconds_count", phase="pull",
                  result="ok") == ok + 1
    assert sample("berth_compute_create_phase_duration_seconds_count", phase="pull",
                  result="error") == bad + 1


def test_an_unknown_http_method_is_counted_as_other_so_clients_cannot_add_series() -> None:
    before = sample("berth_api_requests_total", method="OTHER", route="/t", status="405")
    catalog.observe_request("BREW", "/t", 405, 0.001)
    catalog.observe_request("PROPFIND", "/t", 405, 0.001)
    assert sample("berth_api_requests_total", method="OTHER", route="/t", status="405") \
        == before + 2
    assert sample("berth_api_requests_total", method="BREW", route="/t", status="405") == 0


def test_observe_request_counts_by_status_and_times_by_route() -> None:
    ok = sample("berth_api_requests_total", method="GET", route="/t2", status="200")
    timed = sample("berth_api_request_duration_seconds_count", method="GET", route="/t2")
    catalog.observe_request("GET", "/t2", 200, 0.002)
    catalog.observe_request("GET", "/t2", 404, 0.002)
    assert sample("berth_api_requests_total", method="GET", route="/t2", status="200") == ok + 1
    assert sample("berth_api_request_duration_seconds_count", method="GET", route="/t2") \
        == timed + 2


@pytest.mark.parametrize(("raised", "result"), [
    (None, "ok"),
    (exc.RPCTimeout(host="h", method="m", timeout=1), "timeout"),
    (exc.RPCError(host="h", reason="down"), "error"),
    (exc.Conflict("busy"), "refused"),
    (OSError("socket"), "error"),
])
def test_timed_rpc_sorts_the_outcome(raised: Exception | None, result: str) -> None:
    labels = {"method": f"t_{result}", "kind": "call", "result": result}
    before = sample("berth_rpc_client_duration_seconds_count", **labels)
    try:
        with catalog.timed_rpc(f"t_{result}", "call"):
            if raised is not None:
                raise raised
    except Exception as err:  # noqa: BLE001 - re-raised as is, checked here
        assert err is raised
    assert sample("berth_rpc_client_duration_seconds_count", **labels) == before + 1


def test_count_sync_counts_only_what_changed_a_row() -> None:
    updated = sample("berth_state_sync_corrections_total", source="t-source",
                     outcome="updated")
    for outcome in ("skipped", "unchanged", "removing", "updated", "error"):
        catalog.count_sync("t-source", outcome)
    catalog.count_sync("t-source", "updated", 3)
    assert sample("berth_state_sync_corrections_total", source="t-source",
                  outcome="updated") == updated + 4
    for outcome in ("skipped", "unchanged", "removing"):
        assert sample("berth_state_sync_corrections_total", source="t-source",
                      outcome=outcome) == 0


def test_event_lag_is_never_negative() -> None:
    below = sample("berth_pleg_event_lag_seconds_bucket", le="0.001")
    total = sample("berth_pleg_event_lag_seconds_sum")
    catalog.observe_event_lag(engine_at_ns=2_000_000_000, now_ns=1_000_000_000)
    assert sample("berth_pleg_event_lag_seconds_bucket", le="0.001") == below + 1
    assert sample("berth_pleg_event_lag_seconds_sum") == total
    catalog.observe_event_lag(engine_at_ns=1_000_000_000, now_ns=1_500_000_000)
    assert sample("berth_pleg_event_lag_seconds_sum") == pytest.approx(total + 0.5)
