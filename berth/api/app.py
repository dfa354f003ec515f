"""The FastAPI application."""

from __future__ import annotations

from fastapi import FastAPI

from berth.api import errors, openapi
from berth.api.authtoken import IdentityCache, KeystoneAuthMiddleware, TokenValidator
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
from berth.dashboard import app as dashboard
from berth.dashboard import resources as dashboard_resources
from berth.dashboard import routes as dashboard_routes
from berth.dashboard.login import KeystoneLogin

# Order matters only where paths overlap: the fixed /v1/containers/{ident}/<action>
# routes never clash with /v1/containers/{ident}.
ROUTERS = (root, containers, container_actions, container_inspection, console,
           container_action_records, images, hosts, services, availability_zones, quotas,
           registries, capsules, networks, health)


def create_app(state: ApiState, *, noauth: bool = True,
               public_endpoint: str | None = None,
               keystone: tuple[TokenValidator, IdentityCache] | None = None) -> FastAPI:
    """``noauth``: mount the Keystone stand-in (``routers.identity``); otherwise
    ``keystone`` (a validator and its cache) checks every request's token."""
    if not noauth and keystone is None:
        raise ValueError("an API without noauth needs a Keystone token validator")
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
    openapi.install(app, settings, [*(module.router for module in ROUTERS),
                                    dashboard_routes.router, dashboard_resources.router])
    # Last: the console's static mount answers every path under /dashboard.
    dashboard.install(app, state, KeystoneLogin(keystone[0].identity_url)
                      if keystone is not None else None)
    if keystone is not None:
        # Inside BerthMiddleware, so that a 401 carries the request id and version headers.
        app.add_middleware(KeystoneAuthMiddleware, validator=keystone[0], cache=keystone[1])
    app.add_middleware(BerthMiddleware)
    return app
