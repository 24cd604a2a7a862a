"""`memlane serve`: an HTTP server on loopback that hands every request to the LocalGateway.

uvicorn does the HTTP; each request is run in a worker thread (the resolver and SQLite are
synchronous). The ingestion worker runs in the same process.
"""

from __future__ import annotations

import errno
import logging
import socket
import sys
import threading
from collections.abc import Iterable

import anyio

from memlane.adapters.local.private_files import wrong_modes
from memlane.api.auth import is_loopback_host
from memlane.api.errors import error_body
from memlane.api.events import MAX_BODY_BYTES
from memlane.config import Settings
from memlane.config.apps import ConnectionApps
from memlane.config.docsets import DocsetSettings
from memlane.config.local import LocalSettings
from memlane.domain.errors import InvalidInputError
from memlane.local import index_rules
from memlane.local.compression import Compressor
from memlane.local.gateway import LocalGateway
from memlane.local.responses import GatewayResponse
from memlane.local.runtime import LocalRuntime, first_start_key
from memlane.local.webapp import WebApp, default_build_dir
from memlane.ports import SearchIndex

log = logging.getLogger(__name__)

NO_AUTH_WARNING = """
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
!! memlane: WARNING: --no-auth: NO API KEY IS NEEDED.                                    !!
!! Every program on this machine, and any page on any localhost port in your browser,     !!
!! can read, change and delete every memory of the default organization.                 !!
!! Use it only to try things out; restart without --no-auth for real data.               !!
!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!
"""


class AsgiBridge:
    """A minimal ASGI app: read the body (capped), call the gateway in a thread, send the reply."""

    def __init__(self, gateway: LocalGateway) -> None:
        self.gateway = gateway
        self.compress = Compressor()

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        if scope["type"] != "http":
            return
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            part = message.get("body", b"")
            size += len(part)
            if size > MAX_BODY_BYTES:
                await _send(send, 413, {"Content-Type": "application/json"},
                            error_body(f"body: exceeds {MAX_BODY_BYTES // (1024 * 1024)} MB").encode())
                return
            chunks.append(part)
            more = message.get("more_body", False)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        client = scope.get("client") or ("127.0.0.1", 0)
        try:
            response = await anyio.to_thread.run_sync(
                self._answer, scope["method"], scope["path"], scope.get("query_string", b"").decode("latin-1"),
                headers, b"".join(chunks), client[0],
            )
        except Exception:
            # Never uvicorn's plain-text 500: every answer is JSON, and the trace stays in the log.
            log.exception("unhandled error outside the resolver")
            await _send(send, 500, {"Content-Type": "application/json", "X-Content-Type-Options": "nosniff"},
                        error_body("internal error").encode())
            return
        await _send(send, response.status, response.headers, response.body)

    def _answer(self, method: str, path: str, query: str, headers: dict[str, str], body: bytes,
                source_ip: str) -> GatewayResponse:
        """The gateway's answer, compressed for the client (in the worker thread, off the event loop)."""
        response = self.gateway.handle(method, path, query, headers, body, source_ip)
        return self.compress(response, headers.get("accept-encoding"))


async def _send(send, status: int, headers: dict[str, str], body: bytes) -> None:
    raw = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()
           if k.lower() != "content-length"]
    if not any(k == b"x-content-type-options" for k, _ in raw):  # every answer, the gateway's own too
        raw.append((b"x-content-type-options", b"nosniff"))
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def refuse_no_auth_off_loopback(host: str, no_auth: bool) -> None:
    if no_auth and not is_loopback_host(host):
        # Without keys, anyone who can reach the socket owns the data: loopback only.
        raise InvalidInputError("--no-auth", f"refusing to serve without authentication on {host!r}; "
                                             "bind to 127.0.0.1, ::1 or localhost")


