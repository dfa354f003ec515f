"""[glance_client]: how berth talks to Glance (the glance image driver). Zun's option
names and defaults; berth's additions say so.

Who calls Glance: the caller's own token (``X-Auth-Token`` of the API request, carried
to the agent in the request context) when berth's API authenticates with Keystone
(``[api]auth_strategy = keystone``); otherwise (noauth, ``berth serve``'s default, and
an agent's own work) berth's own identity, from
keystoneauth's options in this group (``auth_type`` and its plugin's options, e.g.
``auth_type = password`` with ``auth_url``, ``username``, ``password``,
``project_name``, ``user_domain_name``, ``project_domain_name``), registered when the
glance driver first needs that identity (``register_auth_opts``).

Where Glance is: ``endpoint_override`` when set; otherwise the Keystone catalog
(service type ``image``, interface ``endpoint_type``, region ``region_name``).
"""

from oslo_config import cfg

from berth.conf.service_identity import IdentityGroup

GROUP = "glance_client"

OPTS = [
    cfg.StrOpt("region_name",
               help="Region in Identity service catalog to use for communication with "
                    "the OpenStack service."),
    cfg.StrOpt("endpoint_type", default="publicURL",
               choices=["public", "internal", "admin", "publicURL", "internalURL",
                        "adminURL"],
               help="Type of endpoint in Identity service catalog to use for "
                    "communication with the OpenStack service."),
    cfg.StrOpt("api_version", default="2", choices=["2"],
               help="Version of the Glance API to use (Glance has only v2 today)."),
    cfg.StrOpt("ca_file", help="Optional CA cert file to use in SSL connections."),
    cfg.StrOpt("cert_file", help="Optional PEM-formatted certificate chain file."),
    cfg.StrOpt("key_file",
               help="Optional PEM-formatted file that contains the private key."),
    cfg.BoolOpt("insecure", default=False,
                help="If set, then the server's certificate will not be verified."),
    cfg.StrOpt("endpoint_override",
               help="berth: Glance's endpoint (e.g. http://127.0.0.1:9292) instead of the "
                    "one in the Keystone catalog."),
    cfg.IntOpt("timeout", default=60, min=1,
               help="berth: seconds one Glance request may wait for an answer (a "
                    "download's chunks each get this long)."),
]

_GROUP = IdentityGroup(GROUP, OPTS)
all_opts = _GROUP.all_opts
register_opts = _GROUP.register_opts
register_auth_opts = _GROUP.register_auth_opts
