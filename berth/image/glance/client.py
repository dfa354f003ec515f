"""Glance's REST API (v2) through openstacksdk on a keystoneauth session: the few calls
the glance image driver makes, plain values out, the SDK's and keystoneauth's errors
translated here (and only here) into berth's.

Who calls: the caller's token when the request context has one and berth's API
authenticates with Keystone (``[api]auth_strategy = keystone``), else berth's own
identity from ``[glance_client]`` (see ``berth.conf.glance_client``).
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Iterator
from typing import Any

from oslo_config import cfg

from berth.common import exceptions as exc
from berth.common.context import RequestContext
from berth.conf import glance_client as glance_conf
from berth.image.base import ImageStoreError, StoredImage

LOG = logging.getLogger(__name__)

#: Bytes per read of a download.
CHUNK = 1024 * 1024


@contextlib.contextmanager
def translated(what: str) -> Iterator[None]:
    """keystoneauth's and openstacksdk's failures as berth's: a 404 is
    exc.ImageNotFound, a 409 exc.Conflict, anything else ImageStoreError."""
    from keystoneauth1 import exceptions as ks
    from openstack import exceptions as sdk

    try:
        yield
    except (ks.NotFound, sdk.NotFoundException) as err:
        raise exc.ImageNotFound(f"{what}: Glance has no such image ({_text(err)})") from err
    except (ks.Conflict, sdk.ConflictException) as err:
        raise exc.Conflict(f"{what}: Glance answered 409 ({_text(err)})") from err
    except (ks.ClientException, sdk.SDKException) as err:
        raise ImageStoreError(reason=f"{what}: Glance failed or cannot be reached "
                                     f"({_text(err)})") from err


def _text(err: Any) -> str:
    return str(getattr(err, "details", None) or getattr(err, "message", None) or err).strip()


def stored_image(record: Any) -> StoredImage:
    """A Glance image record (an SDK Image or its dict) as berth's value. The modern
    ``os_hash_value`` (sha512 by default) is preferred to the legacy md5 ``checksum``."""
    get = record.get if isinstance(record, dict) else (lambda k: getattr(record, k, None))
    algo, value = get("os_hash_algo"), get("os_hash_value")
    if not (algo and value):
        algo, value = ("md5", get("checksum")) if get("checksum") else ("", "")
    size = get("size")
    return StoredImage(id=str(get("id")), name=str(get("name") or ""),
                       tags=tuple(get("tags") or ()), checksum_algorithm=str(algo),
                       checksum=str(value), size=int(size) if size is not None else None,
                       status=str(get("status") or ""))


class GlanceAPI:
    """One caller's Glance."""

    def __init__(self, conn: Any) -> None:
        # The proxy is made (Keystone asked for a token and the catalog) on first use.
        with translated("reaching Glance"):
            self._image = conn.image

    def get(self, image_id: str) -> dict[str, Any] | None:
        """The record of ``image_id`` (as Glance's JSON), None when absent."""
        from keystoneauth1 import exceptions as ks

        with translated(f"reading Glance image {image_id}"):
            try:
                return dict(self._image.get(f"/images/{image_id}", raise_exc=True).json())
            except ks.NotFound:
                return None

    def docker_images(self, name: str | None = None) -> list[dict[str, Any]]:
        """Every image of ``container_format = docker`` the caller sees (all pages);
        with ``name``, only those of that exact name (filtered by Glance)."""
        params: dict[str, Any] = {"container_format": "docker", "limit": 200}
        if name is not None:
            params["name"] = name
        found: list[dict[str, Any]] = []
        url: str | None = "/images"
        with translated("listing Glance's docker images"):
            while url:
                page = self._image.get(url, params=params if url == "/images" else None,
                                       raise_exc=True).json()
                found.extend(page.get("images") or [])
                nxt = page.get("next")
                url = nxt.removeprefix("/v2") if nxt else None
        return found

    def download(self, image_id: str) -> Iterator[bytes]:
        """The image's data, read chunk by chunk while the caller writes it."""
        with translated(f"downloading Glance image {image_id}"):
            resp = self._image.get(f"/images/{image_id}/file", stream=True, raise_exc=True)
        return _chunks(resp, image_id)

    def create(self, name: str, tags: list[str]) -> dict[str, Any]:
        """A new (queued) image record: ``container_format = docker``, ``disk_format =
        qcow2``, as Zun's commit makes it."""
        with translated(f"creating Glance image {name}"):
            return dict(self._image.post("/images", json={
                "name": name, "container_format": "docker", "disk_format": "qcow2",
                "tags": tags}, raise_exc=True).json())

    def upload(self, image_id: str, data: Iterator[bytes]) -> None:
        with translated(f"uploading the data of Glance image {image_id}"):
            self._image.put(f"/images/{image_id}/file", data=data,
                            headers={"Content-Type": "application/octet-stream"},
                            raise_exc=True)

    def delete(self, image_id: str) -> None:
        from keystoneauth1 import exceptions as ks

        with translated(f"deleting Glance image {image_id}"), contextlib.suppress(ks.NotFound):
            self._image.delete(f"/images/{image_id}", raise_exc=True)