def claim_port(host: str, port: int) -> socket.socket:
    """The server's socket, bound before anything is printed or opened: a busy port is said at once,
    not after a key and a sign-in link that would lead nowhere. uvicorn listens on it later."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn does: a port in TIME_WAIT is free
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InvalidInputError("", f"port {port} on {host} is already in use (is another memlane serve "
                                        f"running?); pick another with --port: memlane serve --port {port + 1} "
                                        f"(make run PORT={port + 1})") from exc
        raise InvalidInputError("", f"cannot listen on {host}:{port} (--host, --port): {exc.strerror or exc}") from exc
    sock.set_inheritable(True)
    return sock


class LocalServer:
    """`memlane serve`: the local runtime (memlane.local.runtime) behind the gateway, the web app
    and an HTTP server."""

    def __init__(self, settings: Settings, host: str = "127.0.0.1", port: int = 7432, embedder=None, *,
                 no_auth: bool = False, allow_all_origins: bool = False, allow_private_network: bool = False,
                 docset_settings: DocsetSettings | None = None, allowed_origins: Iterable[str] = (),
                 local: LocalSettings | None = None, apps: ConnectionApps | None = None,
                 search_index: SearchIndex | None = None) -> None:
        refuse_no_auth_off_loopback(host, no_auth)
        self.settings = settings
        self.no_auth = no_auth
        self.host = host
        self.port = port
        shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
        local = local or LocalSettings()
        self.runtime = LocalRuntime(settings, embedder=embedder, allow_private_network=allow_private_network,
                                    docset_settings=docset_settings, public_url=f"http://{shown}:{port}",
                                    local=local, apps=apps,
                                    search_index=search_index)
        self.stack = self.runtime.stack
        self.worker = self.runtime.worker
        self.docsets = self.runtime.docsets
        self.api = self.runtime.api
        self.webapp = WebApp(local.web_dir or default_build_dir())
        self.gateway = LocalGateway(self.api, self.runtime.services, no_auth=no_auth,
                                    allow_all_origins=allow_all_origins, allowed_origins=allowed_origins,
                                    webapp=self.webapp)
        self._server = None
        self._thread: threading.Thread | None = None

    def _uvicorn(self):
        import uvicorn

        config = uvicorn.Config(AsgiBridge(self.gateway), host=self.host, port=self.port, log_level="warning",
                                access_log=False, lifespan="on", timeout_keep_alive=30)
        return uvicorn.Server(config)

    def prepare(self) -> str | None:
        if self.no_auth:
            print(NO_AUTH_WARNING, file=sys.stderr, flush=True)
            log.warning("serving without authentication (--no-auth)")
        exposed = wrong_modes(self.settings.data_dir)
        if exposed:  # an install made before the data directory was private, or a hand-copied file
            print(f"memlane: WARNING: {len(exposed)} paths in {self.settings.data_dir} are readable by other users "
                  f"of this machine (e.g. {exposed[0]}); run: memlane doctor --repair", file=sys.stderr, flush=True)
        for rule in index_rules.stale(self.stack.db):
            print(f"memlane: WARNING: {rule.hint}", file=sys.stderr, flush=True)
            log.warning("search index built before the %s rule; run memlane reindex", rule.key)
        key = first_start_key(self.stack, self.settings.data_dir)
        self.stack.index.warm(background_build=True)
        self.runtime.start()
        return key

    def serve_forever(self, sock: socket.socket | None = None) -> None:
        """Serve until stopped; `sock`: the socket claim_port bound (else uvicorn binds host:port)."""
        server = self._server = self._uvicorn()
        try:
            server.run(sockets=[sock] if sock is not None else None)
        finally:
            self.shutdown()

    def start_in_thread(self) -> None:
        """For tests: serve in a background thread and wait until the socket is listening."""
        server = self._server = self._uvicorn()
        self._thread = threading.Thread(target=server.run, daemon=True)
        self._thread.start()
        while not server.started:
            if not self._thread.is_alive():
                raise RuntimeError(f"server failed to start on {self.host}:{self.port}")
            threading.Event().wait(0.02)

    def shutdown(self) -> None:
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(10)
        self.runtime.close()
