"""``DockerRuntime``: berth's :class:`~berth.runtime.base.Runtime` on a Docker engine.

It talks to the engine through the SDK's low-level ``docker.APIClient`` (ids in, dicts
out) and converts every answer with ``convert.py``. Every SDK call runs inside
:func:`translate_errors`, so callers only ever see ``RuntimeDriverError`` subclasses.

Thread safety: one ``APIClient`` (a ``requests`` session with a connection pool) is
shared by all threads; it is built on first use, so an agent may start before its
engine does (each call then raises :class:`RuntimeUnavailable` until the engine answers).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import Any

import docker
import docker.errors
import docker.tls
import requests.exceptions

from berth.runtime.base import (
    LABEL_HOST,
    LABEL_UUID,
    ContainerSpec,
    HostInfo,
    ImageInfo,
    ImageRef,
    PullProgress,
    RegistryAuth,
    RuntimeConflict,
    RuntimeContainer,
    RuntimeDriverError,
    RuntimeImageNotFound,
    RuntimeImagePullFailed,
    RuntimeInvalid,
    RuntimeNotFound,
    is_adopted,
)
from berth.runtime.docker.actions import ActionsMixin
from berth.runtime.docker.console import ConsoleMixin
from berth.runtime.docker.convert import (
    container_from_inspect,
    container_from_list,
    create_kwargs,
    host_config_kwargs,
    host_from_info,
    image_from_inspect,
)
from berth.runtime.docker.errors import (
    distribution_verdict,
    engine_unreachable,
    explanation,
    make_error,
    registry_says_missing,
    to_runtime_error,
    translate_errors,
)
from berth.runtime.docker.events import EventStream, since_param
from berth.runtime.docker.images import ImagesMixin
from berth.runtime.docker.inspection import InspectionMixin
from berth.runtime.docker.progress import PullTracker

LOG = logging.getLogger(__name__)

_SDK_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)


class _PullStreamError(Exception):
    """An ``error`` message inside the pull stream (the HTTP answer itself was 200)."""


class DockerRuntime(ActionsMixin, InspectionMixin, ConsoleMixin, ImagesMixin):
    """A Docker engine reached at ``base_url``.

    ``version`` is the API version to speak ("auto" = the engine's own, never newer than
    the SDK knows); ``timeout`` bounds each HTTP call in seconds (pull and event streams
    bound each read, not the whole stream). TLS is used only when ``ca_file``,
    ``cert_file`` and ``key_file`` are all set and ``insecure`` is false (Zun's rule).
    """

    def __init__(
        self,
        base_url: str = "unix:///var/run/docker.sock",
        version: str = "auto",
        timeout: int = 60,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
        insecure: bool = False,
        pull_report_interval: float = 1.0,
    ) -> None:
        self.base_url = base_url
        self._version = version
        self._timeout = timeout
        self._tls: docker.tls.TLSConfig | bool = False
        if ca_file and cert_file and key_file and not insecure:
            with translate_errors():  # missing files: RuntimeDriverError naming them
                self._tls = docker.tls.TLSConfig(client_cert=(cert_file, key_file),
                                                 ca_cert=ca_file, verify=True)
        self._pull_report_interval = pull_report_interval
        self._lock = threading.Lock()
        self._client: docker.APIClient | None = None

    def __repr__(self) -> str:
        return f"DockerRuntime({self.base_url!r})"

    def _api(self) -> docker.APIClient:
        """The shared client, built on first use (``version="auto"`` asks the engine)."""
        with self._lock:
            if self._client is None:
                with translate_errors():
                    self._client = docker.APIClient(
                        base_url=self.base_url, version=self._version,
                        timeout=self._timeout, tls=self._tls,
                    )
                if self.base_url.startswith("unix://"):
                    # No proxy or .netrc applies to a local socket: without this,
                    # requests reads both from the environment on every call.
                    self._client.trust_env = False
                LOG.info("connected to Docker at %s (API %s)",
                         self.base_url, self._client.api_version)
            return self._client

    def api_client(self) -> docker.APIClient:
        """The engine's low-level client (the kuryr network driver's Docker networks)."""
        return self._api()

    def close(self) -> None:
        """Close the client's connections; the next call opens new ones."""
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    # -- engine ------------------------------------------------------------------------

    def ping(self) -> None:
        """Return when the engine answers; :class:`RuntimeUnavailable` otherwise."""
        with translate_errors():
            self._api().ping()

    def info(self) -> HostInfo:
        """The node's resources and engine facts (``docker info``)."""
        with translate_errors():
            return host_from_info(self._api().info())

    # -- images ------------------------------------------------------------------------

    def inspect_image(self, ref: str) -> ImageInfo:
        """The local image ``ref``; :class:`RuntimeImageNotFound` if absent."""
        with translate_errors():
            return image_from_inspect(self._api().inspect_image(ref))

    def pull_image(
        self,
        image: ImageRef,
        auth: RegistryAuth | None = None,
        progress: Callable[[PullProgress], None] | None = None,
    ) -> ImageInfo:
        """Pull ``image`` (by digest when it has one) and return the local image.

        ``progress`` gets the aggregated figure at most once per second and once at the
        end; the same lines are logged at INFO. An exception from it aborts the pull.
        Raises :class:`RuntimeImageNotFound` when the registry has no such repository or
        tag (or denies it exists), :class:`RuntimeUnavailable` when the engine cannot be
        reached, :class:`RuntimeImagePullFailed` with Docker's text for anything else.
        """
        tracker = PullTracker(image.ref, progress, self._pull_report_interval)
        api = self._api()
        try:
            stream = api.pull(image.repo, tag=image.digest or image.tag, stream=True,
                              decode=True, auth_config=_auth_config(auth))
            for message in stream:
                error = _stream_error(message)
                if error:
                    raise _PullStreamError(error)
                tracker.feed(message)
        except (_PullStreamError, *_SDK_ERRORS) as exc:
            raise _pull_error(image, exc) from exc
        tracker.finish()
        return self.inspect_image(image.ref)

    def image_exists_in_registry(self, image: ImageRef,
                                 auth: RegistryAuth | None = None) -> bool | None:
        """Ask the registry, through the engine's distribution inspect, whether it has
        ``image``: True, False (no such repository or tag), or None when the registry
        cannot be asked (unreachable, credentials refused). Raises
        :class:`RuntimeUnavailable` when the engine itself cannot be reached."""
        api = self._api()
        try:
            api.inspect_distribution(image.ref, auth_config=_auth_config(auth))
        except _SDK_ERRORS as exc:
            if engine_unreachable(exc):
                raise to_runtime_error(exc) from exc
            verdict = distribution_verdict(exc)
            LOG.info("registry lookup of %s: %s (%s)", image.ref,
                     "absent" if verdict is False else "cannot ask", explanation(exc))
            return verdict
        return True

    # -- containers ------------------------------------------------------------------------

    def create(self, spec: ContainerSpec) -> str:
        """Create (not start) ``spec.name`` with berth's labels; return the engine's id.
        The image must be present. A second create with the same uuid raises
        :class:`RuntimeConflict` (the name is taken); bad parameters :class:`RuntimeInvalid`."""
        try:
            kwargs = create_kwargs(spec)
        except ValueError as exc:
            raise RuntimeInvalid(reason=f"exposed ports {list(spec.exposed_ports)}: {exc}") from exc
        with translate_errors():
            api = self._api()
            host_config = api.create_host_config(**host_config_kwargs(spec))
            if spec.endpoint is not None and spec.network_mode:
                kwargs["networking_config"] = api.create_networking_config({
                    spec.network_mode: api.create_endpoint_config(
                        ipv4_address=spec.endpoint.ipv4, ipv6_address=spec.endpoint.ipv6)})
            answer = api.create_container(host_config=host_config, **kwargs)
        for warning in answer.get("Warnings") or ():
            LOG.warning("Docker warns about container %s: %s", spec.uuid, warning)
        LOG.info("created Docker container %s (%s) from %s", spec.name, answer["Id"][:12],
                 spec.image)
        return str(answer["Id"])

    def start(self, container_id: str) -> None:
        """Start it; starting a running container is a no-op (the engine answers 304)."""
        with translate_errors():
            self._api().start(container_id)

    def stop(self, container_id: str, timeout: int | None = None) -> None:
        """Stop it (SIGTERM, SIGKILL after ``timeout`` s, the engine's 10 s when None).
        Stopping a stopped container is a no-op (304)."""
        with translate_errors():
            self._api().stop(container_id, timeout=timeout)

    def delete(self, container_id: str, force: bool = False) -> None:
        """Remove it (``force`` kills it first; anonymous volumes are kept, as Zun).
        A missing container, or one the engine is already removing, is a no-op."""
        try:
            with translate_errors():
                self._api().remove_container(container_id, force=force)
        except RuntimeNotFound:
            LOG.debug("container %s already gone", container_id)
        except RuntimeConflict as exc:
            if "already in progress" not in str(exc):
                raise
            LOG.debug("container %s is already being removed", container_id)

    def inspect(self, container_id: str) -> RuntimeContainer:
        """Inspect by id or name; :class:`RuntimeNotFound` when it does not exist."""
        with translate_errors():
            return container_from_inspect(self._api().inspect_container(container_id))

    def list(self, host: str | None = None) -> list[RuntimeContainer]:
        """Every container carrying berth's uuid label (running or not), only ``host``'s
        when given; and every container a Zun taken over made (named ``zun-<uuid>``,
        no berth label: adopted as it is, whatever ``host``).

        Built from one ``docker ps --all`` call, never an inspect per container, because
        the agent relists often and may own hundreds of containers: each result's
        ``state`` has the status word and, for exited containers, the exit code, but no
        times, pid, OOMKilled or error; ``hostname``, ``runtime``, ``command`` and
        ``entrypoint`` are None. Call :meth:`inspect` for the full picture.
        """
        labels = [LABEL_UUID] + ([f"{LABEL_HOST}={host}"] if host else [])
        with translate_errors():
            entries = self._api().containers(all=True, filters={"label": labels})
            # and those a Zun taken over made: named zun-<uuid>, without berth's labels
            entries += [e for e in self._api().containers(all=True, filters={"name": "zun-"})
                        if is_adopted(e.get("Labels") or {}, (e.get("Names") or [""])[0])]
        return [container_from_list(entry) for entry in entries]

    def events(self, since_nano: int | None = None) -> EventStream:
        """Open the engine's event stream for berth's containers (those with the uuid
        label) and those a Zun taken over made (named ``zun-<uuid>``), from
        ``since_nano`` (inclusive) or from now.

        Opening raises :class:`RuntimeUnavailable` when the engine cannot be reached.
        Iteration then ends without raising when the stream breaks or when
        :meth:`EventStream.close` is called from another thread; the caller relists and
        reconnects with ``since_nano`` = the last event's ``at_nano``.
        """
        since = since_param(since_nano) if since_nano else None
        with translate_errors():
            stream = self._api().events(
                # every container's: Zun's (named zun-<uuid>) carry no label to filter
                # on; the stream keeps berth's and Zun's (an event with a uuid)
                since=since, decode=True, filters={"type": "container"},
            )
        return EventStream(stream)


