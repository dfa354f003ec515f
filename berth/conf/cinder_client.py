"""[cinder_client]: how berth talks to Cinder ([volume]driver = cinder). Zun's option
names and defaults; berth's additions say so.

Who calls Cinder: the caller's own token (``X-Auth-Token`` of the API request, carried
to the agent in the request context) whenever there is one; otherwise (an agent's
recovery, an auto-removed volume's delete after a restart) berth's own identity, from
keystoneauth's options in this group (``auth_type`` and its plugin's options, e.g.
``auth_type = password`` with ``auth_url``, ``username``, ``password``,
``project_name``, ``user_domain_name``, ``project_domain_name``; or, with no Keystone,
``auth_type = admin_token`` with ``token`` and ``endpoint``). These are registered
when the cinder driver starts (``register_auth_opts``).

Where Cinder is: ``endpoint_override`` when set; otherwise the Keystone catalog
(service type ``volumev3``, interface ``endpoint_type``), reached with berth's own
identity's ``auth_url``.
"""

from oslo_config import cfg

from berth.conf.service_identity import IdentityGroup

GROUP = "cinder_client"


OPTS = [
    cfg.StrOpt("api_version", default="3",
               help="The Cinder API version to use. '3' (or '3.latest'): the highest "
                    "microversion both Cinder and python-cinderclient speak, asked of "
                    "Cinder once (berth; Zun sends 3.0). A full microversion such as "
                    "'3.0' or '3.44' is sent as it is. From 3.44 on volumes are attached "
                    "with the attachments API (attachment create/complete/delete), below "
                    "it with the legacy calls (reserve, initialize_connection, attach, "
                    "terminate_connection, detach)."),
    cfg.StrOpt("endpoint_type", default="publicURL",
               choices=["public", "internal", "admin", "publicURL", "internalURL",
                        "adminURL"],
               help="The catalog endpoint type of Cinder to use."),
    cfg.StrOpt("ca_file", help="A CA bundle to verify Cinder's TLS certificate with."),
    cfg.BoolOpt("insecure", default=False, help="Do not verify Cinder's TLS certificate."),
    cfg.StrOpt("endpoint_override",
               help="berth: Cinder's volume endpoint when there is no Keystone catalog to "
                    "find it in (e.g. http://127.0.0.1:8776/v3/%(project_id)s, filled with "
                    "the caller's project; from microversion 3.67 on Cinder also answers "
                    "http://127.0.0.1:8776/v3 without one)."),
]

_GROUP = IdentityGroup(GROUP, OPTS)
all_opts = _GROUP.all_opts
register_opts = _GROUP.register_opts
register_auth_opts = _GROUP.register_auth_opts
