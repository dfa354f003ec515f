"""Options set that berth ignores, and settings berth refuses or that are unsafe."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from oslo_config import cfg
from oslo_upgradecheck.upgradecheck import Code, Result


def set_by_user(conf: cfg.ConfigOpts, name: str, group: str) -> bool:
    """Was the option given in a config file, on the command line or in the
    environment (rather than left at its default)?"""
    try:
        where = conf.get_location(name, None if group == "DEFAULT" else group)
    except (cfg.NoSuchOptError, cfg.NoSuchGroupError):
        return False             # registered late (e.g. [placement]'s keystoneauth ones)
    except cfg.ConfigFileValueError:
        return True              # set, to a value that does not parse
    return where is not None and where.location.is_user_controlled


def check_deprecated(conf: cfg.ConfigOpts,
                     listed: Iterable[tuple[str, Sequence[cfg.Opt]]]) -> Result:
    """Warning for each option of ``listed`` (berth.conf.list_opts()) deprecated for
    removal and set: berth does not use its value."""
    found = [f"[{group}]{opt.dest} ({opt.deprecated_reason or 'deprecated'})"
             for group, opts in listed for opt in opts
             if opt.deprecated_for_removal and set_by_user(conf, opt.dest, group)]
    if not found:
        return Result(Code.SUCCESS, "No option deprecated for removal is set.")
    return Result(Code.WARNING, f"Set, but berth does not use them: {'; '.join(found)}. "
                                f"Remove them from the configuration.")


_INLINE_COMMENT = re.compile(r"\s#")


def check_values(conf: cfg.ConfigOpts,
                 listed: Iterable[tuple[str, Sequence[cfg.Opt]]]) -> Result:
    """Failure for each option set to a value it does not accept (every berth command
    would refuse to start); Warning for each value with `` #`` in it: oslo.config has
    no comments after a value, so ``host = node1  # this node`` sets all of it."""
    invalid, commented = [], []
    for group, opts in listed:
        for opt in opts:
            if not set_by_user(conf, opt.dest, group):
                continue
            try:
                value = conf[opt.dest] if group == "DEFAULT" else conf[group][opt.dest]
            except cfg.ConfigFileValueError as err:
                invalid.append(f"[{group}]{opt.dest}: {reason(err)}")
                continue
            texts = value if isinstance(value, list) else [value]
            if any(isinstance(t, str) and _INLINE_COMMENT.search(t) for t in texts):
                commented.append(f"[{group}]{opt.dest}")
    details = []
    if invalid:
        details.append(f"Values berth does not accept: {'; '.join(invalid)}.")
    if commented:
        details.append(f"Values that contain ' #', which oslo.config keeps as part of the "
                       f"value: {', '.join(commented)}. Put comments on lines of their own.")
    if not details:
        return Result(Code.SUCCESS, "Every value set is valid and holds no comment.")
    return Result(Code.FAILURE if invalid else Code.WARNING, " ".join(details))


def reason(err: cfg.ConfigFileValueError) -> str:
    """oslo.config's message without the location and the value (a secret's value must
    not be printed)."""
    text = str(err.msg or err)
    return text.rsplit("is not valid: ", 1)[-1].split(", but found", 1)[0]


def check_unsafe(findings: Sequence[Result | None]) -> Result:
    """The worst of ``findings`` (the functions below; None: nothing found), all of
    them in the details."""
    found = [f for f in findings if f is not None]
    if not found:
        return Result(Code.SUCCESS, "No unsafe or refused setting found.")
    return Result(max(f.code for f in found), " ".join(f.details or "" for f in found))


def exposed_noauth(auth_strategy: str, address: str, port: int, loopback: bool
                   ) -> Result | None:
    if auth_strategy != "noauth" or loopback:
        return None
    return Result(Code.WARNING,
                  f"The API listens on {address}:{port} without authentication "
                  f"([api]auth_strategy = noauth): whoever reaches it controls every "
                  f"container. Set [api]host_ip = 127.0.0.1, or expose it on a trusted "
                  f"network only.")


