"""The console: single-use console tokens, the exec records, and the WebSocket proxy
(``berth-wsproxy``, also run inside ``berth serve``) that joins a user's websocket to a
container's attach stream or an interactive exec on the Docker engine.

How a console opens::

    client ── GET .../attach (or POST .../execute?run=false) ──► API
    API ── container_attach / container_exec ──► agent (checks; creates the exec)
    API: issue a token bound to (container, exec id), answer the ws URL
    client ── ws://proxy/?token=..&uuid=..[&exec_id=..] ──► proxy
    proxy: Origin check, token consumed (single use, not expired, bound), then
           Docker over its UNIX socket (attach / exec start, hijacked) ◄──► websocket

Modules: ``tokens`` (issue, consume), ``execs`` (exec_instance rows), ``origin``
(the Origin rule), ``docker_socket`` (the engine's HTTP upgrade on asyncio),
``proxy`` (one session: checks then relay), ``server`` (the listening server and the
thread ``berth serve`` runs it in). Only ``server`` and ``proxy`` need ``websockets``.
"""
