"""[websocket_proxy]: the console proxy's address (used by the API to build URLs)."""

from oslo_config import cfg

GROUP = "websocket_proxy"

OPTS = [
    cfg.StrOpt("wsproxy_host", default="$my_ip",
               help="Address the console proxy listens on."),
    cfg.PortOpt("wsproxy_port", default=6784, help="Port the console proxy listens on."),
    cfg.URIOpt("base_url", default="ws://$wsproxy_host:$wsproxy_port/",
               help="URL of the console proxy as clients reach it: the API builds "
                    "console URLs from it."),
    cfg.ListOpt("allowed_origins", default=[],
                help="Hosts (or origins) whose web pages may open consoles, besides the "
                     "proxy's own host (the WebSocket Origin check)."),
    cfg.IntOpt("token_ttl", default=600, help="Seconds a console token stays valid."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
