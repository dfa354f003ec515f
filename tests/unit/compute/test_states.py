"""The action/status table and the messages of refused actions (model.md §5.1)."""

from __future__ import annotations

import pytest

from berth.common.exceptions import Conflict, InvalidStateException
from berth.compute import states
from berth.compute.states import (
    CREATE_TASK_STATES,
    RETRYABLE_TASK_STATES,
    VALID_STATES,
    Status,
    TaskState,
    check_action_allowed,
    delete_action,
)

UUID = "1f0c6d2e-8a4b-4c1e-9d7a-2b5e3f4a6c8d"

# model.md §5.1, copied by hand: one row per action, one column per status, in the
# spec's column order; "x" = allowed.
COLUMNS = ["Creating", "Created", "Running", "Stopped", "Paused", "Restarting", "Rebuilding", "Deleting", "Deleted", "Error", "Unknown", "Dead"]
TABLE_TEXT = """
start                  . x . x . . . . . x . .
stop                   . . x . . . . . . . . .
reboot                 . x x x . . . . . x . .
rebuild                . x x x . . . . . x . .
pause                  . . x . . . . . . . . .
unpause                . . . . x . . . . . . .
kill                   . . x . . . . . . . . .
execute                . . x . . . . . . . . .
execute_resize         . . x . . . . . . . . .
attach                 . . x . . . . . . . . .
resize                 . . x . . . . . . . . .
top                    . . x . . . . . . . . .
stats                  . . x . . . . . . . . .
logs                   . x x x x . . . . x x .
get_archive            . x x x x . . . . . . .
put_archive            . x x x x . . . . . . .
commit                 . . x x x . . . . . . .
update                 . x x x x . . . . . . .
resize_container       . x x x x . . . . . . .
add_security_group     . x x x x . . . . . . .
remove_security_group  . x x x x . . . . . . .
delete                 . x . x . . . . x x . x
delete_force           x x x x . x x x x x x x
delete_stop            . x x x . . . . x x . x
"""


def _parse_table() -> dict[str, set[str]]:
    table: dict[str, set[str]] = {}
    for line in TABLE_TEXT.strip().splitlines():
        action, *marks = line.split()
        assert len(marks) == len(COLUMNS), action
        table[action] = {status for status, mark in zip(COLUMNS, marks) if mark == "x"}
    return table


EXPECTED = _parse_table()
CELLS = [(action, status) for action in EXPECTED for status in COLUMNS]


def test_status_values_are_zuns_strings_in_table_order() -> None:
    assert [s.value for s in Status] == COLUMNS


def test_task_state_values_are_zuns_strings() -> None:
    assert {t.value for t in TaskState} == {
        "container_creating", "container_starting", "container_stopping",
        "container_rebooting", "container_pausing", "container_unpausing",
        "container_killing", "container_deleting", "container_rebuilding",
        "sg_adding", "sg_removing", "network_attaching", "network_detaching",
        "image_pulling",
    }
    for member in TaskState:
        assert member.name == member.value.upper()


def test_valid_states_has_exactly_the_spec_actions() -> None:
    assert set(VALID_STATES) == set(EXPECTED)


def test_valid_states_cannot_be_modified() -> None:
    with pytest.raises(TypeError):
        VALID_STATES["stop"] = frozenset()  # type: ignore[index]


@pytest.mark.parametrize(("action", "status"), CELLS)
def test_valid_states_cell_matches_spec(action: str, status: str) -> None:
    assert (status in VALID_STATES[action]) == (status in EXPECTED[action])


@pytest.mark.parametrize(("action", "status"), CELLS)
def test_check_action_allowed_follows_the_table(action: str, status: str) -> None:
    if status in EXPECTED[action]:
        check_action_allowed(action, status, UUID)
    else:
        with pytest.raises(InvalidStateException):
            check_action_allowed(action, status, UUID)


def test_paused_container_is_not_deletable_even_with_force() -> None:
    for action in ("delete", "delete_force", "delete_stop"):
        assert Status.PAUSED not in VALID_STATES[action]


