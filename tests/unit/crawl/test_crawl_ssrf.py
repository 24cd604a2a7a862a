"""The URL safety guard (reliability row 14), with a fake resolver: no DNS, no network."""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from memlane.crawl.errors import FetchError, UnsafeURLError
from memlane.crawl.ssrf import (
    AddressCategory,
    NetworkPolicy,
    check_host,
    check_peer_address,
    check_url,
    classify_address,
    parse_ip_literal,
)
from memlane.domain.errors import InvalidInputError

PUBLIC_V4 = "93.184.216.34"
PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946"


def fake_resolver(table: dict[str, Sequence[str]]) -> Callable[..., list[tuple[Any, ...]]]:
    """getaddrinfo look-alike answering from `table`; unknown names fail like NXDOMAIN."""
    calls: list[str] = []

    def resolve(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        calls.append(host)
        if host not in table:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        out = []
        for ip in table[host]:
            family = socket.AF_INET6 if ":" in ip else socket.AF_INET
            sockaddr = (ip, port, 0, 0) if family == socket.AF_INET6 else (ip, port)
            out.append((family, socket.SOCK_STREAM, 6, "", sockaddr))
        return out

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


RESOLVER = fake_resolver(
    {
        "docs.example.com": [PUBLIC_V4, PUBLIC_V6],
        "internal.corp.test": ["10.0.0.5"],
        "mixed.test": [PUBLIC_V4, "10.0.0.5"],
        "mixed-v6.test": [PUBLIC_V4, "fd12:3456::1"],
        "loopback-v6.test": ["::1"],
        "metadata.test": ["169.254.169.254"],
        "mapped.test": ["::ffff:127.0.0.1"],
        "localhost": ["127.0.0.1"],
        "docs.localhost": ["127.0.0.1"],
        "nas.lan": ["192.168.1.20"],
    }
)


def refusal(url: str, **kwargs: Any) -> UnsafeURLError:
    with pytest.raises(UnsafeURLError) as info:
        check_url(url, resolver=RESOLVER, **kwargs)
    return info.value


# --------------------------------------------------------------------------- row 14, one by one


@pytest.mark.parametrize(
    ("url", "reason_part"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a cloud metadata address"),
        ("http://127.0.0.1/", "127.0.0.1 is a loopback address"),
        ("http://127.0.0.1:7432/index", "127.0.0.1 is a loopback address"),
        ("http://[::1]/", "::1 is a loopback address"),
        ("http://10.0.0.1/", "10.0.0.1 is a private address"),
        ("http://10.255.1.2:8080/x", "10.255.1.2 is a private address"),
        ("http://172.16.0.1/", "172.16.0.1 is a private address"),
        ("http://172.31.255.254/", "172.31.255.254 is a private address"),
        ("http://192.168.1.1/", "192.168.1.1 is a private address"),
        ("http://2130706433/", "host '2130706433' is the IP address 127.0.0.1, a loopback address"),
        ("http://0x7f000001/", "host '0x7f000001' is the IP address 127.0.0.1, a loopback address"),
        ("http://0177.0.0.1/", "host '0177.0.0.1' is the IP address 127.0.0.1, a loopback address"),
        ("http://127.1/", "host '127.1' is the IP address 127.0.0.1, a loopback address"),
        ("http://0xA9FEA9FE/", "is the IP address 169.254.169.254, a cloud metadata address"),
        ("http://[::ffff:127.0.0.1]/", "an IPv4-mapped IPv6 address of 127.0.0.1, a loopback address"),
        ("http://[::ffff:169.254.169.254]/", "an IPv4-mapped IPv6 address of 169.254.169.254"),
        ("http://100.64.0.1/", "100.64.0.1 is a carrier-grade NAT (shared) address"),
        ("http://0.0.0.0/", "0.0.0.0 is an unspecified"),
        ("http://[::]/", ":: is the unspecified address"),
        ("http://169.254.10.10/", "169.254.10.10 is a link-local address"),
        ("http://[fe80::1]/", "fe80::1 is a link-local address"),
        ("http://[fc00::1]/", "fc00::1 is a unique-local (private) address"),
        ("http://224.0.0.251/", "224.0.0.251 is a multicast address"),
        ("http://[ff02::1]/", "ff02::1 is a multicast address"),
        ("http://240.0.0.1/", "240.0.0.1 is a reserved"),
        ("http://255.255.255.255/", "255.255.255.255 is a reserved (or broadcast) address"),
        ("http://198.18.0.1/", "198.18.0.1 is a benchmarking address"),
        ("http://[2002:7f00:1::]/", "a 6to4 address embedding 127.0.0.1, a loopback address"),
        ("http://[2002:a00:5::]/", "a 6to4 address embedding 10.0.0.5, a private address"),
        ("http://[64:ff9b::a9fe:a9fe]/", "a NAT64 address embedding 169.254.169.254"),
        ("http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/", "a Teredo tunnelling address"),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254 is a cloud metadata address"),
        ("http://localhost/", "host 'localhost' is a loopback name"),
        ("http://LOCALHOST./", "host 'localhost.' is a loopback name"),
        ("http://docs.localhost:3000/", "host 'docs.localhost' is a loopback name"),
        ("http://internal.corp.test/", "host 'internal.corp.test' resolves to 10.0.0.5"),
        ("http://metadata.test/", "169.254.169.254 is a cloud metadata address"),
        ("http://loopback-v6.test/", "::1 is a loopback address"),
        ("http://mapped.test/", "IPv4-mapped IPv6 address of 127.0.0.1"),
    ],
)
def test_internal_addresses_are_refused_with_the_reason(url: str, reason_part: str) -> None:
    # Given a URL whose host is, or resolves to, an internal address
    # When it is checked under the default (public only) policy
    error = refusal(url)
    # Then it is refused, the message naming the URL and the reason
    assert reason_part in error.reason
    assert url in error.message
    assert error.field == "url"
    assert isinstance(error, InvalidInputError)


@pytest.mark.parametrize(
    "url",
    ["file:///etc/passwd", "ftp://example.com/x", "gopher://example.com:70/_x", "data:text/html,<b>x</b>"]
    + ["javascript:alert(1)", "ldap://example.com/", "dict://example.com:11211/"],
)
def test_non_http_schemes_are_refused_under_every_policy(url: str) -> None:
    for kwargs in ({}, {"allow_private": True}, {"policy": NetworkPolicy(True, True, True)}):
        error = refusal(url, **kwargs)
        assert "is not allowed (only http and https)" in error.reason


def test_a_host_with_one_public_and_one_private_address_is_refused() -> None:
    # Given a host that resolves to a public and a private address (IPv4 and IPv6 variants)
    for host, private in (("mixed.test", "10.0.0.5"), ("mixed-v6.test", "fd12:3456::1")):
        # When it is checked
        error = refusal(f"https://{host}/docs")
        # Then every address was considered and the private one named
        assert error.reason.startswith(f"host '{host}' resolves to {PUBLIC_V4}, {private}; {private} is")


def test_credentials_are_refused_and_never_echoed() -> None:
    error = refusal("https://admin:s3cret@docs.example.com/")
    assert "credentials" in error.reason
    assert "s3cret" not in error.message
    assert error.url == "https://***@docs.example.com/"


def test_parser_confusion_is_refused() -> None:
    # "a\\@b" is read as userinfo by one parser and as a path by another: refused as credentials.
    assert "credentials" in refusal("http://docs.example.com\\@127.0.0.1/").reason
    assert "not an absolute" in refusal("//docs.example.com/x").reason
    assert "no host" in refusal("http:///etc/passwd").reason
    assert "not a valid IP address" in refusal("http://999.1.1.1/").reason
    assert "not a valid URL" in refusal("http://docs.example.com:99999/").reason


def test_a_public_host_is_returned_with_all_its_addresses() -> None:
    target = check_url("HTTPS://Docs.Example.com/guide?x=1", resolver=RESOLVER)
    assert target.scheme == "https"
    assert target.host == "docs.example.com"
    assert target.port == 443
    assert target.addresses == (ipaddress.ip_address(PUBLIC_V4), ipaddress.ip_address(PUBLIC_V6))
    assert check_url(f"http://{PUBLIC_V4}:8080/", resolver=RESOLVER).addresses == (
        ipaddress.ip_address(PUBLIC_V4),
    )


def test_a_name_that_does_not_resolve_is_a_fetch_error() -> None:
    with pytest.raises(FetchError) as info:
        check_url("https://nowhere.test/", resolver=RESOLVER)
    assert info.value.transient is False
    assert "cannot resolve host 'nowhere.test'" in info.value.message


def test_a_temporary_resolver_failure_is_transient() -> None:
    def flaky(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    with pytest.raises(FetchError) as info:
        check_url("https://docs.example.com/", resolver=flaky)
    assert info.value.transient is True


# --------------------------------------------------------------------------- policies


def test_loopback_only_policy_reaches_loopback_but_nothing_else_internal() -> None:
    policy = NetworkPolicy.loopback_only()
    assert check_url("http://127.0.0.1:8000/", policy=policy).port == 8000
    assert check_url("http://[::1]:8000/", policy=policy).addresses == (ipaddress.ip_address("::1"),)
    assert check_url("http://localhost/", policy=policy, resolver=RESOLVER).host == "localhost"
    assert "private" in refusal("http://10.0.0.5/", policy=policy).reason
    assert "cloud metadata" in refusal("http://169.254.169.254/", policy=policy).reason
    assert "link-local" in refusal("http://[fe80::1]/", policy=policy).reason


def test_allow_private_network_keeps_link_local_and_metadata_refused() -> None:
    # Given the local server's --allow-private-network policy
    assert check_url("http://192.168.1.20/", allow_private=True).host == "192.168.1.20"
    assert check_url("http://nas.lan/", allow_private=True, resolver=RESOLVER).addresses == (
        ipaddress.ip_address("192.168.1.20"),
    )
    assert check_url("http://127.0.0.1/", allow_private=True).host == "127.0.0.1"
    assert check_url("http://[fd12::1]/", allow_private=True).host == "fd12::1"
    # Then link-local and the metadata endpoint stay refused
    assert "link-local" in refusal("http://169.254.10.10/", allow_private=True).reason
    assert "cloud metadata" in refusal("http://169.254.169.254/", allow_private=True).reason
    assert "cloud metadata" in refusal("http://metadata.test/", allow_private=True).reason
    # And so do unspecified and multicast addresses
    assert "unspecified" in refusal("http://0.0.0.0/", allow_private=True).reason
    assert "multicast" in refusal("http://224.0.0.1/", allow_private=True).reason


def test_metadata_endpoints_are_refused_even_when_link_local_is_allowed() -> None:
    policy = NetworkPolicy(allow_loopback=True, allow_private=True, allow_link_local=True)
    assert check_url("http://169.254.10.10/", policy=policy).host == "169.254.10.10"
    for address in ("169.254.169.254", "169.254.170.2", "[fd00:ec2::254]", "100.100.100.200"):
        assert "cloud metadata" in refusal(f"http://{address}/", policy=policy).reason


def test_policy_and_allow_private_are_exclusive() -> None:
    with pytest.raises(ValueError):
        check_url("http://127.0.0.1/", allow_private=True, policy=NetworkPolicy.loopback_only())


# --------------------------------------------------------------------------- building blocks


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0X7F.1", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("10.1", "10.0.0.1"),
        ("127.0.0.1.", "127.0.0.1"),
        ("[::1]", "::1"),
        ("::ffff:10.0.0.1", "::ffff:a00:1"),
    ],
)
def test_ip_literals_follow_inet_aton(host: str, expected: str) -> None:
    assert parse_ip_literal(host) == ipaddress.ip_address(expected)