def keystone_without_service_user(auth_strategy: str, auth_type: str | None
                                  ) -> Result | None:
    """With Keystone, berth-api validates tokens as its own service user: without one
    (``[keystone_authtoken]auth_type`` unset) every request would be a 401 or 503."""
    if auth_strategy != "keystone" or auth_type:
        return None
    return Result(Code.FAILURE,
                  "[api]auth_strategy = keystone but [keystone_authtoken] names no service "
                  "user to validate tokens with: set auth_type = password, auth_url, "
                  "username, password, project_name, user_domain_name and "
                  "project_domain_name (see docs/identity-and-policy.md).")


def docker_plain_tcp(problem: str | None) -> Result | None:
    """``problem``: why the console proxy refuses ``[docker]api_url`` (None: it does not)."""
    if problem is None:
        return None
    return Result(Code.FAILURE, f"{problem} berth serve and berth-wsproxy refuse to start.")


def shared_key_missing(transport_url: str | None, auth_encryption_key: str | None
                       ) -> Result | None:
    if not transport_url or auth_encryption_key:
        return None
    return Result(Code.WARNING,
                  "[DEFAULT]auth_encryption_key is unset while berth runs on several "
                  "machines (transport_url is set): each machine makes its own key in "
                  "$state_path/registry.key, so a registry password the API stored cannot "
                  "be read by an agent elsewhere. Set the same key everywhere.")


def tls_refused(problems: Sequence[str]) -> Result | None:
    """``problems``: why berth-api, berth serve or berth-wsproxy would refuse their TLS
    settings (``[api]enable_ssl_api`` with ``[ssl]``; ``[websocket_proxy]ssl_only``)."""
    if not problems:
        return None
    return Result(Code.FAILURE, f"{' '.join(p.rstrip('.') + '.' for p in problems)} The "
                                f"servers that read them refuse to start.")


def nova_sharing_without_placement(host_shared_with_nova: bool, placement_driver: str
                                   ) -> Result | None:
    if not host_shared_with_nova or placement_driver == "openstack":
        return None
    return Result(Code.WARNING,
                  f"[compute]host_shared_with_nova = true with [placement]driver = "
                  f"{placement_driver}: Nova cannot share berth's own Placement, so each "
                  f"node reports to a provider of its own. Set [placement]driver = "
                  f"openstack (Nova's Placement) to share Nova's providers.")


def console_cert_unused(problem: str | None) -> Result | None:
    return None if problem is None else Result(Code.WARNING, problem.rstrip(".") + ".")


def glance_without_identity(default_driver: str, driver_list: Sequence[str],
                            auth_strategy: str, glance_auth_type: str | None,
                            endpoint_override: str | None) -> Result | None:
    """Creates default to Glance, but the agent could not call it: without an identity
    of its own (``[glance_client]auth_type``) it has nothing to call Glance with under
    noauth, and no auth_url to find Glance in the catalog with the caller's token."""
    if default_driver.lower() != "glance" or glance_auth_type:
        return None
    if "glance" not in [d.lower() for d in driver_list]:
        return Result(Code.FAILURE,
                      "[DEFAULT]default_image_driver = glance but glance is not in "
                      "[DEFAULT]image_driver_list: every create without an image_driver "
                      "would be refused. Add glance to the list.")
    if auth_strategy == "keystone" and endpoint_override:
        return None
    return Result(Code.WARNING,
                  "[DEFAULT]default_image_driver = glance but [glance_client] sets no "
                  "auth_type: the agents cannot call Glance, and every create from Glance "
                  "ends in Error. Set [glance_client]auth_type = password with auth_url, "
                  "username, password, project_name, user_domain_name and "
                  "project_domain_name (see docs/images.md).")
