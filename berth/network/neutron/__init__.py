"""Neutron ports for containers (``[network]driver = cni``, Zun's name).

- ``client``: Neutron through openstacksdk on a keystoneauth session (plain values out,
  the ``NeutronError`` family for every failure);
- ``ovs``: a port plugged into the integration bridge as os-vif does (veth, the port's
  MAC and addresses in the container, ``external_ids:iface-id``);
- ``status``: Zun's ``poll_vif_status``, one listing per node per second while a VIF
  waits;
- ``vifs``: what ``berth-cni-daemon`` does with them (plug, wait ACTIVE or answer 504,
  unplug, sweep);
- ``vif_client``: the agent's client of those daemon endpoints.

The agent's side (ports made, bound, kept or deleted with the container) is
``berth.compute.neutron_networks``; the API's (``nets``, security groups, records of
Neutron networks) is ``berth.api.operations.neutron_networks``. Nothing here reads
``CONF`` (but ``client.connect``) or touches the database.
"""
