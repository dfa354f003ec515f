"""Zun's container status and task_state vocabularies, and which action is allowed when.

Both vocabularies cross the wire unchanged (API views, RPC payloads), so the string
values are Zun's, letter for letter. :data:`VALID_STATES` is the one table that says
from which statuses a user action may start (model.md §5.1); the API checks it with
:func:`check_action_allowed` before it casts anything to an agent, and answers 409
with the message of the :class:`InvalidStateException` raised here.
:data:`TRANSITIONS` is the one table of the moves a row's status may make (model.md
§5.2), which every status write checks (``berth.compute.status_writes``).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from types import MappingProxyType

from berth.common.exceptions import InvalidStateException


class Status(enum.StrEnum):
    """A container's (or capsule's) ``status`` column (model.md §3)."""

    CREATING = "Creating"
    CREATED = "Created"
    RUNNING = "Running"
    STOPPED = "Stopped"
    PAUSED = "Paused"
    RESTARTING = "Restarting"
    REBUILDING = "Rebuilding"
    DELETING = "Deleting"
    DELETED = "Deleted"
    ERROR = "Error"
    UNKNOWN = "Unknown"
    DEAD = "Dead"


class TaskState(enum.StrEnum):
    """A container's ``task_state`` column: the agent-side work in progress (model.md §4).

    Null (None) when nothing is in progress. While it is set, the engine's state is not
    copied into ``status`` (see :func:`berth.compute.status_mapping.should_apply`).
    """

    CONTAINER_CREATING = "container_creating"
    CONTAINER_STARTING = "container_starting"
    CONTAINER_STOPPING = "container_stopping"
    CONTAINER_REBOOTING = "container_rebooting"
    CONTAINER_PAUSING = "container_pausing"
    CONTAINER_UNPAUSING = "container_unpausing"
    CONTAINER_KILLING = "container_killing"
    CONTAINER_DELETING = "container_deleting"
    CONTAINER_REBUILDING = "container_rebuilding"
    SG_ADDING = "sg_adding"
    SG_REMOVING = "sg_removing"
    NETWORK_ATTACHING = "network_attaching"
    NETWORK_DETACHING = "network_detaching"
    IMAGE_PULLING = "image_pulling"


#: Task states that mean "the container was never completely created". Start-up
#: recovery marks rows left in one of these (or in status Creating) as Error.
CREATE_TASK_STATES: frozenset[TaskState] = frozenset({
    TaskState.CONTAINER_CREATING,
    TaskState.IMAGE_PULLING,
    TaskState.NETWORK_ATTACHING,
    TaskState.NETWORK_DETACHING,
    TaskState.SG_ADDING,
    TaskState.SG_REMOVING,
})

#: Task states whose action start-up recovery clears and runs again.
RETRYABLE_TASK_STATES: frozenset[TaskState] = frozenset({
    TaskState.CONTAINER_REBOOTING,
    TaskState.CONTAINER_STOPPING,
    TaskState.CONTAINER_STARTING,
    TaskState.CONTAINER_PAUSING,
    TaskState.CONTAINER_UNPAUSING,
    TaskState.CONTAINER_KILLING,
})


def _states(*statuses: Status) -> frozenset[Status]:
    return frozenset(statuses)


_S = Status
_RUNNING_ONLY = _states(_S.RUNNING)
_MODIFIABLE = _states(_S.CREATED, _S.RUNNING, _S.STOPPED, _S.PAUSED)
_RESTARTABLE = _states(_S.CREATED, _S.RUNNING, _S.STOPPED, _S.ERROR)
_DELETABLE = _states(_S.CREATED, _S.STOPPED, _S.DELETED, _S.ERROR, _S.DEAD)

#: Statuses from which each API action may start (model.md §5.1), keyed by action.
#: Actions missing here (network attach/detach/list, rename, show, the action log)
#: are not status-checked at all. ``Paused`` is not deletable, even with force.
VALID_STATES: Mapping[str, frozenset[Status]] = MappingProxyType({
    "start": _states(_S.CREATED, _S.STOPPED, _S.ERROR),
    "stop": _RUNNING_ONLY,
    "reboot": _RESTARTABLE,
    "rebuild": _RESTARTABLE,
    "pause": _RUNNING_ONLY,
    "unpause": _states(_S.PAUSED),
    "kill": _RUNNING_ONLY,
    "execute": _RUNNING_ONLY,
    "execute_resize": _RUNNING_ONLY,
    "attach": _RUNNING_ONLY,
    "resize": _RUNNING_ONLY,
    "top": _RUNNING_ONLY,
    "stats": _RUNNING_ONLY,
    "logs": _states(_S.CREATED, _S.RUNNING, _S.STOPPED, _S.PAUSED, _S.ERROR, _S.UNKNOWN),
    "get_archive": _MODIFIABLE,
    "put_archive": _MODIFIABLE,
    "commit": _states(_S.RUNNING, _S.STOPPED, _S.PAUSED),
    "update": _MODIFIABLE,
    "resize_container": _MODIFIABLE,
    "add_security_group": _MODIFIABLE,
    "remove_security_group": _MODIFIABLE,
    "delete": _DELETABLE,
    "delete_force": frozenset(Status) - {_S.PAUSED},
    "delete_stop": _DELETABLE | {_S.RUNNING},
})


def delete_action(force: bool, stop: bool) -> str:
    """The :data:`VALID_STATES` key for ``DELETE /v1/containers/{id}?force=&stop=``.

    ``stop`` wins over ``force`` (api-v1.md §7.6: "stop (with or without force)").
    """
    if stop:
        return "delete_stop"
    if force:
        return "delete_force"
    return "delete"


def check_action_allowed(action: str, status: str, uuid: str) -> None:
    """Raise :class:`InvalidStateException` unless ``action`` may start from ``status``.

    The message names the action, the container, its current status and the statuses
    from which the action is allowed, and for a delete that cannot go ahead, what to do
    instead. ``action`` must be a key of :data:`VALID_STATES`; any other name is a
    programming error (ValueError), so a typo never silently skips the check.
    """
    try:
        allowed = VALID_STATES[action]
    except KeyError:
        raise ValueError(f"{action!r} is not a status-checked action") from None
    if status in allowed:
        return
    allowed_in_order = [s.value for s in Status if s in allowed]
    allowed_text = _join_or(allowed_in_order)
    message = (
        f"Cannot {action} container {uuid} in {status} state. "
        f"{action} is allowed when the container is {allowed_text}."
    )
    hint = _delete_hint(action, status)
    if hint:
        message = f"{message} {hint}"
    raise InvalidStateException(
        message,
        action=action,
        id=uuid,
        actual_state=status,
        allowed_states=allowed_in_order,
    )


def _delete_hint(action: str, status: str) -> str | None:
    """What a user can do when a delete is refused; None when there is nothing to say."""
    if not action.startswith("delete"):
        return None
    if status == Status.RUNNING:
        return "Stop it first, or delete it with --stop or --force."
    if status == Status.PAUSED:
        return "Unpause it first; a paused container cannot be deleted, even with --force."
    return None


def _join_or(words: Iterable[str]) -> str:
    """``a``, ``a or b``, ``a, b or c``."""
    items = list(words)
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} or {items[-1]}"


#: The statuses the engine's state maps to (model.md §3.1: ``status_mapping``), which
#: a sync, a show or the end of an action copies into a row whatever it said before.
ENGINE_STATUSES: frozenset[Status] = _states(
    _S.CREATED, _S.RUNNING, _S.STOPPED, _S.PAUSED, _S.RESTARTING, _S.UNKNOWN, _S.DEAD)
#: What a new row may start as: Creating, or Error when no host can take it.
INITIAL_STATUSES: frozenset[Status] = _states(_S.CREATING, _S.ERROR)
_SETTLED = ENGINE_STATUSES | {_S.ERROR, _S.DELETED}

#: The moves a row's status may make (model.md §5.2), by the status it leaves. Zun
#: refuses none of its own row writes (its agent writes Error wherever a flow fails and
#: its sync copies whatever Docker says), so this table holds every move Zun's flows
#: make; berth's flows make no other (``status_writes`` logs one that is not here).
#: Writing a row's own status again is no move and always allowed.
TRANSITIONS: Mapping[str, frozenset[Status]] = MappingProxyType({   # Status keys (StrEnum)
    # the create's end (run or not), its failure, a forced delete
    _S.CREATING: _SETTLED | {_S.DELETING},
    _S.CREATED: _SETTLED | {_S.REBUILDING, _S.DELETING},
    _S.RUNNING: _SETTLED | {_S.REBUILDING, _S.DELETING},
    _S.STOPPED: _SETTLED | {_S.REBUILDING, _S.DELETING},
    # not deletable, even with force (VALID_STATES); rebuilt by a heal or an evacuation
    _S.PAUSED: _SETTLED | {_S.REBUILDING},
    _S.RESTARTING: _SETTLED | {_S.REBUILDING, _S.DELETING},
    # a rebuild ends Created (then as the engine shows it) or Error
    _S.REBUILDING: _SETTLED | {_S.DELETING},
    # a delete removes the row; without force a failure puts it in Error; the stop of
    # a ``delete --stop`` writes what the engine shows, then Deleting again
    _S.DELETING: _SETTLED,
    # deleting a Deleted row again; a capsule's member in Error with its capsule
    _S.DELETED: _states(_S.DELETING, _S.ERROR),
    _S.ERROR: _SETTLED | {_S.REBUILDING, _S.DELETING},
    _S.UNKNOWN: _SETTLED | {_S.REBUILDING, _S.DELETING},
    _S.DEAD: _SETTLED | {_S.REBUILDING, _S.DELETING},
})


def transition_allowed(was: str | None, to: str) -> bool:
    """Whether a row in status ``was`` (None: a new row) may move to ``to``."""
    if was is None:
        return to in INITIAL_STATUSES
    return was == to or to in TRANSITIONS.get(was, frozenset())  # a StrEnum: a str key
