"""TLS of berth's listeners, from the configuration: the API's (``[api]
enable_ssl_api`` with ``[ssl]``) and the console proxy's (``[websocket_proxy]
ssl_only``, ``cert``, ``key``). The contexts raise
:class:`berth.common.tls.TLSConfigError` naming the option to fix; the entry points
build them before anything starts."""

from __future__ import annotations

import logging
import ssl

from oslo_config import cfg

from berth.common import tls

LOG = logging.getLogger(__name__)


def api_context(conf: cfg.ConfigOpts) -> ssl.SSLContext | None:
    """The API's server context; None when ``[api]enable_ssl_api`` is false."""
    s = conf.ssl
    settings = tls.api_tls(conf.api.enable_ssl_api, s.cert_file, s.key_file, s.ca_file,
                           s.version, s.ciphers)
    return settings.context() if settings is not None else None


def console_context(conf: cfg.ConfigOpts) -> ssl.SSLContext | None:
    """The console proxy's server context; None when ``ssl_only`` is false."""
    w = conf.websocket_proxy
    settings = tls.console_tls(w.ssl_only, w.cert, w.key)
    return settings.context() if settings is not None else None


def console_server_context(conf: cfg.ConfigOpts) -> ssl.SSLContext | None:
    """``console_context`` as a console proxy starts (``berth serve``'s and
    ``berth-wsproxy``): with a warning when the certificate is set but not used."""
    context = console_context(conf)
    unused = unused_console_cert(conf)
    if unused:
        LOG.warning("%s", unused)
    return context


def unused_console_cert(conf: cfg.ConfigOpts) -> str | None:
    """Why ``[websocket_proxy]cert`` is not used (ssl_only is false), or None.
    (websockify, Zun's proxy, serves TLS and plain connections on one port then;
    berth's serves one or the other.)"""
    w = conf.websocket_proxy
    if w.ssl_only or not w.cert:
        return None
    return ("[websocket_proxy]cert is set but ssl_only is false: the console proxy serves "
            "plain ws:// and does not use the certificate. Set ssl_only = true to serve "
            "wss://, or remove cert")


def console_base_url(conf: cfg.ConfigOpts) -> str:
    """``[websocket_proxy]base_url`` as the API hands it out (wss:// with ssl_only)."""
    w = conf.websocket_proxy
    url = tls.console_base_url(w.base_url, w.ssl_only)
    if url != w.base_url:
        LOG.info("console URLs are %s: [websocket_proxy]ssl_only is true, so the ws:// "
                 "of base_url is handed out as wss://", url)
    return url


def scheme(context: ssl.SSLContext | None) -> str:
    return "https" if context is not None else "http"
