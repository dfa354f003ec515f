"""oslo.messaging transport (``transport_url = rabbit://...``), for an API and agents on
several machines. oslo.messaging is imported only here, and only when configured: it
is heavy (kombu, oslo.service) and ``berth serve`` does not need it.

oslo.messaging registers its own options (``transport_url`` among them) on the
ConfigOpts it is given; berth registers its own ``transport_url`` too, so this module
gives oslo.messaging a ConfigOpts of its own, read from the same config files (so
``[oslo_messaging_rabbit]`` settings apply), and passes the URL explicitly.

Topic and server: every agent listens on ``[compute]topic`` (default ``zun-compute``)
with its host name as the server; the API sends to ``topic.<host>``. Deployments (or
test runs) that share one RabbitMQ vhost keep apart by giving each its own topic.

Errors: an agent's BerthError travels by class and module (``ALLOWED_REMOTE_EXMODS``)
and is raised on the API side as the same class again (oslo.messaging's own ``_Remote``
subclass, whose ``str()`` carries the agent's traceback, is replaced here); errors of
other modules arrive as RemoteError and become RPCError (503).
"""

from __future__ import annotations

import functools
import importlib
import logging
import socket
import sys
import threading
from collections.abc import Callable, Sequence
from typing import Any

from oslo_config import cfg

from berth.common import exceptions as exc
from berth.common import imports
from berth.common.threads import ElasticThreadPool
from berth.rpc.base import Endpoint

LOG = logging.getLogger(__name__)

ALLOWED_REMOTE_EXMODS = ["berth.common.exceptions", "berth.runtime.base"]
_AMQP_PORT = 5672
_REMOTE = "_Remote"


def _import_messaging() -> Any:
    """Import oslo.messaging on native threads only.

    berth never monkey-patches: the threading executor runs the endpoints on real
    threads. oslo.messaging's server module imports ``oslo_service.service``, whose
    default backend is eventlet, and futurist imports eventlet whenever it is
    installed (oslo.service depends on it). Loaded for nothing, eventlet and its
    green DNS resolver cost an agent about 19 MiB of resident memory (bench P6a) and
    warn in every log that eventlet is deprecated. So: select oslo.service's threading
    backend, and keep eventlet out of this process (a ``None`` entry in
    ``sys.modules`` makes ``import eventlet`` fail, which oslo.utils and futurist
    treat as "not installed"). A process that already imported eventlet keeps it.
    """
    logging.getLogger("oslo_service.backend").setLevel(logging.WARNING)  # "Loading backend"
    sys.modules.setdefault("eventlet", None)  # type: ignore[arg-type]
    from oslo_service import backend  # type: ignore[import-untyped]

    if backend.get_backend_type() is None:
        backend.init_backend(backend.BackendType.THREADING)
    _import_kombu_serialization()
    import oslo_messaging  # type: ignore[import-untyped]
    return oslo_messaging


#: The serializers kombu registers whenever their library can be imported. berth's
#: messages are oslo.messaging's JSON, and a consumer accepts no other content type,
#: so neither is ever used; PyYAML and msgpack, installed for other packages, cost
#: every process that loads kombu about 1.1 MiB (bench P6a).
UNUSED_SERIALIZERS = ("yaml", "msgpack")


def _import_kombu_serialization() -> None:
    """Import kombu's serializer registry with ``UNUSED_SERIALIZERS`` hidden: kombu
    registers them as not installed (a message in either is refused). Called at the
    process's start, before it runs threads of its own, so that no other import of
    either library can meet the ``None`` entry meanwhile; a library already imported
    is not hidden (but one ``berth.common.imports`` registered without running its
    ``__init__`` is, and is put back), and an entry is removed as soon as kombu is
    loaded."""
    hidden = {name: sys.modules.get(name) for name in UNUSED_SERIALIZERS
              if name not in sys.modules or imports.pending(name)}
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:
        import kombu.serialization  # noqa: F401  (oslo.messaging's rabbit driver needs it)
    except ImportError:
        LOG.debug("kombu is not installed; oslo.messaging's rabbit driver will say so")
    finally:
        for name, module in hidden.items():
            if name in sys.modules and sys.modules[name] is None:
                if module is None:
                    del sys.modules[name]
                else:
                    sys.modules[name] = module


