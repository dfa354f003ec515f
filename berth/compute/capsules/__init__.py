"""Capsules on the agent: a pod of containers that share one sandbox's network and IPC
namespaces, on Docker (``[DEFAULT]capsule_driver = docker``, the default: a sandbox
container and members joining its namespaces: ``docker/``) or on containerd's CRI
plugin (``capsule_driver = cri``: ``cri/``). Each driver is a ``CapsuleEngine``
(``berth.compute.deps``), chosen once at wiring; the flows here ask it, never which
engine it is.

``sandbox`` makes the docker driver's sandbox image present (berth's own is made
locally, with no registry) and ``sandbox_options`` its host ports and DNS; ``create``
is the create of both drivers (the claim and allocation, volumes, then the engine's
``make``: the sandbox or pod, each init container to completion, in order, then the
containers); ``delete`` removes them all; ``network`` plugs a docker sandbox into its
networks; ``status`` derives a capsule's status from its members'; ``recovery`` ends
what a crash interrupted. A capsule is one consumer of the node's resources: one claim
and one Placement allocation for the sums of its members, released by every failure
branch with every container it made.
"""
