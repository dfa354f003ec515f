"""The cri capsule driver ([DEFAULT]capsule_driver = cri): each capsule is a pod of a
CRI runtime (containerd), whose sandbox holds the namespaces the members share and
whose network containerd sets up by calling its CNI configuration.

The capsule flows (``capsules.create``, ``delete``, ``status``, ``recovery``) are the
docker driver's, with the same claims, allocations, volumes and status rules; the
parts that talk to the engine are here: ``create`` (the pod, the init containers in
order, the containers), ``pods`` (a pod's removal, the one undo of every path),
``status`` (members' states read from the runtime, for the shared derivation).
"""
