"""[neutron_client]: Zun's options of the Neutron client (``[network]driver = cni``);
berth's identity towards Neutron is in ``[neutron]``."""

from oslo_config import cfg

GROUP = "neutron_client"

OPTS = [
    cfg.StrOpt("region_name", help="The region of Neutron's endpoint in the catalog."),
    cfg.StrOpt("endpoint_type", default="publicURL",
               choices=["public", "internal", "admin", "publicURL", "internalURL",
                        "adminURL"],
               help="The catalog endpoint type of Neutron to use."),
    cfg.StrOpt("ca_file", help="A CA bundle to verify Neutron's TLS certificate with."),
    cfg.BoolOpt("insecure", default=False, help="Do not verify Neutron's TLS certificate."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
