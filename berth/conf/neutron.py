"""[neutron] and [neutron_client]: how berth talks to OpenStack Neutron
(``[network]driver = cni``). Zun's groups: ``[neutron]`` holds keystoneauth's options
(berth's own identity towards Neutron: ``auth_type`` and its plugin's options, e.g.
``password`` with ``auth_url``, ``username``, ...; with a noauth Neutron
``auth_type = none``), registered when the Neutron driver starts
(``register_auth_opts``); ``[neutron_client]`` holds Zun's client options.

berth calls Neutron with its own identity only: creating a port bound to a host
(``binding:host_id``) needs an admin (Neutron's default policy), and berth checks
itself that a user names only networks, ports and security groups of their project
(or shared networks).
"""

from oslo_config import cfg

from berth.conf.service_identity import IdentityGroup

GROUP = "neutron"

OPTS = [
    cfg.StrOpt("endpoint_override",
               help="berth: Neutron's endpoint (e.g. http://127.0.0.1:9696) when there is "
                    "no Keystone catalog to find it in."),
    cfg.StrOpt("ovs_bridge", default="br-int",
               help="berth: the Open vSwitch integration bridge a port is plugged into "
                    "when Neutron's binding does not name one (vif_details bridge_name); "
                    "os-vif's and Neutron's default."),
    cfg.IntOpt("timeout", default=30, min=1,
               help="berth: seconds one Neutron request may take."),
]

_GROUP = IdentityGroup(GROUP, OPTS)
all_opts = _GROUP.all_opts
register_opts = _GROUP.register_opts
register_auth_opts = _GROUP.register_auth_opts
