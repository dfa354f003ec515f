"""Which of the console's paths need a token (read by berth.api.authtoken)."""

from __future__ import annotations

PREFIX = "/dashboard"
#: The console's endpoints that answer without a token: how to log in, and the login.
PUBLIC_ENDPOINTS = frozenset({"/dashboard/api/config", "/dashboard/api/login"})


def is_public(path: str) -> bool:
    """The console's static files and its login endpoints are public; its event
    stream (``/dashboard/api/events``) needs a token as the API does."""
    if path == PREFIX or path.startswith(PREFIX + "/"):
        return not path.startswith(PREFIX + "/api/") or path in PUBLIC_ENDPOINTS
    return False
