"""[ssl]: the API's TLS certificate (berth-api and berth serve, with ``[api]
enable_ssl_api = true``). The names are those of oslo.service's ``sslutils``, which
zun-api reads; berth declares them itself (oslo.service deprecates that module)."""

from oslo_config import cfg

GROUP = "ssl"

OPTS = [
    cfg.StrOpt("cert_file",
               help="PEM certificate (and its chain) the API presents with "
                    "[api]enable_ssl_api = true."),
    cfg.StrOpt("key_file",
               help="PEM private key of cert_file. Unset: the key is in cert_file."),
    cfg.StrOpt("ca_file",
               help="PEM CA certificates: when set, every client must present a "
                    "certificate signed by one of them (mutual TLS), as with "
                    "oslo.service."),
    cfg.StrOpt("version",
               help="TLS version the API accepts: TLSv1_2 or TLSv1_3 for that version "
                    "alone; unset (or SSLv23) for every version the system's OpenSSL "
                    "allows. SSLv2, SSLv3, TLSv1 and TLSv1_1 are refused at start-up "
                    "(insecure)."),
    cfg.StrOpt("ciphers",
               help="OpenSSL cipher list for TLS 1.2 and below (e.g. "
                    "ECDHE+AESGCM); unset: OpenSSL's defaults."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
