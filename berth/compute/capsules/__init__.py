"""Capsules on the agent: a pod of Docker containers that share one sandbox's network
and IPC namespaces (the seed's docker capsule driver, behaviours.md §8).

``sandbox`` makes the sandbox image present (berth's own is made locally, with no
registry); ``create`` runs the sandbox, then each init container to completion, in
order, then the containers; ``delete`` removes them all. A capsule is one consumer of
the node's resources: one claim and one Placement allocation for the sums of its
members, released by every failure branch with every Docker container it made.
"""
