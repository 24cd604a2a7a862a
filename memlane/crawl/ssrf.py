"""The crawler's URL safety guard (architecture "Consistency and safety" rule 4, reliability row 14).

Every URL the crawler is about to fetch - the docset's base URL, a link found in a page, each
redirect hop - goes through `check_url`. It refuses:

- schemes other than http and https (file:, ftp:, gopher:, data:, javascript:, ...);
- URLs carrying credentials (``user:pass@host``);
- `localhost` and ``*.localhost``;
- hosts that are, or resolve to, an address outside the public internet. *Every* resolved address
  is checked (IPv4 and IPv6): one private address among public ones refuses the URL. The
  categories are listed in `classify_address`; alternate IPv4 spellings (``2130706433``,
  ``0x7f000001``, ``0177.0.0.1``, ``127.1``) are decoded with `socket.inet_aton` semantics - the
  same rules the C resolver applies - and IPv6 addresses embedding an IPv4 address
  (IPv4-mapped, NAT64, 6to4) are judged by the embedded address. Teredo is refused outright.

What may be reached is a `NetworkPolicy`:

=====================================  ========  ===========  ==========  ==============
policy                                 loopback  private+CGN  link-local  cloud metadata
=====================================  ========  ===========  ==========  ==============
``NetworkPolicy()`` (the default)      no        no           no          no
``NetworkPolicy.loopback_only()``      yes       no           no          no
``NetworkPolicy.private_network()``    yes       yes          no          no
``NetworkPolicy(allow_link_local=..)`` -         -            yes         no
=====================================  ========  ===========  ==========  ==============

`private_network()` is what the local server's ``--allow-private-network`` flag maps to (and what
``check_url(..., allow_private=True)`` means): a laptop user may index docs served on their own
machine or LAN. Link-local stays refused even then: nothing legitimate serves documentation on
169.254/16 or fe80::/10, while that is exactly where cloud and container credential endpoints live.
It can be opened explicitly with ``allow_link_local=True``. The well-known cloud metadata endpoints
(169.254.169.254, 169.254.170.2, fd00:ec2::254, 100.100.100.200, 192.0.0.192, 168.63.129.16) are
never reachable under any policy. Unspecified, multicast, reserved, documentation and
benchmarking ranges are never reachable either.

Checking a URL is not enough on its own: a hostile DNS server can answer the check with a public
address and the connection a moment later with 127.0.0.1 (DNS rebinding). `check_host` is
therefore also called by `memlane.crawl.transport.PinnedNetworkBackend` at the moment each TCP
connection is opened, and the socket is connected to the address that was just checked - see
that module for how the pinning works.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

import httpx

from memlane.crawl.errors import FetchError, UnsafeURLError

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

#: A `socket.getaddrinfo`-compatible callable: ``resolver(host, port, type=socket.SOCK_STREAM)``
#: returning ``(family, type, proto, canonname, sockaddr)`` tuples. Tests hand in a fake.
Resolver = Callable[..., Sequence[tuple[Any, ...]]]

ALLOWED_SCHEMES = frozenset({"http", "https"})
DEFAULT_PORTS = {"http": 80, "https": 443}


class AddressCategory(StrEnum):
    PUBLIC = "public"
    LOOPBACK = "loopback"
    PRIVATE = "private"  # RFC 1918, carrier-grade NAT, IPv6 unique-local and site-local
    LINK_LOCAL = "link-local"
    CLOUD_METADATA = "cloud metadata"
    UNSPECIFIED = "unspecified"
    MULTICAST = "multicast"
    RESERVED = "reserved"  # reserved, special-purpose, documentation, benchmarking, Teredo, ...


@dataclass(frozen=True)
class NetworkPolicy:
    """Which non-public address categories the crawler may connect to. See the module docstring."""

    allow_loopback: bool = False
    allow_private: bool = False
    allow_link_local: bool = False

    @classmethod
    def public_only(cls) -> NetworkPolicy:
        return cls()

    @classmethod
    def loopback_only(cls) -> NetworkPolicy:
        """Tests: reach a server on 127.0.0.1 while everything else internal stays refused."""
        return cls(allow_loopback=True)

    @classmethod
    def private_network(cls) -> NetworkPolicy:
        """The local server's --allow-private-network: loopback and private ranges, no link-local."""
        return cls(allow_loopback=True, allow_private=True)

    def permits(self, category: AddressCategory) -> bool:
        if category is AddressCategory.PUBLIC:
            return True
        if category is AddressCategory.LOOPBACK:
            return self.allow_loopback
        if category is AddressCategory.PRIVATE:
            return self.allow_private
        if category is AddressCategory.LINK_LOCAL:
            return self.allow_link_local
        return False


