"""``berth serve``: API, scheduler, compute agent and (with ``[network]driver =
local``) the CNI daemon in one process, on the embedded defaults (SQLite under
state_path, in-process RPC)."""

from __future__ import annotations

import contextlib
import logging
import signal
import threading
from collections.abc import Iterator
from typing import Literal

from oslo_config import cfg

from berth.api import server as api_server
from berth.api.app import create_app
from berth.cmd import cni_daemon, neutron_wiring, tls, wiring, wsproxy
from berth.cni.daemon import CniDaemon
from berth.common.memory import freeze_started
from berth.common.tls import TLSConfigError
from berth.metrics.health import Readiness

LOG = logging.getLogger(__name__)


class _Server(api_server.Server):
    """uvicorn re-raises SIGTERM/SIGINT after its graceful shutdown, which would kill
    the process before the agent, the console proxy and the database are stopped;
    berth stops them itself, then exits normally."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        sigs = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in sigs}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


def _start_cni_daemon(conf: cfg.ConfigOpts) -> CniDaemon | None | Literal[False]:
    """The embedded CNI daemon (before the agent, whose start-up recovery may plug
    containers); None with ``[network]driver = docker``; False when it cannot start
    (logged)."""
    if conf.network.driver not in ("local", "cni"):
        return None
    daemon = CniDaemon(cni_daemon.settings(conf), neutron=neutron_wiring.vif_service(conf),
                       overlay=cni_daemon.overlay(conf))
    try:
        daemon.start()
    except OSError as err:
        LOG.error("the CNI daemon could not listen on %s:%s: %s. Free the port, set "
                  "[cni_daemon] cni_daemon_host / cni_daemon_port, or set [network] "
                  "driver = docker to keep containers on Docker's default bridge.",
                  conf.cni_daemon.cni_daemon_host, conf.cni_daemon.cni_daemon_port, err)
        return False
    except Exception:
        LOG.exception("the CNI daemon could not recover its registry %s",
                      conf.cni_daemon.registry_file)
        return False
    return daemon


def run(conf: cfg.ConfigOpts) -> int:
    wiring.check_subnet_pools(conf)    # before anything starts: a bad pool exits here
    try:                               # and so does a TLS setting that cannot work
        api_tls, console_tls = tls.api_context(conf), tls.console_server_context(conf)
    except TLSConfigError as err:
        LOG.error("berth serve cannot start: %s", err)
        return 2
    db = wiring.build_database(conf)
    transport = wiring.build_transport(conf)
    cni = _start_cni_daemon(conf)
    if cni is False:
        return 1
    # The embedded daemon's cni driver (Neutron) is reached over HTTP; the local
    # driver's plugs call it in this process.
    agent = wiring.build_agent(conf, db, transport,
                               networks_url=cni.url if cni is not None else None,
                               networks_client=cni.client() if cni is not None else None)
    try:
        agent.start()
    except Exception as err:  # noqa: BLE001 - report and exit
        LOG.error("the compute agent could not start: %s. Is the Docker engine running "
                  "and reachable at %s?", err, conf.docker.api_url)
        if cni is not None:
            cni.stop()
        return 1
    try:  # the console proxy: its own event loop in a thread, before uvicorn runs
        console = wsproxy.build_console_server(conf, db, console_tls)
        console.start()
    except (OSError, ValueError, TimeoutError) as err:
        LOG.error("the console proxy could not start on %s:%s: %s. Free the port or set "
                  "[websocket_proxy] wsproxy_host / wsproxy_port.",
                  conf.websocket_proxy.wsproxy_host, conf.websocket_proxy.wsproxy_port, err)
        agent.stop()
        if cni is not None:
            cni.stop()
        return 1
    state = wiring.build_api_state(conf, db, transport)
    state.local_state_live = lambda host: host == agent.host and agent.pleg.live()
    state.readiness = Readiness(agent.readiness_checks())   # database, rpc and docker
    app = create_app(state, noauth=conf.api.auth_strategy == "noauth",
                     public_endpoint=conf.api.public_endpoint,
                     keystone=wiring.build_keystone_auth(conf))
    address = wiring.api_listen_address(conf)
    wiring.warn_if_exposed(conf, address)
    LOG.info("berth serve: API on %s://%s:%s/v1 (database %s, host %s)",
             tls.scheme(api_tls), address, conf.api.port, db.url.split("@")[-1], conf.host)
    server = _Server(api_server.config(app, address, conf.api.port,
                                       conf.api.header_timeout, api_tls))
    freeze_started()
    try:
        server.run()
    finally:
        console.stop()
        agent.stop()
        if cni is not None:
            cni.stop()
        transport.cleanup()
        db.dispose()
        LOG.info("berth serve stopped")
    return 0 if server.started else 1
