"""berth's exception tree.

Every error berth raises on purpose derives from :class:`BerthError`. The API maps
them to Zun's error envelope and an HTTP status in ``berth.api.errors`` (and only
there); the RPC layer carries them between processes by class name. Class names are
part of the wire contract: the API's error ``code`` is ``container.`` followed by the
class name in kebab case (``ContainerNotFound`` -> ``container.container-not-found``),
as in Zun.

    BerthError
    ├── Invalid                          bad input (400)
    │   ├── InvalidParameterValue
    │   ├── InvalidParamInVersion
    │   ├── ImageNotFound
    │   ├── NoInteractiveFlag
    │   └── UncreatedContainer
    ├── NotAuthenticated                 401 (no token, or one Keystone refuses)
    ├── NotAuthorized                    403
    │   ├── PolicyNotAuthorized
    │   └── OverQuota
    ├── NotFound                         404
    │   ├── ContainerNotFound
    │   ├── ComputeNodeNotFound
    │   ├── ZunServiceNotFound
    │   ├── RequestedHostNotFound
    │   ├── RegistryNotFound
    │   ├── NetworkNotFound
    │   ├── VolumeNotFound
    │   └── ResourceNotFound
    ├── Conflict                         409
    │   ├── InvalidStateException
    │   ├── ContainerHostNotUp
    │   ├── TaskInProgress
    │   ├── ContainerAlreadyExists
    │   ├── NetworkPlugFailed            the CNI daemon could not plug or unplug
    │   └── VolumeUnavailable            in use elsewhere, in error, not ready in time
    ├── NotAcceptable                    406 (microversions)
    ├── UnsupportedMediaType             415
    ├── ServiceUnavailable               503 (an outside service answered no; not opaque)
    │   └── IdentityServiceUnavailable   Keystone cannot validate tokens now
    ├── NoValidHost                      no node can take the container (row -> Error)
    ├── ResourcesUnavailable             the node's claim failed (row -> Error)
    ├── VolumeError                      a volume provider failed (500 at the API)
    ├── RPCError                         transport failures
    │   └── RPCTimeout
    ├── RuntimeDriverError               see berth.runtime.base
    └── NetworkDriverError               see berth.network.base
"""

from __future__ import annotations

import re
from typing import Any