@dataclass(frozen=True)
class AddressClass:
    category: AddressCategory
    description: str  # reads after "X is ...", e.g. "a loopback address"


@dataclass(frozen=True)
class ResolvedTarget:
    """A URL that passed the guard, with every address its host resolved to (all permitted)."""

    url: str
    scheme: str
    host: str  # ASCII (IDNA) form, no brackets, as the HTTP client will connect to it
    port: int
    addresses: tuple[IPAddress, ...]


# --------------------------------------------------------------------------- classification

_CLOUD_METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, ... instance metadata
        "169.254.170.2",  # AWS ECS task metadata and credentials
        "fd00:ec2::254",  # AWS instance metadata over IPv6
        "100.100.100.200",  # Alibaba Cloud metadata
        "192.0.0.192",  # Oracle Cloud metadata
        "168.63.129.16",  # Azure WireServer
    )
)

_V4_TABLE: tuple[tuple[ipaddress.IPv4Network, AddressCategory, str], ...] = tuple(
    (ipaddress.IPv4Network(net), category, description)
    for net, category, description in (
        ("0.0.0.0/8", AddressCategory.UNSPECIFIED, "an unspecified ('this network') address"),
        ("10.0.0.0/8", AddressCategory.PRIVATE, "a private address"),
        ("100.64.0.0/10", AddressCategory.PRIVATE, "a carrier-grade NAT (shared) address"),
        ("127.0.0.0/8", AddressCategory.LOOPBACK, "a loopback address"),
        ("169.254.0.0/16", AddressCategory.LINK_LOCAL, "a link-local address"),
        ("172.16.0.0/12", AddressCategory.PRIVATE, "a private address"),
        ("192.0.0.0/24", AddressCategory.RESERVED, "an IETF special-purpose address"),
        ("192.0.2.0/24", AddressCategory.RESERVED, "a documentation address"),
        ("192.88.99.0/24", AddressCategory.RESERVED, "a 6to4 relay anycast address"),
        ("192.168.0.0/16", AddressCategory.PRIVATE, "a private address"),
        ("198.18.0.0/15", AddressCategory.RESERVED, "a benchmarking address"),
        ("198.51.100.0/24", AddressCategory.RESERVED, "a documentation address"),
        ("203.0.113.0/24", AddressCategory.RESERVED, "a documentation address"),
        ("224.0.0.0/4", AddressCategory.MULTICAST, "a multicast address"),
        ("240.0.0.0/4", AddressCategory.RESERVED, "a reserved (or broadcast) address"),
    )
)

_V6_TABLE: tuple[tuple[ipaddress.IPv6Network, AddressCategory, str], ...] = tuple(
    (ipaddress.IPv6Network(net), category, description)
    for net, category, description in (
        ("::/128", AddressCategory.UNSPECIFIED, "the unspecified address"),
        ("::1/128", AddressCategory.LOOPBACK, "a loopback address"),
        ("64:ff9b:1::/48", AddressCategory.PRIVATE, "a local-use NAT64 address"),
        ("100::/64", AddressCategory.RESERVED, "a discard-only address"),
        ("2001:db8::/32", AddressCategory.RESERVED, "a documentation address"),
        ("2001::/23", AddressCategory.RESERVED, "an IETF special-purpose address"),
        ("fc00::/7", AddressCategory.PRIVATE, "a unique-local (private) address"),
        ("fe80::/10", AddressCategory.LINK_LOCAL, "a link-local address"),
        ("fec0::/10", AddressCategory.PRIVATE, "a site-local (private) address"),
        ("ff00::/8", AddressCategory.MULTICAST, "a multicast address"),
    )
)
_V6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")
_NAT64_WELL_KNOWN = ipaddress.IPv6Network("64:ff9b::/96")
_TEREDO = ipaddress.IPv6Network("2001::/32")


def classify_address(address: IPAddress) -> AddressClass:
    """The category of one IP address, with a phrase that explains it in an error message."""
    if address.version == 6:
        address = ipaddress.IPv6Address(str(address).split("%", 1)[0])  # drop any zone id
    if address in _CLOUD_METADATA:
        return AddressClass(AddressCategory.CLOUD_METADATA, "a cloud metadata address")
    if isinstance(address, ipaddress.IPv4Address):
        for network, category, description in _V4_TABLE:
            if address in network:
                return AddressClass(category, description)
        return AddressClass(AddressCategory.PUBLIC, "a public address")
    return _classify_v6(address)


