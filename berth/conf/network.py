"""[network]: how containers get their networks. Zun's group and option names where
Zun has them (``driver``); berth's additions say so in their help."""

from oslo_config import cfg

GROUP = "network"

OPTS = [
    cfg.StrOpt("driver", default="local", choices=["local", "docker", "cni", "kuryr"],
               help="The container network driver. 'local' (berth's default): berth's own "
                    "networks, a Linux bridge each, containers plugged by the CNI daemon "
                    "([cni_daemon]) with addresses from berth's IPAM; a project gets a "
                    "default network on first use. 'docker': containers stay on Docker's "
                    "default bridge and the API reports no address (berth before "
                    "networking). 'cni' (Zun's name): OpenStack Neutron ports, bound to "
                    "this host and plugged into the Open vSwitch integration bridge by the "
                    "CNI daemon as os-vif does ([neutron], [neutron_client]). 'kuryr' "
                    "(Zun's default): Neutron ports made by berth and plugged by Docker "
                    "through the kuryr-libnetwork plugin (driver_name), one Docker "
                    "network per Neutron network on each node."),
    cfg.StrOpt("driver_name", default="kuryr",
               help="The Docker network (and IPAM) plugin of [network]driver = kuryr, as "
                    "`docker plugin ls` or its spec file in /etc/docker/plugins names "
                    "it."),
    cfg.StrOpt("local_subnet_pool", default="10.244.0.0/16",
               help="berth: the pool local networks' subnets are carved from, one "
                    "local_subnet_prefix subnet per network."),
    cfg.IntOpt("local_subnet_prefix", default=24, min=8, max=29,
               help="berth: the prefix length of each local network's subnet."),
    cfg.StrOpt("local_subnet_pool_v6", default="",
               help="berth: an IPv6 pool (a unique local range such as fd00:b47::/48) "
                    "that makes every local network created from now on dual-stack: the "
                    "network gets the /64 of this pool at the index its IPv4 subnet has "
                    "in local_subnet_pool, and each container the IPv6 address at its "
                    "IPv4 address's offset (10.244.3.7 -> <pool>:3::7). Empty (the "
                    "default): local networks are IPv4 only. The host must have IPv6 "
                    "enabled; IPv6 egress (local_masquerade) also needs "
                    "net.ipv6.conf.all.forwarding = 1, which berth does not set."),
    cfg.BoolOpt("local_overlay", default=False,
                help="berth: whether local networks span nodes (docs/multi-node.md): each "
                     "node's CNI daemon lays a VXLAN device per network (VNI: the network's "
                     "row id, UDP 4789) and writes its forwarding and neighbour entries "
                     "from the database, which also hands out addresses network-wide. "
                     "Every node's CNI daemon then needs [database] connection; the "
                     "networks' MTU is the underlay's less 50. Off (the default): a "
                     "node's local networks are its own."),
    cfg.StrOpt("local_tunnel_ip", default="",
               help="berth: the node's underlay address that VXLAN packets of spanning "
                    "local networks (local_overlay) leave from and arrive at; empty: "
                    "my_ip. It must be one of the node's addresses, reachable from the "
                    "other nodes on UDP 4789."),
    cfg.IntOpt("local_overlay_interval", default=2, min=1,
               help="berth: seconds between two passes of the CNI daemon over its spanning "
                    "networks (local_overlay): members that came, went or moved on other "
                    "nodes, and nodes found down (service_down_time) withdrawn."),
    cfg.BoolOpt("local_masquerade", default=False,
                help="berth: whether local networks masquerade their egress to the host's "
                     "networks (off: containers reach each other and the host only)."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