def _auth_config(auth: RegistryAuth | None) -> dict[str, str] | None:
    """The SDK's ``auth_config`` for ``auth``; None lets the SDK use the node's own config."""
    if auth is None:
        return None
    config = {"username": auth.username, "password": auth.password}
    if auth.registry:
        config["serveraddress"] = auth.registry
    return config


def _stream_error(message: Mapping[str, Any]) -> str | None:
    """The error text of a pull stream message, or None for a progress message."""
    detail = message.get("errorDetail")
    if isinstance(detail, Mapping) and detail.get("message"):
        return str(detail["message"])
    if message.get("error"):
        return str(message["error"])
    return None


def _pull_error(image: ImageRef, exc: BaseException) -> RuntimeDriverError:
    """The runtime error for a failed pull of ``image``."""
    if not isinstance(exc, _PullStreamError) and engine_unreachable(exc):
        return to_runtime_error(exc)
    text = explanation(exc)
    if registry_says_missing(exc) or "pull access denied" in text.lower():
        LOG.info("pull of %s: the registry has no such image (%s)", image.ref, text)
        return make_error(RuntimeImageNotFound, text)
    LOG.warning("pull of %s failed: %s", image.ref, text)
    return make_error(RuntimeImagePullFailed, f"{image.ref}: {text}")
