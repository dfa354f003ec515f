"""A CRI capsule member's image, made present in containerd by containerd itself
(CRI ``PullImage``), under the member's ``image_pull_policy`` as the docker driver
honours it (``[DEFAULT]image_pull_policy`` when the member names none)::

    always        pull; a failed pull uses the local copy when there is one
    ifnotpresent  the local copy, else pull
    never         the local copy, else the capsule fails naming the image

Credentials are the docker driver's (``compute.image_puller.registry_auth_for``): the
member's registry record when the image lives on that registry, else
``[docker]default_registry_username`` for images on the default registry; they go
to containerd in the request's ``AuthConfig`` and nowhere else.
"""

from __future__ import annotations

import logging

from berth.compute import image_puller
from berth.compute.capsules.failure import CapsuleFailed
from berth.compute.deps import AgentDeps
from berth.db.models import Container
from berth.image.reference import normalize_pull_policy, parse_image, pull_decision
from berth.runtime import base as rt
from berth.runtime.cri.base import PodRuntime

LOG = logging.getLogger(__name__)


def ensure_image(deps: AgentDeps, pods: PodRuntime, member: Container, init: bool) -> str:
    """The member's image present in containerd per its pull policy; its reference.
    CapsuleFailed, naming the member and the image, when it cannot be had."""
    registry = image_puller.registry_of(deps, member)
    image = parse_image(member.image or "", default_registry=deps.settings.default_registry,
                        registry_domain=registry.domain if registry else None)
    policy = normalize_pull_policy(member.image_pull_policy or deps.settings.default_pull_policy)
    present = pods.image_present(image.ref)
    what = f"The {'init container' if init else 'container'} {member.name}"
    decision = pull_decision(policy, present)
    if decision == "use_local":
        LOG.info("image %s is present in containerd (pull policy %s)", image.ref, policy)
        return image.ref
    if decision == "fail":
        raise CapsuleFailed(reason=f"{what}: image {image.ref} is not present in containerd "
                                   f"on host {deps.host} and its pull policy is {policy}: "
                                   f"pull it there first, or use imagePullPolicy "
                                   f"IfNotPresent or Always.")
    auth = image_puller.registry_auth_for(deps, image, registry)
    LOG.info("containerd pulls image %s (pull policy %s%s)", image.ref, policy,
             ", with credentials" if auth else "")
    try:
        pods.pull_image(image.ref, auth)
    except rt.RuntimeImageNotFound as err:
        raise CapsuleFailed(reason=f"{what}: image {image.ref} could not be found in its "
                                   f"registry ({err.msg}). Check the name and tag.") from err
    except rt.RuntimeImagePullFailed as err:
        if present:
            LOG.warning("pull of %s failed (%s); using the copy containerd has", image.ref,
                        err.msg)
            return image.ref
        raise CapsuleFailed(reason=f"{what}: image {image.ref} could not be pulled by "
                                   f"containerd on host {deps.host}: {err.msg}. Check that "
                                   f"the registry is reachable from there.") from err
    return image.ref
