"""The compute agent: everything that runs on a container host.

Thin RPC endpoints with Zun's method names live in ``manager.py``; the work they hand
off (create, delete, start/stop and the other life-cycle steps, capsules, start-up
recovery) is in ``flows/``. ``pleg/`` notices what changed in the engine and
``flows/sync.py``, run by ``sync_workers.py``, brings each row in step with it;
``periodic/`` holds the timers, ``claims.py`` the node's resource accounting,
``states.py`` the status and task_state vocabularies with the table of which action
is allowed in which status, and ``status_mapping.py`` the translation of
the engine's state into a row's status.
"""