def _chunks(resp: Any, image_id: str) -> Iterator[bytes]:
    import requests

    try:
        yield from resp.iter_content(chunk_size=CHUNK)
    except requests.RequestException as err:
        raise ImageStoreError(reason=f"the download of Glance image {image_id} failed: "
                                     f"{err}") from err
    finally:
        resp.close()


class GlanceSessions:
    """Makes a :class:`GlanceAPI` for a caller (thread-safe; one per driver)."""

    def __init__(self, conf: cfg.ConfigOpts) -> None:
        # keystoneauth's options are registered by the first call that needs berth's
        # own identity (_own_identity): every agent builds this driver, most never
        # call Glance, and keystoneauth1 costs a process about 0.8 MiB.
        self._conf = conf
        g = conf[glance_conf.GROUP]
        self._override: str | None = g.endpoint_override
        self._interface: str = g.endpoint_type.removesuffix("URL")
        self._region: str | None = g.region_name
        self._verify: bool | str = False if g.insecure else (g.ca_file or True)
        self._cert: Any = (g.cert_file, g.key_file) if g.cert_file and g.key_file \
            else g.cert_file
        self._timeout: int = g.timeout
        # Under noauth a caller's X-Auth-Token is no Keystone token: berth's own
        # identity then calls Glance for everyone.
        self._callers_tokens = conf.api.auth_strategy == "keystone"
        self._lock = threading.Lock()
        self._auth_opts_lock = threading.Lock()   # _own_identity runs under _lock too
        self._own: Any = None

    def api(self, ctx: RequestContext | None) -> GlanceAPI:
        token = ctx.auth_token if ctx is not None and self._callers_tokens else None
        if token:
            auth = self._user_token(token, ctx.project_id if ctx else None)
            return GlanceAPI(self._connect(auth))
        with self._lock:
            if self._own is None:
                self._own = self._connect(self._own_identity("call Glance without a "
                                                             "caller's token"))
            return GlanceAPI(self._own)

    def _connect(self, auth: Any) -> Any:
        from keystoneauth1 import session
        try:
            from openstack import connection
        except ImportError as err:
            raise ImageStoreError(reason=(
                "the glance image driver needs openstacksdk: install berth with its "
                "'glance' extra (pip install 'berth[glance]')")) from err

        sess = session.Session(auth=auth, verify=self._verify, cert=self._cert,
                               timeout=self._timeout)
        kwargs: dict[str, Any] = {"session": sess, "image_interface": self._interface,
                                  "image_api_version": "2"}
        if self._region:
            kwargs["region_name"] = self._region
        if self._override:
            kwargs["image_endpoint_override"] = self._override.rstrip("/") + "/v2"
        return connection.Connection(**kwargs)

    def _own_identity(self, why: str) -> Any:
        from keystoneauth1 import loading

        with self._auth_opts_lock:
            glance_conf.register_auth_opts(self._conf)
        auth = loading.load_auth_from_conf_options(self._conf, glance_conf.GROUP)
        if auth is None:
            raise ImageStoreError(reason=(
                f"berth needs an identity of its own to {why}: set [glance_client]"
                f"auth_type and its options (e.g. password with auth_url, username, "
                f"password, project_name, user_domain_name, project_domain_name)"))
        return auth

    def _user_token(self, token: str, project_id: str | None) -> Any:
        from keystoneauth1 import token_endpoint
        from keystoneauth1.identity import v3

        if self._override:
            return token_endpoint.Token(self._override, token)
        own = self._own_identity("find Glance in the Keystone catalog")
        auth_url = getattr(own, "auth_url", None)
        if not auth_url:
            raise ImageStoreError(reason=(
                "the caller's token can only be used through Keystone's catalog with an "
                "auth_url: set [glance_client]auth_type = password (and auth_url), or "
                "[glance_client]endpoint_override"))
        return v3.Token(auth_url=auth_url, token=token, project_id=project_id)
