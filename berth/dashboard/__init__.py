"""berth's web console, served at ``/dashboard/`` by ``berth serve`` and ``berth-api``.

The browser side is built from ``dashboard/`` (the repository's top level: Vite,
Preact, xterm.js) into ``static/`` here, which is committed and shipped as package
data, so nothing of Node.js is needed at run time. This package adds to the API
app (:func:`berth.dashboard.app.install`): the static files, the login endpoints and
the live event stream (``routes``, ``stream``), fed by one change watcher per
process (``watch``), which reads the database once a second while consoles are open.
"""
