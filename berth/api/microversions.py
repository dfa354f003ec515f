"""Microversion negotiation (api-v1.md §3).

The client names a version with ``OpenStack-API-Version: container X.Y``; no header
means the minimum, ``container latest`` the maximum. A malformed header, another
service, or a version out of range is a 406.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import total_ordering

from berth.common.exceptions import NotAcceptable

SERVICE = "container"
HEADER = "OpenStack-API-Version"
MIN_HEADER = "OpenStack-API-Minimum-Version"
MAX_HEADER = "OpenStack-API-Maximum-Version"


@total_ordering
@dataclass(frozen=True, slots=True)
class APIVersion:
    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> APIVersion:
        """``"1.20"`` -> APIVersion(1, 20); ValueError on anything else."""
        major, sep, minor = text.strip().partition(".")
        if not sep or not major.isdigit() or not minor.isdigit():
            raise ValueError(f"invalid version string {text!r}")
        return cls(int(major), int(minor))

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, APIVersion):
            return NotImplemented
        return (self.major, self.minor) < (other.major, other.minor)

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def at_least(self, text: str) -> bool:
        return self >= APIVersion.parse(text)


MIN_VERSION = APIVersion(1, 1)
MAX_VERSION = APIVersion(1, 40)


def negotiate(header: str | None) -> APIVersion:
    """The version a request asks for, or :class:`NotAcceptable` (406)."""
    if header is None or not header.strip():
        return MIN_VERSION
    # Several comma-separated entries may name other services; keep ours.
    entries = [e.strip() for e in header.split(",") if e.strip()]
    ours = [e for e in entries if e.split()[0].lower() == SERVICE] if entries else []
    if not ours:
        raise NotAcceptable(
            f"Invalid {HEADER} header {header!r}: expected 'container X.Y' or 'container latest'."
        )
    parts = ours[0].split()
    if len(parts) != 2:
        raise NotAcceptable(
            f"Invalid {HEADER} header {header!r}: expected 'container X.Y' or 'container latest'."
        )
    if parts[1].lower() == "latest":
        return MAX_VERSION
    try:
        version = APIVersion.parse(parts[1])
    except ValueError:
        raise NotAcceptable(
            f"Invalid {HEADER} header {header!r}: the version must look like 1.40."
        ) from None
    if not MIN_VERSION <= version <= MAX_VERSION:
        raise NotAcceptable(
            f"Version {version} was requested but the minor version is not supported by "
            f"this API. Supported versions are {MIN_VERSION} to {MAX_VERSION}.",
            title="Requested microversion is unsupported",
        )
    return version


@dataclass(frozen=True, slots=True)
class Availability:
    """The versions in which one request exists, declared once: ``require`` refuses a
    request at another version (406), and ``/openapi.json`` publishes the same range as
    the operation's ``OpenStack-API-Version`` header (``berth.api.openapi.available``).
    ``high`` None: no upper bound; ``instead`` says what to do at other versions."""

    what: str
    low: str
    high: str | None = None
    instead: str = ""

    def require(self, version: APIVersion) -> None:
        """406 unless ``low`` <= ``version`` <= ``high``."""
        too_old = not version.at_least(self.low)
        too_new = self.high is not None and version > APIVersion.parse(self.high)
        if too_old or too_new:
            span = f"{self.low} to {self.high}" if self.high else f"{self.low} and later"
            raise NotAcceptable(
                f"{self.what} is not available at API version {version}: it exists only "
                f"in versions {span}. {self.instead}".strip())

    def header(self) -> dict[str, object]:
        """The OpenAPI header parameter naming the versions in range (required when the
        default, the minimum version, is not one of them). Where the default is in
        range, an empty value is too: ``negotiate`` takes it for no header (as Zun
        does), and the document says so (a fuzzer's empty header found it unsaid)."""
        low, high = APIVersion.parse(self.low), APIVersion.parse(self.high or str(MAX_VERSION))
        names = [f"{SERVICE} {MIN_VERSION.major}.{minor}"
                 for minor in range(low.minor, high.minor + 1)]
        if self.high is None:
            names.append(f"{SERVICE} latest")
        required = low > MIN_VERSION
        blank = "" if required else f" An empty value is no header: version {MIN_VERSION}."
        return {"name": HEADER, "in": "header", "required": required,
                "description": f"The API version: {self.what} exists only in versions "
                               f"{self.low} to {self.high or MAX_VERSION}. {self.instead}"
                               .strip() + blank,
                "schema": {"type": "string", "enum": names if required else ["", *names]}}
