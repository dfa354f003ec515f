"""berth's policy: Zun's rule names and defaults, declared once, one module per resource.

``list_rules`` is the ``oslo.policy.policies`` entry point (``oslopolicy-sample-generator
--namespace berth``); :mod:`berth.policies.enforcer` checks requests against these rules
and the operator's ``[oslo_policy]policy_file``, which is re-read when it changes.
"""

from __future__ import annotations

import itertools

from oslo_policy import policy

from berth.policies import (
    availability_zone,
    base,
    capsule,
    container,
    container_action,
    host,
    image,
    network,
    quota,
    registry,
    zun_service,
)

_MODULES = (base, container, container_action, capsule, image, host, zun_service, quota,
            registry, network, availability_zone)


def list_rules() -> list[policy.RuleDefault]:
    return list(itertools.chain.from_iterable(m.list_rules() for m in _MODULES))
