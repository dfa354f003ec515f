"""The FastAPI application."""

from __future__ import annotations

from fastapi import FastAPI

from berth.api import errors
from berth.api.middleware import BerthMiddleware
from berth.api.routers import containers, identity, root
from berth.api.state import ApiState


def create_app(state: ApiState, *, noauth: bool = True,
               public_endpoint: str | None = None) -> FastAPI:
    app = FastAPI(title="berth", version="1.40",
                  description="A container service with OpenStack Zun's API v1.",
                  docs_url="/docs", redoc_url=None)
    app.state.berth = state
    app.state.public_endpoint = public_endpoint
    errors.install(app)
    app.include_router(root.router)
    if noauth:
        app.include_router(identity.router)
    app.include_router(containers.router)
    app.add_middleware(BerthMiddleware)
    return app