def _classify_v6(address: ipaddress.IPv6Address) -> AddressClass:
    embedded: tuple[str, ipaddress.IPv4Address] | None = None
    if address.ipv4_mapped is not None:
        embedded = ("an IPv4-mapped IPv6 address of", address.ipv4_mapped)
    elif address in _NAT64_WELL_KNOWN:
        embedded = ("a NAT64 address embedding", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF))
    elif address.sixtofour is not None:
        embedded = ("a 6to4 address embedding", address.sixtofour)
    if embedded is not None:
        phrase, v4 = embedded
        inner = classify_address(v4)
        return AddressClass(inner.category, f"{phrase} {v4}, {inner.description}")
    if address in _TEREDO and address.teredo is not None:
        server, client = address.teredo
        return AddressClass(
            AddressCategory.RESERVED, f"a Teredo tunnelling address (server {server}, client {client})"
        )
    for network, category, description in _V6_TABLE:
        if address in network:
            return AddressClass(category, description)
    if address in _V6_GLOBAL_UNICAST:
        return AddressClass(AddressCategory.PUBLIC, "a public address")
    return AddressClass(AddressCategory.RESERVED, "an unallocated or reserved address")


# --------------------------------------------------------------------------- hosts

# Every spelling `inet_aton` accepts: one to four parts, each decimal, octal (leading 0) or hex (0x).
_NUMERIC_HOST = re.compile(r"(?:0x[0-9a-f]*|[0-9]+)(?:\.(?:0x[0-9a-f]*|[0-9]+)){0,3}", re.IGNORECASE)


def parse_ip_literal(host: str) -> IPAddress | None:
    """The address a host names literally, or None for a DNS name.

    IPv4 follows `socket.inet_aton`, like the system resolver: ``2130706433``, ``0x7f000001``,
    ``0177.0.0.1`` and ``127.1`` are all 127.0.0.1. Raises ValueError for a host that is numeric
    but not a valid address (e.g. ``999.1.1.1``, ``08.0.0.1``): no DNS name is all-numeric.
    """
    candidate = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if ":" in candidate:
        return ipaddress.IPv6Address(candidate)
    candidate = candidate.rstrip(".")  # "127.0.0.1." is 127.0.0.1 to the resolver
    if _NUMERIC_HOST.fullmatch(candidate):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(candidate))
        except OSError as exc:
            raise ValueError(f"{host!r} is not a valid IPv4 address") from exc
    return None


def _is_localhost_name(name: str) -> bool:
    return name == "localhost" or name.endswith(".localhost")


def _describe(host: str, address: IPAddress, verdict: AddressClass) -> str:
    literal = host.strip("[]").lower()
    if literal == str(address) or ":" in literal:
        return f"{literal} is {verdict.description}"
    # An alternate IPv4 spelling: say which address it really is.
    return f"host {host!r} is the IP address {address}, {verdict.description}"


def check_host(
    host: str,
    port: int,
    *,
    policy: NetworkPolicy,
    resolver: Resolver = socket.getaddrinfo,
    url: str | None = None,
) -> tuple[IPAddress, ...]:
    """Resolve `host` and return its addresses if the policy permits *every* one of them.

    Raises UnsafeURLError naming `url` (or ``host:port``) and the reason; FetchError (transient
    when the resolver says "try again") when the host does not resolve.
    """
    subject = url if url is not None else f"{host}:{port}"
    name = host.strip().lower()
    if not name.strip("[]."):
        raise UnsafeURLError(subject, "the URL has no host")
    try:
        literal = parse_ip_literal(name)
    except ValueError as exc:
        raise UnsafeURLError(subject, f"host {host!r} is not a valid IP address") from exc
    if literal is not None:
        verdict = classify_address(literal)
        if not policy.permits(verdict.category):
            raise UnsafeURLError(subject, _describe(host, literal, verdict), category=verdict.category)
        return (literal,)

    name = name.rstrip(".")
    if _is_localhost_name(name) and not policy.allow_loopback:
        raise UnsafeURLError(subject, f"host {host!r} is a loopback name", category=AddressCategory.LOOPBACK)
    addresses = _resolve(name, port, resolver, subject)
    for address in addresses:
        verdict = classify_address(address)
        if not policy.permits(verdict.category):
            listed = ", ".join(str(a) for a in addresses)
            raise UnsafeURLError(
                subject, f"host {host!r} resolves to {listed}; {address} is {verdict.description}",
                category=verdict.category,
            )
    return addresses


