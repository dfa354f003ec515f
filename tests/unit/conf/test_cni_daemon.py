from __future__ import annotations

from oslo_config import cfg

from berth.conf import cni_daemon


def test_zun_option_names_and_defaults_are_kept() -> None:
    conf = cfg.ConfigOpts()
    conf.register_opt(cfg.StrOpt("state_path", default="/var/lib/berth"))
    cni_daemon.register_opts(conf)
    conf(args=[])
    c = conf.cni_daemon
    assert (c.cni_daemon_host, c.cni_daemon_port, c.worker_num, c.vif_active_timeout,
            c.pyroute2_timeout, c.docker_mode, c.zun_cni_config_file) == (
        "127.0.0.1", 9036, 30, 60, 10, False, "/etc/cni/net.d/10-zun-cni.conf")
    assert c.registry_file == "/var/lib/berth/cni/registry.json"
    assert c.sync_interval == 60