def _use_elastic_executor(server: Any) -> None:
    """Run the server's requests on an ElasticThreadPool of the same bound
    (``executor_thread_pool_size``, 64 by default) instead of futurist's
    ThreadPoolExecutor, which starts a thread per request until the bound and never
    lets one go: a burst of 100 casts left an agent with 64 idle threads.

    oslo.messaging accepts no executor but its own two names, so this sets the class
    the server instantiates at ``start()`` (a private attribute; test_rpc_oslo checks
    it is still there). Without it the server keeps futurist's pool."""
    if hasattr(server, "_executor_cls"):
        server._executor_cls = functools.partial(ElasticThreadPool, thread_name_prefix="rpc")
    else:
        LOG.warning("this oslo.messaging has no _executor_cls; RPC threads stay for the "
                    "life of the process")


#: How long an oslo.messaging listener (an RPC server's, or a client's reply waiter)
#: waits for a message before it wakes to run the operations other threads queued
#: for it: the first wait after a message, doubling at each wake up to the idle one.
#: The library's are 1 ms and 5 s (``amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN`` and
#: ``_MAX``): ten wakes or more after every request, each a round of kombu and amqp
#: calls, a fifth of an agent's CPU per container created (bench P15), and the
#: largest share of an idle agent's. Those queued operations are the acks and
#: requeues of notification listeners, which berth has none of: an RPC request is
#: acknowledged in the consumer's callback, on the listener's thread, before it is
#: dispatched (``RpcAMQPListener.__call__``), and a reply is taken in the reply
#: waiter's; a message ends the wait at once. What the wait still bounds is a
#: reply waiter's ``stop`` (``cleanup()``): it sees it at its next wake, so the
#: first wait stays short. A server's listener does not ramp at all
#: (``_listen_steadily``): its ``stop`` casts the message that ends the wait.
#: Either way a wait is cut at the heartbeat check's wait (10 s by default).
LISTENER_FIRST_WAKE = 0.5
LISTENER_IDLE_WAKE = 30.0


def _set_listener_waits() -> None:
    """Make the listeners' waits ``LISTENER_FIRST_WAKE`` and ``LISTENER_IDLE_WAKE``
    (private module constants the listener reads at each wait;
    tests/integration/rpc/test_oslo_transport.py checks they are still there).
    Without them the listeners keep the library's waits."""
    try:
        from oslo_messaging._drivers import amqpdriver  # type: ignore[import-untyped]
    except ImportError:
        amqpdriver = None
    waits = {"ACK_REQUEUE_EVERY_SECONDS_MIN": LISTENER_FIRST_WAKE,
             "ACK_REQUEUE_EVERY_SECONDS_MAX": LISTENER_IDLE_WAKE}
    if amqpdriver is None or not all(hasattr(amqpdriver, name) for name in waits):
        LOG.warning("this oslo.messaging has no amqpdriver.ACK_REQUEUE_EVERY_SECONDS_MIN "
                    "and _MAX; its listeners wake as often as the library says")
        return
    for name, seconds in waits.items():
        setattr(amqpdriver, name, seconds)


_STEADY: dict[type, type] = {}


def _steady(listener_class: type) -> type:
    """``listener_class`` whose wait is always ``LISTENER_IDLE_WAKE``: the
    ``_current_timeout`` it sets back to the first wait after each message is ignored.
    One subclass per class (a listener's class is what ``type()`` shows)."""
    def idle_wake(_self: Any) -> float:
        return LISTENER_IDLE_WAKE

    def ignore(_self: Any, _seconds: float) -> None:
        return None

    steady = _STEADY.get(listener_class)
    if steady is None:
        steady = _STEADY.setdefault(listener_class, type(
            f"Steady{listener_class.__name__}", (listener_class,),
            {"_current_timeout": property(idle_wake, ignore)}))
    return steady


