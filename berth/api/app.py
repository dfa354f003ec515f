"""The FastAPI application."""

from __future__ import annotations

from fastapi import FastAPI

from berth.api import errors, openapi
from berth.api.middleware import BerthMiddleware
from berth.api.responses import JSONResponse
from berth.api.routers import (
    availability_zones,
    capsules,
    console,
    container_action_records,
    container_actions,
    container_inspection,
    containers,
    health,
    hosts,
    identity,
    images,
    networks,
    quotas,
    registries,
    root,
    services,
)
from berth.api.state import ApiSettings, ApiState

# Order matters only where paths overlap: the fixed /v1/containers/{ident}/<action>
# routes never clash with /v1/containers/{ident}.
ROUTERS = (root, containers, container_actions, container_inspection, console,
           container_action_records, images, hosts, services, availability_zones, quotas,
           registries, capsules, networks, health)


def create_app(state: ApiState, *, noauth: bool = True,
               public_endpoint: str | None = None) -> FastAPI:
    app = FastAPI(title="berth", version="1.40",
                  description="A container service with OpenStack Zun's API v1.",
                  docs_url="/docs", redoc_url=None, default_response_class=JSONResponse)
    app.state.berth = state
    app.state.public_endpoint = public_endpoint
    errors.install(app)
    for module in ROUTERS:
        app.include_router(module.router)
    if noauth:
        app.include_router(identity.router)
    settings = state.settings if state is not None else ApiSettings()
    openapi.install(app, settings, [module.router for module in ROUTERS])
    app.add_middleware(BerthMiddleware)
    return app