def kebab(name: str) -> str:
    """``InvalidStateException`` -> ``invalid-state-exception`` (Zun's error code suffix)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "-", name).lower()


class BerthError(Exception):
    """Root of every error berth raises on purpose.

    ``message`` is what a user reads; write it so that it says what was wrong and,
    when there is something to do, what to do.
    """

    message = "An unknown error occurred."

    def __init__(self, message: str | None = None, **kwargs: Any) -> None:
        if message is None:
            try:
                message = self.message % kwargs if kwargs else self.message
            except (KeyError, TypeError):
                message = self.message
        self.kwargs = kwargs
        super().__init__(message)

    @property
    def msg(self) -> str:
        return str(self.args[0]) if self.args else self.message


class Invalid(BerthError):
    message = "Unacceptable parameters."


class InvalidParameterValue(Invalid):
    message = "%(err)s"


class SchemaValidationError(InvalidParameterValue):
    """A body or query parameters refused by their declared schema
    (:class:`berth.api.schemas.validation.RequestSchema`): Zun answers these from its
    jsonschema layer with the code ``schema-validation-error``, and a client may key on
    it. The checks made by hand keep ``invalid-parameter-value``."""


class InvalidParamInVersion(Invalid):
    message = (
        "Invalid param %(param)s because current request version is %(req_version)s. "
        "%(param)s is only supported from version %(min_version)s"
    )


class ImageNotFound(Invalid):
    message = "Image %(image)s could not be found."


class NoInteractiveFlag(Invalid):
    message = (
        "Cannot attach to container %(uuid)s: it was not created interactive "
        "(create it with --interactive)."
    )


class UncreatedContainer(Invalid):
    message = "Cannot operate an uncreated container: %(uuid)s has no Docker container yet."


class NotAuthenticated(BerthError):
    message = "The request you have made requires authentication: %(reason)s"


class NotAuthorized(BerthError):
    message = "Not authorized."


class PolicyNotAuthorized(NotAuthorized):
    message = "Policy doesn't allow %(action)s to be performed."


class OverQuota(NotAuthorized):
    message = "Quota exceeded for resources: %(overs)s"


class NotFound(BerthError):
    message = "Resource could not be found."


class ContainerNotFound(NotFound):
    message = "Container %(container)s could not be found."


class CapsuleNotFound(NotFound):
    message = "Capsule %(capsule)s could not be found."


class ComputeNodeNotFound(NotFound):
    message = "Compute host %(compute_node)s could not be found."


class ZunServiceNotFound(NotFound):
    message = "Zun service %(binary)s on host %(host)s could not be found."


class RequestedHostNotFound(NotFound):
    message = "Requested host %(host)s does not exist."


class RegistryNotFound(NotFound):
    message = "Registry %(registry)s could not be found."


class NetworkNotFound(NotFound):
    message = "Network %(network)s could not be found."


class ResourceNotFound(NotFound):
    message = "%(resource)s could not be found."


class VolumeNotFound(NotFound):
    message = "%(reason)s"


class Conflict(BerthError):
    message = "Conflict."


class NetworkPlugFailed(Conflict):
    """The CNI daemon could not plug (or unplug) a container: its address is taken,
    the network is gone, the daemon does not answer. Here, not in berth.compute, so
    that it crosses RPC as itself (berth.rpc.oslo allows this module's errors)."""

    message = "Could not plug the container into network %(network)s: %(reason)s"


class VolumeUnavailable(Conflict):
    """A volume is not usable now: attached elsewhere, in error, not ready in time."""

    message = "%(reason)s"


class VolumeError(BerthError):
    """A volume provider failed to create, attach, detach or delete a volume."""

    message = "%(reason)s"


class InvalidStateException(Conflict):
    message = "Cannot %(action)s container %(id)s in %(actual_state)s state."


class ContainerHostNotUp(Conflict):
    message = (
        "Container %(container)s is on host %(host)s, whose compute agent is down "
        "(no heartbeat recently). Start berth-compute on %(host)s and try again; the "
        "agent resumes control of its containers when it comes back."
    )


class TaskInProgress(Conflict):
    message = (
        "Container %(uuid)s is busy with %(task_state)s; wait until it finishes "
        "and try again."
    )


class ContainerAlreadyExists(Conflict):
    message = "A container with %(field)s %(value)s already exists."


class NotAcceptable(BerthError):
    message = "Request not acceptable."


class UnsupportedMediaType(BerthError):
    message = "Unsupported media type %(content_type)s: send application/json."


class ServiceUnavailable(BerthError):
    message = "%(reason)s"


class IdentityServiceUnavailable(ServiceUnavailable):
    message = ("berth cannot validate tokens now: the identity service (Keystone) "
               "does not answer (%(reason)s). Try again in a moment.")


class NoValidHost(BerthError):
    message = "There are not enough hosts available."


class ResourcesUnavailable(BerthError):
    message = "Insufficient compute resources: %(reason)s"


class RPCError(BerthError):
    message = "Error talking to compute agent %(host)s: %(reason)s"


class RPCTimeout(RPCError):
    message = "Compute agent %(host)s did not answer %(method)s within %(timeout)s s."


def by_name(name: str) -> type[BerthError] | None:
    """The BerthError subclass called ``name``, for re-raising errors sent over RPC."""
    todo: list[type[BerthError]] = [BerthError]
    while todo:
        cls = todo.pop()
        if cls.__name__ == name:
            return cls
        todo.extend(cls.__subclasses__())
    return None
