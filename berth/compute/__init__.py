"""The compute agent: everything that runs on a container host.

Thin RPC endpoints with Zun's method names live in ``endpoints/``, one mixin per area,
combined by ``manager.ComputeManager``; the work they hand off (create, delete,
start/stop and the other life-cycle steps, rebuild, start-up recovery) is in
``flows/``, one module per flow, run by ``workers.py`` one action at a time per
container; the steps several flows share are beside them: ``steps/`` (claim, Placement
allocation, volumes, engine container: what create, capsule create and rebuild acquire
and undo), ``flows/network_step.py``, ``image_puller.py``, ``spec.py``. ``capsules/`` and
``volumes/`` are the agent's side of capsules and volumes; ``networking.py`` and
``neutron_networks.py`` its network drivers. ``pleg/`` notices what changed in the
engine and ``flows/sync.py``, run by ``sync_workers.py``, brings each row in step with
it; ``periodic/`` holds the timers, ``claims.py`` the node's resource accounting,
``states.py`` the status and task_state vocabularies with the table of which action is
allowed in which status, and ``status_mapping.py`` the translation of the engine's
state into a row's status. ``agent.py`` wires it together and gives the start-up order.
"""
