"""Image references and pull decisions (behaviours.md §1.1, §1.2).

:func:`parse_image` follows Docker's distribution grammar::

    reference  := name [ ":" tag ] [ "@" digest ]
    name       := [ domain "/" ] path-component [ "/" path-component ]*
    domain     := the first component, when it contains "." or ":" or is "localhost"
    path-component := [a-z0-9]+ ( ( "." | "_" | "__" | "-"+ ) [a-z0-9]+ )*
    tag        := [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}
    digest     := algorithm ":" hex (at least 32 hex digits)

Unlike Zun, a digest is kept (``app@sha256:…`` pulls exactly that image). A name without
a domain gets the registry prefix (the container's registry record, else
``[docker]default_registry``).
"""

from __future__ import annotations

import re
from typing import Literal

from berth.common.exceptions import InvalidParameterValue
from berth.runtime.base import ImageRef

#: Longest repository name (domain included) Docker accepts.
NAME_MAX = 255

_PATH_COMPONENT = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*")
_DOMAIN_COMPONENT = r"(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])"
_DOMAIN = re.compile(rf"{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})*(?::[0-9]+)?")
_TAG = re.compile(r"[\w][\w.-]{0,127}", re.ASCII)
_DIGEST = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}")

#: The whole grammar as one anchored pattern (ECMA-262 and Python alike), for the API's
#: declarations: a string matches exactly when :func:`parse_image` accepts it (save for
#: the 255-character limit once a registry prefix is added). A first component with a
#: "." or ":" (or "localhost") before a "/" is a domain, and must be a valid one.
_REGISTRY = (rf"(?:{_DOMAIN_COMPONENT}(?:\.{_DOMAIN_COMPONENT})+(?::[0-9]+)?"
             rf"|{_DOMAIN_COMPONENT}:[0-9]+|localhost)")
_NAME_AND_TAG = (rf"^(?:{_REGISTRY}/|(?![^/@]*[.:][^/@]*/|localhost/))"
                 rf"{_PATH_COMPONENT.pattern}(?:/{_PATH_COMPONENT.pattern})*"
                 rf"(?::{_TAG.pattern.replace(chr(92) + 'w', 'A-Za-z0-9_')})?")
REFERENCE_PATTERN = rf"{_NAME_AND_TAG}(?:@{_DIGEST.pattern})?$"
#: A reference without a digest: the name of an image to make (a commit's).
TAGGED_REFERENCE_PATTERN = rf"{_NAME_AND_TAG}$"
#: A repository name alone (no tag, no digest).
UNTAGGED_REFERENCE_PATTERN = (rf"^(?:{_REGISTRY}/|(?![^/@]*[.:][^/@]*/|localhost/))"
                              rf"{_PATH_COMPONENT.pattern}(?:/{_PATH_COMPONENT.pattern})*$")

PullPolicy = Literal["always", "ifnotpresent", "never"]
PullDecision = Literal["pull", "use_local", "fail"]
_POLICIES: tuple[PullPolicy, ...] = ("always", "ifnotpresent", "never")


def _invalid(name: str, why: str) -> InvalidParameterValue:
    return InvalidParameterValue(err=f"Invalid image name {name!r}: {why}.")


def has_domain(name: str) -> bool:
    """Whether ``name``'s first component is a registry domain (Docker's rule)."""
    first, slash, _ = name.partition("/")
    return bool(slash) and ("." in first or ":" in first or first == "localhost")


def _split(image: str) -> tuple[str, str | None, str | None]:
    """``image`` -> (name, tag or None, digest or None), without validating."""
    name, at, digest = image.partition("@")
    tag: str | None = None
    last_slash = name.rfind("/")
    colon = name.rfind(":")
    if colon > last_slash:
        name, tag = name[:colon], name[colon + 1:]
    return name, tag, (digest if at else None)


def _validate_name(image: str, name: str) -> None:
    if not name:
        raise _invalid(image, "the repository name is empty")
    components = name.split("/")
    if has_domain(name):
        if not _DOMAIN.fullmatch(components[0]):
            raise _invalid(image, f"{components[0]!r} is not a valid registry domain")
        components = components[1:]
    for component in components:
        if _PATH_COMPONENT.fullmatch(component):
            continue
        if _PATH_COMPONENT.fullmatch(component.lower()):
            raise _invalid(image, "the repository name must be lowercase")
        if ":" in component:
            raise _invalid(image, "a tag is written once, as ':tag' after the last '/'")
        if not component:
            raise _invalid(image, "it has an empty path component")
        raise _invalid(
            image,
            f"{component!r} is not a valid path component (lowercase letters and digits, "
            "separated by '.', '_', '__' or '-')",
        )


def parse_image(
    name: str,
    default_registry: str | None = None,
    registry_domain: str | None = None,
) -> ImageRef:
    """Parse ``name`` into an :class:`ImageRef` (tag ``latest`` when absent).

    When ``name`` has no domain it is prefixed with ``registry_domain`` (the registry
    record the container references) or else ``default_registry``. Raises
    :class:`InvalidParameterValue`, naming the image and the reason, when ``name`` does
    not follow Docker's reference grammar or the repository is longer than 255 characters.
    """
    if not name or not name.strip():
        raise InvalidParameterValue(err="Invalid image name '': the image name is empty.")
    if name != name.strip() or any(ch.isspace() for ch in name):
        raise _invalid(name, "it contains whitespace")
    repo, tag, digest = _split(name)
    _validate_name(name, repo)
    if tag is not None and not _TAG.fullmatch(tag):
        raise _invalid(name, f"{tag!r} is not a valid tag (letters, digits, '_', '.', '-'; "
                             "at most 128 characters, not starting with '.' or '-')")
    if digest is not None and not _DIGEST.fullmatch(digest):
        raise _invalid(name, f"{digest!r} is not a valid digest (e.g. sha256:<64 hex digits>)")
    prefix = registry_domain or default_registry
    if prefix and not has_domain(repo):
        repo = f"{prefix.rstrip('/')}/{repo}"
    if len(repo) > NAME_MAX:
        raise _invalid(name, f"the repository name is longer than {NAME_MAX} characters")
    return ImageRef(repo=repo, tag=tag or "latest", digest=digest)


def normalize_pull_policy(value: str | None) -> PullPolicy:
    """``image_pull_policy`` in berth's stored form: ``always``, ``ifnotpresent`` or
    ``never``, whatever the case the user wrote; None or "" means ``always``. Anything
    else raises :class:`InvalidParameterValue` naming the allowed values."""
    if not value:
        return "always"
    lowered = value.lower()
    for policy in _POLICIES:
        if lowered == policy:
            return policy
    raise InvalidParameterValue(
        err=f"Invalid image_pull_policy {value!r}: use one of Always, IfNotPresent or Never."
    )


def pull_decision(policy: str | None, present: bool) -> PullDecision:
    """What to do with an image under ``policy`` when it is (not) ``present`` locally
    (behaviours.md §1.2): ``always`` pulls; ``ifnotpresent`` pulls only when absent;
    ``never`` and any unknown policy use the local image or fail when it is absent.
    The policy is compared case-insensitively; None or "" means ``always``."""
    normalized = (policy or "always").lower()
    if normalized == "always":
        return "pull"
    if normalized == "ifnotpresent":
        return "use_local" if present else "pull"
    return "use_local" if present else "fail"