def _listen_steadily(server: Any) -> None:
    """Give ``server`` a listener that waits ``LISTENER_IDLE_WAKE`` after a message
    too, not ``LISTENER_FIRST_WAKE`` doubling: the ramp's five wakes after each request
    cost an agent's listener half its CPU per container created (bench P15, at 1,000
    nodes: 2.6 against 1.3 ms), for nothing an RPC server needs (see
    ``LISTENER_FIRST_WAKE``). It wraps the server's ``_create_listener`` and the
    listener's ``_current_timeout`` (private names; test_oslo_transport checks them).
    Without them the server's listener keeps the ramp."""
    create = getattr(server, "_create_listener", None)
    if create is None:
        LOG.warning("this oslo.messaging server has no _create_listener; its listener "
                    "wakes %.1f s after each request, doubling", LISTENER_FIRST_WAKE)
        return

    def create_steady() -> Any:
        adapter = create()
        listener = getattr(adapter, "_poll_style_listener", None)
        if listener is None or "_current_timeout" not in vars(listener):
            # not the AMQP driver's listener (or another oslo.messaging): no ramp known
            LOG.debug("oslo.messaging listener %r has no _current_timeout; left as it is",
                      listener if listener is not None else adapter)
        else:
            listener.__class__ = _steady(type(listener))
        return adapter

    server._create_listener = create_steady


#: Option groups that oslo.messaging (>= 18) reads from the ConfigOpts it is given on
#: every send but registers only on the global ``cfg.CONF``: (module, list and group name).
_GLOBAL_ONLY_GROUPS = (("oslo_messaging._metrics.client", "oslo_messaging_metrics"),
                       ("oslo_messaging._tracing.client", "oslo_messaging_tracing"))


def _register_global_only_opts(conf: cfg.ConfigOpts) -> None:
    """Register those groups on berth's private ConfigOpts too; without them every cast
    and call fails with NoSuchOptError. Older oslo.messaging has no such modules."""
    for module_name, group in _GLOBAL_ONLY_GROUPS:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        opts = getattr(module, group, None)
        if opts:
            conf.register_opts(opts, group=group)


def _local_error(err: exc.BerthError) -> exc.BerthError:
    """The agent's error as its own class (not oslo's ``<Name>_Remote`` subclass)."""
    cls = type(err)
    if not cls.__name__.endswith(_REMOTE):
        return err
    base = cls.__mro__[1]
    try:
        return base(err.msg, **err.kwargs)  # type: ignore[no-any-return]
    except TypeError:  # a subclass with another constructor: keep oslo's object
        return err


class _Dispatch:
    """The oslo endpoint: exposes exactly the agent's RPC methods. oslo's dispatcher
    calls ``method(ctxt, **kwargs)`` with the request context (a dict) positionally,
    which is the endpoints' ``(self, context, **kwargs)`` signature.

    A BerthError is the agent answering no (a 4xx for the user), not a fault: it goes
    back wrapped in oslo's ExpectedException, which the server sends to the caller as
    is but logs without a traceback."""

    def __init__(self, endpoint: Endpoint, expected: Callable[[], Exception]) -> None:
        self._endpoint = endpoint
        self._expected = expected

    def __getattr__(self, name: str) -> Any:
        if name == WAKE_METHOD:
            return _woken
        if name.startswith("_") or name not in self._endpoint.RPC_METHODS:
            raise AttributeError(name)
        fn = getattr(self._endpoint, name)
        expected = self._expected

        @functools.wraps(fn)
        def dispatch(ctxt: Any, **kwargs: Any) -> Any:
            try:
                return fn(ctxt, **kwargs)
            except exc.BerthError as err:
                LOG.info("RPC %s answered %s: %s", name, type(err).__name__, err.msg)
                raise expected() from err

        return dispatch


#: The request a stopping server casts to itself (``_Server.stop``): the listener
#: waits for a message up to ``LISTENER_IDLE_WAKE``, and sees that it is stopped only
#: when the wait ends. Dispatched, it does nothing.
WAKE_METHOD = "berth_listener_wake"


def _woken(ctxt: Any, **kwargs: Any) -> None:
    return None


