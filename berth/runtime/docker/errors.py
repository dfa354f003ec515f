"""Translation of docker-SDK and HTTP failures into ``berth.runtime.base`` errors.

Every call into the SDK runs inside :func:`translate_errors`, so nothing outside this
package ever sees a ``docker.errors`` or ``requests`` exception::

    docker.errors.ImageNotFound            -> RuntimeImageNotFound
    docker.errors.NotFound (other 404s)    -> RuntimeNotFound
    APIError 409                           -> RuntimeConflict
    APIError 400, SDK InvalidArgument      -> RuntimeInvalid
    requests ConnectionError, no engine    -> RuntimeUnavailable
    anything else from the SDK             -> RuntimeDriverError

The message is the engine's own explanation (``"No such container: zun-…"``), not the
SDK's ``"404 Client Error for http+docker://…"`` text.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import docker.errors
import requests.exceptions

from berth.runtime.base import (
    RuntimeConflict,
    RuntimeDriverError,
    RuntimeImageNotFound,
    RuntimeInvalid,
    RuntimeNotFound,
    RuntimeUnavailable,
)


def explanation(exc: BaseException) -> str:
    """The most useful text of ``exc``: the engine's explanation when it gave one."""
    if isinstance(exc, docker.errors.APIError) and exc.explanation:
        text = exc.explanation
        if isinstance(text, bytes):
            text = text.decode("utf-8", "replace")
        return str(text).strip()
    return str(exc).strip() or type(exc).__name__


def status_code(exc: BaseException) -> int | None:
    """The HTTP status the engine answered with, or None."""
    if isinstance(exc, docker.errors.APIError) and exc.status_code is not None:
        return int(exc.status_code)
    return None


def make_error(cls: type[RuntimeDriverError], reason: str) -> RuntimeDriverError:
    """``cls`` with ``reason``, without saying the same words twice: Docker's
    "No such container: x" is not prefixed again with "No such container:"."""
    prefix = cls.message.split("%(", 1)[0].strip().rstrip(":").lower()
    if prefix and reason.lower().startswith(prefix):
        return cls(reason, reason=reason)
    return cls(reason=reason)


def to_runtime_error(exc: BaseException) -> RuntimeDriverError:
    """Map one SDK / HTTP exception to the most specific runtime error."""
    reason = explanation(exc)
    if isinstance(exc, docker.errors.ImageNotFound):
        return make_error(RuntimeImageNotFound, reason)
    if isinstance(exc, docker.errors.NotFound):
        return make_error(RuntimeNotFound, reason)
    code = status_code(exc)
    if code == 409:
        return make_error(RuntimeConflict, reason)
    if code == 400:
        return make_error(RuntimeInvalid, reason)
    if isinstance(exc, (docker.errors.InvalidArgument, docker.errors.InvalidVersion)):
        # Raised by the SDK before anything is sent: a parameter this engine cannot take.
        return make_error(RuntimeInvalid, reason)
    if isinstance(exc, requests.exceptions.ConnectionError):
        return make_error(RuntimeUnavailable, reason)
    if isinstance(exc, requests.exceptions.Timeout):
        return make_error(RuntimeDriverError, f"the engine did not answer in time ({reason})")
    if isinstance(exc, docker.errors.DockerException) and "fetching server API version" in reason:
        # APIClient(version="auto") asks the engine at construction; no answer = no engine.
        return make_error(RuntimeUnavailable, reason)
    return make_error(RuntimeDriverError, reason)


@contextlib.contextmanager
def translate_errors() -> Iterator[None]:
    """Re-raise SDK and HTTP failures as ``RuntimeDriverError`` subclasses ``from`` the
    original. Runtime errors raised inside the block pass through unchanged."""
    try:
        yield
    except RuntimeDriverError:
        raise
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise to_runtime_error(exc) from exc


# -- registry answers (pull, distribution inspect) ---------------------------------

#: Words in which registries and the engine say "no such repository or tag".
_MISSING_MARKERS = ("manifest unknown", "not found", "repository does not exist", "name unknown")
#: Words in which they say "not with these credentials".
_AUTH_MARKERS = ("unauthorized", "authentication required", "access denied", "denied:")


def registry_says_missing(exc: BaseException) -> bool:
    """Whether a failed pull / distribution inspect means the registry has no such image."""
    if status_code(exc) == 404:
        return True
    text = explanation(exc).lower()
    return any(marker in text for marker in _MISSING_MARKERS)


def registry_refused_auth(exc: BaseException) -> bool:
    """Whether the registry refused the credentials (or their absence)."""
    if status_code(exc) in (401, 403):
        return True
    text = explanation(exc).lower()
    return any(marker in text for marker in _AUTH_MARKERS)


def engine_unreachable(exc: BaseException) -> bool:
    """Whether ``exc`` says the engine itself (not a registry) could not be reached."""
    return isinstance(to_runtime_error(exc), RuntimeUnavailable)


def distribution_verdict(exc: BaseException) -> bool | None:
    """What a failed distribution inspect says about the image: False when the registry
    says it has no such repository or tag, None when it could not be asked (unreachable,
    credentials refused, anything else)."""
    code = status_code(exc)
    if code == 404:
        return False
    if code in (401, 403):
        return None
    if registry_says_missing(exc) and not registry_refused_auth(exc):
        return False
    return None
