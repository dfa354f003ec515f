"""Container networking on this node: berth's own local networks.

What this package owns:

- ``base``: the driver interface and the typed values that cross it (``NetworkSpec``,
  ``VIF``) and the ``NetworkDriverError`` family;
- ``metadata``: what a container's row keeps of its networks (``CniMetadata``, the
  ``cni_metadata`` column), the one declaration of that shape;
- ``ipam``: pure address management for one subnet (allocate, fixed IPs, release,
  rebuild from the addresses in use);
- ``netns``: entering a network namespace from one thread, to talk netlink inside it;
- ``bridge``: the local driver, one Linux bridge per network and one veth pair per
  attachment, through pyroute2;
- ``firewall``: the iptables rules berth owns (its own chains), which let a network's
  members talk, keep networks apart and optionally masquerade egress.

- ``policy``: security groups and exposed ports on local networks, as iptables chains;
- ``overlay/``: local networks that span nodes over VXLAN (``[network]local_overlay``),
  with network-wide IPAM;
- ``neutron/``: Neutron ports plugged into Open vSwitch (``[network]driver = cni``).

The CNI daemon (``berth.cni``) drives these, for the compute agent and for the
``berth-cni`` plugin alike. Nothing here reads ``CONF`` or touches the database.
"""
