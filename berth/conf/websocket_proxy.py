"""[websocket_proxy]: the console proxy's address (used by the API to build URLs)."""

from oslo_config import cfg

GROUP = "websocket_proxy"

OPTS = [
    cfg.StrOpt("wsproxy_host", default="$my_ip",
               help="Address the console proxy listens on."),
    cfg.PortOpt("wsproxy_port", default=6784, help="Port the console proxy listens on."),
    cfg.URIOpt("base_url", default="ws://$wsproxy_host:$wsproxy_port/",
               help="URL of the console proxy as clients reach it: the API builds "
                    "console URLs from it. With ssl_only = true in the API's "
                    "configuration a ws:// URL is handed out as wss://."),
    cfg.ListOpt("allowed_origins", default=[],
                help="Hosts (or origins) whose web pages may open consoles, besides the "
                     "proxy's own host (the WebSocket Origin check)."),
    cfg.BoolOpt("ssl_only", default=False,
                help="Serve consoles over TLS only (wss://, with cert and key); a plain "
                     "ws:// connection is refused. Set it in the API's configuration too "
                     "(berth serve has one): the API then hands out wss:// URLs."),
    cfg.StrOpt("cert", default="",
               help="PEM certificate (and chain) of the console proxy, with ssl_only. "
                    "Without ssl_only it is not used: berth's proxy serves either TLS or "
                    "plain connections, not both on one port."),
    cfg.StrOpt("key", default="",
               help="PEM private key of cert. Empty: the key is in cert."),
    cfg.IntOpt("token_ttl", default=600, help="Seconds a console token stays valid."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
