"""Neutron networks as Docker networks of the kuryr-libnetwork plugin
(``[network]driver = kuryr``, Zun's default driver).

- ``docker_networks``: one Docker network per Neutron network per node, made once
  (the unique (neutron_net_id, host) row serialises its creators), and a container's
  endpoints on them (connect, disconnect).

The agent's side (ports, plugs, attach and detach) is
``berth.compute.kuryr_networks``; the plugin itself runs beside the engine
(``.ci/kuryr-ci.sh``, docs/networking.md).
"""
