"""SafeFetcher end to end over real sockets, against http.server instances on 127.0.0.1 started here.

Traffic goes only to those servers: host names are answered by a fake resolver (unknown names
fail without a DNS query), and the internal addresses redirects point at are refused before any
connection is attempted - which is what these tests check.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import socket
import ssl
import sys
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

import pytest

from memlane.crawl.errors import FetchError, PageTooLargeError, TooManyRedirectsError, UnsafeURLError
from memlane.crawl.fetcher import USER_AGENT, FetchLimits, SafeFetcher
from memlane.crawl.ssrf import NetworkPolicy
from memlane.crawl.transport import pinned_client

pytestmark = pytest.mark.integration

LAST_MODIFIED = "Wed, 01 May 2024 10:00:00 GMT"
MB = 1024 * 1024


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Site

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        return

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        parts = urlsplit(self.path)
        self.server.hits.append(parts.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        # The fetcher hangs up on purpose (size cap, timeout): not an error for the server.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self._route(parts.path, query)

    def _route(self, path: str, query: dict[str, str]) -> None:
        if path == "/page":
            if (
                self.headers.get("If-None-Match") == '"v1"'
                or self.headers.get("If-Modified-Since") == LAST_MODIFIED
            ):
                self._send(304, headers={"ETag": '"v1"'})
                return
            headers = {
                "Content-Type": "text/html; charset=utf-8",
                "ETag": '"v1"',
                "Last-Modified": LAST_MODIFIED,
            }
            self._send(200, b"<html><a href='/next'>next</a></html>", headers)
        elif path == "/echo":
            body = f"host={self.headers.get('Host')};ua={self.headers.get('User-Agent')}".encode()
            self._send(200, body, {"Content-Type": "text/plain"})
        elif path == "/redirect":
            self._send(302, headers={"Location": query["to"]})
        elif path == "/hops":
            left = int(query["left"])
            if left == 0:
                self._send(200, b"arrived")
            else:
                self._send(302, headers={"Location": f"/hops?left={left - 1}"})
        elif path in ("/loop-a", "/loop-b"):
            self._send(302, headers={"Location": "/loop-b" if path == "/loop-a" else "/loop-a"})
        elif path.startswith("/status/"):
            self._send(int(path.rsplit("/", 1)[1]), b"status page", {"Retry-After": "3"})
        elif path == "/big":
            self._send(200, b"x" * (6 * MB))
        elif path == "/big-chunked":
            self._chunked((b"x" * 65536 for _ in range(100)), delay=0)
        elif path == "/gzip-bomb":
            bomb = gzip.compress(b"\0" * (64 * MB))
            self._send(200, bomb, {"Content-Encoding": "gzip"})
        elif path == "/gzip":
            self._send(200, gzip.compress(b"<html>compressed</html>"), {"Content-Encoding": "gzip"})
        elif path == "/slow":
            time.sleep(1.5)
            self._send(200, b"late")
        elif path == "/drip":
            self._chunked((b"." for _ in range(40)), delay=0.1)
        else:
            self._send(404, b"not found")

    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if body and status != 304:
            self.wfile.write(body)

    def _chunked(self, chunks: Iterator[bytes], *, delay: float) -> None:
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for chunk in chunks:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()
            if delay:
                time.sleep(delay)
        self.wfile.write(b"0\r\n\r\n")


class _Site(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.hits: list[str] = []
        self.errors: list[BaseException] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        # Expected when the fetcher hangs up early or a TLS handshake is refused; kept, not printed.
        error = sys.exc_info()[1]
        if error is not None:
            self.errors.append(error)

    @property
    def port(self) -> int:
        return int(self.server_address[1])


def _serve(site: _Site) -> Iterator[_Site]:
    thread = threading.Thread(target=site.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield site
    finally:
        site.shutdown()
        site.server_close()
        thread.join(timeout=5)


@pytest.fixture
def site() -> Iterator[_Site]:
    yield from _serve(_Site())


Resolver = Callable[..., list[tuple[Any, ...]]]


def fake_resolver(table: dict[str, list[str]]) -> Resolver:
    calls: list[str] = []

    def resolve(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        calls.append(host)
        answers = table.get(host)
        if answers is None:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in answers]

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


RESOLVER = fake_resolver({"docs.test": ["127.0.0.1"], "internal.test": ["10.0.0.5"]})


@pytest.fixture
def fetcher() -> Iterator[SafeFetcher]:
    # Loopback is allowed so the test server is reachable; everything else internal is not.
    with SafeFetcher(policy=NetworkPolicy.loopback_only(), resolver=RESOLVER) as safe:
        yield safe


# --------------------------------------------------------------------------- pages and statuses


def test_a_named_host_is_connected_to_its_checked_address_with_host_header_kept(
    site: _Site, fetcher: SafeFetcher
) -> None:
    # Given "docs.test", which only the fake resolver knows (it maps to the loopback server)
    result = fetcher.fetch(f"http://docs.test:{site.port}/echo")
    # Then the connection went to the checked address while the request kept its host name
    assert result.status == 200
    assert result.content.decode() == f"host=docs.test:{site.port};ua={USER_AGENT}"
    assert result.url == f"http://docs.test:{site.port}/echo"


def test_conditional_fetch_and_304(site: _Site, fetcher: SafeFetcher) -> None:
    url = f"http://127.0.0.1:{site.port}/page"
    first = fetcher.fetch(url)
    assert (first.status, first.etag, first.last_modified) == (200, '"v1"', LAST_MODIFIED)
    assert first.content_type == "text/html; charset=utf-8"
    assert b"<a href='/next'>" in first.content
    by_etag = fetcher.fetch(url, etag=first.etag)
    assert (by_etag.status, by_etag.not_modified, by_etag.content) == (304, True, b"")
    by_date = fetcher.fetch(url, last_modified=first.last_modified)
    assert by_date.not_modified is True
    assert by_date.last_modified == LAST_MODIFIED


@pytest.mark.parametrize("status", [401, 403, 404, 410])
def test_gone_or_closed_pages_are_results(site: _Site, fetcher: SafeFetcher, status: int) -> None:
    result = fetcher.fetch(f"http://127.0.0.1:{site.port}/status/{status}")
    assert result.status == status
    assert result.skipped is True
    assert result.content == b""


@pytest.mark.parametrize("status", [500, 503])
def test_server_errors_raise_transient(site: _Site, fetcher: SafeFetcher, status: int) -> None:
    with pytest.raises(FetchError) as info:
        fetcher.fetch(f"http://127.0.0.1:{site.port}/status/{status}")
    assert info.value.transient is True
    assert info.value.status == status
    assert info.value.retry_after_s == 3.0


def test_gzip_body_is_decoded(site: _Site, fetcher: SafeFetcher) -> None:
    assert fetcher.fetch(f"http://127.0.0.1:{site.port}/gzip").content == b"<html>compressed</html>"


def test_connection_refused_is_transient(fetcher: SafeFetcher) -> None:
    with socket.socket() as probe:  # a port nobody listens on: bind, note it, close
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(FetchError) as info:
        fetcher.fetch(f"http://127.0.0.1:{port}/")
    assert info.value.transient is True
    assert "network error" in info.value.message


# --------------------------------------------------------------------------- redirects


def test_relative_redirect_is_followed(site: _Site, fetcher: SafeFetcher) -> None:
    start = f"http://127.0.0.1:{site.port}/redirect?to=/page"
    result = fetcher.fetch(start)
    assert result.url == f"http://127.0.0.1:{site.port}/page"
    assert result.redirected_from == start
    assert site.hits == ["/redirect", "/page"]


@pytest.mark.parametrize(
    ("target", "reason_part"),
    [
        ("http://169.254.169.254/latest/meta-data/iam/security-credentials/", "cloud metadata address"),
        ("http://[fd00:ec2::254]/latest/meta-data/", "cloud metadata address"),
        ("http://10.0.0.5/admin", "10.0.0.5 is a private address"),
        ("http://192.168.0.1/", "192.168.0.1 is a private address"),
        ("http://internal.test/wiki", "host 'internal.test' resolves to 10.0.0.5"),
        ("file:///etc/passwd", "scheme 'file' is not allowed"),
    ],
)
def test_a_redirect_to_an_internal_address_is_refused_at_the_hop(
    site: _Site, fetcher: SafeFetcher, target: str, reason_part: str
) -> None:
    # Given the (allowed) loopback server redirecting to an internal address
    start = f"http://127.0.0.1:{site.port}/redirect?to={quote(target, safe='')}"
    # When the page is fetched
    with pytest.raises(UnsafeURLError) as info:
        fetcher.fetch(start)
    # Then the hop is refused with a clear error naming the target and where it came from
    assert reason_part in info.value.reason
    assert info.value.url == target
    assert info.value.reason.endswith(f"(redirected from {start})")
    assert site.hits == ["/redirect"]


def test_five_redirects_are_followed_and_six_are_not(site: _Site, fetcher: SafeFetcher) -> None:
    assert fetcher.fetch(f"http://127.0.0.1:{site.port}/hops?left=5").content == b"arrived"
    site.hits.clear()
    with pytest.raises(TooManyRedirectsError, match="more than 5 redirects"):
        fetcher.fetch(f"http://127.0.0.1:{site.port}/hops?left=6")
    assert len(site.hits) == 6


def test_a_redirect_loop_is_stopped(site: _Site, fetcher: SafeFetcher) -> None:
    with pytest.raises(TooManyRedirectsError, match="redirect loop"):
        fetcher.fetch(f"http://127.0.0.1:{site.port}/loop-a")
    assert site.hits == ["/loop-a", "/loop-b"]


# --------------------------------------------------------------------------- caps and timeouts


@pytest.mark.parametrize("path", ["/big", "/big-chunked", "/gzip-bomb"])
def test_pages_over_5_mb_are_refused(site: _Site, fetcher: SafeFetcher, path: str) -> None:
    with pytest.raises(PageTooLargeError) as info:
        fetcher.fetch(f"http://127.0.0.1:{site.port}{path}")
    assert info.value.message == "page exceeds 5 MB"
    assert info.value.transient is False


def test_read_timeout(site: _Site) -> None:
    limits = FetchLimits(read_timeout_s=0.3)
    with SafeFetcher(policy=NetworkPolicy.loopback_only(), limits=limits) as fetcher:
        started = time.monotonic()
        with pytest.raises(FetchError, match="timed out") as info:
            fetcher.fetch(f"http://127.0.0.1:{site.port}/slow")
    assert info.value.transient is True
    assert time.monotonic() - started < 1.4


def test_total_time_limit(site: _Site) -> None:
    limits = FetchLimits(total_timeout_s=0.6)
    with (
        SafeFetcher(policy=NetworkPolicy.loopback_only(), limits=limits) as fetcher,
        pytest.raises(FetchError, match=r"took longer than 0\.6 s") as info,
    ):
        fetcher.fetch(f"http://127.0.0.1:{site.port}/drip")
    assert info.value.transient is True


# --------------------------------------------------------------------------- pinning


def test_public_only_policy_never_contacts_the_loopback_server(site: _Site) -> None:
    with SafeFetcher(resolver=RESOLVER) as fetcher:
        for url in (
            f"http://127.0.0.1:{site.port}/page",
            f"http://docs.test:{site.port}/page",
            f"http://2130706433:{site.port}/page",
            f"http://[::ffff:127.0.0.1]:{site.port}/page",
        ):
            with pytest.raises(UnsafeURLError, match="loopback"):
                fetcher.fetch(url)
    assert site.hits == []


def test_dns_rebinding_is_caught_at_connect_time(site: _Site) -> None:
    # Given a name whose first answer is public and every later answer is the loopback server
    answers = iter([["93.184.216.34"]])
    lookups: list[str] = []

    def rebinding(host: str, port: int, *args: Any, **kwargs: Any) -> list[tuple[Any, ...]]:
        lookups.append(host)
        ips = next(answers, ["127.0.0.1"])
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (ip, port)) for ip in ips]

    url = f"http://rebind.test:{site.port}/page"
    # When it is fetched under the public-only policy
    with SafeFetcher(resolver=rebinding) as fetcher, pytest.raises(UnsafeURLError) as info:
        fetcher.fetch(url)
    # Then the pre-request check passed, the connection layer resolved again, saw 127.0.0.1 and
    # refused to connect: the loopback server was never reached
    assert lookups == ["rebind.test", "rebind.test"]
    assert info.value.reason == "host 'rebind.test' resolves to 127.0.0.1; 127.0.0.1 is a loopback address"
    assert info.value.url == url
    assert site.hits == []


# --------------------------------------------------------------------------- TLS


def _make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for docs.test; returns (ca, cert, key) paths."""
    x509 = pytest.importorskip("cryptography.x509")
    hashes = pytest.importorskip("cryptography.hazmat.primitives.hashes")
    serialization = pytest.importorskip("cryptography.hazmat.primitives.serialization")
    ec = pytest.importorskip("cryptography.hazmat.primitives.asymmetric.ec")
    from cryptography.x509.oid import NameOID

    now = dt.datetime.now(dt.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "memlane test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "docs.test")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("docs.test")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_path, cert_path, key_path = directory / "ca.pem", directory / "cert.pem", directory / "key.pem"
    ca_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_path, cert_path, key_path


def test_https_keeps_sni_and_certificate_checks_on_the_real_name(tmp_path: Path) -> None:
    ca_path, cert_path, key_path = _make_certificates(tmp_path)
    server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_context.load_cert_chain(cert_path, key_path)
    server_names: list[str | None] = []
    server_context.sni_callback = lambda sock, name, ctx: server_names.append(name)  # type: ignore[assignment]

    tls_site = _Site()
    tls_site.socket = server_context.wrap_socket(tls_site.socket, server_side=True)
    resolver = fake_resolver({"docs.test": ["127.0.0.1"], "other.test": ["127.0.0.1"]})
    policy = NetworkPolicy.loopback_only()
    client = pinned_client(policy, resolver, ssl_context=ssl.create_default_context(cafile=str(ca_path)))
    served = _serve(tls_site)
    next(served)
    try:
        fetcher = SafeFetcher(client, policy=policy, resolver=resolver)
        # Given docs.test served over TLS on loopback, reached through the pinned transport
        result = fetcher.fetch(f"https://docs.test:{tls_site.port}/echo")
        # Then TLS used the real name for SNI and the certificate matched it
        assert result.content.decode() == f"host=docs.test:{tls_site.port};ua={USER_AGENT}"
        assert server_names[0] == "docs.test"
        # And a name the certificate does not cover fails verification, permanently
        with pytest.raises(FetchError, match="TLS certificate verification failed") as info:
            fetcher.fetch(f"https://other.test:{tls_site.port}/echo")
        assert info.value.transient is False
    finally:
        client.close()
        next(served, None)
