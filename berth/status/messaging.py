"""RabbitMQ (``[DEFAULT]transport_url``) accepts a login on at least one of its hosts,
as berth-api and berth-compute need it to."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from oslo_upgradecheck.upgradecheck import Code, Result

#: Seconds to wait for each broker.
TIMEOUT = 5.0


@dataclass(frozen=True, slots=True)
class Broker:
    host: str
    port: int
    username: str | None
    password: str | None
    virtual_host: str

    def __str__(self) -> str:
        return f"{self.username + '@' if self.username else ''}{self.host}:{self.port}" \
               f"/{self.virtual_host.lstrip('/')}"


def brokers(url: str) -> list[Broker]:
    """The hosts of an oslo.messaging URL, ``rabbit://user:pass@h1:5672,user:pass@h2/vh``
    (ValueError when it is not one)."""
    scheme, sep, rest = url.partition("://")
    if not sep or not scheme:
        raise ValueError(f"{url!r} is not a transport URL (driver://user:pass@host:port/)")
    netloc, _, path = rest.partition("/")
    vhost = unquote(path.partition("?")[0]) or "/"
    out = []
    for part in netloc.split(","):
        creds, at, hostport = part.rpartition("@")
        user, _, password = creds.partition(":") if at else ("", "", "")
        if hostport.startswith("["):                        # [::1]:5672
            host, _, tail = hostport[1:].partition("]")
            port_text = tail.removeprefix(":")
        else:
            host, _, port_text = hostport.partition(":")
        if not host:
            raise ValueError(f"{url!r} names a broker without a host")
        out.append(Broker(host, int(port_text) if port_text else 5672,
                          unquote(user) or None, unquote(password) or None, vhost))
    return out


def login(broker: Broker, timeout: float = TIMEOUT) -> None:
    """Open an AMQP connection (the login included) and close it; raises on failure."""
    import kombu  # oslo.messaging's own AMQP library

    conn = kombu.Connection(hostname=broker.host, port=broker.port, userid=broker.username,
                            password=broker.password, virtual_host=broker.virtual_host,
                            transport="pyamqp", connect_timeout=timeout)
    try:  # no pause between kombu's attempts (its default waits two seconds)
        conn.ensure_connection(max_retries=1, interval_start=0, interval_step=0,
                               timeout=timeout)
    finally:
        conn.release()


def check_messaging(transport_url: str | None, timeout: float = TIMEOUT) -> Result:
    if not transport_url:
        return Result(Code.SUCCESS, "No [DEFAULT]transport_url: RPC stays in the process "
                                    "(berth serve). berth-api and berth-compute need one.")
    try:
        hosts = brokers(transport_url)
    except ValueError as err:
        return Result(Code.FAILURE, f"[DEFAULT]transport_url: {err}")
    if not transport_url.startswith("rabbit://"):
        return Result(Code.SUCCESS, "Not checked: only rabbit:// transport URLs are.")
    failed = []
    for broker in hosts:
        try:
            login(broker, timeout)
        except Exception as err:  # noqa: BLE001 - socket, AMQP or login error: reported
            failed.append(f"{broker}: {str(err).rstrip('.') or type(err).__name__}")
            continue
        note = f" ({len(failed)} other(s) failed: {'; '.join(failed)})" if failed else ""
        return Result(Code.SUCCESS, f"RabbitMQ at {broker} accepts berth's login{note}.")
    return Result(Code.FAILURE, f"No RabbitMQ host of [DEFAULT]transport_url accepts a "
                                f"login: {'; '.join(failed)}. berth-api and berth-compute "
                                f"cannot talk until one does.")
