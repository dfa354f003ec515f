"""The CNI pair: ``berth-cni``, a CNI 1.0 plugin executable, and ``berth-cni-daemon``.

What this package owns:

- ``contract``: the CNI spec as data: the plugin's environment and network
  configuration parsed and checked into a ``CniRequest``, results and errors rendered
  as the spec's JSON, the error codes; shared by the plugin and the daemon;
- ``plugin``: the executable's logic (thin: parse, forward over HTTP, print);
- ``client``: the HTTP client of the daemon (the plugin's, and the compute agent's);
- ``registry``: the daemon's attachments, shared by its workers, persisted so that a
  restarted daemon rebuilds them;
- ``service``: add, delete, check and the sync pass, over ``berth.network``;
- ``server``: the daemon's HTTP endpoints and their status codes.

The plugin is kept light (no oslo, no pyroute2): a runtime forks it for every
container, so it imports only ``contract`` and ``client``.
"""
