"""What each command's ``--help`` says: what it runs, where it listens, which
configuration it reads. The defaults quoted are read from the options' declarations
(``berth.conf``), so the text cannot drift from them."""

from __future__ import annotations

from types import ModuleType

from berth.conf import api, cni_daemon, docker, websocket_proxy


def _default(module: ModuleType, name: str) -> object:
    return next(opt.default for opt in module.OPTS if opt.dest == name)


_API_PORT = _default(api, "port")
_WSPROXY_PORT = _default(websocket_proxy, "wsproxy_port")
_DOCKER = _default(docker, "api_url")
_CNI_HOST = _default(cni_daemon, "cni_daemon_host")
_CNI_PORT = _default(cni_daemon, "cni_daemon_port")

#: Every command's epilog.
CONFIG = ("Configuration: only the files named with --config-file FILE and --config-dir "
          "DIR (both repeatable; later values win) are read; with none, every option "
          "keeps its default. etc/berth.conf.sample in berth's source lists every "
          "option with its help.")

_LISTEN_API = (f"The API listens on [api]host_ip:[api]port (default 127.0.0.1:{_API_PORT} "
               f"while [api]auth_strategy is noauth, else [DEFAULT]my_ip), and answers "
               f"GET /metrics, /healthz and /readyz there too.")
_LISTEN_CONSOLE = (f"The console proxy listens on [websocket_proxy]wsproxy_host:"
                   f"wsproxy_port (default [DEFAULT]my_ip:{_WSPROXY_PORT}).")
_DATABASE = ("Database: [database]connection (default: SQLite file berth.sqlite under "
             "[DEFAULT]state_path).")

BERTH = ("berth: a container service that speaks OpenStack Zun's REST API v1 and runs "
         "Docker containers. `berth serve` runs all of it on this machine; `berth db "
         "upgrade` and `berth db version` manage the database schema. --config-file "
         "and --config-dir may come before or after the command.")

SERVE = ("Runs the REST API (Zun's API v1) with its scheduler, this node's compute agent "
         f"and the console proxy, in one process. {_LISTEN_API} {_LISTEN_CONSOLE} The "
         f"agent drives the Docker engine at [docker]api_url (default {_DOCKER}). "
         f"{_DATABASE} It is migrated at start. RPC stays in the process unless "
         "[DEFAULT]transport_url is set. Stops on SIGTERM or Ctrl-C.")

DB = "Database schema migrations (Alembic) on [database]connection."

DB_UPGRADE = (f"Applies every migration and prints the revision reached. {_DATABASE} "
              "Run it before berth-api and berth-compute start (they never migrate); "
              "berth serve runs it itself.")

DB_IMPORT_ZUN = ("Takes over a Zun 18 deployment's database: reads Zun's database (only reads "
                 "it: going back is starting Zun again) at Zun 18's Alembic head and writes "
                 "its containers, capsules, volumes, exec instances, images, registries, "
                 "quotas, nodes, services, actions, networks and the embedded Placement's "
                 f"allocations into berth's, which must be empty. {_DATABASE} "
                 "docs/migrating-from-zun.md tells the whole takeover.")

DB_VERSION = (f"Prints the database's migration revision, or 'empty'. {_DATABASE}")

API = ("berth-api: runs berth's REST API (Zun's API v1) and its scheduler, without a "
       "compute agent. It reaches the agents over RabbitMQ ([DEFAULT]transport_url, "
       f"required; topic [compute]topic) and needs no Docker engine. It serves with "
       f"[api]workers processes (default: one per CPU). {_LISTEN_API} "
       f"{_DATABASE} It must be at the migration head: run `berth db upgrade` first.")

COMPUTE = ("berth-compute: runs the compute agent of this node ([DEFAULT]host): it "
           "takes its work from RabbitMQ ([DEFAULT]transport_url, required; topic "
           "[compute]topic), drives the Docker engine at [docker]api_url (default "
           f"{_DOCKER}), and records containers, resources and its heartbeat in the "
           f"database. {_DATABASE} It must be at the migration head: run `berth db "
           "upgrade` first. With [compute]metrics_port set (default 0: off) it answers "
           "GET /metrics, /healthz and /readyz on [compute]metrics_host:metrics_port. "
           "Stops on SIGTERM or Ctrl-C.")

WSPROXY = ("berth-wsproxy: runs the console WebSocket proxy (attach and exec) for the "
           f"containers of this node ([DEFAULT]host). {_LISTEN_CONSOLE} It checks "
           "console tokens in the database and reaches the Docker engine at "
           f"[docker]api_url (default {_DOCKER}; TCP only with TLS). {_DATABASE}")

STATUS = ("berth-status: `berth-status upgrade check` checks that this deployment can "
          "run this berth: the database reachable and at the migration head, every "
          "compute agent's heartbeat recent, RabbitMQ and OpenStack Placement (when "
          "configured) reachable, and no option set that berth ignores or that is "
          "unsafe. Exit status: 0 all passed, 1 a warning, 2 a failure, 255 a check "
          "could not run. It listens on nothing and changes nothing.")

CNI_DAEMON = ("berth-cni-daemon: plugs containers into berth's local networks (a Linux "
              "bridge per network, a veth pair per interface, berth's own iptables chains) "
              "for berth-cni and the compute agent. It listens on [cni_daemon]"
              f"cni_daemon_host:cni_daemon_port (default {_CNI_HOST}:{_CNI_PORT}), keeps its "
              "attachments in [cni_daemon]registry_file (default under [DEFAULT]state_path) "
              "and undoes at start what a killed daemon left half done. With [network]driver "
              "= cni it also plugs the agent's Neutron ports into Open vSwitch ([neutron]) "
              "and waits until Neutron reports them ACTIVE. Runs as root. "
              "Stops on SIGTERM or Ctrl-C; the containers keep their network.")

CNI = ("berth-cni: a CNI 1.0 plugin. A container runtime runs it with CNI_COMMAND (ADD, "
       "DEL, CHECK, VERSION), CNI_CONTAINERID, CNI_NETNS, CNI_IFNAME, CNI_ARGS in the "
       "environment and the network configuration as JSON on stdin; it forwards the "
       "request to berth-cni-daemon (the configuration's daemonUrl, default "
       f"http://{_CNI_HOST}:{_CNI_PORT}) and prints the result or the CNI error as JSON. "
       "It reads no configuration file.")
