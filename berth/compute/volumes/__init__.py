"""The agent's side of volumes: attach for create and rebuild, release for failed
creates and deletes (``attachments``), and start-up reconciliation (``reconcile``)."""

from berth.compute.volumes.attachments import ContainerVolumes

__all__ = ["ContainerVolumes"]
