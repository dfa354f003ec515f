"""Cinder's REST API as the cinder volume driver uses it: python-cinderclient on a
keystoneauth session, with cinderclient's and keystoneauth's errors turned into
berth's (VolumeNotFound for a 404, VolumeError naming the call and Cinder's answer for
the rest).

Who and where (see ``berth.conf.cinder_client``):

* the caller's token when the request context has one, else berth's own identity from
  ``[cinder_client]`` (keystoneauth's ``auth_type`` and its options);
* ``[cinder_client]endpoint_override`` (``%(project_id)s`` in it filled with the
  caller's project) when set, else the Keystone catalog (``volumev3``, interface
  ``endpoint_type``), which needs berth's own identity for its ``auth_url``.

Microversion: ``[cinder_client]api_version`` as written when it is a full microversion
(``3.44``), else the highest one both Cinder and cinderclient speak, asked of Cinder
once per endpoint (``choose_microversion``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading, session, token_endpoint

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.conf import cinder_client as cinder_conf

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)

#: From this microversion on a volume is attached with the attachments API
#: (create with a connector, complete, delete) instead of the legacy calls.
ATTACHMENTS_MICROVERSION = (3, 44)
DEFAULT_TIMEOUT = 60.0
_SERVICE_TYPE = "volumev3"


def parse_microversion(text: str) -> tuple[int, int]:
    """``"3.44"`` -> (3, 44); ``"3"`` -> (3, 0). ValueError for anything else."""
    major, _, minor = text.strip().partition(".")
    return int(major), int(minor or 0)


def choose_microversion(configured: str, server_max: str | None, client_max: str) -> str:
    """The microversion to send. A configured full microversion (``3.0``, ``3.44``) is
    kept as it is; ``3``, ``3.latest`` or ``auto`` mean the highest both sides speak:
    the lower of Cinder's ``server_max`` (None: Cinder announced none, so 3.0) and
    cinderclient's ``client_max``."""
    text = configured.strip().lower()
    if text not in ("3", "3.latest", "auto", "latest"):
        version = parse_microversion(text)
        if version[0] != 3:
            raise exc.VolumeError(reason=(
                f"[cinder_client]api_version = {configured} is not a Cinder v3 "
                f"microversion: use 3, 3.latest or one such as 3.44"))
        return f"{version[0]}.{version[1]}"
    if not server_max:
        return "3.0"
    best = min(parse_microversion(server_max), parse_microversion(client_max))
    return f"{best[0]}.{best[1]}"


def uses_attachments_api(microversion: str) -> bool:
    return parse_microversion(microversion) >= ATTACHMENTS_MICROVERSION


def endpoint_for(template: str, project_id: str | None) -> str:
    """``[cinder_client]endpoint_override`` for a caller in ``project_id``."""
    if "%(project_id)s" not in template:
        return template.rstrip("/")
    if not project_id:
        raise exc.VolumeError(reason=(
            f"[cinder_client]endpoint_override = {template} needs a project id, and this "
            f"call has none (no caller's project): drop %(project_id)s from it (Cinder "
            f"answers URLs without one from microversion 3.67 on)"))
    return template.replace("%(project_id)s", project_id).rstrip("/")


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """cinderclient's and keystoneauth's errors as berth's, saying what was being done."""
    from cinderclient import exceptions as cinder_exc

    try:
        yield
    except cinder_exc.NotFound as err:
        raise exc.VolumeNotFound(reason=f"{what}: Cinder has no such volume or "
                                        f"attachment ({_message(err)})") from err
    except cinder_exc.ClientException as err:
        raise exc.VolumeError(reason=f"{what}: Cinder answered {err.code} "
                                     f"{_message(err)}") from err
    except ks_exc.ConnectFailure as err:
        raise exc.VolumeError(reason=f"{what}: Cinder cannot be reached ({err}); check "
                                     f"that it runs and [cinder_client]") from err
    except ks_exc.ClientException as err:
        raise exc.VolumeError(reason=f"{what}: {err}") from err


def _message(err: Any) -> str:
    return str(getattr(err, "message", None) or err).strip()