def _resolve(name: str, port: int, resolver: Resolver, subject: str) -> tuple[IPAddress, ...]:
    try:
        infos = resolver(name, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        transient = exc.errno == socket.EAI_AGAIN
        raise FetchError(
            f"cannot resolve host {name!r}: {exc.strerror or exc}", transient=transient, url=subject
        ) from exc
    except (UnicodeError, OSError) as exc:
        raise FetchError(f"cannot resolve host {name!r}: {exc}", transient=False, url=subject) from exc
    addresses: list[IPAddress] = []
    for info in infos:
        try:
            address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        except (ValueError, IndexError, TypeError) as exc:
            raise UnsafeURLError(subject, f"host {name!r} resolved to a non-IP address {info!r}") from exc
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise FetchError(f"host {name!r} resolves to no address", transient=False, url=subject)
    return tuple(addresses)


# --------------------------------------------------------------------------- URLs


def check_url(
    url: str,
    *,
    allow_private: bool = False,
    policy: NetworkPolicy | None = None,
    resolver: Resolver = socket.getaddrinfo,
) -> ResolvedTarget:
    """Check that `url` is safe to fetch and return where it leads.

    `allow_private=True` is shorthand for ``policy=NetworkPolicy.private_network()``; pass either,
    not both. Raises UnsafeURLError (an InvalidInputError) naming the URL and the reason, or
    FetchError when the host does not resolve.
    """
    if policy is None:
        policy = NetworkPolicy.private_network() if allow_private else NetworkPolicy.public_only()
    elif allow_private:
        raise ValueError("pass either allow_private or policy, not both")
    raw = url.strip()
    scheme, host, port = _scheme_host_port(raw)
    _check_ip_literal(raw, host, policy)
    client_host = _host_the_client_reaches(raw, scheme, host, port)
    addresses = check_host(client_host, port, policy=policy, resolver=resolver, url=raw)
    return ResolvedTarget(url=raw, scheme=scheme, host=client_host, port=port, addresses=addresses)


def _scheme_host_port(raw: str) -> tuple[str, str, int]:
    """An absolute http(s) URL's scheme, host and port (the scheme's default when none is given),
    with no credentials in it."""
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise UnsafeURLError(raw, f"not a valid URL ({exc})") from exc
    scheme = parts.scheme.lower()
    if not scheme:
        raise UnsafeURLError(raw, "not an absolute http(s) URL")
    if scheme not in ALLOWED_SCHEMES:
        raise UnsafeURLError(raw, f"scheme {scheme!r} is not allowed (only http and https)")
    if "@" in parts.netloc:
        raise UnsafeURLError(raw, "credentials (user:password@) are not allowed in URLs")
    host = parts.hostname or ""
    if not host:
        raise UnsafeURLError(raw, "the URL has no host")
    if port == 0:
        raise UnsafeURLError(raw, "port 0 is not a valid port")
    return scheme, host, port or DEFAULT_PORTS[scheme]


def _check_ip_literal(raw: str, host: str, policy: NetworkPolicy) -> None:
    """Judge IP literals before the HTTP client parses the URL: httpx rejects some alternate
    spellings (octal) with a generic error, and the precise reason is the useful one."""
    try:
        literal = parse_ip_literal(host)
    except ValueError as exc:
        raise UnsafeURLError(raw, f"host {host!r} is not a valid IP address") from exc
    if literal is not None:
        verdict = classify_address(literal)
        if not policy.permits(verdict.category):
            raise UnsafeURLError(raw, _describe(host, literal, verdict), category=verdict.category)


def _host_the_client_reaches(raw: str, scheme: str, host: str, port: int) -> str:
    """The host checked must be the host the HTTP client connects to: refuse any URL the two
    parsers read differently (the classic "http://a\\@b/" style of SSRF bypass)."""
    try:
        client_url = httpx.URL(raw)
    except httpx.InvalidURL as exc:
        raise UnsafeURLError(raw, f"not a valid URL ({exc})") from exc
    client_host = client_url.raw_host.decode("ascii")
    client_port = client_url.port or DEFAULT_PORTS[scheme]
    if (host.isascii() and client_host.lower().rstrip(".") != host.rstrip(".")) or client_port != port:
        raise UnsafeURLError(raw, "the URL's host or port is ambiguous")
    return client_host


def check_peer_address(address: str, *, policy: NetworkPolicy, url: str) -> None:
    """Re-check the address a connection actually reached (defence in depth after connect)."""
    try:
        peer = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError as exc:
        raise UnsafeURLError(url, f"connected to a non-IP peer {address!r}") from exc
    verdict = classify_address(peer)
    if not policy.permits(verdict.category):
        raise UnsafeURLError(url, f"the connection reached {peer}, {verdict.description}", category=verdict.category)
