"""Outbound HTTP to addresses that users or operators give us (alert webhooks, Slack-style incoming webhooks,
the OpenID provider of single sign-on).

A user-supplied URL must not turn the control plane into a proxy into its own network (SSRF): loopback,
link-local (cloud metadata at 169.254.169.254), private, shared, reserved and multicast addresses are refused,
for IPv4, IPv6 and IPv4 addresses carried in IPv6 (mapped, 6to4, Teredo, NAT64), unless the operator allowlists
them with `OUTBOUND_ALLOWED_NETWORKS`.

The name is resolved when the request is sent, every resolved address is checked, and the connection goes to
the checked address itself (the Host header and TLS SNI/certificate check keep the name), so a DNS answer that
changes between the check and the connect (rebinding) cannot reach a refused address. Redirects are never
followed: a 3xx is the answer.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import ssl
from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from django.conf import settings

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# NAT64 (RFC 6052) carries an IPv4 address in its last 32 bits.
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


class RefusedDestination(ValueError):
    """The URL may not be contacted; the message says why in terms a user can act on."""


class UnresolvableHost(RefusedDestination):
    """The name does not resolve (now): nothing can be sent, but it may resolve later."""


@dataclass(frozen=True)
class Destination:
    """Where a request goes: the URL's parts and the one checked address the connection must use."""

    scheme: str
    host: str  # as written in the URL (for the Host header and TLS)
    port: int
    target: str  # path and query
    address: str  # the checked IP address to connect to


def allowed_networks() -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(entry, strict=False) for entry in settings.OUTBOUND_ALLOWED_NETWORKS)


def parse_networks(entries: Iterable[str]) -> list[str]:
    """Validates `OUTBOUND_ALLOWED_NETWORKS` entries (addresses or CIDR networks); raises ValueError."""
    networks = []
    for entry in entries:
        try:
            networks.append(str(ipaddress.ip_network(entry.strip(), strict=False)))
        except ValueError:
            raise ValueError(
                f"OUTBOUND_ALLOWED_NETWORKS: {entry!r} is not an IP address or network"
            ) from None
    return networks


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64 or address in _NAT64_LOCAL:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def is_public(address: IPAddress) -> bool:
    """True for a globally routable unicast address (and, for IPv6, any IPv4 address it carries)."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(address)
        if embedded is not None and not is_public(embedded):
            return False
        if address.scope_id:
            return False
    return address.is_global and not address.is_multicast


def check_address(address: IPAddress) -> None:
    networks = allowed_networks()
    mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
    if any(address in network or (mapped is not None and mapped in network) for network in networks):
        return
    if not is_public(address):
        raise RefusedDestination(
            f"{address} is a loopback, link-local, private, reserved or multicast address; StreamHub does not "
            "send to those unless the operator allows them (OUTBOUND_ALLOWED_NETWORKS)."
        )


def _split(url: str) -> tuple[str, str, int, str]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise RefusedDestination("Only http and https URLs can be posted to.")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        raise RefusedDestination("The URL's port is not a number between 0 and 65535.") from None
    if not host:
        raise RefusedDestination("The URL has no host.")
    if parts.username or parts.password:
        raise RefusedDestination("Put credentials in a header or the path, not in the URL's user part.")
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    return scheme, host, port or (443 if scheme == "https" else 80), target


def resolve(url: str) -> Destination:
    """Resolves the URL's host now and checks every address it resolves to; the first is the one to use.
    Raises RefusedDestination for a refused scheme, host or address, and for a name that does not resolve."""
    scheme, host, port, target = _split(url)
    try:
        literal: IPAddress | None = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        addresses = [literal]
    else:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (socket.gaierror, UnicodeError) as error:
            raise UnresolvableHost(f"The host {host!r} could not be resolved ({error}).") from None
        # Scope ids (fe80::1%eth0) are dropped by ip_address; link-local is refused anyway.
        addresses = [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in infos]
        if not addresses:
            raise UnresolvableHost(f"The host {host!r} has no address.")
    for address in addresses:
        check_address(address)  # every answer: a name with one internal address is refused as a whole
    return Destination(scheme=scheme, host=host, port=port, target=target, address=str(addresses[0]))


class _PinnedHTTPConnection(http.client.HTTPConnection):
    def __init__(self, destination: Destination, timeout: float) -> None:
        super().__init__(destination.host, destination.port, timeout=timeout)
        self._address = destination.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    def __init__(self, destination: Destination, timeout: float) -> None:
        super().__init__(
            destination.host, destination.port, timeout=timeout, context=ssl.create_default_context()
        )
        self._address = destination.address

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), self.timeout)
        # The certificate is checked against the name in the URL, not the address connected to.
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes  # at most `max_body` bytes of it


def request(
    method: str,
    url: str,
    *,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    timeout: float,
    max_body: int = 65536,
) -> Response:
    """Sends one request to the URL's checked address. Raises RefusedDestination before any connection is
    made to a refused address, OSError (and http.client.HTTPException) on network and protocol failures."""
    destination = resolve(url)
    connection_class = _PinnedHTTPSConnection if destination.scheme == "https" else _PinnedHTTPConnection
    connection = connection_class(destination, timeout)
    try:
        connection.request(method, destination.target, body=body, headers=headers or {})
        response = connection.getresponse()
        return Response(status=response.status, body=response.read(max_body))
    finally:
        connection.close()


def post(
    url: str, body: bytes, headers: dict[str, str], *, timeout: float, max_body: int = 65536
) -> Response:
    return request("POST", url, body=body, headers=headers, timeout=timeout, max_body=max_body)