class CinderSessions:
    """Makes a :class:`CinderAPI` for a caller (thread-safe; one per driver)."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        cinder_conf.register_auth_opts(conf)
        self._conf = conf
        g = conf[cinder_conf.GROUP]
        self._configured = g.api_version
        self._endpoint_template = g.endpoint_override
        self._interface = g.endpoint_type
        self._verify: bool | str = g.ca_file or not g.insecure
        self._lock = threading.Lock()
        self._service_auth: Any = None
        self._versions: dict[str, str] = {}

    def api(self, ctx: RequestContext | None) -> CinderAPI:
        token = ctx.auth_token if ctx is not None else None
        project_id = ctx.project_id if ctx is not None else None
        if self._endpoint_template:
            own = None if token else self._own_identity("call Cinder without a caller's token")
            endpoint: str | None = endpoint_for(self._endpoint_template, project_id)
            auth = own or token_endpoint.Token(endpoint, token)
        else:
            endpoint = None
            own = self._own_identity("find Cinder in the Keystone catalog")
            auth = own if not token else self._user_token(own, token, project_id)
        sess = session.Session(auth=auth, verify=self._verify, timeout=DEFAULT_TIMEOUT)
        key = self._endpoint_template or f"catalog:{self._interface}"   # one Cinder
        version = self._versions.get(key)
        if version is None:
            version = self._negotiate(sess, endpoint)
            with self._lock:
                self._versions[key] = version
        return CinderAPI(self._client(sess, endpoint, version), version)

    def _own_identity(self, why: str) -> Any:
        with self._lock:
            if self._service_auth is None:
                auth = loading.load_auth_from_conf_options(self._conf, cinder_conf.GROUP)
                if auth is None:
                    raise exc.VolumeError(reason=(
                        f"berth needs an identity of its own to {why}: set [cinder_client]"
                        f"auth_type and its options (e.g. password with auth_url, username, "
                        f"password, project_name; or admin_token with token and endpoint)"))
                self._service_auth = auth
            return self._service_auth

    @staticmethod
    def _user_token(own: Any, token: str, project_id: str | None) -> Any:
        from keystoneauth1.identity import v3

        auth_url = getattr(own, "auth_url", None)
        if not auth_url:
            raise exc.VolumeError(reason=(
                "the caller's token can only be used through Keystone's catalog with an "
                "auth_url: set [cinder_client]auth_type = password (and auth_url), or "
                "[cinder_client]endpoint_override"))
        return v3.Token(auth_url=auth_url, token=token, project_id=project_id)

    def _client(self, sess: session.Session, endpoint: str | None, version: str) -> Any:
        from cinderclient import api_versions
        from cinderclient import client as cinder_client

        kwargs: dict[str, Any] = {"session": sess, "service_type": _SERVICE_TYPE,
                                  "endpoint_type": self._interface}
        if endpoint:
            kwargs["endpoint_override"] = endpoint
        return cinder_client.Client(api_versions.APIVersion(version), **kwargs)

    def _negotiate(self, sess: session.Session, endpoint: str | None) -> str:
        from cinderclient import api_versions

        text = self._configured.strip().lower()
        if text not in ("3", "3.latest", "auto", "latest"):
            return choose_microversion(text, None, api_versions.MAX_VERSION)
        with translated("asking Cinder which microversions it speaks"):
            versions = self._client(sess, endpoint, "3.0").services.server_api_version()
        server_max = next((v.version for v in versions if str(v.version).startswith("3.")),
                          None)
        chosen = choose_microversion(text, server_max, api_versions.MAX_VERSION)
        LOG.info("Cinder at %s speaks up to microversion %s: berth uses %s (%s)",
                 endpoint or "the catalog's endpoint", server_max, chosen,
                 "attachments API" if uses_attachments_api(chosen) else "legacy attach calls")
        return chosen


class CinderAPI:
    """One caller's Cinder: the calls the driver makes, each with berth's errors."""

    def __init__(self, client: Any, microversion: str) -> None:
        self.client = client
        self.microversion = microversion

    @property
    def attachments_api(self) -> bool:
        return uses_attachments_api(self.microversion)

    # -- volumes ------------------------------------------------------------------

    def volume(self, volume_id: str) -> Any:
        with translated(f"looking up Cinder volume {volume_id}"):
            return self.client.volumes.get(volume_id)

    def volume_or_none(self, volume_id: str) -> Any:
        try:
            return self.volume(volume_id)
        except exc.VolumeNotFound:
            return None

    def volumes_named(self, name: str) -> list[Any]:
        """The caller's project's volumes named exactly ``name``."""
        with translated(f"looking up Cinder volumes named {name!r}"):
            found = self.client.volumes.list(search_opts={"name": name})
        return [v for v in found if v.name == name]

    def create(self, size_gib: int, name: str | None) -> str:
        with translated(f"creating a Cinder volume of {size_gib} GiB"):
            return str(self.client.volumes.create(size_gib, name=name).id)

    def delete(self, volume_id: str) -> None:
        with translated(f"deleting Cinder volume {volume_id}"):
            self.client.volumes.delete(volume_id)

    # -- legacy attach calls ----------------------------------------------------------

    def reserve(self, volume_id: str) -> None:
        with translated(f"reserving Cinder volume {volume_id}"):
            self.client.volumes.reserve(volume_id)

    def unreserve(self, volume_id: str) -> None:
        with translated(f"unreserving Cinder volume {volume_id}"):
            self.client.volumes.unreserve(volume_id)

    def initialize_connection(self, volume_id: str, connector: dict[str, Any]
                              ) -> dict[str, Any]:
        with translated(f"asking Cinder for a connection to volume {volume_id}"):
            return dict(self.client.volumes.initialize_connection(volume_id, connector))

    def terminate_connection(self, volume_id: str, connector: dict[str, Any]) -> None:
        with translated(f"ending the connection to Cinder volume {volume_id}"):
            self.client.volumes.terminate_connection(volume_id, connector)

    def attach(self, volume_id: str, mountpoint: str, host_name: str) -> None:
        with translated(f"marking Cinder volume {volume_id} attached"):
            self.client.volumes.attach(volume_id, None, mountpoint, host_name=host_name)

    def begin_detaching(self, volume_id: str) -> None:
        with translated(f"marking Cinder volume {volume_id} detaching"):
            self.client.volumes.begin_detaching(volume_id)

    def detach(self, volume_id: str, attachment_id: str | None) -> None:
        with translated(f"marking Cinder volume {volume_id} detached"):
            self.client.volumes.detach(volume_id, attachment_id)

    # -- attachments API (3.44+) ------------------------------------------------------

    def attachment_create(self, volume_id: str, connector: dict[str, Any]
                          ) -> dict[str, Any]:
        with translated(f"creating an attachment of Cinder volume {volume_id}"):
            return dict(self.client.attachments.create(volume_id, connector, mode="rw"))

    def attachment_complete(self, attachment_id: str) -> None:
        with translated(f"completing Cinder attachment {attachment_id}"):
            self.client.attachments.complete(attachment_id)

    def attachment_delete(self, attachment_id: str) -> None:
        with translated(f"deleting Cinder attachment {attachment_id}"):
            self.client.attachments.delete(attachment_id)