class _Server:
    """oslo's MessageHandlingServer, stopped the way oslo wants: ``stop()`` ends the
    consuming, ``wait()`` lets running handlers finish and closes the connection.

    oslo's ``stop`` returns once the listener's thread has seen it, at the end of
    that thread's wait for a message (up to the heartbeat check's 10 s); ``wake``
    casts the request that ends that wait, sent every ``_WAKE_EVERY`` seconds while
    ``stop`` waits (the first one may arrive before the listener has been told)."""

    _WAKE_EVERY = 0.1
    _WAKES_AT_MOST = 50

    def __init__(self, server: Any, wake: Callable[[], None] | None = None) -> None:
        self._server = server
        self._wake = wake

    def start(self) -> None:
        self._server.start()

    def stop(self) -> None:
        stopped = threading.Event()
        waker = None
        if self._wake is not None:
            waker = threading.Thread(target=self._wake_until, args=(stopped,),
                                     name="rpc-stop-wake", daemon=True)
            waker.start()
        try:
            self._server.stop()
        finally:
            stopped.set()
        if waker is not None:
            # bounded: a cast to a broker that does not answer may hang on its connect
            waker.join(self._WAKE_EVERY * 10)
        self._server.wait()

    def _wake_until(self, stopped: threading.Event) -> None:
        assert self._wake is not None
        for _ in range(self._WAKES_AT_MOST):
            if stopped.wait(self._WAKE_EVERY):
                return
            try:
                self._wake()
            except Exception as err:  # noqa: BLE001 - the listener's own wait ends it then
                LOG.debug("could not wake the stopping RPC listener: %s", err)
                return


class OsloTransport:
    def __init__(self, url: str, topic: str, config_files: Sequence[str] = ()) -> None:
        messaging = _import_messaging()
        _set_listener_waits()   # servers' listeners and the calls' reply waiter
        self._messaging = messaging
        self._conf = cfg.ConfigOpts()
        self._conf(args=[], project="berth", default_config_files=list(config_files))
        _register_global_only_opts(self._conf)
        self._transport = messaging.get_rpc_transport(
            self._conf, url=url, allowed_remote_exmods=ALLOWED_REMOTE_EXMODS)
        self._brokers = [(h.hostname or "localhost", h.port or _AMQP_PORT)
                         for h in messaging.TransportURL.parse(self._conf, url).hosts
                         ] or [("localhost", _AMQP_PORT)]
        self._topic = topic
        self._client = messaging.get_rpc_client(
            self._transport, messaging.Target(topic=topic))

    def cast(self, host: str, method: str, **kwargs: Any) -> None:
        context = kwargs.pop("context", None) or {}
        try:
            self._client.prepare(server=host).cast(context, method, **kwargs)
        except self._messaging.MessagingException as err:
            raise exc.RPCError(host=host, reason=f"cast {method} failed: {err}") from err

    def call(self, host: str, method: str, timeout: float, **kwargs: Any) -> Any:
        context = kwargs.pop("context", None) or {}
        try:
            return self._client.prepare(server=host, timeout=timeout).call(
                context, method, **kwargs)
        except exc.BerthError as err:
            raise _local_error(err) from None
        except self._messaging.MessagingTimeout:
            raise exc.RPCTimeout(host=host, method=method, timeout=timeout) from None
        except self._messaging.RemoteError as err:
            raise exc.RPCError(host=host, reason=f"{err.exc_type}: {err.value}") from err
        except self._messaging.MessagingException as err:
            raise exc.RPCError(host=host, reason=f"call {method} failed: {err}") from err

    def check(self) -> None:
        """Ready when a broker of ``transport_url`` accepts a TCP connection (within
        1 s): cheap, and what fails when RabbitMQ is down or unreachable. An AMQP
        session is not opened (oslo.messaging keeps its own and reconnects it)."""
        problems = []
        for host, port in self._brokers:
            try:
                socket.create_connection((host, port), timeout=1.0).close()
                return
            except OSError as err:
                problems.append(f"{host}:{port}: {err}")
        raise exc.RPCError(f"No message broker of transport_url answers "
                           f"({'; '.join(problems)}).")

    def serve(self, host: str, endpoint: Endpoint) -> _Server:
        expected = self._messaging.rpc.dispatcher.ExpectedException
        target = self._messaging.Target(topic=self._topic, server=host)
        server = self._messaging.get_rpc_server(
            self._transport, target, [_Dispatch(endpoint, expected)], executor="threading")
        _use_elastic_executor(server)
        _listen_steadily(server)
        return _Server(server, wake=lambda: self._wake(host))

    def _wake(self, host: str) -> None:
        """Cast ``WAKE_METHOD`` to ``host``'s own queue, without the retries a cast
        makes while the broker is away."""
        self._client.prepare(server=host, retry=0).cast({}, WAKE_METHOD)

    def cleanup(self) -> None:
        self._transport.cleanup()