def test_refused_stop_names_action_container_status_and_allowed_status() -> None:
    with pytest.raises(InvalidStateException) as info:
        check_action_allowed("stop", "Stopped", UUID)
    assert str(info.value) == (
        f"Cannot stop container {UUID} in Stopped state. "
        "stop is allowed when the container is Running."
    )


def test_refused_start_lists_every_allowed_status_in_table_order() -> None:
    with pytest.raises(InvalidStateException) as info:
        check_action_allowed("start", Status.RUNNING, UUID)
    assert str(info.value) == (
        f"Cannot start container {UUID} in Running state. "
        "start is allowed when the container is Created, Stopped or Error."
    )


def test_refused_delete_of_running_container_says_how_to_proceed() -> None:
    with pytest.raises(InvalidStateException) as info:
        check_action_allowed("delete", "Running", UUID)
    assert str(info.value) == (
        f"Cannot delete container {UUID} in Running state. "
        "delete is allowed when the container is Created, Stopped, Deleted, Error or Dead. "
        "Stop it first, or delete it with --stop or --force."
    )


@pytest.mark.parametrize("action", ["delete", "delete_force", "delete_stop"])
def test_refused_delete_of_paused_container_says_to_unpause(action: str) -> None:
    with pytest.raises(InvalidStateException) as info:
        check_action_allowed(action, "Paused", UUID)
    assert "Unpause it first" in str(info.value)


def test_refused_delete_of_creating_container_has_no_hint() -> None:
    with pytest.raises(InvalidStateException) as info:
        check_action_allowed("delete", "Creating", UUID)
    assert str(info.value).endswith("Created, Stopped, Deleted, Error or Dead.")


def test_refused_non_delete_action_has_no_hint() -> None:
    with pytest.raises(InvalidStateException) as info:
        check_action_allowed("pause", "Paused", UUID)
    assert str(info.value).endswith("pause is allowed when the container is Running.")


def test_refusal_carries_structured_details_and_is_a_conflict() -> None:
    with pytest.raises(InvalidStateException) as info:
        check_action_allowed("unpause", "Running", UUID)
    exc = info.value
    assert isinstance(exc, Conflict)
    assert exc.kwargs == {
        "action": "unpause",
        "id": UUID,
        "actual_state": "Running",
        "allowed_states": ["Paused"],
    }


def test_unknown_status_string_is_refused_and_named() -> None:
    with pytest.raises(InvalidStateException, match="in Bogus state"):
        check_action_allowed("start", "Bogus", UUID)


def test_unknown_action_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="network_attach"):
        check_action_allowed("network_attach", "Running", UUID)


@pytest.mark.parametrize(
    ("force", "stop", "expected"),
    [
        (False, False, "delete"),
        (True, False, "delete_force"),
        (False, True, "delete_stop"),
        (True, True, "delete_stop"),
    ],
)
def test_delete_action_lets_stop_win_over_force(force: bool, stop: bool, expected: str) -> None:
    assert delete_action(force=force, stop=stop) == expected
    assert expected in VALID_STATES


def test_create_task_states_are_the_recovery_error_set() -> None:
    assert {t.value for t in CREATE_TASK_STATES} == {
        "container_creating", "image_pulling", "network_attaching",
        "network_detaching", "sg_adding", "sg_removing",
    }


def test_retryable_task_states_are_the_recovery_rerun_set() -> None:
    assert {t.value for t in RETRYABLE_TASK_STATES} == {
        "container_rebooting", "container_stopping", "container_starting",
        "container_pausing", "container_unpausing", "container_killing",
    }


def test_recovery_sets_are_disjoint_and_leave_deleting_and_rebuilding_out() -> None:
    assert not CREATE_TASK_STATES & RETRYABLE_TASK_STATES
    left = set(TaskState) - CREATE_TASK_STATES - RETRYABLE_TASK_STATES
    assert left == {TaskState.CONTAINER_DELETING, TaskState.CONTAINER_REBUILDING}


def test_module_exports_its_enums_as_str() -> None:
    assert states.Status.RUNNING == "Running"
    assert states.TaskState.CONTAINER_STOPPING == "container_stopping"