@pytest.mark.parametrize("host", ["docs.example.com", "1e100.net", "0xdeadbeef.com", "123.example"])
def test_names_are_not_ip_literals(host: str) -> None:
    assert parse_ip_literal(host) is None


@pytest.mark.parametrize(
    ("address", "category"),
    [
        ("8.8.8.8", AddressCategory.PUBLIC),
        (PUBLIC_V6, AddressCategory.PUBLIC),
        ("::ffff:8.8.8.8", AddressCategory.PUBLIC),
        ("64:ff9b::808:808", AddressCategory.PUBLIC),
        ("2002:808:808::1", AddressCategory.PUBLIC),
        ("127.255.255.254", AddressCategory.LOOPBACK),
        ("172.15.255.255", AddressCategory.PUBLIC),
        ("172.32.0.0", AddressCategory.PUBLIC),
        ("100.128.0.1", AddressCategory.PUBLIC),
        ("fec0::1", AddressCategory.PRIVATE),
        ("fe80::1%eth0", AddressCategory.LINK_LOCAL),
        ("2001:db8::1", AddressCategory.RESERVED),
        ("4000::1", AddressCategory.RESERVED),
        ("::127.0.0.1", AddressCategory.RESERVED),
    ],
)
def test_classify_address(address: str, category: AddressCategory) -> None:
    assert classify_address(ipaddress.ip_address(address)).category is category


def test_check_host_is_what_the_connection_layer_uses() -> None:
    # The pinned transport calls check_host with the host and port only.
    with pytest.raises(UnsafeURLError) as info:
        check_host("internal.corp.test", 443, policy=NetworkPolicy(), resolver=RESOLVER)
    assert info.value.url == "internal.corp.test:443"
    assert "10.0.0.5 is a private address" in info.value.reason
    addresses = check_host("docs.example.com", 443, policy=NetworkPolicy(), resolver=RESOLVER)
    assert [str(a) for a in addresses] == [PUBLIC_V4, PUBLIC_V6]


def test_peer_address_recheck() -> None:
    check_peer_address(PUBLIC_V4, policy=NetworkPolicy(), url="https://docs.example.com/")
    with pytest.raises(UnsafeURLError) as info:
        check_peer_address("127.0.0.1", policy=NetworkPolicy(), url="https://docs.example.com/")
    assert info.value.reason == "the connection reached 127.0.0.1, a loopback address"
