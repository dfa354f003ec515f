"""Mounting the console on the API app."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import RedirectResponse
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from berth.api.state import ApiState
from berth.dashboard import resources, routes
from berth.dashboard.login import KeystoneLogin
from berth.dashboard.watch import ChangeWatcher

STATIC = Path(__file__).parent / "static"


class _StaticFiles(StaticFiles):
    """The bundle's files; its hashed assets are cached for a year, ``index.html``
    never (it names the current assets)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def send_cached(message: Any) -> None:
            if message["type"] == "http.response.start":
                cache = b"public, max-age=31536000, immutable" \
                    if "/assets/" in scope["path"] else b"no-cache"
                message["headers"] = list(message.get("headers", [])) + [
                    (b"cache-control", cache)]
            await send(message)

        await super().__call__(scope, receive, send_cached)


def install(app: FastAPI, state: ApiState | None, login: KeystoneLogin | None) -> None:
    """``login``: the Keystone password login (None in noauth mode, where the console
    asks for a noauth token)."""
    app.state.dashboard_login = login
    app.state.dashboard_watcher = ChangeWatcher(state.db) if state is not None else None
    # Before routes.router, whose catch-all answers 404/405 for any other API path.
    app.include_router(resources.router)
    app.include_router(routes.router)

    @app.get("/dashboard", include_in_schema=False)
    def dashboard_root() -> RedirectResponse:
        return RedirectResponse("/dashboard/", status_code=307)

    # check_dir=False: a tree without the built bundle still starts (the console's
    # pages are then 404s) rather than failing the whole API.
    app.mount("/dashboard", _StaticFiles(directory=STATIC, html=True, check_dir=False),
              name="dashboard")
