"""[websocket_proxy]: the console proxy's address (used by the API to build URLs)."""

from oslo_config import cfg

GROUP = "websocket_proxy"

OPTS = [
    cfg.StrOpt("wsproxy_host", default="$my_ip"),
    cfg.PortOpt("wsproxy_port", default=6784),
    cfg.URIOpt("base_url", default="ws://$wsproxy_host:$wsproxy_port/"),
    cfg.ListOpt("allowed_origins", default=[]),
    cfg.IntOpt("token_ttl", default=600, help="Seconds a console token stays valid."),
]


def register_opts(conf: cfg.ConfigOpts) -> None:
    conf.register_opts(OPTS, group=GROUP)
