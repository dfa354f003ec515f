"""Local networks that span nodes: one VXLAN device per network on every node that
holds one of its members, its tables written from the database (no learning, no
multicast, no service of its own).

::

    node A                                              node B
    ctr ══ vth ── bth<h> (gw) ── bvx<h> ─┐     ┌─ bvx<h> ── bth<h> (gw) ── vth ══ ctr
                                 VNI = network row's id, UDP 4789 over the underlay
                                 (local_tunnel_ip), unicast to the peer's address

Each node's ``bvx`` device has learning off and ARP/ND proxying on. For every member
of the network held by *another live node* it holds a forwarding entry (the member's
MAC to that node's tunnel address) and a neighbour entry (the member's address to its
MAC), so a container's ARP request is answered on its own node and its frames go
straight to the right peer; broadcasts and unknown destinations go nowhere (no
flooding entry), which also keeps each node's gateway (the same address on every
node's bridge) local. The bridge, its veths and the firewall stay as on one node
(``berth.network.bridge``, ``firewall``, ``policy``).

- ``plan``: pure logic: device names, the MTU under VXLAN, the tables a node wants
  from the members it is told of, and the changes between two tables;
- ``ipam``: the network-wide allocator: one address per attachment across nodes, its
  uniqueness left to the store (the database's unique constraint serialises it);
- ``vxlan``: the kernel side (pyroute2): the device, reading and writing its tables;
- ``reconcile``: a node's tables made to match what the store says.

Nothing here reads ``CONF`` or touches the database: the store is handed in
(``berth.db.overlay`` is the one the CNI daemon uses).
"""
