"""OpenStack Placement over its REST API (keystoneauth1 Session).

Every request carries microversion 1.39 (``OpenStack-API-Version: placement 1.39``):
allocations are keyed by provider (1.12), carry project and user (1.8), the consumer
generation (1.28) and, from 1.38 on, a consumer type: berth's is ``CONTAINER``.

Generations. The driver keeps, per provider, the generation, inventory, traits and
aggregates it last saw (for ``cache_ttl`` seconds), so the periodic report costs no
request when nothing changed. A write sends the cached generation; Placement answers
409 ``placement.concurrent_update`` when the provider changed meanwhile (an allocation
bumps it too), and the driver drops the cache, reads again and retries: 4 attempts in
all (tenacity), then ResourceProviderUpdateConflict. Allocations use the consumer's
generation the same way.

Authentication: a keystoneauth plugin from ``[placement]`` (``auth_type`` and its
options), or, with no ``auth_type``, the static token ``[placement]token`` sent as
``X-Auth-Token`` to ``[placement]endpoint`` (Placement's ``noauth2``: token ``admin``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import tenacity
from keystoneauth1 import exceptions as ks_exc
from keystoneauth1 import loading, session, token_endpoint
from keystoneauth1.adapter import Adapter

from berth.placement.base import (
    CONFLICT_ATTEMPTS,
    AllocationFailed,
    Inventory,
    PlacementError,
    Provider,
    ProviderNotFound,
    ResourceProviderUpdateConflict,
)

if TYPE_CHECKING:
    from oslo_config import cfg

LOG = logging.getLogger(__name__)
MICROVERSION = "1.39"
CONSUMER_TYPE = "CONTAINER"
CONCURRENT_UPDATE = "placement.concurrent_update"
DEFAULT_TIMEOUT = 30.0
T = TypeVar("T")
#: The webob preamble of every Placement error detail, dropped from berth's messages.
_BOILERPLATE = ("There was a conflict when trying to complete your request.",
                "The resource could not be found.",
                ("The server could not comply with the request since it is either "
                 "malformed or otherwise incorrect."))


@dataclass(slots=True)
class _Seen:
    """What the driver last saw of one provider (None = not read yet)."""

    generation: int
    at: float
    inventory: dict[str, Inventory] | None = None
    traits: frozenset[str] | None = None
    aggregates: frozenset[str] | None = None


def _error(resp: Any) -> tuple[str, str]:
    """(code, detail) of a Placement error answer."""
    try:
        err = resp.json()["errors"][0]
        detail = " ".join(str(err.get("detail") or "").split())
        for boilerplate in _BOILERPLATE:
            detail = detail.replace(boilerplate, "").strip()
        return str(err.get("code") or ""), detail
    except (ValueError, KeyError, IndexError, TypeError):
        return "", (resp.text or "")[:500]


def _inventory_of(d: Mapping[str, Any]) -> Inventory:
    return Inventory(total=int(d["total"]), reserved=int(d.get("reserved", 0)),
                     min_unit=int(d.get("min_unit", 1)), max_unit=int(d["max_unit"]),
                     step_size=int(d.get("step_size", 1)),
                     allocation_ratio=float(d.get("allocation_ratio", 1.0)))


def _inventory_body(inv: Inventory) -> dict[str, Any]:
    return {"total": inv.total, "reserved": inv.reserved, "min_unit": inv.min_unit,
            "max_unit": inv.largest_unit, "step_size": inv.step_size,
            "allocation_ratio": inv.allocation_ratio}


class OpenStackPlacement:
    """The Placement interface on OpenStack Placement (see the module docstring)."""

    in_database = False

    def __init__(self, adapter: Adapter, *, cache_ttl: float = 300.0,
                 conflict_wait: float = 0.2, clock: Callable[[], float] = time.monotonic
                 ) -> None:
        self._adapter = adapter
        self._ttl = cache_ttl
        self._wait = conflict_wait
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, _Seen] = {}
        self._known_traits: set[str] = set()

    # --- construction ------------------------------------------------------

    @classmethod
    def with_token(cls, endpoint: str, token: str, timeout: float = DEFAULT_TIMEOUT,
                   **kwargs: Any) -> OpenStackPlacement:
        """No Keystone: ``token`` sent as X-Auth-Token to ``endpoint``."""
        auth = token_endpoint.Token(endpoint.rstrip("/"), token)
        sess = session.Session(auth=auth, timeout=timeout)
        return cls(Adapter(sess, service_type="placement", endpoint_override=endpoint,
                           default_microversion=MICROVERSION, raise_exc=False), **kwargs)

    @classmethod
    def from_conf(cls, conf: cfg.ConfigOpts, group: str = "placement") -> OpenStackPlacement:
        from berth.conf.placement import register_openstack_opts

        register_openstack_opts(conf, group)
        g = conf[group]
        if not g.auth_type:
            if not g.endpoint or not g.token:
                raise PlacementError(reason=(
                    f"[{group}]driver = openstack needs either auth_type (and its options, "
                    f"e.g. auth_type = password, auth_url, username, ...) or both endpoint "
                    f"and token"))
            auth: Any = token_endpoint.Token(g.endpoint.rstrip("/"), g.token)
            extra = {"endpoint_override": g.endpoint_override or g.endpoint}
        else:
            auth = loading.load_auth_from_conf_options(conf, group)
            extra = {}
        sess = loading.load_session_from_conf_options(conf, group, auth=auth)
        if sess.timeout is None:
            sess.timeout = DEFAULT_TIMEOUT
        adapter = loading.load_adapter_from_conf_options(
            conf, group, session=sess, auth=auth, default_microversion=MICROVERSION,
            raise_exc=False, **extra)
        return cls(adapter)

    # --- plumbing -------------------------------------------------------------

    def _call(self, method: str, url: str, body: Any = None) -> Any:
        try:
            return self._adapter.request(url, method, json=body, raise_exc=False,
                                         microversion=MICROVERSION,
                                         headers={"Accept": "application/json"})
        except ks_exc.ClientException as err:
            raise PlacementError(reason=f"{method} {url} failed: {err}. Check [placement] "
                                        f"endpoint/auth and that Placement is up.") from err

    def _unexpected(self, method: str, url: str, resp: Any) -> PlacementError:
        code, detail = _error(resp)
        return PlacementError(reason=f"{method} {url} answered {resp.status_code} "
                                     f"{code}: {detail}")

    def _get_of_provider(self, uuid: str, part: str) -> Any:
        """GET /resource_providers/<uuid>/<part> as JSON; ProviderNotFound on a 404."""
        url = f"/resource_providers/{uuid}/{part}"
        resp = self._call("GET", url)
        if resp.status_code == 404:
            raise ProviderNotFound(uuid=uuid)
        if resp.status_code != 200:
            raise self._unexpected("GET", url, resp)
        return resp.json()

    def _retrying(self, what: str, fn: Callable[[], T]) -> T:
        def log(state: tenacity.RetryCallState) -> None:
            LOG.info("%s: generation conflict (attempt %d of %d); reading again", what,
                     state.attempt_number, CONFLICT_ATTEMPTS)
        return tenacity.Retrying(
            retry=tenacity.retry_if_exception_type(ResourceProviderUpdateConflict),
            stop=tenacity.stop_after_attempt(CONFLICT_ATTEMPTS),
            wait=tenacity.wait_random(0, self._wait), before_sleep=log, reraise=True)(fn)

    def _forget(self, uuid: str) -> None:
        with self._lock:
            self._seen.pop(uuid, None)

    def _remember(self, uuid: str, generation: int, **fields: Any) -> None:
        with self._lock:
            seen = self._seen.get(uuid)
            if seen is None or self._clock() - seen.at > self._ttl:
                seen = self._seen[uuid] = _Seen(generation=generation, at=self._clock())
            seen.generation = generation
            for key, value in fields.items():
                setattr(seen, key, value)

    def _cached(self, uuid: str, field: str) -> tuple[int, Any] | None:
        with self._lock:
            seen = self._seen.get(uuid)
            if seen is None or self._clock() - seen.at > self._ttl:
                return None
            value = getattr(seen, field)
            return None if value is None else (seen.generation, value)

    def _write(self, uuid: str, what: str, url: str, body: dict[str, Any]) -> dict[str, Any]:
        """PUT with the provider's generation; conflicts become the retried error."""
        resp = self._call("PUT", url, body)
        if resp.status_code == 200:
            data: dict[str, Any] = resp.json()
            return data
        self._forget(uuid)
        code, detail = _error(resp)
        if resp.status_code == 409 and code == CONCURRENT_UPDATE:
            raise ResourceProviderUpdateConflict(uuid=uuid, attempts=CONFLICT_ATTEMPTS)
        if resp.status_code == 404:
            raise ProviderNotFound(uuid=uuid)
        raise PlacementError(reason=f"setting the {what} of provider {uuid} failed "
                                    f"({resp.status_code} {code}): {detail}")

    # --- providers ---------------------------------------------------------

    def get_provider(self, uuid: str) -> Provider | None:
        resp = self._call("GET", f"/resource_providers/{uuid}")
        if resp.status_code == 404:
            return None
        if resp.status_code != 200:
            raise self._unexpected("GET", f"/resource_providers/{uuid}", resp)
        d = resp.json()
        return Provider(uuid=d["uuid"], name=d["name"], generation=int(d["generation"]))

    def find_provider(self, name: str) -> Provider | None:
        url = f"/resource_providers?name={quote(name, safe='')}"
        resp = self._call("GET", url)
        if resp.status_code != 200:
            raise self._unexpected("GET", url, resp)
        found = resp.json()["resource_providers"]
        if not found:
            return None
        d = found[0]
        return Provider(uuid=d["uuid"], name=d["name"], generation=int(d["generation"]))

    def ensure_provider(self, uuid: str, name: str) -> Provider:
        cached = self._cached(uuid, "generation")
        if cached is not None:
            return Provider(uuid=uuid, name=name, generation=cached[0])
        found = self.get_provider(uuid)
        if found is None:
            resp = self._call("POST", "/resource_providers", {"uuid": uuid, "name": name})
            if resp.status_code in (200, 201):
                LOG.info("created resource provider %s (%s) in Placement", uuid, name)
            elif resp.status_code != 409:       # 409: created meanwhile, or name taken
                raise self._unexpected("POST", "/resource_providers", resp)
            found = self.get_provider(uuid)
            if found is None:
                _, detail = _error(resp)
                raise PlacementError(reason=(
                    f"could not create provider {uuid} named {name!r}: {detail}. Another "
                    f"provider may hold that name; remove it or rename the host"))
        self._remember(uuid, found.generation)
        return found

    # --- inventory -----------------------------------------------------------

    def _read_inventory(self, uuid: str) -> dict[str, Inventory]:
        d = self._get_of_provider(uuid, "inventories")
        inv = {rc: _inventory_of(v) for rc, v in d["inventories"].items()}
        self._remember(uuid, int(d["resource_provider_generation"]), inventory=inv)
        return inv

    def get_inventory(self, provider_uuid: str) -> dict[str, Inventory]:
        return self._read_inventory(provider_uuid)

    def set_inventory(self, provider_uuid: str, inventories: Mapping[str, Inventory]) -> bool:
        wanted = {rc: inv.normalized() for rc, inv in inventories.items()}

        def once() -> bool:
            cached = self._cached(provider_uuid, "inventory")
            if cached is None:
                self._read_inventory(provider_uuid)
                cached = self._cached(provider_uuid, "inventory")
            generation, current = cached if cached is not None else (0, {})
            if current == wanted:
                return False
            d = self._write(provider_uuid, "inventory",
                            f"/resource_providers/{provider_uuid}/inventories",
                            {"resource_provider_generation": generation,
                             "inventories": {rc: _inventory_body(v) for rc, v in wanted.items()}})
            self._remember(provider_uuid, int(d["resource_provider_generation"]),
                           inventory={rc: _inventory_of(v) for rc, v in d["inventories"].items()})
            LOG.info("inventory of provider %s set to %s", provider_uuid, wanted)
            return True

        return self._retrying(f"inventory of provider {provider_uuid}", once)

    # --- traits and aggregates -------------------------------------------------

    def _read_set(self, uuid: str, field: str) -> frozenset[str]:
        d = self._get_of_provider(uuid, field)
        value = frozenset(d[field])
        self._remember(uuid, int(d["resource_provider_generation"]), **{field: value})
        return value

    def _set_set(self, uuid: str, field: str, wanted: frozenset[str]) -> bool:
        def once() -> bool:
            cached = self._cached(uuid, field)
            if cached is None:
                self._read_set(uuid, field)
                cached = self._cached(uuid, field)
            generation, current = cached if cached is not None else (0, frozenset())
            if current == wanted:
                return False
            d = self._write(uuid, field, f"/resource_providers/{uuid}/{field}",
                            {field: sorted(wanted), "resource_provider_generation": generation})
            self._remember(uuid, int(d["resource_provider_generation"]),
                           **{field: frozenset(d[field])})
            LOG.info("%s of provider %s set to %s", field, uuid, sorted(wanted))
            return True

        return self._retrying(f"{field} of provider {uuid}", once)

    def _ensure_custom_traits(self, traits: Iterable[str]) -> None:
        for name in traits:
            if not name.startswith("CUSTOM_") or name in self._known_traits:
                continue
            resp = self._call("PUT", f"/traits/{name}")
            if resp.status_code not in (201, 204):
                raise self._unexpected("PUT", f"/traits/{name}", resp)
            self._known_traits.add(name)

    def get_traits(self, provider_uuid: str) -> frozenset[str]:
        cached = self._cached(provider_uuid, "traits")
        return cached[1] if cached is not None else self._read_set(provider_uuid, "traits")

    def set_traits(self, provider_uuid: str, traits: Iterable[str]) -> bool:
        wanted = frozenset(traits)
        self._ensure_custom_traits(wanted)
        return self._set_set(provider_uuid, "traits", wanted)

    def get_aggregates(self, provider_uuid: str) -> frozenset[str]:
        cached = self._cached(provider_uuid, "aggregates")
        return cached[1] if cached is not None else self._read_set(provider_uuid, "aggregates")

    def set_aggregates(self, provider_uuid: str, aggregates: Iterable[str]) -> bool:
        return self._set_set(provider_uuid, "aggregates", frozenset(aggregates))

    # --- allocations -----------------------------------------------------------

    def _consumer(self, consumer_uuid: str) -> tuple[int | None, dict[str, dict[str, int]]]:
        url = f"/allocations/{consumer_uuid}"
        resp = self._call("GET", url)
        if resp.status_code != 200:
            raise self._unexpected("GET", url, resp)
        d = resp.json()
        held = {rp: {rc: int(n) for rc, n in a["resources"].items()}
                for rp, a in d.get("allocations", {}).items()}
        return d.get("consumer_generation"), held

    def get_allocation(self, consumer_uuid: str) -> dict[str, dict[str, int]]:
        return self._consumer(consumer_uuid)[1]

    def allocate(self, consumer_uuid: str, provider_uuid: str, resources: Mapping[str, int],
                 project_id: str | None, user_id: str | None) -> None:
        if not resources:
            raise PlacementError(reason=f"nothing to allocate for consumer {consumer_uuid}")
        url = f"/allocations/{consumer_uuid}"

        def once() -> None:
            generation, _ = self._consumer(consumer_uuid)
            resp = self._call("PUT", url, {
                "allocations": {provider_uuid: {"resources": {k: int(v) for k, v
                                                              in resources.items()}}},
                # Placement requires both; a row without them (made by hand) still
                # gets a valid allocation.
                "project_id": project_id or "unknown", "user_id": user_id or "unknown",
                "consumer_generation": generation, "consumer_type": CONSUMER_TYPE})
            if resp.status_code == 204:
                return
            code, detail = _error(resp)
            if resp.status_code == 409 and code == CONCURRENT_UPDATE:
                raise ResourceProviderUpdateConflict(uuid=consumer_uuid,
                                                     attempts=CONFLICT_ATTEMPTS)
            if resp.status_code == 409:
                raise AllocationFailed(reason=f"provider {provider_uuid}: {detail}")
            if resp.status_code == 400 and self.get_provider(provider_uuid) is None:
                raise ProviderNotFound(uuid=provider_uuid)
            raise PlacementError(reason=f"allocating {dict(resources)} on provider "
                                        f"{provider_uuid} failed ({resp.status_code} {code}): "
                                        f"{detail}")

        self._retrying(f"allocation of container {consumer_uuid}", once)
        LOG.info("allocated %s on provider %s to container %s", dict(resources),
                 provider_uuid, consumer_uuid)

    def holds(self, consumer_uuid: str, provider_uuid: str,
              resources: Mapping[str, int]) -> bool:
        """Not asked: it would cost the round trip ``allocate`` makes anyway (the API
        writes no allocation in OpenStack Placement)."""
        return False

    def remove_allocation(self, consumer_uuid: str) -> bool:
        url = f"/allocations/{consumer_uuid}"
        resp = self._call("DELETE", url)
        if resp.status_code == 204:
            LOG.info("released the allocation of container %s", consumer_uuid)
            return True
        if resp.status_code == 404:
            return False
        raise self._unexpected("DELETE", url, resp)

    def provider_allocations(self, provider_uuid: str) -> dict[str, dict[str, int]]:
        held = self._get_of_provider(provider_uuid, "allocations")["allocations"]
        return {consumer: {rc: int(n) for rc, n in a["resources"].items()}
                for consumer, a in held.items()}

    def usages(self, provider_uuid: str) -> dict[str, int]:
        usages = self._get_of_provider(provider_uuid, "usages")["usages"]
        return {rc: int(n) for rc, n in usages.items()}
