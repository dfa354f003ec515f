"""Version discovery (api-v1.md §2): ``GET /`` and ``GET /v1``; and ``/healthcheck``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse

from berth.api import microversions as mv
from berth.api.links import base_url

router = APIRouter()

RESOURCES = ("services", "containers", "images", "networks", "hosts", "capsules",
             "availability_zones", "quotas", "quota_classes", "registries")


def _version(base: str) -> dict[str, object]:
    return {"id": "v1", "status": "CURRENT", "min_version": str(mv.MIN_VERSION),
            "max_version": str(mv.MAX_VERSION),
            "links": [{"href": f"{base}/v1/", "rel": "self"}]}


@router.get("/")
@router.get("/.json", include_in_schema=False)
def versions(request: Request) -> dict[str, object]:
    base = base_url(request)
    return {"name": "OpenStack Zun API",
            "description": "berth: a container service that speaks Zun's API v1 and runs "
                           "real Docker containers.",
            "versions": [_version(base)], "default_version": _version(base)}


@router.get("/v1")
@router.get("/v1/", include_in_schema=False)
@router.get("/v1.json", include_in_schema=False)
def v1(request: Request) -> dict[str, object]:
    base = base_url(request)
    doc: dict[str, object] = {
        "id": "v1",
        "media_types": [{"base": "application/json",
                         "type": "application/vnd.openstack.zun.v1+json"}],
        "links": [{"href": f"{base}/v1/", "rel": "self"},
                  {"href": "https://docs.openstack.org/zun/latest/", "rel": "describedby",
                   "type": "text/html"}],
    }
    for res in RESOURCES:
        doc[res] = [{"href": f"{base}/v1/{res}/", "rel": "self"},
                    {"href": f"{base}/{res}/", "rel": "bookmark"}]
    return doc


@router.get("/healthcheck", response_class=PlainTextResponse)
def healthcheck() -> str:
    return "OK"
