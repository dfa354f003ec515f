"""``CapsuleFailed``: what a step of a capsule's create raises, on either engine (the
Docker half in ``capsules.create``, the CRI half in ``capsules.cri``), with the reason
the capsule and its members get in their Error."""

from __future__ import annotations

from berth.common import exceptions as exc


class CapsuleFailed(exc.BerthError):
    message = "%(reason)s"
