"""[cinder_client]: how berth talks to Cinder ([volume]driver = cinder). Zun's option
names and defaults; berth's additions say so."""

from oslo_config import cfg

GROUP = "cinder_client"


OPTS = [
    cfg.StrOpt("api_version", default="3", help="The Cinder API version to use."),
    cfg.StrOpt("endpoint_type", default="publicURL",
               choices=["public", "internal", "admin", "publicURL", "internalURL",
                        "adminURL"],
               help="The catalog endpoint type of Cinder to use."),
    cfg.StrOpt("ca_file", help="A CA bundle to verify Cinder's TLS certificate with."),
    cfg.BoolOpt("insecure", default=False, help="Do not verify Cinder's TLS certificate."),
    cfg.StrOpt("endpoint_override",
               help="berth: Cinder's volume endpoint when there is no Keystone catalog to "
                    "find it in (e.g. http://127.0.0.1:8776/v3/%(project_id)s)."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
