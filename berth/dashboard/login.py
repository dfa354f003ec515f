"""The console's Keystone password login (``[api]auth_strategy = keystone``).

A browser page cannot ask Keystone for a token itself (Keystone is on another origin
and usually sends no CORS headers), so the console posts the user's name, password,
project and domains to berth, which asks Keystone for a project-scoped token with
keystoneauth's v3 password plugin and hands the token back. berth keeps nothing: the
token lives in the browser's session storage and goes as ``X-Auth-Token`` on every
call, validated like any client's. In noauth mode there is no login: the console's
user types a noauth token (``admin``, ``alice:p1``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from berth.common import exceptions as exc

LOG = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Credentials:
    username: str
    password: str
    project_name: str
    user_domain_name: str = "Default"
    project_domain_name: str = "Default"


@dataclass(frozen=True, slots=True)
class Token:
    token: str
    expires_at: str | None
    project_id: str | None
    user_id: str | None


class KeystoneLogin:
    """Password logins against Keystone's public ``auth_url`` (blocking: call it on a
    worker thread)."""

    def __init__(self, auth_url: str, timeout: float = 10.0) -> None:
        self.auth_url = auth_url
        self.timeout = timeout

    def login(self, creds: Credentials) -> Token:
        """A project-scoped token; NotAuthenticated (401) when Keystone refuses the
        credentials, IdentityServiceUnavailable (503) when it does not answer."""
        from keystoneauth1 import exceptions as ksa_exc
        from keystoneauth1 import session
        from keystoneauth1.identity import v3

        plugin = v3.Password(auth_url=self.auth_url, username=creds.username,
                             password=creds.password, project_name=creds.project_name,
                             user_domain_name=creds.user_domain_name,
                             project_domain_name=creds.project_domain_name)
        sess = session.Session(auth=plugin, timeout=self.timeout)
        try:
            access = plugin.get_access(sess)
        except ksa_exc.Unauthorized:
            raise exc.NotAuthenticated(
                reason="Keystone refused this user name, password, project or domain"
            ) from None
        except (ksa_exc.ConnectFailure, ksa_exc.ConnectTimeout,
                ksa_exc.DiscoveryFailure) as err:
            LOG.warning("console login: Keystone at %s does not answer: %s",
                        self.auth_url, err)
            raise exc.IdentityServiceUnavailable(reason=str(err)) from None
        except ksa_exc.ClientException as err:   # 400s: a malformed request, no project
            raise exc.NotAuthenticated(reason=str(err)) from None
        if not access.auth_token:
            raise exc.IdentityServiceUnavailable(reason="Keystone issued no token")
        expires = access.expires.isoformat() if access.expires else None
        return Token(token=access.auth_token, expires_at=expires,
                     project_id=access.project_id, user_id=access.user_id)
